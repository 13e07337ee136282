/**
 * The event store against a real Postgres (the embedded one, started once for this file):
 * versioned migrations, idempotent projection (retries, overlapping batches, a store that goes
 * down and comes back), and every event kind in its typed view.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeEventStore, ensureMigrated, migrate, MIGRATIONS, NO_STORE_PROBLEM, poolFor, projectEventsTo } from '../../lib/event-store.js';
import { projectEvents } from '../../lib/event-journal.js';
import { RUN_EVENT_KINDS, type EventEnvelope } from '../../schemas/events.js';
import { startEmbeddedPostgres } from '../../workers/postgres.js';
import { oneOfEachKind, scriptedRun } from '../support/journals.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

let tp: TestPostgres;
let db: pg.Pool;

beforeAll(async () => {
  tp = await startTestPostgres();
  db = new pg.Pool({ connectionString: tp.server.url, max: 2 });
  db.on('error', () => undefined);
});

afterAll(async () => {
  await db?.end();
  await closeEventStore();
  await tp?.cleanup();
});

const stored = async (workflowId: string): Promise<{ run_id: string; seq: number; kind: string }[]> =>
  (
    await db.query<{ run_id: string; seq: number; kind: string }>(
      'select run_id, seq, kind from run_events where workflow_id = $1 order by seq, run_id',
      [workflowId],
    )
  ).rows;

/** The postmaster and its children (each backend leads its own process group, so no group signal reaches them all). */
function serverProcesses(postmaster: number): number[] {
  const children = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

const keys = (events: EventEnvelope[]) => events.map((e) => ({ run_id: e.runId, seq: e.seq, kind: e.event.kind }));

describe('migrations', () => {
  it('apply once, are recorded with their version, and a later version applies alone', async () => {
    const url = await tp.freshDatabase('mig_once');
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      expect(await migrate(pool)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const first = (await pool.query('select version, name, applied_at from vigil_schema_migrations order by version')).rows;
      expect(first).toHaveLength(8);
      expect(first[0]).toMatchObject({ version: 1, name: MIGRATIONS[0]?.name });
      expect(first[1]).toMatchObject({ version: 2, name: MIGRATIONS[1]?.name });
      expect(first[2]).toMatchObject({ version: 3, name: MIGRATIONS[2]?.name });
      expect(first[3]).toMatchObject({ version: 4, name: MIGRATIONS[3]?.name });
      expect(first[4]).toMatchObject({ version: 5, name: MIGRATIONS[4]?.name });
      expect(first[5]).toMatchObject({ version: 6, name: MIGRATIONS[5]?.name });
      expect(first[6]).toMatchObject({ version: 7, name: MIGRATIONS[6]?.name });
      expect(await migrate(pool)).toEqual([]);
      expect((await pool.query('select version, name, applied_at from vigil_schema_migrations order by version')).rows).toEqual(first);

      const next = MIGRATIONS.length + 1;
      const more = [...MIGRATIONS, { version: next, name: 'test: one more table', sql: 'create table vigil_test_more (x int)' }];
      expect(await migrate(pool, more)).toEqual([next]);
      expect(await migrate(pool, more)).toEqual([]);
      expect(
        (await pool.query('select version from vigil_schema_migrations order by version')).rows.map((r: { version: number }) => r.version),
      ).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    } finally {
      await pool.end();
    }
  });

  it('two (here: four) migrators at once do not break: one applies, the others find it done', async () => {
    const url = await tp.freshDatabase('mig_race');
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: url, max: 1 }));
    try {
      const results = await Promise.all(pools.map((p) => migrate(p)));
      const all = MIGRATIONS.map((m) => m.version);
      expect(results.filter((r) => r.length === all.length)).toEqual([all]);
      expect(results.filter((r) => r.length === 0)).toHaveLength(3);
      expect((await pools[0]!.query('select count(*)::int as n from vigil_schema_migrations')).rows[0]).toEqual({ n: all.length });
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('projectEvents migrates a new database before its first write, once per process', async () => {
    const url = await tp.freshDatabase('mig_first_write');
    const r = await projectEventsTo(url, { workflowId: 'wf-first', events: scriptedRun().slice(0, 2) });
    expect(r).toEqual({ storedThrough: 2, written: 2, problem: null });
    const a = ensureMigrated(url);
    expect(ensureMigrated(url)).toBe(a);
    await a;
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      expect((await pool.query('select version from vigil_schema_migrations order by version')).rows).toEqual(
        MIGRATIONS.map((m) => ({ version: m.version })),
      );
    } finally {
      await pool.end();
    }
  });
});

describe('projectEvents', () => {
  it('without DATABASE_URL returns the problem and does not throw', async () => {
    const saved = process.env.DATABASE_URL;
    delete process.env.DATABASE_URL;
    try {
      expect(await projectEvents({ workflowId: 'wf', events: scriptedRun().slice(0, 1) })).toEqual({
        storedThrough: 0,
        written: 0,
        problem: NO_STORE_PROBLEM,
      });
    } finally {
      if (saved !== undefined) process.env.DATABASE_URL = saved;
    }
  });

  it('reads DATABASE_URL from the environment', async () => {
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = tp.server.url;
    try {
      expect(await projectEvents({ workflowId: 'wf-env', events: scriptedRun().slice(0, 3) })).toEqual({
        storedThrough: 3,
        written: 3,
        problem: null,
      });
    } finally {
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
    }
  });

  it('writes each envelope once: a retried batch writes nothing, an overlapping batch only the new ones', async () => {
    const journal = scriptedRun();
    const batch1 = journal.slice(0, 10);
    expect(await projectEventsTo(tp.server.url, { workflowId: 'wf-idem', events: batch1 })).toEqual({
      storedThrough: 10,
      written: 10,
      problem: null,
    });
    expect(await projectEventsTo(tp.server.url, { workflowId: 'wf-idem', events: batch1 })).toEqual({
      storedThrough: 10,
      written: 0,
      problem: null,
    });
    const overlapping = journal.slice(6, 16);
    expect(await projectEventsTo(tp.server.url, { workflowId: 'wf-idem', events: overlapping })).toEqual({
      storedThrough: 16,
      written: 6,
      problem: null,
    });
    // The rest, with one duplicate inside the batch itself.
    const rest = [...journal.slice(16), journal[16]!];
    expect(await projectEventsTo(tp.server.url, { workflowId: 'wf-idem', events: rest })).toEqual({
      storedThrough: journal.length,
      written: journal.length - 16,
      problem: null,
    });
    expect(await stored('wf-idem')).toEqual(keys(journal));
    // Another workflow with the same run ids and seqs is another key.
    expect((await projectEventsTo(tp.server.url, { workflowId: 'wf-idem-2', events: batch1 })).written).toBe(10);
  });

  it('a store that is down returns a problem (no throw); the same batch later catches up with nothing missing', async () => {
    const journal = scriptedRun();
    expect((await projectEventsTo(tp.server.url, { workflowId: 'wf-down', events: journal.slice(0, 5) })).written).toBe(5);
    await tp.server.stop();
    let restarted = false;
    try {
      const t0 = Date.now();
      const down = await projectEventsTo(tp.server.url, { workflowId: 'wf-down', events: journal.slice(5, 12) });
      expect(down.storedThrough).toBe(0);
      expect(down.written).toBe(0);
      expect(down.problem).toMatch(/^event store at 127\.0\.0\.1:\d+\/vigil_events unavailable: /);
      expect(down.problem).not.toContain(new URL(tp.server.url).password);
      expect(Date.now() - t0).toBeLessThan(5000);
      tp.server = await startEmbeddedPostgres({ dataDir: tp.dataDir, port: tp.server.port, durable: false });
      restarted = true;
    } finally {
      if (!restarted) tp.server = await startEmbeddedPostgres({ dataDir: tp.dataDir, port: tp.server.port, durable: false });
    }
    // The workflow kept the batch pending and sends it again with what came since.
    expect(await projectEventsTo(tp.server.url, { workflowId: 'wf-down', events: journal.slice(5) })).toEqual({
      storedThrough: journal.length,
      written: journal.length - 5,
      problem: null,
    });
    expect(await stored('wf-down')).toEqual(keys(journal));
  });

  it('a lent connection the server ends (shutdown, restart) does not crash the process; the pool goes on', async () => {
    await projectEventsTo(tp.server.url, { workflowId: 'wf-lent', events: scriptedRun().slice(0, 1) });
    const pool = poolFor(tp.server.url);
    const lent = await pool.connect();
    const pid = (await lent.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
    const ended = new Promise((r) => lent.once('end', r));
    // What a shutdown sends each backend (57P01): the connection ends while lent and not in a query.
    await db.query('select pg_terminate_backend($1)', [pid]);
    await ended;
    // Without a listener on lent connections, the 'error' above is an uncaught exception (the test fails on it).
    await new Promise((r) => setTimeout(r, 100));
    lent.release(true);
    expect((await pool.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('a frozen store (every server process stopped) answers with a problem by the deadline; the batch lands once it thaws', async () => {
    const journal = scriptedRun();
    expect((await projectEventsTo(tp.server.url, { workflowId: 'wf-frozen', events: journal.slice(0, 3) })).written).toBe(3);
    const frozen = serverProcesses(tp.server.pid);
    for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    try {
      const t0 = Date.now();
      const r = await projectEventsTo(tp.server.url, { workflowId: 'wf-frozen', events: journal.slice(3, 6) }, { deadlineMs: 1500 });
      expect(r).toEqual({
        storedThrough: 0,
        written: 0,
        problem: expect.stringMatching(/unavailable: no answer within 1500 ms$/) as unknown,
      });
      expect(Date.now() - t0).toBeLessThan(3000);
    } finally {
      for (const pid of frozen) process.kill(pid, 'SIGCONT');
    }
    // The timed-out write may still commit after the thaw; either way the batch sent again completes the journal.
    let r = await projectEventsTo(tp.server.url, { workflowId: 'wf-frozen', events: journal.slice(3) });
    for (let i = 0; r.problem && i < 20; i++) {
      await new Promise((res) => setTimeout(res, 250));
      r = await projectEventsTo(tp.server.url, { workflowId: 'wf-frozen', events: journal.slice(3) });
    }
    expect(r).toMatchObject({ storedThrough: journal.length, problem: null });
    expect(await stored('wf-frozen')).toEqual(keys(journal));
  });

  it('an unreachable address answers within the connect timeout', async () => {
    const t0 = Date.now();
    const r = await projectEventsTo('postgres://vigil:secret@127.0.0.1:1/vigil_events', {
      workflowId: 'wf',
      events: scriptedRun().slice(0, 1),
    });
    expect(r.problem).toMatch(/unavailable/);
    expect(r.problem).not.toContain('secret');
    expect(Date.now() - t0).toBeLessThan(4000);
  });

  it('keeps an envelope whose event is not valid aside (kind invalid) instead of blocking the journal; strips NUL', async () => {
    const good = scriptedRun()[0]!;
    const bad = { seq: 2, runId: 'r-x', at: good.at, event: { kind: 'iteration', iteration: 'two' } };
    const nul = {
      seq: 3,
      runId: 'r-x',
      at: good.at,
      event: { kind: 'message', name: 'input', by: 'ann\u0000', summary: 'a\u0000b', accepted: true },
    };
    const keyless = { runId: 'r-x', at: good.at, event: good.event };
    const r = await projectEventsTo(tp.server.url, {
      workflowId: 'wf-bad',
      events: [good, bad, nul, keyless] as unknown as EventEnvelope[],
    });
    expect(r).toEqual({ storedThrough: 3, written: 3, problem: null });
    expect((await stored('wf-bad')).map((x) => x.kind)).toEqual(['run_started', 'invalid', 'message']);
    expect((await db.query('select by, summary from vigil_messages where workflow_id = $1', ['wf-bad'])).rows).toEqual([
      { by: 'ann', summary: 'ab' },
    ]);
    expect((await db.query('select count(*)::int as n from vigil_iterations where workflow_id = $1', ['wf-bad'])).rows[0]).toEqual({
      n: 0,
    });
    expect(await projectEventsTo(tp.server.url, { workflowId: '', events: [] })).toMatchObject({
      written: 0,
      problem: expect.stringMatching(/invalid/) as unknown,
    });
    expect(await projectEventsTo(tp.server.url, { workflowId: 'wf-empty', events: [] })).toEqual({
      storedThrough: 0,
      written: 0,
      problem: null,
    });
  });
});

describe('projections', () => {
  it('every event kind round-trips into its view', async () => {
    const events = oneOfEachKind();
    expect(new Set(events.map((e) => e.event.kind))).toEqual(new Set(RUN_EVENT_KINDS));
    expect(await projectEventsTo(tp.server.url, { workflowId: 'wf-kinds', events })).toMatchObject({
      written: events.length,
      problem: null,
    });
    const q = async (sql: string) => (await db.query(sql, ['wf-kinds'])).rows;
    const at = (i: number) => new Date(events[i]!.at);

    // The journal itself: the event as data, the time as a timestamp.
    const raw = await q('select run_id, seq, kind, at, data from run_events where workflow_id = $1 order by seq');
    expect(raw).toEqual(events.map((e) => ({ run_id: e.runId, seq: e.seq, kind: e.event.kind, at: new Date(e.at), data: e.event })));

    expect(
      await q(
        'select seq, at, prd_path, prd_title, repo_path, provider, max_iterations, budget_usd, autonomy_mode from vigil_run_starts where workflow_id = $1',
      ),
    ).toEqual([
      {
        seq: 1,
        at: at(0),
        prd_path: '/p/PRD.md',
        prd_title: 'Kinds',
        repo_path: '/p',
        provider: 'aider',
        max_iterations: 7,
        budget_usd: '3.5',
        autonomy_mode: 'supervised',
      },
    ]);
    expect(
      await q(
        'select iteration, phase, tier, exit_code, duration_ms, changed, files_changed_since_start, claimed, tests, provider, ' +
          'model, cost_usd, attempts, failed from vigil_iterations where workflow_id = $1',
      ),
    ).toEqual([
      {
        iteration: 1,
        phase: 'VERIFY',
        tier: 'planning',
        exit_code: 3,
        duration_ms: 1234,
        changed: false,
        files_changed_since_start: 4,
        claimed: true,
        tests: 'inconclusive',
        provider: 'aider',
        model: 'm-1',
        cost_usd: '0.0123',
        attempts: 2,
        failed: true,
      },
    ]);
    expect(
      await q(
        'select round, iteration, trigger, result, approve, reject, threshold, approved from vigil_council_rounds where workflow_id = $1',
      ),
    ).toEqual([
      { round: 1, iteration: 1, trigger: 'stagnation', result: 'BLOCKED_BY_GATE', approve: 0, reject: 0, threshold: 2, approved: false },
    ]);
    expect(
      await q('select round, iteration, position, member, recorded, approves, reason from vigil_votes where workflow_id = $1'),
    ).toEqual([{ round: 1, iteration: 1, position: 1, member: 2, recorded: 'abstain', approves: false, reason: 'blocked' }]);
    expect(await q('select iteration, gate, verdict, reason, findings from vigil_gates where workflow_id = $1')).toEqual([
      { iteration: 1, gate: 'static_analysis', verdict: 'fail', reason: '2 lint errors', findings: 2 },
    ]);
    expect(await q('select round, iteration, result, mergeability, reviewers, blocking from vigil_reviews where workflow_id = $1')).toEqual(
      [{ round: 1, iteration: 1, result: 'BLOCK', mergeability: 40, reviewers: 2, blocking: 1 }],
    );
    expect(
      await q('select round, reviewer, verdict, blocking from vigil_reviewer_verdicts where workflow_id = $1 order by reviewer'),
    ).toEqual([
      { round: 1, reviewer: 'security', verdict: 'BLOCK', blocking: true },
      { round: 1, reviewer: 'style', verdict: 'PASS', blocking: false },
    ]);
    expect(await q('select iteration, reason, detail, paused from vigil_escalations where workflow_id = $1')).toEqual([
      { iteration: 1, reason: 'gate_stuck', detail: 'static analysis failed 3 times', paused: true },
    ]);
    expect(await q('select event, delivered, failed from vigil_notifications where workflow_id = $1')).toEqual([
      { event: 'escalation', delivered: 2, failed: 1 },
    ]);
    expect(await q('select name, by, summary, accepted from vigil_messages where workflow_id = $1')).toEqual([
      { name: 'input', by: 'erin', summary: 'use eslint --fix', accepted: true },
    ]);
    expect(await q('select iteration, from_tier, to_tier, trigger, climb from vigil_tier_changes where workflow_id = $1')).toEqual([
      { iteration: 1, from_tier: 'development', to_tier: 'planning', trigger: '4 failures at MEDIUM', climb: true },
    ]);
    expect(await q('select iteration, usd, calls, unpriced_calls, budget_usd from vigil_spend where workflow_id = $1')).toEqual([
      { iteration: 1, usd: '0.0123', calls: 2, unpriced_calls: 1, budget_usd: '3.5' },
    ]);
    expect(await q('select status, exit_code, reason, iteration, at from vigil_outcomes where workflow_id = $1')).toEqual([
      { status: 'gate_stuck', exit_code: 20, reason: 'static analysis stuck', iteration: 1, at: at(10) },
    ]);
    expect(
      await q(
        'select started_at, repo, provider, outcome, exit_code, iterations, failed_iterations, spend_usd, unpriced_calls, ' +
          'council_rounds, approved_rounds, escalations, tier_climbs, events from vigil_runs where workflow_id = $1',
      ),
    ).toEqual([
      {
        started_at: at(0),
        repo: '/p',
        provider: 'aider',
        outcome: 'gate_stuck',
        exit_code: 20,
        iterations: 1,
        failed_iterations: 1,
        spend_usd: '0.0123',
        unpriced_calls: 1,
        council_rounds: 1,
        approved_rounds: 0,
        escalations: 1,
        tier_climbs: 1,
        events: 11,
      },
    ]);
  });

  it('derived rows stay single when the same events are projected again', async () => {
    const events = oneOfEachKind();
    expect((await projectEventsTo(tp.server.url, { workflowId: 'wf-kinds', events })).written).toBe(0);
    expect((await db.query('select count(*)::int as n from vigil_runs where workflow_id = $1', ['wf-kinds'])).rows[0]).toEqual({ n: 1 });
    expect((await db.query('select count(*)::int as n from vigil_votes where workflow_id = $1', ['wf-kinds'])).rows[0]).toEqual({ n: 1 });
  });
});

describe('the embedded Postgres', () => {
  it('a second start for the same folder reuses the running server and leaves it running on stop', async () => {
    const again = await startEmbeddedPostgres({ dataDir: tp.dataDir, durable: false });
    expect(again.reused).toBe(true);
    expect(again.url).toBe(tp.server.url);
    expect(again.pid).toBe(tp.server.pid);
    await again.stop();
    expect((await db.query('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
  });

  it("without its server file, finds the running server from Postgres's own pid file", async () => {
    rmSync(path.join(tp.dataDir, 'server.json'));
    const again = await startEmbeddedPostgres({ dataDir: tp.dataDir, durable: false });
    expect(again).toMatchObject({ reused: true, url: tp.server.url, pid: tp.server.pid });
  });

  it('two starts at once on a new folder (mode 0700, owned by root when tests run as root) start one server', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-test-pg-race-'));
    try {
      const both = await Promise.all([
        startEmbeddedPostgres({ dataDir: dir, durable: false }),
        startEmbeddedPostgres({ dataDir: dir, durable: false }),
      ]);
      expect(both.map((b) => b.reused).sort()).toEqual([false, true]);
      expect(both[0].url).toBe(both[1].url);
      const client = new pg.Client({ connectionString: both[0].url });
      await client.connect();
      expect((await client.query<{ db: string }>('select current_database() as db')).rows).toEqual([{ db: 'vigil_events' }]);
      await client.end();
      await Promise.all(both.map((b) => b.stop()));
      expect(existsSync(path.join(dir, 'server.json'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
