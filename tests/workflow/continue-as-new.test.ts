/**
 * Long runs: with continueAsNewEvery = 2, a 7-iteration run rolls over to a fresh history three
 * times and loses nothing: iteration counter, no-change streak, hash ring, a pending human
 * directive and the run-start commit all cross the boundaries, in the packed form
 * (workflows/carried-state.ts). A rewind to a checkpoint of an earlier execution restores the
 * snapshot that crossed them. Also: a Temporal cancellation request (UI "Cancel", `temporal
 * workflow cancel`) ends the run as stopped.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { workingTreeHash } from '../../activities/repo.js';
import { RunInputSchema, RunStateSchema } from '../../schemas/run.js';
import { unpackValue } from '../../workflows/carried-state.js';
import { inputUpdate, pauseUpdate, rewindUpdate, stopUpdate } from '../../workflows/messages.js';
import type { vigilRun } from '../../workflows/run-workflow.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  git,
  makeRepo,
  makeWorker,
  loopInput,
  sleep,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

/** The input each execution of the run started with, first to last. */
async function executionInputs(handle: WorkflowHandle<typeof vigilRun>): Promise<ReturnType<typeof RunInputSchema.parse>[]> {
  const inputs: ReturnType<typeof RunInputSchema.parse>[] = [];
  const seen = await env.client.workflowService.listWorkflowExecutions({
    namespace: 'default',
    query: `WorkflowId = '${handle.workflowId}'`,
  });
  const runIds = (seen.executions ?? []).map((e) => ({
    runId: e.execution?.runId ?? '',
    at: Number(e.startTime?.seconds ?? 0) * 1e9 + (e.startTime?.nanos ?? 0),
  }));
  for (const { runId } of runIds.sort((a, b) => a.at - b.at)) {
    const started = (await env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory()).events?.[0]
      ?.workflowExecutionStartedEventAttributes;
    const raw = JSON.parse(Buffer.from(started?.input?.payloads?.[0]?.data ?? new Uint8Array()).toString('utf8')) as unknown;
    inputs.push(RunInputSchema.parse(raw));
  }
  return inputs;
}

it('continues as new every 2 iterations and carries the whole state', async () => {
  const repo = makeRepo();
  const startSha = git(repo, 'rev-parse', 'HEAD');
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [
      { writes: { 'f1.txt': '1' }, commit: 'one' },
      { writes: { 'f2.txt': '2' }, commit: 'two', sleepBeforeMs: 2500 }, // the directive arrives during this call
      { writes: { 'f3.txt': '3' }, commit: 'three' },
      { writes: { 'f4.txt': '4' } },
      { output: 'looked; nothing to change\n' }, // no change
      { output: 'looked; nothing to change\n' }, // no change (crosses the boundary after iteration 6)
      { claim: 'promise' }, // no change, claim: the diff since start is not empty
    ],
  });
  const tq = uniqueId('can');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(env, tq, loopInput(repo, scenario, { continueAsNewEvery: 2 }));
    const firstRunId = (await handle.describe()).runId;
    await waitForStatus(handle, (s) => s.iteration === 2 && s.agentRunning);
    await handle.executeUpdate(inputUpdate, { args: [{ directive: 'Prefer small commits.', by: 'carol' }] });

    const outcome = await handle.result();
    const snap = await status(handle);
    expect(outcome.status).toBe('completion_promise_fulfilled');
    expect(outcome.iteration).toBe(7);
    expect(snap.iteration).toBe(7);
    expect(snap.generations).toBe(3); // rolled over after iterations 2, 4 and 6
    expect((await handle.describe()).runId).not.toBe(firstRunId);
    expect(snap.runStartSha).toBe(startSha);
    expect(git(repo, 'rev-parse', 'HEAD')).not.toBe(startSha);
    expect(snap.consecutiveNoChange).toBe(3); // iterations 5, 6, 7 across the boundary
    expect(snap.recentHashes).toHaveLength(6);
    expect(new Set(snap.recentHashes.slice(-4)).size).toBe(1);
    expect(snap.recentIterations.map((r) => r.iteration)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(agentCalls(repo).map((c) => c.iteration)).toEqual([1, 2, 3, 4, 5, 6, 7]);

    // Every execution after the first started with the packed state, and it unpacks to a valid one.
    const inputs = await executionInputs(handle);
    expect(inputs).toHaveLength(4);
    expect(inputs.map((i) => [i.state !== undefined, i.packedState !== undefined])).toEqual([
      [false, false],
      [false, true],
      [false, true],
      [false, true],
    ]);
    expect(inputs.map((i) => (i.packedState ? RunStateSchema.parse(unpackValue(i.packedState)).iteration : 0))).toEqual([0, 2, 4, 6]);

    // The directive sent during iteration 2 crossed the rollover into iteration 3's prompt, once.
    const runDir = path.join(repo, '.vigil/runs', readdirSync(path.join(repo, '.vigil/runs'))[0] as string);
    const prompt = (n: number): string => readFileSync(path.join(runDir, `iteration-000${n}.prompt.md`), 'utf8');
    expect(prompt(2)).not.toContain('Prefer small commits.');
    expect(prompt(3)).toContain('Prefer small commits.');
    expect(prompt(3)).toContain('[from carol at');
    // Once given, it is no longer a directive; the run memory remembers it was given.
    expect(prompt(4)).not.toContain('HUMAN DIRECTIVE');
    expect(prompt(4)).not.toContain('[from carol at');
    expect(prompt(4)).toContain('- iteration 3: directive from carol: "Prefer small commits."');
  });
});

it('rewinds to a checkpoint taken two executions earlier: its snapshot crossed the boundaries packed', async () => {
  const repo = makeRepo();
  const step = (n: number, extra: Record<string, unknown> = {}) => ({
    writes: { 'step.txt': `${n}\n`, [`f${n}.txt`]: `${n}\n` },
    ...extra,
  });
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [step(1), step(2), step(3, { exitCode: 1 }), step(4), step(5, { sleepMs: 3000 })],
  });
  const tq = uniqueId('can-rewind');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(env, tq, loopInput(repo, scenario, { continueAsNewEvery: 2, maxIterations: 10 }));
    await waitForStatus(handle, (s) => s.iteration === 5 && s.agentRunning, 120_000);
    await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'rewind', by: 'alice' }] });
    const at5 = await waitForStatus(handle, (s) => s.paused && !s.agentRunning && s.lastIteration?.iteration === 5, 60_000);
    expect(at5.generations).toBe(2); // after iterations 2 and 4
    expect(at5.consecutiveFailures).toBe(0);
    const c3 = at5.checkpoints?.list.find((c) => c.iteration === 3);
    expect(at5.checkpoints?.list.map((c) => c.iteration)).toEqual([1, 2, 3, 4, 5]);

    // Checkpoint 3 was sealed in the second execution and carried into the third.
    const ack = await handle.executeUpdate(rewindUpdate, { args: [{ to: 3, by: 'alice', reason: 'back to 3' }] });
    expect(ack.message).toMatch(/rewound from iteration 5 to iteration 3/);
    const s = await status(handle);
    expect(s.iteration).toBe(3);
    expect(s.consecutiveFailures).toBe(1); // iteration 3 failed
    expect(s.recentIterations.map((r) => r.iteration)).toEqual([1, 2, 3]);
    expect(s.recentHashes.at(-1)).toBe(c3?.tree);
    expect(s.checkpoints?.list.map((c) => c.iteration)).toEqual([1, 2, 3]);
    expect(await workingTreeHash(repo)).toBe(c3?.tree);
    await handle.executeUpdate(stopUpdate, { args: [{ by: 'alice' }] });
    expect((await handle.result()).status).toBe('stopped');
  });
});

it('treats a Temporal cancellation request as a stop', async () => {
  const repo = makeRepo();
  const scenario = writeScenario(repo, { version: 1, iterations: [], default: { output: 'working\n', sleepMs: 30_000 } });
  const tq = uniqueId('cancel');
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const handle = await startRun(env, tq, loopInput(repo, scenario));
    await waitForStatus(handle, (s) => s.agentRunning);
    while (agentCalls(repo).length === 0) await sleep(50);
    const started = Date.now();
    await handle.cancel();
    const outcome = await handle.result();
    expect(outcome.status).toBe('stopped');
    expect(outcome.exitCode).toBe(0);
    expect(outcome.reason).toMatch(/cancellation/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await handle.describe()).status.name).toBe('COMPLETED');
  });
});
