/**
 * The console's run page lists a run's package fetches, in a real Chromium (playwright-core, as
 * tests/e2e/console.test.ts): a `vigil console` and a `vigil worker` process against the suite's
 * server, and two runs started with `vigil start` whose builder installs a small npm package and
 * a small PyPI one at its first iteration, through the sandbox's proxy to the real registries
 * (this machine reaches them). With the default knobs, the page's Packages section lists the
 * hosts with their fetches; with sandboxRegistries=false, it says the fetches were refused because
 * the run closed the registries, and which knob opens them. Each run is ended once checked.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { ResultPromise } from 'execa';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusSnapshot } from '../../schemas/status.js';
import { assertBuilt, makeRepo, ROOT, SCRIPTED_AGENT, temporalAddress, uniqueId, writePrd, writeScenario } from '../support/harness.js';
import { startConsoleProcess, runVigil, show, startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';
import { execFileSync } from 'node:child_process';
import { patient } from '../support/patience.js';

const CHROMIUM = process.env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';

let taskQueue: string;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;
let client: Client;
let browser: Browser | undefined;
let consoleProc: ResultPromise | undefined;
let consoleUrl: string;
let wrapper: string;
const started = new Set<string>();

const baseEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: 'default',
  VIGIL_TASK_QUEUE: taskQueue,
});
const query = (id: string): Promise<StatusSnapshot> => client.workflow.getHandle(id).query<StatusSnapshot>('status');

/**
 * Where the installing wrapper lives: inside this package (test-artifacts/, ignored by git), so
 * that the sandbox shows the package it is installed in, as it shows the scripted agent's
 * (activities/sandbox.ts, programRoot): the wrapper execs the scripted agent, which runs from dist/.
 */
function installingAgentDir(): string {
  mkdirSync(path.join(ROOT, 'test-artifacts'), { recursive: true });
  return mkdtempSync(path.join(ROOT, 'test-artifacts', 'installing-agent-'));
}

beforeAll(async () => {
  assertBuilt();
  execFileSync('bash', [path.join(ROOT, 'scripts/install-browser.sh')], { stdio: 'inherit', timeout: 600_000 });
  taskQueue = uniqueId('console-packages');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: 'default' });
  worker = await startWorkerProcess(baseEnv());
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const c = await startConsoleProcess(['--port', '0', '--by', 'console-tester'], baseEnv());
  consoleProc = c.child;
  consoleUrl = c.url;
  // The builder installs at its first iteration, then the scripted agent runs; retries off, so a refusal fails at once.
  wrapper = path.join(installingAgentDir(), 'install-then-agent.sh');
  writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      'if [ "${VIGIL_ROLE:-iteration}" = iteration ] && [ "$VIGIL_ITERATION" = 1 ]; then',
      '  npm install --no-audit --no-fund --no-package-lock --fetch-retries=0 is-number@7.0.0 </dev/null >&2',
      '  python3 -m pip download --no-deps --no-cache-dir --retries 0 --timeout 30 -d "${TMPDIR:-/tmp}/dl" six==1.16.0 </dev/null >&2',
      'fi',
      'exec "$@"',
      '',
    ].join('\n'),
  );
  chmodSync(wrapper, 0o755);
}, patient(900_000));

afterAll(async () => {
  if (connection)
    await Promise.all(
      [...started].map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('console packages e2e cleanup')
          .catch(() => undefined),
      ),
    );
  await browser?.close();
  consoleProc?.kill('SIGTERM');
  await consoleProc?.catch(() => undefined);
  await worker?.stop();
  await connection?.close();
});

/** Starts a run whose builder installs at its first iteration; `set`: extra knobs. */
async function startInstallingRun(set: string[]): Promise<string> {
  const repo = makeRepo({
    files: { 'README.md': '# sample\n', 'package.json': '{"name":"sample","private":true}\n', '.gitignore': 'node_modules/\n' },
  });
  const scenario = writeScenario(repo, { version: 1, iterations: [], default: { output: 'Added the dependency.\n' } });
  const id = uniqueId('console-packages-run');
  started.add(id);
  const checklist = path.join(repo, '..', `${id}-checklist.json`);
  writeFileSync(checklist, JSON.stringify([{ id: 'REQ-1', title: 'is-number is a dependency' }]));
  const r = await runVigil(
    [
      'start',
      writePrd(),
      '--repo',
      repo,
      '--agent-command',
      `${wrapper} ${SCRIPTED_AGENT} --scenario ${scenario}`,
      '--id',
      id,
      '--checklist',
      checklist,
      // What is tested is the run page's Packages section after the first iteration: the council,
      // the tool gates and the code review would only add agent calls (no claim is made here).
      '--set',
      'councilEnabled=false',
      '--set',
      'qualityGates=false',
      '--set',
      'codeReview=false',
      ...set,
    ],
    baseEnv(),
  );
  expect(r.code, show(r)).toBe(0);
  return id;
}

describe('the console lists the package fetches', () => {
  it(
    'the default knobs: the run page lists the registries the builder fetched from',
    async () => {
      const id = await startInstallingRun([]);
      const snap = await waitUntil(
        'the first iteration to report its fetches',
        async () => {
          const s = await query(id);
          return (s.sandbox?.packages?.hosts.length ?? 0) >= 3 ? s : null;
        },
        240_000,
        500,
      );
      const page = await (browser as Browser).newPage();
      await page.goto(`${consoleUrl}runs/${encodeURIComponent(id)}`);
      const section = page.locator('#packages');
      await section.waitFor({ timeout: patient(30_000) });
      const hosts = await section.locator('table.packages tbody tr td:first-child').allTextContents();
      expect(hosts).toEqual(expect.arrayContaining(['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org']));
      const npm = snap.sandbox?.packages?.hosts.find((h) => h.host === 'registry.npmjs.org');
      expect(await section.locator('tbody tr', { hasText: 'registry.npmjs.org' }).locator('td').nth(1).textContent()).toBe(
        String(npm?.fetches),
      );
      expect(await section.textContent()).toContain('packages.jsonl');
      expect(await section.locator('p.refused').count()).toBe(0);
      await page.close();
    },
    patient(300_000),
  );

  it(
    'sandboxRegistries=false: the run page says the fetches were refused and which knob opens the registries',
    async () => {
      // Closed on purpose: what the page says of a closed run is the point.
      const id = await startInstallingRun(['--set', 'sandboxRegistries=false']);
      await waitUntil(
        'the first iteration to report its refused fetches',
        async () => ((await query(id)).sandbox?.packages?.refused ?? 0) >= 2,
        240_000,
        500,
      );
      const page = await (browser as Browser).newPage();
      await page.goto(`${consoleUrl}runs/${encodeURIComponent(id)}`);
      const refused = page.locator('#packages p.refused');
      await refused.first().waitFor({ timeout: patient(30_000) });
      const text = (await refused.first().textContent()) ?? '';
      expect(text).toMatch(/registry\.npmjs\.org.*refused: the package registries are closed for this run \(sandboxRegistries=false\)/);
      expect(text).toContain('--set sandboxRegistries=true');
      expect(await page.locator('#packages table.packages').count()).toBe(0);
      await page.close();
    },
    patient(300_000),
  );
});
