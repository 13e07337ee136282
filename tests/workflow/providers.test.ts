/**
 * Real coding-agent providers end to end, on a real Temporal server, with the fake CLIs of
 * examples/agents/fake-cli (same flags and output formats as claude, codex and gemini): cost and
 * tokens reach status and stop a run at its budget, an auth error pauses, a rate limit waits what
 * the provider said without climbing the tier ladder, a worker crash resumes the same session,
 * and a reviewer that edits the tree has its vote voided.
 */
import { defaultPayloadConverter, type WorkflowHandle } from '@temporalio/client';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resumeUpdate, stopUpdate } from '../../workflows/messages.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  ROOT,
  loopInput,
  sleep,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  WorkerProcesses,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

const FAKE = (name: string): string => path.join(ROOT, 'examples/agents/fake-cli', name);

let env: TestEnv;
const workers = new WorkerProcesses();
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  workers.killAll();
  await env?.close();
});
afterEach(() => {
  delete process.env.FAKE_CLI_SCENARIO;
  delete process.env.FAKE_CLI_LOG;
  delete process.env.VIGIL_SANDBOX_WRITABLE;
});

interface FakeCall {
  provider: string;
  call: number;
  argv: string[];
  sessionId: string | null;
  readOnly: boolean;
}

/** Points the fake CLIs (run by in-process workers and spawned ones alike) at a scenario. */
function fakeScenario(calls: Record<string, unknown>[]): { calls: () => FakeCall[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-fake-cli-'));
  writeFileSync(path.join(dir, 'scenario.json'), JSON.stringify({ calls }));
  process.env.FAKE_CLI_SCENARIO = path.join(dir, 'scenario.json');
  process.env.FAKE_CLI_LOG = path.join(dir, 'calls.jsonl');
  // The fake CLIs log their calls outside the repository, which the sandbox shows only when the
  // worker's operator names it (docs/security.md, The agent's sandbox); the workers here inherit it.
  process.env.VIGIL_SANDBOX_WRITABLE = dir;
  const log = process.env.FAKE_CLI_LOG;
  return {
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as FakeCall)
        : [],
  };
}

const noScenario = writeScenario('', { version: 1, iterations: [] });

describe('providers', () => {
  it('claude: cost and tokens reach status, the 80% warning goes out, the budget pauses the run at the right iteration', async () => {
    const repo = makeRepo();
    const fake = fakeScenario([
      { writes: { 'a.txt': 'a\n' }, costUsd: 0.3, inputTokens: 1000, outputTokens: 100, cacheReadTokens: 500 },
      { writes: { 'b.txt': 'b\n' }, costUsd: 0.3 },
      { writes: { 'c.txt': 'c\n' }, costUsd: 0.3 },
      { writes: { 'd.txt': 'd\n' }, costUsd: 0.3 },
    ]);
    const notifyFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-notify-')), 'n.jsonl');
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const input = loopInput(repo, noScenario, {
        provider: 'claude',
        agentCommand: [FAKE('claude')],
        providerBreaker: false,
        budgetUsd: 0.7,
        maxIterations: 10,
        notifyFile,
        notifyDesktop: false,
        tierLadder: false,
      });
      const handle = await startRun(env, tq, input);
      const s = await waitForStatus(handle, (x) => x.paused);
      expect(s.iteration).toBe(3);
      expect(s.pause?.reason).toMatch(/^budget exceeded: \$0\.90 of \$0\.70/);
      expect(s.spend.usd).toBeCloseTo(0.9, 6);
      expect(s.spend.calls).toBe(3);
      expect(s.spend.cacheReadTokens).toBe(500);
      // The model the CLI reports it used (the `sonnet` alias resolved), not the alias asked for.
      expect(s.recentIterations.map((r) => [r.provider, r.model, r.costUsd])).toEqual([
        ['claude', 'claude-sonnet-4-5-20250929', 0.3],
        ['claude', 'claude-sonnet-4-5-20250929', 0.3],
        ['claude', 'claude-sonnet-4-5-20250929', 0.3],
      ]);
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'test' }] });
      await handle.result();
    });
    const calls = fake.calls();
    expect(calls).toHaveLength(3);
    expect(calls[0]?.argv).toEqual(
      expect.arrayContaining([
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--model',
        'sonnet',
        '--dangerously-skip-permissions',
        '--session-id',
      ]),
    );
    // The remaining budget is handed to the CLI: $0.70 at first, $0.10 before the third call.
    expect(calls[0]?.argv.join(' ')).toContain('--max-budget-usd 0.70');
    expect(calls[2]?.argv.join(' ')).toContain('--max-budget-usd 0.10');
    const events = readFileSync(notifyFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { event: string }).event);
    expect(events.filter((e) => e === 'budget_warning')).toHaveLength(1);
    expect(events).toContain('budget_exceeded');
    // People read a transcript, not the JSON stream.
    const runDir = path.join(repo, '.vigil/runs', readdirSync(path.join(repo, '.vigil/runs'))[0] as string);
    const transcript = readFileSync(path.join(runDir, 'iteration-0001.transcript.md'), 'utf8');
    expect(transcript).toContain('a.txt');
    expect(transcript).not.toContain('"type":"result"');
    expect(readFileSync(path.join(runDir, 'iteration-0001.log'), 'utf8')).toContain('"type":"result"');
  });

  it('an authentication error pauses the run in every mode, without backoff or tier climb; resuming tries again', async () => {
    const repo = makeRepo();
    const fake = fakeScenario([{ error: 'auth' }, { writes: { 'a.txt': 'a\n' }, text: 'COMPLETION PROMISE FULFILLED' }]);
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const outcome = await worker.runUntil(async () => {
      const handle = await startRun(
        env,
        tq,
        loopInput(repo, noScenario, {
          provider: 'codex',
          agentCommand: [FAKE('codex')],
          providerBreaker: false,
          autonomyMode: 'perpetual',
          notifyDesktop: false,
        }),
      );
      const s = await waitForStatus(handle, (x) => x.paused);
      expect(s.pause?.by).toBe('vigil');
      expect(s.pause?.reason).toMatch(/^authentication failed for provider codex: .*401/);
      expect(s.pause?.reason).toContain('vigil doctor --provider codex');
      expect(s.consecutiveFailures).toBe(0);
      expect(s.backoffUntil).toBeNull();
      expect(s.ladder?.changes ?? []).toEqual([]);
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'ops' }] });
      return handle.result();
    });
    expect(outcome.status).toBe('completion_promise_fulfilled');
    const calls = fake.calls();
    expect(calls).toHaveLength(2);
    expect(calls[0]?.argv).toEqual(
      expect.arrayContaining([
        'exec',
        '--json',
        '--sandbox',
        'workspace-write',
        '--skip-git-repo-check',
        '-c',
        'model_reasoning_effort=high',
      ]),
    );
  });

  it('a provider rate limit waits as long as the provider says, and does not climb the tier ladder', async () => {
    const repo = makeRepo();
    const fake = fakeScenario([
      { error: 'rate_limit', errorText: 'API Error: 429 rate_limit_error: rate limit exceeded. retry-after: 3' },
      { writes: { 'a.txt': 'a\n' }, text: 'COMPLETION PROMISE FULFILLED' },
    ]);
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const t0 = Date.now();
    const outcome = await worker.runUntil(async () => {
      const handle = await startRun(
        env,
        tq,
        loopInput(repo, noScenario, { provider: 'claude', agentCommand: [FAKE('claude')], providerBreaker: false, baseWaitSeconds: 600 }),
      );
      const s = await waitForStatus(handle, (x) => x.status === 'backing_off');
      expect(s.backoffUntil).not.toBeNull();
      expect(s.consecutiveFailures).toBe(0); // a rate limit is not a failure
      const o = await handle.result();
      const end = await status(handle);
      expect(end.ladder?.changes ?? []).toEqual([]);
      return o;
    });
    expect(outcome.status).toBe('completion_promise_fulfilled');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3000);
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(fake.calls()).toHaveLength(2);
  });

  /**
   * Until the running call's heartbeat, as the server holds it, carries its session: what a retry
   * on another machine resumes. A fixed sleep was not enough on a loaded machine, where the
   * worker's first heartbeat reaches the server seconds late.
   */
  async function sessionOnServer(handle: WorkflowHandle): Promise<void> {
    const deadline = Date.now() + patient(60_000);
    while (Date.now() < deadline) {
      for (const a of (await handle.describe()).raw.pendingActivities ?? []) {
        const p = a.heartbeatDetails?.payloads?.[0];
        if (!p) continue;
        const beat = defaultPayloadConverter.fromPayload<{ session?: unknown } | null>({
          metadata: p.metadata ?? {},
          data: p.data ?? undefined,
        });
        if (typeof beat?.session === 'string') return;
      }
      await sleep(200);
    }
    throw new Error(`no heartbeat with the call's session reached the server within ${patient(60)} s`);
  }

  // The first call sleeps five minutes: it is killed long before, once its session reached the
  // server. The heartbeat timeout is short enough to find the lost machine soon, and long enough
  // that a loaded machine's late heartbeat does not end the first attempt before its CLI starts.
  it('a machine lost during a claude call (worker and agent supervisor killed): the retried attempt resumes the same session', async () => {
    const repo = makeRepo();
    const fake = fakeScenario([
      { sleepMs: 300_000, writes: { 'a.txt': 'a\n' } },
      { writes: { 'a.txt': 'a\n' }, text: 'COMPLETION PROMISE FULFILLED' },
    ]);
    const tq = uniqueId('tq');
    // This machine's supervisor daemon is its own: killing it must not end the calls other test
    // files are making through the shared one (in /tmp, per user and build) at the same time.
    const machine = { VIGIL_SUPERVISOR_DIR: mkdtempSync(path.join(os.tmpdir(), 'vigil-lost-machine-sup-')) };
    const first = await workers.spawn(tq, undefined, machine);
    const handle = await startRun(
      env,
      tq,
      loopInput(repo, noScenario, {
        provider: 'claude',
        agentCommand: [FAKE('claude')],
        providerBreaker: false,
        heartbeatTimeoutSeconds: 10,
      }),
    );
    await waitForStatus(handle, (x) => x.agentRunning);
    await sessionOnServer(handle);
    // And the CLI itself has started the session (it records its call once running): the session is
    // heartbeated as soon as the process is spawned, which on a loaded machine is seconds before
    // the CLI starts. Killed before that, the first call would never have happened.
    const deadline = Date.now() + patient(60_000);
    while (fake.calls().length === 0 && Date.now() < deadline) await sleep(100);
    expect(fake.calls(), 'the first call started').toHaveLength(1);
    first.child.kill('SIGKILL');
    // The agent's supervisor and the agent go with it, as when the machine restarts.
    const runs = path.join(repo, '.vigil', 'runs');
    const state = JSON.parse(readFileSync(path.join(runs, readdirSync(runs)[0] as string, 'iteration-0001.pid.json'), 'utf8')) as {
      pid: number;
      supervisor: { pid: number };
    };
    process.kill(state.supervisor.pid, 'SIGKILL');
    process.kill(-state.pid, 'SIGKILL');
    await workers.spawn(tq, undefined, machine);
    const outcome = await handle.result();
    expect(outcome.status).toBe('completion_promise_fulfilled');
    const calls = fake.calls();
    expect(calls.length).toBeGreaterThanOrEqual(2);
    const started = calls[0]?.argv[(calls[0]?.argv.indexOf('--session-id') ?? -2) + 1];
    expect(started).toMatch(/^[0-9a-f-]{36}$/);
    const resumed = calls[1]?.argv;
    expect(resumed).toContain('--resume');
    expect(resumed?.[(resumed?.indexOf('--resume') ?? -2) + 1]).toBe(started);
  });

  it('three runs share one provider circuit breaker: after three failures the others wait without calling, one probe goes through, all resume', async () => {
    const repos = [makeRepo(), makeRepo(), makeRepo()];
    const fake = fakeScenario([
      { exit: 1, text: 'API Error: 503 service unavailable' },
      { exit: 1, text: 'API Error: 503 service unavailable' },
      { exit: 1, text: 'API Error: 503 service unavailable' },
      { writes: { 'done.txt': 'ok\n' }, text: 'COMPLETION PROMISE FULFILLED' },
    ]);
    const provider = 'gemini' as const; // a breaker of its own in this suite
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const knobs = {
      provider,
      agentCommand: [FAKE('gemini')],
      breakerFailures: 3,
      breakerWindowSeconds: 60,
      breakerCooldownSeconds: 4,
      breakerProbeSeconds: 1,
      breakerSuccesses: 1,
      baseWaitSeconds: 1,
      tierLadder: false,
      uncertaintyEscalation: false,
    };
    await worker.runUntil(async () => {
      const handles = await Promise.all(repos.map((r) => startRun(env, tq, loopInput(r, noScenario, knobs))));
      // Three failures open the breaker: a run now waits without calling the agent.
      const waiting = await Promise.any(handles.map((h) => waitForStatus(h, (x) => x.status === 'waiting_for_provider', 30_000)));
      expect(waiting.providerWait).toMatchObject({ provider: 'gemini' });
      expect(fake.calls()).toHaveLength(3);
      const outcomes = await Promise.all(handles.map((h) => h.result()));
      expect(outcomes.map((o) => o.status)).toEqual([
        'completion_promise_fulfilled',
        'completion_promise_fulfilled',
        'completion_promise_fulfilled',
      ]);
    });
    const calls = fake.calls();
    // 3 failures, then exactly one call per run: nobody called while the breaker was open.
    expect(calls).toHaveLength(6);
  });

  it('failover: a long rate limit on claude sends the next iteration to a healthy codex, and the record says so', async () => {
    const repo = makeRepo();
    const fake = fakeScenario([
      { error: 'rate_limit', errorText: 'Claude usage limit reached. retry-after: 7200' },
      { writes: { 'a.txt': 'a\n' }, text: 'COMPLETION PROMISE FULFILLED' },
    ]);
    // codex must be found on PATH with a credential set: the worker's health check.
    const saved = { path: process.env.PATH, key: process.env.OPENAI_API_KEY };
    process.env.PATH = `${path.join(ROOT, 'examples/agents/fake-cli')}:${saved.path ?? ''}`;
    process.env.OPENAI_API_KEY = 'test-not-a-real-key';
    try {
      const tq = uniqueId('tq');
      const worker = await makeWorker(env, tq);
      const t0 = Date.now();
      await worker.runUntil(async () => {
        const handle = await startRun(
          env,
          tq,
          loopInput(repo, noScenario, {
            provider: 'claude',
            agentCommand: [FAKE('claude')],
            providerFailover: 'gemini,codex',
            failoverAfterSeconds: 60,
            providerBreaker: false,
            tierLadder: false,
          }),
        );
        const outcome = await handle.result();
        expect(outcome.status).toBe('completion_promise_fulfilled');
        const s = await status(handle);
        expect(s.recentIterations.map((r) => r.provider)).toEqual(['claude', 'codex']);
      });
      expect(Date.now() - t0).toBeLessThan(60_000);
      expect(fake.calls().map((c) => c.provider)).toEqual(['claude', 'codex']);
    } finally {
      process.env.PATH = saved.path;
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved.key;
    }
  });

  it('the same failure five times is a dead letter: recorded with its attempts and escalated instead of retried on', async () => {
    const repo = makeRepo();
    const failing = (n: number) => ({ output: `Error: Cannot find module './db' (at 12:0${n}:44, pid ${1000 + n})\n`, exitCode: 1 });
    const scenario = writeScenario(repo, { version: 1, iterations: [1, 2, 3, 4, 5, 6].map(failing) });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(
        env,
        tq,
        loopInput(repo, scenario, {
          baseWaitSeconds: 0,
          autonomyMode: 'supervised',
          tierLadder: false,
          uncertaintyEscalation: false,
          notifyDesktop: false,
        }),
      );
      const s = await waitForStatus(handle, (x) => x.paused);
      expect(s.iteration).toBe(5);
      expect(s.deadLetters).toHaveLength(1);
      expect(s.deadLetters?.[0]).toMatchObject({ errorClass: 'exit 1', attempts: 5, iterations: [1, 2, 3, 4, 5] });
      expect(s.escalations.at(-1)?.reason).toBe('dead_letter');
      expect(s.pause?.reason).toMatch(/an iteration keeps failing the same way/);
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'test' }] });
      await handle.result();
    });
  });

  it('a reviewer that changes the working tree has its vote voided, whatever it answered', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a\n' } }, { writes: { 'b.txt': 'b\n' }, claim: 'promise' }],
      roles: {
        council: {
          default: { output: 'VOTE: APPROVE\nREASON: looks fine\n' },
          members: { '1': { default: { output: 'VOTE: APPROVE\nREASON: fixed it myself\n', writes: { 'smuggled.txt': 'x\n' } } } },
        },
        'devils-advocate': { default: { output: 'VOTE: APPROVE\nREASON: fine\n' } },
      },
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    // Sandbox off: the read-only mount keeps a reviewer from writing at all (below); this pins the
    // second line behind it, the tree-hash check, on its own.
    process.env.VIGIL_SANDBOX = 'off';
    try {
      await worker.runUntil(async () => {
        const handle = await startRun(
          env,
          tq,
          loopInput(repo, scenario, {
            councilEnabled: true,
            councilMinIterations: 1,
            councilSize: 3,
            councilThreshold: 3,
            maxIterations: 2,
          }),
        );
        await handle.result();
        const s = await status(handle);
        const round = s.council.verdicts[0];
        expect(round?.votes[1]).toMatchObject({ recorded: 'REJECT', approves: false });
        expect(round?.votes[1]?.reason).toMatch(/^vote void: the reviewer changed the working tree \(smuggled\.txt\)/);
        expect(round?.result).toBe('REJECTED');
      });
    } finally {
      delete process.env.VIGIL_SANDBOX;
    }
  });

  it.runIf(sandboxPlatform().problem === null)('in the sandbox, a reviewer cannot change the working tree at all', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a\n' } }, { writes: { 'b.txt': 'b\n' }, claim: 'promise' }],
      roles: {
        council: {
          default: { output: 'VOTE: APPROVE\nREASON: looks fine\n' },
          members: { '1': { default: { output: 'VOTE: APPROVE\nREASON: fixed it myself\n', writes: { 'smuggled.txt': 'x\n' } } } },
        },
        'devils-advocate': { default: { output: 'VOTE: APPROVE\nREASON: fine\n' } },
      },
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    // The sandbox is the worker's choice (VIGIL_SANDBOX), auto by default: this worker asks for it
    // whatever the environment running the suite says.
    process.env.VIGIL_SANDBOX = 'auto';
    await worker
      .runUntil(async () => {
        const handle = await startRun(
          env,
          tq,
          loopInput(repo, scenario, {
            councilEnabled: true,
            councilMinIterations: 1,
            councilSize: 3,
            councilThreshold: 3,
            maxIterations: 2,
          }),
        );
        await handle.result();
        const s = await status(handle);
        expect(existsSync(path.join(repo, 'smuggled.txt'))).toBe(false);
        // Its call failed on the read-only repository: not an approval, and no voided vote either.
        expect(s.council.verdicts[0]?.votes[1]?.approves).toBe(false);
        expect(s.council.verdicts[0]?.votes[1]?.reason ?? '').not.toMatch(/vote void/);
      })
      .finally(() => {
        delete process.env.VIGIL_SANDBOX;
      });
  });
});
