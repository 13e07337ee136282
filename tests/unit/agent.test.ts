/**
 * Tests of the command agent provider (activities/agent.ts) and the test runner
 * (activities/tests.ts) in a mocked activity context, with a tiny shell agent written to a
 * temporary directory.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../activities/agent.js';
import { runTests } from '../../activities/tests.js';
import type { AgentResult, RunAgentInput, RunTestsInput, TestResult } from '../../schemas/activities.js';

const PROMISE = 'COMPLETION PROMISE FULFILLED';

const AGENT_SCRIPT = `#!/bin/sh
# A tiny test agent: reports what it was given, then does what AGENT_* variables ask.
echo "ROLE=$VIGIL_ROLE"
echo "RUN_ID=$VIGIL_RUN_ID"
echo "ITERATION=$VIGIL_ITERATION"
echo "PHASE=$VIGIL_PHASE"
echo "TIER=$VIGIL_TIER"
echo "MEMBER=\${VIGIL_MEMBER:-none}"
echo "LEAK=\${TEMPORAL_VIGIL_TEST_LEAK:-none}"
echo "INHERITED=\${VIGIL_TEST_INHERITED:-none}"
echo "ARGC=$#"
for a in "$@"; do echo "ARG=$a"; done
cat > "$AGENT_OUT/stdin.txt"
cp "$VIGIL_PROMPT_FILE" "$AGENT_OUT/promptfile.txt"
printf '%s' "$VIGIL_PROMPT_FILE" > "$AGENT_OUT/promptpath.txt"
pwd > "$AGENT_OUT/cwd.txt"
touch agent-was-here.txt
if [ -n "$AGENT_CLAIM_FILE" ]; then mkdir -p .vigil/signals && touch .vigil/signals/COMPLETION_REQUESTED; fi
if [ -n "$AGENT_SAY" ]; then printf '%s\\n' "$AGENT_SAY"; fi
if [ -n "$AGENT_SLEEP" ]; then sleep "$AGENT_SLEEP"; fi
exit "\${AGENT_EXIT:-0}"
`;

let scriptsDir: string;
let agentPath: string;
const dirs: string[] = [];

beforeAll(() => {
  scriptsDir = mkdtempSync(path.join(os.tmpdir(), 'vigil-agent-scripts-'));
  agentPath = path.join(scriptsDir, 'test agent.sh'); // a space: argv is not a shell line
  writeFileSync(agentPath, AGENT_SCRIPT, { mode: 0o755 });
  chmodSync(agentPath, 0o755);
});

afterAll(() => {
  rmSync(scriptsDir, { recursive: true, force: true });
});

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A mocked activity context for one attempt, with typed runners for the two activities. */
function newEnv(attempt = 1): {
  agent: (input: RunAgentInput) => Promise<AgentResult>;
  tests: (input: RunTestsInput) => Promise<TestResult>;
} {
  const env = new MockActivityEnvironment({ attempt }, { logger: new DefaultLogger('ERROR') });
  return {
    agent: (input) => env.run(runAgent, input) as Promise<AgentResult>,
    tests: (input) => env.run(runTests, input) as Promise<TestResult>,
  };
}

interface Fixture {
  repo: string;
  out: string;
  input: (over?: Partial<RunAgentInput>, agentEnv?: Record<string, string>) => RunAgentInput;
}

function fixture(): Fixture {
  const repo = tempDir('vigil-agent-repo-');
  const out = tempDir('vigil-agent-out-');
  // The agent reports what it saw into a folder outside the repository, which the sandbox shows
  // only when the worker's operator names it (docs/security.md, The agent's sandbox).
  process.env.VIGIL_SANDBOX_WRITABLE = out;
  return {
    repo,
    out,
    input: (over = {}, agentEnv = {}) => ({
      runId: 'run-1',
      repoPath: repo,
      argv: [agentPath],
      prompt: 'Do the work.\nSecond line: ünïcødé ✓\n',
      role: 'iteration',
      iteration: 1,
      phase: 'ACT',
      tier: 'development',
      timeoutSeconds: 30,
      completionPromise: PROMISE,
      ...over,
      extraEnv: { AGENT_OUT: out, ...over.extraEnv, ...agentEnv },
    }),
  };
}

async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(ApplicationFailure);
    return error as ApplicationFailure;
  }
  throw new Error('expected a failure');
}

describe('runAgent', () => {
  // The fault seam: the call's log is a character device that fails every write with ENOSPC, as a
  // full disk does (/dev/full's device numbers); making one needs root, as CI runs.
  it.runIf(process.getuid?.() === 0)(
    'a log the disk cannot take fails the call visibly: exit 74, the tail saying "disk full", never exit 0',
    async () => {
      const f = fixture();
      const first = await newEnv().agent(f.input({}, { AGENT_SAY: 'did the work' }));
      expect(first).toMatchObject({ exitCode: 0, ioError: null });
      rmSync(first.logPath);
      execFileSync('mknod', [first.logPath, 'c', '1', '7']);
      const r = await newEnv().agent(f.input({}, { AGENT_SAY: 'did the work' }));
      expect(r.exitCode).toBe(74);
      expect(r.ioError).toMatch(
        /^disk full: cannot write .*iteration-0*1\.log: .*ENOSPC.*\(the disk or quota is full: free space, the run carries on\)$/,
      );
      expect(r.tail).toMatch(/did the work\n[^]*vigil: disk full: cannot write/);
      expect(existsSync(path.join(f.repo, 'agent-was-here.txt'))).toBe(true); // the agent ran; its output was lost
    },
  );

  it('runs the argv without a shell, with the VIGIL_* environment, prompt on stdin and in the prompt file', async () => {
    const f = fixture();
    process.env.TEMPORAL_VIGIL_TEST_LEAK = 'leaked';
    process.env.VIGIL_TEST_INHERITED = 'yes';
    let r: AgentResult;
    try {
      r = await newEnv().agent(
        f.input({ argv: [agentPath, 'arg one', '$(touch pwned)', '*'], phase: 'REASON', tier: 'planning', iteration: 7 }),
      );
    } finally {
      delete process.env.TEMPORAL_VIGIL_TEST_LEAK;
      delete process.env.VIGIL_TEST_INHERITED;
    }
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.attempt).toBe(1);
    expect(r.claimed).toBe(false);
    expect(r.claimSource).toBeNull();
    for (const line of [
      'ROLE=iteration',
      'RUN_ID=run-1',
      'ITERATION=7',
      'PHASE=REASON',
      'TIER=planning',
      'MEMBER=none',
      'LEAK=none',
      'INHERITED=yes',
    ]) {
      expect(r.tail).toContain(`${line}\n`);
    }
    expect(r.tail).toContain('ARGC=3\nARG=arg one\nARG=$(touch pwned)\nARG=*\n');
    expect(existsSync(path.join(f.repo, 'pwned'))).toBe(false);
    // The prompt: on stdin and in the prompt file, byte for byte.
    const prompt = 'Do the work.\nSecond line: ünïcødé ✓\n';
    expect(readFileSync(path.join(f.out, 'stdin.txt'), 'utf8')).toBe(prompt);
    expect(readFileSync(path.join(f.out, 'promptfile.txt'), 'utf8')).toBe(prompt);
    expect(readFileSync(path.join(f.out, 'promptpath.txt'), 'utf8')).toBe(r.promptPath);
    expect(r.promptPath).toBe(path.join(f.repo, '.vigil', 'runs', 'run-1', 'iteration-0007.prompt.md'));
    // Runs in the repository.
    expect(readFileSync(path.join(f.out, 'cwd.txt'), 'utf8').trim()).toBe(f.repo);
    expect(existsSync(path.join(f.repo, 'agent-was-here.txt'))).toBe(true);
  });

  it('logs to .vigil/runs/<runId>/iteration-NNNN.log after a header naming the attempt', async () => {
    const f = fixture();
    const r = await newEnv().agent(f.input());
    expect(r.logPath).toBe(path.join(f.repo, '.vigil', 'runs', 'run-1', 'iteration-0001.log'));
    const log = readFileSync(r.logPath, 'utf8');
    const [first] = log.split('\n');
    expect(first).toMatch(/^=== vigil: iteration 1, attempt 1, started \d{4}-\d\d-\d\dT[\d:.]+Z: .*test agent\.sh ===$/);
    expect(log).toContain('ROLE=iteration\n');
    expect(log).toMatch(/=== vigil: exit 0 after \d+ ms ===\n$/);
    expect(r.outputBytes).toBeGreaterThan(0);
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
    expect(existsSync(path.join(f.repo, '.vigil', 'runs', 'run-1', 'iteration-0001.pid.json'))).toBe(true);
  });

  it('a later attempt collects the result of a finished call instead of running it again', async () => {
    const f = fixture();
    await newEnv(1).agent(f.input({}, { AGENT_SAY: 'first attempt' }));
    const r = await newEnv(2).agent(f.input({}, { AGENT_SAY: 'second attempt' }));
    expect(r.attempt).toBe(2);
    expect(r.tail).toContain('first attempt');
    expect(readFileSync(r.logPath, 'utf8')).not.toContain('second attempt');
  });

  it('appends a later attempt that runs again (its call was lost) to the same log, with its attempt number', async () => {
    const f = fixture();
    await newEnv(1).agent(f.input({}, { AGENT_SAY: 'first attempt' }));
    rmSync(path.join(f.repo, '.vigil', 'runs', 'run-1', 'iteration-0001.pid.json'));
    const r = await newEnv(2).agent(f.input({}, { AGENT_SAY: 'second attempt' }));
    expect(r.attempt).toBe(2);
    const log = readFileSync(r.logPath, 'utf8');
    const one = log.indexOf('iteration 1, attempt 1,');
    const two = log.indexOf('iteration 1, attempt 2,');
    expect(one).toBe('=== vigil: '.length);
    expect(two).toBeGreaterThan(log.indexOf('first attempt'));
    expect(log.indexOf('second attempt')).toBeGreaterThan(two);
  });

  it('keeps its files private: folders 0700, prompt and log 0600', async () => {
    const f = fixture();
    const r = await newEnv().agent(f.input({}));
    expect(statSync(path.join(f.repo, '.vigil')).mode & 0o777).toBe(0o700);
    expect(statSync(path.dirname(r.logPath)).mode & 0o777).toBe(0o700);
    expect(statSync(r.promptPath).mode & 0o777).toBe(0o600);
    expect(statSync(r.logPath).mode & 0o777).toBe(0o600);
  });

  it('makes the run id a safe path segment', async () => {
    const f = fixture();
    const r = await newEnv().agent(f.input({ runId: '../evil/run id' }));
    expect(path.dirname(r.logPath)).toBe(path.join(f.repo, '.vigil', 'runs', '%2E.%2Fevil%2Frun%20id'));
    expect(r.tail).toContain('RUN_ID=../evil/run id\n');
  });

  it('detects the completion promise in the output', async () => {
    const f = fixture();
    const r = await newEnv().agent(f.input({}, { AGENT_SAY: `All tasks done. ${PROMISE}.` }));
    expect(r.claimed).toBe(true);
    expect(r.claimSource).toBe('promise');
    const none = await newEnv().agent(f.input({ iteration: 2 }, { AGENT_SAY: 'COMPLETION PROMISE not yet' }));
    expect(none.claimed).toBe(false);
    expect(none.claimSource).toBeNull();
  });

  it('consumes a claim by signal file: moved into the run folder', async () => {
    const f = fixture();
    const r = await newEnv().agent(f.input({ iteration: 3 }, { AGENT_CLAIM_FILE: '1' }));
    expect(r.claimed).toBe(true);
    expect(r.claimSource).toBe('signal-file');
    expect(existsSync(path.join(f.repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'))).toBe(false);
    expect(existsSync(path.join(f.repo, '.vigil', 'runs', 'run-1', 'iteration-0003.completion-requested'))).toBe(true);
    // Consumed: the next iteration does not see it again.
    const next = await newEnv().agent(f.input({ iteration: 4 }));
    expect(next.claimed).toBe(false);
  });

  it('prefers the promise as the claim source when both are present, and still consumes the file', async () => {
    const f = fixture();
    const r = await newEnv().agent(f.input({}, { AGENT_CLAIM_FILE: '1', AGENT_SAY: PROMISE }));
    expect(r.claimed).toBe(true);
    expect(r.claimSource).toBe('promise');
    expect(existsSync(path.join(f.repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'))).toBe(false);
  });

  it('leaves the signal file alone for roles other than iteration, and names the log after role and member', async () => {
    const f = fixture();
    // Sandboxed, a reviewing role cannot write a claim at all (below); off, Vigil still leaves it alone.
    const r = await newEnv().agent(
      f.input({ role: 'council', iteration: 2, extraEnv: { VIGIL_MEMBER: '3' }, sandbox: 'off' }, { AGENT_CLAIM_FILE: '1' }),
    );
    expect(r.logPath).toBe(path.join(f.repo, '.vigil', 'runs', 'run-1', 'council-0002-m3.log'));
    expect(r.promptPath).toBe(path.join(f.repo, '.vigil', 'runs', 'run-1', 'council-0002-m3.prompt.md'));
    expect(r.tail).toContain('ROLE=council\nRUN_ID=run-1\nITERATION=2\n');
    expect(r.tail).toContain('MEMBER=3\n');
    expect(readFileSync(r.logPath, 'utf8')).toMatch(/^=== vigil: council 2, attempt 1, /);
    expect(r.claimed).toBe(false);
    expect(existsSync(path.join(f.repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'))).toBe(true);
    rmSync(path.join(f.repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'));
    const sandboxed = await newEnv().agent(
      f.input({ role: 'council', iteration: 3, extraEnv: { VIGIL_MEMBER: '3' } }, { AGENT_CLAIM_FILE: '1' }),
    );
    if (sandboxed.sandbox?.applied) {
      expect(sandboxed.claimed).toBe(false);
      expect(existsSync(path.join(f.repo, '.vigil', 'signals', 'COMPLETION_REQUESTED'))).toBe(false);
    }
  });

  it('returns a non-zero exit code instead of throwing', async () => {
    const f = fixture();
    const r = await newEnv().agent(f.input({}, { AGENT_EXIT: '5', AGENT_SAY: 'something went wrong' }));
    expect(r.exitCode).toBe(5);
    expect(r.timedOut).toBe(false);
    expect(r.tail).toContain('something went wrong\n');
  });

  it('returns a timed-out result (exit 124) when the agent exceeds its timeout', async () => {
    const f = fixture();
    const t0 = Date.now();
    const r = await newEnv().agent(f.input({ timeoutSeconds: 1 }, { AGENT_SLEEP: '20' }));
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(r.exitCode).toBe(124);
    expect(r.timedOut).toBe(true);
  });

  it('throws a non-retryable AgentNotRunnable for a missing executable', async () => {
    const f = fixture();
    const failure = await failureOf(newEnv().agent(f.input({ argv: [path.join(f.out, 'no-such-agent'), '--x'] })));
    expect(failure.type).toBe('AgentNotRunnable');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('command not found');
  });

  it('throws a non-retryable AgentNotRunnable for a command not on PATH', async () => {
    const f = fixture();
    const failure = await failureOf(newEnv().agent(f.input({ argv: ['vigil-no-such-agent-xyz'] })));
    expect(failure.type).toBe('AgentNotRunnable');
    expect(failure.nonRetryable).toBe(true);
  });

  it('throws a non-retryable AgentNotRunnable for a file that is not executable', async () => {
    const f = fixture();
    const file = path.join(f.out, 'not-executable.sh');
    writeFileSync(file, '#!/bin/sh\necho hi\n', { mode: 0o644 });
    const failure = await failureOf(newEnv().agent(f.input({ argv: [file] })));
    expect(failure.type).toBe('AgentNotRunnable');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('permission denied');
  });
});

describe('runTests', () => {
  function testsInput(repo: string, over: Partial<RunTestsInput> = {}): RunTestsInput {
    return { runId: 'run-1', repoPath: repo, command: 'true', iteration: 1, timeoutSeconds: 30, ...over };
  }

  it('passes on exit 0, runs the command line with sh -c in the repository, writes a log', async () => {
    const repo = tempDir('vigil-tests-repo-');
    writeFileSync(path.join(repo, 'marker'), '');
    const command = 'test -f marker && echo found | tr a-z A-Z; echo "CI=$CI"';
    const r = await newEnv().tests(testsInput(repo, { command }));
    expect(r.passed).toBe(true);
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.tail).toContain('FOUND\n');
    expect(r.tail).toContain(`CI=${process.env.CI ?? 'true'}\n`);
    expect(r.logPath).toBe(path.join(repo, '.vigil', 'runs', 'run-1', 'tests-0001.log'));
    const log = readFileSync(r.logPath, 'utf8');
    expect(log.split('\n')[0]).toBe(`=== vigil: tests for iteration 1, attempt 1: ${command} ===`);
    expect(log).toContain('FOUND\n');
  });

  it('fails on a non-zero exit, keeping stderr in the tail', async () => {
    const repo = tempDir('vigil-tests-repo-');
    const r = await newEnv().tests(testsInput(repo, { command: 'echo "1 test failed" >&2; exit 2', iteration: 0 }));
    expect(r.passed).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.tail).toContain('1 test failed');
    expect(r.logPath).toBe(path.join(repo, '.vigil', 'runs', 'run-1', 'tests-0000.log'));
  });

  it('fails on a timeout', async () => {
    const repo = tempDir('vigil-tests-repo-');
    const r = await newEnv().tests(testsInput(repo, { command: 'sleep 20', timeoutSeconds: 1 }));
    expect(r.passed).toBe(false);
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(124);
  });
});

describe('runTests retried', () => {
  /** A repository whose one node test counts its runs in runs.txt (Vigil's reporter writes its report into the attempt's folder). */
  const countingRepo = (): string => {
    const repo = tempDir('vigil-tests-retry-');
    writeFileSync(
      path.join(repo, 'sum.test.mjs'),
      "import { test } from 'node:test';\nimport { appendFileSync } from 'node:fs';\nimport assert from 'node:assert';\n" +
        "appendFileSync('runs.txt', 'run\\n');\ntest('adds', () => assert.strictEqual(1 + 1, 2));\n",
    );
    return repo;
  };

  it("a retry that collects the earlier attempt's test process reads that attempt's report: the run is judged once, by its report", async () => {
    const repo = countingRepo();
    const input: RunTestsInput = { runId: 'run-retry', repoPath: repo, command: 'node --test', iteration: 2, timeoutSeconds: 60 };
    // Attempt 1 runs the tests, and its worker is lost before it reports (the activity is retried) ...
    const first = await newEnv(1).tests(input);
    expect(first).toMatchObject({ verdict: 'pass', passedCount: 1 });
    // ... attempt 2 collects that process's result instead of running the tests again.
    const second = await newEnv(2).tests(input);
    expect(readFileSync(path.join(repo, 'runs.txt'), 'utf8')).toBe('run\n');
    expect(second.reason).not.toMatch(/without (writing )?its report/);
    expect(second).toMatchObject({ verdict: 'pass', passed: true, passedCount: 1, exitCode: 0 });
  });

  it('a retry of a call that never started runs the tests, into a folder of its own', async () => {
    const repo = countingRepo();
    const input: RunTestsInput = { runId: 'run-retry-2', repoPath: repo, command: 'node --test', iteration: 2, timeoutSeconds: 60 };
    const r = await newEnv(3).tests(input);
    expect(readFileSync(path.join(repo, 'runs.txt'), 'utf8')).toBe('run\n');
    expect(r).toMatchObject({ verdict: 'pass', passedCount: 1 });
  });
});
