/**
 * Benchmarks (not tests): what Vigil itself costs per iteration, against a real dev server.
 *
 * 1. tree hash: `workingTreeHash` on a repository of N files, clean and after edits.
 * 2. iteration overhead: a run of K iterations of an agent that does nothing (`true`), i.e. the
 *    orchestration cost per iteration (activities, timers, history), and history growth.
 * 3. gates: an agent that edits a file every iteration, with the quality gates off and on: what
 *    the gates add per iteration beyond the time their own tools take.
 *
 * Usage: npm run bench [-- --files 2000 --iterations 40 --gate-iterations 10]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { workingTreeHash } from '../activities/repo.js';
import { defaultKnobs, type Knobs } from '../schemas/knobs.js';
import { freePort, startDevServer } from '../workers/dev-server.js';
import { resolveTemporalCli } from '../workers/temporal-cli.js';
import { createVigilWorker } from '../workers/worker.js';
import { vigilRun } from '../workflows/run-workflow.js';

const { values } = parseArgs({ options: { files: { type: 'string', default: '2000' }, iterations: { type: 'string', default: '40' }, 'gate-iterations': { type: 'string', default: '10' } } });
const FILES = Number(values.files);
const ITERATIONS = Number(values.iterations);
const GATE_ITERATIONS = Number(values['gate-iterations']);

const git = (cwd: string, ...args: string[]): void => {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' } });
};

function repoWith(files: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-'));
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'README.md'), '# bench\n');
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

interface RunFigures {
  iterations: number;
  ms: number;
  events: number;
  bytes: number;
  /** Time the gate activities themselves reported (their tools), summed over the run. */
  gateMs: number;
  gatePasses: number;
}

/** One run on a fresh repository; the figures of its history. */
async function measuredRun(client: Client, prd: string, knobs: Partial<Knobs>, label: string): Promise<RunFigures> {
  const repo = repoWith(10);
  try {
    const started = performance.now();
    const handle = await client.workflow.start(vigilRun, {
      taskQueue: 'bench',
      workflowId: `bench-${label}-${Date.now()}`,
      args: [{ prdPath: prd, prdTitle: 'Bench', repoPath: repo, knobs: { ...defaultKnobs(), continueAsNewEvery: 1000, ...knobs } }],
    });
    const outcome = await handle.result();
    const ms = performance.now() - started;
    const history = await handle.fetchHistory();
    const gateEvents = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runGate');
    // Each gate reports how long its tools took; gates of one group run in parallel, so the
    // tools' wall time is the slowest gate of each group (the tests gate is its own group).
    const slowest = new Map<string, number>();
    for (const e of history.events ?? []) {
      const done = e.activityTaskCompletedEventAttributes;
      if (!done?.result?.payloads?.[0]?.data) continue;
      try {
        const r = JSON.parse(Buffer.from(done.result.payloads[0].data).toString('utf8')) as { gate?: string; iteration?: number; durationMs?: number; verdict?: string; runner?: string };
        if (typeof r.durationMs !== 'number') continue;
        const group = r.gate === undefined ? (r.runner !== undefined ? 'tests' : null) : r.gate === 'static_analysis' || r.gate === 'secret_scan' ? 'static' : 'integrity';
        if (group === null) continue;
        const key = `${group}:${r.iteration ?? `t${slowest.size}`}`;
        slowest.set(key, Math.max(slowest.get(key) ?? 0, r.durationMs));
      } catch {
        /* not JSON: not a gate */
      }
    }
    const gateMs = [...slowest.values()].reduce((a, b) => a + b, 0);
    return { iterations: outcome.iteration, ms, events: history.events?.length ?? 0, bytes: JSON.stringify(history).length, gateMs, gatePasses: gateEvents.length };
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

async function benchIterations(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const cli = await resolveTemporalCli();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-bench-server-'));
  const server = await startDevServer({ cliPath: cli.path, dbFile: path.join(dir, 'temporal.db'), port: await freePort(), headless: true });
  const prd = path.join(dir, 'PRD.md');
  writeFileSync(prd, '# Bench\n');
  const native = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const worker = await createVigilWorker({ connection: native, namespace: 'default', taskQueue: 'bench' });
    await worker.runUntil(async () => {
      const client = new Client({ connection });
      const noop = await measuredRun(client, prd, { agentCommand: ['true'], maxIterations: ITERATIONS, prdChecklist: false }, 'noop');
      console.log(
        `iterations: ${noop.iterations} no-op iterations in ${(noop.ms / 1000).toFixed(2)} s = ${(noop.ms / noop.iterations).toFixed(0)} ms each; ` +
          `history ${noop.events} events (${(noop.events / noop.iterations).toFixed(1)} per iteration), ~${(noop.bytes / 1024).toFixed(0)} KiB (${(noop.bytes / noop.iterations / 1024).toFixed(1)} KiB per iteration)`,
      );
      // An agent that changes one file per iteration, with the tool gates off and on: what the
      // gates cost beyond their own tools (orchestration), in time, events and history bytes.
      const editing = { agentCommand: ['sh', '-c', 'echo "$VIGIL_ITERATION" >> notes.txt'], maxIterations: GATE_ITERATIONS, prdChecklist: false, codeReview: false, stagnationLimit: 1000, gatePauseAfter: 1000 };
      const off = await measuredRun(client, prd, { ...editing, qualityGates: false }, 'gates-off');
      const on = await measuredRun(client, prd, { ...editing, qualityGates: true }, 'gates-on');
      const per = (f: RunFigures, v: number): number => v / f.iterations;
      const overhead = per(on, on.ms - on.gateMs) - per(off, off.ms);
      console.log(
        `gates: ${on.iterations} editing iterations; off ${per(off, off.ms).toFixed(0)} ms, ${per(off, off.events).toFixed(1)} events, ${(per(off, off.bytes) / 1024).toFixed(1)} KiB per iteration; ` +
          `on ${per(on, on.ms).toFixed(0)} ms (of which gate tools ${per(on, on.gateMs).toFixed(0)} ms), ${per(on, on.events).toFixed(1)} events, ${(per(on, on.bytes) / 1024).toFixed(1)} KiB per iteration ` +
          `(${on.gatePasses} gate activities besides the tests); orchestration beyond the tools: ${overhead.toFixed(0)} ms per iteration`,
      );
    });
  } finally {
    await connection.close();
    await native.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await benchTreeHash();
await benchIterations();
