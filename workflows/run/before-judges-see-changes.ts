/**
 * Frozen: the code review's part of a completion check as runs before `vigil-judges-see-changes-v1`
 * judged it (workflows/run/eras.ts), kept exactly as it ran: a passing review stood for a later
 * tree whose changes touched only reviewed, unflagged files; a review whose answers broke the
 * agent contract was reused on the same tree without counting again; and a blocking request for
 * a person (HUMAN_REVIEW_NEEDED) paused a perpetual run too.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { GateResult } from '../../schemas/gates.js';
import { type ContractBreach, LIMITS, type Outcome } from '../../schemas/run.js';
import { contractFindings, describeBreach, reviewBreaches } from '../../rules/contract.js';
import { mergeLatest } from '../../rules/gates.js';
import { reviewStands } from '../../rules/lean-rounds.js';
import { reviewSummaryForPrompt } from '../../rules/review.js';
import { actOnGateStreak, codeReview, trackGateResult } from './gates.js';
import { keepContract, refuse } from './refusals.js';
import type { Run } from './run.js';

/**
 * The code review's part of a completion check: a tree already reviewed
 * is not reviewed again (nor counted again on the gate's streak); answers without a verdict
 * line are a contract error, never a failing review. Null lets the check go on.
 */
export async function beforeJudgeReview(run: Run, tree: string): Promise<Outcome | 'refused' | null> {
  const { state } = run;
  const last = state.gates.reviews.at(-1);
  const stands = last ? reviewStands(last, state.marks.review, tree) : null;
  if (stands && !stands.again && last && last.treeHash !== tree)
    run.sdk.log.info('code review not repeated', { iteration: state.iteration, why: stands.why });
  const reused = last && (last.treeHash === tree || (stands !== null && !stands.again)) ? last : null;
  const review = reused ?? (await codeReview(run, tree));
  const breaches = reviewBreaches(review);
  const contractOnly = review.result === 'inconclusive' && breaches.length > 0;
  if (!reused) {
    const ended = await keepContract(run, breaches);
    if (ended) return ended;
    if (contractOnly) {
      // Not a verdict on the work: the gate's streak and the builder's findings stay out of it.
      const asGate = state.gates.latest.find((g) => g.gate === 'code_review');
      if (asGate)
        state.gates.latest = mergeLatest(state.gates.latest, [
          {
            ...asGate,
            verdict: 'inconclusive',
            reason: `contract error: ${breaches.length} reviewer answer(s) without a VERDICT line`.slice(0, 500),
            findings: [],
            findingCount: 0,
          },
        ]);
    } else {
      const reviewed = state.gates.latest.find((g) => g.gate === 'code_review') as GateResult;
      const streak = trackGateResult(run, reviewed);
      const ended2 = streak ? await actOnGateStreak(run, reviewed, streak) : null;
      if (ended2) return ended2;
    }
  }
  if (review.result === 'pass') return null;
  if (contractOnly) {
    const first = breaches[0] as ContractBreach;
    state.lastFindings = contractFindings(first, state.iteration);
    return refuse(run, ['code_review'], `contract error: ${describeBreach(first)}`, 'contract');
  }
  state.lastFindings =
    `Completion at iteration ${state.iteration} was refused before the council was asked: the code review did not pass.\n${reviewSummaryForPrompt(review, LIMITS.findingChars * 3)}`.slice(
      0,
      LIMITS.findingChars * 4,
    );
  return refuse(run, ['code_review'], `code review ${review.result}: ${review.reason}`);
}

/** Whether an agent's request for a person paused the run: when blocking, or in supervised mode. */
export function beforeAgentRequestPauses(blocking: boolean, mode: 'supervised' | 'perpetual'): boolean {
  return blocking || mode === 'supervised';
}
