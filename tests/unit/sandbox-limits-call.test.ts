/**
 * The sandbox's limits on real calls (lib/sandbox-limits.ts): a command agent
 * (tests/support/limits-agent.mjs) runs through runAgent and runTests in bubblewrap, under the
 * supervisor daemon from dist/ (`npm run build`), with the limits at their defaults unless a test
 * says why not. A fork bomb and a memory hog end within their limits, with the reason in the
 * result, the log and the tail, while the worker (this process: its event loop) and the suite's
 * Temporal server (a describeNamespace round trip) keep answering — measured against a baseline
 * and printed; an honest agent that starts processes, uses memory and burns CPU gets through. The
 * fallback (no cgroup, forced with VIGIL_SANDBOX_LIMITS=fallback) is tested for what it holds.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runAgent } from '../../activities/agent.js';
import { supervisorPath } from '../../activities/process.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { cgroupProbe } from '../../lib/sandbox-cgroups.js';
import { runTests } from '../../activities/tests.js';
import type { AgentResult, RunAgentInput, RunTestsInput, TestResult } from '../../schemas/activities.js';
import { defaultKnobs } from '../../schemas/knobs.js';
import { sandboxArgs } from '../../rules/sandbox.js';
import { ROOT } from '../support/harness.js';

if (!existsSync(supervisorPath())) throw new Error(`${supervisorPath()} is missing: run \`npm run build\` (npm test does it for you)`);

const AGENT = path.join(ROOT, 'tests/support/limits-agent.mjs');
/** What a run with the default knobs passes: the limits as users get them. */
const DEFAULTS = sandboxArgs(defaultKnobs());
const saved = { ...process.env };
let root: string;
let repo: string;
let temporal: Connection;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'vigil-limits-call-'));
  const home = path.join(root, 'vigil-home');
  mkdirSync(home);
  repo = path.join(root, 'repo');
  mkdirSync(repo);
  writeFileSync(path.join(repo, 'README.md'), '# the repository\n');
  execFileSync('git', ['init', '-q'], { cwd: repo });
  Object.assign(process.env, { VIGIL_HOME: home, VIGIL_SANDBOX: 'auto' });
  delete process.env.VIGIL_SANDBOX_LIMITS;
  temporal = await Connection.connect({ address: inject('temporalAddress') });
});

afterAll(async () => {
  await temporal?.close();
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  rmSync(root, { recursive: true, force: true });
});

const mock = (): MockActivityEnvironment => new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') });
let iteration = 0;
function agent(args: string[], limits: Partial<RunAgentInput> = DEFAULTS): Promise<AgentResult> {
  const input: RunAgentInput = {
    runId: 'limits-run',
    repoPath: repo,
    argv: [process.execPath, AGENT, ...args],
    prompt: 'Build the thing.\n',
    role: 'iteration',
    iteration: ++iteration,
    phase: 'ACT',
    tier: 'development',
    timeoutSeconds: 120,
    completionPromise: 'COMPLETION PROMISE FULFILLED',
    ...limits,
  };
  return mock().run(runAgent, input) as Promise<AgentResult>;
}

interface Latency {
  /** Event-loop delay of this process (the worker's activities run here): p99 and max, ms. */
  loopP99: number;
  loopMax: number;
  /** describeNamespace round trips to the suite's Temporal server while it ran: count, median and max, ms. */
  rtts: number;
  rttMedian: number;
  rttMax: number;
}

/** Runs `work` while sampling the worker's event loop and Temporal's round trips (every 50 ms). */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; latency: Latency }> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const rtts: number[] = [];
  let done = false;
  loop.enable();
  const sampling = (async () => {
    while (!done) {
      const t = performance.now();
      await temporal.workflowService.describeNamespace({ namespace: 'default' });
      rtts.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    const result = await work();
    return { result, latency: summary() };
  } finally {
    done = true;
    await sampling;
    loop.disable();
  }
  function summary(): Latency {
    const sorted = [...rtts].sort((a, b) => a - b);
    const r = (n: number): number => Math.round(n * 10) / 10;
    return {
      loopP99: r(loop.percentile(99) / 1e6),
      loopMax: r(loop.max / 1e6),
      rtts: sorted.length,
      rttMedian: r(sorted[Math.floor(sorted.length / 2)] ?? 0),
      rttMax: r(sorted.at(-1) ?? 0),
    };
  }
}

const idle = (ms: number) => () => new Promise<void>((r) => setTimeout(r, ms));
/** What each measurement found, printed at the end (the report's numbers). */
const numbers: Record<string, Latency> = {};
afterAll(() => {
  if (Object.keys(numbers).length) console.log(`sandbox limits, worker and Temporal latency:\n${JSON.stringify(numbers, null, 2)}`);
});

const log = (r: AgentResult): string => readFileSync(r.logPath, 'utf8');
const cgroups = sandboxPlatform().problem === null && cgroupProbe().base !== null;

describe.runIf(cgroups)('limits held by cgroups, at their defaults', () => {
  it('measures a baseline: the worker and Temporal with nothing running', async () => {
    numbers.baseline = (await measured(idle(3000))).latency;
    expect(numbers.baseline.rtts).toBeGreaterThan(10);
  });

  it('ends a fork bomb in the builder at the pid limit, with the reason; the worker and Temporal keep answering', async () => {
    const { result: r, latency } = await measured(() => agent(['fork-bomb']));
    numbers.forkBomb = latency;
    expect(r.sandbox?.limits).toMatch(/^cgroup v[12]: 1024 tasks, 2048 MiB, cpu weight 50$/);
    const m = /^the agent started (\d+) processes: pid limit \(sandboxPids=1024, threads count\)$/.exec(r.sandbox?.limitHit ?? '');
    expect(m, JSON.stringify(r.sandbox)).not.toBeNull();
    expect(Number(m?.[1])).toBeLessThanOrEqual(1024);
    expect(r.exitCode).not.toBe(0);
    expect(r.durationMs).toBeLessThan(30_000);
    expect(r.tail.trimEnd().split('\n').at(-1)).toBe(`vigil: ${r.sandbox?.limitHit}`);
    expect(log(r)).toContain(`(${r.sandbox?.limitHit})`);
    // A generous bound: the worker's event loop and Temporal's answers stay in human time.
    expect(latency.loopMax).toBeLessThan(1000);
    expect(latency.rttMax).toBeLessThan(2000);
  });

  it('ends a builder whose memory never stops growing at the memory limit, with what it used', async () => {
    const { result: r, latency } = await measured(() => agent(['alloc', '16384']));
    numbers.memoryHog = latency;
    const m = /^the agent used (\d+\.\d) GiB: memory limit \(sandboxMemoryMb=2048\)$/.exec(r.sandbox?.limitHit ?? '');
    expect(m, JSON.stringify(r.sandbox)).not.toBeNull();
    expect(Number(m?.[1])).toBeLessThanOrEqual(2.1);
    expect(r.exitCode).not.toBe(0);
    expect(log(r)).not.toContain('limits-agent: holding');
    expect(latency.loopMax).toBeLessThan(1000);
    expect(latency.rttMax).toBeLessThan(2000);
  });

  it('ends a 3 GiB allocation at the default memory limit (2 GiB)', async () => {
    const r = await agent(['alloc', '3072']);
    expect(r.sandbox?.limitHit).toMatch(/^the agent used (1\.9|2\.0) GiB: memory limit \(sandboxMemoryMb=2048\)$/);
    expect(log(r)).toContain('limits-agent: 1536 MiB touched');
    expect(log(r)).not.toContain('limits-agent: 2560 MiB touched');
  });

  it('lets an honest builder through: 300 processes, 1 GiB over 4 processes, 4 busy processes (measured)', async () => {
    const spawned = await agent(['spawn', '300']);
    expect([spawned.exitCode, spawned.sandbox?.limitHit]).toEqual([0, null]);
    expect(log(spawned)).toContain('300 of 300 processes ended well');
    const memory = await agent(['alloc', '1024', '4']);
    expect([memory.exitCode, memory.sandbox?.limitHit], memory.tail).toEqual([0, null]);
    const { result: busy, latency } = await measured(() => agent(['cpu', '4', '4000']));
    numbers.cpuBusy = latency;
    expect([busy.exitCode, busy.sandbox?.limitHit]).toEqual([0, null]);
    expect(latency.loopMax).toBeLessThan(1000);
    expect(latency.rttMax).toBeLessThan(2000);
  });

  it('ends a test run that fork-bombs: failed, with the reason', async () => {
    const input: RunTestsInput = {
      runId: 'limits-run',
      repoPath: repo,
      command: 'b(){ b | b & }; b; sleep 600',
      iteration: 1,
      timeoutSeconds: 120,
      ...DEFAULTS,
    };
    const t = (await mock().run(runTests, input)) as TestResult;
    expect(t.passed).toBe(false);
    expect(t.verdict).toBe('fail');
    expect(t.reason).toMatch(/: the test run started \d+ processes: pid limit \(sandboxPids=1024, threads count\)$/);
    expect(t.sandbox?.limitHit).toMatch(/^the test run started/);
  });
});

describe.runIf(sandboxPlatform().problem === null)('the fallback (no cgroup), forced', () => {
  beforeAll(() => {
    process.env.VIGIL_SANDBOX_LIMITS = 'fallback';
  });
  afterAll(() => {
    delete process.env.VIGIL_SANDBOX_LIMITS;
  });

  it('says what it applies, and lets an honest builder through', async () => {
    const r = await agent(['spawn', '50']);
    expect(r.sandbox?.limits).toMatch(
      new RegExp(
        [
          /^no cgroup \(VIGIL_SANDBOX_LIMITS=fallback: cgroups are not used\): 2048 MiB per process \(RLIMIT_DATA/.source,
          /\); 1024 tasks and 2048 MiB for the call watched twice a second; nice 3$/.source,
        ].join(''),
      ),
    );
    expect([r.exitCode, r.sandbox?.limitHit]).toEqual([0, null]);
  });

  it(
    "ends a call past its pid limit, seen by the watch (a bounded spawner: the kernel holds nothing here, and a fork bomb's " +
      "burst would reach the machine's pid_max)",
    async () => {
      // 400 sleeping processes against a limit of 100 (a knob the run sets, so that the watch, not the machine, is what stops them).
      const r = await agent(['spawn', '400', '20000'], sandboxArgs({ ...defaultKnobs(), sandboxPids: 100 }));
      expect(r.sandbox?.limitHit).toMatch(
        /^the agent started \d+ processes: pid limit \(sandboxPids=100, threads count; seen by Vigil's watch, no cgroup here\)$/,
      );
      expect(r.exitCode).not.toBe(0);
      expect(r.durationMs).toBeLessThan(15_000);
    },
  );

  it('ends a call whose processes together pass the memory limit (each under RLIMIT_DATA), seen by the watch', async () => {
    const r = await agent(['alloc', '1024', '8'], sandboxArgs({ ...defaultKnobs(), sandboxMemoryMb: 512 }));
    expect(r.sandbox?.limitHit).toMatch(
      /^the agent used (\d+ MiB|\d+\.\d GiB): memory limit \(sandboxMemoryMb=512; seen by Vigil's watch, no cgroup here\)$/,
    );
    // Seen, not held: eight processes allocating at once may go well past the limit between two looks.
    expect(r.exitCode).not.toBe(0);
  });

  it('refuses one process an allocation past RLIMIT_DATA; the kernel tells only the process, so no reason is recorded', async () => {
    const r = await agent(['alloc', '2048'], sandboxArgs({ ...defaultKnobs(), sandboxMemoryMb: 1024 }));
    expect(r.exitCode).not.toBe(0);
    expect(log(r)).not.toContain('limits-agent: 1536 MiB touched');
    expect(r.sandbox?.limitHit).toBeNull();
  });
});
