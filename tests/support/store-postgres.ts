/**
 * A test file's Postgres for the event store's own tests: an embedded server started before the
 * file's tests, and after them the event store's pool closed and the server removed. Each test
 * takes a fresh database of its own from it. And the journals and queries those tests share.
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { closeEventStore } from '../../lib/event-store.js';
import { EventEnvelopeSchema, type EventEnvelope, type RunEvent } from '../../schemas/events.js';
import { startTestPostgres, type TestPostgres } from './postgres.js';

/** Registers the file's Postgres; the result makes a fresh database (its URL) once the server is up. */
export function useStorePostgres(): { freshDatabase: (name: string) => Promise<string> } {
  let tp: TestPostgres | undefined;
  beforeAll(async () => {
    tp = await startTestPostgres();
  });
  afterAll(async () => {
    await closeEventStore();
    await tp?.cleanup();
  });
  return {
    freshDatabase: (name) => {
      if (!tp) throw new Error('the test Postgres is not up: useStorePostgres() registers it before the tests run');
      return tp.freshDatabase(name);
    },
  };
}

/** The rows a query answers, on a connection of its own. */
export async function queryRows<T extends pg.QueryResultRow>(url: string, sql: string, args: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql, args)).rows;
  } finally {
    await c.end();
  }
}

/** A run's journal as the workflow sends it: its start in `repo`, then `events`, a minute apart from `t0`. */
export function memoryJournal(runId: string, t0: number, repo: string, events: RunEvent[]): EventEnvelope[] {
  const start: RunEvent = {
    kind: 'run_started',
    prdPath: `${repo}/PRD.md`,
    prdTitle: 'Add numbers',
    repoPath: repo,
    provider: 'command',
    maxIterations: 10,
    budgetUsd: 0,
    autonomyMode: 'perpetual',
  };
  return [start, ...events].map((event, i) =>
    EventEnvelopeSchema.parse({ seq: i + 1, runId, at: new Date(t0 + i * 60_000).toISOString(), event }),
  );
}

/** An iteration's event: it changed the tree, its tests as given. */
export const iterationEvent = (n: number, tests: 'pass' | 'fail' | null = null): RunEvent => ({
  kind: 'iteration',
  iteration: n,
  phase: 'ACT',
  tier: 'development',
  exitCode: 0,
  durationMs: 1,
  changed: true,
  filesChangedSinceStart: 1,
  claimed: false,
  tests,
  provider: 'command',
  model: null,
  costUsd: null,
  attempts: 1,
});

/** The tests gate's event: "adds two numbers" failing, or all passing. */
export const testsGateEvent = (n: number, verdict: 'pass' | 'fail'): RunEvent => ({
  kind: 'gate',
  iteration: n,
  gate: 'tests',
  verdict,
  reason: verdict === 'fail' ? 'npm-test: 1 failed (exit 1); first: adds two numbers' : 'npm-test: 2 passed',
  findings: verdict === 'fail' ? 1 : 0,
});

/** Three failing iterations, then a passing one, then the run's approval. */
export const FAILED_THRICE_THEN_FIXED: RunEvent[] = [
  iterationEvent(1),
  testsGateEvent(1, 'fail'),
  iterationEvent(2),
  testsGateEvent(2, 'fail'),
  iterationEvent(3),
  testsGateEvent(3, 'fail'),
  iterationEvent(4, 'pass'),
  testsGateEvent(4, 'pass'),
  { kind: 'outcome', status: 'council_approved', exitCode: 0, reason: 'approved', iteration: 4 },
];
