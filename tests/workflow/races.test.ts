/**
 * Two races at the iteration boundary, on a real Temporal server with the fake opencode CLI (no
 * other workflow test uses opencode, so its circuit breaker is this file's own):
 *
 * - a rewind asked for while the run waits for its provider (an open circuit breaker) ends the
 *   wait, as a pause or a stop does, instead of being held through the wait and a whole call
 *   (vigil-provider-wait-rewind-v1);
 * - a `stop --now` that arrives while the run is asking the breaker (the ask activity, before any
 *   agent call exists to cancel) is honoured before the call starts, and the breaker's permission
 *   is released (vigil-recheck-before-call-v1).
 *
 * The completion machinery (council, gates, review, checklist) is switched off here: these tests
 * pin the boundary between messages, provider waits and the agent call, which it does not touch.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rewindUpdate, stopUpdate } from '../../workflows/messages.js';
import { breakerStateQuery, breakerWorkflowId, type BreakerView } from '../../workflows/provider-breaker-messages.js';
import { vigilProviderBreaker } from '../../workflows/provider-breaker-workflow.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  ROOT,
  loopInput,
  sleep,
  startRun,
  uniqueId,
  waitForStatus,
  type TestEnv,
} from '../support/harness.js';

const FAKE_OPENCODE = path.join(ROOT, 'examples/agents/fake-cli/opencode');
const BREAKER_ID = breakerWorkflowId('opencode');

let env: TestEnv;
const noScenario = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-races-')), 'unused.json');
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterEach(async () => {
  delete process.env.FAKE_CLI_SCENARIO;
  delete process.env.FAKE_CLI_LOG;
  delete process.env.VIGIL_SANDBOX_WRITABLE;
  await env.client.workflow
    .getHandle(BREAKER_ID)
    .terminate('test finished')
    .catch(() => undefined);
});
afterAll(async () => env?.close());

/** Points the fake CLI at a scenario; returns its call log. */
function fakeScenario(calls: Record<string, unknown>[]): () => number {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-fake-cli-'));
  writeFileSync(path.join(dir, 'scenario.json'), JSON.stringify({ calls }));
  process.env.FAKE_CLI_SCENARIO = path.join(dir, 'scenario.json');
  process.env.FAKE_CLI_LOG = path.join(dir, 'calls.jsonl');
  // The fake CLIs log their calls outside the repository, which the sandbox shows only when the
  // worker's operator names it (docs/security.md, The agent's sandbox); the workers here inherit it.
  process.env.VIGIL_SANDBOX_WRITABLE = dir;
  const log = process.env.FAKE_CLI_LOG;
  return () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
}

/** The loop's mechanics only (see the header for why the completion machinery is off). */
const LOOP = {
  provider: 'opencode' as const,
  agentCommand: [FAKE_OPENCODE],
  baseWaitSeconds: 1,
  tierLadder: false,
  uncertaintyEscalation: false,
  deadLetterAfter: 0,
};

const within = <T>(ms: number, p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`${what}: not within ${ms} ms`)))]);

describe('boundary races', () => {
  it('a rewind asked for while the run waits for an open circuit breaker happens at once, with no agent call', async () => {
    const calls = fakeScenario([
      { writes: { 'step.txt': '1\n' } },
      { writes: { 'step.txt': '2\n' } },
      { exit: 1, text: 'API Error: 503 service unavailable' },
    ]);
    const tq = uniqueId('races');
    const worker: Worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      // One failure opens the breaker for two minutes: the run then waits for the provider.
      const knobs = { ...LOOP, breakerFailures: 1, breakerCooldownSeconds: 120 };
      const handle = await startRun(
        env,
        tq,
        loopInput(makeRepo(), noScenario, { ...knobs, councilEnabled: false, qualityGates: false, codeReview: false, prdChecklist: false }),
      );
      await waitForStatus(handle, (s) => s.status === 'waiting_for_provider' && s.iteration === 3, 60_000);
      expect(calls()).toBe(3);
      const ack = await within(
        15_000,
        handle.executeUpdate(rewindUpdate, { args: [{ to: 1, by: 'test', reason: 'back to the first step' }] }),
        'the rewind',
      );
      expect(ack.changed).toBe(true);
      const after = await waitForStatus(handle, (s) => s.status === 'waiting_for_provider' && s.iteration === 1);
      expect(after.checkpoints?.rewinds).toHaveLength(1);
      expect(readFileSync(path.join(after.repoPath, 'step.txt'), 'utf8')).toBe('1\n');
      expect(calls()).toBe(3); // the breaker is still open: nobody called the agent
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'test', reason: 'done' }] });
      expect((await handle.result()).status).toBe('stopped');
    });
  });

  it('a stop --now that arrives while the breaker is being asked ends the run before any agent call, and releases the permission', async () => {
    const calls = fakeScenario([{ writes: { 'step.txt': '1\n' }, sleepMs: 5000 }]);
    // The breaker lives on a queue nobody serves yet: the run's ask waits there.
    const breakerQueue = uniqueId('races-breaker');
    await env.client.workflow.start(vigilProviderBreaker, {
      taskQueue: breakerQueue,
      workflowId: BREAKER_ID,
      args: [{ provider: 'opencode' }],
    });
    const tq = uniqueId('races');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(
        env,
        tq,
        loopInput(makeRepo(), noScenario, { ...LOOP, councilEnabled: false, qualityGates: false, codeReview: false, prdChecklist: false }),
      );
      await waitUntilAsking(handle.workflowId);
      const ack = await handle.executeUpdate(stopUpdate, { args: [{ by: 'test', reason: 'stop now', now: true }] });
      expect(ack.changed).toBe(true);
      // Now the breaker answers (allow): the run must not start the call it was asking for.
      const breakerWorker = await makeWorker(env, breakerQueue);
      await breakerWorker.runUntil(async () => {
        const outcome = await within(30_000, handle.result(), 'the stop');
        expect(outcome.status).toBe('stopped');
        const v: BreakerView = await env.client.workflow.getHandle(BREAKER_ID).query(breakerStateQuery);
        expect(v.state.phase).toBe('CLOSED');
      });
      expect(calls()).toBe(0);
    });
  });
});

/** Until the run's pending activity is the breaker ask. */
async function waitUntilAsking(workflowId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const d = await env.client.workflow.getHandle(workflowId).describe();
    if ((d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'askProviderBreaker')) return;
    await sleep(200);
  }
  throw new Error('the run never asked the breaker');
}
