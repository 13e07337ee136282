/**
 * The memory judge (docs/memory.md, Judgement; rules in rules/memory-judge.ts): as a
 * run ends with the event store on, after its journal is flushed, this activity makes sure the
 * run is consolidated, picks the patterns and anti-patterns the run made or changed and their
 * near-duplicates, and — when there is something to judge — asks the run's agent (role `memory`,
 * a reviewing call: read-only, in the sandbox, its files kept outside the repository) for a
 * lesson per item and the merges of near-duplicates. A valid answer is applied in one
 * transaction under the consolidation lock (the lesson on the item; a merge as a `supersedes`
 * link from the item kept, the merged one no longer retrieved); any other answer changes nothing
 * and is logged. What the call cost is stored per run in `memory_judgements`, which `vigil
 * report` and `vigil memory list` show.
 *
 * Idempotent: a retry applies the same answer again (lessons overwrite, links do nothing twice);
 * the agent may be asked twice after a lost worker, like any reviewing call.
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { JudgeMemoryInputSchema, type JudgeMemoryInput } from '../schemas/memory-judge.js';
import type { MemoryJudgement } from '../schemas/lasting-memory.js';
import { costOf } from '../rules/budget.js';
import {
  judgePrompt,
  judgeSelection,
  parseJudgeAnswer,
  type JudgeItem,
  type JudgePlan,
  type JudgeSelection,
} from '../rules/memory-judge.js';
import { runAgent } from './agent.js';
import { ensureMigrated, poolFor, workerStoreUrl, type Db } from '../lib/event-store.js';
import { consolidateMemory } from '../lib/memory-consolidation.js';
import { CONSOLIDATION_LOCK_KEY, inTransaction, repoKey } from '../lib/memory-store.js';
import { readRegularFile } from '../lib/safe-files.js';

interface Row {
  id: string;
  repo: string | null;
  kind: 'pattern' | 'anti_pattern';
  title: string;
  body: string;
  keywords: string[];
  lesson: string | null;
}
const itemOf = (r: Row): JudgeItem => ({
  id: Number(r.id),
  repo: r.repo,
  kind: r.kind,
  title: r.title,
  body: r.body,
  keywords: r.keywords,
  lesson: r.lesson,
});
const COLUMNS = 'p.id, p.repo, p.kind, p.title, p.body, p.keywords, p.lesson';

/** The run's items (derived from its episodes, and the installation-wide ones derived from those) and every candidate of their scopes. */
async function itemsOf(db: Db, workflowId: string, repo: string): Promise<{ changed: JudgeItem[]; all: JudgeItem[] }> {
  const own = await db.query<Row>(
    `select distinct ${COLUMNS} from memory_patterns p
       join memory_links l on l.relation = 'derived_from' and l.from_kind = 'pattern' and l.from_id = p.id and l.to_kind = 'episode'
       join memory_episodes e on e.id = l.to_id
     where e.workflow_id = $1 and p.merged_into is null`,
    [workflowId],
  );
  const ids = own.rows.map((r) => Number(r.id));
  const across = ids.length
    ? await db.query<Row>(
        `select distinct ${COLUMNS} from memory_patterns p join memory_links l on l.relation = 'derived_from' and l.from_kind = 'pattern' and
          l.from_id = p.id and l.to_kind = 'pattern'
         where l.to_id = any($1) and p.merged_into is null`,
        [ids],
      )
    : { rows: [] };
  const all = await db.query<Row>(
    `select ${COLUMNS} from memory_patterns p where (p.repo = $1 or p.repo is null) and p.merged_into is null order by p.id`,
    [repo],
  );
  return { changed: [...own.rows, ...across.rows].map(itemOf), all: all.rows.map(itemOf) };
}

/** What a run's judgement is shown, from the store: the run consolidated first when its end did not get to it. */
export async function selectForJudgement(url: string, runId: string, repoPath: string): Promise<JudgeSelection> {
  await ensureMigrated(url);
  const db = poolFor(url);
  // The run's end consolidated it (the journal writer's hook); a store that was slow then is caught up here.
  const done = await db.query('select 1 from memory_consolidations where workflow_id = $1', [runId]);
  if (!done.rowCount) await consolidateMemory(url, [runId]);
  const { changed, all } = await itemsOf(db, runId, repoKey(repoPath));
  return judgeSelection(changed, all);
}

/** The answer as the call left it: the readable transcript of a CLI that prints JSON, else the log (without its header line). */
function answerText(logPath: string): string {
  const transcript = readRegularFile(logPath.replace(/\.log$/, '.transcript.md'), 1024 * 1024);
  if (transcript?.ok) return transcript.text;
  const log = readRegularFile(logPath, 1024 * 1024);
  return log?.ok ? log.text.replace(/^=== vigil: .*\n/, '') : '';
}

/** A valid plan into the store, under the consolidation lock; items gone since the call are skipped. */
export async function applyJudgement(
  url: string,
  plan: Extract<JudgePlan, { ok: true }>,
  by: string,
): Promise<{ lessons: number; merges: number }> {
  return inTransaction(url, async (db) => {
    await db.query('select pg_advisory_xact_lock($1)', [CONSOLIDATION_LOCK_KEY]);
    let lessons = 0;
    for (const l of plan.lessons) {
      const r = await db.query('update memory_patterns set lesson = $2, lesson_by = $3 where id = $1', [l.id, l.lesson, by]);
      lessons += r.rowCount ?? 0;
    }
    let merges = 0;
    for (const m of plan.merges) {
      for (const id of m.merge) {
        const r = await db.query(
          'update memory_patterns set merged_into = $2 where id = $1 and exists (select 1 from memory_patterns where id = $2)',
          [id, m.keep],
        );
        if (!r.rowCount) continue;
        // Both sides of the merge, as consolidation draws them (rules/memory-links.ts).
        await db.query(
          `insert into memory_links (relation, from_kind, from_id, to_kind, to_id, judged)
           values ('supersedes', 'pattern', $1, 'pattern', $2, true), ('superseded_by', 'pattern', $2, 'pattern', $1, true)
           on conflict (relation, from_kind, from_id, to_kind, to_id) do update set judged = true`,
          [m.keep, id],
        );
        merges += 1;
      }
    }
    return { lessons, merges };
  });
}

async function record(
  url: string,
  workflowId: string,
  row: {
    provider: string;
    model: string | null;
    items: number;
    lessons: number;
    merges: number;
    calls: number;
    usd: number;
    inputTokens: number;
    outputTokens: number;
    unpriced: boolean;
    problem: string | null;
    logPath: string | null;
  },
): Promise<void> {
  await poolFor(url).query(
    `insert into memory_judgements (workflow_id, provider, model, items, lessons, merges, calls, usd, input_tokens, output_tokens, unpriced,
      problem, log_path) values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)
     on conflict (workflow_id) do update set judged_at = now(), provider = excluded.provider, model = excluded.model, items = excluded.items,
       lessons = excluded.lessons, merges = excluded.merges,
       calls = excluded.calls, usd = excluded.usd, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
         unpriced = excluded.unpriced, problem = excluded.problem, log_path = excluded.log_path`,
    [
      workflowId,
      row.provider,
      row.model,
      row.items,
      row.lessons,
      row.merges,
      row.calls,
      row.usd,
      row.inputTokens,
      row.outputTokens,
      row.unpriced,
      row.problem,
      row.logPath,
    ],
  );
}

const warn = (message: string, meta: Record<string, unknown>): void => {
  try {
    Context.current().log.warn(message, meta);
  } catch {
    // Outside an activity (tests): nobody to tell.
  }
};

/** The activity: judge what the run made or changed of the lasting memory. Never fails the run: trouble is its result's `problem`. */
export async function judgeMemory(raw: JudgeMemoryInput): Promise<MemoryJudgement> {
  const input = JudgeMemoryInputSchema.parse(raw);
  const none = (problem: string | null, items = 0): MemoryJudgement => ({
    called: false,
    items,
    lessons: 0,
    merges: 0,
    costUsd: 0,
    problem,
  });
  const { url } = workerStoreUrl();
  if (!url) return none('no event store on this worker');
  let selection: JudgeSelection;
  try {
    selection = await selectForJudgement(url, input.runId, input.repoPath);
  } catch (err) {
    return none(`event store: ${err instanceof Error ? err.message : String(err)}`.slice(0, 1000));
  }
  if (!selection.worthACall) return none(null, selection.items.length);
  if (input.remainingBudgetUsd !== null && input.remainingBudgetUsd <= 0)
    return none('the run spent its budget: no judgement', selection.items.length);

  const result = await runAgent({
    ...input,
    role: 'memory',
    phase: 'REFLECT',
    tier: 'fast',
    prompt: judgePrompt(selection),
    completionPromise: '',
    tailOnFailure: true,
  });
  const usage = result.usage ?? null;
  const costUsd = usage ? costOf(usage) : 0;
  let plan: JudgePlan =
    result.exitCode !== 0
      ? { ok: false, error: `the memory agent exited with ${result.exitCode}${result.timedOut ? ' (timed out)' : ''}` }
      : parseJudgeAnswer(answerText(result.logPath), selection.items);
  let applied = { lessons: 0, merges: 0 };
  if (plan.ok) {
    try {
      applied = await applyJudgement(url, plan, input.runId);
    } catch (err) {
      plan = { ok: false, error: `event store: ${err instanceof Error ? err.message : String(err)}`.slice(0, 1000) };
    }
  }
  const problem = plan.ok ? null : plan.error;
  if (problem) warn('memory judgement changed nothing', { problem, log: result.logPath });
  await record(url, input.runId, {
    provider: input.provider ?? 'command',
    model: result.model ?? null,
    items: selection.items.length,
    ...applied,
    calls: 1,
    usd: costUsd,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    unpriced: usage === null,
    problem,
    logPath: path.resolve(result.logPath),
  }).catch((err: unknown) => warn('memory judgement not recorded', { error: err instanceof Error ? err.message : String(err) }));
  return { called: true, items: selection.items.length, ...applied, costUsd, problem };
}
