/**
 * `npm run bench`: with no options, every benchmark in turn, each a process of its own (about eleven
 * minutes on a 2-core machine, and five to eight more for the tests-report bench):
 *
 * 1. `run.js --concurrent 50,100,200`: the tree hash, the minimal and default iterations, and the
 *    load of 50, 100 and 200 runs on one worker;
 * 2. `cli-latency.js`: `vigil status`, `pause`, `resume`, `input` and `stop` as a person runs them;
 * 3. `stop-latency.js`: `stop --now` at random points of an agent call, with 20 busy runs on the
 *    worker, then with 200;
 * 4. `agent-calls.js`: agent calls by role for fixed scenarios with the default knobs (what
 *    orchestration costs the user in model calls);
 * 5. `tests-report.js`: a test run's time with and without the per-test report and the baseline
 *    (pytest, unittest, node's test runner, vitest; sandbox off and the default sandbox);
 * 6. `tests-real-repo.js`: affected tests on more-itertools 10.7.0 fetched from PyPI, a scripted
 *    change per iteration: each iteration's test time beside the full suite's (about ten minutes).
 *
 * With options (`npm run bench -- --knobs default`), only `run.js`, with them. A bench that fails
 * (a run that ends before its iteration count, a starved run, a stop over its bound) fails the
 * whole: the others still run, and the exit code is the first failure's.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const steps: string[][] =
  args.length > 0
    ? [['run.js', ...args]]
    : [
        ['run.js', '--concurrent', '50,100,200'],
        ['cli-latency.js'],
        ['stop-latency.js'],
        ['stop-latency.js', '--runs', '200'],
        ['agent-calls.js'],
        ['tests-report.js'],
        ['tests-real-repo.js'],
      ];

// Ctrl+C reaches the running bench too (same process group): it stops its server and removes its
// scratch folder; this process waits for that, then runs nothing more.
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => (interrupted = true));

const runStep = (step: string[]): Promise<number> =>
  new Promise((resolve) => {
    const [file, ...rest] = step as [string, ...string[]];
    const child = spawn(process.execPath, [path.join(here, file), ...rest], { stdio: 'inherit' });
    child.once('error', (err) => {
      console.error(`bench: cannot start ${file}: ${err.message}`);
      resolve(1);
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });

let failed: { step: string; code: number } | null = null;
for (const step of steps) {
  if (interrupted) break;
  if (steps.length > 1) console.log(`\n== bench: ${step.join(' ')}`);
  const code = await runStep(step);
  if (code !== 0) {
    console.error(`bench: ${step.join(' ')} failed (exit ${code})`);
    failed ??= { step: step.join(' '), code };
  }
}
if (failed && steps.length > 1) console.error(`bench: failed: ${failed.step} (exit ${failed.code})`);
process.exitCode = interrupted ? 130 : (failed?.code ?? 0);
