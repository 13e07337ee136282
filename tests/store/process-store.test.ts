/**
 * The store of `vigil server`, `up` and `demo` (cli/store.ts) with the real embedded Postgres in a
 * VIGIL_HOME of its own: the events of a run that ended before the local store ever started wait
 * in its spool and land when it starts; a Postgres killed (kill -9) is started again, on its port
 * when it is free, with a line, and sooner or later as it keeps dying (no pause, then 1 s, then 2 s); once the
 * process stops it, it stays stopped.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { projectEvents } from '../../lib/event-journal.js';
import { spoolFiles } from '../../lib/event-spool.js';
import { closeEventStore, useLocalEventStore } from '../../lib/event-store.js';
import { startProcessStore, type ProcessStore } from '../../cli/store.js';
import { localSpoolDir, localStoreDir, localStoreUrlFile, readStoreUrlFile } from '../../lib/store-location.js';
import { scriptedRun } from '../support/journals.js';
import { pidAlive } from '../support/harness.js';
import { queryRows } from '../support/store-postgres.js';

const env: NodeJS.ProcessEnv = { VIGIL_HOME: mkdtempSync(path.join(os.tmpdir(), 'vigil-store-home-')) };
const lines: string[] = [];
let store: ProcessStore | null = null;

beforeAll(() => {
  // This process's worker side projects into the local store of that VIGIL_HOME.
  useLocalEventStore(localStoreUrlFile(env));
});

afterAll(async () => {
  await store?.stop();
  useLocalEventStore(null);
  await closeEventStore();
});

const serverPid = (): number => (JSON.parse(readFileSync(path.join(localStoreDir(env), 'server.json'), 'utf8')) as { pid: number }).pid;

async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; lines:\n${lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const answers = async (): Promise<boolean> => {
  const url = readStoreUrlFile(localStoreUrlFile(env));
  if (!url) return false;
  try {
    await queryRows(url, 'select 1');
    return true;
  } catch {
    return false;
  }
};

it('a run that ended before the local store started lands when it starts; a killed Postgres comes back, later each time it keeps dying', async () => {
  const journal = scriptedRun();
  const r = await projectEvents({ workflowId: 'wf-before-store', events: journal });
  expect(r).toMatchObject({ storedThrough: journal.length, written: 0 });
  expect(spoolFiles(localSpoolDir(env))).toHaveLength(1);
  // The worker that spooled it is gone (its catch-up stopped): the store's start is what drains it.
  await closeEventStore();

  store = await startProcessStore(
    env,
    {},
    (l) => lines.push(`WARN ${l}`),
    (l) => lines.push(`INFO ${l}`),
  );
  expect(store.line).toMatch(/embedded Postgres, started in/);
  const url = store.url ?? '';
  await until('the spool to drain', () => spoolFiles(localSpoolDir(env)).length === 0, 30_000);
  expect(
    (await queryRows<{ n: number }>(url, 'select count(*)::int as n from run_events where workflow_id = $1', ['wf-before-store']))[0]?.n,
  ).toBe(journal.length);
  expect(lines).toContain(`INFO event store: ${journal.length} event(s) of 1 spooled batch(es) stored (${journal.length} new row(s))`);

  // Killed: started again at once, its data kept.
  const deaths: { pid: number; at: number }[] = [];
  const kill = (): void => {
    const pid = serverPid();
    deaths.push({ pid, at: Date.now() });
    process.kill(pid, 'SIGKILL');
  };
  const backs = (): number => lines.filter((l) => l.startsWith('INFO the embedded Postgres is back')).length;
  kill();
  await until('the first restart', () => backs() === 1, 60_000);
  expect(serverPid()).not.toBe(deaths[0]?.pid);
  // On the same port unless another process took it meanwhile (the URL file says where; workers read it each time).
  const now = readStoreUrlFile(localStoreUrlFile(env)) ?? '';
  expect(lines.find((l) => l.startsWith('INFO the embedded Postgres is back'))).toContain(`at 127.0.0.1:${new URL(now).port}`);
  expect(await answers()).toBe(true);
  expect((await queryRows<{ n: number }>(now, 'select count(*)::int as n from run_events'))[0]?.n).toBe(journal.length);

  // It keeps dying: a pause of 1 s, then 2 s, before it is started again.
  kill();
  await until('the second restart', () => backs() === 2, 60_000);
  kill();
  await until('the third restart', () => backs() === 3, 60_000);
  const warnings = lines.filter((l) => l.startsWith('WARN the embedded Postgres (pid'));
  // No pause the first time, then 1 s, then 2 s (longer when a start in between failed: each failure doubles it too).
  const pauses = warnings.map((l) => Number(/starting it again(?: in ([\d.]+) s \(it keeps dying\))?$/.exec(l)?.[1] ?? 0));
  expect(pauses).toHaveLength(3);
  expect(pauses[0]).toBe(0);
  expect(pauses[1]).toBeGreaterThanOrEqual(1);
  expect(pauses[2]).toBeGreaterThanOrEqual(2 * (pauses[1] ?? 0));
  if (!lines.some((l) => l.includes('did not start again'))) expect(pauses).toEqual([0, 1, 2]);
  expect(warnings[0]).toContain(`(pid ${deaths[0]?.pid}) has exited`);
  expect(await answers()).toBe(true);

  // Stopped by its process: it stays stopped.
  const last = serverPid();
  await store.stop();
  store = null;
  expect(pidAlive(last)).toBe(false);
  await new Promise((r) => setTimeout(r, 2500));
  expect(backs()).toBe(3);
  expect(await answers()).toBe(false);
});
