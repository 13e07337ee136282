/**
 * Frozen: the old path of the pause-deadlines patch (PAUSE_DEADLINES_PATCH, workflows/run/eras.ts),
 * kept for the runs whose pause began to wait before it. Deleted with the patch's call.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { Run } from './run.js';

/** A paused run waited for a person with no timer: resumed, stopped, rolled over, rewound, or a review to judge. */
export async function beforePauseDeadlines(run: Run): Promise<void> {
  await run.sdk.until(() => run.pauseOver());
}
