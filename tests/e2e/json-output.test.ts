/**
 * Every command's `--json` output, as a script reads it: real `node bin/vigil.js` processes against
 * the suite's Temporal dev server and a `vigil worker` child process, each output parsed with its
 * schema in schemas/cli-output.ts (one JSON document, or JSON lines for the commands that stream:
 * `start --wait`, `watch`, `logs`). A field renamed or a line of text slipped into the output fails
 * here.
 */
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { z } from 'zod';
import {
  CheckpointsJsonSchema,
  DoctorJsonSchema,
  FollowEventSchema,
  ListJsonSchema,
  LogEventSchema,
  MessageJsonSchema,
  RewindJsonSchema,
  ScheduleDeleteJsonSchema,
  ScheduleJsonSchema,
  ScheduleListJsonSchema,
  ScheduleStateJsonSchema,
  ScheduleTriggerJsonSchema,
  StartedJsonSchema,
  StatusJsonSchema,
  WaitJsonSchema,
} from '../../schemas/cli-output.js';
import { ConfigJsonSchema, ProviderResetJsonSchema, ProvidersJsonSchema } from '../../schemas/cli-output-reports.js';
import { breakerWorkflowId, BREAKER_WORKFLOW_TYPE } from '../../workflows/provider-breaker-messages.js';
import {
  agentCalls,
  assertBuilt,
  makeRepo,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  writePrd,
  writeScenario,
  type ScenarioInput,
} from '../support/harness.js';
import { runVigil, show, startWorkerProcess, waitUntil, type CliResult, type VigilOptions, type WorkerProcess } from './cli-helpers.js';

// The CLI's output, not the completion machinery: claims are judged by the evidence gate alone.
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
const started = new Set<string>();
const schedules = new Set<string>();

const baseEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: 'default',
  VIGIL_TASK_QUEUE: taskQueue,
});
const vigil = (args: string[], opts: VigilOptions = {}): Promise<CliResult> => runVigil(args, baseEnv(), opts);
const agent = (scenario: string): string => `"${SCRIPTED_AGENT}" --scenario "${scenario}"`;

/** The whole stdout as one document of the schema (the command exited 0 unless `code` says otherwise). */
function parsed<S extends z.ZodTypeAny>(r: CliResult, schema: S, code = 0): z.infer<S> {
  if (r.code !== code) throw new Error(`expected exit ${code}: ${show(r)}`);
  const result = schema.safeParse(JSON.parse(r.stdout));
  if (!result.success) throw new Error(`output does not match its schema: ${result.error.message}\n${show(r)}`);
  return result.data as z.infer<S>;
}

/** Every line of stdout as a document of the schema. */
function lines<S extends z.ZodTypeAny>(r: CliResult, schema: S, code = 0): z.infer<S>[] {
  if (r.code !== code) throw new Error(`expected exit ${code}: ${show(r)}`);
  const all = r.stdout.split('\n').filter((l) => l !== '');
  if (all.length === 0) throw new Error(`no output: ${show(r)}`);
  return all.map((l, i) => {
    const result = schema.safeParse(JSON.parse(l));
    if (!result.success) throw new Error(`line ${i + 1} does not match its schema: ${result.error.message}\n${l}`);
    return result.data as z.infer<S>;
  });
}

function fixture(name: string, scenario: ScenarioInput): { id: string; repo: string; prd: string; scenario: string } {
  const repo = makeRepo();
  const id = uniqueId(`json-${name}`);
  started.add(id);
  return { id, repo, prd: writePrd(), scenario: writeScenario(repo, scenario) };
}

beforeAll(async () => {
  assertBuilt();
  taskQueue = uniqueId('json-e2e');
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
  if (connection)
    await Promise.all(
      [...started].map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('json e2e cleanup')
          .catch(() => undefined),
      ),
    );
  await worker?.stop();
  await connection?.close();
});

describe.concurrent('--json', () => {
  it('start --wait, watch, wait, status, list (and its filters), checkpoints and logs of a finished run', async ({ expect }) => {
    const f = fixture('done', {
      version: 1,
      iterations: [
        { writes: { 'src/a.txt': 'a\n' }, output: 'working on a \u001b[2J\n' },
        { writes: { 'src/b.txt': 'b\n' } },
        { output: 'all done\n', claim: 'promise' },
      ],
    });
    const s = await vigil(
      ['start', f.prd, '--repo', f.repo, '--agent-command', agent(f.scenario), ...FAST, '--id', f.id, '--wait', '--json'],
      { timeoutMs: 120_000 },
    );
    expect(s.code, show(s)).toBe(0);
    const [first, ...events] = s.stdout.split('\n').filter(Boolean);
    expect(StartedJsonSchema.parse(JSON.parse(first!))).toMatchObject({
      kind: 'started',
      workflowId: f.id,
      repoPath: f.repo,
      remote: false,
      hostWorkerMissing: false,
    });
    const followed = events.map((l) => FollowEventSchema.parse(JSON.parse(l)));
    expect(followed.filter((e) => e.kind === 'iteration').map((e) => (e.kind === 'iteration' ? e.iteration.iteration : 0))).toEqual([
      1, 2, 3,
    ]);
    expect(followed.at(-1)).toMatchObject({ kind: 'finished', exitCode: 0, outcome: { status: 'completion_promise_fulfilled' } });

    const watched = lines(await vigil(['watch', f.id, '--json']), FollowEventSchema);
    expect(watched[0]).toMatchObject({ kind: 'watching', workflowId: f.id });
    expect(watched.at(-1)).toMatchObject({ kind: 'finished', exitCode: 0 });

    expect(parsed(await vigil(['wait', f.id, '--json']), WaitJsonSchema)).toMatchObject({
      workflowId: f.id,
      for: 'terminal',
      reached: true,
      status: 'finished',
      exitCode: 0,
    });
    // A run that finished without pausing: not reached, exit 5, still one JSON document.
    expect(parsed(await vigil(['wait', f.id, '--for', 'paused', '--json']), WaitJsonSchema, 5)).toMatchObject({
      reached: false,
      exitCode: 5,
    });

    expect(parsed(await vigil(['status', f.id, '--json']), StatusJsonSchema)).toMatchObject({
      workflowId: f.id,
      workerAnswered: true,
      status: 'finished',
    });

    const all = parsed(await vigil(['list', '--json', '--limit', '1000']), ListJsonSchema);
    expect(all.map((r) => r.workflowId)).toContain(f.id);
    const mine = await waitUntil('the run under its outcome and repository in visibility', async () => {
      const rows = parsed(await vigil(['list', '--json', '--status', 'completion_promise_fulfilled', '--repo', f.repo]), ListJsonSchema);
      return rows.length ? rows : null;
    });
    expect(mine.map((r) => r.workflowId)).toEqual([f.id]);
    expect(parsed(await vigil(['list', '--json', '--status', 'paused', '--repo', f.repo]), ListJsonSchema)).toEqual([]);
    const table = await vigil(['list', '--repo', f.repo]);
    expect(table.code, show(table)).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^RUN +STATUS +ITER +STARTED +REPOSITORY$/);
    expect(table.stdout.split('\n')[1]).toContain(f.id);
    const bad = await vigil(['list', '--status', 'asleep']);
    expect(bad.code, show(bad)).toBe(2);

    const cps = parsed(await vigil(['checkpoints', f.id, '--json']), CheckpointsJsonSchema);
    expect(cps.list.map((c) => c.iteration)).toEqual([1, 2]);

    const log = lines(await vigil(['logs', f.id, '--iteration', '1', '--json']), LogEventSchema);
    expect(log[0]).toMatchObject({ kind: 'iteration', workflowId: f.id, iteration: 1 });
    // The text as the agent wrote it: JSON escapes the control character itself.
    expect(
      log
        .filter((e) => e.kind === 'text')
        .map((e) => (e.kind === 'text' ? e.text : ''))
        .join(''),
    ).toContain('working on a \u001b[2J');
    const followedLog = lines(await vigil(['logs', f.id, '--iteration', '2', '-f', '--json'], { timeoutMs: 60_000 }), LogEventSchema);
    expect(followedLog.filter((e) => e.kind === 'iteration').map((e) => (e.kind === 'iteration' ? e.iteration : 0))).toEqual([2, 3]);
    expect(followedLog.at(-1)).toMatchObject({ kind: 'finished', workflowId: f.id, outcome: { status: 'completion_promise_fulfilled' } });
  });

  it('pause, input, budget, resume, rewind and stop answer with their acknowledgement; a signal says it was recorded; a refusal prints no answer', async ({
    expect,
  }) => {
    const f = fixture('steer', {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a\n' } }, { writes: { 'b.txt': 'b\n' } }],
      default: { sleepBeforeMs: 1500, output: 'working\n' },
    });
    const s = await vigil([
      'start',
      f.prd,
      '--repo',
      f.repo,
      '--agent-command',
      agent(f.scenario),
      ...FAST,
      '--set',
      'maxIterations=40',
      '--id',
      f.id,
      '--json',
    ]);
    expect(StartedJsonSchema.parse(JSON.parse(s.stdout))).toMatchObject({ workflowId: f.id });
    await waitUntil('two agent calls', () => agentCalls(f.repo).length >= 2, 60_000);

    const me = os.userInfo().username;
    const pause = parsed(await vigil(['pause', f.id, '--reason', 'lunch', '--json']), MessageJsonSchema);
    expect(pause).toMatchObject({ workflowId: f.id, message: 'pause', by: me, acknowledged: true, ack: { paused: true } });
    expect(parsed(await vigil(['wait', f.id, '--for', 'paused', '--json', '--timeout', '60']), WaitJsonSchema)).toMatchObject({
      reached: true,
      status: 'paused',
      pause: { reason: 'lunch', by: me },
    });
    expect(parsed(await vigil(['input', f.id, 'use tabs', '--by', 'alice', '--json']), MessageJsonSchema)).toMatchObject({
      message: 'input',
      by: 'alice',
      acknowledged: true,
    });
    // The council is off for this run: the run refuses the review (exit 2) and nothing is printed as if it were an answer.
    const review = await vigil(['review', f.id, '--json']);
    expect(review.code, show(review)).toBe(2);
    expect(review.stdout).toBe('');
    expect(review.stderr).toContain('the completion council is disabled');
    expect(parsed(await vigil(['budget', f.id, '--usd', '25', '--json']), MessageJsonSchema)).toMatchObject({
      message: 'budget',
      acknowledged: true,
    });
    expect(parsed(await vigil(['resume', f.id, '--signal', '--json']), MessageJsonSchema)).toMatchObject({
      message: 'resume',
      acknowledged: false,
      ack: null,
    });
    await waitUntil(
      'the run to go on after the resume signal',
      async () => !(await client.workflow.getHandle(f.id).query<{ paused: boolean }>('status')).paused,
      30_000,
    );

    const rewound = parsed(
      await vigil(['rewind', f.id, '--to', '1', '--reason', 'try again', '--json'], { timeoutMs: 120_000 }),
      RewindJsonSchema,
    );
    expect(rewound).toMatchObject({ kind: 'rewound', workflowId: f.id, to: 1, by: me });

    expect(parsed(await vigil(['stop', f.id, '--json']), MessageJsonSchema)).toMatchObject({ message: 'stop', acknowledged: true });
    expect(parsed(await vigil(['wait', f.id, '--json', '--timeout', '60']), WaitJsonSchema)).toMatchObject({
      status: 'finished',
      outcome: { status: 'stopped' },
      exitCode: 0,
    });
    // waive needs a checklist; a bad item is a refusal (exit 2), never a half-printed answer.
    const waive = await vigil(['waive', f.id, 'no-such-item', '--json']);
    expect(waive.code, show(waive)).not.toBe(0);
    expect(waive.stdout).toBe('');
  });

  it('schedule create, list, describe, pause, unpause, trigger and delete', async ({ expect }) => {
    const name = uniqueId('json-nightly').replace(/[^A-Za-z0-9._-]/g, '-');
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' }, claim: 'promise' }] });
    schedules.add(name);
    const created = parsed(
      await vigil([
        'schedule',
        'create',
        name,
        '--cron',
        '0 2 * * *',
        '--prd',
        writePrd(),
        '--repo',
        repo,
        '--agent-command',
        agent(scenario),
        ...FAST,
        '--json',
      ]),
      ScheduleJsonSchema,
    );
    expect(created).toMatchObject({ name, cron: '0 2 * * *', timezone: 'UTC', overlap: 'skip', paused: false, repo });
    expect(parsed(await vigil(['schedule', 'list', '--json']), ScheduleListJsonSchema).map((r) => r.name)).toContain(name);
    expect(parsed(await vigil(['schedule', 'describe', name, '--json']), ScheduleJsonSchema)).toMatchObject({ name, runs: 0 });
    expect(parsed(await vigil(['schedule', 'pause', name, '--json']), ScheduleStateJsonSchema)).toMatchObject({
      name,
      paused: true,
      changed: true,
    });
    expect(parsed(await vigil(['schedule', 'pause', name, '--json']), ScheduleStateJsonSchema)).toMatchObject({
      paused: true,
      changed: false,
    });
    expect(parsed(await vigil(['schedule', 'unpause', name, '--json']), ScheduleStateJsonSchema)).toMatchObject({
      paused: false,
      changed: true,
    });
    const triggered = parsed(await vigil(['schedule', 'trigger', name, '--json']), ScheduleTriggerJsonSchema);
    expect(triggered).toMatchObject({ name, result: 'started' });
    if (triggered.workflowId) started.add(triggered.workflowId);
    expect(triggered.workflowId).toMatch(new RegExp(`^${name}-`));
    expect(parsed(await vigil(['schedule', 'delete', name, '--json']), ScheduleDeleteJsonSchema)).toMatchObject({ name, deleted: true });
    schedules.delete(name);
  });

  it('doctor', async ({ expect }) => {
    // Ready or not (exit 0 or 1, by the agent CLIs this machine has), the report is one document.
    const r = await vigil(['doctor', '--json'], { timeoutMs: 180_000 });
    expect([0, 1], show(r)).toContain(r.code);
    const report = parsed(r, DoctorJsonSchema, r.code);
    expect(report.temporal).toMatchObject({ ok: true });
    expect(report.checks.map((c) => c.name)).toContain('agents');
    // A configured command provider: its agent command is checked, not the vendor CLIs.
    const cmd = parsed(
      await vigil(['doctor', '--json'], {
        env: { VIGIL_PROVIDER: 'command', VIGIL_AGENT_COMMAND: `"${SCRIPTED_AGENT}" --scenario x.json` },
      }),
      DoctorJsonSchema,
    );
    expect(cmd.provider).toBe('command');
    expect(cmd.providers).toEqual([]);
    expect(cmd.checks.find((c) => c.name === 'command')).toMatchObject({
      ok: true,
      detail: expect.stringContaining(`${SCRIPTED_AGENT} is executable`),
    });
  });

  it('config, and providers with a reset', async ({ expect }) => {
    const knobs = parsed(await vigil(['config', '--json', '--set', 'maxIterations=7'], { env: { VIGIL_TIER: 'fast' } }), ConfigJsonSchema);
    expect(knobs.find((k) => k.name === 'maxIterations')).toMatchObject({ value: 7, source: 'flag' });
    expect(knobs.find((k) => k.name === 'tier')).toMatchObject({ value: 'fast', source: 'env', env: 'VIGIL_TIER' });
    expect(knobs.find((k) => k.name === 'councilEnabled')).toMatchObject({ value: true, source: 'default' });

    // A breaker of this file's own (a provider name no other test uses), served by this file's worker.
    const provider = uniqueId('jsonp').slice(0, 60);
    const workflowId = breakerWorkflowId(provider);
    started.add(workflowId);
    await client.workflow.start(BREAKER_WORKFLOW_TYPE, { taskQueue, workflowId, args: [{ provider }] });
    // Other files' breakers on the suite's server may have no worker left (exit 4); the document is printed all the same.
    const list = await vigil(['providers', '--json'], { timeoutMs: 120_000 });
    const rows = parsed(list, ProvidersJsonSchema, list.code === 4 ? 4 : 0);
    expect(rows.find((r) => r.provider === provider)).toMatchObject({ workflowId, workerAnswered: true, phase: 'CLOSED', error: null });
    const reset = parsed(await vigil(['providers', '--reset', provider, '--by', 'carol', '--json']), ProviderResetJsonSchema);
    expect(reset).toMatchObject({ provider, workflowId, reset: true, by: 'carol', state: { phase: 'CLOSED' } });
  });
});
