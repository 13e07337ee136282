/**
 * What a handoff says of what was tried: the original's escalation file lists the attempts
 * ("Attempts Log": one entry per try, and what each came to), so a person taking over need not
 * read every iteration's log to know what the agent already did. One line per recent iteration,
 * from the run's iteration records.
 *
 * Pure: imports only `schemas/`.
 */
import type { IterationRecord } from '../schemas/run.js';

/** Attempts a handoff lists (the newest). */
export const HANDOFF_ATTEMPTS = 10;

const duration = (ms: number): string => {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
};

/** One line per attempt: what ran (phase, tier, provider), and what came of it (exit, change, claim, why it ended). */
export function attemptLine(r: IterationRecord): string {
  const ran = [r.phase, `tier ${r.tier}`, ...(r.provider ? [r.provider + (r.model ? ` ${r.model}` : '')] : [])].join(', ');
  const came = [
    r.exitCode === 0 ? 'exit 0' : `failed (exit ${r.exitCode})`,
    r.changed ? `changed the tree (${r.filesChangedSinceStart} file(s) changed since the start)` : 'no change',
    ...(r.claimed ? ['claimed done'] : []),
    ...(r.hung ? [r.hung] : []),
    ...(r.limitHit ? [r.limitHit] : []),
    ...(r.ioError ? [r.ioError] : []),
    duration(r.durationMs),
  ];
  return `iteration ${r.iteration} (${ran}): ${came.join('; ')}; log ${r.logPath}`.slice(0, 500);
}

/** The newest HANDOFF_ATTEMPTS attempts, oldest first. */
export function attemptsLog(records: readonly IterationRecord[]): string[] {
  return records.slice(-HANDOFF_ATTEMPTS).map(attemptLine);
}
