/**
 * The signal files Vigil itself writes in `.vigil/signals/` (spec §1.9, §4.2, §8.4: runner-owned
 * in the original), for the agent's next call and for tools watching the repository:
 *
 * - `RATE_LIMITED`, `{"rate_limited": true, "wait_seconds", "reset_time", "by": "vigil"}`: written
 *   when an iteration's call hit a provider rate limit, while the run waits it out; removed as the
 *   next iteration's call starts. One the agent writes is removed unread: a rate limit is read
 *   from the provider's own output, never taken on the agent's word (it would not count as a
 *   failure).
 * - `UNCERTAINTY_ESCALATION`, `{"by": "vigil", "iteration", "headline", "paused", "at"}`: written
 *   with the handoff of an uncertainty escalation (the run looks stuck and a person was asked).
 *   The next iteration's call sees it, and its inspection consumes it (activities/signals.ts). One
 *   the agent writes itself is its own report of being unsure, read as a request for a person.
 *
 * Best effort: a marker that cannot be written never fails the activity that writes it.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { writePrivateFile } from '../lib/safe-files.js';
import { ensureRepoDir, signalPath } from './artifacts.js';

export const RATE_LIMITED = 'RATE_LIMITED';
export const UNCERTAINTY_ESCALATION = 'UNCERTAINTY_ESCALATION';

function writeMarker(repoPath: string, name: string, body: Record<string, unknown>): void {
  try {
    const file = signalPath(repoPath, name);
    ensureRepoDir(repoPath, path.dirname(file));
    writePrivateFile(file, `${JSON.stringify({ ...body, by: 'vigil' })}\n`);
  } catch {
    /* a marker for onlookers: the run goes on without it */
  }
}

/** While the run waits out a provider's rate limit. */
export function markRateLimited(repoPath: string, waitSeconds: number, nowMs: number): void {
  writeMarker(repoPath, RATE_LIMITED, {
    rate_limited: true,
    wait_seconds: waitSeconds,
    reset_time: new Date(nowMs + waitSeconds * 1000).toISOString(),
  });
}

/** As an iteration's call starts: the wait is over (and the agent's own file is not taken). */
export function clearRateLimited(repoPath: string): void {
  try {
    rmSync(signalPath(repoPath, RATE_LIMITED), { force: true });
  } catch {
    /* removed next time */
  }
}

/** With the handoff of an uncertainty escalation. */
export function markUncertaintyEscalation(repoPath: string, facts: { iteration: number; headline: string; paused: boolean }): void {
  writeMarker(repoPath, UNCERTAINTY_ESCALATION, { ...facts, at: new Date().toISOString() });
}
