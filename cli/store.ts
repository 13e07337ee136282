/**
 * The event store as the long-running commands and the report commands see it (the rule itself is
 * in workers/store-location.ts):
 *
 *   - `vigil server`, `up` and `demo` start the embedded Postgres under VIGIL_HOME/postgres (or
 *     reuse the one running there), apply the migrations, and stop it when they exit — unless a
 *     store is configured (VIGIL_DATABASE_URL / DATABASE_URL: migrated and used as it is) or the
 *     user opted out (`--no-store`, VIGIL_EVENT_STORE=0). A store that cannot start is a warning:
 *     runs never wait for it.
 *   - a worker (`vigil worker`, and the worker of `up` and `demo`) projects into the configured
 *     store, else into the local one whenever it runs.
 *   - `vigil report` and `vigil history` read the configured store, else the local one, starting
 *     it for the length of the command when it is not running.
 */
import pg from 'pg';
import { CONNECT_TIMEOUT_MS, describeUrl, migrate, useLocalEventStore } from '../activities/event-store.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../workers/postgres.js';
import { configuredStoreUrl, localStoreDir, localStoreUrlFile, storeOptedOut } from '../workers/store-location.js';
import { existsSync } from 'node:fs';
import { CliError, EXIT } from './connection.js';

export interface ProcessStore {
  /** The database URL runs project into, or null (off, or failed to start). */
  url: string | null;
  /** One line for the start-up banner, never with the password. */
  line: string;
  /** Stops the embedded Postgres if this process owns it. */
  stop(): Promise<void>;
}

export interface StoreFlags {
  /** false with `--no-store`. */
  store?: boolean;
}

const noop = (): Promise<void> => Promise.resolve();

/** Opted out by `--no-store` or VIGIL_EVENT_STORE=0. */
export function storeOff(env: NodeJS.ProcessEnv, flags: StoreFlags): boolean {
  return flags.store === false || storeOptedOut(env);
}

async function migrateUrl(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'vigil-migrate' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await migrate(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const errText = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';

/** The store of `vigil server`, `up` and `demo` (see the file comment). Never throws. */
export async function startProcessStore(env: NodeJS.ProcessEnv, flags: StoreFlags, warn: (line: string) => void): Promise<ProcessStore> {
  if (storeOff(env, flags)) return { url: null, line: `off (${flags.store === false ? '--no-store' : 'VIGIL_EVENT_STORE'})`, stop: noop };
  const configured = configuredStoreUrl(env);
  if (configured) {
    try {
      await migrateUrl(configured.url);
    } catch (err) {
      warn(
        `the event store at ${describeUrl(configured.url)} (${configured.name}) is not reachable now: ${errText(err)}; runs go on and their events are stored once it is`,
      );
    }
    return { url: configured.url, line: `${describeUrl(configured.url)} (${configured.name})`, stop: noop };
  }
  let server: EmbeddedPostgres;
  const t0 = Date.now();
  try {
    server = await startEmbeddedPostgres({ dataDir: localStoreDir(env) });
    await migrateUrl(server.url);
  } catch (err) {
    warn(
      `the embedded event store did not start: ${errText(err)}. Runs go on without it; set DATABASE_URL to a Postgres of your own, or --no-store to skip it`,
    );
    return { url: null, line: 'not started (see the warning above)', stop: noop };
  }
  const how = server.reused ? (server.owned ? 'taken over' : 'already running') : `started in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
  return {
    url: server.url,
    line: `${describeUrl(server.url)} (embedded Postgres, ${how}; data in ${server.dataDir})`,
    stop: () => server.stop(),
  };
}

/** Points this process's worker at its store; returns the line to print. */
export function configureWorkerStore(env: NodeJS.ProcessEnv, flags: StoreFlags): string {
  const configured = configuredStoreUrl(env);
  if (configured) {
    useLocalEventStore(null);
    return `${describeUrl(configured.url)} (${configured.name})`;
  }
  if (storeOff(env, flags)) {
    useLocalEventStore(null);
    return 'none (opted out)';
  }
  const file = localStoreUrlFile(env);
  useLocalEventStore(file);
  return `the local one, while it runs (${file})`;
}

const STORE_HINT =
  'Set DATABASE_URL to the event store the workers write to (postgres://user:password@host:port/database), or run `vigil server` or `vigil up`, which start the local one.';

/**
 * The store `vigil report` and `vigil history` read: VIGIL_DATABASE_URL / DATABASE_URL, else the
 * local one (started for the command when it is not running, and stopped after).
 */
export async function reportStore(env: NodeJS.ProcessEnv): Promise<{ url: string; release(): Promise<void>; hint: string }> {
  const configured = configuredStoreUrl(env);
  if (configured) return { url: configured.url, release: noop, hint: STORE_HINT };
  if (!existsSync(localStoreUrlFile(env))) {
    throw new CliError(
      `no event store: DATABASE_URL is not set and there is no local store (${localStoreUrlFile(env)}). ${STORE_HINT}`,
      EXIT.unreachable,
    );
  }
  let server: EmbeddedPostgres;
  try {
    // transient: a `vigil server` or `up` started meanwhile takes it over instead of losing it when this command ends.
    server = await startEmbeddedPostgres({ dataDir: localStoreDir(env), transient: true });
  } catch (err) {
    throw new CliError(`the local event store (${localStoreDir(env)}) did not start: ${errText(err)}. ${STORE_HINT}`, EXIT.unreachable);
  }
  return { url: server.url, release: () => server.stop(), hint: STORE_HINT };
}
