/**
 * What Temporal's own buttons do to a Vigil run, as the run's UI card (rules/ui.ts
 * `temporalButtons`) and the README say: "Pause" on the agent call's pending activity does not pause
 * the run (with the product's defaults the agent goes on and its iteration counts; without a gate
 * pass riding on the call the agent is killed at once, the run waits for the Unpause, and the
 * iteration counts as failed); "Cancel" stops the run at once, and the card of the stopped run
 * puts its outcome first. The saved-view queries docs/messages.md gives find a paused run.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pauseUpdate } from '../../workflows/messages.js';
import {
  assertBuilt,
  createTestEnv,
  ROOT,
  loopInput,
  makeRepo,
  makeWorker,
  NAMESPACE,
  runInput,
  sleep,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

/** The agent call's pending activity, paused as the UI's "Pause" on it does (PauseActivity). */
async function pauseAgentActivity(handle: WorkflowHandle): Promise<string> {
  const pending = (await handle.describe()).raw.pendingActivities ?? [];
  const call = pending.find((a) => a.activityType?.name === 'runAgent');
  expect(call, JSON.stringify(pending.map((a) => a.activityType?.name))).toBeDefined();
  const id = call?.activityId ?? '';
  await env.client.workflowService.pauseActivity({
    namespace: NAMESPACE,
    execution: { workflowId: handle.workflowId },
    identity: 'temporal-ui',
    id,
    reason: 'clicked Pause',
  });
  return id;
}

const card = async (handle: WorkflowHandle): Promise<string> =>
  ((await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string }).currentDetails ?? '';

it("a Pause on the agent call's activity does not pause the run: the agent goes on and its iteration counts", async () => {
  const repo = makeRepo();
  // The first builder call sleeps 6 s before writing, so the Pause lands while the agent works.
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [{ writes: { 'a.txt': 'a' }, sleepBeforeMs: 6000 }],
    default: { output: 'working\n', sleepMs: 30_000 },
  });
  const tq = uniqueId('ui-pause');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(env, tq, runInput(repo, scenario));
    await waitForStatus(handle, (s) => s.agentRunning && s.iteration === 1);
    await sleep(500);
    await pauseAgentActivity(handle);
    // No Unpause: the call still finishes, its change is kept, and the run goes on to iteration 2.
    const after = await waitForStatus(handle, (s) => s.iteration === 2 && s.lastIteration?.iteration === 1, 60_000);
    expect(existsSync(path.join(repo, 'a.txt'))).toBe(true);
    expect(after.lastIteration).toMatchObject({ iteration: 1, exitCode: 0, changed: true });
    expect(after.paused).toBe(false);
    expect(after.status).not.toBe('paused');
    expect(await card(handle)).toContain("**Pause** on the agent call's activity does not pause the run");
    await handle.terminate('the test is over');
  });
});

it('without a gate pass on the call, a Pause on its activity kills the agent; the run waits for the Unpause and counts the iteration as failed', async () => {
  const repo = makeRepo();
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [{ writes: { 'a.txt': 'a' }, sleepBeforeMs: 6000 }],
    default: { output: 'working\n', sleepMs: 30_000 },
  });
  const tq = uniqueId('ui-pause-loop');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    // loopInput: no quality gates, so the call carries no gate pass (the other way the call takes Temporal's cancellation).
    const handle = await startRun(env, tq, loopInput(repo, scenario));
    await waitForStatus(handle, (s) => s.agentRunning && s.iteration === 1);
    await sleep(500);
    const activityId = await pauseAgentActivity(handle);
    // The agent is killed: the change it would have written after its sleep never comes.
    await sleep(9000);
    expect(existsSync(path.join(repo, 'a.txt'))).toBe(false);
    const held = await status(handle);
    expect(held).toMatchObject({ iteration: 1, agentRunning: true, lastIteration: null });
    await env.client.workflowService.unpauseActivity({
      namespace: NAMESPACE,
      execution: { workflowId: handle.workflowId },
      identity: 'temporal-ui',
      id: activityId,
    });
    const after = await waitForStatus(handle, (s) => s.lastIteration?.iteration === 1, 60_000);
    expect(after.lastIteration?.exitCode).not.toBe(0);
    expect(after.lastIteration?.changed).toBe(false);
    await handle.terminate('the test is over');
  });
});

it("Cancel stops the run at once, and the stopped run's card starts with its outcome", async () => {
  const repo = makeRepo();
  const scenario = writeScenario(repo, { version: 1, iterations: [], default: { output: 'working\n', sleepMs: 30_000 } });
  const tq = uniqueId('ui-cancel');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(env, tq, runInput(repo, scenario));
    await waitForStatus(handle, (s) => s.agentRunning && s.iteration === 1);
    expect(await card(handle)).toContain('**Cancel** stops it at once, as `vigil stop');
    await handle.cancel();
    const outcome = await handle.result();
    expect(outcome).toMatchObject({ status: 'stopped', exitCode: 0 });
    const d = await handle.describe();
    expect(d.status.name).toBe('COMPLETED');
    const paragraphs = (await card(handle)).split('\n\n');
    expect(paragraphs[0]).toBe(`**STOPPED** (exit 0) — ${outcome.reason}`);
    expect(paragraphs[0]).toMatch(/cancellation/);
    expect(paragraphs.at(-1)).toContain("**Temporal's Reset** replays this run's history");
    expect(paragraphs.at(-1)).toContain(`vigil rewind ${handle.workflowId} --to N --fork`);
  });
});

/** The saved-view queries of docs/messages.md ("A saved view with Vigil's columns"), as written there. */
function savedViewQueries(): string[] {
  const doc = readFileSync(path.join(ROOT, 'docs/messages.md'), 'utf8');
  const section = doc.slice(doc.indexOf('**A saved view'));
  const block = /```\n([\s\S]*?)\n```/.exec(section)?.[1] ?? '';
  return block.split('\n').filter(Boolean);
}

it('the saved views docs/messages.md gives list the runs, and a paused run among those waiting for a person', async () => {
  const [all, waiting] = savedViewQueries();
  expect(all).toBe("WorkflowType = 'vigilRun'");
  expect(waiting).toMatch(/VigilStatus IN \('paused'/);
  const repo = makeRepo();
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [{ writes: { 'a.txt': 'a' } }],
    default: { output: 'working\n', sleepMs: 30_000 },
  });
  const tq = uniqueId('ui-view');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(env, tq, runInput(repo, scenario));
    const ids = async (query: string): Promise<string[]> => {
      const found: string[] = [];
      for await (const wf of env.client.workflow.list({ query: `${query} AND WorkflowId = '${handle.workflowId}'` }))
        found.push(wf.workflowId);
      return found;
    };
    await waitForStatus(handle, (s) => s.agentRunning);
    await expect.poll(async () => ids(all ?? ''), { timeout: patient(20_000) }).toEqual([handle.workflowId]);
    expect(await ids(waiting ?? '')).toEqual([]);
    await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'lunch', by: 'dave' }] });
    await expect.poll(async () => ids(waiting ?? ''), { timeout: patient(60_000) }).toEqual([handle.workflowId]);
    await handle.terminate('the test is over');
  });
});
