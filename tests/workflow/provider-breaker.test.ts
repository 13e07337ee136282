/**
 * The provider circuit breaker entity (`vigilProviderBreaker`, one workflow per provider) on the
 * real Temporal dev server: tripping, the single HALF_OPEN probe, re-opening, the operator reset,
 * invalid report signals, continue-as-new keeping the state, the `askProviderBreaker` activity run
 * by a real worker from a workflow (update-with-start on the activity's own task queue), and the
 * `vigil providers` command against it. Small configs keep it fast (cooldown 2 s, probe interval
 * 1 s); test (1) uses the seed's defaults to see the 300 s cooldown.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { providersCommand, type ProviderRow } from '../../cli/providers.js';
import type { ProviderBreakerState } from '../../rules/provider-breaker.js';
import {
  askUpdate,
  breakerStateQuery,
  breakerWorkflowId,
  reportSignal,
  resetUpdate,
  type AskAnswer,
  type BreakerConfigOverrides,
  type BreakerView,
  type ProviderBreakerInput,
  type ReportPayload,
} from '../../workflows/provider-breaker-messages.js';
import { vigilProviderBreaker } from '../../workflows/provider-breaker-workflow.js';
import { createVigilWorker, payloadConverterPath } from '../../workers/worker.js';
import { createTestEnv, makeWorker, NAMESPACE, ROOT, sleep, uniqueId, type TestEnv } from '../support/harness.js';

/** Fast numbers: 3 failures within 60 s trip it for 2 s; probes 1 s apart; 3 successes close it. */
const FAST: BreakerConfigOverrides = {
  failureThreshold: 3,
  failureWindowMs: 60_000,
  cooldownMs: 2000,
  probeIntervalMs: 1000,
  closeAfterSuccesses: 3,
};

let env: TestEnv;
let tq: string;
let worker: Worker;
let running: Promise<void>;
const started: string[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  tq = uniqueId('breaker');
  worker = await makeWorker(env, tq);
  running = worker.run();
});

afterAll(async () => {
  // Entities never end by themselves: terminate this file's so they do not outlive the test run.
  await Promise.all(
    started.map((id) =>
      env.client.workflow
        .getHandle(id)
        .terminate('test finished')
        .catch(() => undefined),
    ),
  );
  worker?.shutdown();
  await running;
  await env?.close();
});

type Breaker = WorkflowHandle<typeof vigilProviderBreaker>;

/** A fresh provider name (a fresh entity) per test. */
const providerName = (tag: string): string => uniqueId(`p-${tag}`).slice(0, 63);

async function startBreaker(provider: string, extra: Omit<ProviderBreakerInput, 'provider'> = {}): Promise<Breaker> {
  const workflowId = breakerWorkflowId(provider);
  started.push(workflowId);
  await env.client.workflow.start(vigilProviderBreaker, { taskQueue: tq, workflowId, args: [{ provider, ...extra }] });
  // A handle without a run id follows the entity across continue-as-new.
  return env.client.workflow.getHandle<typeof vigilProviderBreaker>(workflowId);
}

const ask = (h: Breaker, runId: string, askId?: string): Promise<AskAnswer> =>
  h.executeUpdate(askUpdate, { args: [{ runId, ...(askId ? { askId } : {}) }] });
const report = (h: Breaker, p: ReportPayload): Promise<void> => h.signal(reportSignal, p);
const view = (h: Breaker): Promise<BreakerView> => h.query(breakerStateQuery);

/** Polls `breakerState` until `pred` holds (signals are asynchronous). */
async function waitForView(h: Breaker, pred: (v: BreakerView) => boolean, timeoutMs = 20_000): Promise<BreakerView> {
  const deadline = Date.now() + timeoutMs;
  let last: BreakerView | undefined;
  while (Date.now() < deadline) {
    last = await view(h);
    if (pred(last)) return last;
    await sleep(100);
  }
  throw new Error(`breaker condition not met within ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

/** Three calls let out and reported failed: the breaker opens. */
async function trip(h: Breaker, reason = 'HTTP 529 overloaded'): Promise<BreakerView> {
  const before = (await view(h)).state.trips;
  for (const run of ['run-a', 'run-b', 'run-c']) expect(await ask(h, run)).toMatchObject({ allow: true, probe: false });
  for (const run of ['run-a', 'run-b', 'run-c']) await report(h, { runId: run, outcome: 'failure', probe: false, reason });
  return waitForView(h, (v) => v.state.trips === before + 1);
}

/** Asks as `runId` until the breaker lets the call out (sleeping until each `retryAtMs`). */
async function askUntilAllowed(h: Breaker, runId: string, askId?: string): Promise<AskAnswer & { allow: true }> {
  for (let i = 0; i < 50; i++) {
    const a = await ask(h, runId, askId);
    if (a.allow) return a;
    await sleep(Math.max(50, a.retryAtMs - Date.now() + 50));
  }
  throw new Error(`${runId} was never let through`);
}

describe('vigilProviderBreaker', () => {
  it('(1) three failures within the window open it: the next ask waits ~300 s (seed defaults)', async () => {
    const h = await startBreaker(providerName('trip'));
    const v = await trip(h, 'rate limited (429)');
    expect(v.state).toMatchObject({ phase: 'OPEN', trips: 1, failureTimesMs: [] });
    const a = await ask(h, 'run-d');
    expect(a).toMatchObject({ allow: false, reason: 'open' });
    if (a.allow) throw new Error('unreachable');
    expect(a.retryAtMs).toBeGreaterThan(Date.now() + 290_000);
    expect(a.retryAtMs).toBeLessThanOrEqual(Date.now() + 301_000); // workflow time vs this clock: same machine
    expect(a.retryAtMs).toBe(v.state.openUntilMs);

    const after = await view(h);
    expect(after.config).toEqual({
      failureThreshold: 3,
      failureWindowMs: 60_000,
      cooldownMs: 300_000,
      probeIntervalMs: 10_000,
      closeAfterSuccesses: 3,
    });
    expect(after.recentEvents).toEqual([
      expect.objectContaining({
        kind: 'transition',
        from: 'CLOSED',
        to: 'OPEN',
        by: 'run-c',
        why: expect.stringMatching(/^3 failure\(s\) within 60 s: rate limited \(429\); open until /),
      }),
    ]);
    expect(after.runsWaiting).toEqual([expect.objectContaining({ runId: 'run-d', reason: 'open', retryAtMs: a.retryAtMs })]);
    // The UI's current details name the phase and until when.
    const meta = await h.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(meta.currentDetails).toMatch(
      new RegExp(`^\\*\\*OPEN\\*\\* · provider \`${after.provider}\` · calls refused until ${new Date(a.retryAtMs).toISOString()}`),
    );
  });

  it('(2) after the cooldown exactly one probe goes out, a concurrent ask waits, three probe successes close it', async () => {
    const h = await startBreaker(providerName('probe'), { config: FAST });
    await trip(h);
    const refused = await ask(h, 'run-x');
    if (refused.allow) throw new Error('expected a refusal while OPEN');
    await sleep(Math.max(0, refused.retryAtMs - Date.now() + 100));
    // A query reads the workflow's clock as of its last task: the cooldown's timer has to have fired
    // (on a loaded machine, later than this clock's retry time) before it can say HALF_OPEN.
    await waitForView(h, (v) => v.effectivePhase === 'HALF_OPEN');

    // Two runs ask at once: one gets the probe, the other waits.
    const [x, y] = await Promise.all([ask(h, 'run-x', 'ask-x-1'), ask(h, 'run-y', 'ask-y-1')]);
    const answers = [x, y];
    expect(answers.filter((a) => a.allow)).toEqual([expect.objectContaining({ allow: true, probe: true })]);
    expect(answers.filter((a) => !a.allow)).toEqual([expect.objectContaining({ allow: false, reason: 'probe_in_flight' })]);
    const [holder, holderAsk, other] = x.allow ? ['run-x', 'ask-x-1', 'run-y'] : ['run-y', 'ask-y-1', 'run-x'];
    // The holder's ask retried (same ask id): the same answer, still one probe out.
    expect(await ask(h, holder, holderAsk)).toMatchObject({ allow: true, probe: true });
    expect((await view(h)).probe).toMatchObject({ runId: holder, askId: holderAsk });
    // A probe report from a run that does not hold the probe changes nothing.
    await report(h, { runId: other, outcome: 'success', probe: true });
    await report(h, { runId: holder, outcome: 'success', probe: true });
    let v = await waitForView(h, (s) => s.state.probeSuccesses === 1);
    expect(v.state).toMatchObject({ phase: 'HALF_OPEN', probeInFlight: false });

    for (const n of [2, 3]) {
      const a = await askUntilAllowed(h, other);
      expect(a.probe).toBe(true);
      await report(h, { runId: other, outcome: 'success', probe: true });
      v = await waitForView(h, (s) => s.state.probeSuccesses === n || s.state.phase === 'CLOSED');
    }
    expect(v.state).toMatchObject({ phase: 'CLOSED', probeInFlight: false, probeSuccesses: 0, trips: 1 });
    expect(v.probe).toBeNull();
    expect(v.recentEvents.map((e) => `${e.from}->${e.to}`)).toEqual(['CLOSED->OPEN', 'OPEN->HALF_OPEN', 'HALF_OPEN->CLOSED']);
    expect(v.recentEvents[2]).toMatchObject({ by: other, why: '3 probe(s) succeeded in a row' });
    expect(await ask(h, 'run-z')).toMatchObject({ allow: true, probe: false });
    // The whole episode replays deterministically from its history.
    await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, await h.fetchHistory(), h.workflowId)).resolves.toBeUndefined();
  });

  it('(2b) a probe not reported within its lease counts as failed: the breaker re-opens, the late report is ignored', async () => {
    const h = await startBreaker(providerName('lease'), { config: FAST });
    await trip(h);
    const refused = await ask(h, 'run-l');
    if (refused.allow) throw new Error('expected a refusal while OPEN');
    await sleep(Math.max(0, refused.retryAtMs - Date.now() + 100));
    const probe = await h.executeUpdate(askUpdate, { args: [{ runId: 'run-l', askId: 'lost-1', leaseMs: 1500 }] });
    expect(probe).toMatchObject({ allow: true, probe: true });
    expect((await view(h)).probe).toMatchObject({ runId: 'run-l', askId: 'lost-1' });
    const v = await waitForView(h, (s) => s.state.trips === 2, 10_000);
    expect(v.state.phase).toBe('OPEN');
    expect(v.probe).toBeNull();
    expect(v.recentEvents.at(-1)).toMatchObject({
      from: 'HALF_OPEN',
      to: 'OPEN',
      by: 'vigil',
      why: expect.stringMatching(/^the probe failed: run run-l did not report its probe within its lease \(1\.5 s\)/),
    });
    await report(h, { runId: 'run-l', outcome: 'success', probe: true, askId: 'lost-1' });
    await sleep(300);
    expect((await view(h)).state).toEqual(v.state);
  });

  it('(3) a failed probe re-opens it for a new cooldown', async () => {
    const h = await startBreaker(providerName('reopen'), { config: FAST });
    await trip(h);
    const probe = await askUntilAllowed(h, 'run-p');
    expect(probe.probe).toBe(true);
    await report(h, { runId: 'run-p', outcome: 'failure', probe: true, reason: 'auth error' });
    const v = await waitForView(h, (s) => s.state.trips === 2);
    expect(v.state.phase).toBe('OPEN');
    const a = await ask(h, 'run-q');
    expect(a).toMatchObject({ allow: false, reason: 'open' });
    if (a.allow) throw new Error('unreachable');
    expect(a.retryAtMs - Date.now()).toBeGreaterThan(1000);
    expect(a.retryAtMs - Date.now()).toBeLessThanOrEqual(2100);
    expect(v.recentEvents.at(-1)).toMatchObject({
      kind: 'transition',
      from: 'HALF_OPEN',
      to: 'OPEN',
      by: 'run-p',
      why: expect.stringMatching(/^the probe failed: auth error; open until/),
    });
  });

  it('(4) an operator reset closes it and is recorded with who and why; bad payloads are refused', async () => {
    const h = await startBreaker(providerName('reset'));
    await trip(h);
    const state: ProviderBreakerState = await h.executeUpdate(resetUpdate, { args: [{ by: 'alice', reason: 'provider recovered' }] });
    expect(state).toMatchObject({ phase: 'CLOSED', openUntilMs: null, failureTimesMs: [], trips: 1 });
    const v = await view(h);
    expect(v.recentEvents.at(-1)).toMatchObject({
      kind: 'reset',
      from: 'OPEN',
      to: 'CLOSED',
      by: 'alice',
      why: 'operator reset: provider recovered',
    });
    expect(await ask(h, 'run-after-reset')).toMatchObject({ allow: true, probe: false });

    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: unknown) => e,
      );
    const badReset = await refusal(h.executeUpdate(resetUpdate, { args: [{ by: 42 } as unknown as { by: string }] }));
    expect(badReset).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((badReset as WorkflowUpdateFailedError).cause?.message)).toMatch(/^reset: field "by": /);
    const badAsk = await refusal(h.executeUpdate(askUpdate, { args: [{} as { runId: string }] }));
    expect(String((badAsk as WorkflowUpdateFailedError).cause?.message)).toMatch(/^ask: field "runId": /);
  });

  it('(5) invalid report signals are ignored and counted, never failing a workflow task', async () => {
    const h = await startBreaker(providerName('invalid'));
    const bad: unknown[] = [
      {},
      { runId: 'r', outcome: 'maybe', probe: false },
      'garbage',
      { runId: 'r', outcome: 'failure', probe: false, extra: 1 },
    ];
    for (const p of bad) await h.signal(reportSignal, p as ReportPayload);
    // An undecodable payload, as a raw client could send it.
    await env.client.workflowService.signalWorkflowExecution({
      namespace: NAMESPACE,
      workflowExecution: { workflowId: h.workflowId },
      signalName: 'report',
      identity: 'hostile-test',
      input: { payloads: [{ metadata: { encoding: new TextEncoder().encode('x/y') }, data: new TextEncoder().encode('?') }] },
    });
    const v = await waitForView(h, (s) => s.invalidReportCount === 5);
    expect(v.invalidReports.map((r) => r.error)).toEqual([
      expect.stringMatching(/^report: field "runId": .*; field "outcome": .*; field "probe": /),
      expect.stringMatching(/^report: field "outcome": /),
      expect.stringMatching(/^report: field "\(payload\)": /),
      'report: unknown field(s) "extra"',
      expect.stringMatching(/^report: the payload could not be decoded/),
    ]);
    expect(v.state).toMatchObject({ phase: 'CLOSED', failureTimesMs: [] });
    const history = await h.fetchHistory();
    expect((history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toHaveLength(0);
    expect((await h.describe()).status.name).toBe('RUNNING');
    expect(await ask(h, 'still-works')).toMatchObject({ allow: true });
  });

  it('(6) continue-as-new carries the state, events, waiting runs and invalid count', async () => {
    const h = await startBreaker(providerName('can'), { continueAsNewAfterMessages: 4 });
    const firstRunId = (await h.describe()).runId;
    await h.signal(reportSignal, { nonsense: true } as unknown as ReportPayload); // message 1
    for (const run of ['run-a', 'run-b', 'run-c']) await ask(h, run); // messages 2-4: rollover
    await waitForView(h, (s) => s.generation === 1);
    for (const run of ['run-a', 'run-b', 'run-c']) await report(h, { runId: run, outcome: 'failure', probe: false, reason: 'crash' });
    const opened = await waitForView(h, (s) => s.state.phase === 'OPEN');
    expect(opened.generation).toBe(1);
    await ask(h, 'run-d'); // message 4 of generation 1: rollover again
    const v = await waitForView(h, (s) => s.generation === 2);
    expect(v.state).toEqual(opened.state);
    expect(v.state).toMatchObject({ phase: 'OPEN', trips: 1 });
    expect(v.recentEvents).toEqual(opened.recentEvents);
    expect(v.invalidReportCount).toBe(1);
    expect(v.runsWaiting.map((w) => w.runId)).toEqual(['run-d']);
    expect(v.continueAsNewAfterMessages).toBe(4);
    expect((await h.describe()).runId).not.toBe(firstRunId);
    const first = await env.client.workflow.getHandle(h.workflowId, firstRunId).describe();
    expect(first.status.name).toBe('CONTINUED_AS_NEW');
  });
});

describe('askProviderBreaker activity on a real worker', () => {
  /**
   * A workflow module written for this test (outside the project, bundled with the real breaker
   * workflow) that calls the activity the way a run would.
   */
  async function callerBundle(): Promise<{ code: string }> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-breaker-caller-'));
    const file = path.join(dir, 'caller-workflows.js');
    writeFileSync(
      file,
      [
        "import { proxyActivities, workflowInfo } from '@temporalio/workflow';",
        `export { vigilProviderBreaker } from ${JSON.stringify(path.join(ROOT, 'workflows/provider-breaker-workflow.js'))};`,
        // Bounds one ask: a start-or-update round trip through a worker of this queue (seconds).
        "const { askProviderBreaker } = proxyActivities({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3 } });",
        'export async function askTwice(provider, config) {',
        '  const runId = workflowInfo().workflowId;',
        '  return [await askProviderBreaker({ provider, runId, config }), await askProviderBreaker({ provider, runId })];',
        '}',
      ].join('\n'),
    );
    return bundleWorkflowCode({
      workflowsPath: file,
      payloadConverterPath: payloadConverterPath(),
      logger: { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: (m: string) => console.error(m), log: () => {} },
      // The module lives outside the project: let it resolve @temporalio/* from the project.
      webpackConfigHook: (config) => ({
        ...config,
        resolve: { ...config.resolve, modules: [...(config.resolve?.modules ?? []), path.join(ROOT, 'node_modules')] },
      }),
    });
  }

  it('(7) starts the entity on its own task queue with update-with-start and returns the decision', async () => {
    const queue = uniqueId('breaker-activity');
    const w = await createVigilWorker({
      connection: env.nativeConnection,
      namespace: NAMESPACE,
      taskQueue: queue,
      workflowBundle: await callerBundle(),
    });
    const provider = providerName('activity');
    const workflowId = breakerWorkflowId(provider);
    started.push(workflowId);
    await w.runUntil(async () => {
      const first = await env.client.workflow.execute('askTwice', {
        taskQueue: queue,
        workflowId: uniqueId('caller'),
        args: [provider, { cooldownMs: 60_000 }],
      });
      expect(first).toEqual([
        { allow: true, probe: false, state: expect.objectContaining({ phase: 'CLOSED' }) },
        { allow: true, probe: false, state: expect.objectContaining({ phase: 'CLOSED' }) },
      ]);
      const h = env.client.workflow.getHandle<typeof vigilProviderBreaker>(workflowId);
      const d = await h.describe();
      expect(d.taskQueue).toBe(queue);
      expect(d.status.name).toBe('RUNNING');
      expect(await d.staticSummary()).toBe(`Vigil provider circuit breaker · ${provider}`);
      const v = await view(h);
      expect(v.config.cooldownMs).toBe(60_000);
      expect(v.messagesThisRun).toBe(2);

      await trip(h);
      const callerId = uniqueId('caller');
      const second = (await env.client.workflow.execute('askTwice', {
        taskQueue: queue,
        workflowId: callerId,
        args: [provider, { cooldownMs: 1 }],
      })) as AskAnswer[];
      expect(second.map((a) => (a.allow ? 'allow' : a.reason))).toEqual(['open', 'open']);
      const after = await view(h);
      // The running entity kept the config it started with (a later ask's config is for a start only).
      expect(after.config.cooldownMs).toBe(60_000);
      expect(after.runsWaiting).toEqual([expect.objectContaining({ runId: callerId, reason: 'open' })]);
      // Its worker stops with this test: an entity left running would not answer `vigil providers`.
      await h.terminate('test finished');
    });
  });
});

describe('vigil providers', () => {
  function capture(): { lines: () => string; restore: () => void } {
    let text = '';
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      return true;
    });
    const errSpy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      return true;
    });
    return {
      lines: () => text,
      restore: () => {
        spy.mockRestore();
        errSpy.mockRestore();
      },
    };
  }

  it('(8) lists the breakers (text and JSON) and resets one; unknown provider exits 3', async () => {
    const provider = providerName('cli');
    const h = await startBreaker(provider);
    await trip(h, 'overloaded');

    let c = capture();
    let code: number;
    try {
      code = await providersCommand(env.client, { json: true });
    } finally {
      c.restore();
    }
    const rows = JSON.parse(c.lines()) as ProviderRow[];
    const row = rows.find((r) => r.provider === provider);
    expect(row).toMatchObject({
      workflowId: h.workflowId,
      workerAnswered: true,
      phase: 'OPEN',
      failuresInWindow: 0,
      failureThreshold: 3,
      lastTransition: { from: 'CLOSED', to: 'OPEN' },
    });
    expect(row?.openUntil).toBe(new Date((await view(h)).state.openUntilMs ?? 0).toISOString());
    // Breakers of other files' finished workers may not answer: then the command says so (exit 4).
    expect(code).toBe(rows.every((r) => r.workerAnswered) ? 0 : 4);

    c = capture();
    try {
      await providersCommand(env.client, { json: false });
    } finally {
      c.restore();
    }
    const line = c
      .lines()
      .split('\n')
      .find((l) => l.startsWith(provider));
    expect(line).toMatch(
      / OPEN +failures 0\/3 in window +open until \S+Z \(\d+ s left\) +last: CLOSED→OPEN .* by run-c \(3 failure\(s\) within 60 s: overloaded; open until /,
    );

    c = capture();
    try {
      code = await providersCommand(env.client, { json: false, reset: provider, by: 'bob' });
    } finally {
      c.restore();
    }
    expect(code).toBe(0);
    expect(c.lines()).toBe(`${provider}: reset by bob; now CLOSED (trips so far 1)\n`);
    expect((await view(h)).recentEvents.at(-1)).toMatchObject({ kind: 'reset', by: 'bob' });

    c = capture();
    try {
      expect(await providersCommand(env.client, { json: false, reset: 'no-such-provider-here' })).toBe(3);
      expect(await providersCommand(env.client, { json: false, reset: 'bad name!' })).toBe(2);
    } finally {
      c.restore();
    }
    expect(c.lines()).toMatch(/no circuit breaker for provider "no-such-provider-here"/);
  });
});
