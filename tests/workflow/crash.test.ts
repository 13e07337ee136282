/**
 * Crash safety: SIGKILL the worker process while the agent is running. A new worker finishes the
 * run; the iteration count is exact, the interrupted iteration is re-run exactly once, and the
 * orphaned agent of the dead worker is killed before the re-run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  makeRepo,
  pidAlive,
  runInput,
  sleep,
  startRun,
  status,
  uniqueId,
  WorkerProcesses,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
const workers = new WorkerProcesses();

beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  workers.killAll();
  await env?.close();
});

it('finishes the run on a new worker after the first is SIGKILLed mid-iteration', async () => {
  const repo = makeRepo();
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [
      { writes: { 'one.txt': '1' } },
      // Long enough to kill the worker while this runs.
      { writes: { 'two.txt': '2' }, sleepMs: 6000 },
      { writes: { 'three.txt': '3' }, claim: 'promise' },
    ],
  });
  const tq = uniqueId('crash');
  const { child: first } = await workers.spawn(tq);
  const handle = await startRun(env, tq, runInput(repo, scenario, { heartbeatTimeoutSeconds: 4 }));

  // Wait until iteration 2's agent is running, then kill the worker without any chance to clean up.
  const deadline = Date.now() + 60_000;
  while (!agentCalls(repo).some((c) => c.iteration === 2)) {
    if (Date.now() > deadline) throw new Error('iteration 2 never started');
    await sleep(100);
  }
  await sleep(500);
  const orphan = agentCalls(repo).find((c) => c.iteration === 2)?.pid as number;
  first.kill('SIGKILL');
  await first;
  expect(pidAlive(orphan)).toBe(true); // the dead worker could not kill its agent

  await workers.spawn(tq);
  const outcome = await handle.result();
  const snap = await status(handle);

  expect(outcome.status).toBe('completion_promise_fulfilled');
  expect(outcome.iteration).toBe(3);
  expect(snap.recentIterations.map((r) => [r.iteration, r.attempts])).toEqual([
    [1, 1],
    [2, 2],
    [3, 1],
  ]);
  // Iteration 2 ran twice (interrupted + re-run), every other iteration once.
  expect(agentCalls(repo).map((c) => c.iteration)).toEqual([1, 2, 2, 3]);
  expect(pidAlive(orphan)).toBe(false);
  const [runDir] = readdirSync(path.join(repo, '.vigil/runs'));
  const log = readFileSync(path.join(repo, '.vigil/runs', runDir as string, 'iteration-0002.log'), 'utf8');
  expect(log.match(/=== vigil: iteration 2, attempt \d+/g)).toEqual(['=== vigil: iteration 2, attempt 1', '=== vigil: iteration 2, attempt 2']);
});
