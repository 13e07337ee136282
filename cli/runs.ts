/**
 * Client-side operations on runs: start one, look one up (telling "no such run", "finished" and
 * "no worker is polling" apart), send it messages, and follow it until it finishes or pauses.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  WorkflowIdConflictPolicy,
  WorkflowNotFoundError,
  type Client,
  type Connection,
  type WorkflowHandle,
} from '@temporalio/client';
import type { ChecklistItem } from '../schemas/gates.js';
import type { Knobs } from '../schemas/knobs.js';
import type { PausePayload } from '../schemas/messages.js';
import { OUTCOME_EXIT_CODES, OutcomeSchema, type Outcome, type RunInput } from '../schemas/run.js';
import { SA_ITERATION, SA_PROVIDER, SA_REPO, SA_STATUS, SEARCH_ATTRIBUTES } from '../schemas/search-attributes.js';
import type { StatusSnapshot } from '../schemas/status.js';
import {
  budgetSignal,
  waiveSignal,
  waiveUpdate,
  budgetUpdate,
  forceReviewSignal,
  forceReviewUpdate,
  inputSignal,
  inputUpdate,
  pauseSignal,
  pauseUpdate,
  resumeSignal,
  resumeUpdate,
  statusQuery,
  stopSignal,
  stopUpdate,
  type MessageAck,
} from '../workflows/messages.js';
import { vigilRun } from '../workflows/run-workflow.js';
import { staticDetails, staticSummary } from '../workflows/ui.js';
import { runSecret, signRun } from '../activities/run-authorization.js';
import { failoverChain } from '../workflows/decisions/failover.js';
import { CliError, EXIT, missingSearchAttributes, type Endpoint } from './connection.js';
import type { Prd } from './prd.js';

/** How long the CLI waits for a worker to answer a query or an update before saying none is polling. */
export const WORKER_ANSWER_MS = 8000;

export function checkRepo(repo: string): string {
  const abs = path.resolve(repo);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new CliError(`--repo ${abs} does not exist or is not a directory`, EXIT.usage);
  try {
    const inside = execFileSync('git', ['rev-parse', '--is-inside-work-tree'], { cwd: abs, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (inside !== 'true') throw new Error('no');
  } catch {
    throw new CliError(`--repo ${abs} is not a git working tree; run \`git init\` there first`, EXIT.usage);
  }
  return abs;
}

export function defaultRunId(prd: Prd, now = new Date()): string {
  const slug = path.basename(prd.path).replace(/\.[^.]*$/, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'run';
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `vigil-${slug}-${stamp}`;
}

export interface StartOptions {
  prd: Prd;
  repoPath: string;
  knobs: Knobs;
  workflowId: string;
  /** When a run with this id is already running: attach to it instead of failing. */
  attachIfRunning?: boolean;
  /** A checklist a person supplied (`--checklist FILE`), validated. */
  checklist?: ChecklistItem[];
  /** The host holding the repository (normalised): its workers run the repository-bound activities. */
  host?: string;
  /** A directive for the first prompt, delivered with the start (signal-with-start). */
  directive?: { directive: string; by: string };
}

export interface StartResult {
  handle: WorkflowHandle<typeof vigilRun>;
  attached: boolean;
  /**
   * Vigil's search attributes the run goes without: `missing` names the ones the namespace lacks
   * (empty: the run has them all); `refusal` is the server's reason when it refused them at start.
   */
  searchAttributes: { missing: string[]; refusal?: string };
}

/** The server refused a start because of a search attribute it does not know (INVALID_ARGUMENT). */
function searchAttributeRefusal(err: unknown): string | null {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const message = cause instanceof Error ? cause.message : String(cause);
  return /search attribute/i.test(message) ? message.replace(/^\d+ [A-Z_]+: /, '').split('\n')[0] ?? message : null;
}

/**
 * Starts a run. Needs no admin rights: where the namespace lacks Vigil's search attributes (or
 * refuses them), the run starts without them, tells its workflow so (`searchAttributes: false`:
 * an upsert of an unknown attribute would fail every workflow task), and the result says which
 * are missing, for the caller to tell the person once.
 */
export async function startRun(client: Client, connection: Connection, ep: Endpoint, opts: StartOptions): Promise<StartResult> {
  const input: RunInput = {
    prdPath: opts.prd.path,
    prdTitle: opts.prd.title,
    repoPath: opts.repoPath,
    knobs: opts.knobs,
    ...(opts.checklist ? { checklist: opts.checklist } : {}),
    ...(opts.host ? { host: opts.host } : {}),
  };
  // Where the installation's run secret is readable, the run is signed: workers that require
  // signed runs execute only what the operator's CLI started.
  const secret = runSecret();
  if (secret) {
    const k = opts.knobs;
    input.authorization = signRun(secret, { workflowId: opts.workflowId, repoPath: opts.repoPath, provider: k.provider, agentCommand: k.agentCommand, councilProvider: k.councilProvider || k.provider, testCommand: k.testCommand, failover: [...failoverChain(k), ...(k.devilsAdvocateProvider ? [k.devilsAdvocateProvider] : []), ...(k.reviewProvider ? [k.reviewProvider] : [])] });
  }
  if (opts.attachIfRunning) {
    const existing = client.workflow.getHandle<typeof vigilRun>(opts.workflowId);
    const desc = await existing.describe().catch(() => null);
    if (desc?.status.name === 'RUNNING') return { handle: existing, attached: true, searchAttributes: { missing: [] } };
  }
  // null: the server would not say (no right to list them); try with them, and without on refusal.
  const missing = await missingSearchAttributes(connection, ep.namespace);
  const start = (withSearchAttributes: boolean): Promise<WorkflowHandle<typeof vigilRun>> => {
    const args: RunInput = withSearchAttributes ? input : { ...input, searchAttributes: false };
    const common = {
      taskQueue: ep.taskQueue,
      workflowId: opts.workflowId,
      args: [args] as [RunInput],
      staticSummary: staticSummary(input),
      staticDetails: staticDetails(input),
      ...(withSearchAttributes
        ? {
            typedSearchAttributes: [
              { key: SA_STATUS, value: 'starting' },
              { key: SA_ITERATION, value: 0 },
              { key: SA_REPO, value: input.repoPath.slice(-255) },
              { key: SA_PROVIDER, value: input.knobs.provider },
            ],
          }
        : {}),
    };
    if (opts.directive) {
      // The directive is in history before the run's first workflow task, so the first prompt has it.
      return client.workflow.signalWithStart(vigilRun, { ...common, signal: inputSignal, signalArgs: [opts.directive] });
    }
    return client.workflow.start(vigilRun, { ...common, workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL });
  };
  try {
    if (missing !== null && missing.length > 0) return { handle: await start(false), attached: false, searchAttributes: { missing } };
    try {
      return { handle: await start(true), attached: false, searchAttributes: { missing: [] } };
    } catch (err) {
      const refusal = searchAttributeRefusal(err);
      if (refusal === null) throw err;
      return { handle: await start(false), attached: false, searchAttributes: { missing: SEARCH_ATTRIBUTES.map((k) => k.name), refusal } };
    }
  } catch (err) {
    if (err instanceof Error && /already (started|running)/i.test(err.message)) {
      throw new CliError(`a run with id "${opts.workflowId}" is already running; choose another --id or follow it with \`vigil watch ${opts.workflowId}\``, EXIT.usage);
    }
    throw err;
  }
}

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
    }
  | { kind: 'finished'; workflowId: string; temporalStatus: string; outcome: Outcome | null; snapshot: StatusSnapshot | null; iteration: number | null };

export const isNotFound = (err: unknown): boolean =>
  err instanceof WorkflowNotFoundError || (err instanceof Error && /not found/i.test(err.message) && !/worker/i.test(err.message));

export function noSuchRun(workflowId: string): CliError {
  return new CliError(`no such run: "${workflowId}" (list runs with \`vigil list\`)`, EXIT.noSuchRun);
}

/** Describes a run: finished or running, and whether a worker answers for it. */
export async function viewRun(client: Client, workflowId: string): Promise<RunView> {
  const handle = client.workflow.getHandle(workflowId);
  let desc;
  try {
    desc = await handle.describe();
  } catch (err) {
    if (isNotFound(err)) throw noSuchRun(workflowId);
    throw err;
  }
  const sa = desc.typedSearchAttributes;
  const iteration = sa.get(SA_ITERATION) ?? null;
  const searchStatus = sa.get(SA_STATUS) ?? null;
  // A finished run is answered by any worker from its cached or replayed state; do not wait long.
  const snapshot = await queryStatus(client, handle, desc.status.name === 'RUNNING' ? WORKER_ANSWER_MS : 2000).catch(() => null);
  if (desc.status.name === 'RUNNING') {
    const taskFailing = snapshot === null ? await workflowTaskFailure(client, workflowId, desc.raw.pendingWorkflowTask?.attempt ?? 0) : null;
    return { kind: 'running', workflowId, snapshot, workerAnswered: snapshot !== null, iteration, searchStatus, taskFailing };
  }
  let outcome: Outcome | null = null;
  if (desc.status.name === 'COMPLETED') {
    const parsed = OutcomeSchema.safeParse(await handle.result().catch(() => null));
    outcome = parsed.success ? parsed.data : null;
  }
  return { kind: 'finished', workflowId, temporalStatus: desc.status.name, outcome, snapshot, iteration };
}

export async function queryStatus(client: Client, handle: WorkflowHandle, timeoutMs: number): Promise<StatusSnapshot> {
  return client.withDeadline(Date.now() + timeoutMs, () => handle.query(statusQuery));
}

/**
 * A worker that polls but cannot complete the run's workflow task (attempt 2 and more) is not a
 * missing worker: the last WorkflowTaskFailed event says why.
 */
async function workflowTaskFailure(client: Client, workflowId: string, attempt: number): Promise<string | null> {
  if (attempt < 2) return null;
  const page = await client.workflowService
    .getWorkflowExecutionHistoryReverse({ namespace: client.options.namespace, execution: { workflowId }, maximumPageSize: 50 })
    .catch(() => null);
  const failed = page?.history?.events?.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes;
  return `${failed?.failure?.message ?? 'unknown cause'} (attempt ${attempt})`.slice(0, 1000);
}

export function noWorkerError(ep: Endpoint, workflowId: string, taskFailing: string | null = null): CliError {
  if (taskFailing) {
    return new CliError(
      `run "${workflowId}" is running, but its workflow task keeps failing on the worker: ${taskFailing}.\n` +
        "A worker is polling; it cannot process this run (see the worker's log). Fix the cause and restart the worker, or end the run with `temporal workflow terminate -w " +
        `${workflowId}\`.`,
      EXIT.unreachable,
    );
  }
  return new CliError(
    `run "${workflowId}" is running, but no worker is polling task queue "${ep.taskQueue}" (nothing answered within ${WORKER_ANSWER_MS / 1000} s).\n` +
      'Start one with `vigil worker` (or `vigil up`). To record a message anyway, resend it with --signal: it takes effect when a worker picks the run up.',
    EXIT.unreachable,
  );
}

export function finishedError(view: Extract<RunView, { kind: 'finished' }>): CliError {
  const what = view.outcome ? `${view.outcome.status}: ${view.outcome.reason}` : view.temporalStatus.toLowerCase();
  return new CliError(`run "${view.workflowId}" has finished (${what}); there is nothing to change`, EXIT.notReached);
}

export type MessageKind = 'pause' | 'resume' | 'stop' | 'input' | 'forceReview' | 'budget' | 'waive';

const UPDATES = { pause: pauseUpdate, resume: resumeUpdate, stop: stopUpdate, input: inputUpdate, forceReview: forceReviewUpdate, budget: budgetUpdate, waive: waiveUpdate } as const;
const SIGNALS = { pause: pauseSignal, resume: resumeSignal, stop: stopSignal, input: inputSignal, forceReview: forceReviewSignal, budget: budgetSignal, waive: waiveSignal } as const;

/**
 * Sends a message as an update (validated, acknowledged), after checking that the run exists, is
 * running and has a worker. With `asSignal`, sends the signal form instead: durable even while no
 * worker runs, but unacknowledged.
 */
export async function sendMessage(
  client: Client,
  ep: Endpoint,
  workflowId: string,
  kind: MessageKind,
  payload: Record<string, unknown>,
  asSignal = false,
): Promise<MessageAck | null> {
  const handle = client.workflow.getHandle(workflowId);
  if (asSignal) {
    try {
      await handle.signal(SIGNALS[kind], payload);
    } catch (err) {
      if (isNotFound(err)) {
        const view = await viewRun(client, workflowId);
        if (view.kind === 'finished') throw finishedError(view);
        throw noSuchRun(workflowId);
      }
      throw err;
    }
    return null;
  }
  const view = await viewRun(client, workflowId);
  if (view.kind === 'finished') throw finishedError(view);
  if (!view.workerAnswered) throw noWorkerError(ep, workflowId, view.taskFailing);
  try {
    return await client.withDeadline(Date.now() + 30_000, () => handle.executeUpdate(UPDATES[kind] as typeof pauseUpdate, { args: [payload as PausePayload] }));
  } catch (err) {
    const msg = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new CliError(`${kind} rejected: ${msg}`, EXIT.usage);
  }
}

export function exitCodeOf(outcome: Outcome | null): number {
  return outcome ? OUTCOME_EXIT_CODES[outcome.status] : 1;
}
