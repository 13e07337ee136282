/**
 * `vigil hooks` serving GitHub's webhooks (cli/hooks.ts) against Temporal: a run is found by its
 * pull request's head branch (`vigil/<run id>` names it: one status query), else by scanning the
 * open runs' status for the pull request's branch or address (one visibility list and a query per
 * open run: fine for tens of runs; the cost of a webhook that names no run branch). The console's
 * server mounts the same receiver at /hooks when VIGIL_HOOKS_SECRET is set (cli/console/server.ts).
 */
import type { Client } from '@temporalio/client';
import type { Hono } from 'hono';
import type { StatusSnapshot } from '../schemas/status.js';
import { withClient, type Endpoint } from './connection.js';
import { listen } from './http-listen.js';
import { CliError, EXIT } from './errors.js';
import { hooksApp, type EventTarget } from './hooks.js';

/** Whether the run's followed pull request is the target's. */
function follows(s: StatusSnapshot, t: EventTarget): boolean {
  const pr = s.pullRequest;
  if (!pr || s.outcome) return false;
  if (pr.url && t.repo && !pr.url.toLowerCase().includes(`/${t.repo.toLowerCase()}/`)) return false;
  return (t.branch !== null && pr.branch === t.branch) || (t.prUrl !== null && pr.url === t.prUrl);
}

/**
 * The base a run's followed pull request goes into: the one it kept when it opened the pull request, else the one its
 * last update onto a moved base found, else null (a run that opened it without one, or before runs kept it).
 */
export function followedBase(pr: NonNullable<StatusSnapshot['pullRequest']>): string | null {
  if (pr.base) return pr.base;
  return [...(pr.updates ?? [])].reverse().find((u) => u.base)?.base ?? null;
}

/**
 * Whether the run's followed pull request goes into the pushed branch of the target's repository. A run that kept no base
 * opened its pull request into the repository's default branch (`gh pr create` without `--base`), or was opened before
 * runs kept their base, most often into the default branch too: a push to the default branch concerns it (a run whose
 * base did not move finds its branch already on it, and says so). A push to the run's own branch never does.
 */
export function targets(s: StatusSnapshot, t: EventTarget & { base: string }): boolean {
  const pr = s.pullRequest;
  if (!pr || s.outcome || pr.branch === t.base) return false;
  if (pr.url && t.repo && !pr.url.toLowerCase().includes(`/${t.repo.toLowerCase()}/`)) return false;
  const base = followedBase(pr);
  return base !== null ? base === t.base : t.defaultBranch !== undefined && t.defaultBranch === t.base;
}

/** The open runs whose followed pull request goes into the target's base (one visibility list and a query per open run). */
export function temporalBaseResolver(client: Client): (t: EventTarget & { base: string }) => Promise<string[]> {
  return async (t) => {
    const found: string[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowType = 'vigilRun' AND ExecutionStatus = 'Running'` })) {
      const s = await client.workflow
        .getHandle(wf.workflowId)
        .query('status')
        .then((x) => x as StatusSnapshot)
        .catch(() => null);
      if (s && targets(s, t)) found.push(s.workflowId);
    }
    return found;
  };
}

/** The open run that follows the target's pull request, or null. */
export function temporalResolver(client: Client): (t: EventTarget) => Promise<string | null> {
  const statusOf = async (id: string): Promise<StatusSnapshot | null> => {
    try {
      return (await client.workflow.getHandle(id).query('status')) as StatusSnapshot;
    } catch {
      return null;
    }
  };
  return async (t) => {
    if (t.branch?.startsWith('vigil/')) {
      const s = await statusOf(t.branch.slice('vigil/'.length));
      if (s && follows(s, t)) return s.workflowId;
    }
    for await (const wf of client.workflow.list({ query: `WorkflowType = 'vigilRun' AND ExecutionStatus = 'Running'` })) {
      const s = await statusOf(wf.workflowId);
      if (s && follows(s, t)) return s.workflowId;
    }
    return null;
  };
}

export interface RunningHooks {
  url: string;
  close: () => Promise<void>;
}

/** The webhook receiver against Temporal with `client`: served by `vigil hooks`, mounted by the console's server at /hooks. */
export function temporalHooksApp(client: Client, secret: string): Hono {
  return hooksApp({
    secret,
    resolveRun: temporalResolver(client),
    resolveBase: temporalBaseResolver(client),
    signal: (runId, payload) => client.workflow.getHandle(runId).signal('prEvent', payload),
  });
}

/** The webhook secret of VIGIL_HOOKS_SECRET, checked; a CliError (exit 2) that says what to set when it is too short. */
export function hooksSecret(env: NodeJS.ProcessEnv, who: string): string {
  const secret = env.VIGIL_HOOKS_SECRET ?? '';
  if (secret.length < 16)
    throw new CliError(
      `${who}: set VIGIL_HOOKS_SECRET to the webhook's secret (at least 16 characters), as in the repository's webhook settings`,
      EXIT.usage,
    );
  return secret;
}

/** Serves the webhook receiver with `client`; resolves once it listens. */
export async function startHooks(client: Client, opts: { host: string; port: number; secret: string }): Promise<RunningHooks> {
  const app = temporalHooksApp(client, opts.secret);
  const { url, close } = await listen(app.fetch, opts.host, opts.port);
  return { url, close };
}

/** `vigil hooks`: serves until Ctrl+C. The secret comes from VIGIL_HOOKS_SECRET (never a flag: it would show in `ps`). */
export async function hooksCommand(ep: Endpoint, o: { host: string; port: number }, print: (line: string) => void): Promise<void> {
  const secret = hooksSecret(process.env, 'vigil hooks');
  await withClient(ep, async (client) => {
    const hooks = await startHooks(client, { ...o, secret });
    print(`vigil hooks: receiving GitHub webhooks at ${hooks.url} (content type application/json); Ctrl+C stops`);
    await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    await hooks.close();
  });
}
