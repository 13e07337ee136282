/**
 * `vigil logs` and hosts end to end: a `vigil worker` process on host `alpha` (VIGIL_HOST), runs
 * started with `vigil start --host alpha`, and the log read through that worker: a running
 * iteration followed with -f (the agent blocks until the test lets it go, so what the follower
 * prints was read while the agent ran), a finished one read whole, credentials redacted, and the
 * errors: no such run or iteration (exit 3), the run's host without a worker (exit 4, naming its
 * queue). `vigil start` and `vigil status` say when nothing polls a run's host. `logs -f` follows
 * a run across its iterations to its end with no workflow created (each read is a standalone
 * activity) and nothing added to the run's history; `logs -f` started before the first iteration
 * waits for it, and says when the run pauses, resumes and ends; escape sequences from the agent arrive shown,
 * not interpreted, in `logs`, `handoff` and `watch`; `vigil handoff` prints an escalated run's handoff.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HandoffOutputSchema } from '../../cli/handoff.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { assertBuilt, CLI, makeRepo, sleep, temporalAddress, uniqueId, writePrd } from '../support/harness.js';
import {
  CLI_CWD,
  cleanEnv,
  runVigil,
  show,
  startWorkerProcess,
  waitUntil,
  type CliResult,
  type VigilOptions,
  type WorkerProcess,
} from './cli-helpers.js';

const NAMESPACE = 'default';
const FAST = [
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
const KEY = `sk-ant-api03-${'Zx9Q'.repeat(20)}`;

let taskQueue: string;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;
let client: Client;
const started = new Set<string>();

const baseEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: NAMESPACE,
  VIGIL_TASK_QUEUE: taskQueue,
});
const vigil = (args: string[], opts: VigilOptions = {}): Promise<CliResult> => runVigil(args, baseEnv(), opts);
const query = (id: string): Promise<StatusSnapshot> => client.workflow.getHandle(id).query<StatusSnapshot>('status');

/** An agent that prints a line, waits until `go` exists, prints a line with a credential, and exits. */
function blockingAgent(dir: string): { command: string; go: string } {
  const go = path.join(dir, 'go');
  const script = path.join(dir, 'agent.sh');
  writeFileSync(
    script,
    `#!/bin/sh\ncat > /dev/null\necho "line 1: reading the PRD"\ni=0\nwhile [ ! -f '${go}' ] && [ $i -lt 1800 ]; do sleep 0.1; ` +
      `i=$((i+1)); done\necho "line 2: export ANTHROPIC_API_KEY=${KEY}"\necho "line 3: done"\n`,
  );
  chmodSync(script, 0o755);
  return { command: script, go };
}

async function startOn(host: string, agent: string, extra: string[] = []): Promise<{ id: string; repo: string; r: CliResult }> {
  const id = uniqueId(`logs-${host}`);
  const repo = makeRepo();
  started.add(id);
  const r = await vigil([
    'start',
    writePrd(),
    '--repo',
    repo,
    '--agent-command',
    agent,
    ...FAST,
    '--set',
    'maxIterations=1',
    '--id',
    id,
    '--host',
    host,
    ...extra,
  ]);
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
  if (connection)
    await Promise.all(
      [...started].map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('vigil logs e2e cleanup')
          .catch(() => undefined),
      ),
    );
  await worker?.stop();
  await connection?.close();
});

describe('vigil logs', () => {
  it("follows a running iteration's log through the host's worker, then reads it whole", async () => {
    expect(worker?.output()).toMatch(
      new RegExp(
        `polling task queue "${taskQueue}" \\(namespace "default", [^)]+\\) and "${taskQueue}@alpha" \\(the activities of runs ` +
          `on host "alpha"\\); Ctrl\\+C to stop`,
      ),
    );
    const agent = blockingAgent(mkdtempSync(path.join(os.tmpdir(), 'vigil-agent-')));
    const { id, repo, r } = await startOn('ALPHA', agent.command);
    expect(r.stdout).toContain(`  host       : alpha (task queue ${taskQueue}@alpha)`);
    expect(r.stderr).not.toContain('no worker polls');
    await waitUntil(
      'iteration 1 to run',
      async () => {
        const s = await query(id);
        return s.iteration === 1 && s.agentRunning;
      },
      60_000,
    );

    const follower = execa(process.execPath, [CLI, 'logs', id, '-f'], {
      env: cleanEnv(baseEnv()),
      extendEnv: false,
      cwd: CLI_CWD,
      stdin: 'ignore',
      reject: false,
      buffer: false,
    });
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
      const second = execa(process.execPath, [CLI, 'logs', id, '--follow'], {
        env: cleanEnv(baseEnv()),
        extendEnv: false,
        cwd: CLI_CWD,
        stdin: 'ignore',
        reject: false,
        buffer: false,
      });
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
    expect(
      (JSON.parse(list.stdout) as { workflowId: string }[]).map((x) => x.workflowId).filter((w) => w.startsWith('vigil-logs/')),
    ).toEqual([]);
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
    expect(early.stderr).toContain('or follow it with -f');
  });

  it('-f right after start waits for the first iteration, then says when the run pauses, resumes and ends', async () => {
    // The run's host has no worker yet, so its first iteration cannot begin until the test starts one:
    // the follower is certain to start before it (not a race with the worker's speed).
    const agent = blockingAgent(mkdtempSync(path.join(os.tmpdir(), 'vigil-agent-')));
    const { id } = await startOn('later', agent.command, ['--set', 'maxIterations=2']);
    const follower = execa(process.execPath, [CLI, 'logs', id, '-f'], {
      env: cleanEnv(baseEnv()),
      extendEnv: false,
      cwd: CLI_CWD,
      stdin: 'ignore',
      reject: false,
      buffer: false,
    });
    let out = '';
    let err = '';
    follower.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    follower.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    let later: WorkerProcess | undefined;
    try {
      await waitUntil('the follower to say it waits', () => err.includes(`==> waiting for iteration 1 of ${id} to begin`), 60_000);
      await sleep(1500);
      // Still following (a finished child's exitCode is a number).
      expect(follower.exitCode, err).toBeNull();
      later = await startWorkerProcess({ ...baseEnv(), VIGIL_HOST: 'later' });
      await waitUntil('the follower to print the first line', () => out.includes('line 1: reading the PRD'), 90_000).catch(
        async (e: unknown) => {
          const st = await vigil(['status', id]);
          throw new Error(`${String(e)}\nfollower stdout:\n${out}\nfollower stderr:\n${err}\nstatus:\n${st.stdout}${st.stderr}`);
        },
      );
      expect(err).toContain(`==> iteration 1 of ${id} on host "later"`);
      // Paused while its agent runs: the call finishes first, and the follower says so.
      const p = await vigil(['pause', id, '--reason', 'lunch break']);
      expect(p.code, show(p)).toBe(0);
      await waitUntil('the follower to say the run paused', () => err.includes(`==> run ${id} paused: lunch break`), 60_000);
      writeFileSync(agent.go, '');
      await waitUntil('iteration 1 to end', () => out.includes('line 3: done'), 60_000);
      // Iteration 2's agent waits for the file again, so the follower sees the run resumed and running.
      rmSync(agent.go);
      expect(err).not.toContain('resumed');
      const r = await vigil(['resume', id]);
      expect(r.code, show(r)).toBe(0);
      await waitUntil('the follower to say the run resumed', () => err.includes(`==> run ${id} resumed`), 60_000);
      writeFileSync(agent.go, '');
      const done = await Promise.race([follower, sleep(90_000).then(() => null)]);
      expect(done, `the follower did not end: ${out}\n${err}`).not.toBeNull();
      expect(done?.exitCode, err).toBe(0);
    } finally {
      follower.kill('SIGKILL');
      await later?.stop();
    }
    expect(err).toContain(`==> run ${id} resumed`);
    expect(err).toContain(`==> iteration 2 of ${id} on host "later"`);
    expect(err).toMatch(new RegExp(`==> run ${id} finished: max_iterations_reached`));
    // In that order, each once.
    const at = (s: string): number => err.indexOf(s);
    expect(at('==> waiting')).toBeLessThan(at('==> iteration 1'));
    expect(at('==> iteration 1')).toBeLessThan(at(' paused: '));
    expect(at(' paused: ')).toBeLessThan(at(' resumed'));
    expect(at(' resumed')).toBeLessThan(at('==> iteration 2'));
    expect(err.split(' paused: ')).toHaveLength(2);
    expect(err.split(' resumed')).toHaveLength(2);
  });

  it('follows a run across three iterations with -f, creates no workflow, and prints agent escape sequences visibly', async () => {
    // Each iteration: a line with a screen clear and a window title, a pause (so the follower reads it live), a change.
    // The first pause is long: the follower, a CLI process started once the first call runs, has to
    // attach before that call ends, also on a loaded machine (it follows from the iteration running).
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-agent-'));
    const script = path.join(dir, 'agent.sh');
    writeFileSync(
      script,
      `#!/bin/sh\ncat > /dev/null\nprintf 'agent %s: \\033[2J\\033]0;owned\\007 tidy\\r\\n' "$VIGIL_ITERATION"\n` +
        `if [ "$VIGIL_ITERATION" = 1 ]; then sleep 15; else sleep 2; fi\necho "step $VIGIL_ITERATION" >> work.txt\necho "iteration $VIGIL_ITERATION done"\n`,
    );
    chmodSync(script, 0o755);
    const { id } = await startOn('alpha', script, ['--set', 'maxIterations=3']);
    await waitUntil('iteration 1 to run', async () => (await query(id)).agentRunning, 60_000);
    const others = async (): Promise<number> =>
      (await client.workflow.count(`TaskQueue="${taskQueue}" AND WorkflowType!="vigilRun"`)).count;
    const readWorkflows = async (): Promise<number> => (await client.workflow.count(`WorkflowType="vigilReadLog"`)).count;
    const before = { others: await others(), reads: await readWorkflows() };

    const follower = await vigil(['logs', id, '-f'], { timeoutMs: 150_000 });
    expect(follower.code, show(follower)).toBe(0);
    const out = `${follower.stdout}\n`;
    for (const n of [1, 2, 3]) {
      expect(follower.stderr).toContain(`==> iteration ${n} of ${id} on host "alpha"`);
      expect(out).toContain(`agent ${n}: ␛[2J␛]0;owned␇ tidy\n`);
      expect(out).toContain(`iteration ${n} done`);
    }
    expect(out.indexOf('iteration 1 done')).toBeLessThan(out.indexOf('agent 2:'));
    expect(out.indexOf('iteration 2 done')).toBeLessThan(out.indexOf('agent 3:'));
    // Nothing reaches the terminal as a control character but newlines.
    expect([...out].filter((c) => c !== '\n' && c !== '\t' && (c < ' ' || (c >= '\u007f' && c <= '\u009f')))).toEqual([]);
    expect(follower.stderr).toMatch(new RegExp(`==> run ${id} finished: max_iterations_reached \\(exit \\d+\\)`));

    // Every read was a standalone activity: no workflow was created for them.
    expect(await others()).toBe(before.others);
    expect(await readWorkflows()).toBe(before.reads);
    expect((await client.workflow.count(`WorkflowId STARTS_WITH "vigil-logs/${id}"`)).count).toBe(0);
    // A read adds nothing to the run's history.
    const events = async (): Promise<number> => ((await client.workflow.getHandle(id).fetchHistory()).events ?? []).length;
    const length = await events();
    const one = await vigil(['logs', id, '--iteration', '2']);
    expect(one.code, show(one)).toBe(0);
    expect(one.stdout).toContain('agent 2: ␛[2J');
    expect(await events()).toBe(length);
  });

  it('prints the handoff of a run that asked for a person, and shows its escape sequences in watch visibly', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-agent-'));
    const script = path.join(dir, 'agent.sh');
    writeFileSync(
      script,
      `#!/bin/sh\ncat > /dev/null\nmkdir -p .vigil/signals\ncat > .vigil/signals/HUMAN_REVIEW_NEEDED <<'EOF'\n{"reason":"which ` +
        `database? \\u001b[2J\\u001b[1Afinished: completed (exit 0)","blocking":true,"questions":["Postgres or ` +
        `SQLite?"]}\nEOF\necho "asked for a person"\n`,
    );
    chmodSync(script, 0o755);
    const { id } = await startOn('alpha', script, ['--set', 'maxIterations=3', '--set', 'autonomyMode=supervised']);
    const none = await vigil(['handoff', id]);
    if (none.code !== 0) expect(none.stderr).toMatch(/has no handoff|not escalated/);
    await waitUntil('the run to escalate', async () => (await query(id)).latestHandoff, 90_000);

    const md = await vigil(['handoff', id]);
    expect(md.code, show(md)).toBe(0);
    expect(md.stdout).toMatch(/^# Handoff: /);
    expect(md.stdout).toContain('Postgres or SQLite?');
    expect(md.stdout).toContain('which database? ␛[2J␛[1Afinished: completed (exit 0)');
    expect(md.stdout).not.toContain('\u001b');
    const js = await vigil(['handoff', id, '--json']);
    expect(js.code, show(js)).toBe(0);
    const doc = HandoffOutputSchema.parse(JSON.parse(js.stdout));
    const latest = (await query(id)).latestHandoff;
    expect(doc).toMatchObject({
      workflowId: id,
      host: 'alpha',
      iteration: latest?.iteration,
      path: latest?.path,
      summary: latest?.summary,
    });
    expect(doc.markdown).toContain('Postgres or SQLite?');

    // watch: the escalation line carries the agent's reason, its controls shown, on one line.
    const watcher = execa(process.execPath, [CLI, 'watch', id], {
      env: cleanEnv(baseEnv()),
      extendEnv: false,
      cwd: CLI_CWD,
      stdin: 'ignore',
      reject: false,
      buffer: false,
    });
    let seen = '';
    watcher.stdout?.on('data', (d: Buffer) => (seen += d.toString()));
    try {
      await waitUntil('watch to print the escalation', () => seen.includes('escalated to a person'), 60_000);
    } finally {
      watcher.kill('SIGKILL');
    }
    const line = seen.split('\n').find((l) => l.includes('escalated to a person')) ?? '';
    expect(line).toContain('which database? ␛[2J␛[1Afinished: completed (exit 0)');
    expect(seen).not.toContain('\u001b');
    expect(seen.split('\n').filter((l) => l.startsWith('finished:'))).toEqual([]);

    const missing = await vigil(['handoff', 'no-such-run-here']);
    expect(missing.code, show(missing)).toBe(3);
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
