/**
 * The lasting memory read and searched: `vigil memory list|show|search`, the MCP tool, the
 * console's page, and the snapshot an iteration's agent call searches inside its sandbox.
 */
import { MemorySnapshotSchema, SNAPSHOT_LIMITS, type MemorySnapshot } from '../schemas/lasting-memory.js';
import { clean } from '../rules/lasting-memory.js';
import type { StoredItem } from '../rules/memory-retrieval.js';
import { ensureMigrated, poolFor, type Db } from './event-store.js';
import { rankItems, scoreOf } from './memory-rank.js';
import { readRegularFile, writePrivateFile } from './safe-files.js';
import { repoKey, candidates, shortSignature, allItems, type EpisodeRow } from './memory-store.js';

export interface MemoryItem {
  kind: 'pattern' | 'anti_pattern' | 'skill' | 'episode';
  id: number;
  repo: string | null;
  topic: string;
  title: string;
  evidence: number;
  importance: number;
  accessCount: number;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** Patterns, anti-patterns and skills (and with `episodes`, the newest episodes), most important first. */
export async function listMemory(db: Db, opts: { repo?: string | null; episodes?: boolean; limit?: number } = {}): Promise<MemoryItem[]> {
  const limit = Math.min(Math.max(opts.limit ?? 100, 1), 10_000);
  const repo = opts.repo ? repoKey(opts.repo) : null;
  const where = repo ? 'where repo = $1 or repo is null' : '';
  const args = repo ? [repo] : [];
  const pats = await db.query<{
    id: string;
    kind: 'pattern' | 'anti_pattern';
    repo: string | null;
    topic: string;
    title: string;
    evidence: number;
    importance: number;
    access_count: number;
  }>(
    `select id, kind, repo, topic, title, evidence, importance, access_count from memory_patterns ${where} order by importance desc, id limit ${limit}`,
    args,
  );
  const skills = await db.query<{
    id: string;
    repo: string | null;
    task_kind: string;
    title: string;
    evidence: number;
    importance: number;
    access_count: number;
  }>(
    `select id, repo, task_kind, title, evidence, importance, access_count from memory_skills ${where} order by importance desc, id limit ${limit}`,
    args,
  );
  const items: MemoryItem[] = [
    ...pats.rows.map((r) => ({
      kind: r.kind,
      id: Number(r.id),
      repo: r.repo,
      topic: r.topic,
      title: r.title,
      evidence: r.evidence,
      importance: round2(r.importance),
      accessCount: r.access_count,
    })),
    ...skills.rows.map((r) => ({
      kind: 'skill' as const,
      id: Number(r.id),
      repo: r.repo,
      topic: r.task_kind,
      title: r.title,
      evidence: r.evidence,
      importance: round2(r.importance),
      accessCount: r.access_count,
    })),
  ];
  if (opts.episodes) {
    const eps = await db.query<EpisodeRow>(
      `select * from memory_episodes ${repo ? 'where repo = $1' : ''} order by id desc limit ${limit}`,
      args,
    );
    items.push(
      ...eps.rows.map((r) => ({
        kind: 'episode' as const,
        id: Number(r.id),
        repo: r.repo,
        topic: r.phase ?? 'iteration',
        title:
          `${r.workflow_id} iteration ${r.iteration}: ${r.outcome}${r.signatures.length ? ` (${r.signatures.map(shortSignature).join('; ')})` : ''}`.slice(
            0,
            300,
          ),
        evidence: 1,
        importance: round2(r.importance),
        accessCount: r.access_count,
      })),
    );
  }
  return items.sort((a, b) => b.importance - a.importance || a.kind.localeCompare(b.kind) || a.id - b.id).slice(0, limit);
}

/** What the memory judge (docs/memory.md, Judgement) did and cost, over every run it was asked about. */
export interface JudgementTotals {
  runs: number;
  calls: number;
  usd: number;
  lessons: number;
  merges: number;
  /** Runs whose answer (or call) changed nothing. */
  refused: number;
}

export async function judgementTotals(db: Db): Promise<JudgementTotals> {
  const r = await db.query<{ runs: number; calls: number; usd: number; lessons: number; merges: number; refused: number }>(
    `select count(*)::int as runs, coalesce(sum(calls), 0)::int as calls, coalesce(sum(usd), 0)::float8 as usd, coalesce(sum(lessons), 0)::int as lessons,
            coalesce(sum(merges), 0)::int as merges, (count(*) filter (where problem is not null))::int as refused from memory_judgements`,
  );
  const t = r.rows[0] ?? { runs: 0, calls: 0, usd: 0, lessons: 0, merges: 0, refused: 0 };
  return { ...t, usd: Math.round(t.usd * 1e6) / 1e6 };
}

export type MemoryKindName = 'pattern' | 'skill' | 'episode';

/** One item whole, with its links. */
export async function showMemory(db: Db, kind: MemoryKindName, id: number): Promise<Record<string, unknown> | null> {
  const table = kind === 'pattern' ? 'memory_patterns' : kind === 'skill' ? 'memory_skills' : 'memory_episodes';
  const r = await db.query<Record<string, unknown>>(`select * from ${table} where id = $1`, [id]);
  const row = r.rows[0];
  if (!row) return null;
  const links = await db.query<{ relation: string; from_kind: string; from_id: string; to_kind: string; to_id: string }>(
    'select relation, from_kind, from_id, to_kind, to_id from memory_links where (from_kind = $1 and ' +
      'from_id = $2) or (to_kind = $1 and to_id = $2) order by relation, to_id',
    [kind, id],
  );
  const out: Record<string, unknown> = { kind: kind === 'pattern' ? row.kind : kind };
  for (const [k, v] of Object.entries(row))
    if (k !== 'scope') out[k] = v instanceof Date ? v.toISOString() : k === 'id' || k === 'from_id' || k === 'to_id' ? Number(v) : v;
  out.links = links.rows.map((l) => ({ relation: l.relation, from: `${l.from_kind} ${l.from_id}`, to: `${l.to_kind} ${l.to_id}` }));
  return out;
}

/**
 * Items that match the query, best first: full-text search (BM25+ with prefix and fuzzy matching,
 * lib/memory-rank.ts; lexical, no embeddings), then importance.
 */
export async function searchMemory(
  db: Db,
  query: string,
  opts: { repo?: string | null; limit?: number } = {},
): Promise<(MemoryItem & { body: string; score: number })[]> {
  const repo = opts.repo ? repoKey(opts.repo) : null;
  const c = repo ? await candidates(db, repo, '') : await allItems(db);
  return searchItems(c.items, query, opts.limit);
}

/**
 * A snapshot of a repository's memory for an iteration's agent call, written where only the run
 * and its call's sandbox read it (the run's private folder, outside the repository): its items as
 * retrieval sees them, redacted again and bounded. Returns the file's path.
 */
export async function writeMemorySnapshot(
  url: string,
  runId: string,
  repoPath: string,
  file: string,
  now: Date = new Date(),
): Promise<string> {
  await ensureMigrated(url);
  const repo = repoKey(repoPath);
  const c = await candidates(poolFor(url), repo, runId);
  const red = (s: string, n: number): string => clean(s, n);
  const items = [...c.items]
    .sort((a, b) => b.importance - a.importance || a.ref.id - b.ref.id)
    .slice(0, SNAPSHOT_LIMITS.items)
    .map((i) => ({
      ref: i.ref,
      repo: i.repo,
      kind: i.kind,
      topic: red(i.topic, 200),
      title: red(i.title, 300),
      body: red(i.body, 2400),
      keywords: i.keywords.slice(0, 60).map((k) => k.slice(0, 60)),
      evidence: i.evidence,
      importance: Math.min(1, Math.max(0, i.importance)),
    }));
  let snapshot = MemorySnapshotSchema.parse({ vigilMemorySnapshot: 1, runId, repo, takenAt: now.toISOString(), items });
  while (JSON.stringify(snapshot).length > SNAPSHOT_LIMITS.bytes && snapshot.items.length > 0)
    snapshot = { ...snapshot, items: snapshot.items.slice(0, Math.floor(snapshot.items.length / 2)) };
  writePrivateFile(file, JSON.stringify(snapshot));
  return file;
}

/** A snapshot file as written (null when it is missing, too big or not one). */
export function readMemorySnapshot(file: string): MemorySnapshot | null {
  const r = readRegularFile(file, SNAPSHOT_LIMITS.bytes + 1024);
  if (!r?.ok) return null;
  try {
    const s = MemorySnapshotSchema.safeParse(JSON.parse(r.text));
    return s.success ? s.data : null;
  } catch {
    return null;
  }
}

/**
 * Items ranked against a query (the store's or a snapshot's), best first; only those that match.
 * As retrieval ranks (rules/memory-retrieval.ts, `relevance`): the match (the best
 * full-text score worth five points), then importance; `score` is that sum.
 */
export function searchItems(items: readonly StoredItem[], query: string, limit?: number): (MemoryItem & { body: string; score: number })[] {
  const scores = rankItems(items, query);
  const best = Math.max(0, ...items.map((i) => scoreOf(scores, i)));
  const scored = items
    .filter((i) => scoreOf(scores, i) > 0)
    .map((i) => ({
      i,
      score: Math.round(((5 * scoreOf(scores, i)) / best + i.importance + (i.kind === 'anti_pattern' ? 0.2 : 0)) * 1000) / 1000,
    }))
    .sort((a, b) => b.score - a.score || b.i.importance - a.i.importance || a.i.ref.id - b.i.ref.id)
    .slice(0, Math.min(Math.max(limit ?? 20, 1), 1000));
  return scored.map(({ i, score }) => ({
    kind: i.kind as MemoryItem['kind'],
    id: i.ref.id,
    repo: i.repo,
    topic: i.topic,
    title: i.title,
    body: i.body,
    evidence: i.evidence,
    importance: round2(i.importance),
    accessCount: 0,
    score,
  }));
}
