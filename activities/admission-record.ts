/**
 * The record of admitted runs (activities/run-authorization.ts admits; this keeps): which first
 * execution each admission key was recorded for, in the event store's Postgres or in files.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { vigilHome } from '../lib/paths.js';
import { configuredStoreUrl, storeOptedOut } from '../lib/store-location.js';
import { writePrivateFile } from '../lib/safe-files.js';

/**
 * Where this worker records the runs it admitted, one row per nonce (and scheduled run id): the
 * event store's Postgres when one is configured (VIGIL_DATABASE_URL / DATABASE_URL), which every
 * worker of the deployment shares; else files under `$VIGIL_HOME/admissions/`, which the workers
 * of this machine share.
 */
export function admissionStore(env: NodeJS.ProcessEnv = process.env): { kind: 'postgres'; url: string } | { kind: 'files'; dir: string } {
  const configured = storeOptedOut(env) ? null : configuredStoreUrl(env);
  if (configured) return { kind: 'postgres', url: configured.url };
  return { kind: 'files', dir: path.join(vigilHome(env), 'admissions') };
}

const tableReady = new Map<string, Promise<void>>();

async function admissionsTable(url: string): Promise<import('pg').Pool> {
  const { poolFor } = await import('../lib/event-store.js');
  const pool = poolFor(url);
  let ready = tableReady.get(url);
  if (!ready) {
    ready = pool
      .query(
        'create table if not exists vigil_run_admissions (admission_key text primary key, first_run_id text not null, ' +
          'workflow_id text not null, admitted_at timestamptz not null default now())',
      )
      .then(() => undefined);
    tableReady.set(url, ready);
    ready.catch(() => tableReady.delete(url));
  }
  await ready;
  return pool;
}

/** The store cannot be reached: retryable, the run waits for it rather than running unchecked. */
const storeDown = (where: string, err: unknown): never => {
  throw ApplicationFailure.create({
    type: 'AdmissionStoreUnavailable',
    message: `the record of admitted runs (${where}) cannot be reached: ${err instanceof Error ? err.message : String(err)}`,
  });
};

/** The first execution an admission key was recorded for; with `claimFor`, records it for that one when none is. */
export async function admissionHolder(
  key: string,
  env: NodeJS.ProcessEnv,
  claimFor?: { firstRunId: string; workflowId: string },
): Promise<string | null> {
  const store = admissionStore(env);
  if (store.kind === 'postgres') {
    const { describeUrl } = await import('../lib/event-store.js');
    try {
      const pool = await admissionsTable(store.url);
      if (claimFor)
        await pool.query(
          'insert into vigil_run_admissions (admission_key, first_run_id, workflow_id) values ($1, $2, $3) on conflict do nothing',
          [key, claimFor.firstRunId, claimFor.workflowId],
        );
      const row = await pool.query<{ first_run_id: string }>('select first_run_id from vigil_run_admissions where admission_key = $1', [
        key,
      ]);
      return row.rows[0]?.first_run_id ?? null;
    } catch (err) {
      return storeDown(`the event store at ${describeUrl(store.url)}`, err);
    }
  }
  const file = path.join(store.dir, `${key}.json`);
  const read = (): string | null => {
    try {
      return (JSON.parse(readFileSync(file, 'utf8')) as { firstExecutionRunId: string }).firstExecutionRunId;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      return storeDown(file, err);
    }
  };
  if (!claimFor) return read();
  try {
    mkdirSync(store.dir, { recursive: true, mode: 0o700 });
    // Written aside, then linked into place: the first run to link holds the key, and no reader sees half a file.
    const tmp = path.join(store.dir, `.${key}.${process.pid}.${randomBytes(4).toString('hex')}`);
    writePrivateFile(
      tmp,
      `${JSON.stringify({ firstExecutionRunId: claimFor.firstRunId, workflowId: claimFor.workflowId, at: new Date().toISOString() })}\n`,
    );
    try {
      linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(tmp, { force: true });
    }
  } catch (err) {
    return storeDown(store.dir, err);
  }
  return read();
}
