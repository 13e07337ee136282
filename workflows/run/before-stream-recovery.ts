/**
 * Frozen: the old paths of the stream-recovery patch (STREAM_RECOVERY_PATCH, workflows/run/eras.ts),
 * kept for the runs that reached these points before it. Deleted with the patch's call.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { End } from './run.js';

/** A stream's resume before the patch: nothing made again (the stream paused again if its worktree was gone). */
export function beforeStreamRecovery(): End | null {
  return null;
}

/** A stream stopped on its own before the patch: never retried (its task a dead letter at once). */
export function beforeStoppedRetry(): boolean {
  return false;
}
