/**
 * Telling a person, against a real Temporal server and a real local webhook receiver:
 * uncertainty-gated escalation (at the predicted iteration, once per episode, re-armed when the
 * signals clear), supervised vs perpetual, the model-tier ladder up to the human and back down,
 * an agent's HUMAN_REVIEW_NEEDED, and a worker killed while the escalation is being delivered.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import { budgetUpdate, resumeUpdate, stopUpdate } from '../../workflows/messages.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
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

/** An iteration that looks, says so, and changes nothing (a silent one is an empty call: a failure). */
const IDLE = { output: 'looked; nothing to change\n' };

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

interface Received {
  body: { event: string; title: string; dedupeKey: string; details: Record<string, unknown> };
  key: string | undefined;
}

/** A local webhook receiver; `delayMs` holds every answer that long. */
async function receiver(delayMs = 0): Promise<{ url: string; got: Received[]; close: () => Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      got.push({ body: JSON.parse(data) as Received['body'], key: req.headers['idempotency-key'] as string | undefined });
      setTimeout(() => res.writeHead(200).end('ok'), delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, got, close: () => new Promise<void>((r) => server.close(() => r())) };
}
const receivers: { close: () => Promise<void> }[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

const vote = (v: 'APPROVE' | 'REJECT') => ({ output: `VOTE: ${v}\nREASON: member says ${v.toLowerCase()}\n` });
/** Every round: 1 of 3 approve (a split council). */
const SPLIT = { council: { members: { '0': { default: vote('APPROVE') } }, default: vote('REJECT') } };

const STUCK: Partial<Knobs> = {
  councilEnabled: true,
  councilMinIterations: 1,
  councilCheckInterval: 1, // a round every iteration
  councilEarlyCheck: false,
  stagnationLimit: 50, // the breaker stays out of the way
  uncertaintyNoChangeMin: 2,
  uncertaintyRounds: 2,
  uncertaintySplitRounds: 2,
  notifyDesktop: false,
};

const escalations = (got: Received[]) => got.filter((g) => g.body.event === 'escalation');
const handoffs = (repo: string) =>
  existsSync(path.join(repo, '.vigil/handoffs')) ? readdirSync(path.join(repo, '.vigil/handoffs')).sort() : [];

describe('uncertainty-gated escalation', () => {
  it('escalates at the predicted iteration, pauses, resumes, and escalates again in a new episode', async () => {
    const hook = await receiver();
    receivers.push(hook);
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'a.txt': 'a' } }, // 1: a change, then nothing for a while
        IDLE,
        IDLE,
        IDLE, // 4: no change for 3 iterations (>= 2) and 2+ split rounds behind: co-occurrence 2 rounds in a row (3, 4)
        IDLE,
        { writes: { 'b.txt': 'b' } }, // 6: a change clears the no-change signal: the episode re-arms
        IDLE,
        IDLE,
        IDLE, // 9: no change for 3 again (co-occurring at 8 and 9): a new episode escalates
      ],
      default: IDLE,
      roles: SPLIT,
    });
    const tq = uniqueId('stuck');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { ...STUCK, notifyWebhookUrl: hook.url, maxIterations: 30 }));
      const paused = await waitForStatus(handle, (s) => s.paused, 90_000);
      expect(paused.iteration).toBe(4);
      expect(paused.pause).toMatchObject({ by: 'vigil' });
      expect(paused.pause?.reason).toMatch(/^escalation \(uncertainty\): the run looks stuck/);
      expect(paused.escalations).toHaveLength(1);
      expect(paused.escalations[0]).toMatchObject({
        iteration: 4,
        reason: 'uncertainty',
        mode: 'supervised',
        paused: true,
        proxies: { p1: true, p2: false, p3: true },
        notified: { delivered: 1, failed: 0 },
      });
      expect(paused.uncertainty).toMatchObject({ escalatedEpisode: true, escalatedAtIteration: 4, lastProxies: { p1: true, p3: true } });
      expect(handoffs(repo)).toEqual(['iteration-0004-uncertainty.json', 'iteration-0004-uncertainty.md']);
      const md = readFileSync(path.join(repo, '.vigil/handoffs/iteration-0004-uncertainty.md'), 'utf8');
      expect(md).toContain('The run is **paused** and waits for you.');
      expect(md).toContain(`vigil resume ${paused.workflowId}`);
      expect(md).toMatch(/a\.txt/);
      expect(escalations(hook.got)).toHaveLength(1);
      expect(escalations(hook.got)[0]?.key).toBe(`${paused.workflowId}:escalation:4:uncertainty`);
      // Escalation pauses do not send a second, "paused", notification.
      expect(hook.got.filter((g) => g.body.event === 'paused')).toHaveLength(0);

      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'tester' }] });
      const second = await waitForStatus(handle, (s) => s.paused && s.escalations.length === 2, 90_000);
      expect(second.escalations[1]).toMatchObject({ iteration: 9, reason: 'uncertainty' });
      expect(escalations(hook.got)).toHaveLength(2);
      // The prompt after the escalation pause carried the handoff summary.
      const runDir = path.join(repo, '.vigil/runs', readdirSync(path.join(repo, '.vigil/runs'))[0] as string);
      expect(readFileSync(path.join(runDir, 'iteration-0005.prompt.md'), 'utf8')).toMatch(
        /Where things stand \(latest handoff\):\nHandoff at iteration 4 \(uncertainty\)/,
      );
      expect(readFileSync(path.join(runDir, 'iteration-0006.prompt.md'), 'utf8')).not.toContain('latest handoff');

      await handle.executeUpdate(stopUpdate, { args: [{ by: 'tester', reason: 'done testing' }] });
      const outcome = await handle.result();
      expect(outcome.status).toBe('stopped');
      // Delivered once: waited for (a loaded machine may be slow to send it), then a moment more for a second.
      const finished = () => hook.got.filter((g) => g.body.event === 'run_finished');
      for (let waited = 0; finished().length === 0 && waited < 15_000; waited += 100) await sleep(100);
      await sleep(300);
      expect(finished()).toHaveLength(1);
    });
  });

  it('in perpetual mode notifies without pausing, and the handoff says so', async () => {
    const hook = await receiver();
    receivers.push(hook);
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a' } }], default: IDLE, roles: SPLIT });
    const tq = uniqueId('perpetual');
    const worker = await makeWorker(env, tq);
    const { outcome, snap } = await worker.runUntil(async () => {
      // A second channel that refuses connections: it fails, the run does not care, status says so.
      const deadChannel = 'http://127.0.0.1:9/discord-webhook';
      const handle = await startRun(
        env,
        tq,
        loopInput(repo, scenario, {
          ...STUCK,
          autonomyMode: 'perpetual',
          notifyWebhookUrl: hook.url,
          notifyDiscordWebhookUrl: deadChannel,
          notifyTimeoutSeconds: 2,
          maxIterations: 6,
        }),
      );
      return { outcome: await handle.result(), snap: await status(handle) };
    });
    expect(outcome.status).toBe('max_iterations_reached');
    expect(snap.escalations.map((e) => [e.iteration, e.paused, e.mode])).toEqual([[4, false, 'perpetual']]);
    expect(readFileSync(snap.escalations[0]?.handoffMarkdownPath as string, 'utf8')).toContain(
      'The run did **not** pause (autonomy mode `perpetual`',
    );
    expect(escalations(hook.got)).toHaveLength(1);
    expect(escalations(hook.got)[0]?.body.details).toMatchObject({ paused: false, mode: 'perpetual' });
    expect(snap.notifications.failed).toBeGreaterThanOrEqual(1);
    expect(snap.notifications.recentFailures[0]).toMatchObject({ event: 'escalation', channel: 'discord' });
    expect(snap.notifications.recentFailures[0]?.error).not.toContain('discord-webhook'); // no secret path in status
    expect(snap.escalations[0]?.notified).toEqual({ delivered: 1, failed: 1 });
  });
});

describe('model-tier ladder', () => {
  it('climbs LOW -> MEDIUM -> HIGH on failures, escalates to a person, and steps down after single-file successes', async () => {
    const repo = makeRepo();
    const fail = { exitCode: 1, stderr: 'boom\n' };
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        ...Array.from({ length: 13 }, () => fail), // 3 at LOW, 4 at MEDIUM, 6 at HIGH
        ...Array.from({ length: 5 }, (_, i) => ({ writes: { [`f${i}.txt`]: String(i) } })), // single-file successes
      ],
      default: IDLE,
    });
    const tq = uniqueId('ladder');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(
        env,
        tq,
        loopInput(repo, scenario, {
          tier: 'fast',
          baseWaitSeconds: 0,
          maxRetries: 100,
          maxIterations: 18,
          uncertaintyEscalation: false,
          notifyDesktop: false,
          deadLetterAfter: 0,
        }),
      );
      const paused = await waitForStatus(handle, (s) => s.paused, 90_000);
      expect(paused.iteration).toBe(13);
      expect(paused.escalations[0]).toMatchObject({ iteration: 13, reason: 'tier_exhausted', paused: true });
      expect(paused.ladder?.changes.map((c) => [c.iteration, c.from, c.to])).toEqual([
        [3, 'LOW', 'MEDIUM'],
        [7, 'MEDIUM', 'HIGH'],
      ]);
      expect(paused.recentIterations.map((r) => r.tier)).toEqual([
        ...Array(3).fill('fast'),
        ...Array(4).fill('development'),
        ...Array(6).fill('planning'),
      ]);
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'tester' }] });
      const outcome = await handle.result();
      const snap = await status(handle);
      expect(outcome.status).toBe('max_iterations_reached');
      expect(snap.ladder?.changes.at(-1)).toMatchObject({ iteration: 18, from: 'HIGH', to: 'MEDIUM' });
      expect(snap.recentIterations.slice(-5).map((r) => r.tier)).toEqual(Array(5).fill('planning'));
    });
  });
});

describe('agent signal files', () => {
  const request = JSON.stringify({
    reason: 'The PRD asks for 5 and the test expects 4: which is right?',
    blocking: true,
    questions: ['5 or 4?'],
  });
  const asking = (repo: string): string =>
    writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a' } }, { writes: { '.vigil/signals/HUMAN_REVIEW_NEEDED': request } }],
      default: IDLE,
    });

  it('pauses a supervised run on a blocking HUMAN_REVIEW_NEEDED with the agent’s diagnosis in status and the handoff, consumed once', async () => {
    const repo = makeRepo();
    const tq = uniqueId('hrn');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(
        env,
        tq,
        loopInput(repo, asking(repo), { autonomyMode: 'supervised', maxIterations: 4, notifyDesktop: false }),
      );
      const paused = await waitForStatus(handle, (s) => s.paused, 60_000);
      expect(paused.iteration).toBe(2);
      expect(paused.pause?.reason).toContain('The PRD asks for 5 and the test expects 4: which is right?');
      expect(paused.escalations[0]).toMatchObject({ reason: 'agent_request', paused: true });
      expect(readFileSync(paused.escalations[0]?.handoffMarkdownPath as string, 'utf8')).toContain('5 or 4?');
      expect(existsSync(path.join(repo, '.vigil/signals/HUMAN_REVIEW_NEEDED'))).toBe(false);
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'tester' }] });
      const outcome = await handle.result();
      expect(outcome.status).toBe('max_iterations_reached');
      expect((await status(handle)).escalations).toHaveLength(1);
    });
  });

  it('a perpetual run never waits on it: it notifies, goes on, and its outcome lists the request', async () => {
    const repo = makeRepo();
    const tq = uniqueId('hrn-perpetual');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      // The file channel: each notification a JSON line, as a person's tool would read it.
      const notifyFile = path.join(repo, '..', `${path.basename(repo)}-notifications.jsonl`);
      const handle = await startRun(
        env,
        tq,
        loopInput(repo, asking(repo), { autonomyMode: 'perpetual', maxIterations: 4, notifyDesktop: false, notifyFile }),
      );
      const outcome = await handle.result();
      expect(outcome.status).toBe('max_iterations_reached');
      const sent = readFileSync(notifyFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { event: string; message: string });
      expect(sent.filter((n) => n.event === 'escalation').map((n) => n.message)).toEqual([
        expect.stringContaining('The PRD asks for 5 and the test expects 4: which is right?'),
      ]);
      const s = await status(handle);
      expect(s.escalations).toHaveLength(1);
      expect(s.escalations[0]).toMatchObject({ reason: 'agent_request', paused: false, mode: 'perpetual' });
      expect(readFileSync(s.escalations[0]?.handoffMarkdownPath as string, 'utf8')).toContain('5 or 4?');
      const asked = 'the agent asked for a human review: The PRD asks for 5 and the test expects 4: which is right?';
      expect(outcome.notes).toContain(`the agent asked for a person at iteration 2, and the run went on (perpetual mode): ${asked}`);
    });
  });
});

describe('rate limits', () => {
  it('waits as the provider says instead of backing off, does not climb the ladder, and notifies a long wait and its end', async () => {
    const hook = await receiver();
    receivers.push(hook);
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { stderr: 'API Error: rate limit exceeded (HTTP 429). retry-after: 2\n', exitCode: 1 },
        { stderr: 'API Error: rate limit exceeded (HTTP 429). retry-after: 2\n', exitCode: 1 },
        { stderr: 'API Error: rate limit exceeded (HTTP 429). retry-after: 2\n', exitCode: 1 },
        { writes: { 'a.txt': 'a' }, claim: 'promise' },
      ],
    });
    const tq = uniqueId('ratelimit');
    const worker = await makeWorker(env, tq);
    const { outcome, snap, history } = await worker.runUntil(async () => {
      const handle = await startRun(
        env,
        tq,
        loopInput(repo, scenario, {
          tier: 'fast',
          baseWaitSeconds: 600,
          rateLimitNotifySeconds: 1,
          notifyWebhookUrl: hook.url,
          notifyDesktop: false,
        }),
      );
      return { outcome: await handle.result(), snap: await status(handle), history: await handle.fetchHistory() };
    });
    expect(outcome.status).toBe('completion_promise_fulfilled'); // baseWaitSeconds 600 was never used
    const timers = (history.events ?? [])
      .map((e) => e.userMetadata?.summary?.data)
      .filter((d): d is Uint8Array => d instanceof Uint8Array)
      .map((d) => JSON.parse(Buffer.from(d).toString('utf8')) as string)
      .filter((t) => t.startsWith('rate limited'));
    expect(timers).toEqual([1, 2, 3].map((i) => `rate limited: waiting 2s (retry after) after iteration ${i}`));
    expect(snap.ladder?.level).toBe('LOW'); // three failures, but rate limits: no climb
    const rateLimited = hook.got.filter((g) => g.body.event === 'rate_limited');
    expect(rateLimited.filter((g) => g.body.title.startsWith('Rate limited for')).map((g) => g.body.details.waitSeconds)).toEqual([
      2, 2, 2,
    ]);
    // ... and people are told when each wait is over; a rate limit is not a failure.
    expect(rateLimited.filter((g) => g.body.title === 'Rate limit over: the run goes on')).toHaveLength(3);
    expect(snap.recentIterations.slice(0, 3).map((r) => r.exitCode)).toEqual([1, 1, 1]);
  });
});

describe('budget', () => {
  it('pauses when the reported spend reaches the budget, stays paused until the budget is raised, then goes on', async () => {
    const hook = await receiver();
    receivers.push(hook);
    const repo = makeRepo();
    const usage = JSON.stringify({ costUsd: 0.4, inputTokens: 1000, outputTokens: 200, model: 'sonnet' });
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [],
      default: { appends: { 'log.txt': 'x\n' }, writes: { '.vigil/signals/USAGE': usage } },
    });
    const tq = uniqueId('budget');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(
        env,
        tq,
        loopInput(repo, scenario, {
          budgetUsd: 1,
          maxIterations: 5,
          autonomyMode: 'perpetual',
          notifyWebhookUrl: hook.url,
          notifyDesktop: false,
        }),
      );
      const paused = await waitForStatus(handle, (s) => s.paused, 60_000);
      expect(paused.iteration).toBe(3); // 0.4 x 3 = 1.2 >= 1.0, checked before iteration 4
      expect(paused.spend).toMatchObject({ calls: 3, inputTokens: 3000, outputTokens: 600 });
      expect(paused.spend.usd).toBeCloseTo(1.2);
      expect(paused.pause?.reason).toMatch(/^budget exceeded: \$1\.20 of \$1\.00; raise it with `vigil budget /);
      // The pause is in the state before the notification's activity has delivered it: wait for it.
      await vi.waitFor(() => expect(hook.got.filter((g) => g.body.event === 'budget_exceeded')).toHaveLength(1), {
        timeout: 30_000,
        interval: 100,
      });

      // Resuming under the same budget pauses again, with no new notification.
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'tester' }] });
      // Paused again (waited for: the resume is applied when the update returns, the new pause a
      // workflow task later), and a moment more for a notification that must not come.
      await waitForStatus(handle, (s) => s.paused, 30_000);
      await sleep(1500);
      const still = await status(handle);
      expect(still.paused).toBe(true);
      expect(still.iteration).toBe(3);
      expect(hook.got.filter((g) => g.body.event === 'budget_exceeded')).toHaveLength(1);

      const ack = await handle.executeUpdate(budgetUpdate, { args: [{ usd: 5, by: 'tester' }] });
      expect(ack.message).toMatch(/budget set to \$5\.00 \(spent \$1\.20\)/);
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'tester' }] });
      const outcome = await handle.result();
      expect(outcome.status).toBe('max_iterations_reached');
      expect((await status(handle)).budgetUsd).toBe(5);
    });
  });
});

describe('durability of an escalation', () => {
  it('delivers the escalation once per channel key and writes one handoff when the worker dies mid-delivery', async () => {
    const hook = await receiver(4000); // holds each answer: the worker dies while the request is open
    receivers.push(hook);
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a' } }], default: IDLE, roles: SPLIT });
    const tq = uniqueId('esc-crash');
    const { child } = await workers.spawn(tq);
    const handle = await startRun(
      env,
      tq,
      loopInput(repo, scenario, {
        ...STUCK,
        notifyWebhookUrl: hook.url,
        notifyTimeoutSeconds: 5,
        heartbeatTimeoutSeconds: 4,
        maxIterations: 30,
      }),
    );
    const deadline = Date.now() + 90_000;
    while (escalations(hook.got).length === 0) {
      if (Date.now() > deadline) throw new Error('no escalation reached the receiver');
      await sleep(50);
    }
    child.kill('SIGKILL');
    await child;
    await workers.spawn(tq);
    const paused = await waitForStatus(handle, (s) => s.paused, 90_000);
    expect(paused.escalations).toHaveLength(1);
    expect(handoffs(repo)).toEqual(['iteration-0004-uncertainty.json', 'iteration-0004-uncertainty.md']);
    // At-least-once over HTTP, exactly once per idempotency key: a request the dead worker left
    // open may be sent again by the new one, and the receiver can tell it is the same event.
    expect(new Set(escalations(hook.got).map((g) => g.key))).toEqual(new Set([`${paused.workflowId}:escalation:4:uncertainty`]));
    expect(escalations(hook.got).length).toBeLessThanOrEqual(2);
    await handle.executeUpdate(stopUpdate, { args: [{ by: 'tester' }] });
    await handle.result();
  });
});
