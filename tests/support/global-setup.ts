/**
 * Starts one real Temporal dev server (headless, fresh SQLite file, free port, Vigil's search
 * attributes) for the whole test run, and stops it afterwards. Tests reach it via
 * `inject('temporalAddress')`. The server is never mocked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort, startDevServer, type DevServer } from '../../workers/dev-server.js';
import { resolveTemporalCli } from '../../workers/temporal-cli.js';

let server: DevServer | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
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
}

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
  }
}
