/**
 * `vigil rejudge [id...] [--all] [--from <file|dir>...] [--set knob=value...] [--json] [--export <dir>]`:
 * each recorded completion check judged again by today's rules (rules/rejudge.ts),
 * from what was recorded — the run's journal in the event store, the knobs and start tree in its
 * Temporal history, the trees its checks judged in its repository (checkpoint refs) — and never
 * an agent call. `--from` reads recorded runs from files (the suite's corpus, or an `--export`).
 *
 * Exit codes: 0 (flips or not: the report says), 2 bad flags or files, 3 no such run in the
 * store, 4 no store or unreachable.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import type pg from 'pg';
import { git, readAtTree, refTarget } from '../lib/git.js';
import { EventEnvelopeSchema, type EventEnvelope } from '../schemas/events.js';
import { KNOB_NAMES, type Knobs } from '../schemas/knobs.js';
import {
  MAX_RECORDED_FILE_CHARS,
  MAX_RECORDED_FILES,
  RecordedRunSchema,
  type RecordedRun,
  type RecordedTree,
  type RejudgedRun,
  type RejudgeReport,
} from '../schemas/rejudge.js';
import { checkpointRef } from '../rules/checkpoints.js';
import { recordedChecks, rejudgeRun } from '../rules/rejudge.js';
import { resolveKnobs } from './config.js';
import { CliError, EXIT } from './errors.js';
import { withEventStore } from './event-store-client.js';

export interface RejudgeFlags {
  all?: boolean;
  from?: string[];
  set?: string[];
  json?: boolean;
  export?: string;
}

export interface RejudgeIo {
  out: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** The Temporal client for the runs' histories; null: none (knobs and start trees unknown). */
  client: () => Promise<{ client: Client; close: () => Promise<void> } | null>;
}

/** `--set k=v` entries as knob values (validated as `vigil start` does); only the knobs they name. */
export function parseSets(sets: readonly string[]): Partial<Knobs> {
  if (sets.length === 0) return {};
  const resolved = resolveKnobs({
    flags: {},
    sets: [...sets],
    env: {},
    cwd: path.join(os.tmpdir(), `vigil-rejudge-no-config-${process.pid}`),
  });
  const named = new Set(sets.map((s) => s.slice(0, s.indexOf('=')).trim()));
  return Object.fromEntries(KNOB_NAMES.filter((k) => named.has(k)).map((k) => [k, resolved.knobs[k]])) as Partial<Knobs>;
}

/** Recorded runs from files: a file, or every `*.json` of a folder, in name order. */
export function readRecordedRuns(paths: readonly string[]): RecordedRun[] {
  const files = paths.flatMap((p) => {
    if (!statSync(p, { throwIfNoEntry: false })) throw new CliError(`--from ${p}: no such file or folder`, EXIT.usage);
    if (!statSync(p).isDirectory()) return [p];
    return readdirSync(p)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => path.join(p, f));
  });
  return files.map((f) => {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(f, 'utf8'));
    } catch (err) {
      throw new CliError(
        `${f}: not JSON (${(err as Error).message.slice(0, 200)}); a recorded run is what \`vigil rejudge --export\` writes`,
        EXIT.usage,
      );
    }
    const parsed = RecordedRunSchema.safeParse(raw);
    if (!parsed.success)
      throw new CliError(
        `${f}: not a recorded run (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`,
        EXIT.usage,
      );
    return parsed.data;
  });
}

/** A run's journal from the store (rows the store set aside as invalid left out). */
async function journalOf(db: pg.Client, workflowId: string): Promise<EventEnvelope[]> {
  const rows = (
    await db.query<{ run_id: string; seq: number; at: Date | string; data: unknown; kind: string }>(
      'select run_id, seq, at, kind, data from run_events where workflow_id = $1 order by seq, at, run_id',
      [workflowId],
    )
  ).rows;
  return rows.flatMap((r) => {
    const e = EventEnvelopeSchema.safeParse({ seq: Number(r.seq), runId: r.run_id, at: new Date(r.at).toISOString(), event: r.data });
    return r.kind !== 'invalid' && e.success ? [e.data] : [];
  });
}

/** The knobs a run was started with (as its input held them) and its start tree, from its Temporal history; nulls when it is gone. */
export async function fromHistory(
  client: Client,
  workflowId: string,
): Promise<{ knobs: Record<string, unknown> | null; startTree: string | null }> {
  const conv = client.options.loadedDataConverter;
  let knobs: Record<string, unknown> | null = null;
  let startTree: string | null = null;
  const scheduled = new Set<string>();
  let token: Uint8Array | undefined;
  try {
    do {
      const page = await client.workflowService.getWorkflowExecutionHistory({
        namespace: client.options.namespace,
        execution: { workflowId },
        ...(token ? { nextPageToken: token } : {}),
      });
      for (const ev of page.history?.events ?? []) {
        const started = ev.workflowExecutionStartedEventAttributes;
        if (started) {
          const input = (await decodeFromPayloadsAtIndex<unknown>(conv, 0, started.input?.payloads)) as {
            knobs?: Record<string, unknown>;
            state?: { runStart?: { treeHash?: string } | null };
          } | null;
          knobs = input?.knobs ?? null;
          startTree = input?.state?.runStart?.treeHash ?? null;
        }
        const s = ev.activityTaskScheduledEventAttributes;
        if (s?.activityType?.name === 'prepareRun') scheduled.add(String(ev.eventId));
        const done = ev.activityTaskCompletedEventAttributes;
        if (done && startTree === null && scheduled.has(String(done.scheduledEventId))) {
          const r = (await decodeFromPayloadsAtIndex<unknown>(conv, 0, done.result?.payloads)) as { treeHash?: string } | null;
          startTree = r?.treeHash ?? null;
        }
      }
      token = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
    } while (token);
  } catch {
    return { knobs, startTree };
  }
  return { knobs, startTree };
}

/** The tree a check judged (its iteration's checkpoint), with every file changed since the start; null when the repository lacks it. */
export async function recordTree(repo: string, workflowId: string, iteration: number, startTree: string): Promise<RecordedTree | null> {
  const tree = await refTarget(repo, `${checkpointRef(workflowId, iteration)}^{tree}`).catch(() => null);
  if (!tree) return null;
  let names: string[];
  try {
    names = (await git(repo, ['diff', '--no-renames', '--no-ext-diff', '--name-only', '-z', startTree, tree])).split('\0').filter(Boolean);
  } catch {
    return null;
  }
  let incomplete = names.length > MAX_RECORDED_FILES;
  const deltas: RecordedTree['deltas'] = [];
  for (const file of names.slice(0, MAX_RECORDED_FILES)) {
    const [before, after] = await Promise.all([readAtTree(repo, startTree, file), readAtTree(repo, tree, file)]);
    const text = (s: string | null): boolean => s === null || (s.length <= MAX_RECORDED_FILE_CHARS && !s.includes('\0'));
    if (!text(before) || !text(after)) {
      incomplete = true;
      continue;
    }
    deltas.push({ file, before, after });
  }
  return { iteration, tree, deltas, incomplete };
}

/** A run as recorded: its journal, and what its history and repository still hold. */
async function recordRun(db: pg.Client, client: Client | null, workflowId: string): Promise<RecordedRun | null> {
  const events = await journalOf(db, workflowId);
  if (events.length === 0) return null;
  const h = client ? await fromHistory(client, workflowId) : { knobs: null, startTree: null };
  const started = events.find((e) => e.event.kind === 'run_started')?.event;
  const repo = started?.kind === 'run_started' ? started.repoPath : null;
  const trees: RecordedTree[] = [];
  if (repo && h.startTree) {
    const iterations = [...new Set(recordedChecks(events.map((e) => e.event)).map((c) => c.iteration))];
    for (const it of iterations) {
      const t = await recordTree(repo, workflowId, it, h.startTree);
      if (t) trees.push(t);
    }
  }
  return RecordedRunSchema.parse({ version: 1, workflowId, knobs: h.knobs, events, startTree: h.startTree, trees });
}

/** Every run the report covers, with its re-judgement. */
export function rejudgeAll(runs: readonly RecordedRun[], set: Partial<Knobs>): RejudgeReport {
  const judged = runs.map((r) => rejudgeRun(r, set));
  return {
    set: { ...set },
    runs: judged,
    checks: judged.reduce((n, r) => n + r.checks.length, 0),
    flips: judged.reduce((n, r) => n + r.flips, 0),
    needsNewJudgement: judged.reduce((n, r) => n + r.needsNewJudgement, 0),
  };
}

const show = (v: unknown): string => (v === null ? 'absent' : JSON.stringify(v));

function runLines(r: RejudgedRun): string[] {
  const lines = [
    `${r.workflowId} (${r.outcome ?? 'running'}): ${r.checks.length} check(s), ${r.flips} flip(s), ${r.needsNewJudgement} need(s) a new judgement`,
  ];
  if (r.knobChanges.length) lines.push(`  knobs: ${r.knobChanges.map((c) => `${c.knob} ${show(c.recorded)} → ${show(c.now)}`).join(', ')}`);
  for (const c of r.checks) {
    const at = `iteration ${c.iteration} (${c.trigger}${c.round !== null ? `, round ${c.round}` : ''})`;
    const was = `${c.recorded.verdict}${c.recorded.by ? ` by ${c.recorded.by}` : ''}`;
    const now = c.now.verdict === 'needs_new_judgement' ? 'needs a new judgement' : c.now.verdict;
    const mark = c.flipped ? 'FLIP' : c.now.verdict === 'needs_new_judgement' ? 'NEW ' : 'same';
    lines.push(`  ${mark} ${at}: ${was} → ${now}${c.now.by && c.now.verdict !== 'approved' ? ` by ${c.now.by}` : ''}: ${c.now.reason}`);
    for (const n of c.notes) lines.push(`       note: ${n}`);
  }
  return lines;
}

/** The report as text: one block per run, then the totals. */
export function rejudgeText(r: RejudgeReport): string {
  const set = Object.entries(r.set).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  const head =
    `rejudged ${r.runs.length} run(s) by today's rules${set.length ? ` with ${set.join(', ')}` : ''} (each under its own knobs, ` +
    `today's defaults for those it did not have)`;
  const body = r.runs.flatMap(runLines);
  return `${[head, ...body, `total: ${r.checks} check(s), ${r.flips} flip(s), ${r.needsNewJudgement} need(s) a new judgement`].join('\n')}\n`;
}

export async function rejudgeCommand(ids: readonly string[], opts: RejudgeFlags, io: RejudgeIo): Promise<number> {
  if (ids.length === 0 && !opts.all && !opts.from?.length)
    throw new CliError(
      'name the runs to rejudge (ids), --all for every run in the event store, or --from <file|dir> for recorded runs',
      EXIT.usage,
    );
  if (opts.all && ids.length) throw new CliError('--all rejudges every run in the store: leave the ids out, or --all out', EXIT.usage);
  const set = parseSets(opts.set ?? []);
  const runs: RecordedRun[] = opts.from?.length ? readRecordedRuns(opts.from) : [];
  if (ids.length || opts.all) {
    const temporal = await io.client().catch(() => null);
    try {
      const fromStore = await withEventStore(io.env, async (db) => {
        const wanted = opts.all
          ? (await db.query<{ workflow_id: string }>('select distinct workflow_id from run_events order by workflow_id')).rows.map(
              (r) => r.workflow_id,
            )
          : [...ids];
        const got: RecordedRun[] = [];
        for (const id of wanted) {
          const r = await recordRun(db, temporal?.client ?? null, id);
          if (!r && !opts.all) throw new CliError(`the event store has no events of run ${id}`, EXIT.noSuchRun);
          if (r) got.push(r);
        }
        return got;
      });
      runs.push(...fromStore);
    } finally {
      await temporal?.close();
    }
  }
  if (opts.export) {
    mkdirSync(opts.export, { recursive: true });
    for (const r of runs)
      writeFileSync(path.join(opts.export, `${r.workflowId.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`), `${JSON.stringify(r, null, 2)}\n`);
  }
  const report = rejudgeAll(runs, set);
  io.out(opts.json ? `${JSON.stringify(report, null, 2)}\n` : rejudgeText(report));
  return 0;
}
