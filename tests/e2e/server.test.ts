/**
 * `vigil server`: the embedded dev server with a persistent database under VIGIL_HOME, Vigil's
 * search attributes registered, the address and UI printed, a clear error when the port is taken,
 * and a clean stop on Ctrl+C. Also how the temporal CLI is found.
 */
import { chmodSync, existsSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { execa } from 'execa';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { SEARCH_ATTRIBUTES } from '../../schemas/search-attributes.js';
import { freePort } from '../../workers/dev-server.js';
import { resolveTemporalCli } from '../../workers/temporal-cli.js';
import { assertBuilt, CLI } from '../support/harness.js';

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
