/**
 * One blind code review, orchestrated (spec §5.4, §5.5): the review diff is prepared (vs the run
 * start, exclusions, size cap; a refused diff blocks), reviewers are chosen from the keywords in
 * it, every reviewer answers in parallel without seeing another's answer, the answers are
 * aggregated; an inconclusive review re-asks the silent reviewers once; a unanimous PASS is
 * re-reviewed by the devil's advocate. The aggregate is written next to the reviewers' logs.
 *
 * Deterministic, no I/O of its own: it runs inside the review's one activity
 * (activities/rounds.ts), its calls injected. The rules live in `rules/review.ts`.
 */
import { ActivityFailure } from '@temporalio/common';
import type { AgentResult, RunAgentInput } from '../schemas/activities.js';
import type { RunAuthorization } from '../schemas/authorization.js';
import type { ReviewerRecord, ReviewRecord } from '../schemas/gates.js';
import type { Knobs } from '../schemas/knobs.js';
import { chooseAgent, silenceSeconds } from '../rules/agent-choice.js';
import { agentResultOf } from './agent-result.js';
import type { BatchCall, RoundCalls } from './calls.js';
import {
  aggregateReview,
  devilsAdvocateDue,
  devilsAdvocateReviewPrompt,
  reviewDiffCap,
  reviewerPrompt,
  selectReviewers,
  shouldRerun,
} from '../rules/review.js';
import { sandboxArgs } from '../rules/sandbox.js';
import { roundMayBatch } from '../rules/round-batch.js';
import type { RoleSandbox } from '../schemas/sandbox.js';

/** What a review calls: activities from the workflow, or the same functions in process inside the round's own activity (activities/rounds.ts). */
export interface ReviewDeps {
  repo: Pick<RoundCalls, 'prepareReview' | 'writeReviewReport'>;
  /** Reviewer calls, bounded by the council member timeout; `batch`: the reviewers as one call where the provider can (round activities only). */
  members: Pick<RoundCalls, 'runAgent'> & { batch?: BatchCall };
}

export interface ReviewInput {
  runId: string;
  repoPath: string;
  prdPath: string;
  round: number;
  iteration: number;
  knobs: Knobs;
  authorization: RunAuthorization | null;
  runStart: { sha: string | null; treeHash: string } | null;
  testSummary: string;
  at: string;
  /** Runs from `vigil-lean-prompt-v1` on: the prompts as their parts (the activity renders them), tails only of failed calls. */
  leanPrompt?: boolean;
  /** A delta review: the diff from the tree an earlier review passed (schemas/rounds.ts). */
  since?: { tree: string; round: number; iteration: number };
}

export interface ReviewRoundResult {
  record: ReviewRecord;
  usages: NonNullable<AgentResult['usage']>[];
  /** The reviewer calls that answered without a cost (a `command` agent's): counted as unpriced. Absent: none, or an older round. */
  unpriced?: number;
  /** How the calls were isolated and what the sandbox refused them, by role (a batched call once). */
  sandbox?: RoleSandbox[];
}

const NO_COUNTS = { critical: 0, high: 0, medium: 0, low: 0 };

/** A reviewer's record from its call: lost calls have no output; a reviewer that wrote to the tree gave no verdict. */
function recordOf(reviewer: string, r: AgentResult | null): ReviewerRecord {
  if (r?.reviewChangedTree && r.reviewChangedTree.length > 0) {
    const files = r.reviewChangedTree.slice(0, 3).join(', ');
    return {
      reviewer,
      verdict: 'NO_VERDICT',
      blocking: false,
      counts: { ...NO_COUNTS },
      findings: [`review void: the reviewer changed the working tree (${files})`.slice(0, 300)],
      logPath: r.logPath,
    };
  }
  if (r === null || r.review === null)
    return { reviewer, verdict: 'NO_OUTPUT', blocking: false, counts: { ...NO_COUNTS }, findings: [], logPath: r?.logPath ?? '' };
  return { ...r.review, reviewer };
}

export async function runReviewRound(deps: ReviewDeps, input: ReviewInput): Promise<ReviewRoundResult> {
  const k = input.knobs;
  const prepared = await deps.repo.prepareReview.executeWithOptions(
    { summary: `code review ${input.round}: prepare the diff (iteration ${input.iteration})` },
    [
      {
        runId: input.runId,
        repoPath: input.repoPath,
        round: input.round,
        // A delta review diffs from the reviewed tree; the others from the run's start.
        runStartSha: input.since ? null : (input.runStart?.sha ?? null),
        runStartTree: input.since ? input.since.tree : (input.runStart?.treeHash ?? null),
        maxDiffBytes: reviewDiffCap(null, k.reviewMaxDiffBytes > 0 ? k.reviewMaxDiffBytes : null),
      },
    ],
  );
  const base = {
    round: input.round,
    iteration: input.iteration,
    treeHash: prepared.treeHash,
    at: input.at,
    devilsAdvocate: null,
    rerun: false,
    ...(input.since ? { since: { round: input.since.round, iteration: input.since.iteration } } : {}),
  };
  const usages: NonNullable<AgentResult['usage']>[] = [];
  let unpriced = 0;
  const sandbox: RoleSandbox[] = [];

  if (prepared.refused) {
    // A delta whose changes are all left out of reviews (lockfiles, generated files) leaves nothing to judge: the earlier pass stands.
    const nothing = input.since !== undefined && prepared.fileCount === 0;
    const record: ReviewRecord = nothing
      ? {
          ...base,
          reviewers: [],
          result: 'pass',
          reason: `nothing reviewable changed since code review round ${input.since?.round}`,
          mergeability: 100,
        }
      : { ...base, reviewers: [], result: 'refused', reason: prepared.refused, mergeability: 0 };
    await deps.repo.writeReviewReport.executeWithOptions({ summary: `code review ${input.round}: report` }, [
      { runId: input.runId, repoPath: input.repoPath, record },
    ]);
    return { record, usages };
  }

  const chosen = selectReviewers({
    text: prepared.keywords.join('\n'),
    files: prepared.files,
    complexity: k.reviewComplexity,
    requirements: true,
    maxReviewers: k.reviewMaxReviewers,
  });
  const promptInput = (reviewer: string) => ({
    reviewer,
    diffPath: prepared.diffPath,
    diffBytes: prepared.diffBytes,
    files: prepared.files,
    testSummary: input.testSummary,
    prdPath: input.prdPath,
    round: input.round,
    iteration: input.iteration,
    ...(input.since ? { since: `code review round ${input.since.round} (iteration ${input.since.iteration})` } : {}),
  });
  /** One reviewer's call input; a re-run has its own prompt, log and state file (a retried round must not take the first answer for it). */
  const callInput = (reviewer: string, devil: boolean, again: boolean): RunAgentInput => {
    const role = devil ? 'devils-advocate' : 'reviewer';
    return {
      runId: input.runId,
      repoPath: input.repoPath,
      // The first reviewers start together on the tree the diff was just taken from.
      ...(!devil && !again ? { treeBefore: prepared.treeHash } : {}),
      ...chooseAgent(k, role, k.tier),
      authorization: input.authorization,
      ...(input.leanPrompt
        ? {
            promptSpec: { kind: devil ? ('review-devils-advocate' as const) : ('reviewer' as const), ...promptInput(reviewer) },
            tailOnFailure: true,
            compact: true,
          }
        : { prompt: devil ? devilsAdvocateReviewPrompt(promptInput(reviewer)) : reviewerPrompt(promptInput(reviewer)) }),
      role,
      iteration: input.iteration,
      phase: 'VERIFY',
      tier: k.tier,
      timeoutSeconds: k.councilMemberTimeoutSeconds,
      silenceSeconds: silenceSeconds(k),
      completionPromise: '',
      extraEnv: { VIGIL_REVIEWER: reviewer, VIGIL_REVIEW_ROUND: String(input.round), ...(again ? { VIGIL_REVIEW_RERUN: '1' } : {}) },
      parse: 'review',
      rateLimitRpm: k.rateLimitRpm,
      ...sandboxArgs(k),
    };
  };
  const ask = async (reviewer: string, devil: boolean, again = false): Promise<ReviewerRecord> => {
    let r: AgentResult | null;
    try {
      r = await deps.members.runAgent
        .executeWithOptions({ summary: `code review ${input.round}: ${reviewer}` }, [callInput(reviewer, devil, again)])
        .then((x) => agentResultOf(x, input.leanPrompt));
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      r = null;
    }
    // A call that answered without a cost is one more unpriced call (a lost one may not have run).
    if (r?.usage) usages.push(r.usage);
    else if (r) unpriced += 1;
    if (r?.sandbox) sandbox.push({ role: devil ? 'devils-advocate' : 'reviewer', report: r.sandbox });
    return recordOf(reviewer, r);
  };

  // Where the provider runs sub-agents (claude --agents), the reviewers go out as one call; a failed one asks each reviewer.
  const batch =
    deps.members.batch && chosen.length > 1 && roundMayBatch(k)
      ? await deps.members.batch({
          kind: 'review',
          round: input.round,
          iteration: input.iteration,
          inputs: chosen.map((c) => callInput(c.reviewer, false, false)),
          labels: chosen.map((c) => `${c.reviewer} reviewer`),
          ...(k.reviewDevilsAdvocate ? { followUp: { input: callInput('devils-advocate', true, false), label: "devil's advocate" } } : {}),
        })
      : null;
  if (batch?.usage) usages.push(batch.usage);
  const batched = batch?.results ?? null;
  // A batched call is one process: its report once.
  const batchSandbox = batched?.find((r) => r?.sandbox)?.sandbox;
  if (batchSandbox) sandbox.push({ role: 'reviewer', report: batchSandbox });
  let reviewers = batched
    ? chosen.map((c, i) => recordOf(c.reviewer, batched[i] ?? null))
    : await Promise.all(chosen.map((c) => ask(c.reviewer, false)));
  let outcome = aggregateReview(reviewers, null, { mergeabilityMin: k.reviewMergeabilityMin });
  let rerun = false;
  if (shouldRerun(outcome.result, false)) {
    // One automatic re-run: the reviewers that gave no verdict are asked again.
    rerun = true;
    reviewers = await Promise.all(reviewers.map((r) => (r.verdict === 'PASS' || r.verdict === 'FAIL' ? r : ask(r.reviewer, false, true))));
    outcome = aggregateReview(reviewers, null, { mergeabilityMin: k.reviewMergeabilityMin });
  }
  let devilsAdvocate: ReviewerRecord | null = null;
  if (k.reviewDevilsAdvocate && outcome.result === 'pass' && devilsAdvocateDue(reviewers)) {
    // Its answer from the reviewers' batched call when it ran there (its cost is the call's), else a call of its own.
    devilsAdvocate = batch?.followUp ? recordOf('devils-advocate', batch.followUp) : await ask('devils-advocate', true);
    outcome = aggregateReview(reviewers, devilsAdvocate, { mergeabilityMin: k.reviewMergeabilityMin });
  }
  const result = outcome.result === 'inconclusive' && !k.reviewInconclusiveBlocks ? 'pass' : outcome.result;
  const record: ReviewRecord = {
    ...base,
    reviewers,
    devilsAdvocate,
    rerun,
    result,
    reason: outcome.reason,
    mergeability: outcome.mergeability,
    ...(batch ? { batch: batch.note } : {}),
  };
  await deps.repo.writeReviewReport.executeWithOptions({ summary: `code review ${input.round}: report` }, [
    { runId: input.runId, repoPath: input.repoPath, record },
  ]);
  return { record, usages, ...(unpriced ? { unpriced } : {}), ...(sandbox.length ? { sandbox } : {}) };
}
