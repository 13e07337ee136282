/**
 * Frozen: the old path of the effort-fits-task patch (EFFORT_FITS_TASK_PATCH, workflows/run/eras.ts),
 * kept for the runs that started before it. Deleted with the patch's call.
 *
 * Workflow code: deterministic, no I/O.
 */

/** A run started before the patch: no complexity, the knobs as given. */
export function beforeEffortFitsTask(): null {
  return null;
}
