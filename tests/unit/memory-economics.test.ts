/**
 * Token economics of the lasting memory, as rules (rules/memory-economics.ts and the entries layer
 * of rules/memory-retrieval.ts): per agent call, the tokens its prompt read from memory against
 * those it added (discovery), and the original's four thresholds — ratio > 0.15 compress_layer3,
 * savings < 50 % review_topic_relevance, layer-3 loads > 3 create_specialized_index, discovery >
 * 200 reorganize_topic_index — each crossed alone, none in the honest control; and what the next
 * retrieval does about the first two: entries compressed, the relevance floor raised (a weak match
 * that an important item would otherwise carry in is left out). Seed row: token economics (§5.4).
 */
import { describe, expect, it } from 'vitest';
import { callEconomics, COMPRESSED_ENTRY_CHARS, ECONOMY_THRESHOLDS, retrievalActs, REVIEWED_FLOOR } from '../../rules/memory-economics.js';
import { retrieve, type StoredItem } from '../../rules/memory-retrieval.js';

const read = (entries: number, loaded: number, available: number) => ({
  chars: { index: 100, timeline: 100, entries },
  entriesLoaded: loaded,
  availableChars: available,
});

describe('a call’s token economics', () => {
  it('the thresholds are the original’s, in its priority order', () => {
    expect(ECONOMY_THRESHOLDS.map((t) => `${t.metric} ${t.op} ${t.value}: ${t.action}`)).toEqual([
      'ratio > 0.15: compress_layer3',
      'savingsPercent < 50: review_topic_relevance',
      'layer3Loads > 3: create_specialized_index',
      'discoveryTokens > 200: reorganize_topic_index',
    ]);
  });

  it('honest control: a call that read a small part of a large memory and added little crosses none', () => {
    const e = callEconomics(read(800, 2, 40_000), 144);
    expect(e).toEqual({ readTokens: 250, discoveryTokens: 36, ratio: 0.144, savingsPercent: 97.5, layer3Loads: 2, actions: [] });
  });

  it('each threshold crossed alone names its action', () => {
    expect(callEconomics(read(800, 2, 40_000), 200)).toMatchObject({ ratio: 0.2, actions: ['compress_layer3'] });
    expect(callEconomics(read(800, 2, 1_200), 100).actions).toEqual(['review_topic_relevance']);
    expect(callEconomics(read(800, 4, 40_000), 100).actions).toEqual(['create_specialized_index']);
    // 201 discovery tokens against 1,300 read: a ratio of 0.155 as well.
    expect(callEconomics(read(5_000, 2, 400_000), 804).actions).toEqual(['compress_layer3', 'reorganize_topic_index']);
    expect(callEconomics(read(10_000, 2, 400_000), 804).actions).toEqual(['reorganize_topic_index']);
  });

  it('a call that read nothing is judged on what it added alone (no ratio, no savings to act on)', () => {
    expect(callEconomics(null, 400)).toMatchObject({ readTokens: 0, discoveryTokens: 100, savingsPercent: 100, actions: [] });
    expect(callEconomics(null, 1_000).actions).toEqual(['reorganize_topic_index']);
  });

  it('the next retrieval acts on the first two', () => {
    expect(retrievalActs(['compress_layer3', 'reorganize_topic_index'])).toEqual({ compress: true, strictFloor: false });
    expect(retrievalActs(['review_topic_relevance'])).toEqual({ compress: false, strictFloor: true });
    expect(retrievalActs([])).toEqual({ compress: false, strictFloor: false });
  });
});

describe('the entries layer under the economy', () => {
  const item = (id: number, body: string, keywords: string[], importance: number): StoredItem => ({
    ref: { kind: 'pattern', id },
    repo: '/r',
    kind: 'pattern',
    topic: 'tests',
    title: body.slice(0, 20),
    body,
    keywords,
    evidence: 1,
    importance,
  });
  const long = `carry the one in add: ${'because the sum of two digits can pass nine; '.repeat(10)}`;
  const items = [item(1, long, ['carry', 'add', 'digits', 'sum'], 0.5), item(2, 'a weak match on add only', ['add'], 1)];
  const base = {
    repo: '/r',
    task: 'add: carry the one when the sum of two digits passes nine',
    budgets: { indexTokens: 0, timelineTokens: 0, entriesTokens: 2000 },
    items,
    timeline: [],
    episodes: { count: 0, runs: 0 },
  };

  it('control: without it, entries are whole and every match is loaded', () => {
    const r = retrieve(base);
    expect(r.refs.map((x) => x.id).sort()).toEqual([1, 2]);
    expect(r.text).toContain(long.trim());
    expect(r.text).toContain('weighed for implementation):');
  });

  it('compressed: each body cut, and the heading says so', () => {
    const r = retrieve({ ...base, economy: { entryChars: COMPRESSED_ENTRY_CHARS } });
    expect(r.text).toContain('weighed for implementation; compressed):');
    const line = r.text.split('\n').find((l) => l.includes('#1,')) ?? '';
    expect(line.endsWith('…')).toBe(true);
    expect(line.length).toBeLessThan(COMPRESSED_ENTRY_CHARS + 40);
    expect(r.chars.entries).toBeLessThan(retrieve(base).chars.entries);
  });

  it('adversarial: with the floor raised, an important item that barely matches is no longer carried in', () => {
    const r = retrieve({ ...base, economy: { floorShare: REVIEWED_FLOOR } });
    expect(r.refs.map((x) => x.id)).toEqual([1]);
    expect(r.text).toContain('the closest matches only');
  });
});
