/**
 * Provider rate limits (spec §1.9). Only the last 40 lines of a failed call's output are read, and
 * a line counts when it mentions a rate limit together with an error (`rate limit ... exceeded`,
 * `HTTP 429 Too Many Requests`), or says `quota exceeded` / `rate limit exceeded` / `too many
 * requests`, or carries a `resets 5pm` notice. A bare `429` or `retry-after` does not count.
 *
 * The wait, first that applies: the last `resets <H>am|pm` notice (seconds until that hour, local
 * time of the worker, + 120 s), the last `retry-after: N` (N seconds), else
 * `clamp(7200 / rpm, 60, 300)`.
 */
const ERR = '(error|errored|failed|exceeded|http[ /]?[0-9]|status[: ]+[0-9]|too many requests)';
const RL = '(rate.?limit|too many requests|quota exceeded|request limit|429[ )"]*too many|retry.?after)';
const COMBINED = new RegExp(`${RL}.*${ERR}|${ERR}.*${RL}`, 'i');
const PLAIN = /quota exceeded|rate limit exceeded|too many requests/i;
const RESETS = /resets [0-9]+[ap]m/;

export function isRateLimited(text: string): boolean {
  const lines = text.replace(/\r?\n$/, '').split('\n').slice(-40);
  return lines.some((l) => COMBINED.test(l) || PLAIN.test(l) || RESETS.test(l));
}

export interface RateLimitVerdict {
  waitSeconds: number;
  source: 'reset_time' | 'retry_after' | 'rpm';
}

/**
 * @param nowMs the worker's clock
 * @param tzOffsetMinutes `new Date().getTimezoneOffset()` on the worker (reset notices are local)
 */
export function detectRateLimit(text: string, nowMs: number, tzOffsetMinutes: number, rpm: number): RateLimitVerdict | null {
  if (!isRateLimited(text)) return null;
  const resets = [...text.matchAll(/resets ([0-9]+)(am|pm)/g)].at(-1);
  if (resets) {
    let hour = Number(resets[1]) % 12;
    if (resets[2] === 'pm') hour += 12;
    const localNow = new Date(nowMs - tzOffsetMinutes * 60_000); // UTC fields now read as local time
    const target = Date.UTC(localNow.getUTCFullYear(), localNow.getUTCMonth(), localNow.getUTCDate(), hour, 0, 0);
    let wait = Math.ceil((target - localNow.getTime()) / 1000);
    if (wait <= 0) wait += 24 * 3600;
    return { waitSeconds: wait + 120, source: 'reset_time' };
  }
  const retry = [...text.matchAll(/retry.?after:?\s*([0-9]+)/gi)].at(-1);
  if (retry && Number(retry[1]) > 0) return { waitSeconds: Number(retry[1]), source: 'retry_after' };
  return { waitSeconds: Math.min(Math.max(Math.floor(7200 / Math.max(rpm, 1)), 60), 300), source: 'rpm' };
}
