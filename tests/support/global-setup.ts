/**
 * Starts one real Temporal dev server (headless, fresh SQLite file, free port, Vigil's search
 * attributes) for the whole test run, and stops it afterwards. Tests reach it via
 * `inject('temporalAddress')`. The server is never mocked.
 *
 * Every temporary file of the run goes under one folder of its own (TMPDIR, set here before the
 * test processes start, so they and the workers, agents and servers they start inherit it), removed
 * at the end: a run of the suite leaves nothing behind in the system's temporary folder.
 *
 * The workflow code is bundled here, once, from the source (as each test file used to do for itself,
 * six seconds of both cores each): every file's `createTestEnv()` loads the bundle from the file
 * `inject('workflowBundle')` names. A test file that changes a workflow source while the suite runs
 * tests the bundle of the suite's start, as before.
 *
 * `VIGIL_EXPORT_HISTORIES=DIR`: before the server stops, every workflow history it holds is
 * exported into DIR, one file per execution (`<type>__<workflow id>__<run id>.json`), in the
 * temporal CLI's JSON export: how a release's runs are recorded for the next release to replay
 * (tests/replay/eras.ts, `RELEASE_FIXTURES`; CONTRIBUTING.md, Adding a patch).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { freePort, startDevServer, type DevServer } from '../../workers/dev-server.js';
import { resolveTemporalCli } from '../../workers/temporal-cli.js';
import { workflowBundleOptions } from '../../workers/worker.js';

let server: DevServer | undefined;
let cliPath: string | undefined;
let dir: string | undefined;
let suiteTmp: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  suiteTmp = mkdtempSync(path.join(os.tmpdir(), 'vigil-tests-'));
  process.env.TMPDIR = suiteTmp;
  const cli = await resolveTemporalCli({ install: true, log: (l) => process.stderr.write(`${l}\n`) });
  cliPath = cli.path;
  dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-test-server-'));
  const quiet = (): void => {};
  const [started, bundle] = await Promise.all([
    startDevServer({ cliPath: cli.path, dbFile: path.join(dir, 'temporal.db'), port: await freePort(), headless: true }),
    bundleWorkflowCode({
      ...workflowBundleOptions(),
      logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, log: quiet, error: (m: string) => process.stderr.write(`${m}\n`) },
    }),
  ]);
  server = started;
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  project.provide('workflowBundle', bundlePath);
  project.provide('temporalAddress', server.address);
  project.provide('temporalCli', cli.path);
  process.stderr.write(`test Temporal server ${cli.version} at ${server.address}\n`);
}

/** Every workflow history of the server, into `out` (see the file comment). */
function exportHistories(out: string, cli: string, address: string): void {
  mkdirSync(out, { recursive: true });
  const run = (args: string[]): string => execFileSync(cli, [...args, '--address', address], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const listed = run(['workflow', 'list', '--limit', '100000', '--output', 'json']).trim();
  type Row = { execution: { workflowId: string; runId: string }; type?: { name?: string } };
  const rows = (
    listed.startsWith('[')
      ? JSON.parse(listed)
      : listed
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
  ) as Row[];
  for (const r of rows) {
    const { workflowId, runId } = r.execution;
    const json = run(['workflow', 'show', '--workflow-id', workflowId, '--run-id', runId, '--output', 'json']);
    const name = `${r.type?.name ?? 'workflow'}__${workflowId.replace(/[^A-Za-z0-9._-]/g, '_')}__${runId}.json`;
    writeFileSync(path.join(out, name), json.endsWith('\n') ? json : `${json}\n`);
  }
  process.stderr.write(`exported ${rows.length} histories into ${out}\n`);
}

export async function teardown(): Promise<void> {
  const out = process.env.VIGIL_EXPORT_HISTORIES;
  if (out && server && cliPath) exportHistories(out, cliPath, server.address);
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (suiteTmp) rmSync(suiteTmp, { recursive: true, force: true, maxRetries: 3 });
}

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
    /** The workflow code bundled from the source at the suite's start (a file path). */
    workflowBundle: string;
  }
}
