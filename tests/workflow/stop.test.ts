/**
 * STOP --now during an agent call: the agent's whole process tree (a background grandchild
 * included) is gone and the run is closed as `stopped`, at any point of the call (the stop is
 * sent at a random offset into it). Prints the latency; `node dist/bench/stop-latency.js`
 * measures it properly (many trials, loaded worker).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stopUpdate } from '../../workflows/messages.js';
import { assertBuilt, createTestEnv, makeRepo, makeWorker, runInput, sleep, startRun, uniqueId, waitForStatus, type TestEnv } from '../support/harness.js';

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
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.close();
});

it('stop --now kills the agent tree and closes the run, wherever in the call it lands', async () => {
  const tq = uniqueId('stop-now');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    for (const offsetMs of [0, 700, 1300]) {
      const repo = makeRepo();
      const pids = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-stop-')), 'pids');
      const agent = ['/bin/sh', '-c', `sleep 120 & echo "$$ $!" > "${pids}"; wait`];
      const handle = await startRun(env, tq, runInput(repo, '/dev/null', { agentCommand: agent }));
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
