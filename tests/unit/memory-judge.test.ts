/**
 * The memory judge's rules (rules/memory-judge.ts): which items a run's judgement
 * is shown, when a call is worth making, and how its answer is read — a valid answer becomes a
 * plan, anything else changes nothing and says why.
 */
import { describe, expect, it } from 'vitest';
import { judgePrompt, judgeSelection, keywordOverlap, nearDuplicate, parseJudgeAnswer, type JudgeItem } from '../../rules/memory-judge.js';

const item = (id: number, keywords: string[], over: Partial<JudgeItem> = {}): JudgeItem => ({
  id,
  repo: '/r',
  kind: 'anti_pattern',
  title: `item ${id}`,
  body: `body of ${id}`,
  keywords,
  lesson: null,
  ...over,
});

const a = item(1, ['tests', 'adds', 'two', 'numbers', 'expected', 'strictly', 'equal']);
const b = item(2, ['tests', 'adds', 'numbers', 'strictly', 'equal', 'offset']);
const c = item(3, ['lint', 'eslint', 'semicolon']);
const otherKind = item(4, ['tests', 'adds', 'two', 'numbers', 'strictly', 'equal'], { kind: 'pattern' });
const otherRepo = item(5, ['tests', 'adds', 'two', 'numbers', 'strictly', 'equal'], { repo: '/other' });

describe('near-duplicates', () => {
  it('share at least two keywords and half of the smaller item, in the same kind and scope', () => {
    expect(keywordOverlap(a.keywords, b.keywords)).toBeCloseTo(5 / 6);
    expect(nearDuplicate(a, b)).toBe(true);
    expect(nearDuplicate(a, c)).toBe(false);
    expect(nearDuplicate(a, otherKind)).toBe(false);
    expect(nearDuplicate(a, otherRepo)).toBe(false);
    expect(nearDuplicate(a, a)).toBe(false);
    expect(nearDuplicate(item(6, ['tests', 'x']), item(7, ['tests', 'y']))).toBe(false);
  });
});

describe('judgeSelection', () => {
  it("shows the run's items and their near-duplicates, and pairs them", () => {
    const sel = judgeSelection([a], [a, b, c, otherKind, otherRepo]);
    expect(sel.items.map((i) => i.id)).toEqual([1, 2]);
    expect(sel.pairs).toEqual([[1, 2]]);
    expect(sel.worthACall).toBe(true);
  });
  it('is worth no call when the run changed nothing, or its items have lessons and no near-duplicate', () => {
    expect(judgeSelection([], [a, b]).worthACall).toBe(false);
    const judged = { ...c, lesson: 'Run eslint --fix before claiming.' };
    expect(judgeSelection([judged], [judged, a, b]).worthACall).toBe(false);
    expect(judgeSelection([{ ...c }], [c, a]).worthACall).toBe(true);
  });
  it('the prompt names every item by id, the near-duplicates and the JSON it owes', () => {
    const p = judgePrompt(judgeSelection([a], [a, b]));
    expect(p).toContain('### #1 anti-pattern (this repository)');
    expect(p).toContain('### #2 anti-pattern');
    expect(p).toContain('- #1 and #2');
    expect(p).toContain('{"lessons": [{"id": 12, "lesson": "..."}], "merges": [{"keep": 12, "merge": [15], "reason": "..."}]}');
  });
});

describe('parseJudgeAnswer', () => {
  const shown = [a, b, c, otherKind];
  it('reads the last fenced JSON block into lessons and merges', () => {
    const text =
      'Thinking...\n```json\n{"lessons": []}\n```\nFinal:\n```json\n{"lessons": [{"id": 1, "lesson": "Return a + b; no ' +
      'offset."}, {"id": 3, "lesson": "Run eslint --fix."}], "merges": [{"keep": 1, "merge": [2], "reason": "same ' +
      'failure"}]}\n```\n';
    expect(parseJudgeAnswer(text, shown)).toEqual({
      ok: true,
      lessons: [
        { id: 1, lesson: 'Return a + b; no offset.' },
        { id: 3, lesson: 'Run eslint --fix.' },
      ],
      merges: [{ keep: 1, merge: [2] }],
    });
  });
  it('reads a bare JSON object, and redacts a secret in a lesson', () => {
    const token = 'ghp_' + 'Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8';
    const r = parseJudgeAnswer(`{"lessons": [{"id": 2, "lesson": "push with ${token}"}]}`, shown);
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.lessons[0]?.lesson).toContain('[REDACTED');
      expect(r.lessons[0]?.lesson).not.toContain(token);
      expect(r.merges).toEqual([]);
    }
  });
  it.each([
    ['no JSON at all', 'VERDICT: PASS', /no JSON object/],
    ['JSON that does not parse', '```json\n{"lessons": [\n```', /does not parse/],
    ['another shape', '{"lesson": "x"}', /not the documented JSON/],
    ['a lesson too long', JSON.stringify({ lessons: [{ id: 1, lesson: 'x'.repeat(301) }] }), /not the documented JSON/],
    ['an id it was not shown', '{"lessons": [{"id": 99, "lesson": "x"}]}', /not shown: #99/],
    ['a merge across kinds', '{"merges": [{"keep": 1, "merge": [4]}]}', /same kind and scope/],
    ['an item in two merges', '{"merges": [{"keep": 1, "merge": [2]}, {"keep": 3, "merge": [2]}]}', /two merges/],
    ['an item merged into itself', '{"merges": [{"keep": 1, "merge": [1]}]}', /two merges|itself/],
  ])('changes nothing for %s', (_what, text, why) => {
    const r = parseJudgeAnswer(text, shown);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(why);
  });
});
