/**
 * The memory that outlives a run, in the event store (docs/memory.md; tables in
 * activities/lasting-memory-sql.ts, rules in workflows/decisions/lasting-memory.ts and
 * memory-retrieval.ts):
 *
 * - the iteration's agent activity (activities/iteration.ts) retrieves memory into its prompt
 *   (`memoryBeforeCall`) and, after the agent, leaves a trace of what the journal does not hold
 *   (files changed, errors, the tests' failure line, the agent's summary, all redacted:
 *   `memoryAfterCall`). Both are best effort within a few seconds: memory never fails or slows
 *   a call for long, and the workflow records nothing new for them;
 * - consolidation (`consolidateMemory`) turns the journal and the traces into episodes, then all
 *   episodes into patterns, anti-patterns, links and skills. It runs when the worker's journal
 *   writer stores a run's outcome (activities/event-store.ts) and on `vigil memory consolidate`;
 * - the commands' reads and edits (`vigil memory`, the MCP tool, the console's page).
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { RunEventSchema, type EventEnvelope } from '../schemas/events.js';
import {
  EPISODE_LIMITS,
  EpisodeSchema,
  MemoryExportSchema,
  MemorySnapshotSchema,
  SNAPSHOT_LIMITS,
  type MemorySnapshot,
  PatternSchema,
  SkillSchema,
  type Episode,
  type MemoryExport,
  type MemoryLayers,
  type MemoryRef,
  type Pattern,
  type PatternLink,
  type Skill,
} from '../schemas/lasting-memory.js';
import {
  clean,
  consolidate,
  episodesOf,
  errorLine,
  forgetKey,
  type IterationTrace,
  type RunEnd,
} from '../workflows/decisions/lasting-memory.js';
import { retrieve, type Retrieved, type StoredItem, type TimelineRun } from '../workflows/decisions/memory-retrieval.js';
import { redactSecrets } from '../workflows/decisions/scans.js';
import { ensureMigrated, onRunEnded, poolFor, type Db } from './event-store.js';
import { rankItems, scoreOf } from './memory-rank.js';
import { readRegularFile, writePrivateFile } from './safe-files.js';

/** The advisory lock consolidations take (the bytes of "vmem"): two workers never consolidate at once. */
export const CONSOLIDATION_LOCK_KEY = 0x766d656d;
/** Episodes consolidation reads at most (the newest). */
const MAX_EPISODES = 20_000;
/** Memory's part of an agent call, at most. */
export const MEMORY_CALL_DEADLINE_MS = 3000;
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

const withDeadline = async <T>(p: Promise<T>, ms: number): Promise<T | null> => {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
};

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

// ---------------------------------------------------------------------------------------------
// Retrieval and traces (the agent activity)

export interface RetrievalRequest {
  workflowId: string;
  iteration: number;
  repoPath: string;
  /** The task at hand: the PRD, the checklist, the failing gates. */
  task: string;
  budgets: MemoryLayers;
}

interface PatternRow {
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
}
const PATTERN_COLUMNS = 'id, repo, kind, topic, title, body, keywords, evidence, importance, lesson';

/** A pattern as retrieval and search see it: the judge's lesson (docs/memory.md, Judgement) first, then what consolidation wrote. */
const patternItem = (r: PatternRow): StoredItem => ({
  ref: { kind: 'pattern', id: Number(r.id) },
  repo: r.repo,
  kind: r.kind,
  topic: r.topic,
  title: r.title,
  body: r.lesson ? `Lesson: ${r.lesson} (${r.body})` : r.body,
  keywords: r.keywords,
  evidence: r.evidence,
  importance: r.importance,
});

/** The candidates of a repository: its own items and the installation's (not those merged into another), and its earlier runs. */
async function candidates(
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

/**
 * Memory for an iteration's prompt, and its record: the first retrieval for (run, iteration)
 * records what was retrieved and counts the access (a retried call retrieves again but counts nothing twice).
 */
export async function retrieveForPrompt(url: string, req: RetrievalRequest): Promise<Retrieved> {
  await ensureMigrated(url);
  const db = poolFor(url);
  const repo = repoKey(req.repoPath);
  const c = await candidates(db, repo, req.workflowId);
  // Relevance by full-text score (BM25+, prefix and fuzzy: activities/memory-rank.ts).
  const scores = rankItems(c.items, req.task);
  const items = c.items.map((i) => ({ ...i, textScore: scoreOf(scores, i) }));
  const got = retrieve({ repo, task: req.task, budgets: req.budgets, items, timeline: c.timeline, episodes: c.episodes });
  await inTransaction(url, async (t) => {
    const first = await t.query(
      `insert into memory_traces (workflow_id, iteration, retrieved, retrieved_chars) values ($1, $2, $3, $4)
       on conflict (workflow_id, iteration) do nothing returning 1`,
      [req.workflowId, req.iteration, JSON.stringify(got.refs), JSON.stringify(got.chars)],
    );
    if (!first.rowCount) return;
    await countAccess(t, got.refs);
  });
  return got;
}

/** Retrieval counts as reuse: the access count goes up, and the importance a little with it. */
async function countAccess(db: Db, refs: readonly MemoryRef[]): Promise<void> {
  const ids = (kind: MemoryRef['kind']): number[] => refs.filter((r) => r.kind === kind).map((r) => r.id);
  const bump = 'access_count = access_count + 1, last_accessed_at = now(), importance = least(1, importance + 0.02)';
  if (ids('pattern').length) await db.query(`update memory_patterns set ${bump} where id = any($1)`, [ids('pattern')]);
  if (ids('skill').length) await db.query(`update memory_skills set ${bump} where id = any($1)`, [ids('skill')]);
  if (ids('episode').length) await db.query(`update memory_episodes set ${bump} where id = any($1)`, [ids('episode')]);
}

export interface TraceFacts {
  workflowId: string;
  iteration: number;
  files: string[];
  errors: string[];
  testFailure: string | null;
  summary: string | null;
  /** Files the agent read (activities/files-read.ts). */
  filesRead?: string[];
}

/** After the agent: what the journal does not hold, redacted. Kept with the retrieval's record. */
export async function recordTrace(url: string, t: TraceFacts): Promise<void> {
  await ensureMigrated(url);
  const red = (s: string, n: number): string => clean(s, n);
  await poolFor(url).query(
    `insert into memory_traces (workflow_id, iteration, files, errors, test_failure, summary, files_read) values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (workflow_id, iteration) do update set files = excluded.files, errors = excluded.errors, test_failure = excluded.test_failure, summary = excluded.summary, files_read = excluded.files_read, recorded_at = now()`,
    [
      t.workflowId,
      t.iteration,
      JSON.stringify(t.files.slice(0, 20).map((f) => red(f, 300))),
      JSON.stringify(t.errors.slice(0, 5).map((e) => red(e, 300))),
      t.testFailure ? red(t.testFailure, 300) : null,
      t.summary ? red(t.summary, 300) : null,
      JSON.stringify((t.filesRead ?? []).slice(0, EPISODE_LIMITS.filesRead).map((f) => red(f, EPISODE_LIMITS.fileChars))),
    ],
  );
}

/** The task at hand as retrieval reads it: the PRD (its first 16 KiB), its title, the checklist and the failing gates. */
export function taskText(p: { prdPath: string; prdTitle: string; checklist?: string | null; gateFindings?: string | null }): string {
  const prd = readRegularFile(p.prdPath, 16 * 1024);
  return [p.prdTitle, prd?.ok ? prd.text : '', p.checklist ?? '', p.gateFindings ?? ''].join('\n');
}

/** The failure line of an output (redacted), for a trace. */
export function failureLine(output: string): string | null {
  const line = errorLine(output);
  return line ? redactSecrets(line).text : null;
}

/** Runs `fn` within the memory deadline; any failure or lateness is null (never the call's problem). */
export async function bestEffort<T>(fn: () => Promise<T>): Promise<T | null> {
  try {
    return await withDeadline(fn(), MEMORY_CALL_DEADLINE_MS);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Consolidation

async function runJournal(db: Db, workflowId: string): Promise<{ events: EventEnvelope[]; repo: string | null; end: RunEnd | null }> {
  const rows = await db.query<{ run_id: string; seq: number; at: Date | null; data: unknown }>(
    "select run_id, seq, at, data from run_events where workflow_id = $1 and kind <> 'invalid' order by seq",
    [workflowId],
  );
  const events: EventEnvelope[] = [];
  for (const r of rows.rows) {
    const e = RunEventSchema.safeParse(r.data);
    if (e.success) events.push({ seq: r.seq, runId: r.run_id, at: r.at ? r.at.toISOString() : '', event: e.data });
  }
  const start = events.find((e) => e.event.kind === 'run_started')?.event;
  if (!start || start.kind !== 'run_started') return { events, repo: null, end: null };
  const outcome = [...events].reverse().find((e) => e.event.kind === 'outcome')?.event;
  const repo = repoKey(start.repoPath);
  return {
    events,
    repo,
    end: {
      workflowId,
      repo,
      prdTitle: start.prdTitle,
      exitCode: outcome?.kind === 'outcome' ? outcome.exitCode : null,
      status: outcome?.kind === 'outcome' ? outcome.status : null,
    },
  };
}

async function tracesOf(db: Db, workflowId: string): Promise<IterationTrace[]> {
  const rows = await db.query<{
    iteration: number;
    files: string[];
    errors: string[];
    test_failure: string | null;
    summary: string | null;
    retrieved: MemoryRef[];
    files_read: string[];
  }>('select iteration, files, errors, test_failure, summary, retrieved, files_read from memory_traces where workflow_id = $1', [
    workflowId,
  ]);
  return rows.rows.map((r) => ({
    iteration: r.iteration,
    files: r.files,
    errors: r.errors,
    testFailure: r.test_failure,
    summary: r.summary,
    retrieved: r.retrieved,
    filesRead: r.files_read,
  }));
}

const EPISODE_COLUMNS =
  'workflow_id, iteration, repo, at, phase, tier, provider, outcome, files, errors, findings, council_reasons, signatures, passed, summary, retrieved, importance, files_read';

async function upsertEpisodes(db: Db, episodes: readonly Episode[]): Promise<void> {
  for (const e of episodes) {
    await db.query(
      `insert into memory_episodes (${EPISODE_COLUMNS}) values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18)
       on conflict (workflow_id, iteration) do update set repo = excluded.repo, at = excluded.at, phase = excluded.phase, tier = excluded.tier, provider = excluded.provider,
         outcome = excluded.outcome, files = excluded.files, errors = excluded.errors, findings = excluded.findings, council_reasons = excluded.council_reasons,
         signatures = excluded.signatures, passed = excluded.passed, summary = excluded.summary, retrieved = excluded.retrieved, files_read = excluded.files_read,
         importance = least(1, excluded.importance + 0.02 * memory_episodes.access_count)`,
      [
        e.workflowId,
        e.iteration,
        e.repo,
        e.at || null,
        e.phase,
        e.tier,
        e.provider,
        e.outcome,
        JSON.stringify(e.files),
        JSON.stringify(e.errors),
        JSON.stringify(e.findings),
        JSON.stringify(e.councilReasons),
        JSON.stringify(e.signatures),
        JSON.stringify(e.passed),
        e.summary,
        JSON.stringify(e.retrieved),
        e.importance,
        JSON.stringify(e.filesRead ?? []),
      ],
    );
  }
}

interface EpisodeRow {
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

const episodeOf = (r: EpisodeRow): Episode => ({
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

export interface ConsolidationResult {
  runs: number;
  episodes: number;
  patterns: number;
  antiPatterns: number;
  skills: number;
  links: number;
}

/**
 * Episodes of the given runs (all runs with a journal when `workflowIds` is null), then every
 * episode of the installation into patterns, anti-patterns, skills and links. Under an advisory
 * lock, in one transaction; idempotent (the same journal consolidates to the same rows, and an
 * item's access count survives).
 */
export async function consolidateMemory(url: string, workflowIds: readonly string[] | null): Promise<ConsolidationResult> {
  return inTransaction(url, async (db) => {
    await db.query('select pg_advisory_xact_lock($1)', [CONSOLIDATION_LOCK_KEY]);
    const ids =
      workflowIds ??
      (await db.query<{ workflow_id: string }>("select distinct workflow_id from run_events where kind = 'run_started'")).rows.map(
        (r) => r.workflow_id,
      );
    for (const id of ids) {
      const j = await runJournal(db, id);
      if (!j.repo) continue;
      await upsertEpisodes(db, episodesOf({ workflowId: id, repo: j.repo, events: j.events, traces: await tracesOf(db, id) }));
      await db.query(
        'insert into memory_consolidations (workflow_id) values ($1) on conflict (workflow_id) do update set consolidated_at = now()',
        [id],
      );
    }
    return consolidateAll(db, ids.length);
  });
}

async function consolidateAll(db: Db, runsNow: number): Promise<ConsolidationResult> {
  const rows = await db.query<EpisodeRow>(
    `select * from (select * from memory_episodes order by id desc limit ${MAX_EPISODES}) e order by id`,
  );
  const episodes = rows.rows.map(episodeOf);
  const episodeId = new Map(rows.rows.map((r) => [`${r.workflow_id}\u0000${r.iteration}`, Number(r.id)]));
  const wfs = [...new Set(episodes.map((e) => e.workflowId))];
  const ends: RunEnd[] = [];
  for (const wf of wfs) {
    const j = await runJournal(db, wf);
    if (j.end) ends.push(j.end);
  }
  const forgotten = new Set(
    (await db.query<{ scope: string; kind: string; signature: string }>('select scope, kind, signature from memory_forgotten')).rows.map(
      (r) => forgetKey(r.scope || null, r.kind as 'pattern', r.signature),
    ),
  );
  const out = consolidate(episodes, ends, forgotten);

  const patternId = new Map<string, number>();
  for (const p of out.patterns) {
    const r = await db.query<{ id: string }>(
      `insert into memory_patterns (repo, kind, signature, topic, title, body, keywords, evidence, runs, first_seen, last_seen, importance) values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
       on conflict (scope, kind, signature) do update set topic = excluded.topic, title = excluded.title, body = excluded.body, keywords = excluded.keywords, evidence = excluded.evidence,
         runs = excluded.runs, first_seen = excluded.first_seen, last_seen = excluded.last_seen, importance = least(1, excluded.importance + 0.02 * memory_patterns.access_count), updated_at = now()
       returning id`,
      [
        p.repo,
        p.kind,
        p.signature,
        p.topic,
        p.title,
        p.body,
        JSON.stringify(p.keywords),
        p.evidence,
        p.runs,
        p.firstSeen || null,
        p.lastSeen || null,
        p.importance,
      ],
    );
    patternId.set(`${p.repo ?? ''}\u0000${p.kind}\u0000${p.signature}`, Number(r.rows[0]?.id));
  }
  // What consolidation no longer makes (its episodes forgotten) goes.
  const keep = [...patternId.values()];
  await db.query('delete from memory_patterns where not imported and not (id = any($1))', [keep]);
  const skillIds: number[] = [];
  for (const s of out.skills) {
    const r = await db.query<{ id: string }>(
      `insert into memory_skills (repo, task_kind, title, steps, keywords, evidence, importance, from_runs) values ($1,$2,$3,$4,$5,$6,$7,$8)
       on conflict (scope, task_kind) do update set title = excluded.title, steps = excluded.steps, keywords = excluded.keywords, evidence = excluded.evidence,
         importance = least(1, excluded.importance + 0.02 * memory_skills.access_count), from_runs = excluded.from_runs, updated_at = now()
       returning id`,
      [s.repo, s.taskKind, s.title, JSON.stringify(s.steps), JSON.stringify(s.keywords), s.evidence, s.importance, JSON.stringify(s.from)],
    );
    skillIds.push(Number(r.rows[0]?.id));
  }
  await db.query('delete from memory_skills where not imported and not (id = any($1))', [skillIds]);

  // The judge's links (its merges) stay while both items do; consolidation's own are made again.
  await db.query('delete from memory_links where not judged');
  await db.query(
    `delete from memory_links l where judged and (not exists (select 1 from memory_patterns p where p.id = l.from_id) or not exists (select 1 from memory_patterns p where p.id = l.to_id))`,
  );
  await db.query(
    'update memory_patterns p set merged_into = null where merged_into is not null and not exists (select 1 from memory_patterns k where k.id = p.merged_into)',
  );
  const rowsOf: [string, string, number, string, number][] = [];
  const link = (relation: string, fromKind: string, fromId: number | undefined, toKind: string, toId: number | undefined): void => {
    if (fromId && toId) rowsOf.push([relation, fromKind, fromId, toKind, toId]);
  };
  for (const p of out.patterns) {
    const from = patternId.get(`${p.repo ?? ''}\u0000${p.kind}\u0000${p.signature}`);
    if (p.repo === null) continue; // its derivation is from the repositories' patterns (below)
    for (const e of p.from) link('derived_from', 'pattern', from, 'episode', episodeId.get(`${e.workflowId}\u0000${e.iteration}`));
  }
  for (const l of out.links) {
    link(
      l.relation,
      'pattern',
      patternId.get(`${l.from.repo ?? ''}\u0000${l.from.kind}\u0000${l.from.signature}`),
      'pattern',
      patternId.get(`${l.to.repo ?? ''}\u0000${l.to.kind}\u0000${l.to.signature}`),
    );
  }
  // One statement for all of them (thousands of links one by one took seconds).
  const inserted = rowsOf.length
    ? await db.query(
        `insert into memory_links (relation, from_kind, from_id, to_kind, to_id)
         select * from unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[]) on conflict do nothing`,
        [rowsOf.map((r) => r[0]), rowsOf.map((r) => r[1]), rowsOf.map((r) => r[2]), rowsOf.map((r) => r[3]), rowsOf.map((r) => r[4])],
      )
    : { rowCount: 0 };
  const links = inserted.rowCount ?? 0;
  return {
    runs: runsNow,
    episodes: episodes.length,
    patterns: out.patterns.filter((p) => p.kind === 'pattern').length,
    antiPatterns: out.patterns.filter((p) => p.kind === 'anti_pattern').length,
    skills: out.skills.length,
    links,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading and editing (vigil memory, the MCP tool, the console)

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
    'select relation, from_kind, from_id, to_kind, to_id from memory_links where (from_kind = $1 and from_id = $2) or (to_kind = $1 and to_id = $2) order by relation, to_id',
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
 * activities/memory-rank.ts; lexical, no embeddings), then importance.
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
 * As retrieval ranks (workflows/decisions/memory-retrieval.ts, `relevance`): the match (the best
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

async function allItems(db: Db): Promise<{ items: StoredItem[] }> {
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

/**
 * Forgets an item for good: a pattern or skill is deleted and remembered as forgotten, so no
 * later consolidation makes it again; an episode is deleted (and consolidation rebuilds what
 * was derived from it). Returns what was forgotten, or null when there is no such item.
 */
export async function forgetMemory(
  url: string,
  kind: MemoryKindName,
  id: number,
): Promise<{ kind: string; id: number; title: string } | null> {
  return inTransaction(url, async (db) => {
    await db.query('select pg_advisory_xact_lock($1)', [CONSOLIDATION_LOCK_KEY]);
    if (kind === 'pattern') {
      const r = await db.query<{ scope: string; kind: string; signature: string; title: string }>(
        'delete from memory_patterns where id = $1 returning scope, kind, signature, title',
        [id],
      );
      const row = r.rows[0];
      if (!row) return null;
      await db.query('insert into memory_forgotten (scope, kind, signature) values ($1, $2, $3) on conflict do nothing', [
        row.scope,
        row.kind,
        row.signature,
      ]);
      await db.query("delete from memory_links where (from_kind = 'pattern' and from_id = $1) or (to_kind = 'pattern' and to_id = $1)", [
        id,
      ]);
      return { kind: row.kind, id, title: row.title };
    }
    if (kind === 'skill') {
      const r = await db.query<{ scope: string; task_kind: string; title: string }>(
        'delete from memory_skills where id = $1 returning scope, task_kind, title',
        [id],
      );
      const row = r.rows[0];
      if (!row) return null;
      await db.query("insert into memory_forgotten (scope, kind, signature) values ($1, 'skill', $2) on conflict do nothing", [
        row.scope,
        row.task_kind,
      ]);
      return { kind: 'skill', id, title: row.title };
    }
    const r = await db.query<{ workflow_id: string; iteration: number }>(
      'delete from memory_episodes where id = $1 returning workflow_id, iteration',
      [id],
    );
    const row = r.rows[0];
    if (!row) return null;
    await db.query("delete from memory_links where to_kind = 'episode' and to_id = $1", [id]);
    // Its run is not consolidated into episodes again (its journal is still there): only this episode goes.
    await db.query('delete from memory_traces where workflow_id = $1 and iteration = $2', [row.workflow_id, row.iteration]);
    return { kind: 'episode', id, title: `${row.workflow_id} iteration ${row.iteration}` };
  });
}

/** A repository's memory (null: the whole installation's) as a file's content. */
export async function exportMemory(db: Db, repoPath: string | null, now: Date = new Date()): Promise<MemoryExport> {
  const repo = repoPath ? repoKey(repoPath) : null;
  const where = repo ? 'where repo = $1' : '';
  const args = repo ? [repo] : [];
  const eps = await db.query<EpisodeRow>(`select * from memory_episodes ${where} order by id`, args);
  const pats = await db.query<{
    id: string;
    repo: string | null;
    kind: Pattern['kind'];
    signature: string;
    topic: string;
    title: string;
    body: string;
    keywords: string[];
    evidence: number;
    runs: number;
    first_seen: Date | null;
    last_seen: Date | null;
    importance: number;
  }>(`select * from memory_patterns ${where} order by id`, args);
  const skills = await db.query<{
    repo: string | null;
    task_kind: string;
    title: string;
    steps: string[];
    keywords: string[];
    evidence: number;
    importance: number;
    from_runs: string[];
  }>(`select * from memory_skills ${where} order by id`, args);
  const byId = new Map(pats.rows.map((p) => [Number(p.id), p]));
  const epById = new Map(eps.rows.map((e) => [Number(e.id), e]));
  const linkRows = await db.query<{ relation: PatternLink['relation']; from_id: string; to_kind: string; to_id: string }>(
    "select relation, from_id, to_kind, to_id from memory_links where from_kind = 'pattern'",
  );
  const derived = new Map<number, { workflowId: string; iteration: number }[]>();
  const links: PatternLink[] = [];
  for (const l of linkRows.rows) {
    const from = byId.get(Number(l.from_id));
    if (!from) continue;
    if (l.to_kind === 'episode') {
      const e = epById.get(Number(l.to_id));
      if (e)
        derived.set(Number(l.from_id), [...(derived.get(Number(l.from_id)) ?? []), { workflowId: e.workflow_id, iteration: e.iteration }]);
      continue;
    }
    const to = byId.get(Number(l.to_id));
    if (to)
      links.push({
        relation: l.relation,
        from: { repo: from.repo, kind: from.kind, signature: from.signature },
        to: { repo: to.repo, kind: to.kind, signature: to.signature },
      });
  }
  return MemoryExportSchema.parse({
    vigilMemory: 1,
    repo,
    exportedAt: now.toISOString(),
    episodes: eps.rows.map(episodeOf),
    patterns: pats.rows.map((p) => ({
      repo: p.repo,
      kind: p.kind,
      signature: p.signature,
      topic: p.topic,
      title: p.title,
      body: p.body,
      keywords: p.keywords,
      evidence: p.evidence,
      runs: p.runs,
      firstSeen: p.first_seen ? p.first_seen.toISOString() : null,
      lastSeen: p.last_seen ? p.last_seen.toISOString() : null,
      importance: Math.min(1, p.importance),
      from: (derived.get(Number(p.id)) ?? []).slice(0, 200),
    })),
    skills: skills.rows.map((s) => ({
      repo: s.repo,
      taskKind: s.task_kind,
      title: s.title,
      steps: s.steps,
      keywords: s.keywords,
      evidence: s.evidence,
      importance: Math.min(1, s.importance),
      from: s.from_runs,
    })),
    links,
  });
}

/**
 * A memory file into the store: its episodes, patterns and skills (the ones already there are
 * updated), under `intoRepo` when given (another checkout of the same repository), its
 * secrets redacted again. Items forgotten here stay forgotten.
 */
export async function importMemory(
  url: string,
  raw: unknown,
  intoRepo: string | null = null,
): Promise<{ episodes: number; patterns: number; skills: number }> {
  const data = MemoryExportSchema.parse(raw);
  const to = intoRepo ? repoKey(intoRepo) : null;
  const re = <T extends { repo: string | null }>(x: T): T => (to && x.repo !== null ? { ...x, repo: to } : x);
  const red = (s: string, n: number): string => clean(s, n);
  return inTransaction(url, async (db) => {
    await db.query('select pg_advisory_xact_lock($1)', [CONSOLIDATION_LOCK_KEY]);
    const forgotten = new Set(
      (await db.query<{ scope: string; kind: string; signature: string }>('select scope, kind, signature from memory_forgotten')).rows.map(
        (r) => `${r.scope}\u0000${r.kind}\u0000${r.signature}`,
      ),
    );
    const episodes = data.episodes.map((e) =>
      EpisodeSchema.parse({
        ...re(e),
        summary: e.summary ? red(e.summary, 300) : null,
        errors: e.errors.map((x) => red(x, 300)),
        findings: e.findings.map((x) => red(x, 300)),
        councilReasons: e.councilReasons.map((x) => red(x, 300)),
      }),
    );
    await upsertEpisodes(db, episodes as Episode[]);
    let patterns = 0;
    for (const p0 of data.patterns.map(re)) {
      const p = PatternSchema.parse({ ...p0, title: red(p0.title, 300), body: red(p0.body, 2000) });
      if (forgotten.has(`${p.repo ?? ''}\u0000${p.kind}\u0000${p.signature}`)) continue;
      const r = await db.query(
        `insert into memory_patterns (repo, kind, signature, topic, title, body, keywords, evidence, runs, first_seen, last_seen, importance, imported) values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,true)
         on conflict (scope, kind, signature) do update set title = excluded.title, body = excluded.body, keywords = excluded.keywords, evidence = greatest(memory_patterns.evidence, excluded.evidence), runs = greatest(memory_patterns.runs, excluded.runs), updated_at = now()`,
        [
          p.repo,
          p.kind,
          p.signature,
          p.topic,
          p.title,
          p.body,
          JSON.stringify(p.keywords),
          p.evidence,
          p.runs,
          p.firstSeen,
          p.lastSeen,
          p.importance,
        ],
      );
      patterns += r.rowCount ?? 0;
    }
    let skills = 0;
    for (const s0 of data.skills.map(re)) {
      const s: Skill = SkillSchema.parse({ ...s0, steps: s0.steps.map((x) => red(x, 300)) });
      if (forgotten.has(`${s.repo ?? ''}\u0000skill\u0000${s.taskKind}`)) continue;
      const r = await db.query(
        `insert into memory_skills (repo, task_kind, title, steps, keywords, evidence, importance, from_runs, imported) values ($1,$2,$3,$4,$5,$6,$7,$8,true)
         on conflict (scope, task_kind) do update set steps = excluded.steps, title = excluded.title, evidence = greatest(memory_skills.evidence, excluded.evidence), updated_at = now()`,
        [
          s.repo,
          s.taskKind,
          s.title,
          JSON.stringify(s.steps),
          JSON.stringify(s.keywords),
          s.evidence,
          s.importance,
          JSON.stringify(s.from),
        ],
      );
      skills += r.rowCount ?? 0;
    }
    return { episodes: episodes.length, patterns, skills };
  });
}

// The worker's journal writer consolidates a run's memory as soon as the run's outcome is stored
// (activities/event-store.ts says why that moment cannot race the workflow).
onRunEnded(async (url, workflowId) => {
  await consolidateMemory(url, [workflowId]);
});
