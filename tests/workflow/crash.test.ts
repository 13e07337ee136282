/**
 * Crash safety: SIGKILL the worker process while the agent is running. The agent runs under its
 * supervisor, which outlives the worker: a new worker's retried attempt re-attaches to the running
 * agent — or collects the result of an agent that finished while no worker was up — so the agent
 * runs exactly once and the iteration records its real result. A worker killed during a
 * repository inspection is noticed within the heartbeat timeout, not the activity's 10 minutes.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  makeRepo,
  agentAlive,
  type AgentCall,
  loopInput,
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

async function until(what: string, cond: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

function iterationLog(repo: string, n: number): string {
  const [runDir] = readdirSync(path.join(repo, '.vigil/runs'));
  return readFileSync(path.join(repo, '.vigil/runs', runDir as string, `iteration-${String(n).padStart(4, '0')}.log`), 'utf8');
}

it('a worker SIGKILLed mid agent call: the new worker re-attaches to the running agent, which runs exactly once, and records its real result', async () => {
  const repo = makeRepo();
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [
      { writes: { 'one.txt': '1' } },
      // Still running when the worker dies; its own exit code and output are what must be recorded.
      { sleepBeforeMs: 6000, appends: { 'two.txt': 'ran\n' }, output: 'iteration two finished its work\n', exitCode: 3 },
      { writes: { 'three.txt': '3' }, claim: 'promise' },
    ],
  });
  const tq = uniqueId('crash');
  const { child: first } = await workers.spawn(tq);
  const handle = await startRun(env, tq, loopInput(repo, scenario, { heartbeatTimeoutSeconds: 4 }));

  await until('iteration 2 started', () => agentCalls(repo).some((c) => c.iteration === 2));
  await sleep(500);
  const agent = agentCalls(repo).find((c) => c.iteration === 2) as AgentCall;
  first.kill('SIGKILL');
  await first;
  expect(agentAlive(agent)).toBe(true); // the agent outlives its worker

  await workers.spawn(tq);
  const outcome = await handle.result();
  const snap = await status(handle);

  expect(outcome.status).toBe('completion_promise_fulfilled');
  // Iteration 2 was retried by Temporal (attempt 2), but its agent ran once: the retry re-attached.
  expect(agentCalls(repo).map((c) => c.iteration)).toEqual([1, 2, 3]);
  expect(readFileSync(path.join(repo, 'two.txt'), 'utf8')).toBe('ran\n');
  const two = snap.recentIterations.find((r) => r.iteration === 2);
  expect(two).toMatchObject({ exitCode: 3, attempts: 2, changed: true });
  expect(two?.durationMs).toBeGreaterThanOrEqual(6000);
  const log = iterationLog(repo, 2);
  expect(log.match(/=== vigil: iteration 2, attempt \d+/g)).toEqual(['=== vigil: iteration 2, attempt 1']);
  expect(log).toContain('iteration two finished its work');
  expect(log.match(/=== vigil: exit 3 after/g)).toHaveLength(1);
});

it('an agent that finishes while no worker is up: the next worker collects its result instead of running it again', async () => {
  const repo = makeRepo();
  const scenario = writeScenario(repo, {
    version: 1,
    // Long enough that the worker is killed before the agent finishes, even on a loaded machine
    // (2.5 s was not: the kill came after the call had completed, and the next worker had nothing to collect).
    iterations: [{ sleepBeforeMs: 8000, writes: { 'done.txt': 'done\n' }, appends: { 'runs.txt': 'ran\n' }, claim: 'promise' }],
  });
  const tq = uniqueId('crash-finished');
  const { child: first } = await workers.spawn(tq);
  const handle = await startRun(env, tq, loopInput(repo, scenario, { heartbeatTimeoutSeconds: 4 }));
  await until('iteration 1 started', () => agentCalls(repo).some((c) => c.iteration === 1));
  const agent = agentCalls(repo)[0] as AgentCall;
  expect(agentAlive(agent), 'the agent is still working when its worker dies').toBe(true);
  first.kill('SIGKILL');
  await first;
  await until('the orphaned agent finished', () => !agentAlive(agent), 30_000);

  await workers.spawn(tq);
  const outcome = await handle.result();
  expect(outcome.status).toBe('completion_promise_fulfilled');
  expect(outcome.iteration).toBe(1);
  expect(agentCalls(repo)).toHaveLength(1);
  expect(readFileSync(path.join(repo, 'runs.txt'), 'utf8')).toBe('ran\n');
  expect((await status(handle)).recentIterations.map((r) => [r.iteration, r.exitCode, r.attempts])).toEqual([[1, 0, 2]]);
});

it('a worker SIGKILLed during a repository inspection is noticed within the heartbeat timeout, not the 10-minute bound', async () => {
  // A slow `git` first on the worker's PATH makes the inspection's `git add -A` of iteration 2 take
  // a while, once: the worker dies while inspectRepo waits for it. (A clean filter in the
  // repository's config no longer works for this: Vigil's git neutralises repository filters.)
  const tools = mkdtempSync(path.join(os.tmpdir(), 'vigil-slow-git-'));
  const armed = path.join(tools, 'armed');
  const inside = path.join(tools, 'inside');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(
    path.join(tools, 'git'),
    `#!/bin/sh\nfor a in "$@"; do\n  if [ "$a" = add ] && [ -e "${armed}" ]; then rm -f "${armed}"; touch "${inside}"; sleep ` +
      `30; fi\ndone\nexec "${realGit}" "$@"\n`,
  );
  chmodSync(path.join(tools, 'git'), 0o755);
  const workerEnv = { PATH: `${tools}${path.delimiter}${process.env.PATH ?? ''}` };
  const repo = makeRepo({ files: { 'README.md': '# sample\n' } });
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [{ writes: { 'a.txt': 'a' } }, { writes: { 'slow.dat': 'data\n' } }, { writes: { 'b.txt': 'b' }, claim: 'promise' }],
  });
  const tq = uniqueId('crash-inspect');
  const { child: first } = await workers.spawn(tq, undefined, workerEnv);
  const handle = await startRun(env, tq, loopInput(repo, scenario, { heartbeatTimeoutSeconds: 4 }));
  await until('iteration 1 recorded', () => agentCalls(repo).some((c) => c.iteration === 2));
  writeFileSync(armed, '');
  await until('the inspection of iteration 2 is under way', () => existsSync(inside));
  first.kill('SIGKILL');
  await first;
  const killedAt = Date.now();
  await workers.spawn(tq, undefined, workerEnv);
  const outcome = await handle.result();
  const noticed = Date.now() - killedAt;
  process.stderr.write(`worker lost during inspectRepo: the run went on after ${(noticed / 1000).toFixed(1)} s\n`);
  expect(outcome.status).toBe('completion_promise_fulfilled');
  expect(outcome.iteration).toBe(3);
  // The repository activities' heartbeat timeout is max(heartbeatTimeoutSeconds, 10) = 10 s.
  expect(noticed).toBeLessThan(90_000);
  expect(agentCalls(repo).map((c) => c.iteration)).toEqual([1, 2, 3]);
});
