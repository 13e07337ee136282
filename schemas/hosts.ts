/**
 * Hosts: a run's repository lives on one machine, so its repository-bound activities go to that
 * machine's task queue, `<task queue>@<host>`, which only the workers started there (`vigil worker
 * --host NAME`, default this machine's name) poll; everything else stays on the shared queue.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';

/** The longest host name (a DNS name's limit). */
export const HOST_NAME_MAX = 253;

/**
 * A host name as Vigil keeps it: lower case (host names are case-insensitive, and `--host Alpha`
 * must meet a worker started with `--host alpha`), letters, digits, '.', '_' and '-', starting and
 * ending with a letter or digit.
 */
const HOST_NAME = /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/;

export const HostNameSchema = z
  .string()
  .max(HOST_NAME_MAX)
  .regex(HOST_NAME, 'a host name is letters, digits, ".", "_" or "-", starting and ending with a letter or digit');

export const HOST_NAME_RULE = `1-${HOST_NAME_MAX} letters, digits, '.', '_' or '-', starting and ending with a letter or digit (case does not matter)`;

/** A host name normalised (trimmed, lower case) and checked; `problem` says what is wrong otherwise. */
export function parseHostName(raw: string): { ok: true; host: string } | { ok: false; problem: string } {
  const host = raw.trim().toLowerCase();
  if (host === '') return { ok: false, problem: 'the host name is empty' };
  const r = HostNameSchema.safeParse(host);
  if (!r.success) return { ok: false, problem: `"${raw}" is not a host name: use ${HOST_NAME_RULE}` };
  return { ok: true, host };
}

/** The task queue of `host`'s repository-bound activities, next to the shared `taskQueue`. */
export function hostTaskQueue(taskQueue: string, host: string): string {
  return `${taskQueue}@${host}`;
}
