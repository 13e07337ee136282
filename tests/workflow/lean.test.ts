/**
 * The lean iteration against a real Temporal server: an iteration is one agent activity (the
 * repository's inspection and the signal files come back with it), a gated iteration adds one
 * gates activity, long prompt parts travel once and by reference afterwards (every prompt still
 * holds them), and a PAUSE during the gates cuts the pass short and runs it again after RESUME.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, createTestEnv, makeRepo, makeWorker, runInput, startRun, status, uniqueId, waitForStatus, writeScenario, type TestEnv } from '../support/harness.js';
import { pauseUpdate, resumeUpdate } from '../../workflows/messages.js';

type Event = proto.temporal.api.history.v1.IHistoryEvent;

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

const scheduled = (events: Event[]): { name: string; input: Record<string, unknown> }[] =>
  events
    .filter((e) => e.activityTaskScheduledEventAttributes)
    .map((e) => {
      const a = e.activityTaskScheduledEventAttributes as proto.temporal.api.history.v1.IActivityTaskScheduledEventAttributes;
      const data = a.input?.payloads?.[0]?.data;
      return { name: a.activityType?.name ?? '', input: data ? (JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>) : {} };
    });

const CHECKLIST = Array.from({ length: 4 }, (_, i) => ({
  id: `REQ-${i + 1}`,
  title: `Requirement number ${i + 1}: the notes file keeps one line per iteration, in order, and nothing else is changed anywhere`,
  priority: 'medium' as const,
  verify: 'read notes.txt',
}));

describe('the lean iteration', () => {
  it('makes one agent activity per iteration and one gates activity per gated one; long prompt parts travel once', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [1, 2, 3, 4].map((i) => ({ appends: { 'notes.txt': `${i}\n` } })),
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const input = {
      ...runInput(repo, scenario, { qualityGates: true, gateStaticAnalysis: false, gateDocCoverage: false, testCommand: 'true', maxIterations: 4, prdChecklist: true, checklistHeldOut: false }),
      checklist: CHECKLIST,
    };
    const { outcome, events } = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, input);
      const outcome = await handle.result();
      return { outcome, events: (await handle.fetchHistory()).events ?? [] };
    });
    expect(outcome.status).toBe('max_iterations_reached');
    expect(outcome.iteration).toBe(4);

    const acts = scheduled(events);
    const names = acts.map((a) => a.name);
    for (const gone of ['inspectRepo', 'readAgentSignals', 'runGate', 'runTests', 'inspectIteration']) expect(names, gone).not.toContain(gone);
    const agentCalls = acts.filter((a) => a.name === 'runAgent');
    expect(agentCalls).toHaveLength(4);
    expect(names.filter((n) => n === 'runGates')).toHaveLength(4);
    // Each call asks for the inspection; the checklist's text travels in the first call only.
    for (const c of agentCalls) expect(c.input.inspect).toMatchObject({ signals: true });
    const first = agentCalls[0]?.input as { promptInput: { checklist: string | null }; promptRefs?: Record<string, string> };
    expect(first.promptInput.checklist).toContain('REQ-1');
    expect(first.promptRefs ?? {}).toEqual({});
    for (const c of agentCalls.slice(1)) {
      const i = c.input as { promptInput: { checklist: string | null }; promptRefs: Record<string, string> };
      expect(i.promptInput.checklist).toBeNull();
      expect(i.promptRefs.checklist).toMatch(/^[0-9a-f]{64}$/);
    }
    // ...and every prompt the agent read holds it.
    const runsDir = path.join(repo, '.vigil', 'runs');
    const runDir = path.join(runsDir, readdirSync(runsDir)[0] as string);
    for (const n of [1, 2, 3, 4]) expect(readFileSync(path.join(runDir, `iteration-000${n}.prompt.md`), 'utf8')).toContain(CHECKLIST[3]?.title);

    // A gated iteration in steady state (from the 2nd agent call to the 4th): its agent call, one
    // gates activity, the workflow tasks between them and the iteration's search attribute.
    const calls = events.map((e, i) => (e.activityTaskScheduledEventAttributes?.activityType?.name === 'runAgent' ? i : -1)).filter((i) => i >= 0);
    const window = events.slice(calls[1], calls[3]);
    expect(window.length / 2).toBeLessThanOrEqual(15);
    expect(window.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes).length).toBeLessThanOrEqual(2);
  });

  it('a PAUSE during the gates cuts the pass short (the slow test run is killed); after RESUME the run goes on', async () => {
    const repo = makeRepo();
    const marker = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-lean-')), 'slept');
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' } }, { writes: { 'b.txt': 'b\n' } }] });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const input = runInput(repo, scenario, { qualityGates: true, gateStaticAnalysis: false, gateDocCoverage: false, gateMockIntegrity: false, gateTestMutation: false, testCommand: `if [ -e ${marker} ]; then true; else touch ${marker}; sleep 30; fi`, maxIterations: 2 });
    const { outcome, events, pausedAfterMs } = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, input);
      await waitForStatus(handle, (s) => s.status === 'gating' && s.iteration === 1, 90_000);
      await new Promise((r) => setTimeout(r, 1000));
      const t = Date.now();
      await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'look', by: 'test' }] });
      await waitForStatus(handle, (s) => s.status === 'paused', 60_000);
      // The pass was cut short: the tests did not run their 30 s.
      const pausedAfterMs = Date.now() - t;
      const s = await status(handle);
      expect(s.quality?.gates.find((g) => g.gate === 'tests')).toBeUndefined();
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'test' }] });
      const outcome = await handle.result();
      return { outcome, events: (await handle.fetchHistory()).events ?? [], pausedAfterMs };
    });
    expect(pausedAfterMs).toBeLessThan(25_000);
    expect(outcome.status).toBe('max_iterations_reached');
    const gates = scheduled(events).filter((a) => a.name === 'runGates');
    expect(gates.length).toBe(2);
    expect(events.some((e) => e.activityTaskCancelRequestedEventAttributes)).toBe(true);
  });
});
