/**
 * Benchmark (not a test): what the tests verdict that trusts no exit code adds to a test run —
 * the per-test report every run asks of its runner (lib/gates/test-report.ts) and the
 * baseline, the run's first test run kept as its inventory of tests, that every later run is held
 * against (activities/tests.ts). The goal: at most 15 % on a test run's time.
 *
 * For each runner (pytest and unittest through the machine's python3, node's test runner, vitest)
 * a small repository of its own (bench/tests-report-repos.ts: `--tests` passing tests in four
 * files) is timed, `--trials` times per row, the rows interleaved trial by trial (each trial
 * starts at another row, so the machine's drift spreads over all of them):
 *
 * - as a person runs it: `sh -c <command>` in the repository, unsandboxed, no Vigil;
 * - for each sandbox setting (`off`, and the default `auto` where bubblewrap can run here):
 *   - the gate without report: the same command through the sandbox and the supervised process
 *     the tests gate uses (prepareSandbox, runProcess), judged by its printed summary, which is
 *     what a test run was before the report: the "without" of the overhead;
 *   - the baseline run: `runTests` with `recordBaseline`, the run's first test run;
 *   - a later run: `runTests` held against that baseline, what every later test run costs.
 *
 * `runTests` is the activity itself, called in a mocked activity context (@temporalio/testing) as
 * a worker calls it, without a Temporal server (it never talks to one). The time is the wall time
 * of the whole call; the CPU, where the bench can make a cgroup of its own (bench/cgroup-cpu.ts),
 * is every process's, the bench's own included (its share is the report's parsing). The overhead
 * is the median over the trials of each trial's ratio to the gate without report (the two run a
 * few seconds apart, so the ratio leaves out most of the machine's drift), printed beside that
 * row's own spread: a difference below it is not measured at this hour. Every Vigil
 * run must end green with every test in its report, and every plain run with exit 0: a row that
 * does not fails the bench, since its times would mean nothing. Times are printed, never asserted.
 *
 * Usage: npm run build && node dist/bench/tests-report.js [--trials 7] [--tests 40] [--runners pytest,unittest,node-test,vitest]
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { ensureRunDir, pad } from '../activities/artifacts.js';
import { workerStoreUrl } from '../lib/event-store.js';
import { runnerOfCommand } from '../lib/gates/test-report.js';
import { summarizeTestOutput, type TestSummary } from '../lib/gates/test-runner.js';
import { runProcess } from '../activities/process.js';
import { authorizeCall } from '../activities/run-authorization.js';
import { prepareSandbox, sandboxReport } from '../lib/sandbox.js';
import { daemonPid } from '../lib/supervisor-location.js';
import { runTests } from '../activities/tests.js';
import type { TestResult } from '../schemas/activities.js';
import { defaultKnobs } from '../schemas/knobs.js';
import { packageRoot } from '../lib/paths.js';
import { sandboxArgs } from '../rules/sandbox.js';
import { benchArgs, fail, numberArg } from './args.js';
import { openCpuCgroup } from './cgroup-cpu.js';
import { benchScratch } from './scratch.js';
import { makeRepo, RUNNER_NAMES, type BenchRepo, type RunnerName } from './tests-report-repos.js';
import { sandboxPlatform } from '../lib/sandbox-host.js';
import { inheritedEnv } from '../lib/child-env.js';

const NAME = 'tests-report';
const USAGE = `usage: node dist/bench/tests-report.js [--trials N (default 7)] [--tests N (default 40)] [--runners ${RUNNER_NAMES.join(',')}]`;
const values = benchArgs(NAME, USAGE, {
  trials: { type: 'string', default: '7' },
  tests: { type: 'string', default: '40' },
  runners: { type: 'string', default: RUNNER_NAMES.join(',') },
});
const TRIALS = numberArg(NAME, USAGE, 'trials', values.trials, { min: 1, integer: true });
const TESTS = numberArg(NAME, USAGE, 'tests', values.tests, { min: 4, max: 5000, integer: true });
const RUNNERS = values.runners.split(',').map((r) => r.trim());
for (const r of RUNNERS)
  if (!(RUNNER_NAMES as readonly string[]).includes(r)) fail(NAME, USAGE, `--runners: ${JSON.stringify(r)} is not a runner here`);
/** The issue's budget: the inventory and the report add at most this to a test run's time. */
const BUDGET = 0.15;
const TIMEOUT_SECONDS = 300;

const SCRATCH = benchScratch(NAME);
const CGROUP = openCpuCgroup();
process.once('exit', () => CGROUP?.close());
// Everything Vigil keeps of a run (its private folder, the supervisor daemon's socket) goes to the scratch folder.
process.env.VIGIL_HOME = SCRATCH.mkdir('home-');
process.env.VIGIL_SUPERVISOR_DIR = SCRATCH.mkdir('supervisor-');
// The worker's own sandbox setting is its default; each row names the run's knob itself.
delete process.env.VIGIL_SANDBOX;
// vitest comes from this checkout's node_modules, linked into its repository as a project's own
// install would be: the sandbox shows that folder, read-only, as it shows a project's linked packages.
const NODE_MODULES = path.join(packageRoot(), 'node_modules');
process.env.VIGIL_SANDBOX_READABLE = [process.env.VIGIL_SANDBOX_READABLE, NODE_MODULES].filter(Boolean).join(':');

type Mode = 'off' | 'auto';
interface Sample {
  ms: number;
  cpu: number | null;
}
interface Row {
  label: string;
  samples: Sample[];
}

const cpuNow = (): number | null => (CGROUP ? CGROUP.seconds() : null);
let iteration = 0;
const problems: string[] = [];

/** Why `runner` cannot run here (null: it can). */
function unavailable(runner: RunnerName): string | null {
  if (runner === 'pytest') {
    const r = spawnSync('python3', ['-m', 'pytest', '--version'], { encoding: 'utf8', timeout: 30_000 });
    return r.status === 0
      ? null
      : `python3 -m pytest does not run here (${(r.stderr || r.error?.message || `exit ${r.status}`).trim().slice(0, 200)})`;
  }
  if (runner === 'unittest') {
    const r = spawnSync('python3', ['-c', 'import unittest'], { encoding: 'utf8', timeout: 30_000 });
    return r.status === 0
      ? null
      : `python3 does not run here (${(r.stderr || r.error?.message || `exit ${r.status}`).trim().slice(0, 200)})`;
  }
  if (runner === 'vitest' && !existsSync(path.join(NODE_MODULES, 'vitest', 'vitest.mjs'))) return `no vitest in ${NODE_MODULES}`;
  return null;
}

/** The command as a person runs it: a shell in the repository, the output read to its end. */
function plainRun(repo: BenchRepo): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', repo.command], { cwd: repo.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (b: Buffer): void => void (tail = (tail + b.toString('utf8')).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(0) : reject(new Error(`${repo.command} exited ${code}: ${tail.slice(-500)}`))));
  });
}

const activity = (): MockActivityEnvironment => new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') });

/**
 * The tests gate without the report: runTests' own steps (authorization, sandbox, supervised
 * process, summary) for the command as configured, without asking the runner for its report,
 * reading it, or holding it against a baseline.
 */
async function gateWithoutReport(repo: BenchRepo, runId: string, mode: Mode): Promise<void> {
  const it = (iteration += 1);
  const knobs = sandboxArgs({ ...defaultKnobs(), sandbox: mode });
  const runner = runnerOfCommand(repo.command, repo.dir);
  const summary = (await activity().run(async () => {
    await authorizeCall({ runId, repoPath: repo.dir, kind: { tests: repo.command } }, null);
    const dir = ensureRunDir(repo.dir, runId);
    const env = inheritedEnv();
    const sandbox = prepareSandbox({
      kind: 'tests',
      runId,
      repoPath: repo.dir,
      cwd: repo.dir,
      file: '/bin/sh',
      args: ['-c', repo.command],
      env: { ...env, CI: env.CI ?? 'true' },
      label: `tests-${pad(it)}`,
      provider: null,
      runMode: knobs.sandbox,
      registries: knobs.sandboxRegistries,
      limits: knobs.sandboxLimits,
      storeUrl: workerStoreUrl().url,
    });
    const proc = await runProcess({
      file: sandbox.file,
      args: sandbox.args,
      cwd: repo.dir,
      env: sandbox.env,
      sandboxProxy: sandbox.proxy,
      ...(sandbox.pidNamespace ? { ownPidNamespace: true } : {}),
      ...(sandbox.limits ? { limits: sandbox.limits } : {}),
      stdin: '',
      timeoutMs: TIMEOUT_SECONDS * 1000,
      logPath: path.join(dir, `tests-${pad(it)}.log`),
      pidFile: path.join(dir, `tests-${pad(it)}.pid.json`),
      header: `=== vigil: tests for iteration ${it}, attempt 1: ${repo.command} ===`,
    });
    const report = sandboxReport(sandbox, proc.sandboxDenials, proc.tail, proc.limits, proc.sandboxFetches);
    if (mode === 'auto' && !report.applied) throw new Error(`the default sandbox was not applied: ${report.reason}`);
    return summarizeTestOutput(runner, proc.tail, proc.exitCode);
  })) as TestSummary;
  if (summary.verdict !== 'pass' || summary.passed !== repo.tests)
    throw new Error(`${summary.verdict}: ${summary.reason} (expected ${repo.tests} passed)`);
}

/** The tests gate as a run calls it: runTests with the run's default knobs (but the sandbox `mode`). */
async function gateWithReport(repo: BenchRepo, runId: string, mode: Mode, recordBaseline: boolean): Promise<void> {
  const t = (await activity().run(runTests, {
    runId,
    repoPath: repo.dir,
    command: repo.command,
    iteration: (iteration += 1),
    timeoutSeconds: TIMEOUT_SECONDS,
    ...sandboxArgs({ ...defaultKnobs(), sandbox: mode }),
    ...(recordBaseline ? { recordBaseline: true } : {}),
  })) as TestResult;
  const r = t.report;
  if (mode === 'auto' && !t.sandbox?.applied) throw new Error(`the default sandbox was not applied: ${t.sandbox?.reason ?? 'no report'}`);
  if (t.verdict !== 'pass' || !r || r.total !== repo.tests || r.passed !== repo.tests)
    throw new Error(`${t.verdict}: ${t.reason} (report: ${r ? `${r.passed} of ${r.total} passed` : 'none'}; expected ${repo.tests})`);
  if (!recordBaseline && r.baselinePassed !== repo.tests)
    throw new Error(`held against a baseline of ${r.baselineTotal ?? 'no'} tests: ${t.reason}`);
}

async function timed(row: Row, what: () => Promise<unknown>): Promise<void> {
  const cpu0 = cpuNow();
  const t0 = performance.now();
  await what();
  const ms = performance.now() - t0;
  const cpu1 = cpuNow();
  row.samples.push({ ms, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0 });
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return (s[lo] as number) + ((s[Math.ceil(at)] as number) - (s[lo] as number)) * (at - lo);
};
const median = (xs: number[]): number => quantile(xs, 0.5);
const pct = (x: number, base: number): string => `${x >= base ? '+' : ''}${(((x - base) / base) * 100).toFixed(1)} %`;

function line(row: Row, base: Row | null): string {
  const ms = row.samples.map((s) => s.ms);
  const cpus = row.samples.map((s) => s.cpu).filter((c): c is number => c !== null);
  const cpu = cpus.length === row.samples.length ? `, CPU ${median(cpus).toFixed(2)} s` : '';
  const vs = base ? `  ${pct(median(ms), median(base.samples.map((s) => s.ms)))} on ${base.label}` : '';
  const spread = `p25–p75 ${quantile(ms, 0.25).toFixed(0)}–${quantile(ms, 0.75).toFixed(0)}`;
  return `  ${row.label.padEnd(44)} median ${median(ms).toFixed(0).padStart(5)} ms (${spread})${cpu}${vs}`;
}

/** An overhead on the gate without report: the median of the trials' own ratios, and the medians' CPU ratio. */
interface Overhead {
  /** Median over the trials of (this row's time / the gate without report's time in the same trial) − 1. */
  paired: number;
  /** The same from the CPU medians (null: not counted here). */
  cpu: number | null;
}

interface Verdict {
  runner: string;
  mode: Mode;
  later: Overhead;
  baseline: Overhead;
  /** The gate without report's own spread, (p75 − p25) / median: differences below it are noise at this hour. */
  noise: number;
}

/**
 * `row` against `base`, trial by trial: each trial times both a few seconds apart, so the ratio
 * of the two leaves out most of the machine's drift, which the medians of whole rows keep.
 */
function overhead(row: Row, base: Row): Overhead {
  const ratios = row.samples.map((s, t) => s.ms / (base.samples[t] as Sample).ms);
  const cpu = (r: Row): number | null => {
    const xs = r.samples.map((s) => s.cpu);
    return xs.every((x): x is number => x !== null) ? median(xs) : null;
  };
  const [c, cb] = [cpu(row), cpu(base)];
  return { paired: median(ratios) - 1, cpu: c === null || cb === null ? null : c / cb - 1 };
}

/** One runner: its repository, a warm-up of every row, then the timed trials; null when it cannot run here. */
async function benchRunner(runner: RunnerName, modes: readonly Mode[]): Promise<Verdict[]> {
  const why = unavailable(runner);
  if (why) {
    console.log(`\n${runner}: not measured: ${why}`);
    return [];
  }
  const repo = makeRepo(runner, SCRATCH.mkdir(`${runner}-`), TESTS, NODE_MODULES);
  const plain: Row = { label: 'as a person runs it (no Vigil, unsandboxed)', samples: [] };
  type Step = { row: Row; run: () => Promise<unknown> };
  const steps: Step[] = [{ row: plain, run: () => plainRun(repo) }];
  const byMode = new Map<Mode, { without: Row; baseline: Row; later: Row }>();
  for (const mode of modes) {
    const runId = `tests-report-${runner}-${mode}`;
    const m = mode === 'off' ? 'sandbox off' : 'default sandbox';
    const rows = {
      without: { label: `${m}: gate without report`, samples: [] },
      baseline: { label: `${m}: baseline run (report, kept)`, samples: [] },
      later: { label: `${m}: later run (report + baseline)`, samples: [] },
    };
    byMode.set(mode, rows);
    steps.push(
      { row: rows.without, run: () => gateWithoutReport(repo, runId, mode) },
      { row: rows.baseline, run: () => gateWithReport(repo, runId, mode, true) },
      { row: rows.later, run: () => gateWithReport(repo, runId, mode, false) },
    );
  }
  console.log(`\n${runner}: \`${repo.command}\`, ${TESTS} tests (${repo.dir})`);
  try {
    // A warm-up of each row in order (the baseline before the later run that reads it): caches
    // (__pycache__, vitest's), the sandbox's home for the run, the supervisor daemon.
    for (const s of steps) await s.run();
    for (let t = 0; t < TRIALS; t++) {
      for (let k = 0; k < steps.length; k++) {
        const s = steps[(t + k) % steps.length] as Step;
        await timed(s.row, s.run);
      }
    }
  } catch (err) {
    const msg = `${runner}: a run did not end as it must, its times are left out: ${err instanceof Error ? err.message : String(err)}`;
    problems.push(msg);
    console.log(`  ${msg}`);
    return [];
  }
  console.log(line(plain, null));
  const verdicts: Verdict[] = [];
  for (const [mode, rows] of byMode) {
    console.log(line(rows.without, plain));
    console.log(line(rows.baseline, rows.without));
    console.log(line(rows.later, rows.without));
    const ms = rows.without.samples.map((s) => s.ms);
    verdicts.push({
      runner,
      mode,
      later: overhead(rows.later, rows.without),
      baseline: overhead(rows.baseline, rows.without),
      noise: (quantile(ms, 0.75) - quantile(ms, 0.25)) / median(ms),
    });
  }
  return verdicts;
}

async function main(): Promise<void> {
  const platform = sandboxPlatform();
  const modes: Mode[] = platform.problem === null ? ['off', 'auto'] : ['off'];
  const load = (): string =>
    os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  console.log(`${NAME}: ${TRIALS} trial(s) per row after a warm-up, ${TESTS} tests per repository, load average ${load()}`);
  console.log(
    CGROUP
      ? `CPU counted in cgroup ${CGROUP.path}: every process the bench starts, the bench included`
      : 'CPU not counted: no cgroup could be made here (/proc alone misses what runs in the sandbox)',
  );
  if (platform.problem !== null) console.log(`default sandbox: not measured: ${platform.problem}`);
  const verdicts: Verdict[] = [];
  for (const r of RUNNERS) verdicts.push(...(await benchRunner(r as RunnerName, modes)));
  console.log(`\nload average at the end ${load()}`);
  console.log(
    `overhead of the report and the baseline on the gate without them, the median of each trial's ratio (goal: at most ${BUDGET * 100} %);` +
      ' noise: the spread of the gate without report (p75 − p25 over its median)',
  );
  const signed = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
  const within = (o: Overhead): string =>
    `${signed(o.paired)} (${o.paired <= BUDGET ? 'within' : 'OVER'} the budget${o.cpu === null ? '' : `; CPU ${signed(o.cpu)}`})`;
  for (const v of verdicts) {
    const where = v.mode === 'off' ? 'sandbox off    ' : 'default sandbox';
    console.log(
      `  ${v.runner.padEnd(10)} ${where}  later run ${within(v.later)}, baseline run ${within(v.baseline)}, noise ${(v.noise * 100).toFixed(0)} %`,
    );
  }
  if (problems.length > 0) {
    console.error(`${NAME}: ${problems.length} runner(s) failed:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exitCode = 1;
  }
}

try {
  await main();
} finally {
  // The supervisor daemon is this bench's own (its socket in the scratch folder).
  const daemon = daemonPid();
  if (daemon !== null) process.kill(daemon, 'SIGTERM');
  SCRATCH.remove();
}
