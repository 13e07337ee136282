/**
 * Runs the repository's tests in the repository and reports the verdict, with a log file and a
 * short tail: the configured test command (a shell command line, `sh -c`), or — when none is
 * configured and detection is asked for — the runner detected from the repository (package.json
 * test script, vitest/jest/mocha, pytest or unittest, go test, cargo test).
 *
 * The runner is asked for its per-test report (lib/gates/test-report.ts) and the verdict
 * is the report's, held against the run's baseline (rules/tests-verdict.ts): green
 * only when the report is complete and every baseline test ran and passed; a process that ended
 * before its report, whatever its exit code, is red. The baseline is the run's first test run on
 * the tree it started with (`recordBaseline`), kept in the run's private folder. A runner Vigil
 * cannot ask for a report is judged by its printed summary: zero tests run is inconclusive, never
 * green; nothing runnable is inconclusive too.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { RunTestsInputSchema, type RunTestsInput, type TestResult } from '../schemas/activities.js';
import { TestBaselineSchema, type TestBaseline, type TestReport } from '../schemas/test-report.js';
import { testsVerdict } from '../rules/tests-verdict.js';
import { ensurePrivateRunDir, ensureRunDir, pad } from './artifacts.js';
import { readReport, reportSetup, runnerOfCommand } from '../lib/gates/test-report.js';
import { keepTestMap, testScope } from './gates/affected-tests.js';
import { pytestMapSetup } from '../lib/gates/pytest-map.js';
import { inBaselineForm } from '../lib/gates/node-test-reporter.js';
import { baselineOfTests } from '../rules/per-test-map.js';
import { baselineOfSelection, reportedFiles } from '../rules/affected-tests.js';
import { selectionCommand } from '../rules/selection-command.js';
import { writePrivateFile } from '../lib/safe-files.js';
import { countFailingTests } from '../rules/test-output.js';
import { detectTestRunner, summarizeTestOutput } from '../lib/gates/test-runner.js';
import { resumedAttempt, runProcess } from './process.js';
import { authorizeCall } from './run-authorization.js';
import { prepareSandbox, sandboxReport } from './sandbox.js';
import { workerStoreUrl } from '../lib/event-store.js';
import { inheritedEnv } from '../lib/child-env.js';

/** The run's baseline, as its first test run left it (null: none yet). */
export function readBaseline(runId: string): TestBaseline | null {
  try {
    return TestBaselineSchema.parse(JSON.parse(readFileSync(baselinePath(runId), 'utf8')));
  } catch {
    return null;
  }
}

function baselinePath(runId: string): string {
  return path.join(ensurePrivateRunDir(runId), 'tests-baseline.json');
}

/** `heartbeatDetails`: sent with the suite's heartbeats (a gate pass says which step it is in). */
export async function runTests(raw: RunTestsInput, heartbeatDetails?: Record<string, unknown>): Promise<TestResult> {
  const input = RunTestsInputSchema.parse(raw);
  await authorizeCall({ runId: input.runId, repoPath: input.repoPath, kind: { tests: input.command } }, input.authorization);
  const dir = ensureRunDir(input.repoPath, input.runId);
  const logPath = path.join(dir, `tests-${pad(input.iteration)}.log`);
  let command = input.command;
  let runner = command ? runnerOfCommand(command, input.repoPath) : 'none';
  if (!command && input.detect) {
    const found = detectTestRunner(input.repoPath);
    if (found) ({ command, runner } = found);
  }
  if (!command) {
    return {
      passed: false,
      exitCode: 0,
      timedOut: false,
      durationMs: 0,
      logPath: '',
      tail: '',
      failures: null,
      runner: 'none',
      command: '',
      passedCount: null,
      ran: null,
      verdict: 'inconclusive',
      reason: 'no test command configured and no test runner found in the repository',
    };
  }
  const env = inheritedEnv();
  // The runner's per-test report goes to a folder of this run's own, outside the repository, one
  // per attempt. A retry that collects an earlier attempt's test process (still running, or
  // finished while no worker watched) reads that attempt's folder, as it is.
  const pidFile = path.join(dir, `tests-${pad(input.iteration)}.pid.json`);
  const resumed = resumedAttempt(pidFile);
  const reportDir = path.join(
    ensurePrivateRunDir(input.runId),
    'test-reports',
    `${pad(input.iteration)}-${resumed ?? Context.current().info.attempt}`,
  );
  if (resumed === null) {
    rmSync(reportDir, { recursive: true, force: true });
    mkdirSync(reportDir, { recursive: true, mode: 0o700 });
  }
  const scope = await testScope({
    runId: input.runId,
    repoPath: input.repoPath,
    runner,
    command,
    iteration: input.iteration,
    scope: input.scope === 'affected' && !input.recordBaseline ? 'affected' : 'full',
    fullEvery: input.fullEvery ?? 1,
    mayRecord: input.recordBaseline === true || input.scope === 'affected',
  });
  const reported = reportSetup(runner, command, reportDir, env);
  // pytest: Vigil's plugin records the per-test map (a full run that may) or keeps the per-test selection (lib/gates/pytest-map.ts).
  const mapSetup =
    runner === 'pytest' && (scope.record !== null || scope.perTest !== null)
      ? pytestMapSetup({
          dir: reportDir,
          repoPath: input.repoPath,
          env: { ...env, ...reported.env },
          coverage: scope.record,
          record: scope.record !== null,
          select: scope.perTest ? { tests: scope.perTest.ids, files: scope.perTest.whole } : null,
        })
      : null;
  if (mapSetup) reported.env = { ...reported.env, ...mapSetup.env };
  // A partial run hands its selection to the runner (its own related-tests mode where it has one,
  // rules/selection-command.ts); a command that cannot take it runs the full suite.
  const picked = scope.plan.kind === 'affected' ? selectionCommand(runner, reported.command, scope.plan.files, scope.changed) : null;
  if (scope.plan.kind === 'affected' && picked === null)
    scope.plan = { kind: 'full', reason: `the test command cannot take a list of test ${scope.lang === 'go' ? 'packages' : 'files'}` };
  const setup = picked !== null ? { ...reported, command: picked.command } : reported;
  let selected = scope.plan.kind === 'affected' ? scope.plan : null;
  // The test command runs code the agent wrote: in the sandbox, as the builder would (the
  // repository writable, no network but the package registries unless the run closed them, each
  // fetch logged to the run; nothing of the worker's).
  const sandbox = prepareSandbox({
    kind: 'tests',
    runId: input.runId,
    repoPath: input.repoPath,
    cwd: input.repoPath,
    file: '/bin/sh',
    args: ['-c', setup.command],
    env: { ...env, ...setup.env, CI: env.CI ?? 'true' },
    reportDir,
    ...(mapSetup?.readable.length ? { readable: mapSetup.readable } : {}),
    label: `tests-${pad(input.iteration)}`,
    provider: null,
    runMode: input.sandbox,
    registries: input.sandboxRegistries,
    limits: input.sandboxLimits,
    storeUrl: workerStoreUrl().url,
  });
  const proc = await runProcess({
    file: sandbox.file,
    args: sandbox.args,
    cwd: input.repoPath,
    env: sandbox.env,
    sandboxProxy: sandbox.proxy,
    ...(sandbox.pidNamespace ? { ownPidNamespace: true } : {}),
    ...(sandbox.limits ? { limits: sandbox.limits } : {}),
    stdin: '',
    timeoutMs: input.timeoutSeconds * 1000,
    logPath,
    pidFile,
    header:
      `=== vigil: tests for iteration ${input.iteration}, attempt ${Context.current().info.attempt}: ` +
      `${command}${input.command ? '' : ` (detected: ${runner})`} ===`,
    ...(heartbeatDetails ? { heartbeatDetails } : {}),
  });
  const summary = summarizeTestOutput(runner, proc.tail, proc.exitCode);
  const read = readReport(setup, reportDir, logPath);
  const baseline = input.recordBaseline ? null : readBaseline(input.runId);
  // node's tests named as the run's baseline names them (one recorded before Vigil's reporter: by their own names).
  const report = runner === 'node-test' ? inBaselineForm(read, baseline?.report ?? null) : read;
  // A runner's related-tests mode may run more test files than Vigil named (what its own module
  // graph sees): the selection is what it reported, with every file named.
  if (selected && picked?.mode === 'related' && report && scope.map) {
    const ran = reportedFiles(report, Object.keys(scope.map.tests)).ran;
    const files = [...new Set([...selected.files, ...ran])].sort();
    selected = { ...selected, files };
    scope.plan = selected;
  }
  if (input.recordBaseline) keepBaseline(input.runId, command, runner, report);
  keepTestMap({ runId: input.runId, runner, command, iteration: input.iteration, scope, report, reportDir, repoPath: input.repoPath });
  // A partial run is held to the baseline tests it selected: those of the files it ran, or (pytest's per-test map) the tests it kept.
  const held =
    baseline?.report && selected
      ? scope.perTest
        ? baselineOfTests(baseline.report, scope.perTest.ids, scope.perTest.whole)
        : baselineOfSelection(baseline.report, selected.files)
      : (baseline?.report ?? null);
  const judged = testsVerdict({
    runner,
    exitCode: proc.exitCode,
    timedOut: proc.timedOut,
    report,
    baseline: held,
    expected: setup.source !== null,
    summary: { verdict: summary.verdict, reason: summary.reason },
  });
  // A run a sandbox limit ended failed, whatever it printed.
  const limitHit = proc.limits?.reason ?? null;
  const verdict = proc.timedOut || limitHit ? 'fail' : judged.verdict;
  const why = proc.timedOut ? `${runner}: timed out after ${input.timeoutSeconds}s` : limitHit ? `${runner}: ${limitHit}` : judged.reason;
  // What ran, where the gate asked for the affected tests of a runner whose tests can be selected:
  // "3 of 41 test files affected", or why the full suite ran.
  // pytest selected by imports says why not by its per-test map (coverage.py missing, the map stale).
  const byImports =
    scope.byImports && (selected || (scope.plan.kind === 'full' && scope.plan.bySelection)) ? `; by imports: ${scope.byImports}` : '';
  const recording = `${byImports}${scope.record !== null ? '; recording the per-test map' : ''}`;
  const what =
    selected && scope.perTest
      ? `${scope.perTest.count} of ${scope.perTest.total} tests affected (per-test map): `
      : selected
        ? `${selected.files.length} of ${selected.total} test ` +
          `${scope.lang === 'go' ? 'packages' : 'files'} affecte` +
          `d${picked?.mode === 'related' ? ` (${runner} related)` : ''}${byImports ? ` (${byImports.slice(2)})` : ''}: `
        : input.scope === 'affected' && !input.recordBaseline && scope.lang !== null
          ? `full suite (${scope.plan.kind === 'full' ? scope.plan.reason : ''}${recording}): `
          : recording
            ? `full suite (${recording.slice(2)}): `
            : '';
  return {
    passed: verdict === 'pass',
    exitCode: proc.exitCode,
    timedOut: proc.timedOut,
    durationMs: proc.durationMs,
    logPath,
    tail: proc.tail.slice(-2000),
    failures: judged.facts?.failed ?? summary.failed ?? countFailingTests(proc.tail),
    runner,
    command,
    passedCount: judged.facts?.passed ?? summary.passed,
    ran: judged.facts ? judged.facts.passed + judged.facts.failed : summary.ran,
    verdict,
    reason: `${what}${why}`.slice(0, 500),
    sandbox: sandboxReport(sandbox, proc.sandboxDenials, proc.tail, proc.limits, proc.sandboxFetches),
    report: judged.facts,
    selection: selected
      ? {
          files: selected.files.length,
          of: selected.total,
          ...(scope.perTest ? { tests: { ran: scope.perTest.count, of: scope.perTest.total } } : {}),
        }
      : null,
  };
}

/** The baseline: this run's report, for every later run of the run to be held against. */
function keepBaseline(runId: string, command: string, runner: string, report: TestReport | null): void {
  const baseline: TestBaseline = { version: 1, command, runner, at: new Date().toISOString(), report };
  writePrivateFile(baselinePath(runId), JSON.stringify(baseline));
}
