/**
 * Rate-limit detection and waits (rules/rate-limit.ts, spec §1.9): the §1.9 forms,
 * each provider's own messages (claude reset notices and epochs, codex usage limits, gemini
 * RESOURCE_EXHAUSTED with retryDelay or a per-day quota), structured output winning over text,
 * and test-runner lines never counting.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectRateLimit, isRateLimited, RESET_BUFFER_SECONDS } from '../../rules/rate-limit.js';

const H = 3600;
const B = RESET_BUFFER_SECONDS;

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

  it.each([
    ['vitest', ' ✓ test/a.test.ts (3 tests) 4ms\n   × returns 429 too many requests when over quota 12ms\n Test Files  1 failed (1)'],
    [
      'vitest FAIL',
      ' FAIL  test/api.test.ts > handles HTTP 429 Too Many Requests\nAssertionError: expected 200 to be 429 // Object.is ' +
        'equality\n- Expected\n+ Received\n ❯ test/api.test.ts:12:20',
    ],
    [
      'jest',
      '  ✕ returns 429 too many requests when over quota (5 ms)\n  ● API › returns 429 too many requests when over quota\n    ' +
        'expect(received).toBe(expected)\n    Expected: "429 Too Many Requests"\n    Received: "200 OK"',
    ],
    ['a custom marker', '✗ returns 429 too many requests when over quota'],
    [
      'pytest',
      'tests/test_api.py::test_429_too_many_requests FAILED [ 50%]\ntest_429_too_many_requests ' +
        'FAILED\ntest_rate_limit_exceeded FAILED\nE       AssertionError: rate limit exceeded was not raised\nFAILED ' +
        'tests/test_api.py::test_quota - quota exceeded error expected',
    ],
    [
      'go test',
      '=== RUN   TestTooManyRequests\n--- FAIL: TestTooManyRequests (0.00s)\n    api_test.go:12: got 200, want 429 Too Many ' +
        'Requests (rate limit error)\nFAIL\texample.com/api\t0.01s',
    ],
    [
      'node test (TAP)',
      'not ok 3 - returns 429 Too Many Requests\n  ---\n  error: \'Expected "429 Too Many Requests", got "200"\'\n  ...\n# fail 1',
    ],
    ['cargo', 'test api::rate_limit_exceeded ... FAILED'],
    ['mocha', '  1) returns 429 too many requests when over quota'],
  ])('does not count a failing test whose name or output mentions a rate limit (%s)', (_runner, output) => {
    expect(isRateLimited(`npm test\n${output}\n`)).toBe(false);
    expect(detectRateLimit(`${output}\n`, 0, 0, 50)).toBeNull();
  });

  it('still counts the provider message that follows a test run', () => {
    expect(
      isRateLimited('✗ returns 429 too many requests\nAPI Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}\n', 'claude'),
    ).toBe(true);
  });

  it("reads only the provider's own message forms", () => {
    expect(isRateLimited('limit reached · resets 5pm\n', 'claude')).toBe(true);
    expect(isRateLimited('limit reached · resets 5pm\n', 'codex')).toBe(false);
    expect(isRateLimited('Claude usage limit reached|1767225600\n', 'gemini')).toBe(false);
    expect(isRateLimited("You've hit your usage limit.\n", 'codex')).toBe(true);
    expect(isRateLimited('status: RESOURCE_EXHAUSTED\n', 'gemini')).toBe(true);
    expect(isRateLimited('status: RESOURCE_EXHAUSTED\n', 'claude')).toBe(false);
    // Every provider prints the §1.9 forms; without a provider every form counts.
    expect(isRateLimited('litellm.RateLimitError: rate limit exceeded\n', 'aider')).toBe(true);
    expect(isRateLimited('resets 5pm\n')).toBe(true);
    expect(isRateLimited('status: RESOURCE_EXHAUSTED\n', 'command')).toBe(true);
  });
});

describe('detectRateLimit', () => {
  const noon = Date.UTC(2026, 10, 22, 12, 0, 0); // November: Paris is UTC+1, Los Angeles UTC-8
  const summerNoon = Date.UTC(2026, 6, 5, 12, 0, 0); // July: Paris UTC+2, Los Angeles UTC-7

  it('waits until a "resets" hour (worker-local time) plus 120 s', () => {
    expect(detectRateLimit('limit reached · resets 5pm\n', noon, 0, 50)).toEqual({ waitSeconds: 5 * H + B, source: 'reset_time' });
    // Already past today: tomorrow.
    expect(detectRateLimit('resets 11am\n', noon, 0, 50)).toEqual({ waitSeconds: 23 * H + B, source: 'reset_time' });
    // Worker at UTC-2 (offset +120 min): local time is 10:00, so 5pm is 7 hours away.
    expect(detectRateLimit('resets 5pm\n', noon, 120, 50)).toEqual({ waitSeconds: 7 * H + B, source: 'reset_time' });
    expect(detectRateLimit('resets 12am\n', noon, 0, 50)?.waitSeconds).toBe(12 * H + B);
    // Exactly now: the next one, tomorrow.
    expect(detectRateLimit('resets 12pm\n', noon, 0, 50)?.waitSeconds).toBe(24 * H + B);
  });

  it('uses the last retry-after, else the request rate clamped to 60..300 s', () => {
    expect(detectRateLimit('Error: rate limit exceeded, retry-after: 10\nretry after 42 (rate limit error)\n', noon, 0, 50)).toEqual({
      waitSeconds: 42,
      source: 'retry_after',
    });
    expect(detectRateLimit('Error: rate limit exceeded\n', noon, 0, 50)).toEqual({ waitSeconds: 144, source: 'rpm' });
    expect(detectRateLimit('Error: rate limit exceeded\n', noon, 0, 1000)).toEqual({ waitSeconds: 60, source: 'rpm' });
    expect(detectRateLimit('Error: rate limit exceeded\n', noon, 0, 1)).toEqual({ waitSeconds: 300, source: 'rpm' });
    expect(detectRateLimit('Error: something else broke\n', noon, 0, 50)).toBeNull();
  });

  describe('claude', () => {
    it('honours minutes and a named IANA zone (with its daylight-saving offset)', () => {
      const msg = '5-hour limit reached ∙ resets 5:10pm (Europe/Paris)\n';
      // 12:00 UTC is 13:00 in Paris in November, 14:00 in July; the worker's own offset is ignored.
      expect(detectRateLimit(msg, noon, 300, 50, 'claude')).toEqual({ waitSeconds: 4 * H + 10 * 60 + B, source: 'reset_time' });
      expect(detectRateLimit(msg, summerNoon, 300, 50, 'claude')).toEqual({ waitSeconds: 3 * H + 10 * 60 + B, source: 'reset_time' });
      expect(detectRateLimit('resets 9am (America/New_York)\n', noon, 0, 50, 'claude')?.waitSeconds).toBe(2 * H + B); // 07:00 in New York
    });

    it('reads a notice without a zone, or with an unknown zone, on the worker clock', () => {
      expect(detectRateLimit('limit reached · resets 3:30am\n', noon, 0, 50, 'claude')?.waitSeconds).toBe(15 * H + 30 * 60 + B);
      expect(detectRateLimit('resets 3:30pm (Mars/Olympus_Mons)\n', noon, -60, 50, 'claude')?.waitSeconds).toBe(2 * H + 30 * 60 + B);
      expect(detectRateLimit('Your limit will reset at 9am\n', noon, 0, 50, 'claude')).toEqual({
        waitSeconds: 21 * H + B,
        source: 'reset_time',
      });
    });

    it('uses the worker IANA zone when given, so a reset across a DST change is read right', () => {
      // 2026-03-29 00:30 UTC: Paris switches to UTC+2 at 01:00 UTC. "resets 5am" tomorrow-local is 03:00 UTC.
      const beforeSwitch = Date.UTC(2026, 2, 29, 0, 30);
      expect(detectRateLimit('resets 5am\n', beforeSwitch, -60, 50, 'claude', 'Europe/Paris')?.waitSeconds).toBe(2.5 * H + B);
      expect(detectRateLimit('resets 5am\n', beforeSwitch, -60, 50, 'claude')?.waitSeconds).toBe(3.5 * H + B);
    });

    it('reads a dated weekly reset', () => {
      const at = detectRateLimit('Opus weekly limit reached ∙ resets Nov 24, 10am (Europe/Paris)\n', noon, 0, 50, 'claude');
      expect(at?.waitSeconds).toBe(2 * 24 * H - 3 * H + B);
      // Read on Dec 30, "Jan 2" is next year.
      expect(detectRateLimit('resets Jan 2, 10am (UTC)\n', Date.UTC(2026, 11, 30, 10), 0, 50, 'claude')?.waitSeconds).toBe(3 * 24 * H + B);
    });

    it('reads the epoch after the pipe', () => {
      const before = Date.UTC(2025, 11, 31, 20, 0); // 1767225600 is 2026-01-01T00:00:00Z
      expect(detectRateLimit('Claude usage limit reached|1767225600\n', before, 0, 50, 'claude')).toEqual({
        waitSeconds: 4 * H + B,
        source: 'reset_time',
      });
      expect(detectRateLimit('Claude AI usage limit reached|1767225600\n', before, 0, 50)).toEqual({
        waitSeconds: 4 * H + B,
        source: 'reset_time',
      });
      // Never negative: a reset already past waits only the buffer.
      expect(detectRateLimit('Claude AI usage limit reached|1767225600\n', before + 5 * H * 1000, 0, 50)?.waitSeconds).toBe(B);
    });

    it('takes the stream-json result record over the text around it', () => {
      const stream = [
        '{"type":"system","subtype":"init","session_id":"s"}',
        '{"type":"user","message":{"content":[{"type":"tool_result","content":"Error: rate limit exceeded, retry-after: 9"}]}}',
        '{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached|1767225600"}',
      ].join('\n');
      expect(detectRateLimit(stream, Date.UTC(2025, 11, 31, 23, 0), 0, 50, 'claude')).toEqual({ waitSeconds: H + B, source: 'reset_time' });
      // A result that is not an error decides too: tool traffic quoting a rate limit is not one.
      const ok = stream.replace('"is_error":true', '"is_error":false');
      expect(detectRateLimit(ok, 0, 0, 50, 'claude')).toBeNull();
      expect(isRateLimited(stream.split('\n').slice(0, 2).join('\n'), 'claude')).toBe(false);
      expect(detectRateLimit(`${ok}\nError: rate limit exceeded\n`, 0, 0, 50, 'claude')).toBeNull();
      const apiError =
        '{"type":"result","is_error":true,"result":"API Error: 429 {\\"type\\":\\"error\\",\\"error\\":{\\"type\\":\\"rate_limit_error\\"}}"}';
      expect(detectRateLimit(apiError, 0, 0, 50, 'claude')).toEqual({ waitSeconds: 144, source: 'rpm' });
    });
  });

  describe('codex', () => {
    const usage = "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in";

    it.each([
      ['5 days 22 hours.', 5 * 24 * H + 22 * H],
      ['3 hours 12 minutes.', 3 * H + 12 * 60],
      ['1 hour and 5 minutes.', H + 5 * 60],
      ['45 minutes.', 45 * 60],
      ['30 seconds.', 30],
    ])('waits "try again in %s" plus 120 s', (duration, seconds) => {
      expect(detectRateLimit(`${usage} ${duration}\n`, noon, 0, 60, 'codex')).toEqual({ waitSeconds: seconds + B, source: 'reset_time' });
      expect(detectRateLimit(`${usage} ${duration}\n`, noon, 0, 60)).toEqual({ waitSeconds: seconds + B, source: 'reset_time' });
    });

    it('waits until "try again at <date> <time>" on the worker clock', () => {
      const msg = "You've hit your usage limit. Upgrade to Pro or try again at Jul 5th, 2026 8:19 PM.\n";
      expect(detectRateLimit(msg, summerNoon, 0, 60, 'codex')).toEqual({ waitSeconds: 8 * H + 19 * 60 + B, source: 'reset_time' });
      // Worker at UTC-2: 12:00 UTC is 10:00 local.
      expect(detectRateLimit(msg, summerNoon, 120, 60, 'codex')?.waitSeconds).toBe(10 * H + 19 * 60 + B);
      // Already past: the buffer only, never negative.
      expect(detectRateLimit(msg, summerNoon + 24 * H * 1000, 0, 60, 'codex')?.waitSeconds).toBe(B);
      expect(detectRateLimit("You've hit your usage limit. Try again at 8:19 PM.\n", summerNoon, 0, 60, 'codex')?.waitSeconds).toBe(
        8 * H + 19 * 60 + B,
      );
    });

    it('reads the message inside JSON error events; the last decisive event wins', () => {
      const events = [
        '{"type":"thread.started","thread_id":"t"}',
        '{"type":"error","message":"Reconnecting... 1/5"}',
        `{"type":"error","message":"${usage} 45 minutes."}`,
        `{"type":"turn.failed","error":{"message":"${usage} 45 minutes."}}`,
      ].join('\n');
      expect(detectRateLimit(events, noon, 0, 60, 'codex')).toEqual({ waitSeconds: 45 * 60 + B, source: 'reset_time' });
      expect(isRateLimited(`${events}\n{"type":"error","message":"sandbox denied the write"}`, 'codex')).toBe(false);
    });
  });

  describe('gemini', () => {
    const perMinute =
      '{"error":{"code":429,"message":"You exceeded your current ' +
      'quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{' +
      '"quotaId":"GenerateRequestsPerMinutePerProjectPerModel"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDe' +
      'lay":"34s"}]}}';
    const perDay =
      "Error: 429 Quota exceeded for quota metric 'Generate Content API requests per day' and limit " +
      "'GenerateRequestsPerDayPerProjectPerModel' of service 'generativelanguage.googleapis.com'";

    it('waits the retryDelay of a RESOURCE_EXHAUSTED error (plain, pretty-printed, or as the structured record)', () => {
      expect(detectRateLimit(`[API Error: ${perMinute}]\n`, noon, 0, 50, 'gemini')).toEqual({ waitSeconds: 34, source: 'retry_after' });
      expect(detectRateLimit(`${perMinute}\n`, noon, 0, 50, 'gemini')).toEqual({ waitSeconds: 34, source: 'retry_after' });
      const pretty = JSON.stringify(JSON.parse(perMinute), null, 2);
      expect(detectRateLimit(`${pretty}\n`, noon, 0, 50, 'gemini')).toEqual({ waitSeconds: 34, source: 'retry_after' });
      expect(detectRateLimit('429 Too Many Requests. Please retry in 12.3s.\n', noon, 0, 50, 'gemini')).toEqual({
        waitSeconds: 13,
        source: 'retry_after',
      });
    });

    it('waits a per-day quota until the next midnight in Los Angeles plus 120 s, even with a retryDelay', () => {
      expect(detectRateLimit(`${perDay}\n`, noon, 0, 50, 'gemini')).toEqual({ waitSeconds: 20 * H + B, source: 'reset_time' }); // 04:00 PST
      expect(detectRateLimit(`${perDay}\n`, summerNoon, 0, 50, 'gemini')).toEqual({ waitSeconds: 19 * H + B, source: 'reset_time' }); // 05:00 PDT
      const withDelay = perMinute.replace('PerMinute', 'PerDay');
      expect(detectRateLimit(`${withDelay}\n`, noon, 0, 50, 'gemini')).toEqual({ waitSeconds: 20 * H + B, source: 'reset_time' });
    });

    it('counts a structured error with code 429 whatever its message', () => {
      expect(detectRateLimit('{"error":{"code":429,"message":"slow down"}}\n', noon, 0, 50, 'gemini')).toEqual({
        waitSeconds: 144,
        source: 'rpm',
      });
      expect(detectRateLimit('{"error":{"code":500,"message":"internal"}}\n', noon, 0, 50, 'gemini')).toBeNull();
    });
  });

  it('is non-null exactly when isRateLimited, with a whole non-negative wait', () => {
    const fragments = [
      'Error: rate limit exceeded',
      'resets 5:10pm (Europe/Paris)',
      'resets 13pm',
      'Claude usage limit reached|1767225600',
      "You've hit your usage limit. try again in 2 hours 3 minutes",
      'try again at Feb 30th, 2026 25:61 PM',
      '"retryDelay": "0.5s"',
      'status: RESOURCE_EXHAUSTED',
      "quota metric 'x per day'",
      'retry-after: 0',
      '✗ returns 429 too many requests',
      '{"type":"result","is_error":true,"result":"usage limit reached"}',
      '{"error":{"code":429}}',
      'all good',
    ];
    const providers = [undefined, 'command', 'claude', 'codex', 'gemini', 'aider', 'opencode'] as const;
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...fragments), { maxLength: 8 }),
        fc.constantFrom(...providers),
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: -840, max: 720 }),
        (lines, provider, now, tz) => {
          const text = lines.join('\n');
          const verdict = detectRateLimit(text, now, tz, 50, provider);
          expect(verdict !== null).toBe(isRateLimited(text, provider));
          if (verdict) {
            expect(Number.isInteger(verdict.waitSeconds)).toBe(true);
            expect(verdict.waitSeconds).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });
});
