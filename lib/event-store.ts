/**
 * The event store: the run journal's envelopes (schemas/events.ts) projected into Postgres, for
 * reports across runs and for a run's history outside Temporal.
 *
 * `projectEventsTo` writes a batch; the local activity the workflow calls at iteration boundaries,
 * `projectEvents` (lib/event-journal.ts), writes through it into the worker's store, or
 * keeps a run's last batch in the spool when the store is down as the run ends. It never blocks
 * or fails a run: no store on the worker (lib/store-location.ts), a store that is down or
 * slow, a bad row — each comes back as `problem`, and the workflow keeps the events pending and
 * tries again later.
 *
 * Idempotent by construction: `run_events` is keyed by (workflow id, run id, seq) and written with
 * ON CONFLICT DO NOTHING, and every projection the reports read is a view over `run_events`, so a
 * retried, replayed or overlapping batch never writes a row twice and derived rows cannot drift.
 *
 * The schema is versioned (`vigil_schema_migrations`) and migrated once per process and database,
 * under a transaction-scoped advisory lock so that two workers starting at once do not collide.
 */
import pg from 'pg';
import { configuredSpoolDir, configuredStoreUrl, localSpoolDirOf, readStoreUrlFile } from '../lib/store-location.js';
import { EventEnvelopeSchema, RunEventSchema, type ProjectEventsInput, type ProjectEventsResult } from '../schemas/events.js';
import {
  ECONOMICS_MIGRATION,
  FILES_READ_MIGRATION,
  LASTING_MEMORY_MIGRATION,
  LINK_RELATIONS_MIGRATION,
  MEMORY_JUDGE_MIGRATION,
  STORED_BY_MIGRATION,
} from './lasting-memory-sql.js';
import { MIGRATION_1, NOTIFICATION_ACKS_MIGRATION } from './run-events-sql.js';

/** Queries the reports and migrations run on: a pool, or a connected client. */
export type Db = pg.Pool | pg.ClientBase;

/** How long to wait for a connection before telling the workflow the store is down. */
export const CONNECT_TIMEOUT_MS = 3000;
/** Server-side bound on one statement; the client gives up a little later (a frozen server). */
export const STATEMENT_TIMEOUT_MS = 5000;
export const QUERY_TIMEOUT_MS = 8000;
/**
 * A projection answers within this, whatever the store does (milliseconds when it is well). One
 * that commits after its caller was told it timed out is harmless: the batch comes again and
 * writes nothing twice.
 */
export const PROJECTION_DEADLINE_MS = 10_000;
const POOL_MAX = 3;
const PROBLEM_MAX = 500;
/** run_events.seq is a Postgres integer. */
const MAX_SEQ = 2_147_483_647;

/** The advisory lock key migrations take (the bytes of "vigl"). */
export const MIGRATION_LOCK_KEY = 0x7669676c;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'run events and their projections', sql: MIGRATION_1 },
  { version: 2, name: 'the memory that outlives a run', sql: LASTING_MEMORY_MIGRATION },
  { version: 3, name: "the memory judge's lessons, merges and cost", sql: MEMORY_JUDGE_MIGRATION },
  { version: 4, name: 'the files an agent read, in the memory', sql: FILES_READ_MIGRATION },
  { version: 5, name: 'notifications a person acknowledges', sql: NOTIFICATION_ACKS_MIGRATION },
  { version: 6, name: 'who stored a pattern no episode made', sql: STORED_BY_MIGRATION },
  { version: 7, name: "an agent call's token economics", sql: ECONOMICS_MIGRATION },
  { version: 8, name: "the original's eight link relations", sql: LINK_RELATIONS_MIGRATION },
];

/** Applies the migrations the database lacks, in order, each recorded in vigil_schema_migrations. Returns the versions applied now. */
export async function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const client = db instanceof pg.Pool ? await db.connect() : db;
  const applied: number[] = [];
  try {
    await client.query('begin');
    try {
      // Serialises concurrent migrators (two workers starting at once); released at commit.
      await client.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      await client.query(
        'create table if not exists vigil_schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())',
      );
      const have = new Set(
        (await client.query<{ version: number }>('select version from vigil_schema_migrations')).rows.map((r) => r.version),
      );
      for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
        if (have.has(m.version)) continue;
        await client.query(m.sql);
        await client.query('insert into vigil_schema_migrations (version, name) values ($1, $2)', [m.version, m.name]);
        applied.push(m.version);
      }
      await client.query('commit');
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    }
  } finally {
    if (db instanceof pg.Pool) (client as pg.PoolClient).release();
  }
  return applied;
}

// ---------------------------------------------------------------------------------------------
// Pools and migrations, per database URL, for the life of the process.

const pools = new Map<string, pg.Pool>();
const migrated = new Map<string, Promise<void>>();

/** A small pool for `url`, created on first use and kept for the process. Never throws on its own. */
export function poolFor(url: string): pg.Pool {
  let pool = pools.get(url);
  if (!pool) {
    pool = new pg.Pool({
      connectionString: url,
      max: POOL_MAX,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      application_name: 'vigil',
      allowExitOnIdle: true,
    });
    // A connection the server closed (restart, shutdown) must not crash the worker. The pool's own
    // listener covers idle connections only: pg-pool takes it off a connection it lends out, so one
    // closed while lent (between a transaction's queries) would emit an 'error' nobody hears, an
    // uncaught exception. Its query rejects anyway, and the lender releases it as broken.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    pools.set(url, pool);
  }
  return pool;
}

/** Migrates the database at `url` once per process; a failed attempt is tried again next time. */
export function ensureMigrated(url: string): Promise<void> {
  let p = migrated.get(url);
  if (!p) {
    p = migrate(poolFor(url)).then(() => undefined);
    migrated.set(url, p);
    p.catch(() => migrated.delete(url));
  }
  return p;
}

const closing = new Set<() => void>();
/** Something to stop when the event store closes (the spool's drain, lib/event-journal.ts). */
export function onCloseEventStore(fn: () => void): void {
  closing.add(fn);
}

/**
 * Run-end hooks still going on: those the run's last projection did not wait for
 * (`runEnd: 'follow'`), and those that outlived a waiting projection's bound.
 */
const hooksGoingOn = new Set<Promise<void>>();

/** Ends every pool and forgets what was migrated (worker shutdown, tests); a run-end hook still going on finishes first. */
export async function closeEventStore(): Promise<void> {
  for (const fn of closing) fn();
  // A hook may start another's work on the same pools: wait until none is left.
  while (hooksGoingOn.size > 0) await Promise.all([...hooksGoingOn]);
  const all = [...pools.values()];
  pools.clear();
  migrated.clear();
  await Promise.all(all.map((p) => p.end().catch(() => undefined)));
}

// ---------------------------------------------------------------------------------------------
// projectEvents

/** Postgres text and jsonb cannot hold NUL: drop it (recursively) rather than fail the batch forever. */
function withoutNul(v: unknown): unknown {
  if (typeof v === 'string') return v.includes('\u0000') ? v.split('\u0000').join('') : v;
  if (Array.isArray(v)) return v.map(withoutNul);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [withoutNul(k) as string, withoutNul(x)]));
  return v;
}

function isoOrNull(at: unknown): string | null {
  if (typeof at !== 'string') return null;
  const t = Date.parse(at);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
}

interface Row {
  runId: string;
  seq: number;
  kind: string;
  at: string | null;
  data: string;
}

/**
 * An envelope as a row. One whose event fails RunEventSchema is still stored (kind 'invalid', the
 * raw event and the error in data) so that it neither blocks the journal nor reaches the views;
 * one without a usable key (seq, run id) cannot be stored at all.
 */
function toRow(raw: unknown): Row | null {
  const env = EventEnvelopeSchema.safeParse(raw);
  if (env.success && env.data.seq > MAX_SEQ) return null;
  if (env.success) {
    const e = env.data;
    return { runId: e.runId, seq: e.seq, kind: e.event.kind, at: isoOrNull(e.at), data: JSON.stringify(withoutNul(e.event)) };
  }
  const r = (raw ?? {}) as { seq?: unknown; runId?: unknown; at?: unknown; event?: unknown };
  if (typeof r.seq !== 'number' || !Number.isInteger(r.seq) || r.seq < 1 || r.seq > MAX_SEQ) return null;
  if (typeof r.runId !== 'string' || r.runId === '') return null;
  const event = RunEventSchema.safeParse(r.event);
  const error = event.success
    ? env.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')
    : event.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  let rawEvent: unknown = null;
  try {
    rawEvent = JSON.parse(JSON.stringify(r.event ?? null)) as unknown;
  } catch {
    rawEvent = null;
  }
  return {
    runId: r.runId,
    seq: r.seq,
    kind: 'invalid',
    at: isoOrNull(r.at),
    data: JSON.stringify(withoutNul({ error: error.slice(0, 1000), raw: rawEvent })),
  };
}

const problemText = (s: string): string => (s.length > PROBLEM_MAX ? `${s.slice(0, PROBLEM_MAX - 1)}…` : s);

/** The store's address without a password, for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return 'DATABASE_URL (unparseable)';
  }
}

const errorText = (err: unknown): string => {
  if (err instanceof AggregateError && err.errors.length) return err.errors.map(errorText).join('; ');
  if (err instanceof Error) return err.message || ((err as { code?: string }).code ?? err.name);
  return String(err);
};

export const NO_STORE_PROBLEM = 'no event store on this worker (DATABASE_URL is not set)';

let localUrlFile: string | null = null;

/**
 * The worker's local store: `vigil worker`, `up` and `demo` name the URL file of the embedded
 * Postgres (lib/store-location.ts) when no URL is configured. The file is read at each
 * projection, so a store started (or moved to another port) after the worker is found.
 */
export function useLocalEventStore(urlFile: string | null): void {
  localUrlFile = urlFile;
}

/**
 * The store this worker projects into: VIGIL_DATABASE_URL, DATABASE_URL, else the local store's URL
 * file; and its spool (lib/event-spool.ts), null when the worker has no store at all.
 */
export function workerStoreUrl(env: NodeJS.ProcessEnv = process.env): { url: string | null; problem: string; spoolDir: string | null } {
  const configured = configuredStoreUrl(env);
  if (configured) return { url: configured.url, problem: '', spoolDir: configuredSpoolDir(configured.url, env) };
  if (!localUrlFile) return { url: null, problem: NO_STORE_PROBLEM, spoolDir: null };
  return {
    url: readStoreUrlFile(localUrlFile),
    problem: `no event store on this worker yet (no ${localUrlFile}: \`vigil server\` or \`vigil up\` starts the local one)`,
    spoolDir: localSpoolDirOf(localUrlFile),
  };
}

/** Whether the store at `url` answers a query now (a refused batch told from a store that is down). */
export async function storeAnswers(url: string): Promise<boolean> {
  try {
    await poolFor(url).query('select 1');
    return true;
  } catch {
    return false;
  }
}

/** `projectEvents` against an explicit database URL (tests, tools). */
export async function projectEventsTo(
  databaseUrl: string | undefined,
  raw: ProjectEventsInput,
  opts: { deadlineMs?: number; runEnd?: 'wait' | 'follow' } = {},
): Promise<ProjectEventsResult> {
  const deadlineMs = opts.deadlineMs ?? PROJECTION_DEADLINE_MS;
  const url = databaseUrl?.trim();
  if (!url) return { storedThrough: 0, written: 0, problem: NO_STORE_PROBLEM };
  const workflowId = (raw as { workflowId?: unknown } | null | undefined)?.workflowId;
  const events = (raw as { events?: unknown } | null | undefined)?.events;
  if (typeof workflowId !== 'string' || workflowId === '' || !Array.isArray(events)) {
    return { storedThrough: 0, written: 0, problem: 'invalid projection input (needs a workflow id and a list of events)' };
  }
  const rows: Row[] = [];
  for (const e of events as unknown[]) {
    const row = toRow(e);
    if (row) rows.push(row);
  }
  if (rows.length === 0)
    return { storedThrough: 0, written: 0, problem: events.length ? 'no event in the batch has a usable seq and run id' : null };

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<ProjectEventsResult>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          storedThrough: 0,
          written: 0,
          problem: problemText(`event store at ${describeUrl(url)} unavailable: no answer within ${deadlineMs} ms`),
        }),
      deadlineMs,
    );
  });
  let result: ProjectEventsResult;
  try {
    result = await Promise.race([write(url, withoutNul(workflowId) as string, rows), deadline]);
  } finally {
    clearTimeout(timer);
  }
  if (result.problem === null && rows.some((r) => r.kind === 'outcome')) {
    const ended = afterRunEnded(url, withoutNul(workflowId) as string);
    if (opts.runEnd !== 'follow') await ended;
  }
  return result;
}

/**
 * What runs once a run's outcome is stored (the memory's consolidation, lib/lasting-memory.ts).
 * Registered by the worker's activities rather than imported, so the store does not depend on memory.
 */
type RunEndedHook = (url: string, workflowId: string) => Promise<void>;
let runEndedHook: RunEndedHook | null = null;
export function onRunEnded(hook: RunEndedHook | null): void {
  runEndedHook = hook;
}

/**
 * "After each run", without racing the workflow: the batch that holds the outcome is the run's
 * last (the workflow records nothing after it but the final notification, which this batch
 * carries too), and it is written before the workflow closes. So when it has committed, the
 * journal of the run is whole, and the hook sees all of it; a retried batch runs it again, which
 * consolidation allows (it is idempotent). Never the projection's problem, and bounded: a
 * projection that waits for it (`runEnd: 'wait'`, the spool's drains) waits at most
 * RUN_ENDED_DEADLINE_MS, and a longer one goes on in the worker and commits when it is done. The
 * run's own last projection (`runEnd: 'follow'`, the local activity) does not wait: the run
 * closes once its events are committed, and the hook follows (the memory judge, when the run has
 * one, consolidates first if it is not done yet; closing the store waits for it).
 */
async function afterRunEnded(url: string, workflowId: string): Promise<void> {
  if (!runEndedHook) return;
  // Kept until it ends, whoever waits for it: closing the store must not end the pools under it.
  const hook: Promise<void> = runEndedHook(url, workflowId)
    .catch(() => undefined)
    .finally(() => hooksGoingOn.delete(hook));
  hooksGoingOn.add(hook);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([hook, new Promise<void>((r) => (timer = setTimeout(r, RUN_ENDED_DEADLINE_MS)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The run-end hook's bound: the run's last projection waits at most this long for it. */
export const RUN_ENDED_DEADLINE_MS = 4000;

async function write(url: string, wf: string, rows: Row[]): Promise<ProjectEventsResult> {
  try {
    await ensureMigrated(url);
    const client = await poolFor(url).connect();
    let release: boolean | Error = false;
    try {
      await client.query('begin');
      const res = await client.query(
        `insert into run_events (workflow_id, run_id, seq, kind, at, data)
         select $1, r.run_id, r.seq, r.kind, r.at, r.data
         from unnest($2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::jsonb[]) as r(run_id, seq, kind, at, data)
         on conflict do nothing`,
        [
          wf,
          rows.map((r) => withoutNul(r.runId) as string),
          rows.map((r) => r.seq),
          rows.map((r) => r.kind),
          rows.map((r) => r.at),
          rows.map((r) => r.data),
        ],
      );
      await client.query('commit');
      return { storedThrough: Math.max(...rows.map((r) => r.seq)), written: res.rowCount ?? 0, problem: null };
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      // A connection that failed mid-transaction is not given back to the pool.
      release = err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      client.release(release);
    }
  } catch (err) {
    return { storedThrough: 0, written: 0, problem: problemText(`event store at ${describeUrl(url)} unavailable: ${errorText(err)}`) };
  }
}
