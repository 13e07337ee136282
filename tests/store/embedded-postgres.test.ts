/**
 * The embedded Postgres's life across processes, on a real cluster: the URL file that `vigil
 * start`, `report` and workers find the local store by; a server whose owner died is taken over
 * and stopped by its new owner, with the data kept; a postmaster.pid left by a killed Postgres
 * whose pid now belongs to another process does not stop the next start; `vigil report` starts
 * the local store for its own length when it is not running, and a `vigil server` or `up` that
 * starts meanwhile takes it over rather than lose it when the report ends.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { reportCommand } from '../../cli/report.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../workers/postgres.js';
import { eventStoreDefault, localStoreUrlFile, storeLocation } from '../../lib/store-location.js';
import { pidAlive, sleep } from '../support/harness.js';

const homes: string[] = [];
const servers: EmbeddedPostgres[] = [];

function scratchHome(): string {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-home-'));
  homes.push(home);
  return home;
}

/** Durable (fsync on), as the store of `vigil server`: a kill -9 keeps what was committed. */
async function start(home: string): Promise<EmbeddedPostgres> {
  const s = await startEmbeddedPostgres({ dataDir: path.join(home, 'postgres') });
  servers.push(s);
  return s;
}

afterAll(async () => {
  for (const s of servers) if (pidAlive(s.pid)) process.kill(s.pid, 'SIGKILL');
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}

async function untilDead(pid: number): Promise<void> {
  for (let i = 0; i < 200 && pidAlive(pid); i++) await sleep(50);
  expect(pidAlive(pid)).toBe(false);
}

describe('the local event store', () => {
  it('writes its URL under VIGIL_HOME, which makes it the default store of runs started there', async () => {
    const home = scratchHome();
    expect(storeLocation({ VIGIL_HOME: home }).source).toBe('none');
    expect(eventStoreDefault({ VIGIL_HOME: home })).toBeNull();

    const s = await start(home);
    expect(readFileSync(localStoreUrlFile({ VIGIL_HOME: home }), 'utf8').trim()).toBe(s.url);
    expect(storeLocation({ VIGIL_HOME: home })).toMatchObject({ source: 'local', url: s.url });
    expect(eventStoreDefault({ VIGIL_HOME: home })).toEqual({
      value: true,
      detail: `local store (${localStoreUrlFile({ VIGIL_HOME: home })})`,
    });
    // A configured store wins; VIGIL_EVENT_STORE=0 opts out of both.
    expect(storeLocation({ VIGIL_HOME: home, DATABASE_URL: 'postgres://a@b/c', VIGIL_DATABASE_URL: 'postgres://x@y/z' })).toMatchObject({
      source: 'VIGIL_DATABASE_URL',
      url: 'postgres://x@y/z',
    });
    expect(eventStoreDefault({ VIGIL_HOME: home, DATABASE_URL: 'postgres://a@b/c' })).toEqual({
      value: true,
      detail: 'DATABASE_URL is set',
    });
    expect(eventStoreDefault({ VIGIL_HOME: home, VIGIL_EVENT_STORE: '0', DATABASE_URL: 'postgres://a@b/c' })).toBeNull();

    await s.stop();
    await untilDead(s.pid);
    // The URL stays: runs keep journaling (pending) and catch up when it runs again.
    expect(existsSync(localStoreUrlFile({ VIGIL_HOME: home }))).toBe(true);
    expect(existsSync(path.join(home, 'postgres', 'server.json'))).toBe(false);
  });

  it('is taken over when its owner died, stopped by the new owner, and keeps its data', async () => {
    const home = scratchHome();
    const first = await start(home);
    await query(first.url, 'create table kept (x int); insert into kept values (42)');
    // The owner dies without stopping it (kill -9): its server.json names a pid that is gone.
    const gone = spawn('true');
    await new Promise((r) => gone.once('exit', r));
    const file = path.join(home, 'postgres', 'server.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), owner: gone.pid }));

    const second = await start(home);
    expect(second).toMatchObject({ reused: true, owned: true, pid: first.pid, port: first.port });
    expect(JSON.parse(readFileSync(file, 'utf8')).owner).toBe(process.pid);
    // A third process while the owner lives: reuses it, does not own it.
    const third = await start(home);
    expect(third).toMatchObject({ reused: true, owned: false });
    await third.stop();
    expect(pidAlive(first.pid)).toBe(true);

    await second.stop();
    await untilDead(first.pid);
    const again = await start(home);
    expect(await query<{ x: number }>(again.url, 'select x from kept')).toEqual([{ x: 42 }]);
    await again.stop();
  });

  it('started for one command (`vigil report`) and taken over by a long-lived one, stays up when that command ends', async () => {
    const home = scratchHome();
    const dataDir = path.join(home, 'postgres');
    const file = path.join(dataDir, 'server.json');
    const forReport = await startEmbeddedPostgres({ dataDir, transient: true });
    servers.push(forReport);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ owner: process.pid, transient: true });
    // Another short command meanwhile only reuses it.
    const alsoShort = await startEmbeddedPostgres({ dataDir, transient: true });
    expect(alsoShort).toMatchObject({ reused: true, owned: false });
    // A long-lived process starting while the command runs (the same pid here; the file says who).
    const longLived = await start(home);
    expect(longLived).toMatchObject({ reused: true, owned: true, pid: forReport.pid });
    expect(JSON.parse(readFileSync(file, 'utf8')).transient).toBeUndefined();

    await forReport.stop(); // the command ends
    await sleep(300);
    expect(pidAlive(forReport.pid)).toBe(true);
    expect(await query<{ one: number }>(longLived.url, 'select 1 as one')).toEqual([{ one: 1 }]);
    // Without a long-lived taker, a transient owner stops it (the report test below).
    await longLived.stop();
    await untilDead(forReport.pid);
  });

  it('starts after a kill -9 whose postmaster.pid now names another live process', async () => {
    const home = scratchHome();
    const first = await start(home);
    await query(first.url, 'create table kept (x int); insert into kept values (7)');
    process.kill(first.pid, 'SIGKILL');
    await untilDead(first.pid);
    await sleep(500); // its backends notice and exit
    const pidFile = path.join(home, 'postgres', 'pgdata', 'postmaster.pid');
    expect(existsSync(pidFile)).toBe(true);
    // The pid is reused by an unrelated process (as after a reboot or in a container).
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const lines = readFileSync(pidFile, 'utf8').split('\n');
      lines[0] = String(other.pid);
      writeFileSync(pidFile, lines.join('\n'));

      const logged: string[] = [];
      const second = await startEmbeddedPostgres({ dataDir: path.join(home, 'postgres'), log: (l) => logged.push(l) });
      servers.push(second);
      expect(second.reused).toBe(false);
      expect(logged.join('\n')).toContain(`removed a stale ${pidFile} (pid ${other.pid}`);
      expect(await query<{ x: number }>(second.url, 'select x from kept')).toEqual([{ x: 7 }]);
      await second.stop();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('`vigil report` starts the local store for its own length when it is not running', async () => {
    const home = scratchHome();
    const s = await start(home);
    await s.stop();
    await untilDead(s.pid);

    let text = '';
    expect(await reportCommand({}, { env: { VIGIL_HOME: home }, out: (t) => (text += t) })).toBe(0);
    expect(text).toBe('runs: 0\n');
    // Stopped again afterwards.
    expect(existsSync(path.join(home, 'postgres', 'server.json'))).toBe(false);
  });
});
