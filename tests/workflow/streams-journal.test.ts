/**
 * The journals of parallel streams when the event store goes down as they end: a run split into
 * three tasks (parallelStreams=3, every other knob at its default) whose Postgres (the real
 * embedded one) is stopped for about 30 s right after its streams start. The streams run their
 * iterations and end while it is down, so their last batches wait in the worker's spool (one per
 * stream, checked while the store is down); once it is back every stream's iterations, its outcome
 * and the run's own are in the store, each event once, found by query. Before the spool, a stream
 * that ended while the store was down lost every event it had not projected.
 *
 * The agent is the scripted one behind a small wrapper that picks each stream's scenario by its
 * worktree (`<task>.json`, `parent.json` for the run itself), as in streams.test.ts.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spoolFiles } from '../../lib/event-spool.js';
import { closeEventStore } from '../../lib/event-store.js';
import type { Knobs } from '../../schemas/knobs.js';
import type { Outcome } from '../../schemas/run.js';
import type { TaskList } from '../../schemas/tasks.js';
import { startEmbeddedPostgres } from '../../workers/postgres.js';
import { configuredSpoolDir } from '../../lib/store-location.js';
import {
  fileWorker,
  makeRepo,
  ROOT,
  runInput,
  SCRIPTED_AGENT,
  startRun,
  uniqueId,
  waitForStatus,
  type ScenarioInput,
} from '../support/harness.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { queryRows } from '../support/store-postgres.js';

// The scenarios live beside the wrapper: the sandbox shows the agent program's folder (read-only).
const AGENT_DIR = mkdtempSync(path.join(os.tmpdir(), 'vigil-streams-journal-agent-'));
const WRAPPER = path.join(AGENT_DIR, 'stream-agent.cjs');
writeFileSync(
  WRAPPER,
  `#!/usr/bin/env node
// Runs the scripted agent with the scenario of the stream whose worktree this is (parent.json for the run itself).
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const [agent, scenarios] = process.argv.slice(2);
const m = /[\\\\/]worktrees[\\\\/][^\\\\/]+[\\\\/]([^\\\\/]+)$/.exec(process.cwd());
const r = spawnSync(agent, ['--scenario', path.join(scenarios, (m ? m[1] : 'parent') + '.json')], { stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
`,
);
chmodSync(WRAPPER, 0o755);
// The worker (in this process) shows the agent's sandbox the scripted agent's build (read-only).
process.env.VIGIL_SANDBOX_READABLE = [process.env.VIGIL_SANDBOX_READABLE, ROOT].filter(Boolean).join(':');
// The worker's spool goes under a VIGIL_HOME of this file's own.
const saved = { home: process.env.VIGIL_HOME, url: process.env.DATABASE_URL };
process.env.VIGIL_HOME = mkdtempSync(path.join(os.tmpdir(), 'vigil-streams-journal-home-'));
const shared = fileWorker('streams-journal');

let tp: TestPostgres;
beforeAll(async () => {
  tp = await startTestPostgres();
});
afterAll(async () => {
  await closeEventStore();
  await tp?.cleanup();
  for (const [k, v] of [
    ['VIGIL_HOME', saved.home],
    ['DATABASE_URL', saved.url],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const ROLES = {
  checklist: { default: { output: '[{"id": "REQ-1", "title": "the work exists", "priority": "critical", "verify": "read the files"}]\n' } },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - it is there\n' } },
  reviewer: { default: { output: 'VERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
  council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } },
};

/** A stream that writes `file` in its first iteration and claims in its second, `ms` apart. */
const stream = (file: string, ms: number): ScenarioInput => ({
  version: 1,
  iterations: [
    { writes: { [file]: `${file}\n` }, sleepMs: ms },
    { claim: 'file', sleepMs: ms },
  ],
  default: { claim: 'file' },
  roles: ROLES,
});

const task = (id: string): TaskList[number] => ({
  id,
  title: `task ${id}`,
  items: [{ id: 'REQ-1', title: `${id}.txt exists`, priority: 'high', verify: '' }],
  dependsOn: [],
});

const STORE_DOWN_MS = 30_000;

it('three streams that end while the store is down for 30 s keep every event: the spool holds their last batches, the store gets them all', async () => {
  const url = await tp.freshDatabase('streams_journal');
  process.env.DATABASE_URL = url;
  const spool = configuredSpoolDir(url);
  const repo = makeRepo({ files: { 'README.md': '# s\n\nNotes.\n' } });
  const scenarios = mkdtempSync(path.join(AGENT_DIR, 'scenarios-'));
  const files: Record<string, ScenarioInput> = {
    a: stream('a.txt', 2000),
    b: stream('b.txt', 2000),
    c: stream('c.txt', 2000),
    parent: { version: 1, iterations: [{ claim: 'file' }], default: { claim: 'file' }, roles: ROLES },
  };
  for (const [who, s] of Object.entries(files)) writeFileSync(path.join(scenarios, `${who}.json`), JSON.stringify(s));
  const knobs: Partial<Knobs> = {
    parallelStreams: 3,
    eventStore: true,
    maxIterations: 6,
    agentCommand: [WRAPPER, SCRIPTED_AGENT, scenarios],
  };
  const input = { ...runInput(repo, path.join(scenarios, 'parent.json'), knobs), tasks: [task('a'), task('b'), task('c')] };
  const id = uniqueId('streams-journal');
  const children = ['a', 'b', 'c'].map((t) => `${id}--${t}`);
  const handle = await startRun(shared.env, shared.taskQueue, input, id);

  // The store goes down as soon as the three streams run, before any of their iterations ends.
  await waitForStatus(handle, (s) => (s.streams ?? []).filter((t) => t.state === 'in_progress').length === 3, 120_000);
  await tp.server.stop();
  const downAt = Date.now();
  let ended: Outcome[];
  try {
    ended = await Promise.all(children.map((c) => shared.env.client.workflow.getHandle(c).result() as Promise<Outcome>));
    const endedAfterMs = Date.now() - downAt;
    // Every stream ended while the store was down: its last batch waits in the spool.
    const spooled = spoolFiles(spool).map(
      (f) => (JSON.parse(readFileSync(path.join(spool, f), 'utf8')) as { workflowId: string }).workflowId,
    );
    expect(new Set(spooled.filter((w) => children.includes(w)))).toEqual(new Set(children));
    console.log(`streams ended ${endedAfterMs} ms after the store went down; spool: ${spooled.length} batch(es)`);
    // Down for 30 s in all (longer only when the streams took longer to end, on a busy machine).
    await new Promise((r) => setTimeout(r, Math.max(0, STORE_DOWN_MS - endedAfterMs)));
  } finally {
    tp.server = await startEmbeddedPostgres({ dataDir: tp.dataDir, port: tp.server.port, durable: false });
  }
  const outcome = await handle.result();
  expect(outcome.status).toBe('council_approved');
  expect(ended.map((o) => o.status)).toEqual(['council_approved', 'council_approved', 'council_approved']);

  // The store catches up by itself: every stream's journal, whole and once, and the run's.
  const t0 = Date.now();
  const whole = async (wf: string, iterations: number): Promise<boolean> => {
    const rows = await queryRows<{ seq: number; kind: string }>(
      url,
      'select seq, kind from run_events where workflow_id = $1 order by seq',
      [wf],
    ).catch((err: unknown) => {
      // No table yet: the store went down before any batch migrated it (a busy machine), and the
      // first batch since has not landed yet. Anything else is an error.
      if ((err as { code?: string }).code === '42P01') return [];
      throw err;
    });
    return (
      rows.some((r) => r.kind === 'outcome') &&
      rows.filter((r) => r.kind === 'iteration').length === iterations &&
      rows.every((r, i) => r.seq === i + 1)
    );
  };
  const all = [...children.map((c, i) => [c, ended[i]?.iteration ?? -1] as const), [id, outcome.iteration] as const];
  for (;;) {
    const done = await Promise.all(all.map(([wf, n]) => whole(wf, n)));
    if (done.every(Boolean)) break;
    if (Date.now() - t0 > 90_000) throw new Error(`the store did not catch up: ${JSON.stringify(all.filter((_, i) => !done[i]))}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log(`the store caught up ${Date.now() - t0} ms after the run ended`);
  for (const [i, c] of children.entries()) {
    expect(ended[i]?.iteration).toBeGreaterThanOrEqual(2);
    const runs = await queryRows<{ iterations: number; outcome: string; events: number }>(
      url,
      'select iterations, outcome, events from vigil_runs where workflow_id = $1',
      [c],
    );
    expect(runs).toEqual([{ iterations: ended[i]?.iteration, outcome: 'council_approved', events: expect.any(Number) as unknown }]);
  }
  expect(await queryRows(url, 'select workflow_id, seq, count(*)::int as n from run_events group by 1, 2 having count(*) > 1')).toEqual([]);
  expect(spoolFiles(spool)).toEqual([]);
});
