/**
 * The one-time grace at the iteration cap (spec §1.11, `LOKI_ITERATION_GRACE`): when the run
 * reaches `maxIterations` with a completion claim it has not judged yet, and no quality gate
 * failing, it gets one more iteration, once per run, for the claim to be judged in.
 *
 * Pending means: the last iteration claimed, and nothing judged that claim: its call failed (a
 * failed iteration's claim is ignored), or the council could not convene on it (before
 * `councilMinIterations`). A claim the council voted on, or that the completion check refused
 * before the council was asked, or that a run without a council judged, was judged.
 *
 * The claim file was consumed with the call: the grace iteration must claim again to be judged.
 */

export interface GraceFacts {
  /** The knob `iterationGrace`, for a run whose rules include it. */
  enabled: boolean;
  /** The grace was granted already (it is once per run). */
  used: boolean;
  iteration: number;
  maxIterations: number;
  last: { iteration: number; claimed: boolean; exitCode: number } | null;
  councilEnabled: boolean;
  /** The iteration of the council's last verdict, or null. */
  lastVerdictIteration: number | null;
  /** The iteration of the last completion the check refused before the council, or null. */
  lastRefusalIteration: number | null;
  /** The gates whose latest verdict is a failure. */
  failingGates: readonly string[];
}

export type GraceVerdict = { grant: false } | { grant: true; findings: string };

/** Whether the last iteration's claim is still waiting to be judged. */
export function claimPending(f: Pick<GraceFacts, 'last' | 'councilEnabled' | 'lastVerdictIteration' | 'lastRefusalIteration'>): boolean {
  const last = f.last;
  if (!last?.claimed) return false;
  if (last.exitCode !== 0) return true;
  if (!f.councilEnabled) return false;
  return f.lastVerdictIteration !== last.iteration && f.lastRefusalIteration !== last.iteration;
}

export function graceAtCap(f: GraceFacts): GraceVerdict {
  if (!f.enabled || f.used || f.iteration < f.maxIterations) return { grant: false };
  if (f.failingGates.length > 0 || !claimPending(f)) return { grant: false };
  const at = f.last?.iteration ?? f.iteration;
  return {
    grant: true,
    findings:
      `Your completion claim of iteration ${at} was not judged before the iteration cap (${f.maxIterations}). This is one ` +
      'extra iteration, the only one: finish what is left, verify it, and claim completion again so that it is judged.',
  };
}

/** The iteration cap in force: one more once the grace was granted. */
export function iterationCap(maxIterations: number, graceGranted: boolean): number {
  return maxIterations + (graceGranted ? 1 : 0);
}
