/**
 * Reference command sequences: what the run loop decides, pinned. Each scenario here is recorded
 * fresh with the current code and its command sequence (tests/replay/command-sequence.ts: the
 * activities scheduled, timers, patch markers, search-attribute upserts, updates answered,
 * continue-as-new and the outcome, one line each, without timing) must equal the reference in
 * `sequences/<scenario>.json`. Replay tests prove that old histories still replay; this proves
 * that a refactor of the loop still makes the same decisions on a new run.
 *
 * The scenarios are deterministic: a message is sent only while the workflow waits on something
 * that lasts (a backoff timer of ten minutes, a pause, an agent call that sleeps three seconds),
 * never while it may be between two steps. `VIGIL_SEQUENCE_RUNS=3` records each scenario three
 * times and checks the recordings agree with each other before comparing with the reference.
 *
 * A behaviour change, which goes behind a new `patched()` id, changes these sequences on purpose:
 * re-record them with `VIGIL_RECORD_SEQUENCES=1 npx vitest run tests/replay/sequences.test.ts`
 * and review the diff of `sequences/` in the same commit (new marker lines, and exactly the
 * commands the change meant to add or remove). A diff with no new patch behind it is a bug. A
 * release that deprecates patches turns their marker lines into `... (deprecated)` and changes
 * nothing else (0.5.0: all 33 of 0.4.0's, 74 lines across the three references); the release that
 * deletes their calls deletes those lines and nothing else (0.6.0: those 74, while its
 * deprecations turned 9 lines of 0.5.0's patches into `(deprecated)`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoKnobs } from '../../cli/demo.js';
import { inputUpdate, pauseUpdate, resumeUpdate, rewindUpdate } from '../../workflows/messages.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  ROOT,
  runInput,
  startRun,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { commandSequence, type HistoryLike } from './command-sequence.js';

const SEQUENCES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sequences');
const RECORD = process.env.VIGIL_RECORD_SEQUENCES === '1';
const RUNS = Math.max(1, Number(process.env.VIGIL_SEQUENCE_RUNS ?? '1') || 1);

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

interface Reference {
  scenario: string;
  executions: string[][];
}

const step = (n: number) => ({ writes: { 'step.txt': `${n}\n` } });
/**
 * The rewind and continue-as-new scenarios pin the loop's own mechanics: claims judged by the
 * evidence gate alone, whatever the harness's defaults are. (With the gates on, a pause during an
 * agent call cancels the gate pass it carries.)
 */
const LOOP_ONLY = { councilEnabled: false, qualityGates: false, codeReview: false, prdChecklist: false } as const;

/** Each scenario returns the histories of its executions, first to last. */
const SCENARIOS: { name: string; title: string; record: () => Promise<HistoryLike[]> }[] = [
  {
    name: 'demo',
    title:
      "the demo: a claim refused by the tests gate, a crash whose backoff a pause cuts short, a directive given while paused, the council's split then approval",
    record: async () => {
      const repo = makeRepo({ files: { 'package.json': '{"name":"sample","type":"module","private":true}\n', 'README.md': '# sample\n' } });
      const knobs = demoKnobs(ROOT);
      // The crash's backoff lasts ten minutes: the pause always lands while the run waits on it.
      const input = { ...runInput(repo, '', knobs), knobs: { ...knobs, baseWaitSeconds: 600 } };
      const tq = uniqueId('sequence');
      const worker = await makeWorker(env, tq);
      return worker.runUntil(async () => {
        const handle = await startRun(env, tq, input, uniqueId('sequence-demo'));
        await waitForStatus(handle, (s) => s.status === 'backing_off');
        await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'recording a pause', by: 'sequence-test' }] });
        await waitForStatus(handle, (s) => s.status === 'paused' && !s.agentRunning);
        await handle.executeUpdate(inputUpdate, { args: [{ directive: 'Keep the README short.', by: 'sequence-test' }] });
        await handle.executeUpdate(resumeUpdate, { args: [{ by: 'sequence-test' }] });
        expect((await handle.result()).status).toBe('council_approved');
        return [await handle.fetchHistory()];
      });
    },
  },
  {
    name: 'rewind',
    title: 'a rewind from iteration 4 to 2 with a directive, asked while paused after a pause given during the agent call',
    record: async () => {
      const repo = makeRepo();
      // Iteration 4's agent sleeps 3 s: the pause always lands while the run waits on that call.
      const scenario = writeScenario(repo, { version: 1, iterations: [step(1), step(2), step(3), { ...step(4), sleepMs: 3000 }, step(5)] });
      const tq = uniqueId('sequence');
      const worker = await makeWorker(env, tq);
      return worker.runUntil(async () => {
        const handle = await startRun(env, tq, runInput(repo, scenario, { ...LOOP_ONLY, maxIterations: 4 }), uniqueId('sequence-rewind'));
        await waitForStatus(handle, (s) => s.iteration === 4 && s.agentRunning);
        await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'recording a rewind', by: 'sequence-test' }] });
        await waitForStatus(handle, (s) => s.paused && !s.agentRunning);
        await handle.executeUpdate(rewindUpdate, {
          args: [{ to: 2, by: 'sequence-test', reason: 'back to 2', directive: 'Take another way.' }],
        });
        await handle.executeUpdate(resumeUpdate, { args: [{ by: 'sequence-test' }] });
        expect((await handle.result()).status).toBe('max_iterations_reached');
        return [await handle.fetchHistory()];
      });
    },
  },
  {
    name: 'continue-as-new',
    title:
      'a run that continues as new after two of its three iterations: the execution that hands its state over, and the one that takes it',
    record: async () => {
      const repo = makeRepo();
      const scenario = writeScenario(repo, { version: 1, iterations: [step(1), step(2), step(3)] });
      const tq = uniqueId('sequence');
      const worker = await makeWorker(env, tq);
      return worker.runUntil(async () => {
        const handle = await startRun(
          env,
          tq,
          runInput(repo, scenario, { ...LOOP_ONLY, maxIterations: 3, continueAsNewEvery: 2 }),
          uniqueId('sequence-carry'),
        );
        const firstRunId = (await handle.describe()).runId;
        expect((await handle.result()).status).toBe('max_iterations_reached');
        return [await env.client.workflow.getHandle(handle.workflowId, firstRunId).fetchHistory(), await handle.fetchHistory()];
      });
    },
  },
];

// The scenarios record side by side (one worker each); each still runs its own messages in order.
describe.concurrent('reference command sequences', () => {
  for (const scenario of SCENARIOS) {
    it(`makes the reference decisions in ${scenario.title}`, async () => {
      const recordings: string[][][] = [];
      for (let i = 0; i < RUNS; i += 1) recordings.push((await scenario.record()).map((h) => commandSequence(h)));
      const [first, ...others] = recordings as [string[][], ...string[][][]];
      for (const other of others) expect(other, `${scenario.name}: two recordings of the same scenario differ`).toEqual(first);
      const file = path.join(SEQUENCES, `${scenario.name}.json`);
      if (RECORD) writeFileSync(file, `${JSON.stringify({ scenario: scenario.title, executions: first } satisfies Reference, null, 2)}\n`);
      const reference = JSON.parse(readFileSync(file, 'utf8')) as Reference;
      expect(first, `${scenario.name}: the command sequence differs from sequences/${scenario.name}.json`).toEqual(reference.executions);
    });
  }
});
