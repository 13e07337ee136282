/**
 * The memory that outlives a run, in the event store (docs/memory.md; tables in
 * lib/lasting-memory-sql.ts, rules in rules/lasting-memory.ts and
 * memory-retrieval.ts). This module is what the iteration's agent activity (activities/iteration.ts)
 * reads: it retrieves memory into the prompt (`memoryBeforeCall`) and, after the agent, leaves a
 * trace of what the journal does not hold (files changed, errors, the tests' failure line, the
 * agent's summary, all redacted: `memoryAfterCall`). Both are best effort within a few seconds:
 * memory never fails or slows a call for long, and the workflow records nothing new for them.
 * Loading it registers the run-end hook (at the end): the worker's journal writer consolidates a
 * run's memory when it stores the run's outcome. The rest of the memory, one module per audience:
 *
 * - lib/memory-store.ts: the rows as the others read them, the transaction and the lock;
 * - lib/memory-consolidation.ts: the journal and traces into episodes, then patterns,
 *   anti-patterns, links and skills (`consolidateMemory`, also `vigil memory consolidate`);
 * - lib/memory-reads.ts: `vigil memory list|show|search`, the MCP tool, the console's page,
 *   and the snapshot a call searches in its sandbox;
 * - lib/memory-transfer.ts: `vigil memory forget|export|import`.
 */
import { EPISODE_LIMITS, type MemoryLayers, type MemoryRef } from '../schemas/lasting-memory.js';
import { clean, errorLine } from '../rules/lasting-memory.js';
import { retrieve, type Retrieved, type TaskType } from '../rules/memory-retrieval.js';
import { redactSecrets } from '../rules/scans.js';
import { callEconomics, COMPRESSED_ENTRY_CHARS, retrievalActs, REVIEWED_FLOOR, type ReadSide } from '../rules/memory-economics.js';
import { ensureMigrated, onRunEnded, poolFor, type Db } from './event-store.js';
import { rankItems, scoreOf } from './memory-rank.js';
import { readRegularFile } from './safe-files.js';
import { repoKey, inTransaction, candidates } from './memory-store.js';
import { consolidateMemory } from './memory-consolidation.js';

/** Memory's part of an agent call, at most. */
export const MEMORY_CALL_DEADLINE_MS = 3000;

const withDeadline = async <T>(p: Promise<T>, ms: number): Promise<T | null> => {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
};

// ---------------------------------------------------------------------------------------------
// Retrieval and traces (the agent activity)

export interface RetrievalRequest {
  workflowId: string;
  iteration: number;
  repoPath: string;
  /** The task at hand: the PRD, the checklist, the failing gates. */
  task: string;
  /** What the iteration is doing (taskTypeOf); absent: implementation. */
  taskType?: TaskType;
  budgets: MemoryLayers;
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
  // Relevance by full-text score (BM25+, prefix and fuzzy: lib/memory-rank.ts).
  const scores = rankItems(c.items, req.task);
  const items = c.items.map((i) => ({ ...i, textScore: scoreOf(scores, i) }));
  // What the run's last call's token economics asked of this retrieval (rules/memory-economics.ts).
  const last = await db.query<{ economics: { actions?: string[] } | null }>(
    `select economics from memory_traces where workflow_id = $1 and iteration < $2 and economics ? 'actions' order by iteration desc limit 1`,
    [req.workflowId, req.iteration],
  );
  const acts = retrievalActs(last.rows[0]?.economics?.actions ?? []);
  const got = retrieve({
    repo,
    task: req.task,
    ...(req.taskType ? { taskType: req.taskType } : {}),
    budgets: req.budgets,
    items,
    timeline: c.timeline,
    episodes: c.episodes,
    economy: {
      ...(acts.compress ? { entryChars: COMPRESSED_ENTRY_CHARS } : {}),
      ...(acts.strictFloor ? { floorShare: REVIEWED_FLOOR } : {}),
    },
  });
  const read: ReadSide = {
    chars: got.chars,
    entriesLoaded: got.refs.length,
    // Everything loaded whole: each item's entry line, and each earlier run's timeline line.
    availableChars: c.items.reduce((n, i) => n + i.body.length + i.topic.length + 30, 0) + c.timeline.length * 120,
  };
  const acted = [...(acts.compress ? ['compress_layer3'] : []), ...(acts.strictFloor ? ['review_topic_relevance'] : [])];
  await inTransaction(url, async (t) => {
    const first = await t.query(
      `insert into memory_traces (workflow_id, iteration, retrieved, retrieved_chars, economics) values ($1, $2, $3, $4, $5)
       on conflict (workflow_id, iteration) do nothing returning 1`,
      [req.workflowId, req.iteration, JSON.stringify(got.refs), JSON.stringify(got.chars), JSON.stringify({ read, acted })],
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
  /** Files the agent read (lib/files-read.ts). */
  filesRead?: string[];
  /** Characters of the patterns its agent stored (lib/memory-agent.ts): part of what the call added to memory. */
  storedChars?: number;
}

/** After the agent: what the journal does not hold, redacted. Kept with the retrieval's record. */
export async function recordTrace(url: string, t: TraceFacts): Promise<void> {
  await ensureMigrated(url);
  const red = (s: string, n: number): string => clean(s, n);
  const files = t.files.slice(0, 20).map((f) => red(f, 300));
  const errors = t.errors.slice(0, 5).map((e) => red(e, 300));
  const testFailure = t.testFailure ? red(t.testFailure, 300) : null;
  const summary = t.summary ? red(t.summary, 300) : null;
  const filesRead = (t.filesRead ?? []).slice(0, EPISODE_LIMITS.filesRead).map((f) => red(f, EPISODE_LIMITS.fileChars));
  // What the call added to memory (its discovery tokens): this trace's texts and its agent's stored patterns.
  const added =
    [...files, ...errors, testFailure ?? '', summary ?? '', ...filesRead].reduce((n, x) => n + x.length, 0) + (t.storedChars ?? 0);
  await inTransaction(url, async (db) => {
    const r = await db.query<{ economics: { read?: ReadSide } | null }>(
      `insert into memory_traces (workflow_id, iteration, files, errors, test_failure, summary, files_read) values ($1, $2, $3, $4, $5, $6, $7)
       on conflict (workflow_id, iteration) do update set files = excluded.files, errors = excluded.errors, test_failure = excluded.test_failure,
         summary = excluded.summary, files_read = excluded.files_read, recorded_at = now()
       returning economics`,
      [t.workflowId, t.iteration, JSON.stringify(files), JSON.stringify(errors), testFailure, summary, JSON.stringify(filesRead)],
    );
    const economics = callEconomics(r.rows[0]?.economics?.read ?? null, added);
    await db.query(
      `update memory_traces set economics = coalesce(economics, '{}'::jsonb) || $3::jsonb where workflow_id = $1 and iteration = $2`,
      [t.workflowId, t.iteration, JSON.stringify(economics)],
    );
  });
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

// The worker's journal writer consolidates a run's memory as soon as the run's outcome is stored
// (lib/event-store.ts says why that moment cannot race the workflow).
onRunEnded(async (url, workflowId) => {
  await consolidateMemory(url, [workflowId]);
});
