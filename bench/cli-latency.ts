/**
 * Benchmark (not a test): wall time of `vigil status|pause|resume|input|stop` (and `status --help`,
 * the commander program's startup alone, and `node -e 0`, node's own startup: the floor on this
 * machine at this load) against a live run, each command a fresh process as a person runs it.
 *
 * Usage: npm run build && node dist/bench/cli-latency.js [--trials 10] [--bin path/to/bin/vigil.js]
 * (`--bin` times another build, e.g. an older checkout's; a dev server and worker of its own)
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { defaultKnobs } from '../schemas/knobs.js';
import { freePort, startDevServer } from '../workers/dev-server.js';
import { packageRoot } from '../lib/paths.js';
import { resolveTemporalCli } from '../workers/temporal-cli.js';
import { DEFAULT_TUNING } from '../workers/tuning.js';
import { createVigilWorker } from '../workers/worker.js';
import { statusQuery } from '../workflows/messages.js';
import { benchArgs, numberArg } from './args.js';
import { benchScratch } from './scratch.js';
import { vigilRun } from '../workflows/run-workflow.js';

const USAGE = 'usage: node dist/bench/cli-latency.js [--trials N (default 10)] [--bin path/to/bin/vigil.js]';
const values = benchArgs('cli-latency', USAGE, {
  trials: { type: 'string', default: '10' },
  bin: { type: 'string', default: path.join(packageRoot(), 'bin', 'vigil.js') },
});
const TRIALS = numberArg('cli-latency', USAGE, 'trials', values.trials, { min: 1, integer: true });
const BIN = path.resolve(values.bin as string);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const SCRATCH = benchScratch('cli-bench');

function repo(): string {
  const dir = SCRATCH.mkdir('repo-');
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
  execFileSync('sh', ['-c', 'git init -q -b main && echo x > README.md && git add -A && git commit -qm init'], { cwd: dir, env });
  return dir;
}

const stats = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)]} ms, min ${s[0]} ms, max ${s.at(-1)} ms`;
};

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const cli = await resolveTemporalCli();
  const server = await startDevServer({
    cliPath: cli.path,
    dbFile: path.join(SCRATCH.mkdir('server-'), 'temporal.db'),
    port: await freePort(),
    headless: true,
  });
  SCRATCH.server = server;
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = `cli-bench-${process.pid}`;
  const worker = await createVigilWorker({
    connection: native,
    namespace: 'default',
    taskQueue,
    tuning: { ...DEFAULT_TUNING, activitySlots: TRIALS + 10 },
  });
  const env = { ...process.env, TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'default', VIGIL_TASK_QUEUE: taskQueue };
  const start = async (id: string): Promise<void> => {
    const r = repo();
    const input = {
      prdPath: path.join(r, 'README.md'),
      prdTitle: 'bench',
      repoPath: r,
      knobs: {
        ...defaultKnobs(),
        agentCommand: ['/bin/sh', '-c', 'sleep 3600'],
        councilEnabled: false,
        qualityGates: false,
        codeReview: false,
        prdChecklist: false,
        agentTimeoutSeconds: 7200,
      },
    };
    const h = await client.workflow.start(vigilRun, { taskQueue, workflowId: id, args: [input] });
    while (!(await h.query(statusQuery).catch(() => null))?.agentRunning) await sleep(50);
  };
  // Asynchronously: the worker in this process must go on answering while the command runs.
  const time = async (args: string[], bin: string[] = [BIN]): Promise<number> => {
    const t0 = performance.now();
    await promisify(execFile)(process.execPath, [...bin, ...args], { env, encoding: 'utf8' });
    return Math.round(performance.now() - t0);
  };

  await worker.runUntil(async () => {
    const id = `cli-bench-${process.pid}`;
    await start(id);
    const stopIds = Array.from({ length: TRIALS }, (_, i) => `${id}-stop-${i}`);
    for (const s of stopIds) await start(s);
    console.log(
      `${BIN}: ${TRIALS} trial(s) per command, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const rows: [string, number[]][] = [
      ['node', []],
      ['--help', []],
      ['status', []],
      ['pause', []],
      ['resume', []],
      ['input', []],
      ['stop', []],
    ];
    // Some environments point NODE_EXTRA_CA_CERTS at the whole system bundle: every node process
    // then reads and parses it before any code runs. Show what that costs here.
    const extraCa = process.env.NODE_EXTRA_CA_CERTS ? ([] as number[]) : null;
    for (let t = 0; t < TRIALS; t++) {
      (rows[0] as [string, number[]])[1].push(await time(['-e', '0'], []));
      if (extraCa) {
        const t0 = performance.now();
        await promisify(execFile)(process.execPath, ['-e', '0'], { env: { ...env, NODE_EXTRA_CA_CERTS: '' } });
        extraCa.push(Math.round(performance.now() - t0));
      }
      (rows[1] as [string, number[]])[1].push(await time(['status', '--help']));
      (rows[2] as [string, number[]])[1].push(await time(['status', id]));
      (rows[3] as [string, number[]])[1].push(await time(['pause', id, '--reason', 'bench']));
      (rows[4] as [string, number[]])[1].push(await time(['resume', id]));
      (rows[5] as [string, number[]])[1].push(await time(['input', id, 'a directive']));
      (rows[6] as [string, number[]])[1].push(await time(['stop', stopIds[t] as string]));
    }
    console.log(
      `  load average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    for (const [name, xs] of rows) console.log(`  ${name === 'node' ? 'node -e 0    ' : `vigil ${name.padEnd(7)}`} ${stats(xs)}`);
    if (extraCa) console.log(`  node -e 0 without NODE_EXTRA_CA_CERTS (set here to ${process.env.NODE_EXTRA_CA_CERTS}) ${stats(extraCa)}`);
    for (const w of [id, ...stopIds])
      await client.workflow
        .getHandle(w)
        .terminate('bench done')
        .catch(() => undefined);
  });
  await native.close();
  await connection.close();
  await server.stop();
  SCRATCH.server = null;
}

try {
  await main();
} finally {
  SCRATCH.remove();
}
