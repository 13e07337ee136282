/**
 * Runs the repository's tests in the repository and reports the verdict, with a log file and a
 * short tail: the configured test command (a shell command line, `sh -c`), or — when none is
 * configured and detection is asked for — the runner detected from the repository (package.json
 * test script, vitest/jest/mocha, pytest or unittest, go test, cargo test). A runner that executed
 * zero tests is inconclusive, never green; nothing runnable is inconclusive too.
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { RunTestsInputSchema, type RunTestsInput, type TestResult } from '../schemas/activities.js';
import { ensureRunDir, pad } from './artifacts.js';
import { countFailingTests } from '../workflows/decisions/test-output.js';
import { detectTestRunner, summarizeTestOutput } from './gates/test-runner.js';
import { inheritedEnv, runProcess } from './process.js';
import { authorizeCall } from './run-authorization.js';
import { prepareSandbox, sandboxReport } from './sandbox.js';
import { workerStoreUrl } from './event-store.js';

/** A runner name read from a configured command's text. */
function runnerOf(command: string): string {
  for (const [needle, name] of [
    ['vitest', 'vitest'],
    ['jest', 'jest'],
    ['mocha', 'mocha'],
    ['node --test', 'node-test'],
    ['pytest', 'pytest'],
    ['unittest', 'unittest'],
    ['go test', 'go-test'],
    ['cargo test', 'cargo-test'],
  ] as const) {
    if (command.includes(needle)) return name;
  }
  return 'command';
}

/** `heartbeatDetails`: sent with the suite's heartbeats (a gate pass says which step it is in). */
export async function runTests(raw: RunTestsInput, heartbeatDetails?: Record<string, unknown>): Promise<TestResult> {
  const input = RunTestsInputSchema.parse(raw);
  await authorizeCall({ runId: input.runId, repoPath: input.repoPath, kind: { tests: input.command } }, input.authorization);
  const dir = ensureRunDir(input.repoPath, input.runId);
  const logPath = path.join(dir, `tests-${pad(input.iteration)}.log`);
  let command = input.command;
  let runner = command ? runnerOf(command) : 'none';
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
  // The test command runs code the agent wrote: in the sandbox, as the builder would (the
  // repository writable, no network but the registries when allowed, nothing of the worker's).
  const sandbox = prepareSandbox({
    kind: 'tests',
    runId: input.runId,
    repoPath: input.repoPath,
    cwd: input.repoPath,
    file: '/bin/sh',
    args: ['-c', command],
    env: { ...env, CI: env.CI ?? 'true' },
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
    pidFile: path.join(dir, `tests-${pad(input.iteration)}.pid.json`),
    header: `=== vigil: tests for iteration ${input.iteration}, attempt ${Context.current().info.attempt}: ${command}${input.command ? '' : ` (detected: ${runner})`} ===`,
    ...(heartbeatDetails ? { heartbeatDetails } : {}),
  });
  const summary = summarizeTestOutput(runner, proc.tail, proc.exitCode);
  // A configured command keeps its contract (exit 0 = green) unless it demonstrably ran nothing;
  // a run a sandbox limit ended failed, whatever it printed.
  const limitHit = proc.limits?.reason ?? null;
  const verdict = proc.timedOut || limitHit ? 'fail' : summary.verdict;
  return {
    passed: verdict === 'pass',
    exitCode: proc.exitCode,
    timedOut: proc.timedOut,
    durationMs: proc.durationMs,
    logPath,
    tail: proc.tail.slice(-2000),
    failures: summary.failed ?? countFailingTests(proc.tail),
    runner,
    command,
    passedCount: summary.passed,
    ran: summary.ran,
    verdict,
    reason: proc.timedOut ? `${runner}: timed out after ${input.timeoutSeconds}s` : limitHit ? `${runner}: ${limitHit}` : summary.reason,
    sandbox: sandboxReport(sandbox, proc.sandboxDenials, proc.tail, proc.limits),
  };
}
