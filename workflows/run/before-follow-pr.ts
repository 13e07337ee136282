/**
 * Frozen: the old path of the follow-pr patch (FOLLOW_PR_PATCH, workflows/run/eras.ts), kept for
 * the runs that reached their delivery before it. Deleted with the patch's call.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { Outcome, OutcomeStatus } from '../../schemas/run.js';
import { finish } from './ending.js';
import type { Run } from './run.js';

/** A done run delivered, opened its pull request and ended. */
export function beforeFollowPr(run: Run, s: OutcomeStatus, reason: string, notes: string[]): Promise<Outcome> {
  return finish(run, s, reason, notes);
}
