/**
 * Ranking memory items against a text (docs/memory.md, What a prompt carries): full-text search
 * with MiniSearch, whose score is BM25+ over the items' titles, bodies, keywords and topics, with
 * prefix matching (a query word matches the words it begins: "number" finds "numbers") and fuzzy
 * matching (a word within an edit distance of a fifth of its length: "strictyl" finds "strictly",
 * "numbers" finds "number"). It is lexical: no embedding model is downloaded or run, and words
 * that mean the same without sharing letters ("sum" and "add") do not match.
 *
 * Used by retrieval into a prompt (the score replaces the count of shared keywords) and by
 * `vigil memory search` and the MCP tool. An index is built per ranking: a few thousand items at
 * most, in milliseconds.
 */
import MiniSearch from 'minisearch';
import { keywordsOf } from '../rules/lasting-memory.js';
import type { StoredItem } from '../rules/memory-retrieval.js';

/** Query words at most (a PRD's keywords, the first ones). */
const MAX_QUERY_TERMS = 200;

const refKey = (i: Pick<StoredItem, 'ref'>): string => `${i.ref.kind}:${i.ref.id}`;

/** Each item's score against the text (0: no word in common, even fuzzily), keyed `<kind>:<id>`. */
export function rankItems(items: readonly StoredItem[], text: string): Map<string, number> {
  const scores = new Map<string, number>();
  const terms = keywordsOf(text, MAX_QUERY_TERMS);
  if (items.length === 0 || terms.length === 0) return scores;
  const index = new MiniSearch<{ id: string; title: string; body: string; keywords: string; topic: string }>({
    fields: ['title', 'body', 'keywords', 'topic'],
    // The words retrieval has always matched on: lower case, three characters or more, no common words.
    tokenize: (s) => s.split(/[^A-Za-z0-9_]+/),
    processTerm: (t) => {
      const w = t.toLowerCase();
      return w.length >= 3 && keywordsOf(w, 1).length === 1 ? w : null;
    },
    searchOptions: {
      boost: { title: 2, keywords: 1.5 },
      prefix: (t) => t.length >= 4,
      fuzzy: (t) => (t.length >= 5 ? 0.2 : false),
      combineWith: 'OR',
    },
  });
  index.addAll(items.map((i) => ({ id: refKey(i), title: i.title, body: i.body, keywords: i.keywords.join(' '), topic: i.topic })));
  for (const hit of index.search(terms.join(' '))) scores.set(String(hit.id), hit.score);
  return scores;
}

/** The score of an item in a ranking (0 when it matched nothing). */
export function scoreOf(scores: ReadonlyMap<string, number>, item: Pick<StoredItem, 'ref'>): number {
  return scores.get(refKey(item)) ?? 0;
}
