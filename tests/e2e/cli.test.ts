/**
 * The `vigil` CLI end to end, as a user drives it: real `node bin/vigil.js` processes against the
 * suite's Temporal dev server and a `vigil worker` child process, the scripted agent doing the
 * work. Checks stdout, stderr and exit codes (0 ok/done/stopped, 2 bad input, 3 no such run,
 * 4 no worker, 5 already finished, 124 timeout), pause/resume/input/stop, and knob sources.
 *
 * Independent runs are started concurrently to keep the file fast.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { SA_RELEASE } from '../../schemas/search-attributes.js';
import { KNOB_NAMES } from '../../schemas/knobs.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import {
  agentAlive,
  agentCalls,
  assertBuilt,
  makeRepo,
  ROOT,
  SCRIPTED_AGENT,
  sleep,
  temporalAddress,
  uniqueId,
  writePrd,
  writeScenario,
  type ScenarioInput,
} from '../support/harness.js';
import { runVigil, show, startWorkerProcess, waitUntil, type CliResult, type VigilOptions, type WorkerProcess } from './cli-helpers.js';

const NAMESPACE = 'default';
// The CLI's own behaviour, with claims judged by the evidence gate (council tests live elsewhere).
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

function baseEnv(): Record<string, string> {
  return { TEMPORAL_ADDRESS: temporalAddress(), TEMPORAL_NAMESPACE: NAMESPACE, VIGIL_TASK_QUEUE: taskQueue };
}

/** `vigil ARGS` against the suite's server and this file's task queue. */
const vigil = (args: string[], opts: VigilOptions = {}): Promise<CliResult> => runVigil(args, baseEnv(), opts);

const agentArg = (scenario: string): string => `"${SCRIPTED_AGENT}" --scenario "${scenario}"`;

interface Fixture {
  id: string;
  repo: string;
  prd: string;
  scenario: string;
}

function fixture(name: string, scenario: ScenarioInput): Fixture {
  const repo = makeRepo();
  return { id: uniqueId(`cli-${name}`), repo, prd: writePrd(), scenario: writeScenario(repo, scenario) };
}

function startArgs(f: Fixture, extra: string[] = []): string[] {
  started.add(f.id);
  return ['start', f.prd, '--repo', f.repo, '--agent-command', agentArg(f.scenario), ...FAST, '--id', f.id, ...extra];
}

/** Starts a run without waiting for it; asserts the CLI said so. */
async function start(f: Fixture, extra: string[] = [], opts: VigilOptions = {}): Promise<void> {
  const r = await vigil(startArgs(f, extra), opts);
  if (r.code !== 0 || !r.stdout.includes(`started run ${f.id}`)) throw new Error(`vigil start failed: ${show(r)}`);
}

async function statusJson(id: string): Promise<{ r: CliResult; json: Record<string, unknown> }> {
  const r = await vigil(['status', id, '--json']);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`vigil status --json did not print JSON: ${show(r)}`);
  }
  return { r, json };
}

/** The status query straight through the SDK (cheap, for tight polling loops). */
const query = (id: string): Promise<StatusSnapshot> => client.workflow.getHandle(id).query<StatusSnapshot>('status');

/** A long run: an iteration every ~`everyMs`, no changes, no claim, for many iterations. */
const longScenario = (everyMs: number): ScenarioInput => ({
  version: 1,
  iterations: [],
  default: { sleepBeforeMs: everyMs, output: 'working\n' },
});

async function terminate(id: string): Promise<void> {
  await client.workflow
    .getHandle(id)
    .terminate('vigil cli e2e cleanup')
    .catch(() => undefined);
}

beforeAll(async () => {
  assertBuilt();
  taskQueue = uniqueId('cli-e2e');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: NAMESPACE });
  worker = await startWorkerProcess(baseEnv());
});

afterAll(async () => {
  // Whatever a failed test left running: terminate it, so no agent keeps running.
  if (connection) await Promise.all([...started].map(terminate));
  await worker?.stop();
  await connection?.close();
});

describe.concurrent('vigil CLI', () => {
  it('start --wait runs a scenario to completion; status --json and list --json show it', async ({ expect }) => {
    const f = fixture('complete', {
      version: 1,
      iterations: [
        { writes: { 'src/a.txt': 'a\n' }, output: 'working on a\n' },
        { writes: { 'src/b.txt': 'b\n' }, commit: 'add b' },
        { output: 'all done\n', claim: 'promise' },
      ],
    });
    const r = await vigil(startArgs(f, ['--wait']), { timeoutMs: 120_000 });
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toContain(`started run ${f.id}`);
    for (const n of [1, 2, 3]) expect(r.stdout).toMatch(new RegExp(`iteration ${n} · `));
    expect(r.stdout).toContain('completion_promise_fulfilled');
    expect(agentCalls(f.repo).map((c) => c.iteration)).toEqual([1, 2, 3]);

    const { r: sr, json } = await statusJson(f.id);
    expect(sr.code, show(sr)).toBe(0);
    expect(json).toMatchObject({
      workflowId: f.id,
      status: 'finished',
      iteration: 3,
      paused: false,
      pause: null,
      outcome: { status: 'completion_promise_fulfilled', exitCode: 0 },
    });
    expect(json).toHaveProperty('phase');
    expect(json).toHaveProperty('tier');
    expect(typeof json.consecutiveNoChange).toBe('number');
    expect(typeof (json.outcome as { reason: unknown }).reason).toBe('string');
    expect(Array.isArray(json.invalidMessages)).toBe(true);

    const lr = await vigil(['list', '--json', '--limit', '1000']);
    expect(lr.code, show(lr)).toBe(0);
    const rows = JSON.parse(lr.stdout) as { workflowId: string }[];
    expect(rows.map((x) => x.workflowId)).toContain(f.id);
  });

  it('pause, wait --for paused, input, resume and stop steer a running run', async ({ expect }) => {
    const f = fixture('pause', longScenario(1500));
    await start(f, ['--set', 'maxIterations=30']);
    try {
      await waitUntil('the first agent call', () => agentCalls(f.repo).length >= 1, 60_000);

      const p = await vigil(['pause', f.id, '--reason', 'lunch', '--by', 'alice']);
      expect(p.code, show(p)).toBe(0);
      expect(p.stdout).toContain('paused');
      const w = await vigil(['wait', f.id, '--for', 'paused', '--timeout', '60']);
      expect(w.code, show(w)).toBe(0);

      const { r: sr, json } = await statusJson(f.id);
      expect(sr.code, show(sr)).toBe(0);
      expect(json.paused).toBe(true);
      expect(json.status).toBe('paused');
      expect(json.pause).toMatchObject({ reason: 'lunch', by: 'alice' });
      const at = (json.pause as { at: unknown }).at;
      expect(typeof at === 'string' && !Number.isNaN(Date.parse(at))).toBe(true);

      // The iteration in flight when the pause arrived finishes; then no agent call starts.
      const settled = await waitUntil('the in-flight agent call to finish', async () => {
        const s = await query(f.id);
        return s.paused && !s.agentRunning ? s : null;
      });
      const callsAtPause = agentCalls(f.repo).length;
      expect(callsAtPause).toBe(settled.iteration);
      await sleep(3000);
      expect(agentCalls(f.repo).length).toBe(callsAtPause);
      expect((await query(f.id)).iteration).toBe(settled.iteration);

      const i = await vigil(['input', f.id, 'use tabs']);
      expect(i.code, show(i)).toBe(0);
      expect(i.stdout).toContain('directive queued');
      expect((await query(f.id)).pendingDirectives).toBe(1);

      const rs = await vigil(['resume', f.id]);
      expect(rs.code, show(rs)).toBe(0);
      await waitUntil('an agent call after resume', () => agentCalls(f.repo).length > callsAtPause, 30_000);

      const runDir = path.join(f.repo, '.vigil/runs', f.id);
      const prompt = (n: number): string => path.join(runDir, `iteration-${String(n).padStart(4, '0')}.prompt.md`);
      const next = prompt(settled.iteration + 1);
      await waitUntil(`${next} to exist`, () => existsSync(next), 30_000);
      expect(readFileSync(next, 'utf8')).toContain('use tabs');
      expect(readFileSync(prompt(settled.iteration), 'utf8')).not.toContain('use tabs');

      const st = await vigil(['stop', f.id, '--reason', 'done']);
      expect(st.code, show(st)).toBe(0);
      const wt = await vigil(['wait', f.id, '--timeout', '60']);
      expect(wt.code, show(wt)).toBe(0);

      const { json: end } = await statusJson(f.id);
      expect(end.outcome).toMatchObject({ status: 'stopped', exitCode: 0 });
      expect((end.outcome as { reason: string }).reason).toContain('done');
    } finally {
      await terminate(f.id);
    }
  });

  it('stop --now kills the running agent and ends the run as stopped', async ({ expect }) => {
    const f = fixture('stop-now', {
      version: 1,
      iterations: [{ writes: { 'slow.txt': 'x' }, output: 'thinking hard\n', sleepMs: 60_000 }],
    });
    await start(f);
    try {
      const call = await waitUntil('the agent to start', () => agentCalls(f.repo)[0], 60_000);
      expect(agentAlive(call)).toBe(true);
      const t0 = Date.now();
      const st = await vigil(['stop', f.id, '--now', '--reason', 'enough']);
      expect(st.code, show(st)).toBe(0);
      await waitUntil(`agent pid ${call.pid} to exit`, () => !agentAlive(call), 10_000);
      expect(Date.now() - t0).toBeLessThan(30_000); // well before the agent's own 60 s sleep would end

      const wt = await vigil(['wait', f.id, '--timeout', '60']);
      expect(wt.code, show(wt)).toBe(0);
      const { json } = await statusJson(f.id);
      expect(json.outcome).toMatchObject({ status: 'stopped', exitCode: 0 });
      expect(agentCalls(f.repo)).toHaveLength(1);
    } finally {
      await terminate(f.id);
    }
  });

  it('reports no such run (3), a finished run (5) and a missing worker (4)', async ({ expect }) => {
    const none = await vigil(['status', 'nope-does-not-exist']);
    expect(none.code, show(none)).toBe(3);
    expect(none.stderr).toContain('no such run');

    // A run that is already finished cannot be paused.
    const finishedRun = async (): Promise<void> => {
      const done = fixture('finished', { version: 1, iterations: [{ writes: { 'x.txt': 'x' }, claim: 'promise' }] });
      const sw = await vigil(startArgs(done, ['--wait']), { timeoutMs: 120_000 });
      expect(sw.code, show(sw)).toBe(0);
      const pf = await vigil(['pause', done.id]);
      expect(pf.code, show(pf)).toBe(5);
      expect(pf.stderr).toContain(`run "${done.id}" has finished`);
      const wp = await vigil(['wait', done.id, '--for', 'paused', '--timeout', '30']);
      expect(wp.code, show(wp)).toBe(5);
      expect(wp.stderr).toContain('finished without pausing');
    };

    // A run on a task queue nobody polls: updates cannot be answered, signals are recorded.
    const workerlessRun = async (): Promise<void> => {
      const orphan = fixture('no-worker', longScenario(1000));
      const noWorkerEnv = { VIGIL_TASK_QUEUE: uniqueId('nobody-polls') };
      try {
        await start(orphan, [], { env: noWorkerEnv });
        const p = await vigil(['pause', orphan.id, '--reason', 'x'], { env: noWorkerEnv });
        expect(p.code, show(p)).toBe(4);
        expect(p.stderr).toContain('no worker is polling');
        expect(p.stderr).toContain(noWorkerEnv.VIGIL_TASK_QUEUE);

        const ps = await vigil(['pause', orphan.id, '--signal'], { env: noWorkerEnv });
        expect(ps.code, show(ps)).toBe(0);
        expect(ps.stdout).toContain('signal recorded');

        // An unanswered directive says how to resend it so that the run takes it once: with its id.
        const pi = await vigil(['input', orphan.id, 'Keep it short.'], { env: noWorkerEnv });
        expect(pi.code, show(pi)).toBe(4);
        const resend = /vigil input (\S+) --signal --id (d-[0-9a-f]{12}) \(with the same text\)/.exec(pi.stderr);
        expect(resend?.[1], show(pi)).toBe(orphan.id);
        const si = await vigil(['input', orphan.id, 'Keep it short.', '--signal', '--id', resend?.[2] ?? '', '--json'], {
          env: noWorkerEnv,
        });
        expect(si.code, show(si)).toBe(0);
        expect(JSON.parse(si.stdout)).toMatchObject({
          workflowId: orphan.id,
          message: 'input',
          acknowledged: false,
          directiveId: resend?.[2],
        });

        const { r: sr, json } = await statusJson(orphan.id);
        expect(sr.code, show(sr)).toBe(4);
        expect(json).toMatchObject({ workflowId: orphan.id, workerAnswered: false, temporalStatus: 'RUNNING' });

        const ss = await vigil(['stop', orphan.id, '--signal'], { env: noWorkerEnv });
        expect(ss.code, show(ss)).toBe(0);
      } finally {
        await terminate(orphan.id);
      }
    };

    // No Temporal at all: exit 4 with a hint; bad input is still exit 2 without a server.
    const noServer = async (): Promise<void> => {
      const env = { TEMPORAL_ADDRESS: '127.0.0.1:1' };
      const [st, input] = await Promise.all([vigil(['status', 'anything'], { env }), vigil(['input', 'anything'], { env })]);
      expect(st.code, show(st)).toBe(4);
      expect(st.stderr).toContain('cannot reach Temporal at 127.0.0.1:1');
      expect(input.code, show(input)).toBe(2);
      expect(input.stderr).toContain('no directive');
    };

    await Promise.all([finishedRun(), workerlessRun(), noServer()]);
  });

  it('a run whose workflow task keeps failing is reported as such, not as a missing worker', async ({ expect }) => {
    // A workflow type the worker does not have: the worker polls, and fails every task of it.
    const id = uniqueId('cli-failing-task');
    started.add(id);
    await client.workflow.start('noSuchWorkflowType', { taskQueue, workflowId: id, args: [] });
    await waitUntil(
      'the workflow task to fail twice',
      async () => Number((await client.workflow.getHandle(id).describe()).raw.pendingWorkflowTask?.attempt ?? 0) >= 2,
    );
    const s = await vigil(['status', id]);
    expect(s.code, show(s)).toBe(4);
    expect(s.stdout).toMatch(/workflow task keeps failing: .*noSuchWorkflowType.*\(attempt \d+\)/);
    const p = await vigil(['pause', id]);
    expect(p.code, show(p)).toBe(4);
    expect(p.stderr).toMatch(/its workflow task keeps failing on the worker: .*noSuchWorkflowType/);
    expect(p.stderr).not.toContain('no worker is polling');
  });

  it('rejects bad input with exit 2 and a message that says what is wrong', async ({ expect }) => {
    const f = fixture('bad-input', longScenario(1000));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-bad-'));
    const badConfig = path.join(dir, 'bad.json');
    writeFileSync(badConfig, JSON.stringify({ maxRetries: 0 }));
    const emptyPrd = path.join(dir, 'EMPTY.md');
    writeFileSync(emptyPrd, '  \n');
    const notGit = mkdtempSync(path.join(os.tmpdir(), 'vigil-not-git-'));
    const agent = ['--agent-command', agentArg(f.scenario)];
    // Nothing here reaches Temporal: none of these may start a run.
    const id = ['--id', uniqueId('cli-never-started')];

    const [badSet, badFile, unknown, missingPrd, emptyPrdR, notRepo, noAgent] = await Promise.all([
      vigil(['start', f.prd, '--repo', f.repo, ...agent, '--set', 'maxIterations=abc', ...id]),
      vigil(['start', f.prd, '--repo', f.repo, ...agent, '--config', badConfig, ...id]),
      vigil(['start', f.prd, '--repo', f.repo, ...agent, '--set', 'maxIteration=5', ...id]),
      vigil(['start', path.join(dir, 'MISSING.md'), '--repo', f.repo, ...agent, ...id]),
      vigil(['start', emptyPrd, '--repo', f.repo, ...agent, ...id]),
      vigil(['start', f.prd, '--repo', notGit, ...agent, ...id]),
      vigil(['start', f.prd, '--repo', f.repo, ...id]),
    ]);

    expect(badSet.code, show(badSet)).toBe(2);
    expect(badSet.stderr).toContain('maxIterations');
    expect(badSet.stderr).toContain('"abc"');
    expect(badSet.stderr).toContain('1 to 1000000');

    expect(badFile.code, show(badFile)).toBe(2);
    expect(badFile.stderr).toContain('maxRetries');
    expect(badFile.stderr).toMatch(/\b0 is not allowed/);
    expect(badFile.stderr).toContain('1 to 10000');

    expect(unknown.code, show(unknown)).toBe(2);
    expect(unknown.stderr).toContain('unknown knob "maxIteration"');
    expect(unknown.stderr).toContain('did you mean "maxIterations"');

    expect(missingPrd.code, show(missingPrd)).toBe(2);
    expect(missingPrd.stderr).toContain('PRD file not found');
    expect(emptyPrdR.code, show(emptyPrdR)).toBe(2);
    expect(emptyPrdR.stderr).toContain('PRD file is empty');

    expect(notRepo.code, show(notRepo)).toBe(2);
    expect(notRepo.stderr).toContain('is not a git working tree');

    expect(noAgent.code, show(noAgent)).toBe(2);
    expect(noAgent.stderr).toContain('no agent command');
    expect(noAgent.stderr).toContain('--agent-command');

    for (const r of [badSet, badFile, unknown, missingPrd, emptyPrdR, notRepo, noAgent]) expect(r.stdout).not.toContain('started run');

    // Messages with bad payloads, on a running run.
    await start(f);
    try {
      await waitUntil('the first agent call', () => agentCalls(f.repo).length >= 1, 60_000);
      const noText = await vigil(['input', f.id]);
      expect(noText.code, show(noText)).toBe(2);
      expect(noText.stderr).toContain('no directive');
      // The run's own validator refuses a reason over 2000 characters: exit 2 with its words.
      const longReason = await vigil(['pause', f.id, '--reason', 'x'.repeat(2001)]);
      expect(longReason.code, show(longReason)).toBe(2);
      expect(longReason.stderr).toMatch(/^vigil: pause rejected: .*"reason"/);

      const handle = client.workflow.getHandle(f.id);
      const err = await handle.executeUpdate('pause', { args: [{ reason: 5 }] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      const e = err as Error;
      const message = `${e.message} ${e.cause instanceof Error ? e.cause.message : ''}`;
      expect(message).toContain('"reason"');

      await handle.signal('pause', { reason: 5 });
      const snap = await waitUntil('the invalid signal to be recorded', async () => {
        const s = await query(f.id);
        return s.invalidMessages.length > 0 ? s : null;
      });
      expect(snap.paused).toBe(false);

      const callsBefore = agentCalls(f.repo).length;
      await waitUntil('the run to keep going', () => agentCalls(f.repo).length > callsBefore, 30_000);

      const { r: sr, json } = await statusJson(f.id);
      expect(sr.code, show(sr)).toBe(0);
      expect(json.paused).toBe(false);
      expect(json.outcome).toBeNull();
      const invalid = json.invalidMessages as { name: string; kind: string; error: string }[];
      expect(invalid).toHaveLength(1); // the rejected update is not recorded; the ignored signal is
      expect(invalid[0]).toMatchObject({ name: 'pause', kind: 'signal' });
      expect(invalid[0]?.error).toContain('reason');
    } finally {
      await terminate(f.id);
    }
  });

  it('config --explain shows each knob source; config --json is JSON', async ({ expect }) => {
    const env = { VIGIL_MAX_ITERATIONS: '7' };
    const ex = await vigil(['config', '--explain', '--set', 'tier=fast'], { env });
    expect(ex.code, show(ex)).toBe(0);
    const line = (knob: string, text = ex.stdout): string => text.split('\n').find((l) => l.startsWith(`${knob} `)) ?? '';
    expect(line('maxIterations')).toMatch(/^maxIterations\s+7\s+env VIGIL_MAX_ITERATIONS\s*$/);
    expect(line('tier')).toMatch(/^tier\s+"fast"\s+flag --set tier=fast\s*$/);
    // The first-class knobs and those set anywhere; an advanced one at its default only with --all.
    expect(line('provider')).toMatch(/^provider\s+"command"\s+default\s*$/);
    expect(line('maxRetries')).toBe('');
    const shown = KNOB_NAMES.filter((k) => line(k) !== '').length;
    expect(shown).toBeLessThan(30);
    expect(ex.stdout).toContain(`\n${KNOB_NAMES.length - shown} advanced knobs at their defaults are not shown.\n`);
    expect(ex.stdout.trimEnd().endsWith('Every knob: vigil config --explain --all')).toBe(true);
    const all = await vigil(['config', '--explain', '--all', '--set', 'tier=fast'], { env });
    expect(all.code, show(all)).toBe(0);
    expect(line('maxRetries', all.stdout)).toMatch(/^maxRetries\s+50\s+default\s*$/);
    expect(KNOB_NAMES.filter((k) => line(k, all.stdout) === '')).toEqual([]);
    expect(all.stdout).toContain('== The completion council (council) ==');

    // A knob profile under the knobs set on purpose, named as the source of what it gave.
    const strict = await vigil(['config', '--explain', '--knob-profile', 'strict', '--set', 'councilSize=4'], { env });
    expect(strict.code, show(strict)).toBe(0);
    expect(line('councilSize', strict.stdout)).toMatch(/^councilSize\s+4\s+flag --set councilSize=4\s*$/);
    expect(line('councilThreshold', strict.stdout)).toMatch(/^councilThreshold\s+5\s+profile strict \(--knob-profile\)\s*$/);
    const viaEnv = await vigil(['config', '--explain'], { env: { ...env, VIGIL_KNOB_PROFILE: 'minimal' } });
    expect(line('codeReview', viaEnv.stdout)).toMatch(/^codeReview\s+false\s+profile minimal \(VIGIL_KNOB_PROFILE\)\s*$/);
    const bad = await vigil(['config', '--explain', '--knob-profile', 'lenient']);
    expect(bad.code, show(bad)).toBe(2);
    expect(bad.stderr).toContain('minimal, default, strict');
    // --profile stays the temporal.toml profile: a knob profile's name there is no knob profile.
    const temporal = await vigil(['config', '--explain', '--profile', 'strict'], { env });
    expect(line('councilThreshold', temporal.stdout)).toBe('');

    const js = await vigil(['config', '--json', '--set', 'tier=fast'], { env });
    expect(js.code, show(js)).toBe(0);
    const rows = JSON.parse(js.stdout) as { name: string; value: unknown; source: string }[];
    const byName = new Map(rows.map((r) => [r.name, r]));
    expect(byName.get('maxIterations')).toMatchObject({ value: 7, source: 'env' });
    expect(byName.get('tier')).toMatchObject({ value: 'fast', source: 'flag' });
    expect(byName.get('maxRetries')).toMatchObject({ value: 50, source: 'default' });
  });

  it('wait --timeout exits 124 while the run goes on', async ({ expect }) => {
    const f = fixture('wait-timeout', longScenario(1000));
    await start(f);
    try {
      const t0 = Date.now();
      const w = await vigil(['wait', f.id, '--timeout', '2']);
      expect(w.code, show(w)).toBe(124);
      expect(w.stderr).toContain('timed out');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
      const s = await query(f.id);
      expect(s.outcome).toBeNull();
    } finally {
      await terminate(f.id);
    }
  });

  it(
    'start --tasks FILE with parallelStreams=2 runs each task as a stream, status lists them, and --deliver-to-current commits ' +
      'the merged work on the current branch',
    async ({ expect }) => {
      const repo = makeRepo();
      const branch = execFileSync('git', ['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
      const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
      const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-streams-'));
      // A command agent: the builder writes a file named after its folder (a stream's worktree is named after its task), then claims.
      const agent = path.join(dir, 'agent.sh');
      writeFileSync(
        agent,
        [
          'cat > /dev/null',
          'f="$(basename "$PWD").txt"',
          'if [ -f "$f" ]; then mkdir -p .vigil/signals && touch .vigil/signals/COMPLETION_REQUESTED; else echo "$VIGIL_RUN_ID" > "$f"; fi',
          '',
        ].join('\n'),
      );
      const tasks = path.join(dir, 'tasks.md');
      writeFileSync(tasks, '## api: The API\n\n## cli: The CLI\nDepends on: api\n');
      const id = uniqueId('cli-streams');
      started.add(id);
      const r = await vigil(
        [
          'start',
          writePrd(),
          '--repo',
          repo,
          '--agent-command',
          `bash "${agent}"`,
          ...FAST,
          '--set',
          'parallelStreams=2',
          '--tasks',
          tasks,
          '--deliver-to-current',
          '--id',
          id,
          '--wait',
        ],
        { timeoutMs: 180_000 },
      );
      expect(r.code, show(r)).toBe(0);
      const st = await vigil(['status', id]);
      expect(st.stdout).toContain('tasks     : 2 from the person’s task list');
      expect(st.stdout).toMatch(new RegExp(`stream    : api \\(The API\\) · done · run ${id}--api · vigil/${id}--api, merged`));
      expect(st.stdout).toMatch(new RegExp(`stream    : cli \\(The CLI\\) · done · after api · run ${id}--cli · vigil/${id}--cli, merged`));
      const { json } = await statusJson(id);
      expect((json.streams as { task: string; state: string }[]).map((t) => [t.task, t.state])).toEqual([
        ['api', 'done'],
        ['cli', 'done'],
      ]);
      // Delivered on the person's current branch as one commit (nothing on vigil/<run>), the index at it.
      const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
      expect(git('rev-parse', '--abbrev-ref', 'HEAD')).toBe(branch);
      expect(git('rev-list', '--count', `${head}..HEAD`)).toBe('1');
      expect(git('show', 'HEAD:api.txt')).toBe(`${id}--api`);
      expect(git('show', 'HEAD:cli.txt')).toBe(`${id}--cli`);
      expect(git('diff', '--cached', '--name-only')).toBe('');
      expect(() => git('rev-parse', '--verify', '--quiet', `refs/heads/vigil/${id}`)).toThrow();
      // Each run carries the release that started it: the run stamped by the CLI, each stream by its run.
      const release = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
      for (const wf of [id, `${id}--api`, `${id}--cli`]) {
        const d = await client.workflow.getHandle(wf).describe();
        expect(d.typedSearchAttributes.get(SA_RELEASE), wf).toBe(release);
      }
    },
  );
});
