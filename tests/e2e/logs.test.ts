/**
 * `vigil logs` and hosts end to end: a `vigil worker` process on host `alpha` (VIGIL_HOST), runs
 * started with `vigil start --host alpha`, and the log read through that worker: a running
 * iteration followed with -f (the agent blocks until the test lets it go, so what the follower
 * prints was read while the agent ran), a finished one read whole, credentials redacted, and the
 * errors: no such run or iteration (exit 3), the run's host without a worker (exit 4, naming its
 * queue). `vigil start` and `vigil status` say when nothing polls a run's host.
 */
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusSnapshot } from '../../schemas/status.js';
import { assertBuilt, CLI, makeRepo, temporalAddress, uniqueId, writePrd } from '../support/harness.js';
import { CLI_CWD, cleanEnv, runVigil, show, startWorkerProcess, waitUntil, type CliResult, type VigilOptions, type WorkerProcess } from './cli-helpers.js';

const NAMESPACE = 'default';
const FAST = ['--set', 'heartbeatTimeoutSeconds=5', '--set', 'councilEnabled=false', '--set', 'qualityGates=false', '--set', 'codeReview=false', '--set', 'prdChecklist=false'];
const KEY = `sk-ant-api03-${'Zx9Q'.repeat(20)}`;

let taskQueue: string;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;
let client: Client;
const started = new Set<string>();

const baseEnv = (): Record<string, string> => ({ TEMPORAL_ADDRESS: temporalAddress(), TEMPORAL_NAMESPACE: NAMESPACE, VIGIL_TASK_QUEUE: taskQueue });
const vigil = (args: string[], opts: VigilOptions = {}): Promise<CliResult> => runVigil(args, baseEnv(), opts);
const query = (id: string): Promise<StatusSnapshot> => client.workflow.getHandle(id).query<StatusSnapshot>('status');

/** An agent that prints a line, waits until `go` exists, prints a line with a credential, and exits. */
function blockingAgent(dir: string): { command: string; go: string } {
  const go = path.join(dir, 'go');
  const script = path.join(dir, 'agent.sh');
  writeFileSync(
    script,
    `#!/bin/sh\ncat > /dev/null\necho "line 1: reading the PRD"\ni=0\nwhile [ ! -f '${go}' ] && [ $i -lt 1800 ]; do sleep 0.1; i=$((i+1)); done\necho "line 2: export ANTHROPIC_API_KEY=${KEY}"\necho "line 3: done"\n`,
  );
  chmodSync(script, 0o755);
  return { command: script, go };
}

async function startOn(host: string, agent: string, extra: string[] = []): Promise<{ id: string; repo: string; r: CliResult }> {
  const id = uniqueId(`logs-${host}`);
  const repo = makeRepo();
  started.add(id);
  const r = await vigil(['start', writePrd(), '--repo', repo, '--agent-command', agent, ...FAST, '--set', 'maxIterations=1', '--id', id, '--host', host, ...extra]);
  expect(r.code, show(r)).toBe(0);
  return { id, repo, r };
}

beforeAll(async () => {
  assertBuilt();
  taskQueue = uniqueId('logs-e2e');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: NAMESPACE });
  worker = await startWorkerProcess({ ...baseEnv(), VIGIL_HOST: 'Alpha' });
});

afterAll(async () => {
  if (connection) await Promise.all([...started].map((id) => client.workflow.getHandle(id).terminate('vigil logs e2e cleanup').catch(() => undefined)));
  await worker?.stop();
  await connection?.close();
});

describe('vigil logs', () => {
  it("follows a running iteration's log through the host's worker, then reads it whole", async () => {
    expect(worker?.output()).toMatch(new RegExp(`polling task queue "${taskQueue}" \\(namespace "default", [^)]+\\) and "${taskQueue}@alpha" \\(the activities of runs on host "alpha"\\); Ctrl\\+C to stop`));
    const agent = blockingAgent(mkdtempSync(path.join(os.tmpdir(), 'vigil-agent-')));
    const { id, repo, r } = await startOn('ALPHA', agent.command);
    expect(r.stdout).toContain(`  host       : alpha (task queue ${taskQueue}@alpha)`);
    expect(r.stderr).not.toContain('no worker polls');
    await waitUntil('iteration 1 to run', async () => {
      const s = await query(id);
      return s.iteration === 1 && s.agentRunning;
    }, 60_000);

    const follower = execa(process.execPath, [CLI, 'logs', id, '-f'], { env: cleanEnv(baseEnv()), extendEnv: false, cwd: CLI_CWD, stdin: 'ignore', reject: false, buffer: false });
    let out = '';
    let err = '';
    follower.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    follower.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    try {
      // The agent is still blocked: this line was read while it ran.
      await waitUntil('the follower to print the first line', () => out.includes('line 1: reading the PRD'), 60_000);
      expect((await query(id)).agentRunning).toBe(true);
      expect(out).not.toContain('line 2');
      expect(err).toContain(`==> iteration 1 of ${id} on host "alpha": ${path.join(repo, '.vigil/runs', id, 'iteration-0001.log')}`);
      // Ctrl+C ends a follower with exit 0.
      const second = execa(process.execPath, [CLI, 'logs', id, '--follow'], { env: cleanEnv(baseEnv()), extendEnv: false, cwd: CLI_CWD, stdin: 'ignore', reject: false, buffer: false });
      let seen = '';
      second.stdout?.on('data', (d: Buffer) => (seen += d.toString()));
      await waitUntil('the second follower to print the first line', () => seen.includes('line 1'), 60_000);
      second.kill('SIGINT');
      expect((await second).exitCode).toBe(0);
      writeFileSync(agent.go, '');
      const done = await Promise.race([follower, new Promise<null>((res) => setTimeout(() => res(null), 90_000))]);
      expect(done, `the follower did not end: ${out}\n${err}`).not.toBeNull();
      expect(done?.exitCode, `${out}\n${err}`).toBe(0);
    } finally {
      follower.kill('SIGKILL');
    }
    expect(out).toContain('line 2: export ANTHROPIC_API_KEY=');
    expect(out).not.toContain(KEY.slice(13));
    expect(out).toContain('line 3: done');
    expect(out).toMatch(/=== vigil: exit 0 after \d+ ms ===\n$/);
    // Every line once, in order.
    expect(out.indexOf('line 1')).toBeLessThan(out.indexOf('line 2'));
    expect(out.split('line 1: reading the PRD')).toHaveLength(2);

    await waitUntil('the run to finish', async () => (await client.workflow.getHandle(id).describe()).status.name !== 'RUNNING', 60_000);
    // The finished iteration, whole: the default is the last iteration.
    const whole = await vigil(['logs', id]);
    expect(whole.code, show(whole)).toBe(0);
    // (the helper strips the last newline, as a shell's $(...) does)
    expect(`${whole.stdout}\n`).toBe(out);
    expect(whole.stdout).toMatch(/^=== vigil: iteration 1, attempt 1, started /);
    const again = await vigil(['logs', id, '--iteration', '1', '-f']);
    expect(again.code, show(again)).toBe(0);
    expect(`${again.stdout}\n`).toBe(out);

    const none = await vigil(['logs', id, '--iteration', '2']);
    expect(none.code, show(none)).toBe(3);
    expect(none.stderr).toContain(`run "${id}" has run 1 iteration(s) so far; there is no iteration 2`);
    const bad = await vigil(['logs', id, '--iteration', 'two']);
    expect(bad.code, show(bad)).toBe(2);
    const missing = await vigil(['logs', 'no-such-run-here']);
    expect(missing.code, show(missing)).toBe(3);
    expect(missing.stderr).toContain('no such run: "no-such-run-here"');
    // The reads are workflows of their own, never in the run list.
    const list = await vigil(['list', '--json', '--limit', '1000']);
    expect((JSON.parse(list.stdout) as { workflowId: string }[]).map((x) => x.workflowId).filter((w) => w.startsWith('vigil-logs/'))).toEqual([]);
  });

  it("says when nothing polls a run's host, at start and in status; no log before the first iteration", async () => {
    const { id, r } = await startOn('nowhere', '/bin/true');
    expect(r.stderr).toContain(`no worker polls task queue "${taskQueue}@nowhere"`);
    expect(r.stderr).toContain('Start `vigil worker --host nowhere`');
    const st = await vigil(['status', id]);
    expect(st.code, show(st)).toBe(0);
    expect(st.stdout).toContain('  host      : nowhere');
    expect(st.stdout).toContain(`warning   : no worker polls task queue "${taskQueue}@nowhere"`);
    const js = await vigil(['status', id, '--json']);
    expect(JSON.parse(js.stdout)).toMatchObject({ host: 'nowhere', hostPollers: [] });
    // Its first step waits on the host's queue: no iteration, so no log yet.
    const early = await vigil(['logs', id]);
    expect(early.code, show(early)).toBe(3);
    expect(early.stderr).toContain('has not started an iteration yet');
  });

  it("exits 4 naming the host's queue when the run's host has no worker", async () => {
    // A run done on alpha; then alpha's worker goes away and only beta's serves the shared queue.
    const agent = blockingAgent(mkdtempSync(path.join(os.tmpdir(), 'vigil-agent-')));
    writeFileSync(agent.go, '');
    const { id } = await startOn('alpha', agent.command);
    await waitUntil('the run to finish', async () => (await client.workflow.getHandle(id).describe()).status.name !== 'RUNNING', 90_000);
    await worker?.stop();
    worker = await startWorkerProcess({ ...baseEnv(), VIGIL_HOST: 'beta' });
    const r = await vigil(['logs', id, '--timeout', '2']);
    expect(r.code, show(r)).toBe(4);
    expect(r.stderr).toContain(`no worker on host "alpha" picked the read up within 2 s: nothing polls task queue "${taskQueue}@alpha"`);
    expect(r.stderr).toContain('Start `vigil worker --host alpha`');
    expect(existsSync(agent.go)).toBe(true);
  });
});
