/**
 * Benchmarks (not tests): what Vigil itself costs per iteration, against a real dev server.
 *
 * 1. tree hash: `workingTreeHash` on a repository of N files, clean and after edits.
 * 2. iteration overhead: a run of K iterations of an agent that does nothing (`true`), i.e. the
 *    orchestration cost per iteration (activities, timers, history), and history growth.
 *
 * Usage: npm run bench [-- --files 2000 --iterations 40]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { workingTreeHash } from '../activities/repo.js';
import { defaultKnobs } from '../schemas/knobs.js';
import { freePort, startDevServer } from '../workers/dev-server.js';
import { resolveTemporalCli } from '../workers/temporal-cli.js';
import { createVigilWorker } from '../workers/worker.js';
import { vigilRun } from '../workflows/run-workflow.js';

const { values } = parseArgs({ options: { files: { type: 'string', default: '2000' }, iterations: { type: 'string', default: '40' } } });
const FILES = Number(values.files);
const ITERATIONS = Number(values.iterations);

const git = (cwd: string, ...args: string[]): void => {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' } });
};

function repoWith(files: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-'));
  git(dir, 'init', '-q', '-b', 'main');
  for (let i = 0; i < files; i++) {
    const sub = path.join(dir, `d${i % 50}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `f${i}.txt`), `file ${i}\n`.repeat(20));
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench');
  return dir;
}

async function timeIt(n: number, fn: () => Promise<unknown>): Promise<{ median: number; p90: number }> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(n / 2)] as number, p90: samples[Math.floor(n * 0.9)] as number };
}

async function benchTreeHash(): Promise<void> {
  const repo = repoWith(FILES);
  try {
    const clean = await timeIt(10, () => workingTreeHash(repo));
    for (let i = 0; i < 20; i++) writeFileSync(path.join(repo, `new-${i}.txt`), `new ${i}\n`);
    writeFileSync(path.join(repo, 'd0', 'f0.txt'), 'changed\n');
    const dirty = await timeIt(10, () => workingTreeHash(repo));
    console.log(`tree hash, ${FILES} files: clean median ${clean.median.toFixed(1)} ms (p90 ${clean.p90.toFixed(1)}), 21 changes median ${dirty.median.toFixed(1)} ms (p90 ${dirty.p90.toFixed(1)})`);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

async function benchIterations(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const cli = await resolveTemporalCli();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-server-'));
  const server = await startDevServer({ cliPath: cli.path, dbFile: path.join(dir, 'temporal.db'), port: await freePort(), headless: true });
  const repo = repoWith(10);
  const prd = path.join(dir, 'PRD.md');
  writeFileSync(prd, '# Bench\n');
  const native = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const worker = await createVigilWorker({ connection: native, namespace: 'default', taskQueue: 'bench' });
    await worker.runUntil(async () => {
      const client = new Client({ connection });
      const started = performance.now();
      const handle = await client.workflow.start(vigilRun, {
        taskQueue: 'bench',
        workflowId: `bench-${Date.now()}`,
        args: [{ prdPath: prd, prdTitle: 'Bench', repoPath: repo, knobs: { ...defaultKnobs(), agentCommand: ['true'], maxIterations: ITERATIONS, continueAsNewEvery: 1000 } }],
      });
      const outcome = await handle.result();
      const ms = performance.now() - started;
      const history = await handle.fetchHistory();
      const events = history.events?.length ?? 0;
      const bytes = JSON.stringify(history).length;
      console.log(
        `iterations: ${outcome.iteration} no-op iterations in ${(ms / 1000).toFixed(2)} s = ${(ms / outcome.iteration).toFixed(0)} ms each; ` +
          `history ${events} events (${(events / outcome.iteration).toFixed(1)} per iteration), ~${(bytes / 1024).toFixed(0)} KiB (${(bytes / outcome.iteration / 1024).toFixed(1)} KiB per iteration)`,
      );
    });
  } finally {
    await connection.close();
    await native.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(repo, { recursive: true, force: true });
  }
}

await benchTreeHash();
await benchIterations();
