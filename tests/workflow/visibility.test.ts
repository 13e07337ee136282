/**
 * What the Temporal UI and `temporal workflow list` show for a run: static summary and details,
 * typed search attributes kept current (status, iteration, repo, provider), the markdown current
 * details, and readable summaries on activities and timers.
 */
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { endpointFromEnv } from '../../cli/connection.js';
import { readPrd } from '../../cli/prd.js';
import { startRun as cliStartRun } from '../../cli/runs.js';
import { SA_ITERATION, SA_PROVIDER, SA_REPO, SA_STATUS } from '../../schemas/search-attributes.js';
import { pauseUpdate, resumeUpdate } from '../../workflows/messages.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  loopInput,
  sleep,
  startRun,
  uniqueId,
  waitForStatus,
  writePrd,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

async function searchAttribute<T>(
  id: string,
  read: (d: Awaited<ReturnType<ReturnType<TestEnv['client']['workflow']['getHandle']>['describe']>>) => T,
  want: T,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = read(await env.client.workflow.getHandle(id).describe());
    if (last === want) return;
    await sleep(200);
  }
  throw new Error(`search attribute stayed ${String(last)}, wanted ${String(want)}`);
}

it('keeps the UI informed: summary, details, search attributes, current details, activity summaries', async () => {
  const repo = makeRepo();
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [{ writes: { 'a.txt': 'a' }, sleepBeforeMs: 1500 }, { exitCode: 1 }, { writes: { 'b.txt': 'b' }, claim: 'promise' }],
  });
  const prd = readPrd(writePrd('# Make a and b\n\nTwo files.\n'));
  const tq = uniqueId('ui');
  const workflowId = uniqueId('ui-run');
  const ep = { ...endpointFromEnv({}), taskQueue: tq };
  const worker = await makeWorker(env, tq);
  await worker.runUntil(async () => {
    const { handle } = await cliStartRun(env.client, env.connection, ep, {
      prd,
      repoPath: repo,
      knobs: loopInput(repo, scenario).knobs,
      workflowId,
    });
    await waitForStatus(handle, (s) => s.agentRunning);
    await searchAttribute(workflowId, (d) => d.typedSearchAttributes.get(SA_STATUS), 'running');

    await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'look at the UI', by: 'dave' }] });
    await searchAttribute(workflowId, (d) => d.typedSearchAttributes.get(SA_STATUS), 'paused');
    const meta = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(meta.currentDetails).toMatch(/Paused by dave/);
    expect(meta.currentDetails).toMatch(/look at the UI/);
    await handle.executeUpdate(resumeUpdate, { args: [{ by: 'dave' }] });

    const outcome = await handle.result();
    expect(outcome.status).toBe('completion_promise_fulfilled');
    const desc = await handle.describe();
    expect(await desc.staticSummary()).toMatch(/^Vigil · Make a and b · /);
    expect(await desc.staticDetails()).toContain(repo);
    expect(desc.typedSearchAttributes.get(SA_STATUS)).toBe('completion_promise_fulfilled');
    expect(desc.typedSearchAttributes.get(SA_ITERATION)).toBe(3);
    expect(desc.typedSearchAttributes.get(SA_REPO)).toBe(repo);
    expect(desc.typedSearchAttributes.get(SA_PROVIDER)).toBe('command');

    const found: string[] = [];
    for await (const wf of env.client.workflow.list({
      query: `VigilStatus = 'completion_promise_fulfilled' AND WorkflowId = '${workflowId}'`,
    }))
      found.push(wf.workflowId);
    expect(found).toEqual([workflowId]);

    const history = await handle.fetchHistory();
    const summaries = (history.events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes || e.timerStartedEventAttributes)
      .map((e) => e.userMetadata?.summary?.data)
      .filter((d): d is Uint8Array => d instanceof Uint8Array)
      .map((d) => JSON.parse(Buffer.from(d).toString('utf8')) as string);
    expect(summaries).toContain('capture run-start commit');
    expect(summaries).toContain('iteration 1 · ACT · tier development');
    expect(summaries).toContain('iteration 2 · REFLECT · tier development');
    // The repository's inspection comes back with the agent call: no activity of its own.
    expect(summaries).not.toContain('inspect repository after iteration 2');
    expect(summaries.some((s) => /^backoff \d+s after failed iteration 2$/.test(s))).toBe(true);
  });
});

it('a run started without the search attributes (searchAttributes: false) upserts none, and replays', async () => {
  const repo = makeRepo();
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [{ writes: { 'a.txt': 'a' } }, { writes: { 'b.txt': 'b' }, claim: 'promise' }],
  });
  const tq = uniqueId('no-sa');
  const worker = await makeWorker(env, tq);
  const handle = await worker.runUntil(async () => {
    const h = await startRun(env, tq, { ...loopInput(repo, scenario), searchAttributes: false }, uniqueId('no-sa-run'));
    expect((await h.result()).status).toBe('completion_promise_fulfilled');
    return h;
  });
  const desc = await handle.describe();
  for (const key of [SA_STATUS, SA_REPO, SA_PROVIDER]) expect(desc.typedSearchAttributes.get(key)).toBeUndefined();
  expect(desc.typedSearchAttributes.get(SA_ITERATION)).toBeUndefined();
  const history = await handle.fetchHistory();
  // Patch markers upsert Temporal's own TemporalChangeVersion (in every namespace); nothing of Vigil's.
  const upserted = (history.events ?? []).flatMap((e) =>
    Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
  );
  expect(upserted.filter((k) => k !== 'TemporalChangeVersion')).toEqual([]);
  await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, history, 'no-search-attributes')).resolves.toBeUndefined();
});
