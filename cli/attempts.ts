/**
 * `vigil start --attempts K [--attempt-agents A,B] [--attempt-models M,N] [--keep-attempts]`: the
 * options read and checked, the cost multiplier said before starting, the `vigilAttempts`
 * workflow started; and what `vigil status` shows of a run with attempts (docs/attempts.md).
 */
import type { Client, Connection } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/client';
import type { AttemptsInput, AttemptsStatus } from '../schemas/attempts.js';
import { MAX_ATTEMPTS } from '../schemas/attempts.js';
import { PROVIDERS } from '../schemas/provider-names.js';
import type { Knobs } from '../schemas/knobs.js';
import { multiplierMessage } from '../rules/attempts.js';
import { CliError, EXIT } from './errors.js';
import type { Endpoint } from './connection.js';
import type { RunInput } from '../schemas/run.js';

export type AttemptOptions = Omit<AttemptsInput, 'run'>;

const list = (v: unknown): string[] =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

/** The attempts a start asks for (null: none, an ordinary run); bad values are a usage error. */
export function attemptOptions(o: Record<string, unknown>, knobs: Knobs): AttemptOptions | null {
  const agents = list(o.attemptAgents);
  const models = list(o.attemptModels);
  if (o.attempts === undefined) {
    if (agents.length || models.length || o.keepAttempts)
      throw new CliError('--attempt-agents, --attempt-models and --keep-attempts need --attempts K (2-9)', EXIT.usage);
    return null;
  }
  const k = Number(o.attempts);
  if (!Number.isInteger(k) || k < 2 || k > MAX_ATTEMPTS)
    throw new CliError(`--attempts takes a whole number from 2 to ${MAX_ATTEMPTS}, not ${String(o.attempts)}`, EXIT.usage);
  const bad = agents.filter((a) => !(PROVIDERS as readonly string[]).includes(a));
  if (bad.length) throw new CliError(`--attempt-agents: unknown agent ${bad.join(', ')} (one of ${PROVIDERS.join(', ')})`, EXIT.usage);
  if (knobs.parallelStreams > 1)
    throw new CliError('--attempts and parallelStreams above 1 do not go together yet: start with one of them', EXIT.usage);
  return { attempts: k, agents: agents as (typeof PROVIDERS)[number][], models, keepAttempts: o.keepAttempts === true };
}

/** What `vigil start --attempts K` says before it starts anything. */
export const attemptsNotice = (a: AttemptOptions, knobs: Knobs): string => multiplierMessage(a.attempts, knobs.budgetUsd);

/**
 * Starts the `vigilAttempts` workflow (by name: the CLI does not load workflow code), with the
 * search attributes a single run starts with (cli/runs.ts `startSearchAttributes`) where the
 * namespace has them; without, where it lacks one the run upserts or refuses them at start.
 * Answers which it goes without, for the caller to tell the person (as `vigil start` of a single run does).
 */
export async function startAttempts(
  client: Client,
  connection: Connection,
  ep: Endpoint,
  o: { workflowId: string; replace: boolean; run: RunInput; attempts: AttemptOptions },
): Promise<{ missing: string[]; refusal?: string }> {
  const [{ missingSearchAttributes }, { searchAttributeRefusal, startSearchAttributes }, { SEARCH_ATTRIBUTES }] = await Promise.all([
    import('./connection.js'),
    import('./runs.js'),
    import('../schemas/search-attributes.js'),
  ]);
  // null: the server would not say (no right to list them); tried with them, and without on refusal.
  const missing = await missingSearchAttributes(connection, ep.namespace);
  const start = async (withAttributes: boolean): Promise<void> => {
    const attributes = withAttributes ? startSearchAttributes(o.run, missing ?? []) : null;
    // forwarding, forwardsAlso: the run forwards messages to its attempts, delivers deliver=pr, and cleans up when
    // stopped; searchAttributes: it keeps its search attributes as it goes (schemas/attempts.ts).
    const args: AttemptsInput = {
      ...o.attempts,
      run: o.run,
      forwarding: true,
      forwardsAlso: ['forceReview', 'waive'],
      ...(attributes?.upserts ? { searchAttributes: true as const } : {}),
    };
    await client.workflow.start('vigilAttempts', {
      taskQueue: ep.taskQueue,
      workflowId: o.workflowId,
      workflowIdReusePolicy: o.replace ? WorkflowIdReusePolicy.ALLOW_DUPLICATE : WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      args: [args],
      staticSummary: `Vigil run with ${o.attempts.attempts} attempts · ${o.run.prdTitle}`.slice(0, 200),
      ...(attributes?.upserts ? { typedSearchAttributes: attributes.typed } : {}),
    });
  };
  try {
    if (missing !== null && missing.length > 0) {
      await start(startSearchAttributes(o.run, missing).upserts);
      return { missing };
    }
    try {
      await start(true);
      return { missing: [] };
    } catch (err) {
      const refusal = searchAttributeRefusal(err);
      if (refusal === null) throw err;
      await start(false);
      return { missing: SEARCH_ATTRIBUTES.map((k) => k.name), refusal };
    }
  } catch (err) {
    if (err instanceof Error && /already (started|running)/i.test(err.message))
      throw new CliError(`a run with id ${o.workflowId} exists already: choose another --id (or --replace one that ended)`, EXIT.usage);
    throw err;
  }
}

/** The line of an attempts status that changed since the last one seen (`vigil start --attempts --wait`). */
export function progressLines(before: AttemptsStatus | null, now: AttemptsStatus): string[] {
  const lines: string[] = [];
  if (before?.phase !== now.phase) lines.push(`phase: ${now.phase}${now.phase === 'waiting_for_pick' && now.why ? ` (${now.why})` : ''}`);
  if (Boolean(before?.paused) !== Boolean(now.paused))
    lines.push(now.paused ? `paused by ${now.paused.by}: every running attempt told` : 'resumed: every running attempt told');
  if (!before?.stopping && now.stopping) lines.push(`stopping (by ${now.stopping.by}): no winner is delivered`);
  for (const a of now.attempts) {
    const was = before?.attempts.find((b) => b.n === a.n);
    if (a.state === 'ended' && was?.state !== 'ended') lines.push(`attempt ${a.n}: ${a.status ?? '?'}`);
  }
  return lines;
}

/**
 * After `vigil start --attempts K`: what started (a JSON line with --json), then with --wait the
 * run followed to its end — a line per phase and per attempt that ended (with --json, the attempts
 * status as a JSON line each time it changes), the final status, and the outcome's exit code.
 * Answers the exit code (null: not waited for).
 */
export async function afterAttemptsStart(
  client: Client,
  o: { workflowId: string; k: number; historyUrl: string; json: boolean; wait: boolean; print: (line: string) => void },
): Promise<number | null> {
  const ids = Array.from({ length: o.k }, (_, i) => `${o.workflowId}-attempt-${i + 1}`);
  if (o.json)
    o.print(JSON.stringify({ kind: 'started', workflowId: o.workflowId, attempts: o.k, attemptIds: ids, historyUrl: o.historyUrl }));
  else {
    o.print(`started run ${o.workflowId} with ${o.k} attempts (${o.workflowId}-attempt-1..${o.k})`);
    o.print(`  follow     : vigil status ${o.workflowId}`);
  }
  if (!o.wait) return null;
  return followAttempts(client, o.workflowId, o);
}

/**
 * A run with attempts followed to its end (`vigil start --attempts --wait`, `vigil watch <run>`): a
 * line per phase and per attempt that ends (with `json`, the attempts status as a JSON line each
 * time it changes), the final status, and the outcome's exit code, answered.
 */
export async function followAttempts(
  client: Client,
  workflowId: string,
  o: { json: boolean; print: (line: string) => void },
): Promise<number> {
  const handle = client.workflow.getHandle(workflowId);
  let last: AttemptsStatus | null = null;
  const poll = async (): Promise<void> => {
    const now = await handle.query<AttemptsStatus>('attempts').catch(() => null);
    if (!now) return;
    if (o.json) {
      if (JSON.stringify(now) !== JSON.stringify(last)) o.print(JSON.stringify({ kind: 'attempts', status: now }));
    } else for (const l of progressLines(last, now)) o.print(`  ${l}`);
    last = now;
  };
  let done = false;
  const result = handle.result().finally(() => {
    done = true;
  });
  while (!done) {
    await poll();
    await Promise.race([result.catch(() => undefined), new Promise((ok) => setTimeout(ok, 2000))]);
  }
  const outcome = (await result) as { status: string; reason: string; exitCode: number };
  await poll();
  if (o.json) o.print(JSON.stringify({ kind: 'finished', workflowId, outcome, exitCode: outcome.exitCode }));
  else o.print(`finished: ${outcome.status} (exit ${outcome.exitCode}): ${outcome.reason}`);
  return outcome.exitCode;
}
