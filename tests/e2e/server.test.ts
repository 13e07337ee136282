/**
 * `vigil server`: the embedded dev server with a persistent database under VIGIL_HOME, Vigil's
 * search attributes registered, the address and UI printed, a clear error when the port is taken,
 * and a clean stop on Ctrl+C; its embedded Postgres started again when it is killed. Also how the
 * temporal CLI is found.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { execa } from 'execa';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS } from '../../lib/event-store.js';
import { SEARCH_ATTRIBUTES } from '../../schemas/search-attributes.js';
import { freePort } from '../../workers/dev-server.js';
import { resolveTemporalCli } from '../../workers/temporal-cli.js';
import { assertBuilt, CLI, pidAlive } from '../support/harness.js';
import { queryRows } from '../support/store-postgres.js';
import { waitUntil } from './cli-helpers.js';

beforeAll(() => assertBuilt());

describe('vigil server', () => {
  it('starts a persistent dev server with the search attributes, refuses a taken port, stops on SIGINT', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-home-'));
    const port = await freePort();
    const env = { VIGIL_HOME: home, TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TEMPORAL_CLI: inject('temporalCli') };
    const server = execa('node', [CLI, 'server', '--headless'], { env, all: true, reject: false });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      server.all?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Press Ctrl+C')) resolve();
      });
      void server.then(() => reject(new Error(`server exited:\n${out}`)));
    });
    expect(out).toContain(`gRPC address : 127.0.0.1:${port}`);
    expect(out).toContain(`database     : ${path.join(home, 'temporal.db')}`);
    expect(existsSync(path.join(home, 'temporal.db'))).toBe(true);

    const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
    const sas = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    await connection.close();
    for (const key of SEARCH_ATTRIBUTES) expect(Object.keys(sas.customAttributes ?? {})).toContain(key.name);

    const second = await execa('node', [CLI, 'server', '--headless'], { env, all: true, reject: false, timeout: 60_000 });
    expect(second.exitCode).not.toBe(0);
    expect(second.all).toMatch(new RegExp(`port 127\\.0\\.0\\.1:${port} is already in use`));

    server.kill('SIGINT');
    const done = await server;
    expect(done.exitCode).toBe(0);
    expect(done.all).toContain('server stopped');
  });
});

describe('vigil server and its embedded Postgres', () => {
  it('starts the Postgres it runs again when it is killed (kill -9), says so, and the store serves again', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-home-'));
    const port = await freePort();
    const env = { VIGIL_HOME: home, TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TEMPORAL_CLI: inject('temporalCli') };
    const server = execa('node', [CLI, 'server', '--headless'], { env, all: true, reject: false });
    let out = '';
    server.all?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const pgDir = path.join(home, 'postgres');
    const pgPid = (): number => (JSON.parse(readFileSync(path.join(pgDir, 'server.json'), 'utf8')) as { pid: number }).pid;
    let killed = 0;
    try {
      await waitUntil('vigil server to be up', () => out.includes('Press Ctrl+C') || server.exitCode !== null, 120_000, 200);
      expect(out).toMatch(/event store {2}: 127\.0\.0\.1:\d+\/vigil_events \(embedded Postgres, started in [\d.]+ s; data in .*postgres\)/);
      const url = readFileSync(path.join(pgDir, 'url'), 'utf8').trim();
      killed = pgPid();
      process.kill(killed, 'SIGKILL');
      await waitUntil(
        'the Postgres to come back',
        () => /the embedded Postgres is back \(pid \d+\)/.test(out) || server.exitCode !== null,
        60_000,
        200,
      );
      expect(out).toContain(`vigil: warning: the embedded Postgres (pid ${killed}) has exited; starting it again`);
      const back = pgPid();
      expect(back).not.toBe(killed);
      // On the same port unless another process took it meanwhile: the URL file says where.
      const now = readFileSync(path.join(pgDir, 'url'), 'utf8').trim();
      expect(out).toContain(`the embedded Postgres is back (pid ${back}) at 127.0.0.1:${new URL(now).port}`);
      expect(new URL(now).password).toBe(new URL(url).password);
      expect(await queryRows(now, 'select max(version)::int as v from vigil_schema_migrations')).toEqual([
        { v: MIGRATIONS.at(-1)?.version },
      ]);

      server.kill('SIGINT');
      const done = await server;
      expect(done.exitCode, out).toBe(0);
      expect(pidAlive(back)).toBe(false);
    } finally {
      if (server.exitCode === null) {
        server.kill('SIGKILL');
        await server;
      }
      if (existsSync(path.join(pgDir, 'server.json')) && pidAlive(pgPid())) process.kill(pgPid(), 'SIGKILL');
    }
  });
});

describe('resolveTemporalCli', () => {
  const saved = { cli: process.env.TEMPORAL_CLI, path: process.env.PATH };
  afterEach(() => {
    process.env.TEMPORAL_CLI = saved.cli;
    process.env.PATH = saved.path;
    if (saved.cli === undefined) delete process.env.TEMPORAL_CLI;
  });

  it('uses TEMPORAL_CLI when set, and says so when it is not executable', async () => {
    process.env.TEMPORAL_CLI = inject('temporalCli');
    const cli = await resolveTemporalCli({ install: false });
    expect(cli.source).toBe('env');
    expect(cli.version).toMatch(/^temporal version \d+\.\d+\.\d+/);

    const notExec = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-')), 'temporal');
    writeFileSync(notExec, 'not a program');
    process.env.TEMPORAL_CLI = notExec;
    await expect(resolveTemporalCli({ install: false })).rejects.toThrow(`TEMPORAL_CLI=${notExec} is not an executable file`);
  });

  it('finds `temporal` on PATH', async () => {
    delete process.env.TEMPORAL_CLI;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-path-'));
    symlinkSync(inject('temporalCli'), path.join(dir, 'temporal'));
    chmodSync(path.join(dir, 'temporal'), 0o755);
    process.env.PATH = `${dir}${path.delimiter}${saved.path ?? ''}`;
    const cli = await resolveTemporalCli({ install: false });
    expect(cli.source).toBe('path');
    expect(cli.path).toBe(path.join(dir, 'temporal'));
  });
});
