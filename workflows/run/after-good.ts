/**
 * After a good iteration: the quality gates on the tree it left, then the
 * completion check a claim, a tripped breaker or an early check asks for, then a gate's pause
 * that waited for that check.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { AgentResult, RepoSnapshot } from '../../schemas/activities.js';
import { breakerTrip } from '../../rules/breaker.js';
import { shouldConvene } from '../../rules/convene.js';
import { earlyCheckDue, flaggedTexts } from '../../rules/lean-rounds.js';
import { claimWithoutCouncil, councilRound } from './council.js';
import { actOnGateStreak, ensureTests, gatesDueNow, qualityGates } from './gates.js';
import { type Again, AGAIN, end, type End, type Run } from './run.js';

/** After a good iteration (exit 0): the gates, then the completion check it asks for. */
export async function afterGoodIteration(run: Run, result: AgentResult, snap: RepoSnapshot): Promise<End | Again> {
  const { state, knobs } = run;
  state.consecutiveFailures = 0;
  state.lastFindings = null;
  const notInDiff = result.claimed ? (result.claimedFiles?.notInDiff ?? []) : [];
  run.judging.falseClaim = notInDiff.length > 0 ? { iteration: state.iteration, paths: notInDiff } : null;
  // The quality gates look at every tree a good iteration leaves (gateCadence).
  run.gateHolds.holdPauses();
  const gated = gatesDueNow(run, false, true) ? await qualityGates(run, false, true, result.gates ?? null) : null;
  if (gated) return end(gated);
  if (!knobs.councilEnabled) {
    if (result.claimed) {
      const ended = await claimWithoutCouncil(run);
      if (ended) return end(ended);
    }
  } else {
    const trip = breakerTrip(state.convergence, knobs.stagnationLimit);
    const facts = { iteration: state.iteration, forced: false, circuitTripped: trip !== null, claimed: result.claimed };
    let trigger = shouldConvene({ ...facts, testsGreen: null }, knobs);
    const lastRoundTree = state.council.verdicts.at(-1)?.iteration;
    const changedSinceRound = lastRoundTree === undefined || state.recentIterations.some((r) => r.iteration > lastRoundTree && r.changed);
    if (!trigger && knobs.councilEarlyCheck && knobs.testCommand && state.iteration >= knobs.councilMinIterations && changedSinceRound) {
      // Early check: green tests on a tree the council has not seen yet, when what changed could flip its verdict.
      const due = earlyCheckDue(
        state.marks.round,
        flaggedTexts(state.council.verdicts.at(-1), state.gates.reviews.at(-1), state.gates.checklist),
      );
      if (!due.again) {
        run.sdk.log.info('early check not due', { iteration: state.iteration, why: due.why });
      } else {
        const t = await ensureTests(run, snap.treeHash);
        trigger = shouldConvene({ ...facts, testsGreen: t?.passed ?? null }, knobs);
      }
    }
    if (trigger) {
      const ended = await councilRound(run, trigger);
      if (ended) return end(ended);
    } else if (result.claimed) {
      state.lastFindings =
        `Your completion claim in iteration ${state.iteration} was noted; the completion council convenes from iteration ` +
        `${knobs.councilMinIterations} on. Keep verifying the requirements.`;
    }
  }
  const held = run.gateHolds.release();
  if (held && !state.pause) await actOnGateStreak(run, held.r, held.streak);
  run.publish();
  return AGAIN;
}
