/**
 * Backoff after a failed iteration (spec §1.10):
 * `wait = min(base * 2^min(retry, 30) + jitter, max)` where `retry` is the number of consecutive
 * failures before this one. The jitter is an input (the workflow draws it from its replay-safe
 * random source) so this stays a pure function.
 */
export interface BackoffKnobs {
  baseWaitSeconds: number;
  maxWaitSeconds: number;
  backoffJitterSeconds: number;
}

/** `unitRandom` in [0, 1). Returns whole seconds. */
export function backoffSeconds(retry: number, knobs: BackoffKnobs, unitRandom: number): number {
  const exp = Math.min(Math.max(retry, 0), 30);
  const jitter = Math.floor(Math.min(Math.max(unitRandom, 0), 0.999999) * knobs.backoffJitterSeconds);
  return Math.min(knobs.baseWaitSeconds * 2 ** exp + jitter, knobs.maxWaitSeconds);
}
