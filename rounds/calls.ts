/**
 * The calls a round driver makes (council-round.ts, review-round.ts), in the shape it calls them:
 * `executeWithOptions` of the activity functions in process inside the round's own activity
 * (activities/rounds.ts), or of an activity proxy from the workflow (the evidence check of a claim
 * judged without a council). Typed from the contracts in schemas/, so the rounds import no activity
 * code; tests/unit/architecture.test.ts checks these stay the activity functions' own signatures.
 */
import type { ActivityFunctionWithOptions } from '@temporalio/workflow';
import type { AgentResult, CollectEvidenceInput, EvidenceFactsResult, RunAgentInput, WriteTranscriptInput } from '../schemas/activities.js';
import type { PreparedReview, PrepareReviewInput, RoundBatch, WriteReviewReportInput } from '../schemas/gates.js';

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

/**
 * A round's members (or reviewers) asked in one call, where the provider can run sub-agents
 * (claude `--agents`, activities/round-batch.ts). Not an activity: only the round activities
 * (activities/rounds.ts) have it.
 */
export interface BatchRequest {
  kind: 'council' | 'review';
  round: number;
  iteration: number;
  /** Each member's own call, as the round would make it. */
  inputs: RunAgentInput[];
  /** Who each member is, in a few words (the same order as `inputs`). */
  labels: string[];
  /**
   * A council round's PRD checklist verifier, in the same call (from `vigil-council-checklist-v1`
   * on): run first, the members only when none of `stopIf` comes back FAIL or unanswered.
   */
  verifier?: { input: RunAgentInput; label: string; stopIf: string[] };
  /**
   * The round's devil's advocate, in the same call: run after the members, only when every one
   * of them approved (passed). Left out of the call when it cannot share it (another model, CLI
   * or timeout): the round asks it on its own when it is due, as before.
   */
  followUp?: { input: RunAgentInput; label: string };
}

export interface BatchOutcome {
  /** One result per input, in order; null: the batched call failed, ask each member (and say why in `note`). */
  results: AgentResult[] | null;
  /** What the batched call cost (counted once, as one call). */
  usage: AgentResult['usage'];
  note: RoundBatch;
  /**
   * The checklist verifier's result, as its own call would have left it (absent: the request had
   * none, or the batched call gave no answer of its: ask it on its own). `results` may be null
   * while this is set: the members did not run (the checklist was not met) or their part failed.
   */
  verifier?: AgentResult;
  /**
   * The devil's advocate's result, when it ran in the call (its vote or review read as its own
   * call's would be). Absent: it was not due, not declared, or the call left it out; the round
   * asks it on its own when it is due.
   */
  followUp?: AgentResult;
}

/** null: the round's provider cannot batch (another CLI, or one without `--agents`): ask each member. */
export type BatchCall = (request: BatchRequest) => Promise<BatchOutcome | null>;
