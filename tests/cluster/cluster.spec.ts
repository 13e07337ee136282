/**
 * The team deployment's path without Docker: the real Temporal server (built from the Go module
 * proxy at the compose image's version) on a real Postgres with SQL persistence and SQL
 * visibility, set up by the real temporal-sql-tool; `vigil setup --search-attributes`; two `vigil
 * worker` processes on different host queues; the event store on the same Postgres; the demo
 * scenario end to end with `vigil start --wait`, through a kill -9 of the server mid-run, a pause,
 * a VigilStatus query on SQL visibility and a resume.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { execa } from 'execa';
import { temporal } from '@temporalio/proto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createDemoRepo, demoKnobs } from '../../cli/demo.js';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';
import { isListening } from '../../workers/dev-server.js';
import { cleanEnv, runVigil, show, startWorkerProcess, waitUntil, type WorkerProcess } from '../e2e/cli-helpers.js';
import { assertBuilt, CLI, LOOP_ONLY, makeRepo, SCRIPTED_AGENT, writePrd, writeScenario } from '../support/harness.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import {
  clusterServer,
  composeServerVersion,
  createTemporalRole,
  pinnedServerVersion,
  ROOT,
  serverBinaries,
  servicePorts,
  setupSchema,
  type ClusterInfo,
  type ClusterServer,
  type ServerBinaries,
} from './cluster.js';

const NAMESPACE = 'vigil-team';
const TASK_QUEUE = 'vigil-cluster';
const DEMO_ID = 'cluster-demo';
const SIDE_ID = 'cluster-side';
const HOST_A = 'cluster-a';
const HOST_B = 'cluster-b';

let bins: ServerBinaries;
let postgres: TestPostgres | undefined;
let server: ClusterServer | undefined;
let firstStart: ClusterInfo;
let schemaLog = '';
const workers: WorkerProcess[] = [];
let env: Record<string, string> = {};

beforeAll(async () => {
  assertBuilt();
  bins = serverBinaries();
  postgres = await startTestPostgres();
  const login = await createTemporalRole(postgres);
  schemaLog = await setupSchema(bins, login);
  server = await clusterServer(bins, login, mkdtempSync(path.join(os.tmpdir(), 'vigil-cluster-server-')));
  firstStart = await server.start();
  env = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: NAMESPACE,
    VIGIL_TASK_QUEUE: TASK_QUEUE,
    // The event store on the same Postgres as Temporal (its own database, vigil_events).
    VIGIL_DATABASE_URL: postgres.server.url,
  };
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await server?.stop();
  await postgres?.cleanup();
});

function cluster(): ClusterServer {
  if (!server) throw new Error('the server did not start (see beforeAll)');
  return server;
}

async function withClient<T>(fn: (client: Client, connection: Connection) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: cluster().address });
  try {
    return await fn(new Client({ connection, namespace: NAMESPACE }), connection);
  } finally {
    await connection.close();
  }
}

it('serves the frontend, history, matching and worker services of the compose image version on SQL persistence and SQL visibility', async () => {
  expect(pinnedServerVersion()).toBe(composeServerVersion());
  const version = await execa(bins.server, ['--version'], { reject: false });
  expect(version.stdout).toContain(pinnedServerVersion());
  expect(schemaLog).toMatch(/update-schema/);
  expect(firstStart.serverVersion).toBe(pinnedServerVersion());
  expect(firstStart.persistenceStore).toBe('postgres12');
  expect(firstStart.visibilityStore).toBe('postgres12');
  for (const [name, port] of Object.entries(servicePorts(cluster().ports))) {
    expect(await isListening('127.0.0.1', port), `${name} on port ${port}\n${cluster().logTail()}`).toBe(true);
  }
  // The schema is Temporal's, in the two databases the compose deployment has.
  const admin = new pg.Client({ connectionString: postgres?.server.url });
  await admin.connect();
  try {
    const dbs = await admin.query<{ datname: string }>("select datname from pg_database where datname like 'temporal%' order by datname");
    expect(dbs.rows.map((r) => r.datname)).toEqual(['temporal', 'temporal_visibility']);
  } finally {
    await admin.end();
  }
});

it('vigil setup --search-attributes registers them in a namespace of the cluster, once', async () => {
  // The namespace, as deploy/temporal/setup.sh creates it (30 days' retention).
  await withClient(async (_client, connection) => {
    await connection.workflowService.registerNamespace(
      temporal.api.workflowservice.v1.RegisterNamespaceRequest.fromObject({
        namespace: NAMESPACE,
        workflowExecutionRetentionPeriod: { seconds: 720 * 3600 },
      }),
    );
    await waitUntil(
      'the namespace to be known',
      () => connection.workflowService.describeNamespace({ namespace: NAMESPACE }).then(() => true),
      60_000,
      500,
    );
  });
  const first = await runVigil(['setup', '--search-attributes'], env);
  expect(first.code, show(first)).toBe(0);
  expect(first.stdout).toMatch(/registered VigilStatus, VigilIteration, VigilRepo, VigilProvider, VigilRelease in namespace "vigil-team"/);
  const again = await runVigil(['setup', '--search-attributes'], env);
  expect(again.code, show(again)).toBe(0);
  expect(again.stdout).toContain(`namespace "${NAMESPACE}" has Vigil's search attributes already`);
});

/** The demo's knobs (cli/demo.ts) that differ from the defaults, as a config file for `vigil start`. */
function demoConfigFile(): string {
  const knobs = demoKnobs(ROOT);
  const defaults = defaultKnobs();
  const changed: Partial<Record<keyof Knobs, unknown>> = {};
  for (const key of Object.keys(knobs) as (keyof Knobs)[]) {
    if (JSON.stringify(knobs[key]) !== JSON.stringify(defaults[key])) changed[key] = knobs[key];
  }
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-demo-config-')), 'demo.json');
  writeFileSync(file, JSON.stringify(changed, null, 2));
  return file;
}

const StatusSchema = z.object({
  status: z.string(),
  iteration: z.number().nullable(),
  host: z.string().nullable().optional(),
  workerAnswered: z.boolean(),
  pause: z.object({ by: z.string(), reason: z.string().nullable().optional() }).nullable(),
  outcome: z.object({ status: z.string(), exitCode: z.number() }).nullable(),
  eventStore: z.object({ pending: z.number(), dropped: z.number(), problem: z.string().nullable() }).optional(),
});
type Status = z.infer<typeof StatusSchema>;

async function status(id: string): Promise<Status> {
  const r = await runVigil(['status', id, '--json'], env);
  if (r.code !== 0) throw new Error(`vigil status ${id}: ${show(r)}`);
  return StatusSchema.parse(JSON.parse(r.stdout));
}

/** Workflow ids whose VigilStatus search attribute is `value`, by a query of SQL visibility. */
async function withVigilStatus(value: string): Promise<string[]> {
  return withClient(async (client) => {
    const ids: string[] = [];
    for await (const wf of client.workflow.list({ query: `VigilStatus = '${value}'` })) ids.push(wf.workflowId);
    return ids;
  });
}

const HistoryLineSchema = z.object({
  event: z.object({ kind: z.string(), name: z.string().optional(), accepted: z.boolean().optional() }).passthrough(),
});

/** For each activity of a run that ran on a host queue: the queue and the identity of the worker that started it. */
async function hostActivities(id: string): Promise<{ queue: string; identity: string }[]> {
  return withClient(async (client) => {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const queues = new Map<string, string>();
    const out: { queue: string; identity: string }[] = [];
    for (const e of history.events ?? []) {
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (scheduled) queues.set(String(e.eventId), scheduled.taskQueue?.name ?? '');
      const started = e.activityTaskStartedEventAttributes;
      if (started) {
        const queue = queues.get(String(started.scheduledEventId)) ?? '';
        if (queue.includes('@')) out.push({ queue, identity: started.identity ?? '' });
      }
    }
    return out;
  });
}

function identityOf(w: WorkerProcess): string {
  const m = /identity\s+:\s+(\S+)/.exec(w.stdout());
  if (!m?.[1]) throw new Error(`no identity line in the worker's output:\n${w.output()}`);
  return m[1];
}

it(
  'runs the demo scenario on one host and a second run on another, through a server kill -9, a pause and a resume, into the ' +
    'event store on the same Postgres',
  async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-cluster-home-'));
    const workerA = await startWorkerProcess({ ...env, VIGIL_HOME: home }, 90_000, ['--host', HOST_A]);
    workers.push(workerA);
    const workerB = await startWorkerProcess({ ...env, VIGIL_HOME: home }, 90_000, ['--host', HOST_B]);
    workers.push(workerB);
    expect(workerA.stdout()).toContain(`"${TASK_QUEUE}@${HOST_A}"`);
    expect(workerB.stdout()).toContain(`"${TASK_QUEUE}@${HOST_B}"`);
    const cliEnv = { ...env, VIGIL_HOME: home };

    // The demo, as `vigil demo` runs it, but through `vigil start --wait` against the cluster, on host B.
    const demoRepo = createDemoRepo(home, ROOT);
    const demoStart = execa(
      process.execPath,
      [
        CLI,
        'start',
        path.join(ROOT, 'examples/demo/PRD.md'),
        '--repo',
        demoRepo,
        '--host',
        HOST_B,
        '--config',
        demoConfigFile(),
        '--id',
        DEMO_ID,
        '--wait',
      ],
      { env: cleanEnv(cliEnv), extendEnv: false, cwd: home, stdin: 'ignore', all: true, reject: false, timeout: 540_000 },
    );
    let demoOut = '';
    demoStart.all?.on('data', (d: Buffer) => {
      demoOut += d.toString();
    });

    // A second run on host A meanwhile. Its completion machinery is off (LOOP_ONLY): it only shows
    // that the other host's queue serves its run; the demo exercises the default knobs.
    const sideRepo = makeRepo();
    const sideScenario = writeScenario(sideRepo, {
      version: 1,
      iterations: [
        { sleepBeforeMs: 1500, appends: { 'side.txt': '1\n' } },
        { sleepBeforeMs: 1500, appends: { 'side.txt': '2\n' } },
        { appends: { 'side.txt': '3\n' }, claim: 'file' },
      ],
    });
    const loopOnly = Object.entries(LOOP_ONLY).flatMap(([k, v]) => ['--set', `${k}=${String(v)}`]);
    const sideStart = execa(
      process.execPath,
      [
        CLI,
        'start',
        writePrd('# Side PRD\n\nThree steps.\n'),
        '--repo',
        sideRepo,
        '--host',
        HOST_A,
        '--agent-command',
        `${SCRIPTED_AGENT} --scenario ${sideScenario}`,
        ...loopOnly,
        '--set',
        'baseWaitSeconds=1',
        '--id',
        SIDE_ID,
        '--wait',
      ],
      { env: cleanEnv(cliEnv), extendEnv: false, cwd: home, stdin: 'ignore', all: true, reject: false, timeout: 540_000 },
    );

    // Mid-run: once the demo's first iteration is recorded, the server dies without a word.
    await waitUntil('the demo to record iteration 1', () => /iteration 1 · /.test(demoOut) || demoStart.exitCode !== null, 240_000, 200);
    expect(demoStart.exitCode, demoOut).toBeNull();
    const killedPid = cluster().pid();
    await cluster().kill9();
    expect(await isListening('127.0.0.1', cluster().ports.frontend)).toBe(false);
    const restartStarted = Date.now();
    const restarted = await cluster().start();
    expect(cluster().pid()).not.toBe(killedPid);
    process.stderr.write(
      `cluster: server ${killedPid} killed after the demo's iteration 1; ${cluster().pid()} serving again in ` +
        `${((Date.now() - restartStarted) / 1000).toFixed(1)} s\n`,
    );
    expect(restarted.persistenceStore).toBe('postgres12');

    // Pause (the workers reconnect on their own; until then the update has no one to answer it).
    await waitUntil(
      'vigil pause to be acknowledged',
      async () => {
        const r = await runVigil(['pause', DEMO_ID, '--reason', 'cluster check', '--by', 'platform'], cliEnv, { timeoutMs: 60_000 });
        return r.code === 0 ? r : null;
      },
      120_000,
      1_000,
    );
    const paused = await waitUntil(
      'the demo to be paused',
      async () => ((await status(DEMO_ID)).status === 'paused' ? status(DEMO_ID) : null),
      120_000,
      500,
    );
    expect(paused.pause?.by).toBe('platform');
    expect(paused.host).toBe(HOST_B);
    expect(paused.outcome).toBeNull();
    const pausedAt = paused.iteration;
    // The status query of SQL visibility finds it by its search attribute.
    await waitUntil('VigilStatus = paused to find the demo', async () => (await withVigilStatus('paused')).includes(DEMO_ID), 60_000, 500);
    // Still paused a few seconds on: nothing moves while it waits for a person.
    await new Promise((r) => setTimeout(r, 3_000));
    const still = await status(DEMO_ID);
    expect(still.status).toBe('paused');
    expect(still.iteration).toBe(pausedAt);
    expect(demoStart.exitCode).toBeNull();

    const resumed = await runVigil(['resume', DEMO_ID, '--by', 'platform'], cliEnv, { timeoutMs: 60_000 });
    expect(resumed.code, show(resumed)).toBe(0);

    const demo = await demoStart;
    const all = String(demo.all);
    expect(demo.exitCode, `${all}\n--- server ---\n${cluster().logTail()}`).toBe(0);
    // What the demo scenario says (examples/demo/scenario.json; tests/e2e/demo.test.ts checks the same lines).
    expect(all).toMatch(/iteration 2 .*claimed completion/);
    expect(all).toMatch(/PRD checklist: 5 item\(s\), 1 held out from the agent/);
    expect(all).toMatch(
      // The build runs after the tests and only on full passes: it is listed when a pass ran it.
      new RegExp(
        [
          /quality gates on iteration 2: ✓ static analysis · ✓ secret scan · (?:. build · )?✗ tests .*— tests: /.source,
          /(?:full suite \([^)]*\): )?node-test: 2 failed, 1 passed/.source,
        ].join(''),
      ),
    );
    expect(all).toMatch(/completion at iteration 2 refused before the council was asked \(tests\)/);
    expect(all).toMatch(/iteration 3 .*exit 1/);
    expect(all).toMatch(
      new RegExp(
        [
          /code review 1 \(iteration 4\): PASS · requirements-verifier PASS, architecture-strategist PASS, maintain/.source,
          /er-mergeability PASS.* · devil's advocate PASS · mergeability 95/.source,
        ].join(''),
      ),
    );
    expect(all).toMatch(/council round 1 \(iteration 4, tests green\): REJECTED · 1 of 3 approve, 2 needed/);
    expect(all).toMatch(/council round 2 \(iteration 5, claim\): APPROVED · 3 of 3 approve, 2 needed · devil's advocate confirmed/);
    expect(all).toMatch(/finished: council_approved \(exit 0\)/);

    const side = await sideStart;
    expect(side.exitCode, String(side.all)).toBe(0);
    expect(String(side.all)).toMatch(/finished: completion_promise_fulfilled \(exit 0\)/);

    // Every activity on a host queue ran on that host's worker.
    const demoActivities = await hostActivities(DEMO_ID);
    const sideActivities = await hostActivities(SIDE_ID);
    expect(demoActivities.length).toBeGreaterThan(10);
    expect(sideActivities.length).toBeGreaterThan(2);
    expect(new Set(demoActivities.map((a) => `${a.queue} ${a.identity}`))).toEqual(
      new Set([`${TASK_QUEUE}@${HOST_B} ${identityOf(workerB)}`]),
    );
    expect(new Set(sideActivities.map((a) => `${a.queue} ${a.identity}`))).toEqual(
      new Set([`${TASK_QUEUE}@${HOST_A} ${identityOf(workerA)}`]),
    );

    // Finished runs are found by their outcome in SQL visibility.
    await waitUntil(
      'VigilStatus = council_approved to find the demo',
      async () => (await withVigilStatus('council_approved')).includes(DEMO_ID),
      60_000,
      500,
    );

    // The event store on the same Postgres holds the demo's events, the pause and resume among them.
    const final = await status(DEMO_ID);
    expect(final.outcome).toMatchObject({ status: 'council_approved', exitCode: 0 });
    expect(final.eventStore, JSON.stringify(final)).toMatchObject({ pending: 0, dropped: 0, problem: null });
    const report = await runVigil(['report', DEMO_ID], cliEnv);
    expect(report.code, show(report)).toBe(0);
    expect(report.stdout).toMatch(/outcome: council_approved \(exit 0\) at iteration 5/);
    expect(report.stdout).toMatch(/iterations: 5 \(1 failed\) · council rounds: 2 \(1 approved\)/);
    const history = await runVigil(['history', DEMO_ID, '--format', 'jsonl'], cliEnv);
    expect(history.code, show(history)).toBe(0);
    const events = history.stdout
      .trim()
      .split('\n')
      .map((l) => HistoryLineSchema.parse(JSON.parse(l)).event);
    expect(events[0]?.kind).toBe('run_started');
    expect(events.filter((e) => e.kind === 'iteration')).toHaveLength(5);
    expect(events.filter((e) => e.kind === 'council_round')).toHaveLength(2);
    expect(events.filter((e) => e.kind === 'message' && e.accepted).map((e) => e.name)).toEqual(
      expect.arrayContaining(['pause', 'resume']),
    );
    expect(events.filter((e) => e.kind === 'outcome')).toEqual([
      expect.objectContaining({ status: 'council_approved', exitCode: 0, iteration: 5 }),
    ]);
    // In the database itself, beside Temporal's: one row per event, nothing twice.
    const db = new pg.Client({ connectionString: postgres?.server.url });
    await db.connect();
    try {
      const rows = await db.query<{ n: string; iterations: string }>(
        "select count(*) as n, count(*) filter (where kind = 'iteration') as iterations from run_events where workflow_id = $1",
        [DEMO_ID],
      );
      expect(Number(rows.rows[0]?.n)).toBe(events.length);
      expect(Number(rows.rows[0]?.iterations)).toBe(5);
      const sideOutcomes = await db.query<{ n: string }>(
        "select count(*) as n from run_events where workflow_id = $1 and kind = 'outcome'",
        [SIDE_ID],
      );
      expect(Number(sideOutcomes.rows[0]?.n)).toBe(1);
    } finally {
      await db.end();
    }
  },
);
