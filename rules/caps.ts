/**
 * Caps checked before every iteration (spec §1.2, §1.11): consecutive failures, iteration count
 * and wall-clock duration. Checked BEFORE the counter is incremented: with `maxIterations = 5`
 * exactly five iterations run.
 */
export type CapVerdict =
  | { kind: 'continue' }
  | { kind: 'failed'; reason: string }
  | { kind: 'max_iterations_reached'; reason: string }
  | { kind: 'max_duration_reached'; reason: string };

export interface CapsInput {
  iteration: number;
  consecutiveFailures: number;
  startedAtMs: number;
  nowMs: number;
}

export interface CapsKnobs {
  maxIterations: number;
  maxRetries: number;
  maxDurationSeconds: number;
}

export function checkCaps(s: CapsInput, knobs: CapsKnobs): CapVerdict {
  if (s.consecutiveFailures >= knobs.maxRetries) {
    return { kind: 'failed', reason: `${s.consecutiveFailures} consecutive failed iterations (maxRetries ${knobs.maxRetries})` };
  }
  if (s.iteration >= knobs.maxIterations) {
    return { kind: 'max_iterations_reached', reason: `iteration cap reached: ${s.iteration} of ${knobs.maxIterations}` };
  }
  if (knobs.maxDurationSeconds > 0) {
    const elapsed = Math.floor((s.nowMs - s.startedAtMs) / 1000);
    if (elapsed >= knobs.maxDurationSeconds) {
      return { kind: 'max_duration_reached', reason: `wall-clock cap reached: ${elapsed}s of ${knobs.maxDurationSeconds}s` };
    }
  }
  return { kind: 'continue' };
}

/**
 * The backoff after a failed iteration, trimmed so that no run waits for nothing: none when the
 * caps will end the run anyway (the last allowed iteration failed, or `maxRetries` is reached),
 * and never past the wall-clock cap.
 */
export function waitWithinCaps(waitSeconds: number, s: CapsInput, knobs: CapsKnobs): number {
  if (s.iteration >= knobs.maxIterations || s.consecutiveFailures >= knobs.maxRetries) return 0;
  if (knobs.maxDurationSeconds > 0) {
    const left = knobs.maxDurationSeconds - Math.floor((s.nowMs - s.startedAtMs) / 1000);
    return Math.max(0, Math.min(waitSeconds, left));
  }
  return waitSeconds;
}
