/**
 * Questions with deadlines, against the suite's real Temporal server and `vigil worker`
 * processes: a supervised run the agent pauses (a blocking HUMAN_REVIEW_NEEDED) reminds on its
 * channels, tells the second list, and at the deadline stops, continues, or takes the agent's
 * default answer; an answer before them cancels them all; a worker killed between two of them
 * changes nothing. The timers are seconds here (the knobs take any duration); the notifications are
 * read from the file channels, as a person's tool would read them.
 *
 * Built on `loopInput`: these runs pin the pause's own mechanics, where the council, gates, review
 * and checklist would only add agent calls before and after the pause; every other knob, the
 * sandbox and the desktop channel included, is at its default.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import { inputUpdate, pauseUpdate, resumeUpdate } from '../../workflows/messages.js';
import { deadlinesLine } from '../../rules/pause-deadlines.js';
import {
  assertBuilt,
  createTestEnv,
  loopInput,
  makeRepo,
  sleep,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  WorkerProcesses,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

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

const QUESTION = { reason: 'The PRD says 5 and the test says 4: which is right?', blocking: true, questions: ['5 or 4?'] };

/** Iteration 1 changes a file; iteration 2 asks a person (with `defaultAnswer`, when given); later ones change nothing. */
function asking(repo: string, defaultAnswer?: string): string {
  const request = JSON.stringify(defaultAnswer ? { ...QUESTION, defaultAnswer } : QUESTION);
  return writeScenario(repo, {
    version: 1,
    iterations: [{ writes: { 'a.txt': 'a' } }, { writes: { '.vigil/signals/HUMAN_REVIEW_NEEDED': request } }],
    default: { output: 'looked; nothing to change\n' },
  });
}

interface Sent {
  event: string;
  title: string;
  message: string;
  dedupeKey: string;
}
const read = (file: string): Sent[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Sent)
    : [];
const events = (file: string): string[] => read(file).map((n) => n.event);

function files(repo: string): { notifyFile: string; rerouteFile: string } {
  const base = path.join(repo, '..', path.basename(repo));
  return { notifyFile: `${base}-notifications.jsonl`, rerouteFile: `${base}-team.jsonl` };
}

async function started(repo: string, knobs: Partial<Knobs>, defaultAnswer?: string) {
  const tq = uniqueId('deadlines');
  const worker = await workers.spawn(tq);
  const handle = await startRun(env, tq, loopInput(repo, asking(repo, defaultAnswer), { maxIterations: 3, ...knobs }));
  return { tq, worker, handle };
}

describe('a pause that waits for a person', () => {
  it('reminds on its channels, tells the second list, and stops at the deadline, a worker killed in between changing nothing', async () => {
    const repo = makeRepo();
    const f = files(repo);
    const { tq, worker, handle } = await started(repo, {
      ...f,
      escalationRemindAfter: 3,
      escalationRerouteAfter: 8,
      escalationDeadline: 12,
    });
    const paused = await waitForStatus(handle, (s) => s.paused && !s.agentRunning, 60_000);
    expect(paused.pause?.by).toBe('vigil');
    const at = Date.parse(paused.pause?.at ?? '');
    expect(paused.pause?.deadlines).toMatchObject({
      remindAt: new Date(at + 3000).toISOString(),
      rerouteAt: new Date(at + 8000).toISOString(),
      deadlineAt: new Date(at + 12_000).toISOString(),
      onDeadline: 'stop',
      reminded: null,
      rerouted: null,
    });
    // The reminder, on the run's own channels, once.
    const reminded = await waitForStatus(handle, (s) => Boolean(s.pause?.deadlines?.reminded), 30_000);
    expect(Date.parse(reminded.pause?.deadlines?.reminded ?? '')).toBeGreaterThanOrEqual(at + 3000);
    for (let waited = 0; events(f.notifyFile).length < 2 && waited < 15_000; waited += 100) await sleep(100);
    expect(events(f.notifyFile)).toEqual(['escalation', 'pause_reminder']);
    expect(read(f.notifyFile)[1]?.message).toContain(QUESTION.reason);
    expect(deadlinesLine(reminded.pause?.deadlines, Date.parse(reminded.pause?.deadlines?.reminded ?? '') + 1000)).toMatch(
      /^reminder sent 1 s ago; re-routed in \d+ s; stops in \d+ s$/,
    );
    expect(events(f.rerouteFile)).toEqual([]);
    // The worker dies between the reminder and the re-route; another takes the run over.
    worker.child.kill('SIGKILL');
    await worker.child;
    await workers.spawn(tq);
    const outcome = await handle.result();
    expect(outcome.status).toBe('stopped');
    expect(outcome.reason).toBe('stopped by vigil: nobody answered in 12 s: stopped');
    // Each sent once, in order; the second list had the re-route only.
    expect(events(f.notifyFile)).toEqual(['escalation', 'pause_reminder', 'pause_deadline', 'run_finished']);
    expect(events(f.rerouteFile)).toEqual(['pause_rerouted']);
    expect(read(f.rerouteFile)[0]?.message).toContain('you are its second contact');
    expect((await status(handle)).iteration).toBe(2);
  });

  it('with onDeadline=continue the run goes on past the deadline, and its outcome says nobody answered', async () => {
    const repo = makeRepo();
    const f = files(repo);
    const { handle } = await started(repo, { ...f, escalationDeadline: 3, onDeadline: 'continue' });
    const outcome = await handle.result();
    expect(outcome.status).toBe('max_iterations_reached');
    expect(outcome.notes).toContain('nobody answered in 3 s: continued without an answer');
    expect(events(f.notifyFile)).toEqual(['escalation', 'pause_deadline', 'run_finished']);
    expect((await status(handle)).iteration).toBe(3);
  });

  it("with onDeadline=default-answer the agent's default answer reaches the next prompt as the person's input", async () => {
    const repo = makeRepo();
    const f = files(repo);
    const { handle } = await started(repo, { ...f, escalationDeadline: 3, onDeadline: 'default-answer' }, 'Take 5, as the PRD says.');
    const paused = await waitForStatus(handle, (s) => s.paused && !s.agentRunning, 60_000);
    expect(paused.pause?.defaultAnswer).toBe('Take 5, as the PRD says.');
    const outcome = await handle.result();
    expect(outcome.status).toBe('max_iterations_reached');
    expect(outcome.notes).toContain("nobody answered in 3 s: continued with the agent's default answer");
    const runDir = path.join(repo, '.vigil/runs', readdirSync(path.join(repo, '.vigil/runs'))[0] as string);
    const prompt3 = readFileSync(path.join(runDir, 'iteration-0003.prompt.md'), 'utf8');
    expect(prompt3).toContain('go on with your default answer: Take 5, as the PRD says.');
  });

  it('default-answer with no default answer stops rather than guess', async () => {
    const repo = makeRepo();
    const f = files(repo);
    const { handle } = await started(repo, { ...f, escalationDeadline: 3, onDeadline: 'default-answer' });
    const outcome = await handle.result();
    expect(outcome.status).toBe('stopped');
    expect(outcome.reason).toMatch(
      /nobody answered in 3 s: stopped \(onDeadline is default-answer, but the question carried no default answer\)/,
    );
  });

  it('an answer before them cancels them all: a directive keeps the run paused with no reminder or deadline, a resume goes on', async () => {
    const repo = makeRepo();
    const f = files(repo);
    const { handle } = await started(repo, { ...f, escalationRemindAfter: 4, escalationRerouteAfter: 5, escalationDeadline: 6 });
    await waitForStatus(handle, (s) => s.paused && !s.agentRunning, 60_000);
    await handle.executeUpdate(inputUpdate, { args: [{ directive: 'Take 4: the test is right.', by: 'alice' }] });
    const answered = await status(handle);
    expect(answered.pause?.deadlines?.answered).toMatchObject({ by: 'alice' });
    expect(deadlinesLine(answered.pause?.deadlines, Date.now())).toBe('answered by alice; no reminder or deadline');
    await sleep(8000); // past every one of them
    const still = await status(handle);
    expect(still.paused).toBe(true);
    expect(still.outcome).toBeNull();
    expect(events(f.notifyFile)).toEqual(['escalation']);
    expect(events(f.rerouteFile)).toEqual([]);
    await handle.executeUpdate(resumeUpdate, { args: [{ by: 'alice' }] });
    const outcome = await handle.result();
    expect(outcome.status).toBe('max_iterations_reached');
    expect(outcome.notes.join('\n')).not.toContain('nobody answered');
    expect(events(f.notifyFile)).toEqual(['escalation', 'run_finished']);
  });

  it('a person’s own pause waits for the person alone: no reminder, no deadline (the control)', async () => {
    const repo = makeRepo();
    const f = files(repo);
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a' }, sleepMs: 1500 }],
      default: { output: 'looked; nothing to change\n' },
    });
    const tq = uniqueId('deadlines');
    await workers.spawn(tq);
    const handle = await startRun(
      env,
      tq,
      loopInput(repo, scenario, { ...f, maxIterations: 2, escalationRemindAfter: 1, escalationDeadline: 2 }),
    );
    await waitForStatus(handle, (s) => s.agentRunning, 60_000);
    await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'lunch', by: 'bob' }] });
    const paused = await waitForStatus(handle, (s) => s.paused && !s.agentRunning, 60_000);
    expect(paused.pause?.deadlines ?? null).toBeNull();
    await sleep(4000);
    expect((await status(handle)).paused).toBe(true);
    expect(events(f.notifyFile)).toEqual(['paused']);
    await handle.executeUpdate(resumeUpdate, { args: [{ by: 'bob' }] });
    expect((await handle.result()).status).toBe('max_iterations_reached');
  });
});
