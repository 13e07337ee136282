/**
 * Where the operator console's numbers come from, read the way the CLI reads them:
 * - Temporal's visibility list (the runs, their Vigil search attributes: status, iteration,
 *   repository, provider), as `vigil list` does;
 * - each running run's `status` query, through the CLI's RunApi (`viewRun`, cli/steer.ts);
 * - the run's history for the messages people sent it (accepted updates and signals, with `by`);
 * - files on the run's host (the handoff, the agent log), read as `vigil handoff` and `vigil logs`
 *   read them: one standalone activity on the host's queue (cli/host-read.ts), no workflow;
 * - the event store, where it has the run (VIGIL_DATABASE_URL / DATABASE_URL, else the local one
 *   while it runs): every iteration and decision (cli/report.ts). The console never starts a store.
 */
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import pg from 'pg';
import { CONNECT_TIMEOUT_MS, describeUrl } from '../../lib/event-store.js';
import type { RunEvent } from '../../schemas/events.js';
import { MESSAGE_NAMES as MESSAGE_VERB_NAMES } from '../../schemas/message-verbs.js';
import { hostTaskQueue } from '../../schemas/hosts.js';
import type { ReadRunLogResult } from '../../schemas/logs.js';
import { OUTCOME_STATUSES, type OutcomeStatus } from '../../schemas/run.js';
import { SA_ITERATION, SA_PROVIDER, SA_REPO, SA_STATUS } from '../../schemas/search-attributes.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { redactSecrets } from '../../rules/scans.js';
import { storeLocation } from '../../lib/store-location.js';
import { readOnHost } from '../host-read.js';
import { reportAcrossRuns, type AcrossRunsReport, type PauseEvent } from '../report.js';
import { sdkRunApi } from '../sdk-run-api.js';
import { viewRun, type RunView } from '../steer.js';
import { chartsFromReport, chartsFromSnapshot, waitingFor, type ChartData, type Waiting } from './model.js';
import { reportRun, type RunReport } from '../../lib/run-report.js';

export interface RunRow {
  workflowId: string;
  /** RUNNING, COMPLETED, TERMINATED, ... as Temporal says. */
  temporalStatus: string;
  /**
   * What the run is at: while it runs, Vigil's own status (the VigilStatus search attribute: paused
   * is paused); once it has ended, its outcome (council_approved, force_stopped, …: the attribute's
   * last value), else Temporal's status in lower case (terminated, or a run without the attribute).
   */
  status: string;
  /** The run's outcome once it has ended as Vigil ends a run; null while it runs, or when it ended otherwise (terminated, failed). */
  outcome: OutcomeStatus | null;
  iteration: number | null;
  repo: string | null;
  provider: string | null;
  startTime: string;
  closeTime: string | null;
  /** A run with attempts (`vigil start --attempts K`): its status is what cli/console/attempts-section.ts says of it. */
  attempts?: true;
}

/** `value` when it names an outcome, else null. */
function outcomeStatusOf(value: string | null): OutcomeStatus | null {
  return (OUTCOME_STATUSES as readonly string[]).includes(value ?? '') ? (value as OutcomeStatus) : null;
}

/** Vigil's runs, newest first, from Temporal's visibility list. */
export async function listRuns(
  client: Client,
  o: { limit?: number; runningOnly?: boolean; workflowId?: string; withAttempts?: boolean } = {},
): Promise<RunRow[]> {
  const rows: RunRow[] = [];
  const limit = o.limit ?? 200;
  const types = o.withAttempts ? "(WorkflowType = 'vigilRun' OR WorkflowType = 'vigilAttempts')" : "WorkflowType = 'vigilRun'";
  const query = `${types}${o.runningOnly ? " AND ExecutionStatus = 'Running'" : ''}${o.workflowId ? ` AND WorkflowId = ${JSON.stringify(o.workflowId)}` : ''}`;
  for await (const wf of client.workflow.list({ query })) {
    const sa = wf.typedSearchAttributes;
    const temporalStatus = wf.status.name;
    const vigil = sa.get(SA_STATUS) ?? null;
    // An ended run's last VigilStatus is its outcome (workflows/run/run.ts, publish); Temporal says only COMPLETED.
    const outcome = temporalStatus === 'COMPLETED' ? outcomeStatusOf(vigil) : null;
    rows.push({
      workflowId: wf.workflowId,
      temporalStatus,
      status: temporalStatus === 'RUNNING' ? (vigil ?? 'running') : (outcome ?? temporalStatus.toLowerCase()),
      outcome,
      iteration: sa.get(SA_ITERATION) ?? null,
      repo: sa.get(SA_REPO) ?? null,
      provider: sa.get(SA_PROVIDER) ?? null,
      startTime: wf.startTime.toISOString(),
      closeTime: wf.closeTime?.toISOString() ?? null,
      ...(wf.type === 'vigilAttempts' ? { attempts: true as const } : {}),
    });
    if (rows.length >= limit) break;
  }
  return rows;
}

export interface InboxEntry {
  row: RunRow;
  snapshot: StatusSnapshot;
  waiting: Waiting;
}

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T, R>(items: readonly T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T);
    }),
  );
  return out;
}

/**
 * Every running run that waits for a person. A run whose search attribute says it is running
 * normally is not asked (one query per run that may wait: paused, waiting for a provider, or
 * without search attributes).
 */
export async function inbox(client: Client, now: Date): Promise<InboxEntry[]> {
  const running = await listRuns(client, { limit: 500, runningOnly: true });
  const candidates = running.filter(
    (r) => ['paused', 'pausing', 'waiting_for_provider', 'running'].includes(r.status) || r.status === 'starting',
  );
  const views = await pool(candidates, 4, async (row) => ({
    row,
    view: await viewRun(sdkRunApi(client), row.workflowId).catch(() => null),
  }));
  const entries: InboxEntry[] = [];
  for (const { row, view } of views) {
    const snapshot = view?.snapshot;
    if (!snapshot) continue;
    const waiting = waitingFor(snapshot, now);
    if (waiting) entries.push({ row, snapshot, waiting });
  }
  return entries.sort((a, b) => a.waiting.since.localeCompare(b.waiting.since));
}

export async function runView(client: Client, workflowId: string): Promise<RunView> {
  return viewRun(sdkRunApi(client), workflowId);
}

/** Where a run's files are read: its host's queue, or its own queue for a run without a host. */
function readQueue(taskQueue: string, snap: StatusSnapshot): string {
  return snap.host ? hostTaskQueue(taskQueue, snap.host) : taskQueue;
}

export type HostText = { ok: true; text: string; path: string } | { ok: false; problem: string };

const handoffCache = new Map<string, HostText>();

/** The run's latest handoff (a file that never changes once written: read once, then kept). */
export async function readHandoff(client: Client, taskQueue: string, snap: StatusSnapshot): Promise<HostText | null> {
  const latest = snap.latestHandoff;
  if (!latest) return null;
  const key = `${snap.workflowId}\u0000${latest.path}`;
  const cached = handoffCache.get(key);
  if (cached) return cached;
  const answer = await readOnHost<ReadRunLogResult>(client, {
    activity: 'readRunHandoff',
    input: { repoPath: snap.repoPath, path: latest.path },
    taskQueue: readQueue(taskQueue, snap),
    answerSeconds: 10,
    waitMs: 0,
    runId: snap.workflowId,
  }).catch((err: unknown) => ({ kind: 'failed' as const, message: err instanceof Error ? err.message : String(err) }));
  let text: HostText;
  if (answer.kind === 'result') {
    const doc = answer.result;
    text = doc.problem
      ? { ok: false, problem: doc.problem }
      : doc.found
        ? { ok: true, text: doc.text, path: doc.path }
        : { ok: false, problem: `${latest.path} is gone from the run's host` };
    if (text.ok) handoffCache.set(key, text);
  } else if (answer.kind === 'no_worker') {
    text = {
      ok: false,
      problem: `no worker on the run's host answered within 10 s (${snap.host ? `start \`vigil worker --host ${snap.host}\` there` : 'start `vigil worker`'})`,
    };
  } else if (answer.kind === 'unsupported') {
    text = { ok: false, problem: `this Temporal server runs no standalone activities; read ${latest.path} on the run's host` };
  } else {
    text = { ok: false, problem: answer.message.slice(0, 500) };
  }
  return text;
}

/** One chunk of an iteration's agent log from `offset` (redacted by the reading activity). */
export async function readLogChunk(
  client: Client,
  taskQueue: string,
  snap: StatusSnapshot,
  iteration: number,
  offset: number,
  waitMs: number,
  partial: boolean,
): Promise<ReadRunLogResult | { problem: string }> {
  const answer = await readOnHost<ReadRunLogResult>(client, {
    activity: 'readRunLog',
    input: { repoPath: snap.repoPath, runId: snap.workflowId, iteration, offset, waitMs, partial },
    taskQueue: readQueue(taskQueue, snap),
    answerSeconds: 10,
    waitMs,
    runId: snap.workflowId,
  });
  if (answer.kind === 'result') return answer.result;
  if (answer.kind === 'no_worker')
    return {
      problem: `no worker on the run's host answered within 10 s${snap.host ? ` (start \`vigil worker --host ${snap.host}\` there)` : ''}`,
    };
  return {
    problem: `this Temporal server runs no standalone activities; \`vigil logs ${snap.workflowId}\` reads the log through a workflow instead`,
  };
}

/** A message a person (or Vigil) sent the run, from its history. */
export interface SentMessage {
  at: string | null;
  name: string;
  by: string | null;
  /** The directive, reason or amount, redacted and cut to 2000 characters. */
  text: string;
  via: 'update' | 'signal';
  /** Why the run refused it (an update whose handler failed). */
  refused: string | null;
}

/** The messages of the table (schemas/message-verbs.ts) a person sends. */
const MESSAGE_NAMES: ReadonlySet<string> = new Set(MESSAGE_VERB_NAMES);

function payloadText(name: string, p: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof p.directive === 'string') parts.push(p.directive);
  if (name === 'rewind' && typeof p.to === 'number') parts.unshift(`to iteration ${p.to}`);
  if (typeof p.usd === 'number') parts.push(`$${p.usd.toFixed(2)}`);
  if (typeof p.item === 'string') parts.push(p.item);
  if (typeof p.reason === 'string' && p.reason) parts.push(`(${p.reason})`);
  if (p.now === true) parts.push('now');
  return redactSecrets(parts.join(' ').slice(0, 2000)).text;
}

const isoOf = (ts: { seconds?: unknown; nanos?: number | null } | null | undefined): string | null =>
  ts ? new Date(Number(String(ts.seconds ?? 0)) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString() : null;

/** The messages of the run's current execution, oldest first: who sent what, when. */
export async function messagesFromHistory(client: Client, workflowId: string): Promise<SentMessage[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const out: SentMessage[] = [];
  const byUpdate = new Map<string, SentMessage>();
  const converter = client.options.loadedDataConverter;
  for (const e of history.events ?? []) {
    const accepted = e.workflowExecutionUpdateAcceptedEventAttributes;
    const signaled = e.workflowExecutionSignaledEventAttributes;
    const completed = e.workflowExecutionUpdateCompletedEventAttributes;
    if (completed?.meta?.updateId && completed.outcome?.failure) {
      const m = byUpdate.get(completed.meta.updateId);
      if (m) m.refused = completed.outcome.failure.message ?? 'refused';
      continue;
    }
    const name = accepted?.acceptedRequest?.input?.name ?? signaled?.signalName ?? null;
    if (!name || !MESSAGE_NAMES.has(name)) continue;
    const payloads = accepted ? accepted.acceptedRequest?.input?.args?.payloads : signaled?.input?.payloads;
    const raw = await decodeFromPayloadsAtIndex<unknown>(converter, 0, payloads).catch(() => null);
    const p = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
    const m: SentMessage = {
      at: isoOf(e.eventTime),
      name,
      by: typeof p.by === 'string' ? p.by : null,
      text: payloadText(name, p),
      via: accepted ? 'update' : 'signal',
      refused: null,
    };
    out.push(m);
    const id = accepted?.acceptedRequest?.meta?.updateId;
    if (id) byUpdate.set(id, m);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The event store

export type StoreAnswer<T> = { ok: true; value: T; where: string } | { ok: false; why: string };

/** Runs `fn` against the store this environment points at; never starts one. */
export async function withStore<T>(env: NodeJS.ProcessEnv, fn: (db: pg.Client) => Promise<T>): Promise<StoreAnswer<T>> {
  const where = storeLocation(env);
  if (!where.url) return { ok: false, why: `no event store: ${where.detail}` };
  const db = new pg.Client({
    connectionString: where.url,
    connectionTimeoutMillis: Math.min(CONNECT_TIMEOUT_MS, 3000),
    statement_timeout: 20_000,
    query_timeout: 25_000,
    application_name: 'vigil-console',
  });
  db.on('error', () => undefined);
  try {
    await db.connect();
    return { ok: true, value: await fn(db), where: describeUrl(where.url) };
  } catch (err) {
    return {
      ok: false,
      why: `the event store at ${describeUrl(where.url)} did not answer: ${(err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''}`,
    };
  } finally {
    await db.end().catch(() => undefined);
  }
}

export interface StoredRun {
  report: RunReport;
  charts: ChartData;
}

/** The run's report and charts from the event store; null when the store has no event of it. */
export async function storedRun(
  env: NodeJS.ProcessEnv,
  workflowId: string,
  now: Date,
  budgetUsd: number | null,
): Promise<StoreAnswer<StoredRun | null>> {
  return withStore(env, async (db) => {
    const report = await reportRun(db, workflowId, { now });
    if (!report) return null;
    const rows = (
      await db.query<{ at: Date | null; kind: string; data: RunEvent }>(
        `select at, kind, data from run_events where workflow_id = $1 and kind in ('iteration', 'spend', 'escalation', 'outcome', 'message') order by seq, at`,
        [workflowId],
      )
    ).rows;
    const spend = new Map<number, number>();
    const files = new Map<number, number>();
    const pauses: PauseEvent[] = [];
    for (const r of rows) {
      const e = r.data;
      if (e.kind === 'spend') spend.set(e.iteration, e.usd);
      else if (e.kind === 'iteration') files.set(e.iteration, e.filesChangedSinceStart);
      else if (
        r.at &&
        (e.kind === 'escalation' || e.kind === 'outcome' || (e.kind === 'message' && (e.name === 'pause' || e.name === 'resume')))
      )
        pauses.push({ at: r.at, event: e });
    }
    return { report, charts: chartsFromReport(report, spend, files, pauses, now, budgetUsd) };
  });
}

export async function storedReport(env: NodeJS.ProcessEnv, now: Date): Promise<StoreAnswer<AcrossRunsReport>> {
  return withStore(env, (db) => reportAcrossRuns(db, { now }));
}

export { chartsFromSnapshot };
