/**
 * The lasting memory edited and moved: `vigil memory forget`, `export` and `import`.
 */
import {
  EpisodeSchema,
  MemoryExportSchema,
  PatternSchema,
  SkillSchema,
  type Episode,
  type MemoryExport,
  type Pattern,
  type PatternLink,
  type Skill,
} from '../schemas/lasting-memory.js';
import { clean } from '../rules/lasting-memory.js';
import { type Db } from './event-store.js';
import { CONSOLIDATION_LOCK_KEY, repoKey, inTransaction, episodeOf, type EpisodeRow } from './memory-store.js';
import { upsertEpisodes } from './memory-consolidation.js';
import type { MemoryKindName } from './memory-reads.js';

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
      await db.query("delete from memory_links where (from_kind = 'skill' and from_id = $1) or (to_kind = 'skill' and to_id = $1)", [id]);
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
    // A skill end (`supports`) is made again by consolidation from the episodes: not exported.
    const to = l.to_kind === 'pattern' ? byId.get(Number(l.to_id)) : undefined;
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
        `insert into memory_patterns (repo, kind, signature, topic, title, body, keywords, evidence, runs, first_seen, last_seen, importance,
          imported) values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,true)
         on conflict (scope, kind, signature) do update set title = excluded.title, body = excluded.body, keywords = excluded.keywords,
           evidence = greatest(memory_patterns.evidence, excluded.evidence), runs = greatest(memory_patterns.runs, excluded.runs),
           updated_at = now()`,
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
         on conflict (scope, task_kind) do update set steps = excluded.steps, title = excluded.title, evidence = greatest(memory_skills.evidence,
           excluded.evidence), updated_at = now()`,
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
