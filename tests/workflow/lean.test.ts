/**
 * The lean iteration against a real Temporal server: an iteration is one agent activity (the
 * repository's inspection, the signal files and the gate pass come back with it), long prompt
 * parts travel once and by reference afterwards (every prompt still holds them), a default-knob
 * iteration with the run memory stays within 8 events and 8 KiB (the memory and the agent's notes
 * by reference, reviewing prompts as parts, a round as one activity), a PAUSE during the pass cuts
 * it short and during the agent skips it (the agent finishes), STOP --now still kills the agent,
 * and the worker itself spawns no process per iteration.
 */
import { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  createTestEnv,
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
  PASS_ON_START_TREE,
} from '../support/harness.js';
import { pauseUpdate, resumeUpdate, stopUpdate } from '../../workflows/messages.js';

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
      return {
        name: a.activityType?.name ?? '',
        input: data ? (JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>) : {},
      };
    });

/** Quality gates with the test suite and the secret scan only (fast, no tools needed). */
const ONLY_TESTS_AND_SECRETS = {
  qualityGates: true,
  gateStaticAnalysis: false,
  gateDocCoverage: false,
  gateMockIntegrity: false,
  gateTestMutation: false,
};

const CHECKLIST = Array.from({ length: 4 }, (_, i) => ({
  id: `REQ-${i + 1}`,
  title: `Requirement number ${i + 1}: the notes file keeps one line per iteration, in order, and nothing else is changed anywhere`,
  priority: 'medium' as const,
  verify: 'read notes.txt',
}));

describe('the lean iteration', () => {
  it('makes one agent activity per iteration, the gate pass riding with it; long prompt parts travel once', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [1, 2, 3, 4].map((i) => ({ appends: { 'notes.txt': `${i}\n` } })),
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const input = {
      ...loopInput(repo, scenario, {
        qualityGates: true,
        gateStaticAnalysis: false,
        gateDocCoverage: false,
        testCommand: 'true',
        maxIterations: 4,
        prdChecklist: true,
        checklistHeldOut: false,
      }),
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
    for (const gone of ['inspectRepo', 'readAgentSignals', 'runGate', 'runGates', 'inspectIteration'])
      expect(names, gone).not.toContain(gone);
    // The one test run of its own is the baseline, on the tree the run started with, before the first call.
    expect(names.filter((n) => n === 'runTests')).toHaveLength(1);
    expect(names.indexOf('runTests')).toBeLessThan(names.indexOf('runAgent'));
    const agentCalls = acts.filter((a) => a.name === 'runAgent');
    expect(agentCalls).toHaveLength(4);
    // Every call carries the pass and made it: the results came back with the call.
    for (const c of agentCalls) expect(c.input.gates).toMatchObject({ pass: { groups: expect.any(Array) } });
    const results = events
      .filter((e) => e.activityTaskCompletedEventAttributes)
      .map(
        (e) =>
          JSON.parse(
            Buffer.from(e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data ?? new Uint8Array()).toString('utf8'),
          ) as { gates?: { interrupted: boolean; tests: unknown } },
      );
    expect(results.filter((r) => r.gates && !r.gates.interrupted && r.gates.tests)).toHaveLength(4);
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
    for (const n of [1, 2, 3, 4])
      expect(readFileSync(path.join(runDir, `iteration-000${n}.prompt.md`), 'utf8')).toContain(CHECKLIST[3]?.title);

    // A gated iteration in steady state (from the 2nd agent call to the 4th): its agent call (with
    // the pass), the workflow task after it and the iteration's search attribute.
    const calls = events
      .map((e, i) => (e.activityTaskScheduledEventAttributes?.activityType?.name === 'runAgent' ? i : -1))
      .filter((i) => i >= 0);
    const window = events.slice(calls[1], calls[3]);
    expect(window.length / 2).toBeLessThanOrEqual(8);
    expect(window.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes).length).toBeLessThanOrEqual(2);
  });

  it('a default-knob iteration with the run memory stays small: the memory and the notes travel by reference, every prompt holds them', async () => {
    const repo = makeRepo();
    mkdirSync(path.join(repo, '.vigil'), { recursive: true });
    const LESSON = `- ${'Run the unit tests with node --test before committing; the old runner hangs on watch mode. '.repeat(8)}`;
    writeFileSync(path.join(repo, '.vigil/learnings.md'), `${LESSON}\n`);
    const NOTES = (i: number) =>
      `# Notes\nIteration ${i}: ${'the parser handles the error paths next; keep the fixtures in tests/data. '.repeat(20)}\n`;
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: Array.from({ length: 7 }, (_, k) => ({
        appends: { 'notes.txt': `${k + 1}\n` },
        writes: {
          '.vigil/CONTINUITY.md': NOTES(k + 1),
          '.vigil/signals/SUMMARY': `Step ${k + 1}: ${'extended the notes file and checked the order of its lines '.repeat(3)}`,
        },
      })),
      roles: {
        council: { default: { output: 'VOTE: REJECT\nREASON: not yet\n' } },
        'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: REJECT\nREASON: not yet\n' } },
        reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n' } },
      },
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    // The default knobs (council every 5 iterations, quality gates, code review; no test command, so no early council check), no checklist agent.
    const input = loopInput(repo, scenario, { councilEnabled: true, qualityGates: true, codeReview: true, maxIterations: 7 });
    const { outcome, events, final } = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, input);
      const outcome = await handle.result();
      return { outcome, events: (await handle.fetchHistory()).events ?? [], final: await status(handle) };
    });
    expect(outcome.status).toBe('max_iterations_reached');

    const acts = scheduled(events);
    const iterations = acts.filter((a) => a.name === 'runAgent' && a.input.role === 'iteration');
    expect(iterations).toHaveLength(7);
    // No call carries the rendered memory or the notes' text; the notes come back as references.
    for (const c of iterations) {
      const i = c.input as {
        promptInput: { memory?: unknown };
        memoryRef?: { window: { add: unknown[] }; continuity: unknown; learnings: unknown };
      };
      expect(i.promptInput.memory).toBeUndefined();
      expect(i.memoryRef?.learnings).toMatchObject({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(JSON.stringify(c.input)).not.toContain('the parser handles the error paths');
      expect(JSON.stringify(c.input)).not.toContain('Run the unit tests with node --test');
    }
    // From the 3rd call on (the 1st had an empty memory), only the entries added since the previous call (an iteration's
    // line, its gates, a review, a council round).
    for (const c of iterations.slice(2)) {
      const w = (c.input as { memoryRef: { window: { base: string | null; add: unknown[] } } }).memoryRef.window;
      expect(w.base).toMatch(/^[0-9a-f]{64}$/);
      expect(w.add.length).toBeLessThanOrEqual(6);
    }
    const completed = events
      .filter((e) => e.activityTaskCompletedEventAttributes)
      .map((e) => Buffer.from(e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data ?? new Uint8Array()).toString('utf8'));
    for (const r of completed) expect(r).not.toContain('the parser handles the error paths');
    // A code review and a council round are one activity each (their calls made inside it), the prompts as parts.
    expect(acts.filter((a) => a.name === 'runAgent' && a.input.role !== 'iteration')).toHaveLength(0);
    for (const gone of ['prepareReview', 'writeReviewReport', 'collectEvidence', 'writeTranscript'])
      expect(
        acts.map((a) => a.name),
        gone,
      ).not.toContain(gone);
    const roundActs = acts.filter((a) => a.name === 'councilRound' || a.name === 'reviewRound');
    expect(roundActs.map((a) => a.name)).toEqual(expect.arrayContaining(['councilRound', 'reviewRound']));
    for (const r of roundActs) expect(r.input.leanPrompt).toBe(true);

    // Every prompt the agent read holds the learnings; from the 2nd on, the notes and the run so far.
    const runsDir = path.join(repo, '.vigil', 'runs');
    const runDir = path.join(runsDir, readdirSync(runsDir)[0] as string);
    const promptOf = (n: number): string => readFileSync(path.join(runDir, `iteration-000${n}.prompt.md`), 'utf8');
    for (let n = 1; n <= 7; n++) expect(promptOf(n)).toContain(LESSON.slice(0, 200));
    for (let n = 2; n <= 7; n++) {
      expect(promptOf(n)).toContain(
        NOTES(n - 1)
          .trim()
          .slice(0, 300),
      );
      expect(promptOf(n)).toContain(`- iteration ${n - 1}: `);
    }
    const reviewerPrompt = readdirSync(runDir).find((f) => f.startsWith('reviewer-') && f.endsWith('.prompt.md'));
    expect(readFileSync(path.join(runDir, reviewerPrompt as string), 'utf8')).toContain('VERDICT: PASS');
    // Every member of the round was asked (its own prompt and log) and voted as the scenario says.
    for (const m of [0, 1, 2]) expect(readFileSync(path.join(runDir, `council-round-0001-m${m}.log`), 'utf8')).toContain('VOTE: REJECT');
    expect(final.council.verdicts.at(-1)).toMatchObject({
      result: 'REJECTED',
      approve: 0,
      votes: [{ recorded: 'REJECT' }, { recorded: 'REJECT' }, { recorded: 'REJECT' }],
    });
    expect(final.quality?.lastReview).toMatchObject({ result: 'pass' });

    // Every gated iteration with the memory and the notes (from one iteration call to the next,
    // council rounds aside): at most 8 events and 8 KiB of history (the test's long temporary paths, and after a council round its findings, included).
    const at = (n: number) =>
      events.findIndex(
        (e) =>
          e.activityTaskScheduledEventAttributes?.activityType?.name === 'runAgent' &&
          scheduled([e])[0]?.input.iteration === n &&
          scheduled([e])[0]?.input.role === 'iteration',
      );
    const sizes: { n: number; events: number; bytes: number }[] = [];
    for (let n = 2; n < 7; n++) {
      const window = events.slice(at(n), at(n + 1));
      if (scheduled(window).some((a) => (a.name !== 'runAgent' ? a.name !== 'runGates' : a.input.role !== 'iteration'))) continue; // a council round
      sizes.push({
        n,
        events: window.length,
        bytes: window.reduce(
          (b, e) =>
            b + proto.temporal.api.history.v1.HistoryEvent.encode(e as proto.temporal.api.history.v1.HistoryEvent).finish().byteLength,
          0,
        ),
      });
    }
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    for (const w of sizes) {
      expect(w.events, `iteration ${w.n}`).toBeLessThanOrEqual(8);
      expect(w.bytes, `iteration ${w.n}`).toBeLessThanOrEqual(8 * 1024);
    }
    // Rounds included (a code review and a council round at iteration 5, an activity each): ~10 events per iteration from the 2nd on.
    // The run's end is once per run, not per iteration: its sandbox homes are released by one activity (3 events) after the last iteration.
    const endOfRun = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'releaseRunFiles');
    expect(endOfRun).toHaveLength(1);
    expect((events.slice(at(2)).length - 3 * endOfRun.length) / 6).toBeLessThanOrEqual(11);
  });

  it('a PAUSE during the gate pass a call carries cuts the pass short (the slow test run is killed); after RESUME the run goes on', async () => {
    const repo = makeRepo();
    const marker = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-lean-')), 'slept');
    // The sandboxed test run writes its marker outside the repository only where the worker's
    // operator names the folder (docs/security.md, The agent's sandbox).
    process.env.VIGIL_SANDBOX_WRITABLE = path.dirname(marker);
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' } }, { writes: { 'b.txt': 'b\n' } }] });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const input = loopInput(repo, scenario, {
      ...ONLY_TESTS_AND_SECRETS,
      testCommand: `${PASS_ON_START_TREE}if [ -e ${marker} ]; then true; else touch ${marker}; sleep 30; fi`,
      maxIterations: 2,
    });
    const { outcome, events, pausedAfterMs } = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, input);
      // The suite runs inside iteration 1's agent call, after the agent.
      const deadline = Date.now() + 60_000;
      while (!existsSync(marker)) {
        if (Date.now() > deadline) throw new Error('the test run never started');
        await sleep(100);
      }
      await sleep(1000);
      const t = Date.now();
      await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'look', by: 'test' }] });
      await waitForStatus(handle, (s) => s.status === 'paused' && !s.agentRunning, 60_000);
      // The pass was cut short: the tests did not run their 30 s, and the iteration's agent result stands.
      const pausedAfterMs = Date.now() - t;
      const s = await status(handle);
      expect(s.quality?.gates.find((g) => g.gate === 'tests')).toBeUndefined();
      expect(s.lastIteration).toMatchObject({ iteration: 1, exitCode: 0 });
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'test' }] });
      const outcome = await handle.result();
      return { outcome, events: (await handle.fetchHistory()).events ?? [], pausedAfterMs };
    });
    expect(pausedAfterMs).toBeLessThan(25_000);
    expect(outcome.status).toBe('max_iterations_reached');
    expect(events.some((e) => e.activityTaskCancelRequestedEventAttributes)).toBe(true);
    // Iteration 1's pass came back interrupted; iteration 2's ran the suite (green now).
    const passes = events
      .filter((e) => e.activityTaskCompletedEventAttributes)
      .map(
        (e) =>
          (
            JSON.parse(
              Buffer.from(e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data ?? new Uint8Array()).toString('utf8'),
            ) as { gates?: { interrupted: boolean; tests: { passed: boolean } | null } }
          ).gates,
      )
      .filter((g) => g !== undefined);
    expect(passes.map((g) => [g?.interrupted, g?.tests?.passed ?? null])).toEqual([
      [true, null],
      [false, true],
    ]);
  });

  it('a PAUSE while the agent of a gate-carrying call runs lets the agent finish and skips the pass; STOP --now, even after a PAUSE, kills it', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { sleepBeforeMs: 3000, writes: { 'a.txt': 'a\n' }, appends: { 'ran.txt': '1\n' } },
        { sleepBeforeMs: 30_000, writes: { 'b.txt': 'b\n' }, appends: { 'ran.txt': '2\n' } },
      ],
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const input = loopInput(repo, scenario, { ...ONLY_TESTS_AND_SECRETS, testCommand: 'true', maxIterations: 2 });
    const { outcome, snap } = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, input);
      await waitForStatus(handle, (s) => s.agentRunning && s.iteration === 1, 60_000);
      await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'look', by: 'test' }] });
      await waitForStatus(handle, (s) => s.status === 'paused' && !s.agentRunning, 60_000);
      const paused = await status(handle);
      // The agent finished its work (its own exit), and no gate looked at the tree.
      expect(readFileSync(path.join(repo, 'ran.txt'), 'utf8')).toBe('1\n');
      expect(paused.lastIteration).toMatchObject({ iteration: 1, exitCode: 0 });
      expect(paused.quality?.gates ?? []).toEqual([]);
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'test' }] });
      await waitForStatus(handle, (s) => s.agentRunning && s.iteration === 2, 60_000);
      // A PAUSE first (the call is cancelled for its pass only), then STOP --now: the call learns it within seconds.
      await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'again', by: 'test' }] });
      await sleep(1000);
      const t = Date.now();
      await handle.executeUpdate(stopUpdate, { args: [{ reason: 'enough', by: 'test', now: true }] });
      const outcome = await handle.result();
      expect(Date.now() - t).toBeLessThan(10_000);
      return { outcome, snap: await status(handle) };
    });
    expect(outcome.status).toBe('stopped');
    // Iteration 2's agent was killed before it wrote anything.
    expect(readFileSync(path.join(repo, 'ran.txt'), 'utf8')).toBe('1\n');
    expect(snap.recentIterations.map((r) => r.iteration)).toEqual([1]);
  });

  it('the worker spawns no process per iteration: git goes through its helper, the agent through the supervisor daemon', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [1, 2, 3, 4, 5, 6].map((i) => ({ appends: { 'notes.txt': `${i}\n` } })),
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    // Every spawn of this process (spawn, execFile, execa all go through ChildProcess#spawn).
    const spawned: string[] = [];
    const target = ChildProcess.prototype as unknown as { spawn(options: { file: string }): unknown };
    const original = target.spawn;
    target.spawn = function (this: unknown, options: { file: string }) {
      spawned.push(options.file);
      return original.call(this, options);
    };
    try {
      const outcome = await worker.runUntil(async () =>
        (await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 6 }))).result(),
      );
      expect(outcome).toMatchObject({ status: 'max_iterations_reached', iteration: 6 });
    } finally {
      target.spawn = original;
    }
    // At most the helper and the daemon, each started once (neither when this process has them running).
    expect(spawned.filter((f) => f !== process.execPath)).toEqual([]);
    expect(spawned.length).toBeLessThanOrEqual(2);
  });
});
