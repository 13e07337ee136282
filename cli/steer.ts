/**
 * The CLI's fast path to a run: look one up (telling "no such run", "finished" and "no worker is
 * polling" apart) and send it messages, in as few round trips as the answer allows. Talks to
 * Temporal through a RunApi (cli/run-api.ts): the light client for `vigil status` and the message
 * verbs, the SDK's client where a command holds one. Loads no client library, no workflow code
 * and no schemas (zod) itself.
 *
 * - status: describe and query at once (one round trip of wall time).
 * - pause, resume, stop, input, ...: the Update alone (one round trip). Only when it fails does a
 *   describe tell why: no such run (exit 3), the run has finished (exit 5), no worker answered
 *   within WORKER_ANSWER_MS (exit 4; the update may still be applied when a worker picks the
 *   run up, as Temporal keeps it until then), or a workflow task that keeps failing (exit 4).
 */
import type { SentMessage } from '../schemas/message-verbs.js';
import type { Outcome } from '../schemas/run.js';
import type { StatusSnapshot } from '../schemas/status.js';
import type { MessageAck } from '../workflows/messages.js';
import type { Endpoint } from './endpoint.js';
import { CliError, EXIT } from './errors.js';
import { UpdateRejectedError, type RunApi } from './run-api.js';

/** How long the CLI waits for a worker to answer a query or an update before saying none is polling. */
export const WORKER_ANSWER_MS = 8000;
/**
 * How long a finished run's query may take: a worker answers it by replaying the whole history,
 * which takes seconds for a long run on a busy worker; without a worker the outcome alone is shown.
 */
const FINISHED_ANSWER_MS = 5000;

export type RunView =
  | {
      kind: 'running';
      workflowId: string;
      snapshot: StatusSnapshot | null;
      workerAnswered: boolean;
      iteration: number | null;
      searchStatus: string | null;
      /** Set when a worker polls but the run's workflow task keeps failing (the last failure's message). */
      taskFailing: string | null;
      /** The gates a gate pass runs right now (the one an agent call carries included); null when none. */
      gatesRunning?: string[] | null;
    }
  | {
      kind: 'finished';
      workflowId: string;
      temporalStatus: string;
      outcome: Outcome | null;
      snapshot: StatusSnapshot | null;
      iteration: number | null;
    };

/** The SDK's WorkflowNotFoundError (by name: the client library stays unloaded), gRPC NOT_FOUND, or a message that says so. */
export const isNotFound = (err: unknown): boolean =>
  err instanceof Error &&
  (err.name === 'WorkflowNotFoundError' || grpcCode(err) === 5 || (/not found/i.test(err.message) && !/worker/i.test(err.message)));

export function noSuchRun(workflowId: string): CliError {
  return new CliError(`no such run: "${workflowId}" (list runs with \`vigil list\`)`, EXIT.noSuchRun);
}

/** A run's result as an outcome, checked by shape (the schemas stay unloaded). */
function asOutcome(v: unknown): Outcome | null {
  const o = v as Partial<Outcome> | null;
  return o && typeof o === 'object' && typeof o.status === 'string' && typeof o.reason === 'string' && typeof o.exitCode === 'number'
    ? (o as Outcome)
    : null;
}

/** The run's `status` query (workflows/messages.ts statusQuery), answered within `timeoutMs`. */
export async function queryStatus(api: RunApi, workflowId: string, timeoutMs: number): Promise<StatusSnapshot> {
  return (await api.query(workflowId, 'status', timeoutMs)) as StatusSnapshot;
}

/** Describes a run: finished or running, and whether a worker answers for it. Describe and query go out together. */
export async function viewRun(api: RunApi, workflowId: string): Promise<RunView> {
  const query = queryStatus(api, workflowId, WORKER_ANSWER_MS).catch(() => null);
  let desc;
  try {
    desc = await api.describe(workflowId);
  } catch (err) {
    if (isNotFound(err)) throw noSuchRun(workflowId);
    throw err;
  }
  const { iteration, searchStatus } = desc;
  if (desc.status === 'RUNNING') {
    const snapshot = await query;
    const taskFailing = snapshot === null ? await workflowTaskFailure(api, workflowId, desc.pendingWorkflowTaskAttempt) : null;
    return {
      kind: 'running',
      workflowId,
      snapshot,
      workerAnswered: snapshot !== null,
      iteration,
      searchStatus,
      taskFailing,
      gatesRunning: desc.gatesRunning,
    };
  }
  let timer: NodeJS.Timeout | undefined;
  const [snapshot, outcome] = await Promise.all([
    // A finished run is answered by any worker from its cached or replayed state; do not wait long.
    Promise.race([query, new Promise<null>((r) => (timer = setTimeout(() => r(null), FINISHED_ANSWER_MS)))]),
    desc.status === 'COMPLETED' ? api.result(workflowId).then(asOutcome, () => null) : Promise.resolve(null),
  ]);
  clearTimeout(timer);
  return { kind: 'finished', workflowId, temporalStatus: desc.status, outcome, snapshot, iteration };
}

/**
 * A worker that polls but cannot complete the run's workflow task (attempt 2 and more) is not a
 * missing worker: the last WorkflowTaskFailed event says why.
 */
async function workflowTaskFailure(api: RunApi, workflowId: string, attempt: number): Promise<string | null> {
  if (attempt < 2) return null;
  const message = await api.lastWorkflowTaskFailure(workflowId).catch(() => null);
  return `${message ?? 'unknown cause'} (attempt ${attempt})`.slice(0, 1000);
}

export function noWorkerError(ep: Endpoint, workflowId: string, taskFailing: string | null = null, sent = false): CliError {
  if (taskFailing) {
    return new CliError(
      `run "${workflowId}" is running, but its workflow task keeps failing on the worker: ${taskFailing}.\n` +
        ("A worker is polling; it cannot process this run (see the worker's log). Fix the cause and restart " +
          'the worker, or end the run with `temporal workflow terminate -w ') +
        `${workflowId}\`.`,
      EXIT.unreachable,
    );
  }
  return new CliError(
    `run "${workflowId}" is running, but no worker is polling task queue "${ep.taskQueue}" (nothing answered within ${WORKER_ANSWER_MS / 1000} s).\n` +
      (sent ? 'The message was not acknowledged; Temporal may still deliver it when a worker picks the run up. ' : '') +
      ('Start one with `vigil worker` (or `vigil up`). To record a message durably anyway, resend it with ' +
        '--signal: it takes effect when a worker picks the run up.'),
    EXIT.unreachable,
  );
}

export function finishedError(view: Extract<RunView, { kind: 'finished' }>): CliError {
  const what = view.outcome ? `${view.outcome.status}: ${view.outcome.reason}` : view.temporalStatus.toLowerCase();
  return new CliError(`run "${view.workflowId}" has finished (${what}); there is nothing to change`, EXIT.notReached);
}

/**
 * The message kinds the CLI sends as they are: the names of the run's updates and signals, rows of
 * the message table (schemas/message-verbs.ts; its names, so the workflow library stays unloaded:
 * tests/unit/wire.test.ts checks them against workflows/messages.ts).
 */
export type MessageKind = SentMessage;

/** Why a message could not be delivered, once it failed: the run's state says. */
async function whyNotDelivered(api: RunApi, ep: Endpoint, workflowId: string, sent: boolean): Promise<CliError> {
  let desc;
  try {
    desc = await api.describe(workflowId);
  } catch (err) {
    if (isNotFound(err)) return noSuchRun(workflowId);
    throw err;
  }
  if (desc.status !== 'RUNNING') {
    const outcome = desc.status === 'COMPLETED' ? await api.result(workflowId).then(asOutcome, () => null) : null;
    return finishedError({ kind: 'finished', workflowId, temporalStatus: desc.status, outcome, snapshot: null, iteration: null });
  }
  return noWorkerError(ep, workflowId, await workflowTaskFailure(api, workflowId, desc.pendingWorkflowTaskAttempt), sent);
}

const grpcCode = (err: unknown): unknown => {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  return e?.code ?? e?.cause?.code;
};
/** gRPC DEADLINE_EXCEEDED (4): nothing answered in time. */
const isDeadline = (err: unknown): boolean => grpcCode(err) === 4 || (err instanceof Error && /deadline/i.test(err.message));
/** gRPC FAILED_PRECONDITION (9): the server refuses updates while the run's workflow task keeps failing. */
const isTaskFailing = (err: unknown): boolean => grpcCode(err) === 9;

/**
 * Sends a message as an update (validated, acknowledged) in one round trip; on failure, says
 * whether the run does not exist, has finished, or has no worker. With `asSignal`, sends the
 * signal form instead: durable even while no worker runs, but unacknowledged.
 */
export async function sendMessage(
  api: RunApi,
  ep: Endpoint,
  workflowId: string,
  kind: MessageKind,
  payload: Record<string, unknown>,
  asSignal = false,
): Promise<MessageAck | null> {
  if (asSignal) {
    try {
      await api.signal(workflowId, kind, payload);
    } catch (err) {
      if (isNotFound(err)) throw await whyNotDelivered(api, ep, workflowId, false);
      throw err;
    }
    return null;
  }
  try {
    return (await api.update(workflowId, kind, payload, WORKER_ANSWER_MS)) as MessageAck;
  } catch (err) {
    if (err instanceof UpdateRejectedError) throw new CliError(`${kind} rejected: ${err.message}`, EXIT.usage);
    // Already said (the server cannot be reached).
    if (err instanceof CliError) throw err;
    if (isNotFound(err) || isTaskFailing(err)) throw await whyNotDelivered(api, ep, workflowId, false);
    if (isDeadline(err)) throw await whyNotDelivered(api, ep, workflowId, true);
    const msg = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new CliError(`${kind} rejected: ${msg}`, EXIT.usage);
  }
}

export function exitCodeOf(outcome: Outcome | null): number {
  return outcome ? outcome.exitCode : 1;
}
