/**
 * Frozen: the old path of the stop-now patch (STOP_NOW_PATCH, workflows/run/eras.ts), kept for
 * the runs stopped with `stop --now` that reached their end before it. Deleted with the patch's call.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { Outcome } from '../../schemas/run.js';

/** A run stopped with `stop --now` before the patch closed as any other: one step after another (`closeInTurn`). */
export function beforeStopNowClosesFirst(closeInTurn: () => Promise<Outcome>): Promise<Outcome> {
  return closeInTurn();
}
