/**
 * `vigil review <run>` and `vigil waive <run> <item>` sent to a run with attempts
 * (workflows/attempts-steer.ts, docs/attempts.md) on a real Temporal server, every knob at the
 * product's default but time (tests/support/attempts.ts), the sandbox on, the scripted agent playing
 * every role of every attempt: both reach every live attempt, asserted on each attempt's own history
 * and status (the waiver on its checklist), not on what the run says of itself; a waiver of an item
 * no attempt has reaches them and each lists it as invalid. A run started as the release before
 * started them (`forwarding` without `forwardsAlso`) refuses both and tells its attempts nothing,
 * while the pause it forwarded then still reaches them: the old path, unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '@temporalio/worker';
import type { AttemptsInput } from '../../schemas/attempts.js';
import type { Outcome } from '../../schemas/run.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { assertBuilt, createTestEnv, makeWorker, temporalAddress, uniqueId, type TestEnv } from '../support/harness.js';
import { attemptsInput, attemptScenarios, attemptsRepo, type Script } from '../support/attempts.js';
import { runVigil, show } from '../e2e/cli-helpers.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
const TQ = uniqueId('attempts-forward');
const cli = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  VIGIL_TASK_QUEUE: TQ,
  PATH: process.env.PATH ?? '',
});
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

/** Never right and never claiming done: keeps iterating until told otherwise, its council convened only when asked. */
const WANDERING: Script = {
  iterations: [],
  default: { appends: { 'src/feature.js': '/** The feature (wandering). */\nexport const feature = 2;\n' } },
};

async function until<T>(what: string, ask: () => Promise<T>, ok: (v: T) => boolean, ms = 300_000): Promise<T> {
  const deadline = Date.now() + patient(ms);
  let v = await ask();
  while (!ok(v)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)?.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 300));
    v = await ask();
  }
  return v;
}

const snapshot = (id: string): Promise<StatusSnapshot | null> =>
  env.client.workflow
    .getHandle(id)
    .query<StatusSnapshot>('status')
    .catch(() => null);

/** The payloads of the signals named `name` in a run's history, decoded. */
async function signalsIn(id: string, name: string): Promise<Record<string, unknown>[]> {
  const history = await env.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const a = e.workflowExecutionSignaledEventAttributes;
    if (!a || a.signalName !== name) return [];
    const data = a.input?.payloads?.[0]?.data;
    if (!data) return [{}];
    const bytes = typeof data === 'string' ? Buffer.from(data, 'base64') : Buffer.from(data);
    return [JSON.parse(bytes.toString('utf8')) as Record<string, unknown>];
  });
}

/** Starts a run with two wandering attempts; `older`: as a release before `forwardsAlso` started it. */
async function startWandering(runId: string, older = false) {
  const r = attemptsRepo();
  const input: AttemptsInput = { ...attemptsInput(r, attemptScenarios({}, [WANDERING, WANDERING]), 2) };
  input.run.knobs = { ...input.run.knobs, maxIterations: 50 };
  if (!older) input.forwardsAlso = ['forceReview', 'waive'];
  const handle = await env.client.workflow.start('vigilAttempts', { taskQueue: TQ, workflowId: runId, args: [input] });
  const ids = [`${runId}-attempt-1`, `${runId}-attempt-2`];
  // Each attempt under way, its checklist (REQ-1, from the checklist role) extracted.
  await until(
    'both attempts under way with their checklist',
    () => Promise.all(ids.map(snapshot)),
    (s) => s.every((x) => x !== null && x.iteration >= 1 && (x.quality?.checklist ?? []).some((i) => i.id === 'REQ-1')),
  );
  return { handle, ids };
}

async function stopAndEnd(runId: string, handle: { result: () => Promise<unknown> }): Promise<Outcome> {
  const stopped = await runVigil(['stop', runId, '--now', '--by', 'tester'], cli());
  expect(stopped.code, show(stopped)).toBe(0);
  return (await handle.result()) as Outcome;
}

describe('a run with attempts, reviewed and waived as one run', () => {
  it(
    'review and waive sent to the run reach every attempt; a run started before forwardsAlso refuses them and tells none',
    async () => {
      const runId = uniqueId('forward-run');
      const { handle, ids } = await startWandering(runId);

      const review = await runVigil(['review', runId, '--reason', 'look now', '--by', 'alice'], cli());
      expect(review.code, show(review)).toBe(0);
      expect(review.stdout).toContain('council review requested of attempt(s) 1, 2: each convenes at its next iteration boundary');
      const waive = await runVigil(['waive', runId, 'REQ-1', '--reason', 'out of scope', '--by', 'bob'], cli());
      expect(waive.code, show(waive)).toBe(0);
      expect(waive.stdout).toContain('waiver of REQ-1 sent to attempt(s) 1, 2');

      for (const id of ids) {
        // The review request reached the attempt, from alice, and was taken (not listed as invalid).
        expect(await signalsIn(id, 'forceReview')).toEqual([{ reason: 'look now', by: 'alice' }]);
        // The waiver is on the attempt's own checklist, by bob.
        const s = await until(
          `${id}'s checklist item waived`,
          () => snapshot(id),
          (x) => (x?.quality?.checklist ?? []).some((i) => i.id === 'REQ-1' && i.waived),
        );
        expect(s?.invalidMessages.filter((m) => m.name === 'forceReview' || m.name === 'waive')).toEqual([]);
      }

      // Adversarial: a waiver of an item no attempt has is sent on, and each attempt refuses it as a run refuses it.
      const bogus = await runVigil(['waive', runId, 'REQ-9', '--by', 'bob'], cli());
      expect(bogus.code, show(bogus)).toBe(0);
      expect(bogus.stdout).toContain('an attempt without that item lists it among its invalid messages');
      for (const id of ids)
        await until(
          `${id} listing the bogus waiver as invalid`,
          () => snapshot(id),
          (x) => (x?.invalidMessages ?? []).some((m) => m.name === 'waive' && /REQ-9/.test(m.error)),
        );

      expect((await stopAndEnd(runId, handle)).status).toBe('stopped');
      // Ended: refused, saying so.
      const late = await runVigil(['review', runId], cli());
      expect(late.code, show(late)).not.toBe(0);

      // Control: a run started as before (forwarding without forwardsAlso) has no such handler; its attempts hear nothing.
      const oldId = uniqueId('forward-old');
      const old = await startWandering(oldId, true);
      const refused = await runVigil(['review', oldId, '--by', 'alice'], cli());
      expect(refused.code, show(refused)).not.toBe(0);
      const refusedWaive = await runVigil(['waive', oldId, 'REQ-1', '--by', 'bob'], cli());
      expect(refusedWaive.code, show(refusedWaive)).not.toBe(0);
      // The pause it does forward still reaches them: the old path is the old path, not a dead one.
      const paused = await runVigil(['pause', oldId, '--by', 'alice'], cli());
      expect(paused.stdout).toContain('paused: sent to attempt(s) 1, 2');
      for (const id of old.ids) {
        expect(await signalsIn(id, 'forceReview')).toEqual([]);
        expect(await signalsIn(id, 'waive')).toEqual([]);
      }
      expect((await stopAndEnd(oldId, old.handle)).status).toBe('stopped');
    },
    patient(600_000),
  );
});
