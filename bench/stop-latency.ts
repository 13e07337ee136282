/**
 * Benchmark (not a test): how long `stop --now` takes, from the update being sent to the run
 * closed and the agent's whole process tree gone, at random points of the agent call, while
 * `--runs` other runs keep their agents busy on the same worker (each heartbeating as usual).
 *
 * `--gates`: the runs have their quality gates on, so each agent call carries its gate pass and a
 * STOP --now reaches the agent through the call's question to the workflow (`vigil.callCancel`).
 *
 * `--store on` (default): the runs project their events into an event store, an embedded Postgres
 * the bench starts as `vigil up` does (durable, as a store people keep), the way `vigil start`
 * turns the store on where one is configured; `--store off`: none (`vigil start --no-store`).
 *
 * `--breakdown`: each trial's history from the stop on, every event's time after the stop's.
 *
 * Usage: npm run build && node dist/bench/stop-latency.js [--runs 20] [--trials 10] [--gates] [--store on|off] [--breakdown]
 * (a dev server of its own; TEMPORAL_ADDRESS=host:port uses a running one instead)
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { closeEventStore } from '../lib/event-store.js';
import { defaultKnobs } from '../schemas/knobs.js';
import type { RunInput } from '../schemas/run.js';
import { freePort, startDevServer, type DevServer } from '../workers/dev-server.js';
import { startEmbeddedPostgres } from '../workers/postgres.js';
import { resolveTemporalCli } from '../workers/temporal-cli.js';
import { DEFAULT_TUNING } from '../workers/tuning.js';
import { createVigilWorker } from '../workers/worker.js';
import { statusQuery, stopUpdate } from '../workflows/messages.js';
import { benchArgs, fail, numberArg } from './args.js';
import { benchScratch } from './scratch.js';
import { vigilRun } from '../workflows/run-workflow.js';
import { execFileSync } from 'node:child_process';

const USAGE =
  'usage: node dist/bench/stop-latency.js [--runs N (default 20)] [--trials N (default 10)] [--gates] [--store on|off (default on)] [--breakdown]';
const values = benchArgs('stop-latency', USAGE, {
  runs: { type: 'string', default: '20' },
  trials: { type: 'string', default: '10' },
  gates: { type: 'boolean', default: false },
  store: { type: 'string', default: 'on' },
  breakdown: { type: 'boolean', default: false },
});
if (values.store !== 'on' && values.store !== 'off')
  fail('stop-latency', USAGE, `--store: ${JSON.stringify(values.store)} is not on or off`);
const STORE = values.store === 'on';
const RUNS = numberArg('stop-latency', USAGE, 'runs', values.runs, { min: 1, integer: true });
const TRIALS = numberArg('stop-latency', USAGE, 'trials', values.trials, { min: 1, integer: true });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Alive, and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Processes whose command line holds `text` (the shell running it, and the command itself). */
function marked(text: string): number[] {
  const found: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(text)) found.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return found;
}

const SCRATCH = benchScratch('stop-bench');

function repo(): string {
  const dir = SCRATCH.mkdir('repo-');
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
  execFileSync('sh', ['-c', 'git init -q -b main && echo x > README.md && git add -A && git commit -qm init'], { cwd: dir, env });
  return dir;
}

function input(repoPath: string, agentCommand: string[]): RunInput {
  return {
    prdPath: path.join(repoPath, 'README.md'),
    prdTitle: 'bench',
    repoPath,
    knobs: {
      ...defaultKnobs(),
      agentCommand,
      councilEnabled: false,
      qualityGates: values.gates,
      codeReview: false,
      prdChecklist: false,
      agentTimeoutSeconds: 3600,
      eventStore: STORE,
    },
  };
}

const stats = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${s.at(-1)} ms`;
};

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const tsMs = (t: HistoryEvent['eventTime']): number => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/** The events from the stop's update on, each with its time after it (server clock), and the activity or marker it is about. */
function breakdown(events: HistoryEvent[]): string {
  const from = events.findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
  if (from < 0) return '    (no update in the history)';
  const t0 = tsMs(events[from]?.eventTime);
  return events
    .slice(from)
    .map((e) => {
      const type = proto.temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType);
      const what = e.activityTaskScheduledEventAttributes?.activityType?.name ?? e.markerRecordedEventAttributes?.markerName ?? '';
      return `    +${(tsMs(e.eventTime) - t0).toFixed(1).padStart(6)} ms ${type.replace('EVENT_TYPE_', '')}${what ? ` ${what}` : ''}`;
    })
    .join('\n');
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  let server: DevServer | null = null;
  let address = process.env.TEMPORAL_ADDRESS;
  if (!address) {
    const cli = await resolveTemporalCli();
    server = await startDevServer({
      cliPath: cli.path,
      dbFile: path.join(SCRATCH.mkdir('server-'), 'temporal.db'),
      port: await freePort(),
      headless: true,
    });
    SCRATCH.server = server;
    address = server.address;
  }
  // The worker reads VIGIL_DATABASE_URL, as it would with a store configured.
  const store = STORE ? await startEmbeddedPostgres({ dataDir: SCRATCH.mkdir('store-'), port: await freePort() }) : null;
  if (store) process.env.VIGIL_DATABASE_URL = store.url;
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const native = await NativeConnection.connect({ address });
  const taskQueue = `stop-bench-${process.pid}`;
  const worker = await createVigilWorker({
    connection: native,
    namespace: 'default',
    taskQueue,
    tuning: { ...DEFAULT_TUNING, activitySlots: RUNS + 20 },
  });
  const start = (agent: string[], id: string): Promise<WorkflowHandle<typeof vigilRun>> =>
    client.workflow.start(vigilRun, { taskQueue, workflowId: id, args: [input(repo(), agent)] });
  const agentRunning = async (h: WorkflowHandle): Promise<void> => {
    for (;;) {
      const s = await h.query(statusQuery).catch(() => null);
      if (s?.agentRunning) return;
      await sleep(50);
    }
  };

  await worker.runUntil(async () => {
    const busy: WorkflowHandle[] = [];
    for (let i = 0; i < RUNS; i++) busy.push(await start(['/bin/sh', '-c', 'sleep 3600'], `stop-bench-busy-${process.pid}-${i}`));
    for (const h of busy) await agentRunning(h);
    console.log(
      `${RUNS} busy run(s) with an agent running on the worker; ${TRIALS} trial(s) of stop --now at a random point of a call; ` +
        `event store ${STORE ? 'on' : 'off'}`,
    );
    const closed: number[] = [];
    const gone: number[] = [];
    for (let t = 0; t < TRIALS; t++) {
      // The agent's tree (a shell and its sleep) is found from outside by a duration no other process
      // has: the agent runs in the sandbox by default, where it can neither write outside its
      // repository nor know the pids the worker's machine gives it.
      const mark = `${600_000 + process.pid * 100 + t}`;
      const h = await start(['/bin/sh', '-c', `sleep ${mark} & wait`], `stop-bench-${process.pid}-${t}`);
      await agentRunning(h);
      let tree: number[] = [];
      while (tree.length < 2) {
        tree = marked(`sleep ${mark}`);
        if (tree.length < 2) await sleep(20);
      }
      await sleep(Math.floor(Math.random() * 2000));
      const t0 = performance.now();
      await h.executeUpdate(stopUpdate, { args: [{ by: 'bench', now: true }] });
      const result = h.result().then(() => performance.now() - t0);
      while (tree.some(running)) await sleep(2);
      gone.push(Math.round(performance.now() - t0));
      closed.push(Math.round(await result));
      console.log(`  trial ${t + 1}: run closed ${closed.at(-1)} ms, agent tree gone ${gone.at(-1)} ms`);
      if (values.breakdown) console.log(breakdown((await h.fetchHistory()).events ?? []));
    }
    console.log(`stop --now, run closed: ${stats(closed)}`);
    console.log(`stop --now, agent tree gone: ${stats(gone)}`);
    await Promise.all(busy.map((h) => h.executeUpdate(stopUpdate, { args: [{ by: 'bench', now: true }] }).catch(() => undefined)));
    await Promise.all(busy.map((h) => h.result().catch(() => undefined)));
  });
  await native.close();
  await connection.close();
  await server?.stop();
  SCRATCH.server = null;
  await closeEventStore();
  await store?.stop();
}

try {
  await main();
} finally {
  SCRATCH.remove();
}
