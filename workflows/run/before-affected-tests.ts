/**
 * Frozen: the old path of the affected-tests patch (AFFECTED_TESTS_PATCH, workflows/run/eras.ts),
 * kept for the runs that prepared a gate pass before it. Deleted with the patch's call.
 *
 * Workflow code: deterministic, no I/O.
 */

/** A gate pass prepared before the patch: its test run the full suite (no scope asked). */
export function beforeAffectedTests(): boolean {
  return false;
}
