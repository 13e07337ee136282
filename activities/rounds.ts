/**
 * A council round and a code review, each as one activity (runs from `vigil-round-activity-v1`
 * on): the round's own orchestration (rounds/council-round.ts, rounds/review-round.ts, the
 * same code older runs execute as workflow code) runs here with its calls made in process — the
 * evidence or the review diff, every member or reviewer in parallel, the re-run and the devil's
 * advocate where the rules ask for them, the transcript or the report. The history holds one
 * activity and its result per round instead of one per call.
 *
 * What stays as it was:
 * - each call has its own prompt, log and state file (named by round and member), so a worker
 *   that dies mid-round costs nothing: the retried round re-attaches to the calls still running
 *   under the supervisor and collects the ones that finished; no member runs twice;
 * - a member or reviewer call that fails counts as a lost vote (REJECT, NO_OUTPUT), as a member
 *   activity that failed after its retries did;
 * - a failure of the evidence or the review diff fails the round, with its type (the repository's
 *   trouble is handled by the workflow as before);
 * - a cancellation (STOP --now, a cancelled workflow) kills every call of the round.
 *
 * What is new here: where the members' provider can run sub-agents (claude `--agents`), the
 * members, or the reviewers, go out as one call (activities/round-batch.ts), split back into
 * their own records; a failed batched call asks each member, and the record says so.
 */
import { ActivityFailure, CancelledFailure, RetryState } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { ActivityFunctionWithOptions } from '@temporalio/workflow';
import { RunAgentInputSchema } from '../schemas/activities.js';
import { CouncilRoundInputSchema, ReviewRoundInputSchema, type CouncilRoundRequest, type ReviewRoundInput } from '../schemas/rounds.js';
import { runCouncilRound, type CouncilDeps, type RoundResult } from '../rounds/council-round.js';
import { runReviewRound, type ReviewDeps, type ReviewRoundResult } from '../rounds/review-round.js';
import { observedAgentCall } from '../lib/call-observers.js';
import { collectEvidence as collect, writeTranscript as transcript } from './evidence.js';
import { heartbeating } from './heartbeat.js';
import { runAgent as iterationAgent } from './iteration.js';
import { prepareReview as review, writeReviewReport as reviewReport } from './review.js';
import { makeBatchCall } from './round-batch.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the shape of any activity function
type Fn = (...args: any[]) => Promise<any>;

/**
 * An activity function called in process, in the shape the round's code calls it
 * (`executeWithOptions`). `lostAs: 'vote'`: a failure becomes an ActivityFailure, which the round
 * counts as a lost call; `rethrow`: a failure fails the round as it is. A cancellation always
 * cancels the round.
 */
export function inProcess<F extends Fn>(name: string, fn: F, lostAs: 'vote' | 'rethrow'): ActivityFunctionWithOptions<F> {
  const call = async (...args: Parameters<F>): Promise<Awaited<ReturnType<F>>> => {
    try {
      return (await fn(...args)) as Awaited<ReturnType<F>>;
    } catch (err) {
      if (lostAs === 'rethrow' || err instanceof CancelledFailure || Context.current().cancellationSignal.aborted) throw err;
      const cause = err instanceof Error ? err : new Error(String(err));
      throw new ActivityFailure(`${name} failed: ${cause.message}`, name, undefined, RetryState.NON_RETRYABLE_FAILURE, undefined, cause);
    }
  };
  return Object.assign(call, {
    executeWithOptions: (_options: unknown, args: Parameters<F>) => call(...args),
  }) as unknown as ActivityFunctionWithOptions<F>;
}

// Observed (lib/call-observers.ts): the worker's metrics and log see each member call, not only the round.
const runAgent = inProcess('runAgent', observedAgentCall(iterationAgent), 'vote');
// Where the provider can (claude --agents), a round's members as one call (activities/round-batch.ts).
export const members = { runAgent, batch: makeBatchCall((input) => runAgent(input)) };

/** One completion-council round: evidence, members, tally, devil's advocate, transcript. */
export async function councilRound(raw: CouncilRoundRequest): Promise<RoundResult> {
  const parsed = CouncilRoundInputSchema.parse(raw);
  const input = {
    ...parsed,
    checklist: parsed.checklist ? { ...parsed.checklist, call: RunAgentInputSchema.parse(parsed.checklist.call) } : null,
  };
  const deps: CouncilDeps = {
    repo: {
      collectEvidence: inProcess('collectEvidence', heartbeating(collect), 'rethrow'),
      writeTranscript: inProcess('writeTranscript', heartbeating(transcript), 'rethrow'),
    },
    members,
  };
  return runCouncilRound(deps, input);
}

/** One code review: the diff, the reviewers, the re-run and the devil's advocate where due, the report. */
export async function reviewRound(raw: ReviewRoundInput): Promise<ReviewRoundResult> {
  const input = ReviewRoundInputSchema.parse(raw);
  const deps: ReviewDeps = {
    repo: {
      prepareReview: inProcess('prepareReview', heartbeating(review), 'rethrow'),
      writeReviewReport: inProcess('writeReviewReport', heartbeating(reviewReport), 'rethrow'),
    },
    members,
  };
  return runReviewRound(deps, input);
}
