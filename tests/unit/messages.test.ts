/**
 * Owns the unit tests of schemas/messages.ts: parseMessage for pause, resume, stop and input —
 * valid payloads (a missing payload is `{}`), wrong types and unknown fields with errors that name
 * the field, the `by` actor bounds, and the 1 MiB UTF-8 byte limit of a directive.
 */
import { describe, expect, it } from 'vitest';
import { MESSAGE_SCHEMAS, parseMessage, type MessageName } from '../../schemas/messages.js';
import { LIMITS } from '../../schemas/run.js';

const MiB = 1024 * 1024;
const NAMES: MessageName[] = ['pause', 'resume', 'stop', 'input', 'forceReview', 'budget', 'waive', 'rewind'];

/** Asserts a failed parse and returns its error text. */
function errorOf(name: MessageName, payload: unknown): string {
  const r = parseMessage(name, payload);
  if (r.ok) throw new Error(`expected ${name} ${JSON.stringify(payload)?.slice(0, 80)} to be rejected`);
  return r.error;
}

/** Asserts a successful parse and returns the value. */
function valueOf(name: MessageName, payload: unknown): unknown {
  const r = parseMessage(name, payload);
  if (!r.ok) throw new Error(`expected ${name} to be accepted, got: ${r.error}`);
  return r.value;
}

describe('parseMessage: registry', () => {
  it('knows exactly pause, resume, stop, input, forceReview, budget, waive and rewind', () => {
    expect(Object.keys(MESSAGE_SCHEMAS).sort()).toEqual([...NAMES].sort());
  });

  it('the directive limit is 1 MiB', () => {
    expect(LIMITS.directiveBytes).toBe(MiB);
  });
});

describe('parseMessage: valid payloads', () => {
  it.each<[MessageName, unknown, unknown]>([
    ['pause', undefined, {}],
    ['pause', null, {}],
    ['pause', {}, {}],
    ['pause', { reason: 'lunch' }, { reason: 'lunch' }],
    ['pause', { reason: '', by: 'alice' }, { reason: '', by: 'alice' }],
    ['pause', { reason: 'r'.repeat(2000) }, { reason: 'r'.repeat(2000) }],
    ['resume', undefined, {}],
    ['resume', null, {}],
    ['resume', { by: 'bob' }, { by: 'bob' }],
    ['stop', undefined, {}],
    ['stop', null, {}],
    ['stop', { now: true }, { now: true }],
    ['stop', { now: false, reason: 'done for today', by: 'ops' }, { now: false, reason: 'done for today', by: 'ops' }],
    ['input', { directive: 'use pnpm' }, { directive: 'use pnpm' }],
    ['input', { directive: 'use pnpm', by: 'carol' }, { directive: 'use pnpm', by: 'carol' }],
    ['input', { directive: '  keep surrounding space  ' }, { directive: '  keep surrounding space  ' }],
    ['rewind', { to: 4 }, { to: 4 }],
    [
      'rewind',
      { to: 12, reason: 'the ORM was a mistake', directive: 'try it without the ORM', force: true, by: 'dana' },
      { to: 12, reason: 'the ORM was a mistake', directive: 'try it without the ORM', force: true, by: 'dana' },
    ],
  ])('%s %j', (name, payload, expected) => {
    expect(parseMessage(name, payload)).toEqual({ ok: true, value: expected });
  });

  it('trims the actor name', () => {
    expect(valueOf('pause', { by: '  alice  ' })).toEqual({ by: 'alice' });
    expect(valueOf('input', { directive: 'x', by: '\tbob\n' })).toEqual({ directive: 'x', by: 'bob' });
  });

  it('accepts an actor of exactly 200 characters (after trimming)', () => {
    expect(valueOf('resume', { by: 'a'.repeat(200) })).toEqual({ by: 'a'.repeat(200) });
    expect(valueOf('resume', { by: `  ${'a'.repeat(200)}  ` })).toEqual({ by: 'a'.repeat(200) });
  });
});

describe('parseMessage: wrong types name the field', () => {
  it.each<[MessageName, Record<string, unknown>, string]>([
    ['pause', { reason: 5 }, 'reason'],
    ['pause', { by: 7 }, 'by'],
    ['pause', { reason: null }, 'reason'],
    ['resume', { by: true }, 'by'],
    ['stop', { reason: ['a'] }, 'reason'],
    ['stop', { now: 'yes' }, 'now'],
    ['stop', { now: 1 }, 'now'],
    ['stop', { now: null }, 'now'],
    ['input', { directive: 5 }, 'directive'],
    ['input', { directive: 'ok', by: {} }, 'by'],
    ['rewind', {}, 'to'],
    ['rewind', { to: 0 }, 'to'],
    ['rewind', { to: 2.5 }, 'to'],
    ['rewind', { to: '4' }, 'to'],
    ['rewind', { to: 4, directive: '   ' }, 'directive'],
    ['rewind', { to: 4, force: 'yes' }, 'force'],
  ])('%s %j -> error names "%s"', (name, payload, field) => {
    const error = errorOf(name, payload);
    expect(error.startsWith(`${name}: `)).toBe(true);
    expect(error).toContain(`"${field}"`);
  });

  it('says what was expected and what was received', () => {
    expect(errorOf('pause', { reason: 5 })).toBe('pause: field "reason": Invalid input: expected string, received number');
    expect(errorOf('stop', { now: 'yes' })).toMatch(/field "now": .*expected boolean/);
  });

  it.each<[MessageName, unknown]>([
    ['pause', 'hello'],
    ['resume', 42],
    ['stop', true],
    ['stop', ['now']],
  ])('%s with a non-object payload %j is rejected', (name, payload) => {
    expect(errorOf(name, payload)).toMatch(new RegExp(`^${name}: .*expected object`));
  });

  it('reports every bad field at once', () => {
    const error = errorOf('stop', { reason: 1, now: 'x' });
    expect(error).toContain('"reason"');
    expect(error).toContain('"now"');
  });
});

describe('parseMessage: unknown fields', () => {
  it.each<[MessageName, Record<string, unknown>, string]>([
    ['pause', { reason: 'x', force: true }, 'force'],
    ['resume', { reason: 'resume has no reason' }, 'reason'],
    ['resume', { now: true }, 'now'],
    ['stop', { immediately: true }, 'immediately'],
    ['input', { directive: 'x', text: 'y' }, 'text'],
    ['pause', { Reason: 'case matters' }, 'Reason'],
  ])('%s rejects %j naming "%s"', (name, payload, field) => {
    const error = errorOf(name, payload);
    expect(error).toContain('unknown field(s)');
    expect(error).toContain(`"${field}"`);
  });

  it('lists several unknown fields and a bad known one together', () => {
    const error = errorOf('pause', { foo: 1, bar: 2, reason: 3 });
    expect(error).toContain('unknown field(s) "foo", "bar"');
    expect(error).toContain('field "reason"');
  });
});

describe('parseMessage: by (actor)', () => {
  it.each(NAMES)('%s rejects an empty by', (name) => {
    const payload = name === 'input' ? { directive: 'x', by: '' } : { by: '' };
    expect(errorOf(name, payload)).toContain('"by"');
  });

  it.each(['   ', '\t\n'])('rejects a whitespace-only by %j', (by) => {
    expect(errorOf('pause', { by })).toContain('"by"');
  });

  it.each(NAMES)('%s rejects a by longer than 200 characters', (name) => {
    const by = 'b'.repeat(201);
    const payload = name === 'input' ? { directive: 'x', by } : { by };
    expect(errorOf(name, payload)).toContain('"by"');
  });
});

describe('parseMessage: pause/stop reason', () => {
  it('rejects a reason over 2000 characters', () => {
    expect(errorOf('pause', { reason: 'r'.repeat(2001) })).toContain('"reason"');
    expect(errorOf('stop', { reason: 'r'.repeat(2001) })).toContain('"reason"');
  });
});

describe('parseMessage: input directive', () => {
  it.each([undefined, null, {}])('requires a directive (payload %j)', (payload) => {
    expect(errorOf('input', payload)).toContain('"directive"');
  });

  it.each(['', ' ', '   ', '\n', '\t \r\n', '\u00a0\u2003'])('rejects an empty or whitespace-only directive %j', (directive) => {
    expect(errorOf('input', { directive })).toBe('input: field "directive": must not be empty');
  });

  it('accepts a directive of exactly 1 MiB', () => {
    const directive = 'a'.repeat(MiB);
    const r = parseMessage('input', { directive });
    expect(r.ok).toBe(true);
    expect(r.ok && r.value.directive.length).toBe(MiB);
  });

  it('rejects a directive of 1 MiB + 1 byte, naming the field and the limit', () => {
    const error = errorOf('input', { directive: 'a'.repeat(MiB + 1) });
    expect(error).toContain('"directive"');
    expect(error).toContain('1 MiB');
    expect(error).toContain(String(MiB));
  });

  // [label, unit, bytes per unit (as UTF-8)]
  it.each<[string, string, number]>([
    ['é (2 bytes)', 'é', 2],
    ['€ (3 bytes)', '€', 3],
    ['😀 (4 bytes, surrogate pair)', '😀', 4],
  ])('counts %s by its UTF-8 byte length', (_label, unit, unitBytes) => {
    expect(Buffer.byteLength(unit, 'utf8')).toBe(unitBytes);
    const count = Math.floor(MiB / unitBytes);
    const pad = 'a'.repeat(MiB - count * unitBytes);
    const exact = unit.repeat(count) + pad;
    expect(Buffer.byteLength(exact, 'utf8')).toBe(MiB);
    // Far fewer UTF-16 code units than 1 MiB, yet exactly 1 MiB of UTF-8: accepted.
    expect(exact.length).toBeLessThan(MiB);
    expect(parseMessage('input', { directive: exact }).ok).toBe(true);
    // One more byte: rejected.
    expect(errorOf('input', { directive: `${exact}a` })).toContain('1 MiB');
    // One more multibyte unit: rejected.
    expect(parseMessage('input', { directive: exact + unit }).ok).toBe(false);
  });

  it("counts 'é' as 2 bytes: 524,288 of them are 1 MiB, one more is too much", () => {
    expect(parseMessage('input', { directive: 'é'.repeat(MiB / 2) }).ok).toBe(true);
    expect(parseMessage('input', { directive: 'é'.repeat(MiB / 2 + 1) }).ok).toBe(false);
  });

  it('counts a decomposed accent (e + U+0301) as 1 + 2 bytes', () => {
    const unit = 'e\u0301';
    expect(parseMessage('input', { directive: unit.repeat(MiB / 4) + 'a'.repeat(MiB / 4) }).ok).toBe(true);
    expect(parseMessage('input', { directive: unit.repeat(MiB / 4) + 'a'.repeat(MiB / 4 + 1) }).ok).toBe(false);
  });
});

describe('directive byte limit with malformed UTF-16', () => {
  it('counts a lone surrogate as the 3 bytes of U+FFFD, like the encoder', () => {
    const lone = '\uD800'.repeat(349_526); // 1,048,578 bytes when encoded
    expect(Buffer.byteLength(lone)).toBeGreaterThan(1024 * 1024);
    expect(parseMessage('input', { directive: lone }).ok).toBe(false);
    expect(parseMessage('input', { directive: '\uD800'.repeat(349_525) }).ok).toBe(true);
  });
});

describe('budget payload', () => {
  it('takes a non-negative amount of dollars and names a bad field', () => {
    expect(parseMessage('budget', { usd: 12.5, by: 'ops' })).toEqual({ ok: true, value: { usd: 12.5, by: 'ops' } });
    const bad = parseMessage('budget', { usd: -1 });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^budget: field "usd"/);
    expect(parseMessage('budget', {}).ok).toBe(false);
  });
});

describe('waive payload', () => {
  it('takes a checklist item id (or a held-out label) and names a bad field', () => {
    expect(parseMessage('waive', { item: 'REQ-3', reason: 'next release', by: 'ana' })).toEqual({
      ok: true,
      value: { item: 'REQ-3', reason: 'next release', by: 'ana' },
    });
    expect(parseMessage('waive', { item: 'held-out-1' }).ok).toBe(true);
    for (const payload of [{}, { item: '' }, { item: 'x'.repeat(65) }, { item: 3 }, { item: 'REQ-1', extra: true }]) {
      const r = parseMessage('waive', payload);
      expect(r.ok, JSON.stringify(payload)).toBe(false);
      expect(!r.ok && r.error).toMatch(/^waive: /);
    }
  });
});
