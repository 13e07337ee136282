/**
 * Frozen: the old path of the acceptance-from-PRD patch (ACCEPTANCE_FROM_PRD_PATCH,
 * workflows/run/eras.ts), kept for the runs that reached this point before it. Deleted with the
 * patch's call.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { Outcome } from '../../schemas/run.js';

/** A run started with the acceptanceFromPrd knob before the patch: the knob was unknown, nothing was written or sealed. */
export function beforeAcceptanceFromPrd(): Outcome | null {
  return null;
}
