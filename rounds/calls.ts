/**
 * The calls a round driver makes (council-round.ts, review-round.ts), in the shape it calls them:
 * `executeWithOptions` of an activity proxy from the workflow, or the same function in process
 * inside the round's own activity (activities/rounds.ts). Typed from the contracts in schemas/, so
 * the rounds import no activity code; tests/unit/architecture.test.ts checks these stay the
 * registered activities' own signatures.
 */
import type { ActivityFunctionWithOptions } from '@temporalio/workflow';
import type { AgentResult, CollectEvidenceInput, EvidenceFactsResult, RunAgentInput, WriteTranscriptInput } from '../schemas/activities.js';
import type { PreparedReview, PrepareReviewInput, WriteReviewReportInput } from '../schemas/gates.js';

/** One call: its input, and what it resolves to. */
type Call<I, O> = ActivityFunctionWithOptions<(input: I) => Promise<O>>;

export interface RoundCalls {
  /** A member, reviewer or devil's advocate call (activities/iteration.ts). */
  runAgent: Call<RunAgentInput, AgentResult>;
  /** The evidence facts a council round judges (activities/evidence.ts). */
  collectEvidence: Call<CollectEvidenceInput, EvidenceFactsResult>;
  /** A round's transcript file; resolves to its path (activities/evidence.ts). */
  writeTranscript: Call<WriteTranscriptInput, string>;
  /** The diff a review reads (activities/review.ts). */
  prepareReview: Call<PrepareReviewInput, PreparedReview>;
  /** A review's report file; resolves to its path (activities/review.ts). */
  writeReviewReport: Call<WriteReviewReportInput, string>;
}
