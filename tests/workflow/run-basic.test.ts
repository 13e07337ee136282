/**
 * The run loop against a real Temporal server: a scenario that completes, a refused claim, the
 * iteration cap, consecutive-failure backoff and the terminal failure.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  loopInput,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { followRun } from '../../cli/follow.js';
import { inputUpdate } from '../../workflows/messages.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

describe('vigilRun', () => {
  it('runs a scenario to an accepted completion claim', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'src/a.txt': 'a\n' }, output: 'working on a\n' },
        { writes: { 'src/b.txt': 'b\n' }, commit: 'add b' },
        { output: 'all done\n', claim: 'promise' },
      ],
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const outcome = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { testCommand: 'test -f src/a.txt && test -f src/b.txt' }));
      const result = await handle.result();
      const s = await status(handle);
      expect(s.iteration).toBe(3);
      expect(s.lastEvidence).toMatchObject({ iteration: 3, pass: true, reason: null, testsPassed: true });
      expect(s.recentIterations.map((r) => r.phase)).toEqual(['ACT', 'REFLECT', 'VERIFY']);
      return result;
    });
    expect(outcome.status).toBe('completion_promise_fulfilled');
    expect(outcome.exitCode).toBe(0);
    expect(outcome.iteration).toBe(3);
    expect(readFileSync(path.join(repo, 'src/a.txt'), 'utf8')).toBe('a\n');
    expect(existsSync(path.join(repo, 'src/b.txt'))).toBe(true);
    expect(agentCalls(repo).map((c) => c.iteration)).toEqual([1, 2, 3]);
  });

  it('refuses a claim with an empty diff or red tests and feeds the reason into the next prompt', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { claim: 'file' }, // nothing changed yet: empty_diff
        { writes: { 'x.txt': 'x' }, claim: 'promise' }, // tests need y.txt: tests_red
        { writes: { 'y.txt': 'y' }, claim: 'file' },
      ],
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const { outcome, verdicts } = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { testCommand: 'test -f y.txt' }));
      const outcome = await handle.result();
      return { outcome, verdicts: (await status(handle)).lastEvidence };
    });
    expect(outcome.status).toBe('completion_promise_fulfilled');
    expect(outcome.iteration).toBe(3);
    expect(verdicts).toMatchObject({ iteration: 3, pass: true });
    const runDir = path.join(repo, '.vigil/runs');
    const [id] = readdirSync(runDir);
    const prompt2 = readFileSync(path.join(runDir, id as string, 'iteration-0002.prompt.md'), 'utf8');
    const prompt3 = readFileSync(path.join(runDir, id as string, 'iteration-0003.prompt.md'), 'utf8');
    expect(prompt2).toMatch(/refused at iteration 1 by the evidence gate: nothing changed since the run started/);
    expect(prompt3).toMatch(/refused at iteration 2 by the evidence gate: the tests fail/);
    expect(prompt3).toMatch(/the test command failed \(log: .*tests-0002\.log\)/);
    // The claim file was consumed.
    expect(existsSync(path.join(repo, '.vigil/signals/COMPLETION_REQUESTED'))).toBe(false);
  });

  it('ends at the iteration cap with exit code 20', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [], default: { output: 'thinking\n' } });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const outcome = await worker.runUntil(async () => (await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 3 }))).result());
    expect(outcome).toMatchObject({ status: 'max_iterations_reached', exitCode: 20, iteration: 3 });
    expect(agentCalls(repo)).toHaveLength(3);
  });

  it("a directive sent during the last iteration is named in the outcome's notes, not lost silently", async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [],
      default: { writes: { 'a.txt': 'a\n' }, output: 'wrote a.txt\n', sleepMs: 1500 },
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const outcomeId = uniqueId('undelivered');
    const { outcome, pending } = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 1 }), outcomeId);
      await waitForStatus(handle, (x) => x.agentRunning);
      await handle.executeUpdate(inputUpdate, { args: [{ directive: 'Also   update\nthe changelog', by: 'alice' }] });
      const o = await handle.result();
      return { outcome: o, pending: (await status(handle)).pendingDirectives };
    });
    expect(outcome).toMatchObject({ status: 'max_iterations_reached', iteration: 1 });
    expect(pending).toBe(1);
    expect(outcome.notes).toEqual([
      expect.stringMatching(
        /^1 human directive\(s\) never reached a prompt, the run ended first \(alice at \S+: "Also update the changelog"\)$/,
      ),
    ]);
    expect(agentCalls(repo)).toHaveLength(1);
    // What `vigil watch` prints below the outcome line.
    const lines: string[] = [];
    await followRun(env.client, outcomeId, { until: 'terminal', onLine: (l) => lines.push(l) });
    expect(lines.slice(-2)).toEqual([expect.stringMatching(/^finished: max_iterations_reached \(exit 20\)/), `note: ${outcome.notes[0]}`]);
  });

  it('backs off after failures, resets on success and fails after maxRetries in a row', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ exitCode: 3, output: 'boom\n' }, { writes: { 'ok.txt': '1' } }],
      default: { exitCode: 1, stderr: 'still broken\n' },
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const { outcome, snap, history } = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxRetries: 3, baseWaitSeconds: 1, maxWaitSeconds: 2 }));
      const outcome = await handle.result();
      return { outcome, snap: await status(handle), history: await handle.fetchHistory() };
    });
    // 1 fails, 2 succeeds (resets), 3-5 fail: the third failure in a row ends the run.
    expect(outcome).toMatchObject({ status: 'failed', exitCode: 1, iteration: 5 });
    expect(snap.consecutiveFailures).toBe(3);
    expect(snap.recentIterations.map((r) => r.exitCode)).toEqual([3, 0, 1, 1, 1]);
    const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes);
    // Backoff timers after failures 1, 3 and 4 (not after the terminal fifth).
    expect(timers).toHaveLength(3);
  });

  it('ends as agent_not_runnable when the agent command does not exist', async () => {
    const repo = makeRepo();
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const input = loopInput(repo, 'unused');
    input.knobs.agentCommand = ['/nonexistent/agent-binary'];
    const outcome = await worker.runUntil(async () => (await startRun(env, tq, input)).result());
    expect(outcome.status).toBe('agent_not_runnable');
    expect(outcome.exitCode).toBe(20);
    expect(outcome.reason).toMatch(/command not found/);
  });
});
