/**
 * `vigil logs <id> [--iteration N] [-f]`: an iteration's agent log, from any machine. The log lives
 * in the repository on the run's host, so each read is a short `vigilReadLog` workflow whose one
 * activity runs on that host's queue and returns a bounded, redacted chunk. Following reads from the
 * last offset (each read waits up to 10 s for the log to grow) until the log stops growing and the
 * run has moved past the iteration or finished; Ctrl+C ends it with exit 0.
 */
import { randomBytes } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { hostTaskQueue } from '../schemas/hosts.js';
import type { ReadLogAnswer, ReadRunLogResult } from '../schemas/logs.js';
import type { StatusSnapshot } from '../schemas/status.js';
import { vigilReadLog } from '../workflows/read-log.js';
import { CliError, EXIT } from './connection.js';
import { sdkRunApi } from './sdk-run-api.js';
import { isNotFound, noSuchRun, queryStatus, viewRun, WORKER_ANSWER_MS } from './steer.js';

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
}

/** How long one following read waits for the log to grow. */
const FOLLOW_WAIT_MS = 10_000;
/** At least this long between following reads (a busy agent's output arrives in batches, not a workflow per line). */
const FOLLOW_MIN_INTERVAL_MS = 1000;
/** A finished run answers its status from a replay of its history: give a long one time. */
const FINISHED_ANSWER_MS = 30_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Located {
  handle: WorkflowHandle;
  running: boolean;
  /** The run's workflow queue (where `vigilReadLog` runs). */
  taskQueue: string;
  snapshot: StatusSnapshot;
}

async function locate(client: Client, workflowId: string): Promise<Located> {
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
  return { handle, running, taskQueue: desc.taskQueue, snapshot };
}

export async function logsCommand(client: Client, workflowId: string, opts: LogsOptions): Promise<number> {
  const run = await locate(client, workflowId);
  const snap = run.snapshot;
  const host = snap.host ?? null;
  const current = snap.iteration;
  const iteration = opts.iteration ?? current;
  if (iteration < 1) throw new CliError(`run "${workflowId}" has not started an iteration yet; try again once \`vigil status ${workflowId}\` shows iteration 1`, EXIT.noSuchRun);
  if (iteration > current) throw new CliError(`run "${workflowId}" has run ${current} iteration(s) so far; there is no iteration ${iteration}${run.running ? ' yet' : ''}`, EXIT.noSuchRun);
  const hostQueue = host ? hostTaskQueue(run.taskQueue, host) : null;
  const where = host ? `host "${host}"` : 'any worker';

  const read = (offset: number, waitMs: number, partial: boolean): Promise<ReadRunLogResult> =>
    readChunk(client, run, { repoPath: snap.repoPath, runId: workflowId, iteration, offset, waitMs, partial }, hostQueue, opts.answerSeconds);
  const missing = (chunk: ReadRunLogResult): CliError =>
    new CliError(
      `iteration ${iteration} of run "${workflowId}" has no log on ${where} (${chunk.path})${iteration === current && run.running ? '; its agent has not started yet' : ''}`,
      EXIT.noSuchRun,
    );

  let offset = 0;
  let announced = false;
  const show = async (chunk: ReadRunLogResult): Promise<void> => {
    if (!announced) {
      opts.note(`==> iteration ${iteration} of ${workflowId} on ${where}: ${chunk.path}`);
      announced = true;
    }
    if (chunk.offset < offset) opts.note('==> the log was replaced; reading it from the start');
    await opts.write(chunk.text);
    offset = chunk.nextOffset;
  };
  /** Everything from `offset` to the end, the last line too. */
  const drain = async (): Promise<ReadRunLogResult | null> => {
    let last: ReadRunLogResult | null = null;
    for (;;) {
      const chunk = await read(offset, 0, true);
      if (chunk.problem) throw new CliError(`cannot read the log of iteration ${iteration} on ${where}: ${chunk.problem}`, EXIT.noSuchRun);
      if (!chunk.found) return last;
      const before = offset;
      await show(chunk);
      last = chunk;
      if (offset >= chunk.size || offset === before) return last;
    }
  };

  // An iteration that is over needs no following: its log grows no more.
  if (!opts.follow || !run.running || iteration < current || !snap.agentRunning) {
    const chunk = await drain();
    if (!chunk) throw missing(await read(0, 0, true));
    return 0;
  }

  let stop = false;
  void opts.interrupted?.then(() => {
    stop = true;
  });
  const interrupted = opts.interrupted ?? new Promise<void>(() => {});
  for (;;) {
    const started = Date.now();
    const chunk = await Promise.race([read(offset, FOLLOW_WAIT_MS, false), interrupted.then(() => null)]);
    if (stop || !chunk) return 0;
    if (chunk.problem) throw new CliError(`cannot read the log of iteration ${iteration} on ${where}: ${chunk.problem}`, EXIT.noSuchRun);
    if (chunk.found && chunk.text !== '') {
      await show(chunk);
      const more = offset < chunk.size && chunk.nextOffset - chunk.offset >= 64 * 1024;
      if (!more) await Promise.race([sleep(FOLLOW_MIN_INTERVAL_MS - (Date.now() - started)), interrupted]);
      continue;
    }
    // Nothing new for a while: is the iteration's agent call over?
    const view = await viewRun(sdkRunApi(client), workflowId).catch(() => null);
    if (stop) return 0;
    const s = view?.snapshot ?? null;
    const over = view?.kind === 'finished' || (s !== null && (s.iteration > iteration || !s.agentRunning));
    if (!over) continue;
    const last = await drain();
    if (!last && offset === 0) throw missing(chunk);
    return 0;
  }
}

/** One read through a `vigilReadLog` workflow on the run's queue; its activity on the host's queue. */
async function readChunk(
  client: Client,
  run: Located,
  request: { repoPath: string; runId: string; iteration: number; offset: number; waitMs: number; partial: boolean },
  hostQueue: string | null,
  answerSeconds: number,
): Promise<ReadRunLogResult> {
  // A worker on the shared queue takes the workflow task, one on the host's queue the read.
  const limitMs = 2 * answerSeconds * 1000 + request.waitMs + 15_000;
  const handle = await client.workflow.start(vigilReadLog, {
    taskQueue: run.taskQueue,
    workflowId: `vigil-logs/${request.runId}/${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`,
    args: [{ request, hostQueue, answerSeconds }],
    // Never lingers: a read nobody answers is gone a minute after the CLI gave up on it.
    workflowExecutionTimeout: limitMs + 60_000,
    staticSummary: `vigil logs ${request.runId} --iteration ${request.iteration} (offset ${request.offset})`,
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
    throw new CliError(`no worker answered on task queue "${run.taskQueue}" within ${Math.round(limitMs / 1000)} s; start one with \`vigil worker\``, EXIT.unreachable);
  }
  if (answer.kind === 'chunk') return answer.chunk;
  if (answer.kind === 'no_worker') {
    const host = run.snapshot.host;
    throw new CliError(
      host
        ? `no worker on host "${host}" picked the read up within ${answerSeconds} s: nothing polls task queue "${answer.queue}".\n` +
            `Start \`vigil worker --host ${host}\` (or \`vigil up --host ${host}\`) on the machine that holds ${run.snapshot.repoPath}.`
        : `no worker picked the read up within ${answerSeconds} s on task queue "${run.taskQueue}"; start one with \`vigil worker\``,
      EXIT.unreachable,
    );
  }
  throw new CliError(`reading the log failed on the run's host: ${answer.message}`, EXIT.unreachable);
}
