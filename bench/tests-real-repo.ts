/**
 * Benchmark (not a test): affected tests between completion checks on a real repository nobody
 * here wrote — more-itertools 10.7.0, fetched from PyPI by the bench itself (`pip download` of its
 * source distribution, which ships its tests), its suite run by pytest through the machine's
 * python3. The goal: each iteration between completion checks costs at most 0.3× the full suite.
 *
 * A scripted agent makes one small change per iteration: a local assignment added before the
 * `return` of one function (a different function each time, in more.py and recipes.py alike),
 * which changes no behaviour, as a refactoring step would. After each change the tests gate runs
 * as a run calls it (`runTests`, the default knobs and the default sandbox, in a mocked activity
 * context as tests-report.ts does): the run's first test run (the baseline, which records pytest's
 * per-test map under coverage.py), each iteration's affected tests (the full suite every
 * `affectedTestsFullEvery` iterations), and at the end a completion check's full suite. Beside
 * them, the full suite as a person runs it (no Vigil, unsandboxed). Every Vigil run must pass:
 * one that does not fails the bench. The CPU is every process the bench starts, where it can make
 * a cgroup of its own (bench/cgroup-cpu.ts).
 *
 * coverage.py comes from Vigil's cache (scripts/install-test-tools.sh, run first); without it the
 * iterations are selected by imports, which on this package (its `__init__` imports every module)
 * select everything: the bench says which ran.
 *
 * Usage: npm run build && node dist/bench/tests-real-repo.js [--iterations 6]
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { runTests } from '../activities/tests.js';
import { daemonPid } from '../lib/supervisor-location.js';
import type { TestResult } from '../schemas/activities.js';
import { defaultKnobs } from '../schemas/knobs.js';
import { packageRoot } from '../lib/paths.js';
import { sandboxArgs } from '../rules/sandbox.js';
import { benchArgs, numberArg } from './args.js';
import { openCpuCgroup } from './cgroup-cpu.js';
import { benchScratch } from './scratch.js';

const NAME = 'tests-real-repo';
const USAGE = 'usage: node dist/bench/tests-real-repo.js [--iterations N (default 6)]';
const values = benchArgs(NAME, USAGE, { iterations: { type: 'string', default: '6' } });
const ITERATIONS = numberArg(NAME, USAGE, 'iterations', values.iterations, { min: 1, max: 40, integer: true });
const PACKAGE = 'more-itertools==10.7.0';
const COMMAND = 'python3 -m pytest -q -p no:cacheprovider';
/** The issue's goal: an iteration between checks costs at most this share of the full suite. */
const GOAL = 0.3;
const TIMEOUT_SECONDS = 1800;

const SCRATCH = benchScratch(NAME);
const CGROUP = openCpuCgroup();
process.once('exit', () => CGROUP?.close());
process.env.VIGIL_HOME = SCRATCH.mkdir('home-');
process.env.VIGIL_SUPERVISOR_DIR = SCRATCH.mkdir('supervisor-');
delete process.env.VIGIL_SANDBOX;

const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const cpuNow = (): number | null => (CGROUP ? CGROUP.seconds() : null);

/** The release's source, from PyPI, unpacked: the repository the scripted agent works in. */
function fetchRepository(): string {
  const into = SCRATCH.mkdir('sdist-');
  execFileSync(
    'python3',
    ['-m', 'pip', 'download', '--quiet', '--no-deps', '--no-binary', ':all:', '--disable-pip-version-check', PACKAGE, '-d', into],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 300_000,
    },
  );
  const archive = readdirSync(into).find((f) => f.endsWith('.tar.gz'));
  if (!archive) throw new Error(`pip download of ${PACKAGE} left no source archive in ${into}`);
  execFileSync('tar', ['xzf', archive], { cwd: into });
  const repo = path.join(into, archive.replace(/\.tar\.gz$/, ''));
  execFileSync('git', ['init', '-q'], { cwd: repo });
  return repo;
}

/** The functions the scripted agent edits: top-level `def`s with a `return` at their body's level, alternating the two modules. */
function editTargets(repo: string): { file: string; line: number }[] {
  const per = (file: string): { file: string; line: number }[] => {
    const lines = readFileSync(path.join(repo, file), 'utf8').split('\n');
    const out: { file: string; line: number }[] = [];
    let inDef = false;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i] as string;
      if (/^def \w+\(/.test(l)) inDef = true;
      else if (/^\S/.test(l)) inDef = false;
      else if (inDef && /^ {4}return\b/.test(l)) {
        out.push({ file, line: i });
        inDef = false;
      }
    }
    return out;
  };
  const a = per('more_itertools/more.py');
  const b = per('more_itertools/recipes.py');
  const out: { file: string; line: number }[] = [];
  // Spread over each module: every seventh function, alternating.
  for (let k = 0; out.length < 40 && (k * 7 < a.length || k * 7 < b.length); k++) {
    if (k * 7 < a.length) out.push(a[k * 7] as { file: string; line: number });
    if (k * 7 < b.length) out.push(b[k * 7] as { file: string; line: number });
  }
  return out;
}

/** The scripted agent's change of iteration `n`: a local assignment before a function's `return`. */
function edit(repo: string, target: { file: string; line: number }, n: number): string {
  const p = path.join(repo, target.file);
  const lines = readFileSync(p, 'utf8').split('\n');
  // Lines already inserted above this one shift it.
  const at = lines.findIndex((l, i) => i >= target.line && /^ {4}return\b/.test(l));
  lines.splice(at, 0, `    _scripted_edit = ${n}  # iteration ${n}`);
  writeFileSync(p, lines.join('\n'));
  const def = [...lines.slice(0, at)].reverse().find((l) => /^def \w+/.test(l)) ?? '';
  return `${target.file}: ${/^def (\w+)/.exec(def)?.[1] ?? '?'}`;
}

function plainRun(repo: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/bin/sh', ['-c', COMMAND], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (b: Buffer): void => void (tail = (tail + b.toString('utf8')).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${COMMAND} exited ${code}: ${tail.slice(-500)}`)),
    );
  });
}

interface Step {
  what: string;
  ms: number;
  cpu: number | null;
  result: TestResult;
}

async function gate(repo: string, iteration: number, kind: 'baseline' | 'iteration' | 'check'): Promise<Omit<Step, 'what'>> {
  const knobs = defaultKnobs();
  const cpu0 = cpuNow();
  const t0 = performance.now();
  const result = (await new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') }).run(runTests, {
    runId: 'tests-real-repo',
    repoPath: repo,
    command: COMMAND,
    iteration,
    timeoutSeconds: TIMEOUT_SECONDS,
    ...sandboxArgs(knobs),
    ...(kind === 'baseline' ? { recordBaseline: true } : {}),
    ...(kind === 'iteration' ? { scope: 'affected' as const, fullEvery: knobs.affectedTestsFullEvery } : {}),
  })) as TestResult;
  const ms = performance.now() - t0;
  const cpu1 = cpuNow();
  if (result.verdict !== 'pass') throw new Error(`iteration ${iteration}: ${result.verdict}: ${result.reason}`);
  if (!result.sandbox?.applied && knobs.sandbox !== 'off')
    console.log(`  (the sandbox was not applied: ${result.sandbox?.reason ?? 'no report'})`);
  return { ms, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, result };
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const row = (s: Step, full: number): string =>
  `  ${s.what.padEnd(52)} ${secs(s.ms).padStart(8)} ${(s.ms / full).toFixed(2).padStart(5)}×` +
  `${s.cpu === null ? '' : `  CPU ${s.cpu.toFixed(1)} s`}  ${s.result.reason.slice(0, 110)}`;

async function main(): Promise<void> {
  console.log(`${NAME}: ${PACKAGE} from PyPI, \`${COMMAND}\`, ${ITERATIONS} iterations, load average ${load()}`);
  console.log(
    CGROUP ? `CPU counted in cgroup ${CGROUP.path}: every process the bench starts` : 'CPU not counted: no cgroup could be made here',
  );
  try {
    const tools = execFileSync(path.join(packageRoot(), 'scripts', 'install-test-tools.sh'), { encoding: 'utf8', timeout: 300_000 }).trim();
    console.log(`coverage.py for the per-test map: ${tools}`);
  } catch (err) {
    console.log(
      `coverage.py not installed (${err instanceof Error ? err.message.slice(0, 200) : String(err)}): tests are selected by imports`,
    );
  }
  const repo = fetchRepository();
  console.log(`repository: ${repo}`);
  // Warm caches (bytecode) and time the suite as a person runs it.
  await plainRun(repo);
  const plain = [await plainRun(repo), await plainRun(repo)];
  const full = Math.min(...plain);
  console.log(`  full suite as a person runs it (no Vigil, unsandboxed)   ${plain.map(secs).join(', ')} (the faster: ${secs(full)})`);
  const steps: Step[] = [];
  const note = (s: Step): void => {
    steps.push(s);
    console.log(row(s, full));
  };
  note({ what: 'baseline: the full suite, recording the per-test map', ...(await gate(repo, 0, 'baseline')) });
  const targets = editTargets(repo);
  for (let n = 1; n <= ITERATIONS; n++) {
    const where = edit(repo, targets[(n - 1) % targets.length] as { file: string; line: number }, n);
    note({ what: `iteration ${n} (${where})`, ...(await gate(repo, n, 'iteration')) });
  }
  note({ what: 'completion check: the full suite', ...(await gate(repo, ITERATIONS, 'check')) });
  const between = steps.filter((s) => s.what.startsWith('iteration ') && s.result.selection);
  const ratios = between.map((s) => s.ms / full).sort((a, b) => a - b);
  const med = ratios.length ? (ratios[Math.floor((ratios.length - 1) / 2)] as number) : null;
  console.log(`\nload average at the end ${load()}`);
  console.log(
    med === null
      ? `no iteration ran a selection (goal: at most ${GOAL}× the full suite): see the reasons above`
      : `iterations that ran a selection: ${between.length} of ${ITERATIONS}, median ${med.toFixed(2)}× the full suite as a person runs it ` +
          `(${med <= GOAL ? 'within' : 'OVER'} the goal of ${GOAL}×); the full suite in the gate: ${steps
            .filter((s) => !s.result.selection)
            .map((s) => `${(s.ms / full).toFixed(2)}×`)
            .join(', ')}`,
  );
}

try {
  await main();
} catch (err) {
  console.error(`${NAME}: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  const daemon = daemonPid();
  if (daemon !== null) process.kill(daemon, 'SIGTERM');
  SCRATCH.remove();
}
