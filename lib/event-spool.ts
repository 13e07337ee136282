/**
 * The event spool: where the last events of a run wait when the event store is down as the run
 * ends (docs/event-store-and-reports.md, "When the store is down").
 *
 * While a run goes on, the events the store could not take stay in the run (its journal, carried
 * through continue-as-new) and the workflow projects them again at its next boundary. Once it has
 * ended nothing holds them but its last projection's batch: that batch (the one with the run's
 * outcome, and any later one of the same run) is written here by the worker that projects it, and
 * the projection answers that it is taken care of. Any process with the same store drains the
 * spool into it (lib/event-journal.ts): every file, whoever's run it holds.
 *
 * One folder per store (lib/store-location.ts), one file per batch:
 * `<spooled at, ms>-<run key>-<first seq>-<last seq>.json` holding `{ version, workflowId, runIds,
 * spooledAt, events }`. A file is written whole or not at all (a temporary file, fsync, rename,
 * fsync of the folder), so a crash leaves no half batch; a drained file is removed only after its
 * batch committed, and writing a batch twice writes nothing twice (run_events is keyed by workflow
 * id, run id and seq), so two processes may drain one folder at once. A file the store refuses
 * while it answers (a batch it can never take) is set aside as `.rejected`, with the reason beside
 * it, so that it does not hold up the others.
 *
 * It imports nothing of the store: the drain is handed the projection and a health check.
 */
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ProjectEventsInput, ProjectEventsResult } from '../schemas/events.js';

export const SPOOL_VERSION = 1;
/** A spool this full takes no more batches (a store that has been down for days, many runs ending). */
export const SPOOL_MAX_FILES = 10_000;
/** Files drained in one pass; a pass that leaves more is followed by another at once. */
export const DRAIN_BATCH_FILES = 200;
/** A temporary file this old was left by a writer that died before its rename. */
const STALE_TMP_MS = 60 * 60_000;

/** A batch as the workflow sent it, with what the spool needs to know of it. */
export interface SpoolableBatch {
  workflowId: string;
  events: unknown[];
  /** The Temporal run ids of its envelopes (one, or more across continue-as-new). */
  runIds: string[];
  firstSeq: number;
  lastSeq: number;
  /** The run ids whose outcome the batch holds. */
  ended: string[];
}

/** The spool's view of a projection's input: null when it has no envelope with a usable seq and run id (nothing to keep). */
export function spoolable(raw: unknown): SpoolableBatch | null {
  const r = raw as { workflowId?: unknown; events?: unknown } | null | undefined;
  if (typeof r?.workflowId !== 'string' || r.workflowId === '' || !Array.isArray(r.events)) return null;
  const runIds = new Set<string>();
  const ended = new Set<string>();
  let firstSeq = Infinity;
  let lastSeq = 0;
  for (const e of r.events as unknown[]) {
    const env = e as { seq?: unknown; runId?: unknown; event?: { kind?: unknown } } | null;
    if (typeof env?.seq !== 'number' || !Number.isInteger(env.seq) || env.seq < 1 || typeof env.runId !== 'string' || env.runId === '')
      continue;
    runIds.add(env.runId);
    firstSeq = Math.min(firstSeq, env.seq);
    lastSeq = Math.max(lastSeq, env.seq);
    if (env.event?.kind === 'outcome') ended.add(env.runId);
  }
  if (lastSeq === 0) return null;
  return { workflowId: r.workflowId, events: r.events as unknown[], runIds: [...runIds], firstSeq, lastSeq, ended: [...ended] };
}

/** A run's key in file names: a hash of its workflow id and run id (any characters in, 16 hex out). */
export function runKey(workflowId: string, runId: string): string {
  return createHash('sha256').update(`${workflowId}\u0000${runId}`).digest('hex').slice(0, 16);
}

const isBatchFile = (name: string): boolean => name.endsWith('.json') && !name.startsWith('.');

/** The batch files waiting in `dir`, oldest first; none when it does not exist. */
export function spoolFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter(isBatchFile).sort();
  } catch {
    return [];
  }
}

/** True when the spool holds a batch of one of these runs of `workflowId`. */
export function spoolHoldsRun(dir: string, workflowId: string, runIds: readonly string[]): boolean {
  const keys = runIds.map((id) => `-${runKey(workflowId, id)}-`);
  return spoolFiles(dir).some((f) => keys.some((k) => f.includes(k)));
}

/** Writes `text` to `file` whole or not at all: a temporary file beside it, fsync, rename, fsync of the folder. */
function writeWhole(file: string, text: string): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeFileSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  try {
    const d = openSync(dir, 'r');
    try {
      fsyncSync(d);
    } finally {
      closeSync(d);
    }
  } catch {
    /* a filesystem that cannot fsync a folder: the rename is what makes the file whole */
  }
}

/** Keeps `batch` in the spool at `dir`; the file's path, or why it could not. */
export function spoolBatch(dir: string, batch: SpoolableBatch, now: Date = new Date()): { file: string } | { problem: string } {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (spoolFiles(dir).length >= SPOOL_MAX_FILES) return { problem: `the spool ${dir} is full (${SPOOL_MAX_FILES} batches)` };
    const last = batch.runIds.at(-1) ?? '';
    const name = `${String(now.getTime()).padStart(15, '0')}-${runKey(batch.workflowId, last)}-${batch.firstSeq}-${batch.lastSeq}.json`;
    const file = path.join(dir, name);
    const entry = {
      version: SPOOL_VERSION,
      workflowId: batch.workflowId,
      runIds: batch.runIds,
      spooledAt: now.toISOString(),
      events: batch.events,
    };
    writeWhole(file, `${JSON.stringify(entry)}\n`);
    return { file };
  } catch (err) {
    return { problem: `the spool ${dir} could not keep the batch: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** What a drain needs of the store. */
export interface DrainTarget {
  /** Writes one batch (the projection: idempotent, never throws). */
  project(input: ProjectEventsInput): Promise<ProjectEventsResult>;
  /** Whether the store answers at all (to tell a refused batch from a store that is down). */
  answers(): Promise<boolean>;
}

export interface DrainResult {
  /** Batch files written and removed. */
  files: number;
  /** Events in them, and rows they wrote (fewer when some were there already). */
  events: number;
  written: number;
  /** Files set aside as `.rejected` (unreadable, or refused by a store that answers). */
  rejected: number;
  /** Files still waiting (the store is down, or more than one pass holds). */
  left: number;
  /** Why files are still waiting, or null. */
  problem: string | null;
}

function setAside(file: string, reason: string): void {
  try {
    renameSync(file, `${file}.rejected`);
    writeFileSync(`${file}.rejected.reason`, `${reason}\n`, { mode: 0o600 });
  } catch {
    /* drained or set aside by another process meanwhile */
  }
}

function removeStaleTemporaries(dir: string, now: number): void {
  try {
    for (const name of readdirSync(dir)) {
      if (!name.startsWith('.') || !name.endsWith('.tmp')) continue;
      const file = path.join(dir, name);
      if (now - statSync(file).mtimeMs > STALE_TMP_MS) rmSync(file, { force: true });
    }
  } catch {
    /* nothing to tidy */
  }
}

/** Reads a batch file; null when it is gone (drained meanwhile), a problem when it is not a batch. */
function readBatch(file: string): { input: ProjectEventsInput; events: number } | { problem: string } | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return { problem: `unreadable: ${err instanceof Error ? err.message : String(err)}` };
  }
  try {
    const e = JSON.parse(text) as { version?: unknown; workflowId?: unknown; events?: unknown };
    if (e.version !== SPOOL_VERSION) return { problem: `not a spool batch of version ${SPOOL_VERSION}` };
    if (typeof e.workflowId !== 'string' || e.workflowId === '' || !Array.isArray(e.events)) return { problem: 'no workflow id or events' };
    return { input: { workflowId: e.workflowId, events: e.events as ProjectEventsInput['events'] }, events: e.events.length };
  } catch (err) {
    return { problem: `not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * Writes the spool's batches into the store, oldest first, removing each once it committed. Stops
 * at the first batch the store could not take while it does not answer (it is down: the rest wait
 * for the next pass); a batch it refuses while answering is set aside. At most `maxFiles` files.
 */
export async function drainSpool(dir: string, target: DrainTarget, maxFiles = DRAIN_BATCH_FILES): Promise<DrainResult> {
  const result: DrainResult = { files: 0, events: 0, written: 0, rejected: 0, left: 0, problem: null };
  removeStaleTemporaries(dir, Date.now());
  const files = spoolFiles(dir);
  for (const [i, name] of files.entries()) {
    if (i >= maxFiles) {
      result.left = files.length - i;
      break;
    }
    const file = path.join(dir, name);
    const batch = readBatch(file);
    if (batch === null) continue;
    if ('problem' in batch) {
      setAside(file, batch.problem);
      result.rejected += 1;
      continue;
    }
    const r = await target.project(batch.input);
    if (r.problem === null) {
      rmSync(file, { force: true });
      result.files += 1;
      result.events += batch.events;
      result.written += r.written;
      continue;
    }
    if (await target.answers()) {
      setAside(file, r.problem);
      result.rejected += 1;
      continue;
    }
    result.left = files.length - i;
    result.problem = r.problem;
    break;
  }
  return result;
}
