/**
 * Runs the configured test command (a shell command line, `sh -c`) in the repository and reports
 * whether it passed, with a log file and a short tail.
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { RunTestsInputSchema, type RunTestsInput, type TestResult } from '../schemas/activities.js';
import { ensureRunDir, pad } from './artifacts.js';
import { countFailingTests } from '../workflows/decisions/test-output.js';
import { inheritedEnv, runProcess } from './process.js';
import { authorizeExecution } from './run-authorization.js';

export async function runTests(raw: RunTestsInput): Promise<TestResult> {
  const input = RunTestsInputSchema.parse(raw);
  authorizeExecution({ runId: input.runId, repoPath: input.repoPath, kind: { tests: input.command } }, input.authorization);
  const dir = ensureRunDir(input.repoPath, input.runId);
  const logPath = path.join(dir, `tests-${pad(input.iteration)}.log`);
  const env = inheritedEnv();
  const proc = await runProcess({
    file: '/bin/sh',
    args: ['-c', input.command],
    cwd: input.repoPath,
    env: { ...env, CI: env.CI ?? 'true' },
    stdin: '',
    timeoutMs: input.timeoutSeconds * 1000,
    logPath,
    pidFile: path.join(dir, `tests-${pad(input.iteration)}.pid.json`),
    header: `=== vigil: tests for iteration ${input.iteration}, attempt ${Context.current().info.attempt}: ${input.command} ===`,
  });
  return {
    passed: proc.exitCode === 0,
    exitCode: proc.exitCode,
    timedOut: proc.timedOut,
    durationMs: proc.durationMs,
    logPath,
    tail: proc.tail.slice(-2000),
    failures: countFailingTests(proc.tail),
  };
}
