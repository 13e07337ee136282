/**
 * Whole runs with the product's default knobs (the sandbox and its limits on, the provider's
 * circuit breaker on), on the suite's real server, whose builder tries the limits inside the
 * sandbox: the claude preset runs the fake claude CLI of examples/agents/fake-cli through
 * tests/support/limits-agent.mjs, which instead fork-bombs on the first iteration's builder call
 * (each shell printing a network error, as a dying agent cut off from its proxy would) and
 * touches 3 GiB on the second's. Each call is ended at its limit (1024 tasks, 2 GiB), with the
 * reason; the iteration fails and the next prompt says why; status shows it; the breaker hears no
 * failure; the run goes on to the council's approval. Meanwhile the worker (in this process: a
 * status query through Temporal, and its event loop) and Temporal (describeNamespace) are timed
 * every 100 ms, against the same measures taken before the run. The honest control: builders
 * that start 300 processes and hold 1 GiB over 4 processes, each call, get through untouched.
 *
 * Where this machine cannot make cgroups the calls get the fallback, whose calls are tested in
 * tests/unit/sandbox-limits-call.test.ts (a fork bomb is not run there: nothing the kernel holds
 * would stop it before the machine's pid_max).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { WorkflowHandle } from '@temporalio/client';
import { expect, it } from 'vitest';
import { cgroupProbe } from '../../lib/sandbox-cgroups.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { iterationLine } from '../../cli/follow.js';
import { printStatus } from '../../cli/status.js';
import type { IterationRecord } from '../../schemas/run.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { pauseSignal, resumeSignal } from '../../workflows/messages.js';
import { currentDetails } from '../../rules/ui.js';
import { vigilRun } from '../../workflows/run-workflow.js';
import {
  claimBreaker,
  fileWorker,
  makeRepo,
  ROOT,
  runInput,
  sleep,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-limits-run-'));
// Set before the worker starts: the fake CLI it runs reads them.
const shared = fileWorker('sandbox-limits', () => {
  process.env.FAKE_CLI_LOG = path.join(dir, 'calls.jsonl');
  process.env.VIGIL_SANDBOX_WRITABLE = dir;
  // The fake CLI runs behind the limits agent (node's program root is /usr): its folder must be readable in the sandbox.
  process.env.VIGIL_SANDBOX_READABLE = path.join(ROOT, 'examples/agents/fake-cli');
  process.env.VIGIL_SANDBOX = 'auto';
  delete process.env.VIGIL_SANDBOX_LIMITS;
  delete process.env.VIGIL_SANDBOX_CGROUP;
});

const CHECKLIST = '[{"id": "REQ-1", "title": "the three files exist", "priority": "critical", "verify": "ls a.txt b.txt c.txt"}]';

/** The fake CLI's script: three builder calls that write a file each, then every reviewing role approves. */
function scenario(name: string): void {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      calls: [
        { writes: { 'a.txt': 'a\n' } },
        { writes: { 'b.txt': 'b\n' } },
        { writes: { 'c.txt': 'c\n' }, text: 'COMPLETION PROMISE FULFILLED' },
      ],
      roles: {
        checklist: { text: CHECKLIST },
        'checklist-verifier': { text: 'ITEM REQ-1: PASS - a.txt, b.txt and c.txt are there' },
        reviewer: { text: 'VERDICT: PASS\n- [Low] a name could be clearer' },
        'devils-advocate': { text: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing' },
        council: { text: 'VOTE: APPROVE\nREASON: every file is there' },
      },
    }),
  );
  process.env.FAKE_CLI_SCENARIO = file;
  process.env.FAKE_CLI_STATE = path.join(dir, `${name}.count`);
}

type Handle = WorkflowHandle<typeof vigilRun>;

/**
 * A run with the default knobs whose agent is the limits agent in `mode`, in front of the fake
 * claude CLI; `paused`: started with a pause, so that it waits before its first call.
 */
async function startLimitsRun(mode: 'hostile-builders' | 'honest-builders', paused = false): Promise<Handle> {
  scenario(mode);
  // Default knobs: the sandbox, its limits and the breaker as users get them (only the test timing is shortened).
  const input = runInput(makeRepo(), writeScenario('', { version: 1, iterations: [] }), {
    provider: 'claude',
    agentCommand: [
      process.execPath,
      path.join(ROOT, 'tests/support/limits-agent.mjs'),
      mode,
      path.join(ROOT, 'examples/agents/fake-cli', 'claude'),
    ],
    notifyDesktop: false,
  });
  const workflowId = uniqueId(`limits-${mode}`);
  await claimBreaker(shared.env, 'claude', shared.taskQueue);
  if (!paused) return startRun(shared.env, shared.taskQueue, input, workflowId);
  return shared.env.client.workflow.signalWithStart(vigilRun, {
    taskQueue: shared.taskQueue,
    workflowId,
    args: [input],
    signal: pauseSignal,
    signalArgs: [{ reason: 'the baseline is measured first' }],
  });
}

interface Report {
  runId: string;
  outcome: 'success' | 'failure' | 'released';
  reason?: string;
}

/** What the run told the provider's breaker, from its history (the signals it sent). */
async function breakerReports(handle: Handle): Promise<Report[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const a = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    const data = a?.input?.payloads?.[0]?.data;
    if (!a || !String(a.workflowExecution?.workflowId).startsWith('vigil-provider-') || !(data instanceof Uint8Array)) return [];
    return [JSON.parse(Buffer.from(data).toString('utf8')) as Report];
  });
}

/** One look at the worker and Temporal: when, a status query's round trip, describeNamespace's, and what the status said. */
interface Sample {
  at: number;
  queryMs: number;
  temporalMs: number;
  consecutiveFailures: number;
}

/** Looks every 100 ms until `stop()`: status queries (client → Temporal → this process's worker → back) and describeNamespace. */
function sampler(handle: Handle) {
  const samples: Sample[] = [];
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let done = false;
  const running = (async () => {
    while (!done) {
      const at = Date.now();
      let t = performance.now();
      const s: StatusSnapshot = await status(handle);
      const queryMs = performance.now() - t;
      t = performance.now();
      await shared.env.client.workflowService.describeNamespace({ namespace: 'default' });
      samples.push({ at, queryMs, temporalMs: performance.now() - t, consecutiveFailures: s.consecutiveFailures });
      await sleep(100);
    }
  })();
  return {
    samples,
    loop,
    async stop(): Promise<void> {
      done = true;
      await running;
      loop.disable();
    },
  };
}

/** Median, 95th percentile and max of `xs`, in ms, rounded. */
function spread(xs: number[]): { n: number; median: number; p95: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => Math.round((s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0) * 10) / 10;
  return { n: s.length, median: at(0.5), p95: at(0.95), max: at(1) };
}

/** The samples taken while the iteration's call ran (its record: finished `at`, after `durationMs`). */
const during = (samples: Sample[], r: IterationRecord | undefined): Sample[] => {
  const end = Date.parse(r?.at ?? '');
  return samples.filter((s) => s.at >= end - (r?.durationMs ?? 0) && s.at <= end);
};

const escape = (text = ''): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const cgroups = sandboxPlatform().problem === null && cgroupProbe().base !== null;

it.runIf(cgroups)(
  'a builder that fork-bombs, then touches 3 GiB: each call ends at its limit, a failed iteration, not the provider; the worker and Temporal keep answering',
  async () => {
    // The baseline: the worker and Temporal while the run waits, paused, with no call running.
    const handle = await startLimitsRun('hostile-builders', true);
    await waitForStatus(handle, (x) => x.paused && !x.agentRunning);
    const baseline = sampler(handle);
    await sleep(3000);
    await baseline.stop();
    expect((await status(handle)).recentIterations).toEqual([]);

    const watch = sampler(handle);
    await handle.signal(resumeSignal, {});
    const outcome = await handle.result();
    await watch.stop();
    const s = await status(handle);
    expect(outcome.status, JSON.stringify(s.recentIterations)).toBe('council_approved');

    // The first two iterations failed, each with its limit's reason; the run went on.
    const [bomb, hog, ...rest] = s.recentIterations;
    expect([bomb?.iteration, hog?.iteration]).toEqual([1, 2]);
    expect(bomb?.exitCode).not.toBe(0);
    expect(hog?.exitCode).not.toBe(0);
    expect(rest.length).toBeGreaterThanOrEqual(1);
    expect(rest.every((r) => r.exitCode === 0)).toBe(true);
    // Counted as failed iterations: two in a row, seen while the run backed off.
    expect(Math.max(...watch.samples.map((x) => x.consecutiveFailures))).toBe(2);
    expect(s.consecutiveFailures).toBe(0);

    const pids = /^the agent started (\d+) processes: pid limit \(sandboxPids=1024, threads count\)$/;
    const memory = /^the agent used (\d\.\d) GiB: memory limit \(sandboxMemoryMb=2048\)$/;
    expect(s.sandbox?.limitHits, JSON.stringify(s.sandbox)).toEqual([
      { iteration: 1, role: 'builder', reason: expect.stringMatching(pids) },
      { iteration: 2, role: 'builder', reason: expect.stringMatching(memory) },
    ]);
    expect(s.sandbox?.limitHitsTotal).toBe(2);
    const [bombReason, hogReason] = (s.sandbox?.limitHits ?? []).map((h) => h.reason);
    // Within the limit: the kernel refused the 1025th task, and the 3 GiB never got past 2 GiB.
    expect(Number(pids.exec(bombReason ?? '')?.[1])).toBeLessThanOrEqual(1024);
    expect(Number(memory.exec(hogReason ?? '')?.[1])).toBeLessThanOrEqual(2.0);
    const hogLog = readFileSync(hog?.logPath ?? '', 'utf8');
    expect(hogLog).toContain('limits-agent: 1536 MiB touched');
    expect(hogLog).not.toContain('limits-agent: 2560 MiB touched');
    expect(hogLog).not.toContain('limits-agent: holding');
    // Ended at the limit, not at the call's timeout (2 h) or its silence limit (15 min): a hang guard, waited patiently.
    expect(bomb?.durationMs).toBeLessThan(patient(30_000));
    expect(hog?.durationMs).toBeLessThan(patient(30_000));
    expect(s.sandbox?.last?.limits).toBe('cgroup v1: 1024 tasks, 2048 MiB, cpu weight 50'.replace('v1', `v${cgroupProbe().base?.version}`));

    // The log footer says why; the next prompt's findings say it to the agent.
    expect(readFileSync(bomb?.logPath ?? '', 'utf8')).toContain(`(${bombReason})`);
    expect(hogLog).toContain(`(${hogReason})`);
    const prompt = (n: number): string => readFileSync(path.join(path.dirname(bomb?.logPath ?? ''), `iteration-000${n}.prompt.md`), 'utf8');
    expect(prompt(2)).toContain(bombReason);
    expect(prompt(3)).toContain(hogReason);

    // Not the provider's failure: the breaker heard a success for every call, the two ended by a limit included.
    const reports = (await breakerReports(handle)).filter((r) => r.outcome !== 'released');
    expect(reports.length).toBeGreaterThanOrEqual(5);
    expect(reports.filter((r) => r.outcome === 'failure')).toEqual([]);

    // `vigil watch` says it on the iteration's line, the Web UI's card on a line of its own.
    expect(bomb?.limitHit).toBe(bombReason);
    expect(hog?.limitHit).toBe(hogReason);
    expect(iterationLine(hog as IterationRecord)).toMatch(
      new RegExp(`^iteration 2 · .* · exit [1-9]\\d* · .* · ended by a sandbox limit: ${escape(hogReason)}$`),
    );
    expect(currentDetails(s)).toContain(`**A sandbox limit ended 2 calls**: the latest, iteration 2 (builder): ${hogReason}`);

    // `vigil status` prints both.
    const lines: string[] = [];
    printStatus(
      {
        kind: 'running',
        workflowId: handle.workflowId,
        snapshot: s,
        workerAnswered: true,
        iteration: s.iteration,
        searchStatus: 'running',
        taskFailing: null,
      },
      (l = '') => lines.push(l),
    );
    expect(lines).toContain(`  limit     : iteration 1 (builder): ${bombReason}`);
    expect(lines).toContain(`  limit     : iteration 2 (builder): ${hogReason}`);

    // The worker and Temporal while each call ran, against the baseline: looked at often enough, and answering in human time.
    const numbers = {
      baseline: { query: spread(baseline.samples.map((x) => x.queryMs)), temporal: spread(baseline.samples.map((x) => x.temporalMs)) },
      forkBomb: {
        query: spread(during(watch.samples, bomb).map((x) => x.queryMs)),
        temporal: spread(during(watch.samples, bomb).map((x) => x.temporalMs)),
      },
      alloc3GiB: {
        query: spread(during(watch.samples, hog).map((x) => x.queryMs)),
        temporal: spread(during(watch.samples, hog).map((x) => x.temporalMs)),
      },
      wholeRun: { query: spread(watch.samples.map((x) => x.queryMs)), temporal: spread(watch.samples.map((x) => x.temporalMs)) },
      workerEventLoopMs: { p99: Math.round(watch.loop.percentile(99) / 1e5) / 10, max: Math.round(watch.loop.max / 1e5) / 10 },
      calls: { forkBombMs: bomb?.durationMs, alloc3GiBMs: hog?.durationMs, forkBomb: bombReason, alloc3GiB: hogReason },
    };
    console.log(`sandbox limits in a whole run, latency (ms) of a status query and of Temporal:\n${JSON.stringify(numbers, null, 2)}`);
    expect(numbers.baseline.query.n).toBeGreaterThanOrEqual(10);
    expect(numbers.forkBomb.query.n).toBeGreaterThanOrEqual(3);
    expect(numbers.alloc3GiB.query.n).toBeGreaterThanOrEqual(3);
    // Answering, not stalled behind the limits: hang guards, waited patiently (how fast lives in the bench).
    for (const m of [numbers.forkBomb, numbers.alloc3GiB]) {
      expect(m.query.max).toBeLessThan(patient(2000));
      expect(m.temporal.max).toBeLessThan(patient(1000));
    }
    expect(numbers.workerEventLoopMs.max).toBeLessThan(patient(1000));
  },
);

it.runIf(cgroups)('the honest control: builders that start 300 processes and hold 1 GiB, each call, get through untouched', async () => {
  const handle = await startLimitsRun('honest-builders');
  const outcome = await handle.result();
  const s = await status(handle);
  expect(outcome.status, JSON.stringify(s.recentIterations)).toBe('council_approved');
  expect(s.recentIterations.length).toBeGreaterThanOrEqual(3);
  for (const r of s.recentIterations) {
    expect(r.exitCode, r.logPath).toBe(0);
    const log = readFileSync(r.logPath, 'utf8');
    expect(log).toContain('limits-agent: 300 of 300 processes ended well');
    expect(log).toContain('limits-agent: 4 processes done (0,0,0,0)');
  }
  expect(s.recentIterations.filter((r) => r.limitHit !== undefined)).toEqual([]);
  expect(s.sandbox?.limitHits).toBeUndefined();
  expect(s.sandbox?.limitHitsTotal).toBeUndefined();
  expect(s.sandbox?.last?.limits).toBe(`cgroup v${cgroupProbe().base?.version}: 1024 tasks, 2048 MiB, cpu weight 50`);
  const reports = (await breakerReports(handle)).filter((r) => r.outcome !== 'released');
  expect(reports.filter((r) => r.outcome === 'failure')).toEqual([]);
});
