/**
 * Owns the property-based fuzz tests (fast-check, fixed seed, bounded runs) of everything that
 * reads untrusted input: message payloads (`parseMessage`, every message name: arbitrary JSON,
 * huge strings, `__proto__`/`constructor` keys, deep nesting) and agent output (`parseVote`,
 * `findDonePhrase`, `scanSecrets`/`findSecrets`/`redactSecrets`, `countFailingTests`,
 * `detectRateLimit`) on arbitrary text: lone surrogates, NUL bytes, CRLF, 64 KiB lines. Parsers
 * must never throw and must return well-typed results; redaction must leave no detected secret.
 *
 * Not covered: the USAGE-file reader of the agent activity (`consumeUsage`, private to
 * activities/agent.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../schemas/run.js';
import { MESSAGE_SCHEMAS, parseMessage, UNDECODABLE_PAYLOAD, type MessageName } from '../../schemas/messages.js';
import { detectRateLimit } from '../../rules/rate-limit.js';
import { findDonePhrase, findSecrets, redactSecrets, scanSecrets, SECRET_KINDS } from '../../rules/scans.js';
import { countFailingTests } from '../../rules/test-output.js';
import { parseVote, SEVERITIES, VOTES } from '../../rules/vote.js';

/** Fixed, so runs are deterministic; VIGIL_FUZZ_SEED=<n> explores other inputs locally. */
const SEED = Number(process.env.VIGIL_FUZZ_SEED ?? 20_250_611);
const RUNS = { numRuns: 300, seed: SEED } as const;
/** Properties over 64 KiB inputs: fewer runs, same seed. */
const LONG_RUNS = { numRuns: 25, seed: SEED } as const;

// ---------------------------------------------------------------------------------------------
// Message payloads
// ---------------------------------------------------------------------------------------------

const MESSAGE_NAMES = Object.keys(MESSAGE_SCHEMAS) as MessageName[];

const FIELD_KEYS = ['reason', 'by', 'now', 'directive', 'usd'];
const EVIL_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', UNDECODABLE_PAYLOAD, '', ' by', 'BY'];

const hugeString = fc
  .tuple(fc.constantFrom('x', ' ', 'é', '😀', '\u0000', '\ud800'), fc.integer({ min: 1, max: LIMITS.directiveBytes / 2 + 10 }))
  .map(([c, n]) => c.repeat(n));

const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 1, arbitrary: hugeString },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', '   ', '\t\n', 'ops', ' ops ', 'a'.repeat(201), 'r'.repeat(2001), 'x'.repeat(LIMITS.directiveBytes + 1)),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      0,
      -0,
      -1,
      0.5,
      1_000_000,
      1_000_001,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
      NaN,
      Infinity,
      -Infinity,
      true,
      false,
      null,
    ),
  },
  { weight: 1, arbitrary: fc.double() },
);

/** Nested arrays/objects `depth` deep around a leaf. */
const deep = fc.tuple(fc.integer({ min: 1, max: 3000 }), fc.boolean(), fc.jsonValue({ maxDepth: 1 })).map(([depth, arrays, leaf]) => {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { reason: v };
  return v;
});

const payloadObject = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...FIELD_KEYS, ...EVIL_KEYS), fc.string({ maxLength: 10 })),
      fc.oneof({ weight: 5, arbitrary: fieldValue }, { weight: 1, arbitrary: deep }),
    ),
    {
      maxLength: 6,
    },
  )
  .chain((entries) =>
    // As it arrives from the wire (JSON.parse: "__proto__" is an own key), or built in-process.
    fc.constantFrom(
      () => JSON.parse(JSON.stringify(Object.fromEntries(entries))) as unknown,
      () => Object.fromEntries(entries) as unknown,
      () => Object.assign(Object.create(null) as object, Object.fromEntries(entries)) as unknown,
    ),
  )
  .map((make) => make());

const anyPayload: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: payloadObject },
  { weight: 2, arbitrary: fc.jsonValue() },
  {
    weight: 1,
    arbitrary: fc.anything({
      withNullPrototype: true,
      withObjectString: true,
      withBoxedValues: true,
      withMap: true,
      withSet: true,
      withBigInt: true,
      withDate: true,
      withTypedArray: true,
      withSparseArray: true,
    }),
  },
  { weight: 1, arbitrary: deep },
  {
    weight: 1,
    arbitrary: fc.constantFrom(undefined, null, '', 'pause', [], {}, { [UNDECODABLE_PAYLOAD]: 'bad bytes' }, { [UNDECODABLE_PAYLOAD]: 42 }),
  },
);

const FIELD_VALUES: Record<string, fc.Arbitrary<unknown>> = {
  reason: fc.oneof(fc.string({ unit: 'binary', maxLength: 2100 }), fieldValue),
  by: fc.oneof({ weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 210 }) }, { weight: 1, arbitrary: fieldValue }),
  now: fc.oneof(fc.boolean(), fieldValue),
  directive: fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 500 }) },
    { weight: 1, arbitrary: hugeString },
    { weight: 1, arbitrary: fieldValue },
  ),
  item: fc.oneof({ weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) }, { weight: 1, arbitrary: fieldValue }),
  to: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -5, max: 1000 }) }, { weight: 1, arbitrary: fieldValue }),
  force: fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: fieldValue }),
  usd: fc.oneof(
    { weight: 4, arbitrary: fc.double({ min: 0, max: 1_000_000, noNaN: true }) },
    { weight: 1, arbitrary: fc.double() },
    { weight: 1, arbitrary: fieldValue },
  ),
};
const FIELDS: Record<MessageName, string[]> = {
  pause: ['reason', 'by'],
  resume: ['by'],
  stop: ['reason', 'by', 'now'],
  input: ['directive', 'by'],
  forceReview: ['reason', 'by'],
  budget: ['usd', 'by'],
  waive: ['item', 'reason', 'by'],
  rewind: ['to', 'reason', 'directive', 'force', 'by'],
};

/** Payloads with the message's own fields (most valid, some not), sometimes an evil extra key,
 * sometimes through a JSON round trip. */
const nearValid = (name: MessageName): fc.Arbitrary<unknown> =>
  fc
    .tuple(
      fc.record(Object.fromEntries(FIELDS[name].map((f) => [f, FIELD_VALUES[f] as fc.Arbitrary<unknown>])), {
        requiredKeys:
          name === 'input' ? ['directive'] : name === 'budget' ? ['usd'] : name === 'waive' ? ['item'] : name === 'rewind' ? ['to'] : [],
      }),
      fc.option(fc.tuple(fc.constantFrom(...EVIL_KEYS), fieldValue), { freq: 5 }),
      fc.boolean(),
    )
    .map(([fields, extra, viaJson]) => {
      const obj: Record<string, unknown> = { ...fields };
      if (extra) Object.defineProperty(obj, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true });
      return viaJson ? (JSON.parse(JSON.stringify(obj)) as unknown) : obj;
    });

describe('parseMessage never throws and answers ok with a valid value or an error naming the message', () => {
  it.each(MESSAGE_NAMES)('%s', (name) => {
    const protoKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    const seen = { ok: 0, error: 0 };
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: nearValid(name) }, { weight: 2, arbitrary: anyPayload }), (payload) => {
        const r = parseMessage(name, payload);
        seen[r.ok ? 'ok' : 'error']++;
        if (r.ok) {
          expect(MESSAGE_SCHEMAS[name].safeParse(r.value).success).toBe(true);
          const again = parseMessage(name, r.value);
          expect(again).toEqual({ ok: true, value: r.value });
        } else {
          expect(typeof r.error).toBe('string');
          expect(r.error.startsWith(`${name}: `)).toBe(true);
        }
        // Nothing leaked onto Object.prototype.
        expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoKeys);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      RUNS,
    );
    // The generator reaches both answers (shrinking runs count too: only a floor is checked).
    expect(seen.ok).toBeGreaterThan(10);
    expect(seen.error).toBeGreaterThan(10);
  });

  it('the edges: prototype keys, the undecodable marker, limits', () => {
    const wire = (json: string): unknown => JSON.parse(json);
    expect(parseMessage('pause', wire('{"__proto__": {"polluted": true}}'))).toEqual({
      ok: false,
      error: 'pause: unknown field(s) "__proto__"',
    });
    expect(parseMessage('stop', wire('{"constructor": {"prototype": {"polluted": 1}}}')).ok).toBe(false);
    expect(parseMessage('input', { [UNDECODABLE_PAYLOAD]: 'bad' })).toMatchObject({ ok: false, error: expect.stringMatching(/^input: /) });
    expect(parseMessage('input', { directive: 'x'.repeat(LIMITS.directiveBytes + 1) })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^input: field "directive"/),
    });
    expect(parseMessage('input', { directive: 'x'.repeat(LIMITS.directiveBytes) }).ok).toBe(true);
    expect(parseMessage('pause', { by: '  ops  ' })).toEqual({ ok: true, value: { by: 'ops' } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// Agent output
// ---------------------------------------------------------------------------------------------

// Secret-like fixtures, assembled at runtime (no complete credential literal in this file).
const ALNUM = 'Q7rZ3mNb5KxW2tYp9LcV4hJd8GsF6aE1';
const alnum = (n: number): string => Array.from({ length: n }, (_, i) => ALNUM[(i * 7 + 3) % ALNUM.length]).join('');
const SECRET_FIXTURES = [
  'AKIA' + 'Q7RZ3MNB' + '5KXW2TYP',
  'ghp' + '_' + alnum(36),
  'glpat' + '-' + alnum(20),
  'npm' + '_' + alnum(36),
  'sk-' + 'ant-' + alnum(40),
  'sk-' + alnum(24),
  'xox' + 'b-' + '2718281828-' + alnum(24),
  'AI' + 'za' + alnum(35),
  'eyJ' + alnum(20) + '.' + 'eyJ' + alnum(30) + '.' + alnum(43),
  'postgres://app:' + 'Zq8mPw3xVt9kLr' + '@db:5432/app',
  'redis://:' + alnum(16) + '@cache:6379',
  'password = "' + '9f8e7d6c5b4a39281706' + '"',
  'aws_secret_access_key=' + alnum(18) + '/' + alnum(21),
  'https://hooks.slack' + '.com/services/T1A2B3C4D/B5E6F7G8H/' + alnum(24),
  '-----BEGIN RSA ' + 'PRIVATE KEY-----\n' + alnum(64) + '\n' + alnum(20) + '==\n-----END RSA PRIVATE KEY-----',
];

const OUTPUT_FRAGMENTS = [
  'VOTE: APPROVE',
  '**VOTE:** REJECT',
  '> VOTE: CANNOT_VALIDATE',
  'VOTE:',
  'REASON: because',
  '- ISSUE: HIGH: broken',
  'ISSUES: critical: leak',
  'REASON:',
  '# fail 3',
  'ℹ fail 2',
  'Tests  3 failed | 9 passed',
  '=== 2 failed, 1 passed in 0.12s ===',
  'test result: FAILED. 1 passed; 2 failed',
  '--- FAIL: TestX',
  'ok  \tpkg\t0.1s',
  '4 passed, 1 failed',
  'rate limit exceeded',
  'HTTP 429 Too Many Requests',
  'retry-after: 30',
  'Retry-After: 99999999999999999999',
  "You've hit your limit · resets 5pm",
  'resets 13am',
  'quota exceeded',
  'Error: ',
  'all tests pass',
  'task complete',
  'everything is working',
  '\u0000',
  '\r\n',
  '\r',
  '\n',
  '\n\n',
  '\ud800',
  '\udfff',
  '\udc00\ud800',
  '\ud83d\ude00',
  '\u2028',
  '\ufeff',
  '\t',
  ' ',
  '*',
  '_',
  '>',
  '`',
  '-----',
  '=',
  '"',
  "'",
  '@',
  ':',
  '//',
  '[REDACTED:JWT]',
];

/** Text as agents print it: random runs, edge characters, and fragments every parser reacts to. */
const agentText = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }) },
      { weight: 3, arbitrary: fc.constantFrom(...OUTPUT_FRAGMENTS) },
      { weight: 2, arbitrary: fc.constantFrom(...SECRET_FIXTURES) },
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));

/** About 64 KiB on one line: a random chunk repeated with a counter between copies (so no
 * run of one character class grows across copies). */
const longLine = fc.tuple(agentText, fc.integer({ min: 60 * 1024, max: 66 * 1024 })).map(([chunk, size]) => {
  const unit = chunk.replace(/[\r\n]/g, ' ') || 'x';
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < size; i++) {
    const part = `${unit}${i}`;
    parts.push(part);
    length += part.length;
  }
  return parts.join('');
});

/** Anything, 64 KiB lines included, with the long line somewhere in ordinary output. */
const anyOutput = fc.oneof(
  { weight: 6, arbitrary: agentText },
  { weight: 1, arbitrary: fc.tuple(agentText, longLine, agentText).map(([a, l, b]) => `${a}\n${l}\r\n${b}`) },
);

const DONE_PHRASES = [
  'all tests pass',
  'all requirements met',
  'implementation complete',
  'feature complete',
  'task complete',
  'project complete',
  'all tasks done',
  'everything is working',
];

describe('agent-output parsers never throw and return well-typed results', () => {
  it('parseVote', () => {
    fc.assert(
      fc.property(agentText, (text) => {
        const v = parseVote(text);
        expect(v.vote === null || (VOTES as readonly string[]).includes(v.vote)).toBe(true);
        expect(v.reason === null || (typeof v.reason === 'string' && v.reason.length > 0 && v.reason.length <= 300)).toBe(true);
        expect(Array.isArray(v.issues) && v.issues.length <= 50).toBe(true);
        for (const issue of v.issues) {
          expect((SEVERITIES as readonly string[]).includes(issue.severity)).toBe(true);
          expect(typeof issue.description === 'string' && issue.description.length <= 300).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('parseVote on 64 KiB lines', () => {
    fc.assert(
      fc.property(longLine, (text) => {
        const v = parseVote(text);
        expect(v.vote === null || (VOTES as readonly string[]).includes(v.vote)).toBe(true);
      }),
      LONG_RUNS,
    );
  });

  it('findDonePhrase', () => {
    fc.assert(
      fc.property(anyOutput, (text) => {
        const p = findDonePhrase(text);
        expect(p === null || DONE_PHRASES.includes(p)).toBe(true);
      }),
      RUNS,
    );
  });

  it('countFailingTests', () => {
    fc.assert(
      fc.property(agentText, (text) => {
        const n = countFailingTests(text);
        expect(n === null || (Number.isInteger(n) && n >= 0)).toBe(true);
      }),
      RUNS,
    );
    fc.assert(
      fc.property(longLine, (text) => {
        const n = countFailingTests(text);
        expect(n === null || (Number.isInteger(n) && n >= 0)).toBe(true);
      }),
      LONG_RUNS,
    );
  });

  it('detectRateLimit (text, nowMs, tzOffsetMinutes, rpm)', () => {
    const args = fc.tuple(
      fc.integer({ min: 0, max: 4_102_444_800_000 }),
      fc.integer({ min: -840, max: 840 }),
      fc.integer({ min: 1, max: 10_000 }),
    );
    const check = (text: string, [now, tz, rpm]: [number, number, number]): void => {
      const r = detectRateLimit(text, now, tz, rpm);
      expect(r === null || (Number.isInteger(r.waitSeconds) && r.waitSeconds >= 0)).toBe(true);
    };
    fc.assert(fc.property(agentText, args, check), RUNS);
    fc.assert(fc.property(longLine, args, check), LONG_RUNS);
  });

  it('scanSecrets and findSecrets', () => {
    fc.assert(
      fc.property(anyOutput, fc.integer({ min: 0, max: 30 }), (text, max) => {
        const lineCount = text.split('\n').length;
        const findings = scanSecrets(text, max);
        expect(findings.length).toBeLessThanOrEqual(max);
        let previous = 0;
        for (const f of findings) {
          expect(SECRET_KINDS).toContain(f.kind);
          expect(Number.isInteger(f.line) && f.line > previous && f.line <= lineCount).toBe(true);
          previous = f.line;
        }
        for (const m of findSecrets(text)) {
          expect(SECRET_KINDS).toContain(m.kind);
          expect(0 <= m.start && m.start <= m.end && m.end <= text.length).toBe(true);
          expect(text.slice(0, m.start).split('\n').length).toBeGreaterThanOrEqual(m.line);
        }
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Redaction
// ---------------------------------------------------------------------------------------------

const MARKER = /\[REDACTED:[^\]\n]{1,64}\]/;
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const token = (min: number, max: number, chars = B64URL): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...chars), minLength: min, maxLength: max });

/** Secrets built around random values, in their usual contexts. */
const generatedSecret = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('postgres', 'postgresql', 'mysql', 'redis', 'rediss', 'mongodb+srv', 'amqp', 'https'),
      token(0, 8),
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 24 }),
      token(1, 12),
    )
    .map(([scheme, user, pw, host]) => `${scheme}://${user}:${pw}@${host}/x`),
  fc
    .tuple(
      fc.constantFrom('password', 'api_key', 'SECRET_KEY', 'auth-token', 'DB_PASSWORD', 'clientSecret'),
      fc.constantFrom(' = ', ': ', '=', '":"'),
      fc.constantFrom('"', "'", ''),
      token(8, 40),
    )
    .map(([name, op, q, v]) => `${name}${op}${q}${v}${q}`),
  fc
    .tuple(
      fc.constantFrom('ghp_', 'gho_', 'glpat-', 'npm_', 'hf_', 'sk-', 'sk-proj-', 'sk-ant-', 'xoxb-', 'AKIA', 'AIza', 'eyJ'),
      token(10, 60),
    )
    .map(([p, v]) => p + v),
  fc.tuple(token(8, 40), token(4, 40), token(16, 60)).map(([a, b, c]) => `eyJ${a}.${b}.${c}`),
  fc
    .tuple(
      token(16, 16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
      token(40, 40, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+'),
    )
    .map(([id, s]) => `AKIA${id},${s}`),
  fc
    .array(token(1, 64, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='), { minLength: 1, maxLength: 5 })
    .map((body) => `-----BEGIN PRIVATE KEY-----\n${body.join('\n')}\n-----END PRIVATE KEY-----`),
);

const secretText = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: generatedSecret },
      { weight: 2, arbitrary: fc.constantFrom(...SECRET_FIXTURES) },
      { weight: 3, arbitrary: fc.constantFrom(...OUTPUT_FRAGMENTS) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

/** The parts of redacted text outside the markers: the only places a secret could remain. */
const outsideMarkers = (text: string): string[] => text.split(new RegExp(MARKER.source, 'g'));

describe('redactSecrets', () => {
  const check = (input: string): void => {
    const r = redactSecrets(input);
    expect(typeof r.text).toBe('string');
    expect(Number.isInteger(r.redactions) && r.redactions >= 0).toBe(true);
    if (r.redactions === 0) expect(r.text).toBe(input);
    // Idempotent.
    expect(redactSecrets(r.text)).toEqual({ text: r.text, redactions: 0 });
    // Every secret scanSecrets reports is one findSecrets locates...
    const located = findSecrets(input);
    for (const f of scanSecrets(input, 1000)) expect(located.some((m) => m.line === f.line && m.kind === f.kind)).toBe(true);
    // ...and none of those values is left in the output.
    const parts = outsideMarkers(r.text);
    for (const m of located) {
      const value = input.slice(m.start, m.end);
      if (value.length >= 8) expect(parts.some((p) => p.includes(value))).toBe(false);
    }
    expect(findSecrets(r.text).filter((m) => m.end > m.start)).toEqual([]);
  };

  it('leaves no secret that scanSecrets finds, and is idempotent (secret-rich text)', () => {
    let redacted = 0;
    fc.assert(
      fc.property(secretText, (text) => {
        check(text);
        if (redactSecrets(text).redactions > 0) redacted++;
      }),
      RUNS,
    );
    expect(redacted).toBeGreaterThan(RUNS.numRuns / 2); // the generator does produce secrets
  });

  it('the same on arbitrary output, 64 KiB lines included', () => {
    fc.assert(fc.property(anyOutput, check), RUNS);
  });

  it('finishes 64 KiB of repeated secret-ish text quickly', () => {
    fc.assert(
      fc.property(secretText, (chunk) => {
        const text = (chunk || 'x').repeat(Math.ceil((64 * 1024) / Math.max(chunk.length, 1))).slice(0, 64 * 1024);
        const started = Date.now();
        redactSecrets(text);
        scanSecrets(text);
        expect(Date.now() - started).toBeLessThan(2000);
      }),
      LONG_RUNS,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Inputs that once made parsers quadratic (parseVote took 26 s on 64 KiB of newlines,
// countFailingTests 7 s): they must stay linear.
// ---------------------------------------------------------------------------------------------

describe('parsers are fast on 64 KiB of one repeated character', () => {
  const N = 64 * 1024;
  it.each(['\n', ' ', '*', '\r\n', '_', 'VOTE: ', '_VOTE'])('parseVote on %j', (c) => {
    const started = Date.now();
    parseVote(c.repeat(N / c.length));
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it.each(['\n', '\r\n', ' ', 'Tests '])('countFailingTests on %j', (c) => {
    const started = Date.now();
    countFailingTests(c.repeat(N / c.length));
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
