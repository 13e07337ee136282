/**
 * Server durability: stop the dev server mid-run and start it again on the same database file.
 * The run is still there and completes (the dev server's `--db-filename` persistence, with WAL).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freePort, startDevServer, type DevServer } from '../../workers/dev-server.js';
import { createVigilWorker } from '../../workers/worker.js';
import { agentCalls, assertBuilt, makeRepo, loopInput, sleep, uniqueId, writeScenario } from '../support/harness.js';
import { vigilRun } from '../../workflows/run-workflow.js';
import { statusQuery } from '../../workflows/messages.js';

let server: DevServer | undefined;
let dbFile: string;
let port: number;

const boot = async (): Promise<DevServer> => startDevServer({ cliPath: inject('temporalCli'), dbFile, port, headless: true });

beforeAll(async () => {
  assertBuilt();
  dbFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-restart-')), 'temporal.db');
  port = await freePort();
  server = await boot();
});
afterAll(async () => server?.stop());

it('completes a run across a stop and restart of the server on the same database', async () => {
  const repo = makeRepo();
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [
      { writes: { 'a.txt': 'a' }, sleepBeforeMs: 500 },
      { writes: { 'b.txt': 'b' }, sleepBeforeMs: 500 },
      { writes: { 'c.txt': 'c' }, sleepBeforeMs: 1500 },
      { writes: { 'd.txt': 'd' }, sleepBeforeMs: 500 },
      { writes: { 'e.txt': 'e' }, sleepBeforeMs: 500, claim: 'file' },
    ],
  });
  const address = (server as DevServer).address;
  const native = await NativeConnection.connect({ address });
  const tq = uniqueId('restart');
  const worker = await createVigilWorker({ connection: native, namespace: 'default', taskQueue: tq });
  const running = worker.run();
  const workflowId = uniqueId('restart-run');
  try {
    let connection = await Connection.connect({ address });
    await new Client({ connection }).workflow.start(vigilRun, { taskQueue: tq, workflowId, args: [loopInput(repo, scenario)] });
    await connection.close();

    // Mid-run: after iteration 2 has finished.
    while (agentCalls(repo).length < 3) await sleep(100);
    await (server as DevServer).stop();
    await sleep(2000);
    server = await boot();

    connection = await Connection.connect({ address });
    const handle = new Client({ connection }).workflow.getHandle<typeof vigilRun>(workflowId);
    const outcome = await handle.result();
    const snap = await handle.query(statusQuery);
    await connection.close();

    expect(outcome.status).toBe('completion_promise_fulfilled');
    expect(outcome.iteration).toBe(5);
    expect(snap.recentIterations.map((r) => r.iteration)).toEqual([1, 2, 3, 4, 5]);
    // Nothing ran twice except, at most, the iteration that was in flight during the outage.
    const calls = agentCalls(repo).map((c) => c.iteration);
    expect(new Set(calls)).toEqual(new Set([1, 2, 3, 4, 5]));
    expect(calls.length).toBeLessThanOrEqual(6);
  } finally {
    worker.shutdown();
    await running;
    await native.close();
  }
});
