/**
 * Consolidation (docs/memory.md): the journal and the traces of a run into episodes, then every
 * episode of the installation into patterns, anti-patterns, links and skills (the rules in
 * rules/lasting-memory.ts). Run by the worker's journal writer when a run's outcome
 * is stored (the hook in lib/lasting-memory.ts) and by `vigil memory consolidate`.
 */
import { RunEventSchema, type EventEnvelope } from '../schemas/events.js';
import { type Episode, type MemoryRef } from '../schemas/lasting-memory.js';
import { consolidate, episodesOf, forgetKey, type IterationTrace, type RunEnd } from '../rules/lasting-memory.js';
import { type Db } from './event-store.js';
import { CONSOLIDATION_LOCK_KEY, repoKey, inTransaction, episodeOf, type EpisodeRow } from './memory-store.js';

/** Episodes consolidation reads at most (the newest). */
const MAX_EPISODES = 20_000;

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
  'workflow_id, iteration, repo, at, phase, tier, provider, outcome, files, errors, findings, ' +
  'council_reasons, signatures, passed, summary, retrieved, importance, files_read';

export async function upsertEpisodes(db: Db, episodes: readonly Episode[]): Promise<void> {
  for (const e of episodes) {
    await db.query(
      `insert into memory_episodes (${EPISODE_COLUMNS}) values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18)
       on conflict (workflow_id, iteration) do update set repo = excluded.repo, at = excluded.at, phase = excluded.phase, tier = excluded.tier,
         provider = excluded.provider,
         outcome = excluded.outcome, files = excluded.files, errors = excluded.errors, findings = excluded.findings, council_reasons = excluded.council_reasons,
         signatures = excluded.signatures, passed = excluded.passed, summary = excluded.summary, retrieved = excluded.retrieved,
           files_read = excluded.files_read,
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
 * item's access count survives). `unfinished`: the runs are still going (the journal so far), so
 * none is recorded as consolidated.
 */
export async function consolidateMemory(
  url: string,
  workflowIds: readonly string[] | null,
  opts: { unfinished?: boolean } = {},
): Promise<ConsolidationResult> {
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
      // A run still going (an agent's request, docs/memory.md) is not marked done: its end consolidates it whole.
      if (opts.unfinished) continue;
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
      `insert into memory_patterns (repo, kind, signature, topic, title, body, keywords, evidence, runs, first_seen, last_seen,
        importance) values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
       on conflict (scope, kind, signature) do update set topic = excluded.topic, title = excluded.title, body = excluded.body,
         keywords = excluded.keywords, evidence = excluded.evidence,
         runs = excluded.runs, first_seen = excluded.first_seen, last_seen = excluded.last_seen, importance = least(1,
           excluded.importance + 0.02 * memory_patterns.access_count), updated_at = now()
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
  // What consolidation no longer makes (its episodes forgotten) goes; what was imported or stored stays.
  const keep = [...patternId.values()];
  await db.query('delete from memory_patterns where not imported and stored_by is null and not (id = any($1))', [keep]);
  const skillIds: number[] = [];
  const skillId = new Map<string, number>();
  for (const s of out.skills) {
    const r = await db.query<{ id: string }>(
      `insert into memory_skills (repo, task_kind, title, steps, keywords, evidence, importance, from_runs) values ($1,$2,$3,$4,$5,$6,$7,$8)
       on conflict (scope, task_kind) do update set title = excluded.title, steps = excluded.steps, keywords = excluded.keywords, evidence = excluded.evidence,
         importance = least(1, excluded.importance + 0.02 * memory_skills.access_count), from_runs = excluded.from_runs, updated_at = now()
       returning id`,
      [s.repo, s.taskKind, s.title, JSON.stringify(s.steps), JSON.stringify(s.keywords), s.evidence, s.importance, JSON.stringify(s.from)],
    );
    skillIds.push(Number(r.rows[0]?.id));
    skillId.set(`${s.repo}\u0000${s.taskKind}`, Number(r.rows[0]?.id));
  }
  await db.query('delete from memory_skills where not imported and not (id = any($1))', [skillIds]);

  // The judge's links (its merges) stay while both items do; consolidation's own are made again.
  await db.query('delete from memory_links where not judged');
  await db.query(
    `delete from memory_links l where judged and (not exists (select 1 from memory_patterns p where p.id = l.from_id) or not ` +
      `exists (select 1 from memory_patterns p where p.id = l.to_id))`,
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
    const from = patternId.get(`${l.from.repo ?? ''}\u0000${l.from.kind}\u0000${l.from.signature}`);
    if (l.to.kind === 'skill') link(l.relation, 'pattern', from, 'skill', skillId.get(`${l.to.repo}\u0000${l.to.signature}`));
    else link(l.relation, 'pattern', from, 'pattern', patternId.get(`${l.to.repo ?? ''}\u0000${l.to.kind}\u0000${l.to.signature}`));
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
