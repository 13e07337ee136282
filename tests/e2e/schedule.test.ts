/**
 * `vigil schedule` end to end, as a user drives it, against the suite's dev server and a
 * `vigil worker` process: create a schedule (a cron that will not fire during the test), trigger a
 * run (named NAME-<scheduled time>) that runs to completion, a second trigger while it is still
 * going is skipped (overlap policy skip), pause and unpause (resume), describe and list, delete;
 * bad input (a bad cron, an unknown overlap policy, a name taken, a bad prompt template) is exit 2,
 * an unknown schedule exit 3.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { assertBuilt, makeRepo, SCRIPTED_AGENT, temporalAddress, uniqueId, writePrd, writeScenario } from '../support/harness.js';
import { runVigil, show, startWorkerProcess, type CliResult, type VigilOptions, type WorkerProcess } from './cli-helpers.js';
import { patient } from '../support/patience.js';

const FAST = [
  '--set',
  'baseWaitSeconds=1',
  '--set',
  'backoffJitterSeconds=0',
  '--set',
  'heartbeatTimeoutSeconds=5',
  '--set',
  'councilEnabled=false',
  '--set',
  'qualityGates=false',
  '--set',
  'codeReview=false',
  '--set',
  'prdChecklist=false',
];

let taskQueue: string;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;
let client: Client;
const schedules = new Set<string>();

const baseEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: 'default',
  VIGIL_TASK_QUEUE: taskQueue,
});
const vigil = (args: string[], opts: VigilOptions = {}): Promise<CliResult> => runVigil(args, baseEnv(), opts);

beforeAll(async () => {
  assertBuilt();
  taskQueue = uniqueId('schedule-e2e');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: 'default' });
  worker = await startWorkerProcess(baseEnv());
});

afterAll(async () => {
  for (const s of schedules)
    await client.schedule
      .getHandle(s)
      .delete()
      .catch(() => undefined);
  await worker?.stop();
  await connection?.close();
});

it(
  'create, trigger (a run), trigger again while it runs (skipped), pause, unpause, describe, list, delete',
  async () => {
    const name = uniqueId('nightly').replace(/[^A-Za-z0-9._-]/g, '-');
    const repo = makeRepo();
    const prd = writePrd();
    // The first iteration takes a while, so the run is still going at the second trigger.
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ sleepBeforeMs: 6000, writes: { 'a.txt': 'a\n' } }, { claim: 'promise' }],
    });
    schedules.add(name);
    const created = await vigil([
      'schedule',
      'create',
      name,
      '--cron',
      '0 2 * * *',
      '--prd',
      prd,
      '--repo',
      repo,
      '--agent-command',
      `"${SCRIPTED_AGENT}" --scenario "${scenario}"`,
      ...FAST,
    ]);
    expect(created.code, show(created)).toBe(0);
    expect(created.stdout).toContain(`created schedule ${name}: 0 2 * * * (UTC), overlap skip`);
    expect(created.stdout).toMatch(new RegExp(`next {7}: \\d{4}-\\d\\d-\\d\\dT02:00:00\\.000Z`));

    const listed = await vigil(['schedule', 'list', '--json']);
    expect(listed.code, show(listed)).toBe(0);
    expect(JSON.parse(listed.stdout)).toContainEqual(expect.objectContaining({ name, cron: '0 2 * * *', paused: false, last: null, repo }));

    const first = await vigil(['schedule', 'trigger', name]);
    expect(first.code, show(first)).toBe(0);
    const runId = /started run (\S+)/.exec(first.stdout)?.[1] ?? '';
    // Temporal names each scheduled run after the schedule's workflow id and the scheduled time.
    expect(runId).toMatch(new RegExp(`^${name.replace(/\./g, '\\.')}-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`));

    const second = await vigil(['schedule', 'trigger', name]);
    expect(second.code, show(second)).toBe(0);
    expect(second.stdout).toContain(`skipped: ${runId} is still going (overlap policy skip)`);

    const waited = await vigil(['wait', runId, '--timeout', '120'], { timeoutMs: 150_000 });
    expect(waited.code, show(waited)).toBe(0);
    expect(waited.stdout).toContain('completion_promise_fulfilled');

    const described = await vigil(['schedule', 'describe', name, '--json']);
    expect(described.code, show(described)).toBe(0);
    const d = JSON.parse(described.stdout) as Record<string, unknown>;
    expect(d).toMatchObject({
      name,
      cron: '0 2 * * *',
      overlap: 'skip',
      paused: false,
      runs: 1,
      skippedOverlap: 1,
      prd,
      repo,
      workflowIdPrefix: name,
    });
    expect((d.recent as { workflowId: string }[]).map((r) => r.workflowId)).toEqual([runId]);
    // Only one run of the schedule exists: the skipped trigger started nothing.
    const runs: string[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH '${name}-'` })) runs.push(w.workflowId);
    expect(runs).toEqual([runId]);

    const paused = await vigil(['schedule', 'pause', name, '--reason', 'release freeze']);
    expect(paused.code, show(paused)).toBe(0);
    expect(JSON.parse((await vigil(['schedule', 'describe', name, '--json'])).stdout)).toMatchObject({
      paused: true,
      note: 'release freeze',
    });
    const resumed = await vigil(['schedule', 'resume', name]);
    expect(resumed.code, show(resumed)).toBe(0);
    expect(resumed.stdout).toContain(`schedule ${name} unpaused`);
    expect(JSON.parse((await vigil(['schedule', 'describe', name, '--json'])).stdout)).toMatchObject({ paused: false });

    const again = await vigil(['schedule', 'create', name, '--cron', '0 3 * * *', '--prd', prd, '--repo', repo, '--agent-command', 'x']);
    expect(again.code, show(again)).toBe(2);
    expect(again.stderr).toContain(`a schedule named "${name}" exists already`);

    const deleted = await vigil(['schedule', 'delete', name]);
    expect(deleted.code, show(deleted)).toBe(0);
    schedules.delete(name);
    const gone = await vigil(['schedule', 'describe', name]);
    expect(gone.code, show(gone)).toBe(3);
    expect(gone.stderr).toContain(`no such schedule: "${name}"`);
    expect(JSON.parse((await vigil(['schedule', 'list', '--json'])).stdout)).not.toContainEqual(expect.objectContaining({ name }));
  },
  patient(240_000),
);

it(
  'refuses bad input with exit 2, and an unknown schedule with exit 3',
  async () => {
    const repo = makeRepo();
    const prd = writePrd();
    const create = (extra: string[]): Promise<CliResult> =>
      vigil(['schedule', 'create', 'bad-input', '--prd', prd, '--repo', repo, '--agent-command', 'my-agent', ...extra]);

    const badCron = await create(['--cron', 'every night']);
    expect(badCron.code, show(badCron)).toBe(2);
    expect(badCron.stderr).toContain('--cron "every night" is not a cron expression: give 5 fields');
    const serverRefused = await create(['--cron', '99 2 * * *']);
    expect(serverRefused.code, show(serverRefused)).toBe(2);
    expect(serverRefused.stderr).toContain('the server refused the schedule');
    const badOverlap = await create(['--cron', '0 2 * * *', '--overlap', 'sometimes']);
    expect(badOverlap.code, show(badOverlap)).toBe(2);
    const badName = await vigil([
      'schedule',
      'create',
      'no spaces',
      '--cron',
      '0 2 * * *',
      '--prd',
      prd,
      '--repo',
      repo,
      '--agent-command',
      'x',
    ]);
    expect(badName.code, show(badName)).toBe(2);

    const template = path.join(repo, '..', `${path.basename(repo)}-bad-template.md`);
    writeFileSync(template, '{{directives}}\n{{completion}}\nIteration {{iteraton}}\n');
    const badTemplate = await create(['--cron', '0 2 * * *', '--set', `promptTemplate=${template}`]);
    expect(badTemplate.code, show(badTemplate)).toBe(2);
    expect(badTemplate.stderr).toContain('line 3: unknown placeholder {{iteraton}}; did you mean {{iteration}}?');
    const startBadTemplate = await vigil(['start', prd, '--repo', repo, '--agent-command', 'x', '--set', `promptTemplate=${template}`]);
    expect(startBadTemplate.code, show(startBadTemplate)).toBe(2);
    expect(startBadTemplate.stderr).toContain('prompt template (knob "promptTemplate" from --set promptTemplate=');

    for (const verb of ['trigger', 'pause', 'unpause', 'delete', 'describe']) {
      const r = await vigil(['schedule', verb, 'no-such-schedule-here']);
      expect(r.code, `${verb}: ${show(r)}`).toBe(3);
    }
    // Nothing was created by the refused commands.
    expect(JSON.parse((await vigil(['schedule', 'list', '--json'])).stdout)).not.toContainEqual(
      expect.objectContaining({ name: 'bad-input' }),
    );
  },
  patient(120_000),
);
