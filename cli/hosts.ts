/**
 * Which host a command means: `--host NAME`, else VIGIL_HOST, else this machine's name — the same
 * default for `vigil start` and for `vigil worker`/`up`, so one machine just works. And whether any
 * worker polls a host's queue (for the hints of `start` and `status`).
 */
import os from 'node:os';
import path from 'node:path';
import { hostTaskQueue, parseHostName } from '../schemas/host-names.js';
import { CliError, EXIT } from './errors.js';
import type { RunApi } from './run-api.js';

/** The host a command serves or names, normalised; a bad name is exit 2 with what to do. */
export function resolveHost(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, machine: () => string = os.hostname): string {
  const fromEnv = env.VIGIL_HOST?.trim();
  const [raw, from] = flag !== undefined ? [flag, '--host'] : fromEnv ? [fromEnv, 'VIGIL_HOST'] : [machine(), "this machine's name"];
  const r = parseHostName(raw);
  if (r.ok) return r.host;
  const fix =
    from === '--host'
      ? 'pass another --host'
      : from === 'VIGIL_HOST'
        ? 'set VIGIL_HOST to another name'
        : 'set VIGIL_HOST (or pass --host NAME)';
  throw new CliError(`${from}: ${r.problem}; ${fix}`, EXIT.usage);
}

/** This machine's host name (VIGIL_HOST, else the system's), or null when it is not a valid one. */
export function thisHost(env: NodeJS.ProcessEnv = process.env, machine: () => string = os.hostname): string | null {
  try {
    return resolveHost(undefined, env, machine);
  } catch {
    return null;
  }
}

/**
 * A path on another host, for `vigil start --host` naming another machine: it cannot be checked
 * from here, so it must at least be absolute (the worker there resolves nothing relative).
 */
export function pathOnHost(what: string, raw: string, host: string): string {
  if (!path.isAbsolute(raw)) {
    throw new CliError(
      `${what} "${raw}" must be an absolute path on host "${host}" (another machine: vigil start cannot look at it from here)`,
      EXIT.usage,
    );
  }
  return path.normalize(raw).replace(/(.)\/+$/, '$1');
}

/** Pollers seen within this window count as live (a long poll lasts about a minute). */
const LIVE_POLLER_MS = 2 * 60_000;

/**
 * The identities of the workers polling `host`'s queue for activities lately; null when the server
 * would not say (no right to describe task queues, or it did not answer within 5 s).
 */
export async function hostPollers(api: Pick<RunApi, 'activityPollers'>, taskQueue: string, host: string): Promise<string[] | null> {
  try {
    const pollers = await api.activityPollers(hostTaskQueue(taskQueue, host));
    const since = Date.now() - LIVE_POLLER_MS;
    return pollers.filter((p) => p.lastAccessMs === null || p.lastAccessMs >= since).map((p) => p.identity || '?');
  } catch {
    return null;
  }
}

/** What to do when nothing polls a host's queue. */
export function noHostWorkerHint(taskQueue: string, host: string, repoPath: string): string {
  return (
    `no worker polls task queue "${hostTaskQueue(taskQueue, host)}": the run's agent, git and test steps wait until one does.\n` +
    `Start \`vigil worker --host ${host}\` (or \`vigil up --host ${host}\`) on the machine that holds ${repoPath}.`
  );
}
