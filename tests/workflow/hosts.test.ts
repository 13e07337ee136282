/**
 * Several hosts against a real Temporal server: two `vigil worker` processes (hosts `alpha` and
 * `beta`, from VIGIL_HOST, each polling the shared queue and its own host queue) and two runs, one
 * per host. Each run's history shows every repository-bound activity scheduled on its host's queue and
 * started by that host's worker; the provider breaker stays on the shared queue. A run without a
 * host keeps everything on the shared queue; a run naming a host nobody
 * serves waits, visibly, for one.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostTaskQueue } from '../../schemas/hosts.js';
import type { Knobs } from '../../schemas/knobs.js';
import { hostPollers } from '../../cli/hosts.js';
import { sdkRunApi } from '../../cli/sdk-run-api.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  makeRepo,
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

/** Activities that need no repository: they may run on any worker of the shared queue. */
const ANYWHERE = new Set(['askProviderBreaker']);

let env: TestEnv;
let tq: string;
// Separate processes, as on two machines (one process cannot poll one queue with two workers).
const workers = new WorkerProcesses();

beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
  tq = uniqueId('tq-hosts');
  await Promise.all(['alpha', 'beta'].map((host) => workers.spawn(tq, undefined, { VIGIL_HOST: host })));
});

afterAll(async () => {
  workers.killAll();
  await env?.close();
});

/** The identity of a worker process on `host` (`vigil-worker:<pid>@<host>`). */
const identityOf = (host: string): RegExp => new RegExp(`^vigil-worker:\\d+@${host}$`);

const KNOBS: Partial<Knobs> = {
  testCommand: 'test -f src/a.txt',
  qualityGates: true,
  gateTimeoutSeconds: 60,
  councilEnabled: true,
  councilMinIterations: 1,
  councilCheckInterval: 1000,
  councilEarlyCheck: false,
  councilMemberTimeoutSeconds: 30,
  codeReview: true,
  reviewMaxReviewers: 2,
};

function scenarioFor(repo: string, who: string): string {
  return writeScenario(repo, {
    version: 1,
    iterations: [
      { writes: { 'src/a.txt': `${who}\n` }, output: `writing a on ${who}\n` },
      { appends: { 'README.md': `\n${who} was here\n` }, output: 'done\n', claim: 'promise' },
    ],
    roles: {
      council: { default: { output: 'VOTE: APPROVE\nREASON: the evidence holds\n' } },
      'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: nothing found against it\n' } },
      reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\nNo blocking issue.\n' } },
    },
  });
}

interface Placement {
  type: string;
  queue: string;
  identity: string | null;
}

/** Every activity of a run's history: where it was scheduled and which worker started it. */
async function placements(handle: WorkflowHandle): Promise<{ activities: Placement[] }> {
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const started = new Map<string, string>();
  for (const e of events) {
    const a = e.activityTaskStartedEventAttributes;
    if (a) started.set(String(a.scheduledEventId), a.identity ?? '');
  }
  const activities: Placement[] = [];
  for (const e of events) {
    const a = e.activityTaskScheduledEventAttributes;
    if (!a) continue;
    activities.push({
      type: a.activityType?.name ?? '?',
      queue: a.taskQueue?.name ?? '?',
      identity: started.get(String(e.eventId)) ?? null,
    });
  }
  return { activities };
}

describe('several hosts', () => {
  it("sends every repository-bound activity of a run to its host's queue and worker", async () => {
    const runs = ['alpha', 'beta'].map((host) => {
      const repo = makeRepo();
      const notifyFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-notify-')), 'notifications.jsonl');
      return { host, repo, notifyFile, input: { ...loopInput(repo, scenarioFor(repo, host), { ...KNOBS, notifyFile }), host } };
    });
    const handles = await Promise.all(runs.map((r) => startRun(env, tq, r.input)));
    // On a timeout, say where the runs stand instead of only that they did not finish.
    const outcomes = await Promise.race([
      Promise.all(handles.map((h) => h.result())),
      sleep(150_000).then(async () => {
        const where = await Promise.all(
          handles.map((h) => status(h).then((x) => ({ status: x.status, iteration: x.iteration, pause: x.pause }), String)),
        );
        throw new Error(`the runs did not finish: ${JSON.stringify(where)}`);
      }),
    ]);
    for (const o of outcomes) expect(o.status).toBe('council_approved');

    for (const [i, r] of runs.entries()) {
      const handle = handles[i] as WorkflowHandle;
      expect((await status(handle)).host).toBe(r.host);
      const { activities } = await placements(handle);
      const repoBound = activities.filter((a) => !ANYWHERE.has(a.type));
      // The run did the repository work worth checking: agent calls (with the inspection), gates and
      // tests (the gate pass riding with the agent call), a code review and a council round (their
      // calls inside), a notification.
      expect([...new Set(repoBound.map((a) => a.type))]).toEqual(
        expect.arrayContaining(['prepareRun', 'runAgent', 'reviewRound', 'councilRound', 'notify']),
      );
      // Builder, reviewers and council members all ran on the host (in its repository).
      expect(repoBound.filter((a) => a.type === 'runAgent').length).toBeGreaterThanOrEqual(2);
      expect(agentCalls(r.repo).filter((c) => c.role !== 'iteration').length).toBeGreaterThanOrEqual(3 + 1);
      for (const a of repoBound) {
        expect(a, `${a.type} of the run on ${r.host}`).toEqual({
          type: a.type,
          queue: hostTaskQueue(tq, r.host),
          identity: expect.stringMatching(identityOf(r.host)),
        });
      }
      for (const a of activities.filter((x) => ANYWHERE.has(x.type))) expect(a.queue).toBe(tq);
      // The work happened in this run's repository, and the notification went out from its host.
      expect(readFileSync(path.join(r.repo, 'src/a.txt'), 'utf8')).toBe(`${r.host}\n`);
      expect(existsSync(r.notifyFile)).toBe(true);
    }
  });

  it('keeps everything on the shared queue for a run without a host', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'src/a.txt': 'x\n' }, claim: 'promise' }] });
    const handle = await startRun(env, tq, loopInput(repo, scenario, { testCommand: 'test -f src/a.txt' }));
    expect((await handle.result()).status).toBe('completion_promise_fulfilled');
    expect((await status(handle)).host).toBeNull();
    const { activities } = await placements(handle);
    expect(activities.length).toBeGreaterThan(3);
    for (const a of activities) {
      expect(a.queue).toBe(tq);
      expect(a.identity).toMatch(/^vigil-worker:\d+@(alpha|beta)$/);
    }
  });

  it('leaves a run on a host no worker serves waiting for one, and says so', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ claim: 'promise' }] });
    const handle = await startRun(env, tq, { ...loopInput(repo, scenario), host: 'gamma' });
    try {
      const s = await waitForStatus(handle, (x) => x.host === 'gamma');
      expect(s.runStartSha).toBeNull();
      // Its first repository step is scheduled on gamma's queue, and nothing picks it up.
      await sleep(3000);
      const desc = await handle.describe();
      const pending = desc.raw.pendingActivities ?? [];
      expect(pending.map((p) => p.activityType?.name)).toEqual(['prepareRun']);
      expect(pending[0]?.attempt).toBe(1);
      expect(pending[0]?.lastStartedTime ?? null).toBeNull();
      const { activities } = await placements(handle);
      expect(activities).toEqual([{ type: 'prepareRun', queue: hostTaskQueue(tq, 'gamma'), identity: null }]);
      const api = sdkRunApi(env.client);
      expect(await hostPollers(api, tq, 'gamma')).toEqual([]);
      expect(await hostPollers(api, tq, 'alpha')).toEqual([expect.stringMatching(identityOf('alpha'))]);
    } finally {
      await handle.terminate('test over');
    }
  });
});
