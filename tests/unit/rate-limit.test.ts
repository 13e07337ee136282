/**
 * Rate-limit detection and waits (workflows/decisions/rate-limit.ts, spec §1.9).
 */
import { describe, expect, it } from 'vitest';
import { detectRateLimit, isRateLimited } from '../../workflows/decisions/rate-limit.js';

describe('isRateLimited', () => {
  it.each([
    'Error: rate limit exceeded',
    'API Error: 429 Too Many Requests',
    'HTTP 429 too many requests',
    'request failed: quota exceeded for this project',
    'status: 429 (rate_limit) retry-after 30',
    "You've hit your limit · resets 5pm",
  ])('counts %j', (line) => {
    expect(isRateLimited(`working...\n${line}\n`)).toBe(true);
  });

  it.each(['got 429 results', 'Retry-After: 30', 'X-RateLimit-Remaining: 0', 'all tests pass'])('does not count %j alone', (line) => {
    expect(isRateLimited(`${line}\n`)).toBe(false);
  });

  it('only reads the last 40 lines', () => {
    const text = ['Error: rate limit exceeded', ...Array.from({ length: 40 }, (_, i) => `line ${i}`)].join('\n');
    expect(isRateLimited(text)).toBe(false);
    expect(isRateLimited(text.split('\n').slice(1).concat('Error: rate limit exceeded').join('\n'))).toBe(true);
  });
});

describe('detectRateLimit', () => {
  const noon = Date.UTC(2026, 10, 22, 12, 0, 0);

  it('waits until a "resets" hour (worker-local time) plus 120 s', () => {
    expect(detectRateLimit('limit reached · resets 5pm\n', noon, 0, 50)).toEqual({ waitSeconds: 5 * 3600 + 120, source: 'reset_time' });
    // Already past today: tomorrow.
    expect(detectRateLimit('resets 11am\n', noon, 0, 50)).toEqual({ waitSeconds: 23 * 3600 + 120, source: 'reset_time' });
    // Worker at UTC-2 (offset +120 min): local time is 10:00, so 5pm is 7 hours away.
    expect(detectRateLimit('resets 5pm\n', noon, 120, 50)).toEqual({ waitSeconds: 7 * 3600 + 120, source: 'reset_time' });
    expect(detectRateLimit('resets 12am\n', noon, 0, 50)?.waitSeconds).toBe(12 * 3600 + 120);
  });

  it('uses the last retry-after, else the request rate clamped to 60..300 s', () => {
    expect(detectRateLimit('Error: rate limit exceeded, retry-after: 10\nretry after 42 (rate limit error)\n', noon, 0, 50)).toEqual({ waitSeconds: 42, source: 'retry_after' });
    expect(detectRateLimit('Error: rate limit exceeded\n', noon, 0, 50)).toEqual({ waitSeconds: 144, source: 'rpm' });
    expect(detectRateLimit('Error: rate limit exceeded\n', noon, 0, 1000)).toEqual({ waitSeconds: 60, source: 'rpm' });
    expect(detectRateLimit('Error: rate limit exceeded\n', noon, 0, 1)).toEqual({ waitSeconds: 300, source: 'rpm' });
    expect(detectRateLimit('Error: something else broke\n', noon, 0, 50)).toBeNull();
  });
});
