/**
 * The comparison round of a run with attempts (docs/attempts.md): the run's council — its size,
 * its members' roles, agent and model as the completion council's (chooseAgent for `council`),
 * sandboxed as reviewers — each asked once, in parallel and blind to each other, to pick one of the
 * approved attempts from the comparison pack; each answer read for its `PICK:` line. What the
 * picks decide is rules/comparison.ts, in the workflow.
 *
 * Deterministic, no I/O of its own: it runs inside its activity (activities/comparison.ts), its
 * calls injected, as the completion council's round does (council-round.ts). Each member's call
 * has its own prompt, log and state file (`council-round-01-m<i>`, in the run's folder), so a worker
 * that dies mid-round costs nothing: the retried round re-attaches to the calls still running under
 * the supervisor and collects the ones that finished; no member runs twice.
 */
import { ActivityFailure } from '@temporalio/common';
import type { AgentResult, RunAgentInput } from '../schemas/activities.js';
import type { Knobs } from '../schemas/knobs.js';
import type { RunAuthorization } from '../schemas/authorization.js';
import { chooseAgent, silenceSeconds } from '../rules/agent-choice.js';
import { comparisonPrompt, parsePick } from '../rules/comparison.js';
import { memberRole } from '../rules/council.js';
import { sandboxArgs } from '../rules/sandbox.js';
import type { RoundCalls } from './calls.js';

/** The comparison is the parent run's one council round: its calls' files are `council-round-01-m<i>`. */
export const COMPARISON_ROUND = 1;

export interface ComparisonRoundInput {
  runId: string;
  repoPath: string;
  prdPath: string;
  knobs: Knobs;
  authorization: RunAuthorization | null;
  /** The pack every member reads (activities/comparison.ts wrote it). */
  packPath: string;
  /** The approved attempts' numbers. */
  approved: number[];
}

export interface ComparisonRoundResult {
  picks: { member: number; role: string; attempt: number | null; reason: string | null; logPath: string }[];
  /** What the members' calls reported they cost. */
  usages: NonNullable<AgentResult['usage']>[];
}

/** The text a member's answer is read from: its output's tail (a stream-json CLI's answer is in it, escaped). */
const answerText = (r: AgentResult): string => r.tail;

export async function runComparisonRound(
  deps: { members: Pick<RoundCalls, 'runAgent'> },
  input: ComparisonRoundInput,
): Promise<ComparisonRoundResult> {
  const k = input.knobs;
  const memberInput = (i: number): RunAgentInput => ({
    runId: input.runId,
    repoPath: input.repoPath,
    ...chooseAgent(k, 'council', k.tier),
    authorization: input.authorization,
    prompt: comparisonPrompt({
      member: i,
      role: memberRole(i),
      prdPath: input.prdPath,
      packPath: input.packPath,
      approved: input.approved,
    }),
    role: 'council',
    iteration: 1,
    phase: 'VERIFY',
    tier: k.tier,
    timeoutSeconds: k.councilMemberTimeoutSeconds,
    silenceSeconds: silenceSeconds(k),
    completionPromise: '',
    extraEnv: {
      VIGIL_MEMBER: String(i),
      VIGIL_COUNCIL_ROLE: memberRole(i),
      VIGIL_COUNCIL_ROUND: String(COMPARISON_ROUND),
      // The pack, readable in the sandbox as a round's evidence file is.
      VIGIL_EVIDENCE_FILE: input.packPath,
      VIGIL_COMPARISON: input.approved.join(','),
    },
    ...sandboxArgs(k),
  });
  const results = await Promise.all(
    Array.from({ length: k.councilSize }, async (_, i) => {
      try {
        return await deps.members.runAgent.executeWithOptions({ summary: `comparison round · member ${i} (${memberRole(i)})` }, [
          memberInput(i),
        ]);
      } catch (err) {
        // A member call that never completed is a lost pick, not a failed round.
        if (err instanceof ActivityFailure) return null;
        throw err;
      }
    }),
  );
  const usages: NonNullable<AgentResult['usage']>[] = [];
  const picks = results.map((r, i) => {
    if (r?.usage) usages.push(r.usage);
    // A member that changed the tree, failed or timed out picks nothing.
    const answered = r !== null && r.exitCode === 0 && !r.timedOut && !(r.reviewChangedTree && r.reviewChangedTree.length > 0);
    const p = answered
      ? parsePick(answerText(r))
      : { attempt: null, reason: r ? `no pick: the call ended with exit ${r.exitCode}` : 'no pick: the call was lost' };
    return { member: i, role: memberRole(i), attempt: p.attempt, reason: p.reason, logPath: r?.logPath ?? '' };
  });
  return { picks, usages };
}
