/**
 * The lasting memory's rows as the rest of it reads them (lib/lasting-memory.ts): a
 * repository's key, the transaction and lock every writer takes, and the stored items — patterns,
 * skills, episodes and earlier runs — as retrieval, search and the snapshot see them.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { type Episode, type MemoryRef } from '../schemas/lasting-memory.js';
import { type StoredItem, type TimelineRun } from '../rules/memory-retrieval.js';
import { agentBody } from '../rules/memory-agent.js';
import { StoredBySchema, type StoredBy } from '../schemas/memory-agent.js';
import { ensureMigrated, poolFor, type Db } from './event-store.js';

/** The advisory lock consolidations take (the bytes of "vmem"): two workers never consolidate at once. */
export const CONSOLIDATION_LOCK_KEY = 0x766d656d;
/** Earlier runs the timeline layer looks at. */
const TIMELINE_RUNS = 10;

/** A repository's key: its resolved path on the worker. */
export function repoKey(p: string): string {
  const abs = path.resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

export async function inTransaction<T>(url: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  await ensureMigrated(url);
  const c = await poolFor(url).connect();
  let broken: Error | boolean = false;
  try {
    await c.query('begin');
    const r = await fn(c);
    await c.query('commit');
    return r;
  } catch (err) {
    await c.query('rollback').catch(() => undefined);
    broken = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    c.release(broken);
  }
}

export interface PatternRow {
  id: string;
  repo: string | null;
  kind: string;
  topic: string;
  title: string;
  body: string;
  keywords: string[];
  evidence: number;
  importance: number;
  lesson: string | null;
  stored_by: unknown;
}
export const PATTERN_COLUMNS = 'id, repo, kind, topic, title, body, keywords, evidence, importance, lesson, stored_by';

/** Who stored a pattern no episode made (null: consolidation made it, or it was imported). */
const storedBy = (r: PatternRow): StoredBy | null => {
  const s = r.stored_by ? StoredBySchema.safeParse(r.stored_by) : null;
  return s?.success ? s.data : null;
};

/**
 * A pattern as retrieval and search see it: the judge's lesson (docs/memory.md, Judgement) first,
 * then what consolidation wrote; one an agent or a person stored says so (rules/memory-agent.ts).
 */
export const patternItem = (r: PatternRow): StoredItem => {
  const by = storedBy(r);
  const body = by ? agentBody(r, by) : r.body;
  return {
    ref: { kind: 'pattern', id: Number(r.id) },
    repo: r.repo,
    kind: r.kind,
    topic: r.topic,
    title: r.title,
    body: r.lesson ? `Lesson: ${r.lesson} (${body})` : body,
    keywords: r.keywords,
    evidence: r.evidence,
    importance: r.importance,
  };
};

/** The candidates of a repository: its own items and the installation's (not those merged into another), and its earlier runs. */
export async function candidates(
  db: Db,
  repo: string,
  workflowId: string,
): Promise<{ items: StoredItem[]; timeline: TimelineRun[]; episodes: { count: number; runs: number } }> {
  const pats = await db.query<PatternRow>(
    `select ${PATTERN_COLUMNS} from memory_patterns where (repo = $1 or repo is null) and merged_into is null order by id`,
    [repo],
  );
  const skills = await db.query<{
    id: string;
    repo: string | null;
    title: string;
    steps: string[];
    keywords: string[];
    evidence: number;
    importance: number;
  }>('select id, repo, title, steps, keywords, evidence, importance from memory_skills where repo = $1 or repo is null order by id', [
    repo,
  ]);
  const items: StoredItem[] = [
    ...pats.rows.map(patternItem),
    ...skills.rows.map((r) => ({
      ref: { kind: 'skill' as const, id: Number(r.id) },
      repo: r.repo,
      kind: 'skill',
      topic: 'skills',
      title: r.title,
      body: `${r.title}: ${r.steps.join('; ')}`,
      keywords: r.keywords,
      evidence: r.evidence,
      importance: r.importance,
    })),
  ];
  const runs = await db.query<{ workflow_id: string; started: Date | null; iterations: number; sigs: string[][] }>(
    `select workflow_id, min(at) as started, count(*)::int as iterations, jsonb_agg(signatures order by iteration) as sigs
     from memory_episodes where repo = $1 and workflow_id <> $2 group by workflow_id order by min(at) desc nulls last limit ${TIMELINE_RUNS}`,
    [repo, workflowId],
  );
  const ends = runs.rows.length
    ? await db.query<{ workflow_id: string; prd_title: string | null; outcome: string | null }>(
        'select workflow_id, prd_title, outcome from vigil_runs where workflow_id = any($1)',
        [runs.rows.map((r) => r.workflow_id)],
      )
    : { rows: [] };
  const endOf = new Map(ends.rows.map((r) => [r.workflow_id, r]));
  const timeline: TimelineRun[] = runs.rows.map((r) => {
    const counts = new Map<string, number>();
    for (const s of r.sigs.flat()) counts.set(s, (counts.get(s) ?? 0) + 1);
    return {
      workflowId: r.workflow_id,
      startedAt: r.started ? r.started.toISOString() : null,
      prdTitle: endOf.get(r.workflow_id)?.prd_title ?? null,
      iterations: r.iterations,
      status: endOf.get(r.workflow_id)?.outcome ?? null,
      failures: [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([what, count]) => ({ what: shortSignature(what), count })),
    };
  });
  const totals = await db.query<{ count: number; runs: number }>(
    'select count(*)::int as count, count(distinct workflow_id)::int as runs from memory_episodes where repo = $1',
    [repo],
  );
  return { items, timeline, episodes: totals.rows[0] ?? { count: 0, runs: 0 } };
}

/** A signature as a timeline line names it. */
export function shortSignature(sig: string): string {
  const [head, a, ...rest] = sig.split(':');
  if (head === 'tests') return `test "${a}"${rest.join(':') ? ` (${rest.join(':').slice(0, 80)})` : ''}`;
  if (head === 'gate') return `gate ${a}`;
  if (head === 'exit') return `agent exit ${a}`;
  return head ?? sig;
}

export interface EpisodeRow {
  id: string;
  workflow_id: string;
  iteration: number;
  repo: string;
  at: Date | null;
  phase: string | null;
  tier: string | null;
  provider: string | null;
  outcome: Episode['outcome'];
  files: string[];
  errors: string[];
  findings: string[];
  council_reasons: string[];
  signatures: string[];
  passed: string[];
  summary: string | null;
  retrieved: MemoryRef[];
  importance: number;
  access_count: number;
  files_read: string[];
}

export const episodeOf = (r: EpisodeRow): Episode => ({
  workflowId: r.workflow_id,
  iteration: r.iteration,
  repo: r.repo,
  at: r.at ? r.at.toISOString() : null,
  phase: r.phase,
  tier: r.tier,
  provider: r.provider,
  outcome: r.outcome,
  files: r.files,
  errors: r.errors,
  findings: r.findings,
  councilReasons: r.council_reasons,
  signatures: r.signatures,
  passed: r.passed,
  summary: r.summary,
  retrieved: r.retrieved,
  importance: Math.min(1, Math.max(0, r.importance)),
  filesRead: r.files_read ?? [],
});

export async function allItems(db: Db): Promise<{ items: StoredItem[] }> {
  const pats = await db.query<PatternRow>(`select ${PATTERN_COLUMNS} from memory_patterns where merged_into is null order by id`);
  const skills = await db.query<{
    id: string;
    repo: string | null;
    title: string;
    steps: string[];
    keywords: string[];
    evidence: number;
    importance: number;
  }>('select id, repo, title, steps, keywords, evidence, importance from memory_skills order by id');
  return {
    items: [
      ...pats.rows.map(patternItem),
      ...skills.rows.map((r) => ({
        ref: { kind: 'skill' as const, id: Number(r.id) },
        repo: r.repo,
        kind: 'skill',
        topic: 'skills',
        title: r.title,
        body: `${r.title}: ${r.steps.join('; ')}`,
        keywords: r.keywords,
        evidence: r.evidence,
        importance: r.importance,
      })),
    ],
  };
}
