/**
 * The package registries through the sandbox's proxy, against real parts: bubblewrap, the call's
 * supervisor and its proxy, the in-sandbox bridge, the machine's own npm and pip, and the real
 * registries (registry.npmjs.org, pypi.org, files.pythonhosted.org: this machine reaches them).
 *
 * - With the registries open (the default: the workflow passes sandboxRegistries=true), the
 *   builder's `npm install` and `pip download` succeed, and so does a test run that installs
 *   first; every fetch is a line of the run's fetch log and the call's report counts them.
 * - Closed (sandboxRegistries=false), both fail; the refused fetches are logged and counted with
 *   why ('closed'), which is what status prints.
 * - A reviewing role never reaches them, even when the run opens them (the adversary: a reviewer
 *   that tries to install); its refusals are counted as 'reviewing'.
 *
 * The supervisor runs from dist/: `npm run build`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../activities/agent.js';
import { runTests } from '../../activities/tests.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { supervisorPath } from '../../activities/process.js';
import type { AgentResult, RunAgentInput, RunTestsInput, TestResult } from '../../schemas/activities.js';
import { fetchLogPath } from '../../schemas/paths.js';
import { packagesLines, parseFetchLog } from '../../rules/package-fetches.js';
import { patient } from '../support/patience.js';

if (!existsSync(supervisorPath())) throw new Error(`${supervisorPath()} is missing: run \`npm run build\` (npm test does it for you)`);

const saved = { ...process.env };
let root: string;
let repo: string;

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'vigil-registries-'));
  process.env.VIGIL_HOME = path.join(root, 'vigil-home');
  process.env.VIGIL_SANDBOX = 'auto';
  // The worker's own setting would decide only for a call whose run passes none: not these.
  delete process.env.VIGIL_SANDBOX_REGISTRIES;
  repo = path.join(root, 'repo');
  mkdirSync(repo);
  writeFileSync(path.join(repo, 'package.json'), '{"name":"sample","private":true,"version":"1.0.0"}\n');
  execFileSync('git', ['init', '-q'], { cwd: repo });
  // An agent that installs what it was asked for: one npm package, one Python package. Retries
  // off, so that a refused fetch fails at once (npm and pip would otherwise back off for a minute).
  writeFileSync(
    path.join(root, 'install.sh'),
    [
      'cat >/dev/null',
      // A reviewing role's repository is read-only: it installs in its own /tmp, so only the network can refuse it.
      'if [ "$VIGIL_ROLE" != iteration ]; then cd "$TMPDIR" && echo "{}" >package.json; fi',
      'npm install --no-audit --no-fund --fetch-retries=0 is-number@7.0.0 >"$TMPDIR/npm.out" 2>&1; echo "NPM $?"',
      'python3 -m pip download --no-deps --no-cache-dir --retries 0 --timeout 20 -d "$TMPDIR/dl" six==1.16.0 >"$TMPDIR/pip.out" 2>&1; echo "PIP $?"',
      'tail -n 5 "$TMPDIR/npm.out" "$TMPDIR/pip.out"',
      'rm -rf node_modules package-lock.json',
      'echo "VERDICT: PASS"',
      '',
    ].join('\n'),
  );
});

afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  rmSync(root, { recursive: true, force: true });
});

const mock = (): MockActivityEnvironment => new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') });
const agent = (input: RunAgentInput): Promise<AgentResult> => mock().run(runAgent, input) as Promise<AgentResult>;
const tests = (input: RunTestsInput): Promise<TestResult> => mock().run(runTests, input) as Promise<TestResult>;

function call(runId: string, role: string, iteration: number, sandboxRegistries: boolean): RunAgentInput {
  return {
    runId,
    repoPath: repo,
    argv: ['/bin/sh', path.join(root, 'install.sh')],
    prompt: 'Add the dependencies.\n',
    role,
    iteration,
    phase: 'ACT',
    tier: 'development',
    timeoutSeconds: 240,
    completionPromise: 'COMPLETION PROMISE FULFILLED',
    sandboxRegistries,
    ...(role === 'reviewer' ? { parse: 'review', extraEnv: { VIGIL_REVIEWER: 'security', VIGIL_REVIEW_ROUND: '1' } } : { extraEnv: {} }),
  } as RunAgentInput;
}

/** The agent's own account: tool → exit code. */
const exits = (log: string): Record<string, number> =>
  Object.fromEntries([...log.matchAll(/^(NPM|PIP) (\d+)$/gm)].map((m) => [m[1] as string, Number(m[2])]));

const fetchLog = (runId: string) => parseFetchLog(readFileSync(fetchLogPath(repo, runId), 'utf8'));

describe.runIf(sandboxPlatform().problem === null)('the package registries in the sandbox', () => {
  it(
    'open (the default): the builder installs an npm and a PyPI package; each fetch is logged and counted',
    async () => {
      const res = await agent(call('open-run', 'iteration', 1, true));
      const log = readFileSync(res.logPath, 'utf8');
      expect(res.sandbox?.applied, JSON.stringify(res.sandbox)).toBe(true);
      expect(exits(log), log).toEqual({ NPM: 0, PIP: 0 });
      expect(res.sandbox?.isolation).toContain('network: the package registries');
      const p = res.sandbox?.packages;
      expect(p?.refused).toBe(0);
      expect(p?.fetches).toBeGreaterThanOrEqual(3);
      expect(p?.bytes).toBeGreaterThan(10_000); // is-number's tarball and six's wheel came through
      expect(p?.hosts.map((h) => h.host)).toEqual(expect.arrayContaining(['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org']));
      // The log lists the same fetches, each with its call, method, bytes and time.
      const { entries, skipped } = fetchLog('open-run');
      expect(skipped).toBe(0);
      expect(entries).toHaveLength(p?.fetches ?? -1);
      for (const e of entries) {
        expect(e).toMatchObject({ call: 'iteration-0001', method: 'CONNECT', port: 443, refused: null });
        expect(e.bytesIn).toBeGreaterThan(0);
      }
    },
    patient(300_000),
  );

  it(
    'open: a test run that installs first passes, its fetches logged under its own name',
    async () => {
      const res = await tests({
        runId: 'open-run',
        repoPath: repo,
        command:
          'npm install --no-audit --no-fund --fetch-retries=0 is-number@7.0.0 && node -e "require(\'is-number\')" && rm -rf node_modules package-lock.json',
        iteration: 2,
        timeoutSeconds: 240,
        sandboxRegistries: true,
      });
      expect(res.exitCode, res.tail).toBe(0);
      expect(res.sandbox?.packages?.hosts.map((h) => h.host)).toContain('registry.npmjs.org');
      expect(fetchLog('open-run').entries.filter((e) => e.call === 'tests-0002').length).toBe(res.sandbox?.packages?.fetches);
    },
    patient(300_000),
  );

  it(
    'closed (sandboxRegistries=false): both installs fail, the refusals are logged and counted, and status says why',
    async () => {
      const res = await agent(call('closed-run', 'iteration', 1, false));
      const log = readFileSync(res.logPath, 'utf8');
      const e = exits(log);
      expect(e.NPM, log).not.toBe(0);
      expect(e.PIP, log).not.toBe(0);
      const p = res.sandbox?.packages;
      expect(p?.fetches).toBe(0);
      expect(p?.refused).toBeGreaterThanOrEqual(2);
      expect(p?.refusedWhy).toBe('closed');
      expect(p?.refusedHosts).toEqual(expect.arrayContaining(['registry.npmjs.org', 'pypi.org']));
      expect(fetchLog('closed-run').entries.every((x) => x.refused === 'closed')).toBe(true);
      const lines = packagesLines(p ?? { fetches: 0, bytes: 0, hosts: [], refused: 0, refusedHosts: [], refusedWhy: null }, null);
      expect(lines.join('\n')).toMatch(/refused: the package registries are closed for this run \(sandboxRegistries=false\)/);
      // The test run that needs a fresh install fails as well.
      const t = await tests({
        runId: 'closed-run',
        repoPath: repo,
        command: 'npm install --no-audit --no-fund --fetch-retries=0 is-number@7.0.0',
        iteration: 1,
        timeoutSeconds: 240,
        sandboxRegistries: false,
      });
      expect(t.exitCode).not.toBe(0);
      expect(t.sandbox?.packages?.refusedWhy).toBe('closed');
    },
    patient(300_000),
  );

  it(
    'a reviewing role never reaches them, even when the run opens them',
    async () => {
      const res = await agent(call('review-run', 'reviewer', 1, true));
      const log = readFileSync(res.logPath, 'utf8');
      const e = exits(log);
      expect(e.NPM, log).not.toBe(0);
      expect(e.PIP, log).not.toBe(0);
      expect(res.sandbox?.packages?.fetches).toBe(0);
      expect(res.sandbox?.packages?.refusedWhy).toBe('reviewing');
      expect(res.sandbox?.isolation).not.toMatch(/registry\.npmjs\.org|package registries/);
    },
    patient(300_000),
  );
});
