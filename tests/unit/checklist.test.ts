/**
 * Owns the unit tests of the PRD checklist (spec §2.12): the pure-JS SHA-256
 * (rules/sha256.ts) against node:crypto, and rules/checklist/:
 * held-out count and selection, reading the extraction agent's answer and a person's checklist
 * file, reading the verifier's answer, the completion block rule with waivers, the masked status
 * view, the builder's checklist text and the two prompts.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ChecklistSchema,
  ChecklistStateSchema,
  MAX_CHECKLIST_ITEMS,
  type ChecklistItem,
  type ChecklistState,
} from '../../schemas/gates.js';
import { parseChecklistOutput, type ChecklistParseResult } from '../../rules/checklist/extraction.js';
import { parseChecklistFile } from '../../rules/checklist/file.js';
import { heldOutCount, selectHeldOut } from '../../rules/checklist/held-out.js';
import {
  afterChecklistFailure,
  CHECKLIST_ATTEMPTS,
  checklistExtractionPrompt,
  checklistVerifierPrompt,
} from '../../rules/checklist/prompts.js';
import {
  builderChecklist,
  checklistBlock,
  HELD_OUT_BUILDER_REASON,
  HELD_OUT_TITLE,
  maskedChecklist,
  waive,
} from '../../rules/checklist/state.js';
import { parseVerifierOutput } from '../../rules/checklist/verifier.js';
import { sha256Hex } from '../../rules/sha256.js';

const nodeSha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

const item = (id: string, title: string, priority: ChecklistItem['priority'] = 'medium', verify = ''): ChecklistItem => ({
  id,
  title,
  priority,
  verify,
});

/** The items of an ok result; fails the test otherwise. */
function itemsOf(r: ChecklistParseResult): ChecklistItem[] {
  if (!r.ok) throw new Error(`expected ok, got error: ${r.error}`);
  return r.items;
}
function errorOf(r: ChecklistParseResult): string {
  if (r.ok) throw new Error(`expected an error, got ${r.items.length} items`);
  return r.error;
}

/** Deterministic shuffle (LCG). */
function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const out = [...xs];
  let s = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// SHA-256
// ---------------------------------------------------------------------------------------------

describe('sha256Hex', () => {
  it('matches the FIPS test vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it.each(['', 'a', 'abc', 'The quick brown fox jumps over the lazy dog', 'REQ-1', 'line\nbreak\r\n\ttab', '\u0000nul'])(
    'matches node:crypto for ASCII %j',
    (s) => {
      expect(sha256Hex(s)).toBe(nodeSha(s));
    },
  );

  const utf8 = [
    'café',
    'naïve résumé',
    'Ångström',
    'ß€',
    '日本語のテキスト',
    '😀',
    '👩‍💻 done 🎉',
    'mixed é😀x\u07ff\u0800\uffff',
    '\u{10ffff}',
  ];
  it.each(utf8)('matches node:crypto for UTF-8 %j', (s) => {
    expect(sha256Hex(s)).toBe(nodeSha(s));
  });

  it('encodes lone surrogates as U+FFFD, like node', () => {
    for (const s of ['\ud800', 'a\udc00b', '\ud83d', 'x\ud83dy', '\udfff\ud800']) expect(sha256Hex(s)).toBe(nodeSha(s));
    expect(sha256Hex('\ud800')).toBe(sha256Hex('\ufffd'));
  });

  it.each([55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129])('matches node:crypto at the padding boundary of %i bytes', (n) => {
    const ascii = 'a'.repeat(n);
    expect(Buffer.byteLength(ascii)).toBe(n);
    expect(sha256Hex(ascii)).toBe(nodeSha(ascii));
    // The same byte length made of 2-byte and 3-byte characters.
    const two = 'é'.repeat(Math.floor(n / 2)) + 'a'.repeat(n % 2);
    expect(Buffer.byteLength(two)).toBe(n);
    expect(sha256Hex(two)).toBe(nodeSha(two));
    const three = '€'.repeat(Math.floor(n / 3)) + 'a'.repeat(n % 3);
    expect(Buffer.byteLength(three)).toBe(n);
    expect(sha256Hex(three)).toBe(nodeSha(three));
  });

  it('matches node:crypto on a 1 MB string', () => {
    let s = '';
    for (let i = 0; s.length < 1_048_576; i++) s += `${i.toString(36)} é😀 `;
    expect(sha256Hex(s)).toBe(nodeSha(s));
    const plain = 'x'.repeat(1_048_576);
    expect(sha256Hex(plain)).toBe(nodeSha(plain));
  });

  it('matches node:crypto on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => sha256Hex(s) === nodeSha(s)),
      { numRuns: 300, seed: 20_251_122 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Held-out selection
// ---------------------------------------------------------------------------------------------

describe('heldOutCount', () => {
  // clamp(round(0.25 n), 1, 5) for n >= 4, halves rounding up; nothing below 4.
  const EXPECTED = [0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5];
  it.each(EXPECTED.map((k, n) => [n, k] as const))('heldOutCount(%i) = %i', (n, k) => {
    expect(heldOutCount(n)).toBe(k);
  });

  it('never holds out more than 5, and 0 for nonsense counts', () => {
    expect(heldOutCount(60)).toBe(5);
    expect(heldOutCount(1000)).toBe(5);
    expect(heldOutCount(-3)).toBe(0);
    expect(heldOutCount(Number.NaN)).toBe(0);
    expect(heldOutCount(Number.POSITIVE_INFINITY)).toBe(0);
  });
});

describe('selectHeldOut', () => {
  const items = Array.from({ length: 20 }, (_, i) => item(`REQ-${i + 1}`, `Requirement ${i + 1}`));

  /** The reference selection, computed with node:crypto. */
  function reference(xs: readonly ChecklistItem[]): string[] {
    const ranked = xs
      .map((x) => ({ id: x.id, h: nodeSha(x.id) }))
      .sort((a, b) => (a.h === b.h ? (a.id < b.id ? -1 : 1) : a.h < b.h ? -1 : 1));
    const chosen = new Set(ranked.slice(0, heldOutCount(xs.length)).map((r) => r.id));
    return xs.filter((x) => chosen.has(x.id)).map((x) => x.id);
  }

  it('takes the ids with the lowest SHA-256, in checklist order', () => {
    const chosen = selectHeldOut(items);
    expect(chosen).toHaveLength(5);
    expect(chosen).toEqual(reference(items));
    const positions = chosen.map((id) => items.findIndex((x) => x.id === id));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it.each([0, 1, 2, 3, 4, 5, 6, 10, 13, 18, 60])('holds out heldOutCount(n) items for n = %i', (n) => {
    const xs = items.concat(Array.from({ length: 40 }, (_, i) => item(`X-${i}`, `x ${i}`))).slice(0, n);
    const chosen = selectHeldOut(xs);
    expect(chosen).toHaveLength(heldOutCount(n));
    expect(chosen).toEqual(reference(xs));
  });

  it('chooses the same items whatever the input order', () => {
    const expected = new Set(selectHeldOut(items));
    for (let seed = 1; seed <= 20; seed++) {
      const xs = shuffled(items, seed);
      const chosen = selectHeldOut(xs);
      expect(new Set(chosen)).toEqual(expected);
      // Returned in the order of the (shuffled) checklist.
      expect(chosen).toEqual(xs.filter((x) => expected.has(x.id)).map((x) => x.id));
    }
  });

  it('chooses the same items after a JSON round-trip of the state (continue-as-new)', () => {
    const state: ChecklistState = ChecklistStateSchema.parse({ items, heldOut: selectHeldOut(items), source: 'agent' });
    const restored = ChecklistStateSchema.parse(JSON.parse(JSON.stringify(state)));
    expect(restored.heldOut).toEqual(state.heldOut);
    expect(selectHeldOut(restored.items)).toEqual(state.heldOut);
  });

  it('counts a repeated id once', () => {
    const xs = [item('A-1', 'a'), item('A-1', 'a again'), item('B-1', 'b'), item('C-1', 'c')];
    expect(selectHeldOut(xs)).toEqual([]); // 3 distinct ids: nothing held out
  });
});

// ---------------------------------------------------------------------------------------------
// Reading the extraction agent's answer
// ---------------------------------------------------------------------------------------------

describe('parseChecklistOutput', () => {
  const three = [
    { id: 'REQ-1', title: 'Users can sign in with email', priority: 'critical', verify: 'npm test -- auth' },
    { id: 'REQ-2', title: 'Passwords are hashed', priority: 'high', verify: 'grep bcrypt src/' },
    { id: 'REQ-3', title: 'Dark mode', priority: 'low', verify: 'toggle in settings' },
  ];

  it('reads a fenced json block surrounded by prose', () => {
    const text = `I read the PRD. Here is the checklist:\n\n\`\`\`json\n${JSON.stringify(three, null, 2)}\n\`\`\`\n\nLet me know if [anything] is missing.`;
    const items = itemsOf(parseChecklistOutput(text));
    expect(items).toEqual(three);
    expect(ChecklistSchema.safeParse(items).success).toBe(true);
  });

  it('reads a bare array at the end of the answer, pretty-printed or on one line', () => {
    expect(itemsOf(parseChecklistOutput(`Thinking...\nDone.\n${JSON.stringify(three, null, 2)}\n`))).toEqual(three);
    expect(itemsOf(parseChecklistOutput(`Result: ${JSON.stringify(three)}`))).toEqual(three);
    expect(itemsOf(parseChecklistOutput(JSON.stringify(three)))).toEqual(three);
  });

  it('reads the checklist wrapped in an object', () => {
    expect(itemsOf(parseChecklistOutput(JSON.stringify({ items: three })))).toEqual(three);
    expect(itemsOf(parseChecklistOutput(`ok\n${JSON.stringify({ checklist: three }, null, 2)}`))).toEqual(three);
  });

  it('takes the last checklist in the text, ignoring trailing prose with brackets', () => {
    const example = JSON.stringify([{ id: 'EX-1', title: 'an example' }]);
    const text = `The format is ${example}.\nMy answer:\n${JSON.stringify(three, null, 2)}\nNotes: see [1] and {braces} and [x] done.`;
    expect(itemsOf(parseChecklistOutput(text)).map((i) => i.id)).toEqual(['REQ-1', 'REQ-2', 'REQ-3']);
  });

  it('is not confused by brackets and quotes inside strings or stray quotes in prose', () => {
    const tricky = [{ id: 'REQ-1', title: 'Handles "[" and "}" in names', verify: 'a "quoted" ] value {' }];
    const text = `He said "hello\n${JSON.stringify(tricky)}`;
    expect(itemsOf(parseChecklistOutput(text))).toEqual([
      { id: 'REQ-1', title: 'Handles "[" and "}" in names', priority: 'medium', verify: 'a "quoted" ] value {' },
    ]);
  });

  it('accepts the verify aliases', () => {
    const text = JSON.stringify([
      { id: 'A-1', title: 'a', how_to_verify: 'one' },
      { id: 'A-2', title: 'b', verification: 'two' },
      { id: 'A-3', title: 'c', howToVerify: 'three' },
      { id: 'A-4', title: 'd' },
    ]);
    expect(itemsOf(parseChecklistOutput(text)).map((i) => i.verify)).toEqual(['one', 'two', 'three', '']);
  });

  it('maps priorities, MoSCoW words included, any case; unknown or missing is medium', () => {
    const ps = ['critical', 'HIGH', 'Medium', 'low', 'MUST', 'should', 'Could', 'must-have', 'urgent', undefined, 42];
    const text = JSON.stringify(ps.map((p, i) => ({ id: `P-${i}`, title: `t${i}`, priority: p })));
    expect(itemsOf(parseChecklistOutput(text)).map((i) => i.priority)).toEqual([
      'critical',
      'high',
      'medium',
      'low',
      'high',
      'medium',
      'low',
      'high',
      'medium',
      'medium',
      'medium',
    ]);
  });

  it('generates missing ids, suffixes duplicates and sanitizes invalid ids', () => {
    const text = JSON.stringify([
      { title: 'no id' },
      { id: 'DUP', title: 'first' },
      { id: 'DUP', title: 'second' },
      { id: 'DUP', title: 'third' },
      { id: 'REQ 7', title: 'space in id' },
      { id: '#1 login!', title: 'symbols' },
      { id: '!!!', title: 'nothing usable' },
      { id: 12, title: 'numeric id' },
      { id: 'x'.repeat(100), title: 'long id' },
      'a bare string is a title',
    ]);
    const r = parseChecklistOutput(text);
    const items = itemsOf(r);
    expect(items.map((i) => i.id)).toEqual([
      'REQ-1',
      'DUP',
      'DUP-2',
      'DUP-3',
      'REQ-7',
      '1-login',
      'REQ-7-2',
      '12',
      'x'.repeat(64),
      'REQ-10',
    ]);
    expect(items[9]?.title).toBe('a bare string is a title');
    expect(ChecklistSchema.safeParse(items).success).toBe(true);
  });

  it('does not let a generated id take an id the agent gave a later item', () => {
    const items = itemsOf(parseChecklistOutput(JSON.stringify([{ title: 'first, no id' }, { id: 'REQ-1', title: 'explicit' }])));
    expect(items.map((i) => i.id)).toEqual(['REQ-1-2', 'REQ-1']);
  });

  it('cuts titles to 300 characters and verify texts to 500, on one line', () => {
    const items = itemsOf(
      parseChecklistOutput(
        JSON.stringify([{ id: 'L-1', title: `${'t'.repeat(400)}`, verify: `line one\n\n   line two ${'v'.repeat(700)}` }]),
      ),
    );
    expect(items[0]?.title).toHaveLength(300);
    expect(items[0]?.verify).toHaveLength(500);
    expect(items[0]?.verify.startsWith('line one line two vvv')).toBe(true);
    expect(items[0]?.verify).not.toContain('\n');
  });

  it('keeps the first 60 items and lists the rest as dropped', () => {
    const many = Array.from({ length: 75 }, (_, i) => ({ id: `REQ-${i + 1}`, title: `Requirement ${i + 1}` }));
    const r = parseChecklistOutput(JSON.stringify(many));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.items).toHaveLength(MAX_CHECKLIST_ITEMS);
    expect(r.items[59]?.id).toBe('REQ-60');
    expect(r.dropped).toEqual(Array.from({ length: 15 }, (_, i) => `REQ-${i + 61}`));
    expect(ChecklistSchema.safeParse(r.items).success).toBe(true);
  });

  it('drops entries without a title and says so', () => {
    const r = parseChecklistOutput(JSON.stringify([{ id: 'A-1', title: 'ok' }, { id: 'A-2' }, 7, { id: 'A-3', title: '   ' }]));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.items.map((i) => i.id)).toEqual(['A-1']);
    expect(r.dropped).toEqual(['entry 2: no title', 'entry 3: not an object', 'entry 4: no title']);
  });

  it.each([
    ['empty text', ''],
    ['prose only', 'I could not find a PRD at that path, sorry.'],
    ['an empty array', 'Here: []'],
    ['an empty wrapped list', '{"items": []}'],
    ['numbers', '[1, 2, 3]'],
    ['an object without items', '{"status": "done"}'],
    ['broken JSON', '[{"id": "REQ-1", "title": "x",}'],
    ['items without titles', '[{"id": "REQ-1"}, {"id": "REQ-2", "priority": "high"}]'],
  ])('refuses %s with a clear message', (_name, text) => {
    const error = errorOf(parseChecklistOutput(text));
    expect(error).toMatch(/checklist/);
    expect(error.length).toBeGreaterThan(20);
  });

  it.each([
    ['[', '['.repeat(1_048_576)],
    ['{', '{'.repeat(1_048_576)],
    ['[{"', '[{"'.repeat(350_000)],
    ['lines of [', '[\n'.repeat(524_288)],
    ['{"items":[', '{"items":['.repeat(105_000)],
    ['[]]', '[]]'.repeat(350_000)],
  ])('answers 1 MB of adversarial %j in under a second', (_name, text) => {
    const t0 = performance.now();
    const r = parseChecklistOutput(text);
    expect(performance.now() - t0).toBeLessThan(4000);
    expect(r.ok).toBe(false);
  });

  it('still finds a checklist after 1 MB of unbalanced brackets', () => {
    const text = `${'['.repeat(1_000_000)}\n${JSON.stringify(three, null, 2)}`;
    const t0 = performance.now();
    expect(itemsOf(parseChecklistOutput(text))).toEqual(three);
    expect(performance.now() - t0).toBeLessThan(4000);
  });

  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 500 }), (s) => {
        const r = parseChecklistOutput(s);
        return r.ok ? ChecklistSchema.safeParse(r.items).success : r.error.length > 0;
      }),
      { numRuns: 300, seed: 20_251_122 },
    );
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 8 }), (xs) => {
        const r = parseChecklistOutput(JSON.stringify(xs));
        return r.ok ? ChecklistSchema.safeParse(r.items).success : r.error.length > 0;
      }),
      { numRuns: 300, seed: 20_251_122 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// A person's checklist file
// ---------------------------------------------------------------------------------------------

describe('parseChecklistFile', () => {
  it('reads a JSON array and a JSON {items} file', () => {
    const arr = [
      { id: 'AUTH-1', title: 'Sign in', priority: 'critical', verify: 'e2e test' },
      { title: 'Sign out', priority: 'should' },
    ];
    expect(itemsOf(parseChecklistFile(JSON.stringify(arr, null, 2), 'checklist.json'))).toEqual([
      { id: 'AUTH-1', title: 'Sign in', priority: 'critical', verify: 'e2e test' },
      { id: 'REQ-2', title: 'Sign out', priority: 'medium', verify: '' },
    ]);
    expect(itemsOf(parseChecklistFile(`\ufeff${JSON.stringify({ items: arr })}`, 'c.json')).map((i) => i.id)).toEqual(['AUTH-1', 'REQ-2']);
  });

  it('names the file and line of a JSON syntax error', () => {
    const text = '[\n  {"id": "A-1", "title": "a"},\n  {"id": "A-2" "title": "b"}\n]';
    expect(errorOf(parseChecklistFile(text, 'reqs.json'))).toMatch(/^reqs\.json:3: not valid JSON/);
  });

  it.each([
    ['an entry without a title', [{ id: 'A-1', title: 'a' }, { id: 'A-2' }], /^f\.json: entry 2: no title/],
    ['an invalid id', [{ id: 'A 1', title: 'a' }], /^f\.json: entry 1: id "A 1" is not valid/],
    [
      'a duplicate id',
      [
        { id: 'A-1', title: 'a' },
        { id: 'A-1', title: 'b' },
      ],
      /^f\.json: entry 2: duplicate id A-1 \(also entry 1\)/,
    ],
    ['an unknown priority', [{ id: 'A-1', title: 'a', priority: 'urgent' }], /^f\.json: entry 1: unknown priority "urgent"/],
    ['an empty list', [], /^f\.json: the checklist is empty/],
    ['too many items', Array.from({ length: 61 }, (_, i) => ({ title: `t${i}` })), /^f\.json: 61 items; a checklist has at most 60/],
  ])('refuses a JSON file with %s', (_name, value, message) => {
    expect(errorOf(parseChecklistFile(JSON.stringify(value), 'f.json'))).toMatch(message);
  });

  it('reads Markdown checklists', () => {
    const md = [
      '# Checklist',
      '',
      'Requirements for the first release.',
      '',
      '- [ ] REQ-1 (critical): Users can sign in — run `npm test -- auth`',
      '- [x] REQ-2 [high] Passwords are hashed with bcrypt -- grep bcrypt src/',
      '  - nested detail lines are not items',
      '* [critical] AUTH-3: Sessions expire after 30 minutes',
      '- Plain bullet becomes an item',
      '1. Numbered items work too',
      '- **REQ-9** (Must): bold ids are read',
      '- v2 API responds with JSON',
      '```',
      '- not an item: inside a code block',
      '```',
      '---',
    ].join('\n');
    expect(itemsOf(parseChecklistFile(md, 'CHECKLIST.md'))).toEqual([
      { id: 'REQ-1', title: 'Users can sign in', priority: 'critical', verify: 'run `npm test -- auth`' },
      { id: 'REQ-2', title: 'Passwords are hashed with bcrypt', priority: 'high', verify: 'grep bcrypt src/' },
      { id: 'AUTH-3', title: 'Sessions expire after 30 minutes', priority: 'critical', verify: '' },
      { id: 'REQ-4', title: 'Plain bullet becomes an item', priority: 'medium', verify: '' },
      { id: 'REQ-5', title: 'Numbered items work too', priority: 'medium', verify: '' },
      { id: 'REQ-9', title: 'bold ids are read', priority: 'high', verify: '' },
      { id: 'REQ-7', title: 'v2 API responds with JSON', priority: 'medium', verify: '' },
    ]);
  });

  it('reads CRLF Markdown', () => {
    expect(itemsOf(parseChecklistFile('- REQ-1 (low): one\r\n- REQ-2: two\r\n', 'w.md'))).toEqual([
      item('REQ-1', 'one', 'low'),
      item('REQ-2', 'two'),
    ]);
  });

  it.each([
    ['an unknown priority', '- REQ-1 (high): ok\n- REQ-2 (urgent): bad', /^plan\.md:2: unknown priority "urgent"/],
    ['a duplicate id', '- REQ-1: a\n\n- REQ-2: b\n- REQ-1: c', /^plan\.md:4: duplicate id REQ-1 \(first on line 1\)/],
    ['an item without a title', '- REQ-1: a\n- [ ] REQ-2 (high):', /^plan\.md:2: checklist item without a title/],
    ['an empty bullet', 'intro\n- ', /^plan\.md:2: checklist item without a title/],
    ['no items', '# Title\n\nJust prose.\n', /^plan\.md: no checklist items found/],
    ['too many items', Array.from({ length: 61 }, (_, i) => `- item ${i}`).join('\n'), /^plan\.md:61: more than 60 checklist items/],
  ])('refuses Markdown with %s, naming the file and line', (_name, text, message) => {
    expect(errorOf(parseChecklistFile(text, 'plan.md'))).toMatch(message);
  });

  it('refuses a file over 1 MiB', () => {
    expect(errorOf(parseChecklistFile(`- ${'x'.repeat(1_048_577)}`, 'big.md'))).toMatch(/^big\.md: larger than/);
  });
});

// ---------------------------------------------------------------------------------------------
// Reading the verifier's answer
// ---------------------------------------------------------------------------------------------

describe('parseVerifierOutput', () => {
  const ids = ['REQ-1', 'REQ-2', 'REQ-3', 'REQ-4', 'REQ-5', 'REQ-6', 'REQ-7', 'REQ-8', 'REQ-9', 'REQ-10'];

  it('reads the line variants', () => {
    const text = [
      'I checked everything.',
      'ITEM REQ-1: PASS - tests/auth.test.ts covers sign-in',
      'ITEM REQ-2: FAIL — passwords stored in plain text (src/db.ts:40)',
      '**ITEM REQ-3:** PASSING: docs/api.md lists every endpoint',
      'ITEM REQ-4: ✓ the button exists',
      'ITEM REQ-5: ✗ - no rate limit found',
      'ITEM REQ-6: OK',
      '- ITEM REQ-7: FAILED: crashes on empty input',
      'REQ-8: PASSED - without the ITEM prefix',
      'item req-9: pass - case-insensitive',
      '3. ITEM `REQ-10`: ❌ - numbered, code-formatted id',
    ].join('\n');
    expect(parseVerifierOutput(text, ids)).toEqual({
      'REQ-1': { status: 'passing', evidence: 'tests/auth.test.ts covers sign-in' },
      'REQ-2': { status: 'failing', evidence: 'passwords stored in plain text (src/db.ts:40)' },
      'REQ-3': { status: 'passing', evidence: 'docs/api.md lists every endpoint' },
      'REQ-4': { status: 'passing', evidence: 'the button exists' },
      'REQ-5': { status: 'failing', evidence: 'no rate limit found' },
      'REQ-6': { status: 'passing', evidence: '' },
      'REQ-7': { status: 'failing', evidence: 'crashes on empty input' },
      'REQ-8': { status: 'passing', evidence: 'without the ITEM prefix' },
      'REQ-9': { status: 'passing', evidence: 'case-insensitive' },
      'REQ-10': { status: 'failing', evidence: 'numbered, code-formatted id' },
    });
  });

  it('ignores unknown ids, prose and words that only start like a status', () => {
    const text = [
      'ITEM REQ-99: PASS - not on the checklist',
      'REQ-1 failing tests were fixed earlier',
      'ITEM REQ-2: PASSWORD reset is missing',
      'ITEM REQ-3 maybe',
    ].join('\n');
    expect(parseVerifierOutput(text, ids)).toEqual({});
  });

  it('lets the last answer for an id win', () => {
    const text = 'ITEM REQ-1: FAIL - first look\nITEM REQ-2: PASS - fine\nITEM REQ-1: PASS - after a second look';
    expect(parseVerifierOutput(text, ids)).toEqual({
      'REQ-1': { status: 'passing', evidence: 'after a second look' },
      'REQ-2': { status: 'passing', evidence: 'fine' },
    });
  });

  it('cuts evidence to 300 characters', () => {
    const r = parseVerifierOutput(`ITEM REQ-1: FAIL - ${'e'.repeat(1000)}`, ids);
    expect(r['REQ-1']?.status).toBe('failing');
    expect(r['REQ-1']?.evidence).toHaveLength(300);
  });

  it('reads a JSON array, bare or fenced, and a wrapped one', () => {
    const arr = [
      { id: 'REQ-1', status: 'PASS', evidence: 'ok' },
      { id: 'REQ-2', status: 'failing', evidence: 'broken' },
      { id: 'REQ-3', status: true },
      { id: 'NOPE', status: 'PASS' },
      { id: 'REQ-4', status: 'unknown' },
    ];
    const expected = {
      'REQ-1': { status: 'passing', evidence: 'ok' },
      'REQ-2': { status: 'failing', evidence: 'broken' },
      'REQ-3': { status: 'passing', evidence: '' },
    };
    expect(parseVerifierOutput(JSON.stringify(arr), ids)).toEqual(expected);
    expect(parseVerifierOutput(`Results:\n\`\`\`json\n${JSON.stringify(arr, null, 2)}\n\`\`\``, ids)).toEqual(expected);
    expect(parseVerifierOutput(JSON.stringify({ results: arr }), ids)).toEqual(expected);
  });

  it('orders JSON and line answers by their place in the text', () => {
    const text = `ITEM REQ-1: FAIL - early line\n${JSON.stringify([
      { id: 'REQ-1', status: 'PASS', evidence: 'json' },
      { id: 'REQ-2', status: 'PASS' },
    ])}\nITEM REQ-2: FAIL - late line`;
    expect(parseVerifierOutput(text, ids)).toEqual({
      'REQ-1': { status: 'passing', evidence: 'json' },
      'REQ-2': { status: 'failing', evidence: 'late line' },
    });
  });

  it('answers adversarial input quickly and never throws', () => {
    for (const text of [
      '['.repeat(1_048_576),
      'ITEM '.repeat(200_000),
      `ITEM REQ-1: PASS - ${'-'.repeat(1_000_000)}`,
      'REQ-1:'.repeat(170_000),
    ]) {
      const t0 = performance.now();
      const r = parseVerifierOutput(text, ids);
      expect(performance.now() - t0).toBeLessThan(4000);
      expect(Object.keys(r).every((k) => ids.includes(k))).toBe(true);
    }
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (s) =>
        Object.keys(parseVerifierOutput(s, ids)).every((k) => ids.includes(k)),
      ),
      { numRuns: 300, seed: 20_251_122 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Completion block, waivers, views
// ---------------------------------------------------------------------------------------------

const SECRET_A = 'Exports are signed with the tenant key';
const SECRET_B = 'Audit log survives a restart';

/** Six items; REQ-3 and REQ-5 held out. */
function baseState(status: ChecklistState['status'] = {}, waivers: ChecklistState['waivers'] = []): ChecklistState {
  return ChecklistStateSchema.parse({
    items: [
      item('REQ-1', 'Users can sign in', 'critical', 'e2e'),
      item('REQ-2', 'Passwords are hashed', 'high'),
      item('REQ-3', SECRET_A, 'critical'),
      item('REQ-4', 'Dark mode', 'low'),
      item('REQ-5', SECRET_B, 'medium'),
      item('REQ-6', 'Sessions expire', 'critical'),
    ],
    heldOut: ['REQ-5', 'REQ-3'],
    source: 'agent',
    status,
    waivers,
  });
}
const pass = (evidence = 'seen') => ({ status: 'passing' as const, evidence, iteration: 3 });
const fail = (evidence = 'broken') => ({ status: 'failing' as const, evidence, iteration: 3 });
const allPassing = { 'REQ-1': pass(), 'REQ-2': pass(), 'REQ-3': pass(), 'REQ-4': pass(), 'REQ-5': pass(), 'REQ-6': pass() };

describe('checklistBlock', () => {
  it('does not block when every item passes', () => {
    expect(checklistBlock(baseState(allPassing))).toEqual({ blocked: false, reasons: [], builderReasons: [] });
  });

  it('blocks on a failing visible critical item, naming its id, title and evidence', () => {
    const r = checklistBlock(baseState({ ...allPassing, 'REQ-1': fail('no sign-in form') }));
    const line = 'critical item REQ-1 is failing: Users can sign in (no sign-in form)';
    expect(r).toEqual({ blocked: true, reasons: [line], builderReasons: [line] });
  });

  it('does not block on failing non-critical or unverified visible items', () => {
    const { 'REQ-1': _1, 'REQ-6': _6, ...rest } = allPassing;
    expect(checklistBlock(baseState({ ...rest, 'REQ-2': fail(), 'REQ-4': fail() }))).toEqual({
      blocked: false,
      reasons: [],
      builderReasons: [],
    });
  });

  it('blocks on a failing held-out item without naming it', () => {
    const r = checklistBlock(baseState({ ...allPassing, 'REQ-5': fail('log is in memory') }));
    expect(r).toEqual({ blocked: true, reasons: ['held-out item 2 failed verification'], builderReasons: [HELD_OUT_BUILDER_REASON] });
  });

  it('blocks on held-out items never verified (fail-closed)', () => {
    const r = checklistBlock(baseState({ 'REQ-1': pass(), 'REQ-6': pass() }));
    // The builder is told once, without a count, whatever the number of held-out items.
    expect(r).toEqual({
      blocked: true,
      reasons: ['held-out item 1 has not been verified', 'held-out item 2 has not been verified'],
      builderReasons: [HELD_OUT_BUILDER_REASON],
    });
    expect(HELD_OUT_BUILDER_REASON).not.toMatch(/held.out|\d/i);
  });

  it('never puts a held-out title, id or evidence in the reasons', () => {
    const states = [
      baseState(),
      baseState({ 'REQ-3': fail('secret evidence'), 'REQ-5': fail('secret evidence'), 'REQ-1': fail(), 'REQ-6': fail() }),
    ];
    for (const s of states) {
      const text = checklistBlock(s).reasons.join('\n');
      expect(text).toContain('held-out item');
      for (const hidden of [SECRET_A, SECRET_B, 'REQ-3', 'REQ-5', 'secret evidence']) expect(text).not.toContain(hidden);
    }
  });

  it('lets waivers clear both kinds of block, by id or by mask label', () => {
    const failing = { ...allPassing, 'REQ-1': fail(), 'REQ-3': fail(), 'REQ-5': fail() };
    expect(checklistBlock(baseState(failing)).reasons).toHaveLength(3);
    const w = (itemRef: string) => ({ item: itemRef, by: 'ops', reason: 'accepted', at: '2026-01-01T00:00:00Z' });
    expect(checklistBlock(baseState(failing, [w('REQ-1'), w('REQ-3')])).reasons).toEqual(['held-out item 2 failed verification']);
    expect(checklistBlock(baseState(failing, [w('REQ-1'), w('held-out-1'), w('held-out-2')]))).toEqual({
      blocked: false,
      reasons: [],
      builderReasons: [],
    });
  });
});

describe('waive', () => {
  const at = '2026-01-02T03:04:05Z';

  it('records a waiver with the real id, leaving the old state alone', () => {
    const s = baseState({ 'REQ-1': fail() });
    const r = waive(s, 'REQ-1', 'alice', 'known flaky environment', at);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.state.waivers).toEqual([{ item: 'REQ-1', by: 'alice', reason: 'known flaky environment', at }]);
    expect(s.waivers).toEqual([]);
    expect(ChecklistStateSchema.safeParse(r.state).success).toBe(true);
    expect(checklistBlock(r.state).reasons.some((x) => x.includes('REQ-1'))).toBe(false);
  });

  it('accepts a held-out item by mask label or by real id', () => {
    const byLabel = waive(baseState(), 'held-out-2', 'bob', 'out of scope', at);
    expect(byLabel.ok && byLabel.state.waivers[0]?.item).toBe('REQ-5');
    const byId = waive(baseState(), 'REQ-3', 'bob', 'out of scope', at);
    expect(byId.ok && byId.state.waivers[0]?.item).toBe('REQ-3');
  });

  it('is a no-op for an item already waived, however it is named', () => {
    const first = waive(baseState(), 'held-out-1', 'bob', 'r', at);
    if (!first.ok) throw new Error(first.error);
    for (const ref of ['held-out-1', 'REQ-3']) {
      const again = waive(first.state, ref, 'carol', 'again', at);
      expect(again.ok).toBe(true);
      if (again.ok) expect(again.state).toBe(first.state);
    }
  });

  it('refuses an unknown item, saying how many items exist and naming no hidden ones', () => {
    for (const ref of ['REQ-99', 'held-out-3', '']) {
      const r = waive(baseState(), ref, 'bob', 'r', at);
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.error).toContain('the checklist has 6 items');
      expect(r.error).not.toContain(SECRET_A);
      expect(r.error).not.toContain('REQ-3');
    }
  });

  it('cuts who and why to the state limits', () => {
    const r = waive(baseState(), 'REQ-2', 'b'.repeat(300), 'r'.repeat(900), at);
    if (!r.ok) throw new Error(r.error);
    expect(r.state.waivers[0]?.by).toHaveLength(200);
    expect(r.state.waivers[0]?.reason).toHaveLength(500);
    expect(ChecklistStateSchema.safeParse(r.state).success).toBe(true);
  });
});

describe('maskedChecklist', () => {
  it('shows every item in order, held-out ones masked and numbered by appearance', () => {
    const s = baseState({ 'REQ-1': pass(), 'REQ-3': fail() }, [{ item: 'REQ-5', by: 'ops', reason: 'r', at: 'now' }]);
    expect(maskedChecklist(s)).toEqual([
      { id: 'REQ-1', title: 'Users can sign in', priority: 'critical', status: 'passing', waived: false, heldOut: false },
      { id: 'REQ-2', title: 'Passwords are hashed', priority: 'high', status: 'unverified', waived: false, heldOut: false },
      { id: 'held-out-1', title: HELD_OUT_TITLE, priority: 'critical', status: 'failing', waived: false, heldOut: true },
      { id: 'REQ-4', title: 'Dark mode', priority: 'low', status: 'unverified', waived: false, heldOut: false },
      { id: 'held-out-2', title: HELD_OUT_TITLE, priority: 'medium', status: 'unverified', waived: true, heldOut: true },
      { id: 'REQ-6', title: 'Sessions expire', priority: 'critical', status: 'unverified', waived: false, heldOut: false },
    ]);
    expect(HELD_OUT_TITLE).toBe('(held out: verified at completion)');
    const text = JSON.stringify(maskedChecklist(s));
    for (const hidden of [SECRET_A, SECRET_B, 'REQ-3', 'REQ-5']) expect(text).not.toContain(hidden);
  });
});

describe('builderChecklist', () => {
  const s = baseState({ 'REQ-1': pass(), 'REQ-2': fail('bcrypt not used'), 'REQ-3': fail('hidden'), 'REQ-5': pass() }, [
    { item: 'REQ-4', by: 'ops', reason: 'r', at: 'now' },
  ]);

  it('lists the visible items with their marks, and failing evidence', () => {
    expect(builderChecklist(s, 10_000)).toBe(
      [
        '- [x] REQ-1 (critical): Users can sign in',
        '- [!] REQ-2 (high): Passwords are hashed — failing: bcrypt not used',
        '- [ ] REQ-4 (low): Dark mode (waived)',
        '- [ ] REQ-6 (critical): Sessions expire',
      ].join('\n'),
    );
  });

  it('never mentions held-out items, their titles, ids or count', () => {
    for (const state of [s, baseState(), baseState(allPassing)]) {
      for (const max of [10_000, 120, 60]) {
        const text = builderChecklist(state, max);
        expect(text).not.toMatch(/held[- ]out/i);
        for (const hidden of [SECRET_A, SECRET_B, 'REQ-3', 'REQ-5', 'hidden']) expect(text).not.toContain(hidden);
      }
    }
  });

  it('respects maxChars, cutting at a line boundary with "… N more"', () => {
    const full = builderChecklist(s, 10_000);
    const fullLines = full.split('\n');
    for (let max = 0; max <= full.length + 5; max++) {
      const text = builderChecklist(s, max);
      expect(text.length).toBeLessThanOrEqual(max);
      if (max >= full.length) {
        expect(text).toBe(full);
        continue;
      }
      if (text === '') {
        expect(max).toBeLessThan('… 4 more'.length);
        continue;
      }
      const lines = text.split('\n');
      const shown = lines.length - 1;
      expect(lines[shown]).toBe(`… ${fullLines.length - shown} more`);
      expect(lines.slice(0, shown)).toEqual(fullLines.slice(0, shown));
    }
    expect(builderChecklist(s, 100)).toBe('- [x] REQ-1 (critical): Users can sign in\n… 3 more');
  });
});

// ---------------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------------

describe('checklistExtractionPrompt', () => {
  it('asks for only a JSON array of verifiable items from the PRD, without modifying files', () => {
    const p = checklistExtractionPrompt({ prdPath: 'docs/PRD.md', maxItems: 25 });
    expect(p).toContain('docs/PRD.md');
    expect(p).toContain('ONLY a JSON array');
    expect(p).toContain('Do not modify any file');
    expect(p).toContain('At most 25 items');
    expect(p).toContain('REQ-1');
    for (const w of ['critical', 'high', 'medium', 'low', '"verify"']) expect(p).toContain(w);
    expect(p).toMatch(/verifiable/);
  });

  it('keeps maxItems within 1..60', () => {
    expect(checklistExtractionPrompt({ prdPath: 'p', maxItems: 500 })).toContain('At most 60 items');
    expect(checklistExtractionPrompt({ prdPath: 'p', maxItems: 0 })).toContain('At most 1 item,');
  });

  it('asks for a format parseChecklistOutput reads', () => {
    const p = checklistExtractionPrompt({ prdPath: 'p', maxItems: 5 });
    const example = p.slice(p.lastIndexOf('\n') + 1);
    expect(itemsOf(parseChecklistOutput(example)).map((i) => i.id)).toEqual(['REQ-1']);
  });
});

describe('checklistVerifierPrompt', () => {
  const items = [item('REQ-1', 'Users can sign in', 'critical', 'run the e2e suite'), item('REQ-2', 'Dark mode', 'low')];

  it('lists every item, the PRD, the diff and the tests, and the answer format', () => {
    const p = checklistVerifierPrompt({
      items,
      prdPath: 'docs/PRD.md',
      diffPath: '.vigil/run/diff.patch',
      testSummary: '42 passed, 1 failed',
    });
    for (const s of [
      'REQ-1 (critical): Users can sign in',
      'How to verify: run the e2e suite',
      'REQ-2 (low): Dark mode',
      'docs/PRD.md',
      '.vigil/run/diff.patch',
      '42 passed, 1 failed',
      'ITEM <id>: PASS',
      'ITEM <id>: FAIL',
      'Do not modify any file',
      "repository's current state",
    ]) {
      expect(p).toContain(s);
    }
  });

  it('says when there is no diff or no test results', () => {
    const p = checklistVerifierPrompt({ items, prdPath: 'PRD.md', diffPath: null, testSummary: '  ' });
    expect(p).toContain('No diff');
    expect(p).toContain('no test results');
  });

  it('asks for lines parseVerifierOutput reads', () => {
    const answer = 'ITEM REQ-1: PASS - tests/e2e/signin.spec.ts passes\nITEM REQ-2: FAIL - no theme toggle';
    expect(
      parseVerifierOutput(
        answer,
        items.map((i) => i.id),
      ),
    ).toEqual({
      'REQ-1': { status: 'passing', evidence: 'tests/e2e/signin.spec.ts passes' },
      'REQ-2': { status: 'failing', evidence: 'no theme toggle' },
    });
  });
});

describe('a checklist extraction that failed', () => {
  it('is asked again after the provider’s wait, else the base wait times the attempt, up to three attempts', () => {
    expect(afterChecklistFailure({ attempt: 1, providerReason: 'rate limited', rateLimitWaitSeconds: 2, baseWaitSeconds: 30 })).toEqual({
      kind: 'retry',
      attempt: 1,
      waitSeconds: 2,
      reason: 'rate limited',
    });
    expect(
      afterChecklistFailure({ attempt: 2, providerReason: 'API failure: overloaded', rateLimitWaitSeconds: null, baseWaitSeconds: 30 }),
    ).toEqual({ kind: 'retry', attempt: 2, waitSeconds: 60, reason: 'API failure: overloaded' });
    expect(
      afterChecklistFailure({ attempt: CHECKLIST_ATTEMPTS, providerReason: 'rate limited', rateLimitWaitSeconds: 2, baseWaitSeconds: 30 }),
    ).toEqual({ kind: 'give_up', attempts: 3, reason: 'rate limited' });
  });

  it('is final at once when the provider is not to blame (an answer without a checklist)', () => {
    expect(afterChecklistFailure({ attempt: 1, providerReason: null, rateLimitWaitSeconds: null, baseWaitSeconds: 30 })).toEqual({
      kind: 'none',
    });
  });
});
