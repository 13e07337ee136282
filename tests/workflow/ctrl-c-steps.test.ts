/**
 * Ctrl+C where a run is followed (cli/ctrl-c.ts), each step against a real run on the dev server:
 * three Ctrl+C in a row pause the run, stop it at once and leave, each line said before its step,
 * the steps delivered in that order. A process merges signals that arrive together (the kernel
 * keeps one pending SIGINT), so three in a row cannot be sent to a real process and counted; here
 * they come from an emitter, and the end to end test (tests/e2e/ctrl-c.test.ts) sends real ones,
 * one at a time. The agent is the scripted one, asleep in its first call.
 */
import { EventEmitter } from 'node:events';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ctrlCLine, steerOnCtrlC } from '../../cli/ctrl-c.js';
import { sdkRunApi } from '../../cli/sdk-run-api.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  runInput,
  startRun,
  temporalAddress,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

/** Resolves once `probe` holds (polled every 20 ms, for 30 s at most). */
async function waitUntil(probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
const TQ = uniqueId('ctrl-c-steps');

beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
  worker = await makeWorker(env, TQ);
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.close();
});

it(
  'three Ctrl+C in a row: the run is paused, then stopped at once, and the command leaves',
  async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [], default: { sleepBeforeMs: 120_000, output: 'working\n' } });
    const handle = await startRun(env, TQ, runInput(repo, scenario), uniqueId('ctrlc'));
    await waitForStatus(handle, (s) => s.agentRunning, 60_000);

    const signals = new EventEmitter();
    const lines: string[] = [];
    let left = 0;
    const ep = { address: temporalAddress(), namespace: 'default', taskQueue: TQ, uiUrl: 'http://localhost:8233' };
    const release = steerOnCtrlC(sdkRunApi(env.client), ep, handle.workflowId, {
      say: (l) => lines.push(l),
      leave: () => (left += 1),
      signals: signals as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
    });
    // As a person presses it: the second once the first was answered, the third at once after it.
    signals.emit('SIGINT');
    await waitUntil(() => lines.some((l) => l.startsWith(`${handle.workflowId}: paused`)));
    signals.emit('SIGINT');
    signals.emit('SIGINT');
    expect(left).toBe(1);
    expect(lines.filter((l) => l.startsWith('Ctrl+C'))).toEqual(
      ['pause', 'stop', 'leave'].map((s) => ctrlCLine(s as 'pause' | 'stop' | 'leave', handle.workflowId)),
    );

    const outcome = await handle.result();
    expect(outcome.status).toBe('stopped');
    expect(outcome.reason).toMatch(/Ctrl\+C twice/);
    await waitUntil(() => lines.some((l) => l.includes(': stopping now')));
    release();
    expect(signals.listenerCount('SIGINT')).toBe(0);
  },
  patient(120_000),
);
