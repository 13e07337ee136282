/**
 * Ranking memory beyond exact keywords (lib/memory-rank.ts): BM25+ with prefix and fuzzy
 * matching finds the near-matches — a plural, a stem, a typo — that the plain keyword overlap
 * retrieval used before misses; retrieval into a prompt orders entries by that score; and what
 * shares no letters (a synonym) is still not found.
 */
import { describe, expect, it } from 'vitest';
import { rankItems, scoreOf } from '../../lib/memory-rank.js';
import { keywordsOf } from '../../rules/lasting-memory.js';
import { retrieve, type StoredItem } from '../../rules/memory-retrieval.js';

const item = (id: number, title: string, body: string, keywords: string[], over: Partial<StoredItem> = {}): StoredItem => ({
  ref: { kind: 'pattern', id },
  repo: '/r',
  kind: 'anti_pattern',
  topic: 'tests',
  title,
  body,
  keywords,
  evidence: 3,
  importance: 0.6,
  ...over,
});

const adds = item(
  1,
  'Test "adds two numbers" failed 3 times',
  'Test "adds two numbers" failed 3 times for the same reason: Expected values to be strictly equal',
  ['tests', 'adds', 'two', 'numbers', 'expected', 'values', 'strictly', 'equal'],
);
const lint = item(2, 'Gate static_analysis failed 3 times', 'Gate static_analysis failed 3 times: missing semicolon in src/parser.ts', [
  'static_analysis',
  'missing',
  'semicolon',
  'src',
  'parser',
]);
const slug = item(3, 'Test "slugify handles unicode" failed 4 times', 'slugify dropped accented characters', [
  'tests',
  'slugify',
  'handles',
  'unicode',
  'dropped',
  'accented',
  'characters',
]);
const ITEMS = [adds, lint, slug];

/** What retrieval used to match on: the item's keywords that are among the query's. */
const keywordOverlap = (i: StoredItem, query: string): number => {
  const q = new Set(keywordsOf(query, 400));
  return i.keywords.filter((k) => q.has(k)).length;
};

describe('rankItems', () => {
  it.each([
    ['a singular for a plural', 'add a number', adds],
    ['a stem for a longer word', 'the parse step', lint],
    ['a typo', 'compare strictyl', adds],
    ['a root of a longer word', 'keep the accent', slug],
  ])('finds %s that keyword overlap misses', (_what, query, expected) => {
    expect(keywordOverlap(expected, query)).toBe(0);
    const scores = rankItems(ITEMS, query);
    expect(scoreOf(scores, expected)).toBeGreaterThan(0);
    const best = [...ITEMS].sort((a, b) => scoreOf(scores, b) - scoreOf(scores, a))[0];
    expect(best?.ref.id).toBe(expected.ref.id);
  });

  it('ranks the item sharing more (and rarer) words first', () => {
    const scores = rankItems(ITEMS, 'the test adds two numbers and expects them strictly equal');
    expect(scoreOf(scores, adds)).toBeGreaterThan(scoreOf(scores, slug));
    expect(scoreOf(scores, lint)).toBe(0);
  });

  it('is lexical: a synonym that shares no letters is not found, nor a longer form beyond the fuzzy distance, nor anything for common words alone', () => {
    expect(scoreOf(rankItems(ITEMS, 'sum'), adds)).toBe(0);
    // No stemmer: "slugifying" is three edits from "slugify", more than a fifth of its length.
    expect(scoreOf(rankItems(ITEMS, 'slugifying'), slug)).toBe(0);
    expect(rankItems(ITEMS, 'the and for with').size).toBe(0);
    expect(rankItems([], 'numbers').size).toBe(0);
  });
});

describe('retrieval into a prompt with the full-text score', () => {
  it('puts the fuzzy match first where keyword overlap would have put another item', () => {
    const task = 'Make add() return the sum of a number pair; the parse step stays';
    // Keyword overlap alone: neither shares a keyword with the task, so neither is loaded (the
    // relevance floor; before it, importance decided and the unrelated item came first).
    const heavier = { ...lint, importance: 0.9 };
    const plain = retrieve({
      repo: '/r',
      task,
      budgets: { indexTokens: 0, timelineTokens: 0, entriesTokens: 800 },
      items: [adds, heavier],
      timeline: [],
      episodes: { count: 0, runs: 0 },
    });
    expect(plain.refs).toEqual([]);
    const scores = rankItems([adds, heavier], task);
    const ranked = [adds, heavier].map((i) => ({ ...i, textScore: scoreOf(scores, i) }));
    expect(ranked.every((i) => (i.textScore ?? 0) > 0)).toBe(true);
    const withText = retrieve({
      repo: '/r',
      task: 'add a number',
      budgets: { indexTokens: 0, timelineTokens: 0, entriesTokens: 800 },
      items: [adds, heavier].map((i) => ({ ...i, textScore: scoreOf(rankItems([adds, heavier], 'add a number'), i) })),
      timeline: [],
      episodes: { count: 0, runs: 0 },
    });
    expect(withText.refs[0]).toEqual(adds.ref);
  });
});
