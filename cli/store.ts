/**
 * The event store as the long-running commands and the report commands see it (the rule itself is
 * in lib/store-location.ts):
 *
 *   - `vigil server`, `up` and `demo` start the embedded Postgres under VIGIL_HOME/postgres (or
 *     reuse the one running there), apply the migrations, and stop it when they exit — unless a
 *     store is configured (VIGIL_DATABASE_URL / DATABASE_URL: migrated and used as it is) or the
 *     user opted out (`--no-store`, VIGIL_EVENT_STORE=0). A store that cannot start is a warning:
 *     runs never wait for it. The embedded Postgres is started again when it dies while they run
 *     (workers/postgres-watch.ts), and each time it starts they drain its spool: the last events of
 *     runs that ended while it was down (lib/event-spool.ts).
 *   - a worker (`vigil worker`, and the worker of `up` and `demo`) projects into the configured
 *     store, else into the local one whenever it runs.
 *   - `vigil report` and `vigil history` read the configured store, else the local one, starting
 *     it for the length of the command when it is not running.
 */
import pg from 'pg';
import { CONNECT_TIMEOUT_MS, describeUrl, migrate, useLocalEventStore } from '../lib/event-store.js';
import { describeDrain, drainSpoolInto } from '../lib/event-journal.js';
import { spoolFiles } from '../lib/event-spool.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../workers/postgres.js';
import { watchEmbeddedPostgres } from '../workers/postgres-watch.js';
import {
  configuredSpoolDir,
  configuredStoreUrl,
  localSpoolDir,
  localStoreDir,
  localStoreUrlFile,
  storeOptedOut,
} from '../lib/store-location.js';
import { existsSync } from 'node:fs';
import { CliError, EXIT } from './connection.js';

export interface ProcessStore {
  /** The database URL runs project into, or null (off, or failed to start); an embedded Postgres started again may be on another port (its URL file says). */
  url: string | null;
  /** One line for the start-up banner, never with the password. */
  line: string;
  /** Stops watching the embedded Postgres, and stops it if this process owns it. */
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

/**
 * The spool of the store at `url` drained into it (runs that ended while it was down, whoever's),
 * with a line when it did something. In the background: it never holds up the process. The
 * memory's run-end hook is loaded first, so a drained run's outcome consolidates as a worker's would.
 */
async function catchUpSpool(url: string, dir: string, say: (line: string) => void, warn: (line: string) => void): Promise<void> {
  if (spoolFiles(dir).length === 0) return;
  try {
    await import('../lib/lasting-memory.js');
    const r = await drainSpoolInto(url, dir);
    const line = describeDrain(r, dir);
    if (line) (r.rejected || r.left ? warn : say)(line);
  } catch (err) {
    warn(`event store: the spool ${dir} was not drained: ${errText(err)}`);
  }
}

/** The store of `vigil server`, `up` and `demo` (see the file comment). Never throws. */
export async function startProcessStore(
  env: NodeJS.ProcessEnv,
  flags: StoreFlags,
  warn: (line: string) => void,
  say: (line: string) => void = warn,
): Promise<ProcessStore> {
  if (storeOff(env, flags)) return { url: null, line: `off (${flags.store === false ? '--no-store' : 'VIGIL_EVENT_STORE'})`, stop: noop };
  const configured = configuredStoreUrl(env);
  if (configured) {
    try {
      await migrateUrl(configured.url);
      void catchUpSpool(configured.url, configuredSpoolDir(configured.url, env), say, warn);
    } catch (err) {
      warn(
        `the event store at ${describeUrl(configured.url)} (${configured.name}) is not reachable now: ${errText(err)}; runs go ` +
          `on and their events are stored once it is`,
      );
    }
    return { url: configured.url, line: `${describeUrl(configured.url)} (${configured.name})`, stop: noop };
  }
  let server: EmbeddedPostgres;
  const t0 = Date.now();
  const dataDir = localStoreDir(env);
  try {
    server = await startEmbeddedPostgres({ dataDir });
    await migrateUrl(server.url);
  } catch (err) {
    warn(
      `the embedded event store did not start: ${errText(err)}. Runs go on without it; set DATABASE_URL to a Postgres of your own, or --no-store to skip it`,
    );
    return { url: null, line: 'not started (see the warning above)', stop: noop };
  }
  void catchUpSpool(server.url, localSpoolDir(env), say, warn);
  // Started again when it dies while this process runs: its runs' events have nowhere else to go.
  const watched = watchEmbeddedPostgres(server, {
    start: () => startEmbeddedPostgres({ dataDir }),
    restarted: async (s) => {
      await migrateUrl(s.url);
      void catchUpSpool(s.url, localSpoolDir(env), say, warn);
    },
    say,
    warn,
  });
  const how = server.reused ? (server.owned ? 'taken over' : 'already running') : `started in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
  return {
    url: server.url,
    line: `${describeUrl(server.url)} (embedded Postgres, ${how}; data in ${server.dataDir})`,
    stop: () => watched.stop(),
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
  'Set DATABASE_URL to the event store the workers write to ' +
  '(postgres://user:password@host:port/database), or run `vigil server` or `vigil up`, which start the ' +
  'local one.';

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
