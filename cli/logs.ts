/**
 * `vigil logs <id> [--iteration N] [-f]`: an iteration's agent log, from any machine. The log lives
 * in the repository on the run's host, so each read is one standalone activity (`readRunLog`) the
 * CLI starts on that host's queue; it returns a bounded, redacted chunk. No workflow is created and
 * nothing is added to the run's history (cli/host-read.ts says why and what it costs); a server
 * without standalone activities gets one short `vigilReadLog` workflow per read, as before.
 * Following reads from the last offset (each read waits on the host up to 10 s for the log to
 * grow); when an iteration's agent call is over it goes on with the next iteration's log, and when
 * the run finishes it says so and ends (exit 0); Ctrl+C ends it with exit 0 too. A follower started
 * before the run's iteration began (right after `vigil start`) says it waits and waits for it; a
 * line says when the run pauses and when it resumes. What is printed
 * is terminal-safe: escape sequences and other control characters from the agent are shown
 * visibly (lib/terminal-text.ts), never interpreted by the terminal.
 */
import { randomBytes } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { hostTaskQueue } from '../schemas/hosts.js';
import type { ReadLogAnswer, ReadRunLogInput, ReadRunLogResult } from '../schemas/logs.js';
import type { StatusSnapshot } from '../schemas/status.js';
import { vigilReadLog } from '../workflows/read-log.js';
import { CliError, EXIT } from './connection.js';
import { readOnHost } from './host-read.js';
import { sdkRunApi } from './sdk-run-api.js';
import { isNotFound, noSuchRun, queryStatus, viewRun, WORKER_ANSWER_MS, type RunView } from './steer.js';
import { neutraliseLine, neutraliseText } from '../lib/terminal-text.js';
import type { LogEvent } from '../schemas/cli-output.js';

export interface LogsOptions {
  /** Default: the run's current (or last) iteration. */
  iteration?: number;
  follow: boolean;
  /** How long the host's worker has to pick a read up (seconds). */
  answerSeconds: number;
  /** Where the log text goes (stdout); resolves once written. */
  write: (text: string) => Promise<void>;
  /** Where notes go (stderr). */
  note: (line: string) => void;
  /** Resolves when the person interrupts (Ctrl+C): a following read stops, exit 0. */
  interrupted?: Promise<void>;
  /** How often a follower between two iterations asks the run's status (default 1000 ms). */
  pollMs?: number;
  /** `--json`: every announcement, chunk, note and the end as a record here (JSON lines), instead of `write` and `note`. */
  event?: (e: LogEvent) => Promise<void>;
}

/** How long one following read waits on the host for the log to grow. */
const FOLLOW_WAIT_MS = 10_000;
/** At least this long between following reads (a busy agent's output arrives in batches, not a read per line). */
const FOLLOW_MIN_INTERVAL_MS = 1000;
/** A finished run answers its status from a replay of its history: give a long one time. */
const FINISHED_ANSWER_MS = 30_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(ms, 0)));

export interface Located {
  handle: WorkflowHandle;
  running: boolean;
  /** The run's workflow queue (where a fallback `vigilReadLog` runs). */
  taskQueue: string;
  snapshot: StatusSnapshot;
  /** Where its repository-bound reads go: the host's queue, or the run's own for a run without a host. */
  readQueue: string;
  /** `host "alpha"` or `any worker`, for messages. */
  where: string;
}

/** The run, its status (answered by a worker) and where its files are read. */
export async function locate(client: Client, workflowId: string): Promise<Located> {
  const handle = client.workflow.getHandle(workflowId);
  let desc;
  try {
    desc = await handle.describe();
  } catch (err) {
    if (isNotFound(err)) throw noSuchRun(workflowId);
    throw err;
  }
  if (desc.type !== 'vigilRun') throw new CliError(`"${workflowId}" is a ${desc.type} workflow, not a Vigil run`, EXIT.noSuchRun);
  const running = desc.status.name === 'RUNNING';
  const wait = running ? WORKER_ANSWER_MS : FINISHED_ANSWER_MS;
  const snapshot = await queryStatus(sdkRunApi(client), workflowId, wait).catch(() => null);
  if (!snapshot) {
    throw new CliError(
      `no worker answered for run "${workflowId}" within ${wait / 1000} s, so where its repository is remains unknown.\n` +
        `Start one with \`vigil worker\` (task queue "${desc.taskQueue}").`,
      EXIT.unreachable,
    );
  }
  const host = snapshot.host ?? null;
  return {
    handle,
    running,
    taskQueue: desc.taskQueue,
    snapshot,
    readQueue: host ? hostTaskQueue(desc.taskQueue, host) : desc.taskQueue,
    where: host ? `host "${host}"` : 'any worker',
  };
}

/** The error for a host whose worker did not pick a read up. */
export function noWorkerError(run: Located, answerSeconds: number): CliError {
  const host = run.snapshot.host;
  return new CliError(
    host
      ? `no worker on host "${host}" picked the read up within ${answerSeconds} s: nothing polls task queue "${run.readQueue}".\n` +
          `Start \`vigil worker --host ${host}\` (or \`vigil up --host ${host}\`) on the machine that holds ${run.snapshot.repoPath}.`
      : `no worker picked the read up within ${answerSeconds} s on task queue "${run.taskQueue}"; start one with \`vigil worker\``,
    EXIT.unreachable,
  );
}

/** What the person is told when a followed run has finished. */
export function finishedNote(workflowId: string, view: RunView): string {
  if (view.kind !== 'finished') return `==> run ${workflowId} is still running`;
  const o = view.outcome;
  return neutraliseLine(
    `==> run ${workflowId} finished: ${o ? `${o.status} (exit ${o.exitCode}) — ${o.reason}` : `workflow ${view.temporalStatus.toLowerCase()}`}`,
  );
}

/**
 * Which iteration a follower that has shown iteration `shown` goes on with, from the run's view:
 * the next one once it has begun (its agent runs, or it is recorded, or a later one began), the
 * next one of a finished run that ran it, `finished` when there is none, null to wait.
 */
export function nextIteration(view: RunView, shown: number): number | 'finished' | null {
  const s = view.snapshot;
  const last = Math.max(s?.iteration ?? 0, view.iteration ?? 0);
  if (view.kind === 'finished') return last > shown ? shown + 1 : 'finished';
  if (!s) return null;
  const next = shown + 1;
  if (s.iteration > next) return next;
  if (s.iteration === next && (s.agentRunning || s.recentIterations.some((r) => r.iteration === next))) return next;
  return null;
}

/** Whether iteration `n` of a run with this status has begun: its agent runs, or it is recorded, or a later one began. */
function begun(s: StatusSnapshot, n: number): boolean {
  return n >= 1 && (s.iteration > n || s.agentRunning || s.recentIterations.some((r) => r.iteration === n));
}

/** What a follower says while it waits for an iteration to begin. */
export function waitingNote(workflowId: string, n: number, s: StatusSnapshot): string {
  const why = s.paused
    ? `; the run is paused${s.pause ? `: ${s.pause.reason}` : ''}`
    : s.status === 'running'
      ? ''
      : ` (the run is ${s.status})`;
  return neutraliseLine(`==> waiting for iteration ${Math.max(n, 1)} of ${workflowId} to begin${why} (Ctrl+C stops following)`);
}

/** What a follower says when the run pauses or resumes. */
export function pauseNote(workflowId: string, s: StatusSnapshot): string {
  if (!s.paused) return `==> run ${workflowId} resumed (${s.status})`;
  const why = s.pause ? `: ${s.pause.reason} (by ${s.pause.by})` : '';
  const call = s.status === 'pausing' ? '; its agent call finishes first' : '';
  return neutraliseLine(`==> run ${workflowId} paused${why}${call}; still following (\`vigil resume ${workflowId}\` goes on)`);
}

export async function logsCommand(client: Client, workflowId: string, opts: LogsOptions): Promise<number> {
  const run = await locate(client, workflowId);
  const snap = run.snapshot;
  const current = snap.iteration;
  const asked = opts.iteration ?? current;
  // Following a running run whose iteration has not begun (right after `vigil start`, when the
  // run may still be at iteration 0): wait for it, the first one at least.
  const early = opts.follow && run.running && asked === current && !begun(snap, Math.max(asked, 1));
  const first = early ? Math.max(asked, 1) : asked;
  if (first < 1 && !early)
    throw new CliError(
      `run "${workflowId}" has not started an iteration yet; try again once \`vigil status ${workflowId}\` shows iteration 1, or follow it with -f`,
      EXIT.noSuchRun,
    );
  if (first > current && !early)
    throw new CliError(
      `run "${workflowId}" has run ${current} iteration(s) so far; there is no iteration ${first}${run.running ? ' yet' : ''}`,
      EXIT.noSuchRun,
    );
  const reader = hostLogReader(client, run, opts.answerSeconds);
  /** A note: on stderr, or a `note` record with --json. */
  const note = async (text: string): Promise<void> => (opts.event ? opts.event({ kind: 'note', text }) : opts.note(text));
  const finished = async (view: RunView): Promise<void> => {
    if (!opts.event) return opts.note(finishedNote(workflowId, view));
    const o = view.kind === 'finished' ? view.outcome : null;
    await opts.event({
      kind: 'finished',
      workflowId,
      outcome: o ? { status: o.status, reason: o.reason, exitCode: o.exitCode, notes: o.notes } : null,
      temporalStatus: view.kind === 'finished' ? view.temporalStatus : 'RUNNING',
    });
  };

  /** A line when the followed run pauses or resumes (its end is `finished`). */
  let paused = snap.paused;
  const watch = async (view: RunView | null): Promise<void> => {
    const s = view?.kind === 'running' ? view.snapshot : null;
    if (s === null || s.paused === paused) return;
    paused = s.paused;
    await note(pauseNote(workflowId, s));
  };

  let stop = false;
  void opts.interrupted?.then(() => {
    stop = true;
  });
  const interrupted = opts.interrupted ?? new Promise<void>(() => {});

  /** Shows iteration `iteration` from the start: followed while `live`, else read to its end. 'stopped' on Ctrl+C. */
  const showIteration = async (iteration: number, live: boolean, mustExist: boolean): Promise<'done' | 'stopped'> => {
    let offset = 0;
    let announced = false;
    const read = (waitMs: number, partial: boolean): Promise<ReadRunLogResult> =>
      reader({ repoPath: snap.repoPath, runId: workflowId, iteration, offset, waitMs, partial });
    const failed = (chunk: ReadRunLogResult): CliError =>
      new CliError(`cannot read the log of iteration ${iteration} on ${run.where}: ${chunk.problem ?? ''}`, EXIT.noSuchRun);
    const show = async (chunk: ReadRunLogResult): Promise<void> => {
      if (!announced) {
        if (opts.event) await opts.event({ kind: 'iteration', workflowId, iteration, where: run.where, path: chunk.path });
        else opts.note(`==> iteration ${iteration} of ${workflowId} on ${run.where}: ${chunk.path}`);
        announced = true;
      }
      if (chunk.offset < offset) await note('==> the log was replaced; reading it from the start');
      // As read: JSON escapes control characters itself; text for a terminal shows them.
      if (opts.event) await opts.event({ kind: 'text', iteration, offset: chunk.offset, text: chunk.text });
      else await opts.write(neutraliseText(chunk.text));
      offset = chunk.nextOffset;
    };
    /** Everything from `offset` to the end, the last line too; done when the log is missing or read. */
    const drain = async (): Promise<'done'> => {
      for (;;) {
        const chunk = await read(0, true);
        if (chunk.problem) throw failed(chunk);
        if (!chunk.found) {
          if (offset > 0) return 'done';
          const why = `iteration ${iteration} of run "${workflowId}" has no log on ${run.where} (${chunk.path})`;
          if (mustExist)
            throw new CliError(`${why}${iteration === current && run.running ? '; its agent has not started yet' : ''}`, EXIT.noSuchRun);
          await note(`==> ${why}`);
          return 'done';
        }
        const before = offset;
        await show(chunk);
        if (offset >= chunk.size || offset === before) return 'done';
      }
    };
    if (!live) return drain();
    for (;;) {
      const started = Date.now();
      const chunk = await Promise.race([read(FOLLOW_WAIT_MS, false), interrupted.then(() => null)]);
      if (stop || !chunk) return 'stopped';
      if (chunk.problem) throw failed(chunk);
      if (chunk.found && chunk.text !== '') {
        await show(chunk);
        const more = offset < chunk.size && chunk.nextOffset - chunk.offset >= 64 * 1024;
        if (!more) await Promise.race([sleep(FOLLOW_MIN_INTERVAL_MS - (Date.now() - started)), interrupted]);
        continue;
      }
      // Nothing new for a while: is the iteration's agent call over?
      const view = await viewRun(sdkRunApi(client), workflowId).catch(() => null);
      if (stop) return 'stopped';
      await watch(view);
      const s = view?.snapshot ?? null;
      const over = view?.kind === 'finished' || (s !== null && (s.iteration > iteration || !s.agentRunning));
      if (over) return drain();
    }
  };

  // A plain read: one iteration, whole.
  if (!opts.follow) {
    await showIteration(first, false, true);
    return 0;
  }
  // Following: this iteration, then each next one as it begins, until the run finishes.
  let iteration = early ? first - 1 : first;
  let live = run.running && first === current && snap.agentRunning;
  let mustExist = true;
  if (early) await note(waitingNote(workflowId, first, snap));
  else if (snap.paused) await note(pauseNote(workflowId, snap));
  for (let shown = !early; ; shown = true) {
    if (shown && (await showIteration(iteration, live, mustExist)) === 'stopped') return 0;
    mustExist = false;
    for (;;) {
      let view = await viewRun(sdkRunApi(client), workflowId).catch(() => null);
      if (stop) return 0;
      await watch(view);
      if (view?.kind === 'finished' && view.snapshot === null) {
        // A finished run answers its status from a replay of its history.
        view = { ...view, snapshot: await queryStatus(sdkRunApi(client), workflowId, FINISHED_ANSWER_MS).catch(() => null) };
      }
      const next = view ? nextIteration(view, iteration) : null;
      if (view && next === 'finished') {
        await finished(view);
        return 0;
      }
      if (typeof next === 'number') {
        iteration = next;
        const s = view?.snapshot ?? null;
        live = view?.kind === 'running' && s !== null && s.iteration === next && s.agentRunning;
        break;
      }
      await Promise.race([sleep(opts.pollMs ?? 1000), interrupted]);
      if (stop) return 0;
    }
  }
}

/**
 * Reads one chunk through a standalone activity on the run's host queue; once the server has said
 * it takes none, every read goes through a `vigilReadLog` workflow instead (the same chunk).
 */
function hostLogReader(
  client: Client,
  run: Located,
  answerSeconds: number,
): (request: ReadRunLogInput & { waitMs: number }) => Promise<ReadRunLogResult> {
  let standalone = true;
  return async (request) => {
    if (standalone) {
      const answer = await readOnHost<ReadRunLogResult>(client, {
        activity: 'readRunLog',
        input: request,
        taskQueue: run.readQueue,
        answerSeconds,
        waitMs: request.waitMs,
        runId: request.runId,
      });
      if (answer.kind === 'result') return answer.result;
      if (answer.kind === 'no_worker') throw noWorkerError(run, answerSeconds);
      standalone = false;
    }
    return readThroughWorkflow(client, run, request, answerSeconds);
  };
}

/** One read through a `vigilReadLog` workflow on the run's queue; its activity on the host's queue (servers before standalone activities). */
async function readThroughWorkflow(
  client: Client,
  run: Located,
  request: ReadRunLogInput & { waitMs: number },
  answerSeconds: number,
): Promise<ReadRunLogResult> {
  const hostQueue = run.snapshot.host ? run.readQueue : null;
  // A worker on the shared queue takes the workflow task, one on the host's queue the read.
  const limitMs = 2 * answerSeconds * 1000 + request.waitMs + 15_000;
  const handle = await client.workflow.start(vigilReadLog, {
    taskQueue: run.taskQueue,
    workflowId: `vigil-logs/${request.runId}/${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`,
    args: [{ request, hostQueue, answerSeconds }],
    // Never lingers: a read nobody answers is gone a minute after the CLI gave up on it.
    workflowExecutionTimeout: limitMs + 60_000,
    staticSummary: `vigil logs ${request.runId} --iteration ${request.iteration} (offset ${request.offset ?? 0})`,
  });
  let timer: NodeJS.Timeout | undefined;
  const answer: ReadLogAnswer | null = await Promise.race([
    handle.result(),
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), limitMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if (answer === null) {
    await handle.terminate('vigil logs: no worker answered').catch(() => undefined);
    throw new CliError(
      `no worker answered on task queue "${run.taskQueue}" within ${Math.round(limitMs / 1000)} s; start one with \`vigil worker\``,
      EXIT.unreachable,
    );
  }
  if (answer.kind === 'chunk') return answer.chunk;
  if (answer.kind === 'no_worker') throw noWorkerError(run, answerSeconds);
  throw new CliError(`reading the log failed on the run's host: ${answer.message}`, EXIT.unreachable);
}
