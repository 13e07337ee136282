/**
 * The run journal projected into a real Postgres (the embedded one) by a real worker: every event
 * kind of a run lands once; a store that is down for three iterations never slows or fails the
 * run, and catches up afterwards with nothing missing; a worker killed right after projections
 * replays them without a duplicate row; a run stopped with `stop --now` mid-call, with the default
 * knobs, closes without the memory judge and has every event of its journal in the store, its
 * outcome and last notification included;
 * no store configured means no extra activity at all.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import { pauseUpdate, resumeUpdate, inputUpdate, stopUpdate } from '../../workflows/messages.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  loopInput,
  runInput,
  sleep,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  WorkerProcesses,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

let env: TestEnv;
let store: TestPostgres;
const workers = new WorkerProcesses();
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
  store = await startTestPostgres();
});
afterAll(async () => {
  workers.killAll();
  delete process.env.DATABASE_URL;
  await store?.cleanup();
  await env?.close();
});

const STORE: Partial<Knobs> = {
  eventStore: true,
  councilEnabled: true,
  councilMinIterations: 1,
  councilCheckInterval: 1000,
  councilEarlyCheck: false,
  councilSize: 1,
  councilThreshold: 1,
  councilMemberTimeoutSeconds: 30,
};

async function rows(url: string, workflowId: string): Promise<{ seq: number; kind: string }[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (
      await c.query<{ seq: number; kind: string }>('select seq, kind from run_events where workflow_id = $1 order by seq', [workflowId])
    ).rows;
  } finally {
    await c.end();
  }
}

const scenario = (n: number) => ({
  version: 1 as const,
  iterations: Array.from({ length: n }, (_, i) => ({
    sleepBeforeMs: 200,
    appends: { 'work.txt': `step ${i + 1}\n` },
    ...(i === n - 1 ? { claim: 'file' as const } : {}),
  })),
  roles: {
    council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } },
    'devils-advocate': { default: { output: 'VOTE: APPROVE\nREASON: fine\n' } },
  },
});

describe('the event store', () => {
  it('every event of a run lands once, messages included (who, what; never a directive text)', async () => {
    const url = await store.freshDatabase('journal_once');
    process.env.DATABASE_URL = url;
    const repo = makeRepo();
    const tq = uniqueId('journal');
    const worker = await makeWorker(env, tq);
    const workflowId = uniqueId('journaled');
    const outcome = await worker.runUntil(async () => {
      const h = await startRun(env, tq, loopInput(repo, writeScenario(repo, scenario(4)), STORE), workflowId);
      await waitForStatus(h, (s) => s.iteration >= 1);
      await h.executeUpdate(inputUpdate, { args: [{ directive: 'secret plan: use the blue database', by: 'ana' }] });
      await h.executeUpdate(pauseUpdate, { args: [{ reason: 'lunch', by: 'ana' }] });
      await h.executeUpdate(resumeUpdate, { args: [{ by: 'ana' }] });
      const o = await h.result();
      expect((await status(h)).eventStore).toMatchObject({ pending: 0, dropped: 0, problem: null });
      return o;
    });
    expect(outcome.status).toBe('council_approved');
    const r = await rows(url, workflowId);
    // One row per sequence number, 1..N without a gap.
    expect(r.map((x) => x.seq)).toEqual(r.map((_, i) => i + 1));
    const kinds = r.map((x) => x.kind);
    expect(kinds[0]).toBe('run_started');
    expect(kinds.filter((k) => k === 'outcome')).toHaveLength(1);
    // The run-finished notification is the last thing a run does.
    expect(kinds.slice(kinds.indexOf('outcome') + 1).every((k) => k === 'notification')).toBe(true);
    expect(kinds.filter((k) => k === 'iteration')).toHaveLength(4);
    expect(kinds.filter((k) => k === 'council_round')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'message')).toHaveLength(3);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const messages = (
      await c.query<{ data: { name: string; by: string; summary: string } }>(
        "select data from run_events where workflow_id = $1 and kind = 'message' order by seq",
        [workflowId],
      )
    ).rows.map((x) => x.data);
    await c.end();
    expect(messages.map((m) => `${m.name}/${m.by}`)).toEqual(['input/ana', 'pause/ana', 'resume/ana']);
    expect(JSON.stringify(messages)).not.toContain('blue database');
  });

  it('a store that is down for three iterations never slows the run; it catches up afterwards with nothing missing', async () => {
    const url = await store.freshDatabase('journal_down');
    // A port nothing listens on: the store is "down" until the run's worker gets the real URL.
    const dead = new URL(url);
    dead.port = '1';
    process.env.DATABASE_URL = dead.toString();
    const repo = makeRepo();
    const tq = uniqueId('journal-down');
    const worker = await makeWorker(env, tq);
    const workflowId = uniqueId('journal-down');
    const outcome = await worker.runUntil(async () => {
      const h = await startRun(env, tq, loopInput(repo, writeScenario(repo, scenario(6)), STORE), workflowId);
      const down = await waitForStatus(h, (s) => s.iteration >= 3 && (s.eventStore?.pending ?? 0) > 0, 60_000);
      expect(down.eventStore?.problem).toMatch(/ECONNREFUSED|connect|unreachable|refused/i);
      expect(down.outcome).toBeNull();
      process.env.DATABASE_URL = url; // the store is back
      return h.result();
    });
    expect(outcome.status).toBe('council_approved');
    const r = await rows(url, workflowId);
    expect(r.map((x) => x.seq)).toEqual(r.map((_, i) => i + 1));
    expect(r.filter((x) => x.kind === 'iteration')).toHaveLength(outcome.iteration);
    expect(r.filter((x) => x.kind === 'outcome')).toHaveLength(1);
  });

  it('a worker SIGKILLed right after projections replays them without a duplicate row', async () => {
    const url = await store.freshDatabase('journal_kill');
    const repo = makeRepo();
    const tq = uniqueId('journal-kill');
    process.env.DATABASE_URL = url;
    const first = await workers.spawn(tq, undefined, { DATABASE_URL: url });
    const workflowId = uniqueId('journal-kill');
    const h = await startRun(env, tq, loopInput(repo, writeScenario(repo, scenario(5)), STORE), workflowId);
    await waitForStatus(h, (s) => s.iteration >= 3 && (s.eventStore?.stored ?? 0) > 0, 60_000);
    first.child.kill('SIGKILL');
    await workers.spawn(tq, undefined, { DATABASE_URL: url });
    const outcome = await h.result();
    expect(outcome.status).toBe('council_approved');
    const r = await rows(url, workflowId);
    expect(r.map((x) => x.seq)).toEqual(r.map((_, i) => i + 1));
    expect(r.filter((x) => x.kind === 'iteration').length).toBeGreaterThanOrEqual(5);
    expect(r.filter((x) => x.kind === 'outcome')).toHaveLength(1);
  });

  it('a run stopped with --now mid-call has every event of its journal in the store', async () => {
    const url = await store.freshDatabase('journal_stop_now');
    process.env.DATABASE_URL = url;
    const repo = makeRepo();
    const tq = uniqueId('journal-stop');
    const worker = await makeWorker(env, tq);
    const workflowId = uniqueId('journal-stop');
    // The product's knobs, the event store on: the first call works, the second is stopped in its middle.
    const stopping = { version: 1 as const, iterations: [{ appends: { 'work.txt': 'step 1\n' } }, { sleepBeforeMs: 120_000 }] };
    const { outcome, journal, activities } = await worker.runUntil(async () => {
      const h = await startRun(env, tq, runInput(repo, writeScenario(repo, stopping), { eventStore: true }), workflowId);
      await waitForStatus(h, (s) => s.iteration >= 2 && s.agentRunning, 60_000);
      await h.executeUpdate(stopUpdate, { args: [{ by: 'ana', now: true }] });
      const o = await h.result();
      const events = (await h.fetchHistory()).events ?? [];
      const scheduled = events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n) => n !== undefined);
      return { outcome: o, journal: (await status(h)).eventStore, activities: scheduled };
    });
    expect(outcome.status).toBe('stopped');
    // It closed without the memory judge (an agent call), its notification and run files' removal side by side.
    expect(activities.slice(-2).sort()).toEqual(['notify', 'releaseRunFiles']);
    expect(activities).not.toContain('judgeMemory');
    // The run's own account: everything it journaled was taken, nothing dropped.
    expect(journal).toMatchObject({ pending: 0, dropped: 0, problem: null });
    const stored = journal?.stored ?? 0;
    // The store holds all of it (the last batch may follow the close by a moment).
    let r = await rows(url, workflowId);
    for (let i = 0; i < 100 && r.length < stored; i++) {
      await sleep(100);
      r = await rows(url, workflowId);
    }
    expect(r.map((x) => x.seq)).toEqual(Array.from({ length: stored }, (_, i) => i + 1));
    const kinds = r.map((x) => x.kind);
    expect(kinds[0]).toBe('run_started');
    expect(kinds.filter((k) => k === 'outcome')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'message')).toHaveLength(1);
    expect(kinds.at(-1)).toBe('notification');
    expect(kinds.slice(kinds.indexOf('outcome') + 1).every((k) => k === 'notification' || k === 'spend')).toBe(true);
  });

  it('without eventStore there is no journal and no projection activity', async () => {
    process.env.DATABASE_URL = await store.freshDatabase('journal_off');
    const repo = makeRepo();
    const tq = uniqueId('journal-off');
    const worker = await makeWorker(env, tq);
    const history = await worker.runUntil(async () => {
      const h = await startRun(env, tq, loopInput(repo, writeScenario(repo, scenario(2)), { ...STORE, eventStore: false }));
      await h.result();
      expect((await status(h)).eventStore).toBeUndefined();
      return h.fetchHistory();
    });
    const markers = (history.events ?? []).filter((e) => JSON.stringify(e.markerRecordedEventAttributes ?? {}).includes('projectEvents'));
    expect(markers).toHaveLength(0);
  });
});
