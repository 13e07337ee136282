/**
 * Auth errors of a failed agent call (rules/auth-error.ts, spec §1.8) and the
 * shared reading of provider output (rules/runner-lines.ts): status codes in an
 * HTTP/error context, each provider's own messages, structured records winning, the 40-line
 * window, and no auth error from test-runner lines or prose.
 */
import { describe, expect, it } from 'vitest';
import { detectAuthError } from '../../rules/auth-error.js';
import { familiesOf, isTestRunnerLine, providerRecord, readableLines } from '../../rules/runner-lines.js';

describe('detectAuthError', () => {
  it.each([
    'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    'HTTP 401',
    'HTTP/1.1 403 Forbidden',
    'request failed with status: 403',
    'status_code=401',
    'unexpected status 401 Unauthorized: Missing bearer authentication in header',
    'Error: Unauthorized',
    'Unauthorized',
    'Error: invalid_api_key',
    'authentication error: bad credentials',
    'Error: [{"error":{"code":401,"message":"Request had invalid authentication credentials."}}]',
  ])('counts %j from any provider', (line) => {
    expect(detectAuthError(`working...\n${line}\n`)).toEqual({ kind: 'auth', evidence: line });
  });

  it.each([
    ['claude', 'Invalid API key · Please run /login'],
    ['claude', 'OAuth token has expired. Please obtain a new token or refresh your existing token.'],
    ['codex', 'Not logged in'],
    ['codex', 'Error: Not logged in. Run `codex login` first.'],
    ['gemini', 'API key not valid. Please pass a valid API key.'],
    ['gemini', 'status: PERMISSION_DENIED'],
    ['gemini', '"status": "UNAUTHENTICATED"'],
  ] as const)('counts the %s message %j', (provider, line) => {
    expect(detectAuthError(`${line}\n`, provider)?.evidence).toBe(line);
    expect(detectAuthError(`${line}\n`)?.evidence).toBe(line);
  });

  it("reads a CLI's own forms only for that CLI", () => {
    expect(detectAuthError('Not logged in\n', 'gemini')).toBeNull();
    expect(detectAuthError('status: PERMISSION_DENIED\n', 'claude')).toBeNull();
    expect(detectAuthError('OAuth token has expired\n', 'codex')).toBeNull();
    expect(detectAuthError('HTTP 401\n', 'aider')?.kind).toBe('auth');
  });

  it.each([
    'the 403 page now renders',
    'unauthorized users now get a 401 from /admin',
    'Added a 401 handler; the endpoint returns status 401 for anonymous users',
    'Error handling for the 403 page is done',
    'the user is not logged in until the cookie is set',
    'all tests pass',
  ])('does not count prose %j', (line) => {
    expect(detectAuthError(`${line}\n`)).toBeNull();
  });

  it.each([
    '   × returns 401 Unauthorized without a token 3ms',
    ' FAIL  test/auth.test.ts > rejects an invalid API key with HTTP 401',
    '  ● auth › returns 403 Forbidden\n    Expected: "HTTP 403"\n    Received: "HTTP 200"',
    'tests/test_auth.py::test_invalid_api_key FAILED [ 50%]\nE       AssertionError: status: 401',
    '--- FAIL: TestUnauthorized (0.00s)\n    auth_test.go:20: want HTTP 401, got 200',
    "not ok 2 - rejects HTTP 401\n  ---\n  error: 'Expected HTTP 401'\n  ...",
  ])('does not count test-runner output %j', (output) => {
    expect(detectAuthError(`npm test\n${output}\n# fail 1\n`)).toBeNull();
  });

  it('reads only the last 40 lines', () => {
    const noise = Array.from({ length: 40 }, (_, i) => `line ${i}`);
    expect(detectAuthError(['HTTP 401', ...noise].join('\n'))).toBeNull();
    expect(detectAuthError([...noise, 'HTTP 401'].join('\n'))?.evidence).toBe('HTTP 401');
  });

  it('lets the structured record decide, and counts a gemini error with code 401/403', () => {
    const result = '{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login"}';
    expect(detectAuthError(`{"type":"system","subtype":"init"}\n${result}\n`, 'claude')).toEqual({
      kind: 'auth',
      evidence: 'Invalid API key · Please run /login',
    });
    const success = '{"type":"result","subtype":"success","is_error":false,"result":"done"}';
    expect(detectAuthError(`HTTP 401\n${success}\n`, 'claude')).toBeNull();
    // Tool traffic quoting an auth failure is not the provider's.
    expect(detectAuthError('{"type":"user","message":{"content":[{"type":"tool_result","content":"HTTP 401"}]}}\n', 'claude')).toBeNull();
    expect(detectAuthError('{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}\n', 'codex')?.evidence).toBe(
      'unexpected status 401 Unauthorized',
    );
    expect(detectAuthError('{"error":{"code":403,"message":"The caller does not have permission"}}\n', 'gemini')?.kind).toBe('auth');
    expect(detectAuthError('{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}\n', 'gemini')).toBeNull();
  });

  it('trims the evidence to 300 characters', () => {
    expect(detectAuthError(`HTTP 401 ${'x'.repeat(500)}\n`)?.evidence).toHaveLength(300);
  });
});

describe('runner-lines', () => {
  it.each([
    ' ✓ test/a.test.ts (3 tests) 4ms',
    '   × handles HTTP 429 12ms',
    '  ✕ returns 429 (5 ms)',
    '✔ parses (1.2ms)',
    '✖ fails (1.2ms)',
    ' ❯ test/api.test.ts:12:20',
    ' FAIL  test/api.test.ts > handles HTTP 429 Too Many Requests',
    'PASS src/a.test.ts',
    '  ● API › returns 429',
    '    Expected: "429"',
    '+ Received',
    'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal',
    '  1) returns 429 too many requests',
    'tests/test_api.py::test_429 FAILED [ 50%]',
    'test_429_too_many_requests FAILED',
    'FAILED tests/test_api.py::test_x - assert 200 == 429',
    'E       assert 200 == 429',
    '--- FAIL: TestX (0.00s)',
    '=== RUN   TestX',
    '    x_test.go:12: want 429',
    'not ok 3 - returns 429',
    'ok 1 - parses',
    'test api::limits ... FAILED',
  ])('recognises the runner line %j', (line) => {
    expect(isTestRunnerLine(line)).toBe(true);
  });

  it.each([
    'API Error: 429 Too Many Requests',
    'Error: rate limit exceeded',
    "You've hit your limit · resets 5pm",
    'Request FAILED: HTTP 401',
    'ok, retrying',
  ])('leaves the provider line %j', (line) => {
    expect(isTestRunnerLine(line)).toBe(false);
  });

  it('drops the YAML block under a TAP result and provider event records', () => {
    const lines = [
      'not ok 1 - x',
      '  ---',
      "  error: 'HTTP 401'",
      '  ...',
      '{"type":"assistant","message":{}}',
      '{"level":"error","msg":"HTTP 401"}',
      'HTTP 401',
    ];
    expect(readableLines(lines)).toEqual(['{"level":"error","msg":"HTTP 401"}', 'HTTP 401']);
    // An unterminated block ends at the first line that is not indented.
    expect(readableLines(['not ok 1 - x', '  ---', "  error: 'HTTP 401'", 'Error: HTTP 401'])).toEqual(['Error: HTTP 401']);
  });

  it('finds the last decisive record of the right provider', () => {
    const lines = [
      '{"type":"result","is_error":true,"result":"a"}',
      '{"type":"error","message":"b"}',
      'plain',
      '{"type":"item.completed"}',
    ];
    expect(providerRecord(lines)?.text).toBe('b');
    expect(providerRecord(lines, 'claude')?.text).toBe('a');
    expect(providerRecord(lines, 'gemini')).toBeNull();
    expect(providerRecord(['[{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}]'], 'gemini')?.code).toBe(429);
    expect(providerRecord(['{"type":"result",'])).toBeNull();
  });

  it('maps providers to the CLI families whose forms apply', () => {
    expect(familiesOf('claude')).toEqual(['claude']);
    expect(familiesOf('aider')).toEqual([]);
    expect(familiesOf('command')).toEqual(['claude', 'codex', 'gemini']);
    expect(familiesOf(undefined)).toEqual(['claude', 'codex', 'gemini']);
  });
});
