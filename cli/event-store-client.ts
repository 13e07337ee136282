/**
 * The event store as the CLI's reports read it (`vigil report`, `vigil history`, `vigil memory`,
 * `vigil notifications`, `vigil rejudge`): VIGIL_DATABASE_URL / DATABASE_URL, else the local one
 * (cli/store.ts), connected for one command, its schema brought up to date. An unreachable store is
 * a CliError with exit code 4 that says what to set.
 */
import pg from 'pg';
import { CONNECT_TIMEOUT_MS, describeUrl, migrate, MIGRATIONS } from '../lib/event-store.js';
import { CliError, EXIT } from './connection.js';
import { reportStore } from './store.js';

const isConnectionError = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return /^(08|57P|53)/.test(code) || /^E[A-Z]+$/.test(code);
  return err instanceof Error && /connection|terminated|timeout|timed out/i.test(err.message);
};

/**
 * Connects to the store (VIGIL_DATABASE_URL / DATABASE_URL, else the local one: see cli/store.ts),
 * brings its schema up to date, runs `fn`, disconnects.
 */
export async function withEventStore<T>(env: NodeJS.ProcessEnv, fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const store = await reportStore(env);
  try {
    return await queryStore(store.url, store.hint, fn);
  } finally {
    await store.release();
  }
}

async function queryStore<T>(url: string, hint: string, fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const where = describeUrl(url);
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: 60_000,
    query_timeout: 90_000,
    application_name: 'vigil-report',
  });
  client.on('error', () => undefined);
  const fail = (err: unknown): CliError =>
    new CliError(
      `the event store at ${where} is unreachable: ` +
        `${err instanceof Error ? err.message || (err as { code?: string }).code || err.name : String(err)}. Start it, or ` +
        `${hint.charAt(0).toLowerCase()}${hint.slice(1)}`,
      EXIT.unreachable,
    );
  try {
    await client.connect();
  } catch (err) {
    throw fail(err);
  }
  try {
    const latest = Math.max(...MIGRATIONS.map((m) => m.version));
    const exists = (await client.query<{ t: string | null }>(`select to_regclass('vigil_schema_migrations')::text as t`)).rows[0]?.t;
    const have = exists
      ? ((await client.query<{ v: number | null }>('select max(version) as v from vigil_schema_migrations')).rows[0]?.v ?? 0)
      : 0;
    if (have < latest) await migrate(client);
    return await fn(client);
  } catch (err) {
    if (err instanceof CliError || !isConnectionError(err)) throw err;
    throw fail(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}
