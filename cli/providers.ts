/**
 * `vigil providers`: lists every provider circuit breaker entity (`vigilProviderBreaker`
 * workflows) with its state, failures in the window, open-until time and last transition, as text
 * or JSON; `--reset P` closes provider P's breaker through its `reset` update. Exit codes: 0 ok,
 * 2 bad provider name, 3 no such breaker, 4 no worker answered.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { defaultActor } from './steer-commands.js';
import {
  BREAKER_WORKFLOW_ID_PREFIX,
  BREAKER_WORKFLOW_TYPE,
  breakerStateQuery,
  breakerWorkflowId,
  effectivePhase,
  failuresInWindow,
  KNOWN_PROVIDERS,
  ProviderNameSchema,
  resetUpdate,
  type BreakerEvent,
  type BreakerView,
} from '../workflows/provider-breaker-messages.js';
import type { ProviderBreakerState } from '../rules/provider-breaker.js';
import { EXIT } from './connection.js';

/** Bounds one `breakerState` query: a worker answers in milliseconds; none polling never does. */
const QUERY_TIMEOUT_MS = 5000;
/** Bounds the `reset` update: it is applied by a worker, so it waits for one to pick the task up. */
const RESET_TIMEOUT_MS = 30_000;
/** Bounds the visibility listing: a slow visibility store must not hang the command (ids are probed too). */
const LIST_TIMEOUT_MS = 10_000;

const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
const err = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

export interface ProviderRow {
  provider: string;
  workflowId: string;
  /** False when no worker answered the query: the fields below are then null. */
  workerAnswered: boolean;
  phase: BreakerView['effectivePhase'] | null;
  failuresInWindow: number | null;
  failureThreshold: number | null;
  openUntil: string | null;
  lastTransition: BreakerEvent | null;
  runsWaiting: number | null;
  invalidReportCount: number | null;
  view: BreakerView | null;
  error: string | null;
}

export async function providersCommand(client: Client, opts: { json: boolean; reset?: string; by?: string }): Promise<number> {
  if (opts.reset !== undefined) return resetBreaker(client, opts.reset, opts.by ?? defaultActor(), opts.json);
  const rows = await listBreakers(client);
  if (opts.json) out(JSON.stringify(rows, null, 2));
  else if (rows.length === 0) out('no provider circuit breakers yet (one starts when a run first asks for its provider)');
  else for (const r of rows) out(rowLine(r, Date.now()));
  if (rows.some((r) => !r.workerAnswered)) {
    if (!opts.json) err('some breakers did not answer: no worker is polling their task queue (start one with `vigil worker`)');
    return EXIT.unreachable;
  }
  return 0;
}

async function resetBreaker(client: Client, provider: string, by: string, json: boolean): Promise<number> {
  if (!ProviderNameSchema.safeParse(provider).success) {
    err(`--reset "${provider}": not a provider name (letters, digits, ".", "_" or "-")`);
    return EXIT.usage;
  }
  const workflowId = breakerWorkflowId(provider);
  const handle = client.workflow.getHandle(workflowId);
  if (!(await isRunning(client, workflowId))) {
    err(`no circuit breaker for provider "${provider}" (${workflowId} is not running; \`vigil providers\` lists the breakers)`);
    return EXIT.noSuchRun;
  }
  let state: ProviderBreakerState;
  try {
    state = await client.withDeadline(Date.now() + RESET_TIMEOUT_MS, () => handle.executeUpdate(resetUpdate, { args: [{ by }] }));
  } catch (e) {
    err(
      `reset of ${workflowId} was not applied within ${RESET_TIMEOUT_MS / 1000} s: ${firstLine(e)} (is a worker running? \`vigil worker\`)`,
    );
    return EXIT.unreachable;
  }
  if (json) out(JSON.stringify({ provider, workflowId, reset: true, by, state }, null, 2));
  else out(`${provider}: reset by ${by}; now ${state.phase} (trips so far ${state.trips})`);
  return 0;
}

async function isRunning(client: Client, workflowId: string): Promise<boolean> {
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    return d.status.name === 'RUNNING';
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return false;
    throw e;
  }
}

/** Running breakers: from visibility, plus the known providers' ids (visibility can lag). */
async function breakerIds(client: Client): Promise<string[]> {
  const ids = new Set<string>();
  try {
    await client.withDeadline(Date.now() + LIST_TIMEOUT_MS, async () => {
      for await (const wf of client.workflow.list({ query: `WorkflowType = '${BREAKER_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'` })) {
        ids.add(wf.workflowId);
      }
    });
  } catch {
    /* visibility slow or unavailable: the probes below still find the known providers */
  }
  const known = KNOWN_PROVIDERS.map(breakerWorkflowId).filter((id) => !ids.has(id));
  const running = await Promise.all(known.map(async (id) => ((await isRunning(client, id).catch(() => false)) ? id : null)));
  for (const id of running) if (id) ids.add(id);
  return [...ids].sort();
}

async function listBreakers(client: Client): Promise<ProviderRow[]> {
  const ids = await breakerIds(client);
  return Promise.all(
    ids.map(async (workflowId): Promise<ProviderRow> => {
      const provider = workflowId.startsWith(BREAKER_WORKFLOW_ID_PREFIX) ? workflowId.slice(BREAKER_WORKFLOW_ID_PREFIX.length) : workflowId;
      try {
        const view = await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () =>
          client.workflow.getHandle(workflowId).query(breakerStateQuery),
        );
        return rowOf(view, Date.now());
      } catch (e) {
        return {
          provider,
          workflowId,
          workerAnswered: false,
          phase: null,
          failuresInWindow: null,
          failureThreshold: null,
          openUntil: null,
          lastTransition: null,
          runsWaiting: null,
          invalidReportCount: null,
          view: null,
          error: firstLine(e),
        };
      }
    }),
  );
}

export function rowOf(view: BreakerView, nowMs: number): ProviderRow {
  const s = view.state;
  return {
    provider: view.provider,
    workflowId: view.workflowId,
    workerAnswered: true,
    phase: effectivePhase(s, nowMs),
    failuresInWindow: failuresInWindow(s, nowMs, view.config),
    failureThreshold: view.config.failureThreshold,
    openUntil: s.phase === 'OPEN' && s.openUntilMs !== null ? new Date(s.openUntilMs).toISOString() : null,
    lastTransition: view.recentEvents.at(-1) ?? null,
    runsWaiting: view.runsWaiting.length,
    invalidReportCount: view.invalidReportCount,
    view,
    error: null,
  };
}

export function rowLine(r: ProviderRow, nowMs: number): string {
  if (!r.workerAnswered) return `${r.provider.padEnd(10)} ?          no worker answered (${r.error ?? 'unknown error'})`;
  const parts = [
    r.provider.padEnd(10),
    String(r.phase).padEnd(10),
    `failures ${r.failuresInWindow}/${r.failureThreshold} in window`.padEnd(24),
  ];
  if (r.openUntil) {
    const left = Date.parse(r.openUntil) - nowMs;
    parts.push(left > 0 ? `open until ${r.openUntil} (${Math.ceil(left / 1000)} s left)` : `cooldown ended ${r.openUntil}`);
  } else {
    parts.push('open until -');
  }
  const t = r.lastTransition;
  parts.push(t ? `last: ${t.from}→${t.to} ${t.at} by ${t.by} (${t.why})` : 'last: -');
  if (r.runsWaiting) parts.push(`${r.runsWaiting} run(s) waiting`);
  if (r.invalidReportCount) parts.push(`${r.invalidReportCount} invalid report(s) ignored`);
  return parts.join('  ');
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
}
