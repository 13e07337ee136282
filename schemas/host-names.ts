/**
 * Host names and their task queues, without dependencies: the CLI's fast path loads this, the
 * zod schema of a run's host is in hosts.ts. See hosts.ts for what a host is.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */

/** The longest host name (a DNS name's limit). */
export const HOST_NAME_MAX = 253;

/**
 * A host name as Vigil keeps it: lower case (host names are case-insensitive, and `--host Alpha`
 * must meet a worker started with `--host alpha`), letters, digits, '.', '_' and '-', starting and
 * ending with a letter or digit.
 */
export const HOST_NAME = /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/;

export const HOST_NAME_RULE = `1-${HOST_NAME_MAX} letters, digits, '.', '_' or '-', starting and ending with a letter or digit (case does not matter)`;

/** A host name normalised (trimmed, lower case) and checked; `problem` says what is wrong otherwise. */
export function parseHostName(raw: string): { ok: true; host: string } | { ok: false; problem: string } {
  const host = raw.trim().toLowerCase();
  if (host === '') return { ok: false, problem: 'the host name is empty' };
  if (host.length > HOST_NAME_MAX || !HOST_NAME.test(host))
    return { ok: false, problem: `"${raw}" is not a host name: use ${HOST_NAME_RULE}` };
  return { ok: true, host };
}

/** The task queue of `host`'s repository-bound activities, next to the shared `taskQueue`. */
export function hostTaskQueue(taskQueue: string, host: string): string {
  return `${taskQueue}@${host}`;
}
