/**
 * Starts one real Temporal dev server (headless, fresh SQLite file, free port, Vigil's search
 * attributes) for the whole test run, and stops it afterwards. Tests reach it via
 * `inject('temporalAddress')`. The server is never mocked.
 *
 * Every temporary file of the run goes under one folder of its own (TMPDIR, set here before the
 * test processes start, so they and the workers, agents and servers they start inherit it), removed
 * at the end: a run of the suite leaves nothing behind in the system's temporary folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort, startDevServer, type DevServer } from '../../workers/dev-server.js';
import { resolveTemporalCli } from '../../workers/temporal-cli.js';

let server: DevServer | undefined;
let dir: string | undefined;
let suiteTmp: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  suiteTmp = mkdtempSync(path.join(os.tmpdir(), 'vigil-tests-'));
  process.env.TMPDIR = suiteTmp;
  const cli = await resolveTemporalCli({ install: true, log: (l) => process.stderr.write(`${l}\n`) });
  dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-test-server-'));
  server = await startDevServer({ cliPath: cli.path, dbFile: path.join(dir, 'temporal.db'), port: await freePort(), headless: true });
  project.provide('temporalAddress', server.address);
  project.provide('temporalCli', cli.path);
  process.stderr.write(`test Temporal server ${cli.version} at ${server.address}\n`);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (suiteTmp) rmSync(suiteTmp, { recursive: true, force: true, maxRetries: 3 });
}

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
  }
}
