/**
 * The spool against a real Postgres (the embedded one, stopped and started again on its port): a
 * run that goes on keeps its events while the store is down; the batch that holds its outcome, and
 * any after it, wait in the spool, whole, and land once the store is back — by the worker's timer,
 * after the next projection the store takes, or when a worker starts —, whoever's run they hold,
 * each row once; a file that is not a batch, or a batch the store refuses while it answers, is set
 * aside without holding up the rest, and a store that is down keeps every file.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catchUpJournals, drainSpoolInto, projectEvents } from '../../lib/event-journal.js';
import { spoolable, spoolBatch, spoolFiles } from '../../lib/event-spool.js';
import { closeEventStore, NO_STORE_PROBLEM, onRunEnded, projectEventsTo, useLocalEventStore } from '../../lib/event-store.js';
import type { EventEnvelope } from '../../schemas/events.js';
import { startEmbeddedPostgres } from '../../workers/postgres.js';
import { configuredSpoolDir, localSpoolDir, localStoreUrlFile } from '../../lib/store-location.js';
import { failedRun, runningRun, scriptedRun } from '../support/journals.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { queryRows } from '../support/store-postgres.js';

let tp: TestPostgres;
const saved = { home: process.env.VIGIL_HOME, url: process.env.DATABASE_URL };

beforeAll(async () => {
  tp = await startTestPostgres();
  process.env.VIGIL_HOME = mkdtempSync(path.join(os.tmpdir(), 'vigil-spool-home-'));
});

afterAll(async () => {
  for (const [k, v] of [
    ['VIGIL_HOME', saved.home],
    ['DATABASE_URL', saved.url],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  useLocalEventStore(null);
  await closeEventStore();
  await tp?.cleanup();
});

const stored = (url: string, workflowId: string) =>
  queryRows<{ run_id: string; seq: number; kind: string }>(
    url,
    'select run_id, seq, kind from run_events where workflow_id = $1 order by seq, run_id',
    [workflowId],
  );
const filesUnder = (dir: string): string[] => (readdirSync(dir, { recursive: true }) as string[]).sort();
const keys = (events: EventEnvelope[]) => events.map((e) => ({ run_id: e.runId, seq: e.seq, kind: e.event.kind }));

async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The test's Postgres stopped for the length of `fn`, then started again on its port. */
async function storeDown(fn: () => Promise<void>): Promise<void> {
  await tp.server.stop();
  try {
    await fn();
  } finally {
    tp.server = await startEmbeddedPostgres({ dataDir: tp.dataDir, port: tp.server.port, durable: false });
  }
}

/** A fresh database the worker (this process) projects into, and its spool. */
async function workerStore(name: string): Promise<{ url: string; dir: string }> {
  const url = await tp.freshDatabase(name);
  process.env.DATABASE_URL = url;
  return { url, dir: configuredSpoolDir(url) };
}

const spool = (dir: string, workflowId: string, events: EventEnvelope[]): string => {
  const batch = spoolable({ workflowId, events });
  if (!batch) throw new Error('not a batch');
  const kept = spoolBatch(dir, batch);
  if ('problem' in kept) throw new Error(kept.problem);
  return kept.file;
};

describe('a run that ends while the store is down', () => {
  it('keeps its events while it goes on; its last batch waits in the spool, whole, and the timer stores it once the store is back', async () => {
    const { url, dir } = await workerStore('spool_timer');
    const journal = scriptedRun();
    const n = journal.length;
    expect(journal.at(-2)?.event.kind).toBe('outcome');
    expect(await projectEvents({ workflowId: 'wf-a', events: journal.slice(0, 5) })).toEqual({
      storedThrough: 5,
      written: 5,
      problem: null,
    });
    await storeDown(async () => {
      // Mid-run: nothing taken care of, nothing spooled; the run sends these again at its next boundary.
      const mid = await projectEvents({ workflowId: 'wf-a', events: journal.slice(5, 12) });
      expect(mid).toEqual({ storedThrough: 0, written: 0, problem: expect.stringMatching(/^event store at .* unavailable: /) as unknown });
      expect(spoolFiles(dir)).toEqual([]);
      // The run ends: its pending events, the outcome among them, go to the spool.
      const last = await projectEvents({ workflowId: 'wf-a', events: journal.slice(5, n - 1) });
      expect(last.storedThrough).toBe(n - 1);
      expect(last.written).toBe(0);
      expect(last.problem).toMatch(
        new RegExp(
          `^the run's last ${n - 6} event\\(s\\) wait in the spool on this worker \\(${dir}/.*\\.json\\) until the store takes them: event store at`,
        ),
      );
      // The final notification, after the outcome, goes the same way.
      expect(await projectEvents({ workflowId: 'wf-a', events: journal.slice(n - 1) })).toMatchObject({ storedThrough: n, written: 0 });
      const files = spoolFiles(dir);
      expect(files).toHaveLength(2);
      const first = path.join(dir, files[0] ?? '');
      expect(JSON.parse(readFileSync(first, 'utf8'))).toEqual({
        version: 1,
        workflowId: 'wf-a',
        runIds: ['r-scripted-1', 'r-scripted-2'],
        spooledAt: expect.any(String) as unknown,
        events: JSON.parse(JSON.stringify(journal.slice(5, n - 1))) as unknown,
      });
      expect(statSync(first).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir).filter((f) => !f.endsWith('.json'))).toEqual([]);
    });
    // Nothing else happens in this process: the timer the spool armed stores both batches.
    await until('the spool to drain', () => spoolFiles(dir).length === 0, 60_000);
    expect(await stored(url, 'wf-a')).toEqual(keys(journal));
  });

  it(
    "another worker's spool is drained after the next projection the store takes: every run's batch, each row once, the run-end " +
      'hook after an outcome',
    async () => {
      const { url, dir } = await workerStore('spool_other');
      const a = scriptedRun();
      const b = failedRun();
      // Run A's head reached the store; its batch in the spool overlaps it.
      expect((await projectEventsTo(url, { workflowId: 'wf-other-a', events: a.slice(0, 10) })).written).toBe(10);
      spool(dir, 'wf-other-a', a.slice(5));
      spool(dir, 'wf-other-b', b);
      const ended: string[] = [];
      onRunEnded(async (_url, workflowId) => {
        ended.push(workflowId);
      });
      try {
        expect(await projectEvents({ workflowId: 'wf-mine', events: runningRun() })).toMatchObject({ problem: null });
        await until('the spool to drain', () => spoolFiles(dir).length === 0, 30_000);
        expect(await stored(url, 'wf-other-a')).toEqual(keys(a));
        expect(await stored(url, 'wf-other-b')).toEqual(keys(b));
        expect(ended.sort()).toEqual(['wf-other-a', 'wf-other-b']);
      } finally {
        onRunEnded(null);
      }
    },
  );

  it('a worker starting drains what an earlier one left; two drains at once write each row once', async () => {
    const { url, dir } = await workerStore('spool_start');
    spool(dir, 'wf-start', scriptedRun());
    catchUpJournals();
    await until('the spool to drain', () => spoolFiles(dir).length === 0, 30_000);
    expect(await stored(url, 'wf-start')).toEqual(keys(scriptedRun()));

    const runs = ['wf-twice-1', 'wf-twice-2', 'wf-twice-3'];
    for (const id of runs) spool(dir, id, failedRun());
    const [x, y] = await Promise.all([drainSpoolInto(url, dir), drainSpoolInto(url, dir)]);
    expect(spoolFiles(dir)).toEqual([]);
    expect((x?.written ?? 0) + (y?.written ?? 0)).toBe(3 * failedRun().length);
    expect((x?.rejected ?? 0) + (y?.rejected ?? 0)).toBe(0);
    for (const id of runs) expect(await stored(url, id)).toEqual(keys(failedRun()));
  });
});

describe("a run stopped with stop --now: the store's projection follows the close", () => {
  /** A scripted run whose outcome is `stopped`, by a person, now or in turn. */
  const stopped = (now: boolean): EventEnvelope[] =>
    scriptedRun().map((e) =>
      e.event.kind === 'outcome' ? { ...e, event: { ...e.event, status: 'stopped', reason: `stopped by ana${now ? ' (now)' : ''}` } } : e,
    );

  it('its last batch is answered at once from the spool, and stored right after, each row once, the run-end hook run', async () => {
    const { url, dir } = await workerStore('spool_stop_now');
    const journal = stopped(true);
    const n = journal.length;
    expect(await projectEvents({ workflowId: 'wf-now', events: journal.slice(0, 5) })).toEqual({
      storedThrough: 5,
      written: 5,
      problem: null,
    });
    const ended: string[] = [];
    onRunEnded(async (_url, workflowId) => {
      ended.push(workflowId);
    });
    try {
      // The batch with the outcome: taken care of, from the spool (the workflow acknowledges it and counts it stored).
      expect(await projectEvents({ workflowId: 'wf-now', events: journal.slice(5) })).toEqual({
        storedThrough: n,
        written: n - 5,
        problem: null,
      });
      await until('the spool to drain', () => spoolFiles(dir).length === 0, 30_000);
      expect(await stored(url, 'wf-now')).toEqual(keys(journal));
      await until('the run-end hook', () => ended.includes('wf-now'), 30_000);
    } finally {
      onRunEnded(null);
    }
  });

  it('a run stopped in turn (and one that ended otherwise) is stored before the answer, as before (the control)', async () => {
    const { url, dir } = await workerStore('spool_stop_turn');
    for (const [id, journal] of [
      ['wf-turn', stopped(false)],
      ['wf-done', scriptedRun()],
    ] as const) {
      expect(await projectEvents({ workflowId: id, events: journal })).toEqual({
        storedThrough: journal.length,
        written: journal.length,
        problem: null,
      });
      expect(spoolFiles(dir)).toEqual([]);
      expect(await stored(url, id)).toEqual(keys(journal));
    }
  });
});

describe('what the spool does not keep, or keeps aside', () => {
  it('a file that is not a batch, and a batch the store refuses while it answers, are set aside; the batch after them lands', async () => {
    const url = await tp.freshDatabase('spool_bad');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-spool-'));
    writeFileSync(path.join(dir, '000000000000001-aaaa-1-1.json'), '{"version": 1, "workflowId": "wf-cut", "events": [{"seq": 1, "ru');
    writeFileSync(path.join(dir, '000000000000002-bbbb-1-1.json'), JSON.stringify({ version: 99, workflowId: 'wf-future', events: [] }));
    writeFileSync(
      path.join(dir, '000000000000003-cccc-1-1.json'),
      JSON.stringify({ version: 1, workflowId: 'wf-unkeyed', runIds: [], events: [{ seq: 'one', runId: '', event: { kind: 'outcome' } }] }),
    );
    const good = spool(dir, 'wf-good', failedRun());
    // A writer in the middle of its batch (left alone), and one that died before its rename an hour ago (tidied).
    writeFileSync(path.join(dir, '.000000000000009-dddd-1-1.json.4242.tmp'), '{"version": 1');
    const stale = path.join(dir, '.000000000000008-eeee-1-1.json.4141.tmp');
    writeFileSync(stale, '{"version": 1');
    const hoursAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(stale, hoursAgo, hoursAgo);

    const r = await drainSpoolInto(url, dir);
    expect(r).toEqual({ files: 1, events: failedRun().length, written: failedRun().length, rejected: 3, left: 0, problem: null });
    expect(existsSync(good)).toBe(false);
    expect(await stored(url, 'wf-good')).toEqual(keys(failedRun()));
    expect(readdirSync(dir).sort()).toEqual([
      '.000000000000009-dddd-1-1.json.4242.tmp',
      '000000000000001-aaaa-1-1.json.rejected',
      '000000000000001-aaaa-1-1.json.rejected.reason',
      '000000000000002-bbbb-1-1.json.rejected',
      '000000000000002-bbbb-1-1.json.rejected.reason',
      '000000000000003-cccc-1-1.json.rejected',
      '000000000000003-cccc-1-1.json.rejected.reason',
    ]);
    const reason = (f: string) => readFileSync(path.join(dir, `${f}.json.rejected.reason`), 'utf8');
    expect(reason('000000000000001-aaaa-1-1')).toMatch(/^not JSON: /);
    expect(reason('000000000000002-bbbb-1-1')).toMatch(/^not a spool batch of version 1/);
    expect(reason('000000000000003-cccc-1-1')).toMatch(/no event in the batch has a usable seq and run id/);
    expect(await queryRows(url, 'select count(*)::int as n from run_events')).toEqual([{ n: failedRun().length }]);
  });

  it('a store that is down sets nothing aside: every batch waits for the next pass', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-spool-'));
    const files = [spool(dir, 'wf-wait-1', failedRun()), spool(dir, 'wf-wait-2', scriptedRun())].map((f) => path.basename(f));
    const r = await drainSpoolInto('postgres://vigil:secret@127.0.0.1:1/vigil_events', dir);
    expect(r).toMatchObject({ files: 0, rejected: 0, left: 2, problem: expect.stringMatching(/unavailable/) as unknown });
    expect(spoolFiles(dir)).toEqual(files.sort());
  });

  it('a worker without a store keeps no spool; one whose local store has not started yet spools into its folder', async () => {
    const home = process.env.VIGIL_HOME ?? '';
    const before = filesUnder(home);
    delete process.env.DATABASE_URL;
    useLocalEventStore(null);
    const journal = scriptedRun();
    expect(await projectEvents({ workflowId: 'wf-nostore', events: journal })).toEqual({
      storedThrough: 0,
      written: 0,
      problem: NO_STORE_PROBLEM,
    });
    expect(filesUnder(home)).toEqual(before);

    useLocalEventStore(localStoreUrlFile());
    try {
      const r = await projectEvents({ workflowId: 'wf-local', events: journal });
      expect(r).toMatchObject({ storedThrough: journal.length, written: 0 });
      expect(r.problem).toMatch(/^the run's last \d+ event\(s\) wait in the spool .* no event store on this worker yet/);
      expect(spoolFiles(localSpoolDir())).toHaveLength(1);
      expect(path.dirname(localSpoolDir())).toBe(path.dirname(localStoreUrlFile()));
    } finally {
      useLocalEventStore(null);
    }
  });
});
