/**
 * The release stamp against the support window, as a person sees it: `vigil doctor` (its `runs`
 * check, text and JSON) and `vigil worker` (one line at start) list the open runs that a release
 * before the window started, with what to do. The runs are real Temporal workflows on the
 * suite's server, started on a task queue no worker serves (they stay open, nothing runs them),
 * each with the `VigilRelease` stamp a client of that release gives: a stale one (0.3.0, the
 * adversary an upgrade would strand), one of this package's release (the control, never named)
 * and one without a stamp (named as 0.4.0 or earlier: from 0.6.0 on, whose window begins at
 * 0.5.0, certainly before the window too). Once the stale and the unstamped runs are ended, the
 * check is ✓ again. That `vigil start` stamps a run and its streams is checked in
 * tests/e2e/cli.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DoctorJsonSchema } from '../../schemas/cli-output.js';
import { SA_RELEASE } from '../../schemas/search-attributes.js';
import { assertBuilt, ROOT, temporalAddress, uniqueId } from '../support/harness.js';
import { runVigil, show, startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';

const RELEASE = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let connection: Connection;
let client: Client;
let worker: WorkerProcess | undefined;
const ids = { stale: uniqueId('release-stale'), current: uniqueId('release-current'), unstamped: uniqueId('release-unstamped') };
const nobody = uniqueId('release-nobody-polls');

const env = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: 'default',
  VIGIL_TASK_QUEUE: uniqueId('release-worker'),
  VIGIL_PROVIDER: 'command',
  VIGIL_AGENT_COMMAND: 'true',
});

/** A run as a client of `release` starts it (null: a client from before the stamp), on a queue nobody serves. */
async function openRun(workflowId: string, release: string | null): Promise<void> {
  await client.workflow.start('vigilRun', {
    taskQueue: nobody,
    workflowId,
    args: [{}],
    ...(release ? { typedSearchAttributes: [{ key: SA_RELEASE, value: release }] } : {}),
  });
}

beforeAll(async () => {
  assertBuilt();
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: 'default' });
  await openRun(ids.stale, '0.3.0');
  await openRun(ids.current, RELEASE);
  await openRun(ids.unstamped, null);
  // Visibility is eventually consistent: every run is listed before the checks.
  await waitUntil('the three runs listed', async () => {
    let n = 0;
    for await (const wf of client.workflow.list({ query: `TaskQueue = '${nobody}' AND ExecutionStatus = 'Running'` })) if (wf) n += 1;
    return n === 3;
  });
});

afterAll(async () => {
  await worker?.stop();
  for (const id of Object.values(ids))
    await client.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  await connection?.close();
});

describe('runs older than the release window', () => {
  it('vigil doctor names the stale run with what to do, says what an unstamped run may be, and never names the current one', async () => {
    const r = await runVigil(['doctor', '--json'], env(), { timeoutMs: 180_000 });
    const report = DoctorJsonSchema.parse(JSON.parse(r.stdout));
    expect(report.temporal.ok, show(r)).toBe(true);
    const runs = report.temporal.ok ? report.temporal.runs : undefined;
    if (!runs || 'problem' in runs) throw new Error(`no window report: ${show(r)}`);
    expect(runs.outside).toContainEqual({ workflowId: ids.stale, release: '0.3.0', certain: true });
    expect(runs.outside).toContainEqual({ workflowId: ids.unstamped, release: '0.4.0 or earlier (no release stamp)', certain: true });
    expect(runs.outside.map((o) => o.workflowId)).not.toContain(ids.current);
    const check = report.checks.find((c) => c.name === 'runs');
    expect(check).toMatchObject({ ok: false, required: false });
    expect(check?.detail).toContain(`${ids.stale} (0.3.0)`);
    expect(check?.fix).toContain('temporal workflow terminate --workflow-id <id>');

    const text = await runVigil(['doctor'], env(), { timeoutMs: 180_000 });
    expect(text.stdout).toMatch(
      /✗ runs: \d+ of \d+ open runs started before the window \(this release replays runs started by 0\.5\.0 or later\)/,
    );
    expect(text.stdout).toContain('— fix: let them finish (or stop them) on workers of the release that started them');
  });

  it('vigil worker says it in one line at start', async () => {
    worker = await startWorkerProcess(env());
    const line = await waitUntil(
      'the open-runs line',
      () =>
        worker
          ?.output()
          .split('\n')
          .find((l) => l.includes('open runs:')),
      60_000,
    );
    expect(line).toContain('vigil: warning: open runs:');
    expect(line).toContain(`${ids.stale} (0.3.0)`);
    expect(line).not.toContain(ids.current);
    expect(line).toContain('temporal workflow terminate --workflow-id <id>');
    await worker.stop();
    worker = undefined;
  });

  it('the control: once the stale and the unstamped runs are ended, the check is ✓ again and names no run of this release', async () => {
    await client.workflow.getHandle(ids.stale).terminate('ended by the test, as the fix says');
    await client.workflow.getHandle(ids.unstamped).terminate('ended by the test, as the fix says');
    const report = await waitUntil(
      'a report without the stale and the unstamped runs',
      async () => {
        const r = DoctorJsonSchema.parse(JSON.parse((await runVigil(['doctor', '--json'], env(), { timeoutMs: 180_000 })).stdout));
        const runs = r.temporal.ok ? r.temporal.runs : undefined;
        return runs && !('problem' in runs) && !runs.outside.some((o) => o.workflowId === ids.stale || o.workflowId === ids.unstamped)
          ? r
          : null;
      },
      60_000,
      1000,
    );
    const runs = report.temporal.ok ? report.temporal.runs : undefined;
    if (!runs || 'problem' in runs) throw new Error('no window report');
    expect(runs.outside.map((o) => o.workflowId)).not.toContain(ids.current);
    // Other files' runs may be open on the suite's server: only a stale stamp makes the check ✗, and none is left.
    if (runs.outside.every((o) => !o.certain)) expect(report.checks.find((c) => c.name === 'runs')?.ok).toBe(true);
  });
});
