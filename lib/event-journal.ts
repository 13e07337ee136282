/**
 * The journal's way into the store: `projectEvents`, the local activity the workflow calls at its
 * boundaries and as it ends, and the catch-up of the spool (lib/event-spool.ts).
 *
 * A batch goes to the worker's store (lib/event-store.ts). When the store cannot take it:
 *   - a run that goes on keeps its events (the answer stores nothing; the workflow sends them again
 *     at its next boundary: they live in the run's history until then);
 *   - a run that has ended (the batch holds its outcome, or comes after it) has nowhere left to keep
 *     them: the batch is written to the spool on this worker, and the answer says it is taken care
 *     of (storedThrough its last seq, nothing written, the problem naming the spool), so the run
 *     ends as before, with no change to the workflow.
 * The spool is drained into the store by this process — a pass after a spooled batch, again with
 * a growing pause while the store stays down (2 s, 4 s … 30 s), at once after any projection the
 * store took, and when a worker starts — and by `vigil server`, `up` and `demo` each time they
 * start or restart the embedded Postgres (cli/store.ts). Every file is drained, whoever's run it
 * holds; the projection is idempotent, so a batch drained twice writes nothing twice.
 */
import { logLine } from '../lib/logging.js';
import type { ProjectEventsInput, ProjectEventsResult } from '../schemas/events.js';
import { onCloseEventStore, projectEventsTo, storeAnswers, workerStoreUrl } from './event-store.js';
import {
  drainSpool,
  runKey,
  spoolable,
  spoolBatch,
  spoolFiles,
  spoolHoldsRun,
  type DrainResult,
  type SpoolableBatch,
} from './event-spool.js';

/** The first pause before the spool is tried again, and the longest. */
export const CATCH_UP_FIRST_MS = 2000;
export const CATCH_UP_MAX_MS = 30_000;
const PROBLEM_MAX = 500;
const ENDED_RUNS_MAX = 1000;

const clip = (s: string): string => (s.length > PROBLEM_MAX ? `${s.slice(0, PROBLEM_MAX - 1)}…` : s);

/** Runs whose outcome this process has seen in a batch (their later batches go to the spool too), newest last. */
const endedRuns = new Set<string>();
function noteEnded(batch: SpoolableBatch): void {
  for (const runId of batch.ended) {
    const key = runKey(batch.workflowId, runId);
    endedRuns.delete(key);
    endedRuns.add(key);
    if (endedRuns.size > ENDED_RUNS_MAX) endedRuns.delete(endedRuns.values().next().value as string);
  }
}

/** The batch of a run that has ended: it holds the run's outcome, or the run ended in an earlier batch (here, or in the spool). */
function runHasEnded(batch: SpoolableBatch, spoolDir: string): boolean {
  if (batch.ended.length > 0) return true;
  if (batch.runIds.some((id) => endedRuns.has(runKey(batch.workflowId, id)))) return true;
  return spoolHoldsRun(spoolDir, batch.workflowId, batch.runIds);
}

/** The batch holds the outcome of a run stopped with `stop --now` (`stopped`, its reason ending ` (now)`, workflows/run/ending.ts). */
export function stoppedNow(raw: ProjectEventsInput): boolean {
  return raw.events.some((e) => e.event.kind === 'outcome' && e.event.status === 'stopped' && e.event.reason.endsWith(' (now)'));
}

/**
 * The local activity: the batch into the worker's store, else (a run that ended) into its spool. Never throws.
 *
 * The last batch of a run stopped with `stop --now` goes to the spool first, and the answer comes
 * at once: the person asked for the run closed now, and the store's projection (a Postgres commit,
 * the memory's consolidation) follows the close instead of holding it. The catch-up stores it
 * right after, in this process; the file, written before the answer, keeps it if the process dies
 * first (drained when a worker or the store starts).
 */
export async function projectEvents(raw: ProjectEventsInput): Promise<ProjectEventsResult> {
  const where = workerStoreUrl();
  const last = where.url && where.spoolDir && stoppedNow(raw) ? spoolable(raw) : null;
  if (last && where.spoolDir) {
    noteEnded(last);
    const kept = spoolBatch(where.spoolDir, last);
    if (!('problem' in kept)) {
      catchUp.kick();
      // Counted as written (the run's `eventStore.stored`): the spool holds them for the store, which takes them next.
      return { storedThrough: last.lastSeq, written: last.events.length, problem: null };
    }
  }
  const result: ProjectEventsResult = where.url
    ? await projectEventsTo(where.url, raw, { runEnd: 'follow' })
    : { storedThrough: 0, written: 0, problem: where.problem };
  const batch = spoolable(raw);
  if (!batch || !where.spoolDir) return result;
  noteEnded(batch);
  if (result.problem === null) {
    catchUp.kick();
    return result;
  }
  if (!runHasEnded(batch, where.spoolDir)) return result;
  const kept = spoolBatch(where.spoolDir, batch);
  if ('problem' in kept) return { ...result, problem: clip(`${kept.problem}; ${result.problem}`) };
  catchUp.arm();
  const n = batch.events.length;
  return {
    storedThrough: batch.lastSeq,
    written: 0,
    problem: clip(
      `the run's last ${n} event(s) wait in the spool on this worker (${kept.file}) until the store takes them: ${result.problem}`,
    ),
  };
}

/** Drains the spool at `dir` into the store at `url` (a worker's pass, `vigil server` starting its store). */
export function drainSpoolInto(url: string, dir: string): Promise<DrainResult> {
  return drainSpool(dir, { project: (input) => projectEventsTo(url, input), answers: () => storeAnswers(url) });
}

/** One line on what a drain did, or null when it did nothing worth saying. */
export function describeDrain(r: DrainResult, dir: string): string | null {
  const parts: string[] = [];
  if (r.files) parts.push(`${r.events} event(s) of ${r.files} spooled batch(es) stored (${r.written} new row(s))`);
  if (r.rejected) parts.push(`${r.rejected} batch(es) the store refused set aside as ${dir}/*.rejected`);
  if (r.left && r.problem) parts.push(`${r.left} batch(es) still wait: ${r.problem}`);
  return parts.length ? `event store: ${parts.join('; ')}` : null;
}

/**
 * The worker's catch-up: one pass at a time; `arm` schedules one after the current pause (which
 * doubles while the store stays down), `kick` runs one now. The timer does not keep the process
 * alive; closing the event store stops it.
 */
class CatchUp {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private again = false;
  private pauseMs = CATCH_UP_FIRST_MS;

  arm(delayMs = this.pauseMs): void {
    if (this.timer || this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.pass();
    }, delayMs);
    this.timer.unref();
  }

  kick(): void {
    // A pass already going on may have listed the spool before the file that asks for this one.
    if (this.running) {
      this.again = true;
      return;
    }
    const dir = workerStoreUrl().spoolDir;
    if (!dir || spoolFiles(dir).length === 0) return;
    this.stop();
    void this.pass();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async pass(): Promise<void> {
    this.running = true;
    this.again = false;
    let again: number | null = null;
    try {
      const where = workerStoreUrl();
      if (!where.spoolDir || spoolFiles(where.spoolDir).length === 0) return;
      if (!where.url) {
        again = this.backoff();
        return;
      }
      const r = await drainSpoolInto(where.url, where.spoolDir);
      const line = describeDrain(r, where.spoolDir);
      if (line && (r.files || r.rejected)) logLine(r.rejected ? 'WARN' : 'INFO', line);
      if (r.problem) again = this.backoff();
      else {
        this.pauseMs = CATCH_UP_FIRST_MS;
        if (r.left) again = 0;
      }
    } catch (err) {
      logLine('WARN', `event store: the spool's catch-up failed: ${err instanceof Error ? err.message : String(err)}`);
      again = this.backoff();
    } finally {
      this.running = false;
      if (this.again) again = 0;
      if (again !== null) this.arm(again);
    }
  }

  private backoff(): number {
    this.pauseMs = Math.min(CATCH_UP_MAX_MS, this.pauseMs * 2);
    return this.pauseMs;
  }
}

const catchUp = new CatchUp();
onCloseEventStore(() => catchUp.stop());

/** A worker starting: the spool its store may hold (runs that ended while it was down, any worker's) is drained soon. */
export function catchUpJournals(): void {
  const dir = workerStoreUrl().spoolDir;
  if (dir && spoolFiles(dir).length > 0) catchUp.arm(0);
}
