/**
 * Where the event store is, by one rule shared by the worker, `vigil start`, `vigil report` and
 * `vigil history`:
 *
 *   1. `VIGIL_EVENT_STORE` set to false/0/no/off: no store (opted out);
 *   2. `VIGIL_DATABASE_URL`, else `DATABASE_URL`: that Postgres;
 *   3. else the local store: the embedded Postgres that `vigil server`, `up` and `demo` run under
 *      VIGIL_HOME/postgres, whose URL (with its current port) they write to
 *      VIGIL_HOME/postgres/url — present once it was started on this machine.
 *
 * And where a store's spool is: the folder where the last events of runs that ended while it was
 * down wait for it (lib/event-spool.ts).
 *
 * Light on purpose (no `pg`, no Temporal): `vigil start` reads it on every call.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { vigilHome } from './paths.js';

/** The file of the local store's URL, in the embedded Postgres's folder. */
export const LOCAL_STORE_URL_FILE = 'url';

export type StoreSource = 'VIGIL_DATABASE_URL' | 'DATABASE_URL' | 'local' | 'off' | 'none';

export interface StoreLocation {
  source: StoreSource;
  /** The URL from the environment; for `local`, the URL file's content when it exists. */
  url: string | null;
  /** For `local`: the URL file (it may not exist yet). */
  urlFile: string | null;
  /** What to print: where the value came from (never the password). */
  detail: string;
}

const FALSEY = new Set(['false', '0', 'no', 'off']);

/** `VIGIL_EVENT_STORE=0` (or false, no, off): no event store for this process, nor a default one for its runs. */
export function storeOptedOut(env: NodeJS.ProcessEnv): boolean {
  const v = env.VIGIL_EVENT_STORE?.trim().toLowerCase();
  return v !== undefined && FALSEY.has(v);
}

/** The embedded Postgres's folder under VIGIL_HOME. */
export function localStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(vigilHome(env), 'postgres');
}

export function localStoreUrlFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(localStoreDir(env), LOCAL_STORE_URL_FILE);
}

/** The local store's spool: beside its cluster, in the folder of its URL file. */
export function localSpoolDirOf(urlFile: string): string {
  return path.join(path.dirname(urlFile), 'spool');
}

export function localSpoolDir(env: NodeJS.ProcessEnv = process.env): string {
  return localSpoolDirOf(localStoreUrlFile(env));
}

/**
 * A configured store's spool: VIGIL_HOME/event-spool/<host>_<port>_<database>, one folder per
 * store (never the password), so that a worker drains a spool only into the store it was meant for.
 */
export function configuredSpoolDir(url: string, env: NodeJS.ProcessEnv = process.env): string {
  let name = 'unparseable-url';
  try {
    const u = new URL(url);
    name = `${u.hostname}_${u.port || '5432'}_${decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres'}`;
  } catch {
    /* the store itself will say what is wrong with its URL */
  }
  return path.join(vigilHome(env), 'event-spool', name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120));
}

/** The URL in a local store's URL file, or null when there is none (yet). */
export function readStoreUrlFile(file: string): string | null {
  try {
    const url = readFileSync(file, 'utf8').trim();
    return url === '' ? null : url;
  } catch {
    return null;
  }
}

/** A Postgres named by the environment: VIGIL_DATABASE_URL first, then DATABASE_URL. */
export function configuredStoreUrl(env: NodeJS.ProcessEnv): { name: 'VIGIL_DATABASE_URL' | 'DATABASE_URL'; url: string } | null {
  for (const name of ['VIGIL_DATABASE_URL', 'DATABASE_URL'] as const) {
    const url = env[name]?.trim();
    if (url) return { name, url };
  }
  return null;
}

/** The store this environment points at, by the rule above. */
export function storeLocation(env: NodeJS.ProcessEnv = process.env): StoreLocation {
  if (storeOptedOut(env)) return { source: 'off', url: null, urlFile: null, detail: `VIGIL_EVENT_STORE=${env.VIGIL_EVENT_STORE ?? ''}` };
  const configured = configuredStoreUrl(env);
  if (configured) return { source: configured.name, url: configured.url, urlFile: null, detail: `${configured.name} is set` };
  const urlFile = localStoreUrlFile(env);
  if (existsSync(urlFile)) return { source: 'local', url: readStoreUrlFile(urlFile), urlFile, detail: `local store (${urlFile})` };
  return { source: 'none', url: null, urlFile, detail: 'no DATABASE_URL and no local event store' };
}

/**
 * The default of the `eventStore` knob for a run `vigil start` starts from this environment: on
 * when a store is configured (VIGIL_DATABASE_URL / DATABASE_URL) or the local one exists; null
 * keeps the registry's default (off).
 */
export function eventStoreDefault(env: NodeJS.ProcessEnv = process.env): { value: boolean; detail: string } | null {
  const where = storeLocation(env);
  if (where.source === 'off' || where.source === 'none') return null;
  return { value: true, detail: where.detail };
}
