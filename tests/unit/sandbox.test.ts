/**
 * The sandbox against real parts (activities/sandbox.ts with bubblewrap, the supervisor's proxy
 * and the in-sandbox bridge): a hostile command agent (tests/support/hostile-agent.mjs) runs in
 * every role through runAgent, and as the test command through runTests, in a mocked activity
 * context, against the suite's real Temporal frontend, a listening "event store", a local model
 * server and a VIGIL_HOME holding a run secret and a codec key. Every escape fails, the call
 * still completes, and what the sandbox refused is in the result. With sandbox=off the same agent
 * gets through (so the attempts are real). The supervisor runs from dist/: `npm run build`.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { FAILURE_TYPES } from '../../schemas/activities.js';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { runAgent } from '../../activities/agent.js';
import { runTests } from '../../activities/tests.js';
import { runTool } from '../../lib/gates/tools.js';
import { describeSandbox, sandboxPlatform, workerSandboxMode } from '../../lib/sandbox-host.js';
import { supervisorPath } from '../../activities/process.js';
import type { AgentResult, RunAgentInput, RunTestsInput, TestResult } from '../../schemas/activities.js';
import type { SandboxReport } from '../../schemas/sandbox.js';
import { ROOT } from '../support/harness.js';

if (!existsSync(supervisorPath())) throw new Error(`${supervisorPath()} is missing: run \`npm run build\` (npm test does it for you)`);

const HOSTILE = path.join(ROOT, 'tests/support/hostile-agent.mjs');
const MARK = `vigil-hostile-${process.pid}-${Date.now()}`;
const saved = { ...process.env };
let root: string;
let repo: string;
let model: http.Server;
let store: net.Server;
let storeAddress: string;

function listening(server: http.Server | net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'vigil-sandbox-'));
  const home = path.join(root, 'vigil-home');
  mkdirSync(path.join(home, 'postgres'), { recursive: true });
  writeFileSync(path.join(home, 'run-secret'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });
  writeFileSync(path.join(home, 'postgres', 'url'), 'postgres://vigil@127.0.0.1:1/vigil\n');
  const codec = path.join(root, 'codec.key');
  writeFileSync(codec, 'c2VjcmV0LWtleS1ieXRlcy1mb3ItdGhlLWNvZGVjLXRlc3Q=\n', { mode: 0o600 });
  mkdirSync(path.join(root, 'outside'));
  const other = path.join(root, 'other-run-repo');
  mkdirSync(other);
  writeFileSync(path.join(other, 'secret.txt'), 'another run\n');
  repo = path.join(root, 'repo');
  mkdirSync(repo);
  writeFileSync(path.join(repo, 'README.md'), '# the repository\n');
  execFileSync('git', ['init', '-q'], { cwd: repo });

  model = http.createServer((_req, res) => res.end('pong'));
  store = net.createServer((s) => s.end('S')); // answers like a Postgres refusing SSL
  const modelPort = await listening(model);
  storeAddress = `127.0.0.1:${await listening(store)}`;

  Object.assign(process.env, {
    VIGIL_HOME: home,
    VIGIL_CODEC_KEY_FILE: codec,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: `postgres://vigil:pw@${storeAddress}/vigil`,
    // The local model server, as a provider's base URL names it.
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${modelPort}`,
    HOSTILE_VIGIL_HOME: home,
    HOSTILE_SECRET: path.join(home, 'run-secret'),
    HOSTILE_CODEC: codec,
    HOSTILE_OTHER_REPO_FILE: path.join(other, 'secret.txt'),
    // A folder beside the repository, on the worker's disk.
    HOSTILE_OUTSIDE: path.join(root, 'outside', 'escaped.txt'),
    HOSTILE_TEMPORAL: inject('temporalAddress'),
    HOSTILE_STORE: storeAddress,
    HOSTILE_MODEL: `http://127.0.0.1:${modelPort}`,
    HOSTILE_MARK: MARK,
  });
  process.env.VIGIL_SANDBOX = 'auto';
});

afterAll(() => {
  model?.close();
  store?.close();
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  rmSync(root, { recursive: true, force: true });
});

const mock = (): MockActivityEnvironment => new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') });
const agent = (input: RunAgentInput): Promise<AgentResult> => mock().run(runAgent, input) as Promise<AgentResult>;
const tests = (input: RunTestsInput): Promise<TestResult> => mock().run(runTests, input) as Promise<TestResult>;

const ROLES = [
  { role: 'iteration', extra: {} },
  { role: 'council', parseVote: true, extra: { VIGIL_MEMBER: '0', VIGIL_COUNCIL_ROUND: '1' } },
  { role: 'devils-advocate', parseVote: true, extra: { VIGIL_COUNCIL_ROUND: '1' } },
  { role: 'reviewer', parse: 'review', extra: { VIGIL_REVIEWER: 'security', VIGIL_REVIEW_ROUND: '1' } },
  { role: 'checklist', parse: 'checklist', extra: {} },
  { role: 'checklist-verifier', parse: 'verification', extra: {} },
] as const;

function input(r: (typeof ROLES)[number], iteration: number): RunAgentInput {
  return {
    runId: 'hostile-run',
    repoPath: repo,
    argv: [process.execPath, HOSTILE],
    prompt: 'Verify REQ-1.\n',
    role: r.role,
    iteration,
    phase: 'ACT',
    tier: 'development',
    timeoutSeconds: 60,
    completionPromise: 'COMPLETION PROMISE FULFILLED',
    ...('parseVote' in r ? { parseVote: true } : {}),
    ...('parse' in r ? { parse: r.parse } : {}),
    extraEnv: r.extra,
  } as RunAgentInput;
}

/** The agent's own account of its attempts: name → ok. */
function attempts(tail: string): Record<string, { ok: boolean; detail: string }> {
  const out: Record<string, { ok: boolean; detail: string }> = {};
  for (const m of tail.matchAll(/^ATTEMPT (\S+) (ok|refused) ?(.*)$/gm)) out[m[1] as string] = { ok: m[2] === 'ok', detail: m[3] ?? '' };
  return out;
}

/** Processes whose command line carries the hostile agent's mark (its left-behind child). */
function marked(): number[] {
  const found: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(MARK)) found.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return found;
}

const denied = (s: SandboxReport | null | undefined, kind: string): string[] =>
  (s?.denied ?? []).filter((d) => d.kind === kind).map((d) => d.target);

const platform = sandboxPlatform();
const sandboxable = platform.problem === null;

describe.runIf(sandboxable)('the sandbox against a hostile agent', () => {
  it("vigil doctor's account says the sandbox applies here", () => {
    const d = describeSandbox();
    expect(d.applies).toBe(true);
    expect(d.line).toContain('bubblewrap');
    expect(d.line).toMatch(/network bridge: (a static Go program|Node)/);
  });

  // Every role with the bridge this worker picks (the Go one where it is built), and the builder
  // once more with the Node bridge an installed package runs (tests/unit/sandbox-bridge.test.ts).
  const cases = [...ROLES.map((r, i) => ({ r, i, bridge: null })), { r: ROLES[0], i: ROLES.length, bridge: 'node' }];
  for (const { r, i, bridge } of cases) {
    it(
      `refuses every escape in the ${r.role} role${bridge ? ` (the ${bridge} bridge)` : ''}, and the call still completes with ` +
        `the refusals recorded`,
      async () => {
        if (bridge) {
          process.env.VIGIL_SANDBOX_BRIDGE = bridge;
          onTestFinished(() => void delete process.env.VIGIL_SANDBOX_BRIDGE);
        }
        const before = readFileSync(path.join(repo, 'README.md'), 'utf8');
        const res = await agent(input(r, i + 1));
        const log = readFileSync(res.logPath, 'utf8');
        const a = attempts(log);
        expect(res.exitCode, log).toBe(0);
        expect(res.sandbox?.applied, JSON.stringify(res.sandbox)).toBe(true);
        expect(res.sandbox?.mode).toBe('auto');

        for (const name of [
          'read-vigil-home',
          'read-run-secret',
          'read-codec-key',
          'read-other-repo',
          'write-outside',
          'write-system',
          'write-program',
          'write-git-hooks',
          'connect-temporal',
          'connect-store',
          'proxy-temporal',
          'proxy-outside',
        ]) {
          expect(a[name], `${name} in ${log}`).toBeDefined();
          expect(a[name]?.ok, `${name}: ${a[name]?.detail}`).toBe(false);
        }
        expect(log).not.toContain('ab'.repeat(32));
        expect(existsSync(path.join(root, 'outside', 'escaped.txt'))).toBe(false);
        expect(existsSync('/usr/local/vigil-hostile-was-here')).toBe(false);
        expect(existsSync(path.join(ROOT, 'tests/support/hostile-was-here'))).toBe(false);
        expect(existsSync(path.join(repo, '.git', 'hooks', 'post-commit'))).toBe(false);
        // What it may do: read the repository, reach the configured model endpoint (through the proxy and directly).
        expect(a['read-repo']?.ok, a['read-repo']?.detail).toBe(true);
        expect(a['model-via-proxy']?.ok, a['model-via-proxy']?.detail).toBe(true);
        expect(a['model-direct']?.ok, a['model-direct']?.detail).toBe(true);

        // The builder writes the repository; a reviewing role cannot, by the mount.
        const wrote = path.join(repo, `hostile-${r.role}.txt`);
        if (r.role === 'iteration') {
          expect(a['write-repo']?.ok).toBe(true);
          expect(existsSync(wrote)).toBe(true);
        } else {
          expect(a['write-repo']?.ok).toBe(false);
          expect(a['write-repo']?.detail).toMatch(/read-only file system/i);
          expect(existsSync(wrote)).toBe(false);
          expect(denied(res.sandbox, 'write')).toContain(wrote);
          expect(res.reviewChangedTree).toBeNull();
        }
        expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toBe(before);

        // Every role reports its cost; a reviewing role does it in a signals folder of its own, so
        // the claim it planted there reaches neither the repository nor the builder's next call.
        expect(a['report-usage']?.ok, a['report-usage']?.detail).toBe(true);
        expect(res.usage?.costUsd).toBe(0.02);
        expect(existsSync(path.join(repo, '.vigil', 'signals', 'USAGE'))).toBe(false);
        if (r.role !== 'iteration') {
          expect(a['plant-claim']?.ok, a['plant-claim']?.detail).toBe(true);
          expect(existsSync(path.join(repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'))).toBe(false);
          expect(res.claimed).toBe(false);
          expect(readdirSync(path.join(process.env.VIGIL_HOME as string, 'private', 'hostile-run', 'call-signals'))).toEqual([]);
        }

        // The refusals a person should see.
        const connects = denied(res.sandbox, 'connect');
        expect(connects).toEqual(
          expect.arrayContaining([`127.0.0.1:${inject('temporalAddress').split(':').pop()}`, storeAddress, 'example.com:443']),
        );
        expect(denied(res.sandbox, 'write')).toEqual(expect.arrayContaining(['/usr/local/vigil-hostile-was-here']));

        // Nothing it started outlives the call.
        expect(a['leave-process']?.ok).toBe(true);
        expect(marked()).toEqual([]);
      },
    );
  }

  it('runs the test command in the sandbox too: no model, no worker services, nothing outside the repository', async () => {
    // A test command runs the repository's code: the hostile script is part of it here.
    copyFileSync(HOSTILE, path.join(repo, 'hostile-test.mjs'));
    const res = await tests({ runId: 'hostile-run', repoPath: repo, command: 'node hostile-test.mjs', iteration: 1, timeoutSeconds: 60 });
    const log = readFileSync(res.logPath, 'utf8');
    const a = attempts(log);
    expect(res.exitCode, log).toBe(0);
    expect(res.sandbox?.applied).toBe(true);
    for (const name of [
      'read-vigil-home',
      'read-run-secret',
      'read-other-repo',
      'write-outside',
      'connect-temporal',
      'connect-store',
      'proxy-outside',
      'model-via-proxy',
      'model-direct',
    ]) {
      expect(a[name]?.ok, `${name}: ${a[name]?.detail}`).toBe(false);
    }
    expect(a['write-repo']?.ok).toBe(true);
    expect(denied(res.sandbox, 'connect')).toEqual(expect.arrayContaining([storeAddress, 'example.com:443']));
    expect(marked()).toEqual([]);
  });

  it("runs a gate's tools in the sandbox: the repository read-only, no network at all, nothing of the worker's", async () => {
    // A checker reads code the agent wrote (an eslint config is a program): the hostile script plays that code.
    copyFileSync(HOSTILE, path.join(repo, 'hostile-gate.mjs'));
    const reports: SandboxReport[] = [];
    const r = await runTool(process.execPath, ['hostile-gate.mjs'], {
      cwd: repo,
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH ?? '' },
      sandbox: { runId: 'hostile-run', repoPath: repo, report: (x) => reports.push(x) },
    });
    const a = attempts(`${r.stdout}\n${r.stderr}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ applied: true, isolation: expect.stringContaining('repository read-only; network: none') });
    for (const name of [
      'read-vigil-home',
      'read-run-secret',
      'read-codec-key',
      'read-other-repo',
      'write-outside',
      'write-repo',
      'connect-temporal',
      'connect-store',
      'model-direct',
    ]) {
      expect(a[name]?.ok, `${name}: ${a[name]?.detail}`).toBe(false);
    }
    expect(denied(reports[0], 'write').length, JSON.stringify(reports[0])).toBeGreaterThan(0);
    expect(existsSync(path.join(root, 'outside', 'escaped.txt'))).toBe(false);
    expect(marked()).toEqual([]);
  });

  it('returns from a sandboxed tool only once every process of it is gone, one that left its session and its environment too', async () => {
    // Bubblewrap exits as soon as its command has, while the kernel is still emptying its pid
    // namespace: without waiting for that, these could still run (and write) after runTool returned.
    const script = `/bin/sh -c 'sleep 600' ${MARK}-child & env -i setsid /bin/sh -c 'sleep 600' ${MARK}-scrubbed & echo started`;
    for (let i = 0; i < 3; i++) {
      const r = await runTool('/bin/sh', ['-c', script], {
        cwd: repo,
        timeoutMs: 60_000,
        env: { PATH: process.env.PATH ?? '' },
        sandbox: { runId: 'hostile-run', repoPath: repo },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain('started');
      expect(marked()).toEqual([]);
    }
  });

  it('shows the same agent everything with sandbox=off (the attempts are real), and says so', async () => {
    const res = await agent({ ...input(ROLES[1], 20), sandbox: 'off' });
    const log = readFileSync(res.logPath, 'utf8');
    const a = attempts(log);
    expect(res.sandbox).toMatchObject({ mode: 'off', applied: false, reason: expect.stringContaining('sandbox=off') });
    expect(a['read-run-secret']?.ok, log).toBe(true);
    expect(a['read-other-repo']?.ok, log).toBe(true);
    expect(a['connect-temporal']?.ok, log).toBe(true);
    expect(a['write-outside']?.ok, log).toBe(true);
    // The process it left escaped its group too, and was still killed when the call ended.
    expect(marked()).toEqual([]);
    rmSync(path.join(root, 'outside', 'escaped.txt'), { force: true });
    rmSync(path.join(repo, 'hostile-council.txt'), { force: true });
    // Unsandboxed, the council's planted claim lands in the repository's signals.
    expect(existsSync(path.join(repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'))).toBe(true);
    rmSync(path.join(repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'), { force: true });
    rmSync(path.join(repo, '.git', 'hooks', 'post-commit'), { force: true });
    rmSync('/usr/local/vigil-hostile-was-here', { force: true });
    rmSync(path.join(ROOT, 'tests/support/hostile-was-here'), { force: true });
  });

  it("strict refuses to run where the sandbox cannot, saying what to install; a strict worker overrides a run's off", async () => {
    process.env.VIGIL_SANDBOX = 'strict';
    try {
      const res = await agent({ ...input(ROLES[0], 21), sandbox: 'off' });
      expect(res.sandbox?.applied).toBe(true);
    } finally {
      process.env.VIGIL_SANDBOX = 'auto';
    }
    // A worker without bubblewrap (VIGIL_SANDBOX_BWRAP names a binary that is not there).
    process.env.VIGIL_SANDBOX_BWRAP = path.join(root, 'no-bwrap');
    try {
      const fail = agent({ ...input(ROLES[0], 22), sandbox: 'strict' });
      await expect(fail).rejects.toThrow(
        new RegExp(
          [
            /sandbox=strict and the sandbox cannot run on this worker: VIGIL_SANDBOX_BWRAP=.* is not an executabl/.source,
            /e file\. Install bubblewrap \(scripts\/install-sandbox\.sh/.source,
          ].join(''),
        ),
      );
      // As an agent that cannot run: not retried, the run ends agent_not_runnable.
      await expect(agent({ ...input(ROLES[0], 24), sandbox: 'strict' })).rejects.toMatchObject({
        type: FAILURE_TYPES.agentNotRunnable,
        nonRetryable: true,
      });
      // auto runs it unsandboxed there, and says why.
      const res = await agent({ ...input(ROLES[1], 23) });
      expect(res.sandbox).toMatchObject({
        mode: 'auto',
        applied: false,
        reason: expect.stringContaining('sandbox=auto and the sandbox cannot run on this worker'),
      });
      expect(describeSandbox().applies).toBe(false);
    } finally {
      delete process.env.VIGIL_SANDBOX_BWRAP;
      for (const f of [
        path.join(root, 'outside', 'escaped.txt'),
        path.join(repo, 'hostile-council.txt'),
        path.join(repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'),
        path.join(repo, '.git', 'hooks', 'post-commit'),
        '/usr/local/vigil-hostile-was-here',
        path.join(ROOT, 'tests/support/hostile-was-here'),
      ])
        rmSync(f, { force: true });
    }
  });
});

it("is the worker's default: auto without VIGIL_SANDBOX, and a value that is not a mode is taken as strict", () => {
  expect(workerSandboxMode({})).toEqual({ mode: 'auto', problem: null });
  expect(workerSandboxMode({ VIGIL_SANDBOX: ' OFF ' })).toEqual({ mode: 'off', problem: null });
  expect(workerSandboxMode({ VIGIL_SANDBOX: 'maybe' })).toMatchObject({
    mode: 'strict',
    problem: expect.stringContaining('taken as strict'),
  });
});

it('says where the sandbox cannot run and why (this machine)', () => {
  const d = describeSandbox({ ...process.env, VIGIL_SANDBOX: 'auto' });
  if (!sandboxable) expect(d.line).toMatch(/cannot run on this worker/);
  else expect(d.applies).toBe(true);
});
