/**
 * STOP --now during an agent call: the agent's whole process tree (a background grandchild
 * included) is gone and the run is closed as `stopped`, at any point of the call (the stop is
 * sent at a random offset into it). Prints the latency; `node dist/bench/stop-latency.js`
 * measures it properly (many trials, loaded worker).
 *
 * The stop does not wait for a heartbeat: the run tells the worker that hosts its call at once
 * (workflows/running-call.ts), so a worker whose heartbeats reach Temporal only every minute still
 * kills the agent and closes the run within seconds.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { stopUpdate } from '../../workflows/messages.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  loopInput,
  sleep,
  startRun,
  uniqueId,
  waitForStatus,
  type TestEnv,
} from '../support/harness.js';

/** Alive, and not a zombie waiting for its parent (or init) to reap it. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  // Sandbox off: these tests follow the agent's processes by the pids it writes to a file outside
  // the repository, which the sandbox hides (and whose pids, in its pid namespace, are not the
  // host's). STOP --now in the sandbox: tests/e2e/cli.test.ts; nothing outliving a sandboxed
  // call: tests/unit/sandbox.test.ts.
  process.env.VIGIL_SANDBOX = 'off';
  env = await createTestEnv();
});
afterAll(async () => {
  delete process.env.VIGIL_SANDBOX;
  await env?.close();
});

/**
 * A run whose agent is a shell with a background grandchild, started and waited for until its
 * agent runs; the agent's two pids as it wrote them.
 */
async function startTreeRun(tq: string): Promise<{ handle: Awaited<ReturnType<typeof startRun>>; tree: number[] }> {
  const repo = makeRepo();
  const pids = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-stop-')), 'pids');
  const agent = ['/bin/sh', '-c', `sleep 120 & echo "$$ $!" > "${pids}"; wait`];
  const handle = await startRun(env, tq, loopInput(repo, '/dev/null', { agentCommand: agent }));
  await waitForStatus(handle, (s) => s.agentRunning);
  let tree: number[] = [];
  for (let i = 0; i < 100 && tree.length < 2; i++) {
    try {
      tree = readFileSync(pids, 'utf8').trim().split(' ').map(Number);
    } catch {
      await sleep(50);
    }
  }
  expect(tree).toHaveLength(2);
  return { handle, tree };
}

it('stop --now kills the agent tree and closes the run, wherever in the call it lands', async () => {
  const tq = uniqueId('stop-now');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    for (const offsetMs of [0, 700, 1300]) {
      const { handle, tree } = await startTreeRun(tq);
      await sleep(offsetMs + Math.floor(Math.random() * 500));
      const t0 = Date.now();
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'tester', now: true }] });
      const outcome = await handle.result();
      const closed = Date.now() - t0;
      while (tree.some(running) && Date.now() - t0 < 10_000) await sleep(5);
      const gone = Date.now() - t0;
      process.stderr.write(`stop --now ${offsetMs} ms into the call: run closed after ${closed} ms, agent tree gone after ${gone} ms\n`);
      expect(outcome.status).toBe('stopped');
      expect(tree.filter(running)).toEqual([]);
      expect(closed).toBeLessThan(15_000);
    }
  });
});

it('stop --now does not wait for the call to heartbeat: the run tells the worker that hosts it', async () => {
  const tq = uniqueId('stop-word');
  // Heartbeats, which bring Temporal's cancellation, sent at most every 4 s (0.8 of the runs' 5 s
  // heartbeat timeout), the first 1.7 s into the call (a third of it: activities/heartbeat.ts).
  const worker = await makeWorker(env, tq, { heartbeatSendMs: 60_000 });
  await worker.runUntil(async () => {
    const { handle, tree } = await startTreeRun(tq);
    // Between the call's first heartbeat and its next one.
    await sleep(3200);
    const t0 = Date.now();
    const ack = await handle.executeUpdate(stopUpdate, { args: [{ by: 'tester', now: true }] });
    expect(ack.message).toMatch(/stopping now/);
    const outcome = await handle.result();
    const closed = Date.now() - t0;
    expect(outcome.status).toBe('stopped');
    expect(tree.filter(running)).toEqual([]);
    expect(closed).toBeLessThan(15_000);
    // The call ended because the run killed it in its worker, not with Temporal's cancellation.
    const events = (await handle.fetchHistory()).events ?? [];
    const ended = events.filter((e) => e.activityTaskFailedEventAttributes || e.activityTaskCanceledEventAttributes);
    expect(ended).toHaveLength(1);
    expect(ended[0]?.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type).toBe('CallKilledByRun');
    // Benign: the worker does not log what the run asked for as a failed activity.
    expect(ended[0]?.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.category).toBe(
      temporal.api.enums.v1.ApplicationErrorCategory.APPLICATION_ERROR_CATEGORY_BENIGN,
    );
  });
});
