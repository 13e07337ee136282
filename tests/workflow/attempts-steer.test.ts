/**
 * A run with attempts steered as one run (workflows/attempts-steer.ts, docs/attempts.md) on a real
 * Temporal server, every knob at the product's default but time (tests/support/attempts.ts), the
 * sandbox on, the scripted agent playing every role of every attempt:
 *
 * - `vigil pause|budget|stop <run>` reach every live attempt, asserted on each attempt's own status
 *   (its `status` query), not on what the run says of itself; `vigil status`, `vigil list` and
 *   `vigil watch` of the run show the attempts and its state; a stop ends it `stopped` with no
 *   worktree and (keepAttempts off) no attempt branch left.
 * - Cancelled while it waits for a person's pick: its attempts' worktrees are removed, their
 *   branches kept (keepAttempts).
 * - deliver=pr: the winner is delivered on the run's branch, pushed to a real bare remote, and its
 *   pull request opened through gh. GitHub's API cannot run here: gh is tests/support/fake-gh.ts,
 *   first on the in-process worker's PATH; the push is real.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '@temporalio/worker';
import type { AttemptsStatus } from '../../schemas/attempts.js';
import type { Outcome } from '../../schemas/run.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import type { ScenarioInput } from '../support/harness.js';
import { attemptsQuery } from '../../workflows/attempts-messages.js';
import { assertBuilt, createTestEnv, git, makeWorker, temporalAddress, uniqueId, type TestEnv } from '../support/harness.js';
import { attemptsInput, attemptScenarios, attemptsRepo, CLEAN, FOUND, type Script } from '../support/attempts.js';
import { fakeGh } from '../support/fake-gh.js';
import { runVigil, show } from '../e2e/cli-helpers.js';
import { patient } from '../support/patience.js';

const { ghDir, ghCallsIn } = fakeGh('https://github.com/o/r/pull/42');
process.env.PATH = `${ghDir}${path.delimiter}${process.env.PATH ?? ''}`;

let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
const TQ = uniqueId('attempts-steer');
const cli = (): Record<string, string> => ({ TEMPORAL_ADDRESS: temporalAddress(), VIGIL_TASK_QUEUE: TQ, PATH: process.env.PATH ?? '' });
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
  worker = await makeWorker(env, TQ);
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.close();
});

/** Never right: keeps iterating until told otherwise. */
const FAILING: Script = {
  iterations: [],
  default: { appends: { 'src/feature.js': '/** The feature (failing). */\nexport const feature = 2;\n' }, claim: 'file' },
};

async function until<T>(what: string, ask: () => Promise<T>, ok: (v: T) => boolean, ms = 300_000): Promise<T> {
  const deadline = Date.now() + patient(ms);
  let v = await ask();
  while (!ok(v)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)?.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 300));
    v = await ask();
  }
  return v;
}

const snapshot = (id: string): Promise<StatusSnapshot | null> =>
  env.client.workflow
    .getHandle(id)
    .query<StatusSnapshot>('status')
    .catch(() => null);
const worktrees = (r: string): number => git(r, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length ?? 0;

describe('a run with attempts, steered as one run', () => {
  it(
    'pause, budget and stop sent to the run reach every attempt; status, list and watch show them; the stop leaves no worktree',
    async () => {
      const r = attemptsRepo();
      const runId = uniqueId('steer-run');
      const input = attemptsInput(r, attemptScenarios({}, [FAILING, FAILING]), 2);
      // maxIterations at its default: the attempts must still be running when the messages come.
      input.run.knobs = { ...input.run.knobs, maxIterations: 50 };
      const handle = await env.client.workflow.start('vigilAttempts', { taskQueue: TQ, workflowId: runId, args: [input] });
      const ids = [`${runId}-attempt-1`, `${runId}-attempt-2`];
      await until(
        'both attempts answer',
        () => Promise.all(ids.map(snapshot)),
        (s) => s.every((x) => x !== null && x.iteration >= 1),
      );
      const watching = runVigil(['watch', runId], cli(), { timeoutMs: 600_000 });

      const paused = await runVigil(['pause', runId, '--reason', 'lunch', '--by', 'alice'], cli());
      expect(paused.code, show(paused)).toBe(0);
      expect(paused.stdout).toContain(`${runId}: paused: sent to attempt(s) 1, 2`);
      // Each attempt is paused, by the person who paused the run.
      const snaps = await until(
        'both attempts paused',
        () => Promise.all(ids.map(snapshot)),
        (s) => s.every((x) => x?.status === 'paused'),
      );
      for (const s of snaps) expect(s?.pause).toMatchObject({ by: 'alice', reason: 'the run with attempts is paused: lunch' });
      const again = await runVigil(['pause', runId], cli());
      expect(again.stdout).toContain('already paused by alice');

      // The budget covers both: $3 shared by the two running attempts, each enforcing its $1.50.
      const budget = await runVigil(['budget', runId, '--usd', '3'], cli());
      expect(budget.code, show(budget)).toBe(0);
      expect(budget.stdout).toContain('budget set to $3.00 for all the attempts: attempt(s) 1, 2 get $1.50 each');
      await until(
        'both attempts budgeted',
        () => Promise.all(ids.map(snapshot)),
        (s) => s.every((x) => x?.budgetUsd === 1.5),
      );

      const status = await runVigil(['status', runId], cli());
      expect(status.code, show(status)).toBe(0);
      expect(status.stdout).toContain(`run ${runId} (2 attempts): running, paused (by alice)`);
      expect(status.stdout).toMatch(/attempt 1: paused \(by alice\), iteration \d+, \$[\d.]+ of \$1\.50/);
      expect(status.stdout).toMatch(/attempt 2: paused \(by alice\), iteration \d+/);
      expect(status.stdout).toContain('budget    : $3.00 for all the attempts');

      const list = await runVigil(['list', '--json', '--limit', '1000'], cli());
      expect(list.code, show(list)).toBe(0);
      const row = (JSON.parse(list.stdout) as { workflowId: string; attempts?: { phase: string; k: number } }[]).find(
        (x) => x.workflowId === runId,
      );
      expect(row?.attempts).toMatchObject({ phase: 'running', k: 2, waitingForPick: false });
      const listText = await runVigil(['list', '--limit', '1000'], cli());
      expect(listText.stdout).toMatch(new RegExp(`${runId}\\s+attempts×2: running`));

      const stopped = await runVigil(['stop', runId, '--reason', 'enough', '--by', 'bob'], cli());
      expect(stopped.code, show(stopped)).toBe(0);
      expect(stopped.stdout).toContain('stopping: sent to attempt(s) 1, 2');
      const outcome = (await handle.result()) as Outcome;
      expect(outcome.status).toBe('stopped');
      expect(outcome.reason).toMatch(/^stopped by bob: enough; its attempts were stopped; no attempt delivered/);
      for (const id of ids) expect(((await env.client.workflow.getHandle(id).result()) as Outcome).status).toBe('stopped');
      const s = await handle.query(attemptsQuery);
      expect(s.attempts.map((a) => a.status)).toEqual(['stopped', 'stopped']);
      // No worktree, no attempt branch (keepAttempts off), nothing on the run's branch.
      expect(worktrees(r)).toBe(1);
      expect(existsSync(path.join(r, '.vigil/worktrees', runId, 'attempt-1'))).toBe(false);
      expect(git(r, 'branch', '--list', `vigil/${runId}*`)).toBe('');
      // Refused once ended, saying so.
      const late = await runVigil(['pause', runId], cli());
      expect(late.code, show(late)).not.toBe(0);
      expect(late.stderr).toMatch(/has finished \(stopped/);

      const watched = await watching;
      expect(watched.code, show(watched)).toBe(0);
      expect(watched.stdout).toContain(`watching ${runId} (a run with attempts)`);
      expect(watched.stdout).toContain('paused by alice: every running attempt told');
      expect(watched.stdout).toContain('stopping (by bob): no winner is delivered');
      expect(watched.stdout).toContain('finished: stopped (exit 0)');
    },
    patient(600_000),
  );

  it(
    "cancelled while it waits for a person's pick: no worktree is left, the attempts' branches are kept (keepAttempts)",
    async () => {
      const council: NonNullable<ScenarioInput['roles']> = {
        council: {
          members: {
            '0': { default: { output: 'PICK: 1\nREASON: smaller change\n' } },
            '1': { default: { output: 'PICK: 2\nREASON: no findings\n' } },
            '2': { default: { output: 'PICK: 7\nREASON: confused\n' } },
          },
        },
      };
      const r = attemptsRepo();
      const runId = uniqueId('steer-cancel');
      const input = { ...attemptsInput(r, attemptScenarios(council, [FOUND, CLEAN]), 2), keepAttempts: true };
      const handle = await env.client.workflow.start('vigilAttempts', { taskQueue: TQ, workflowId: runId, args: [input] });
      await until(
        'the wait for a pick',
        () => handle.query(attemptsQuery).catch(() => null),
        (s: AttemptsStatus | null) => s?.phase === 'waiting_for_pick' || s?.phase === 'ended',
        600_000,
      );
      expect((await handle.query(attemptsQuery)).phase).toBe('waiting_for_pick');
      expect(worktrees(r)).toBe(3);
      const list = await runVigil(['list', '--limit', '1000'], cli());
      expect(list.stdout).toMatch(new RegExp(`${runId}\\s+attempts×2: pick an attempt`));

      await handle.cancel();
      const outcome = (await handle.result()) as Outcome;
      expect(outcome.status).toBe('stopped');
      expect(outcome.reason).toContain("cancelled while it waited for a person's pick; no attempt delivered");
      expect(worktrees(r)).toBe(1);
      expect(existsSync(path.join(r, '.vigil/worktrees', runId, 'attempt-2'))).toBe(false);
      expect(
        git(r, 'branch', '--list', `vigil/${runId}-attempt-*`)
          .split('\n')
          .map((b) => b.trim()),
      ).toEqual([`vigil/${runId}-attempt-1`, `vigil/${runId}-attempt-2`]);
      // Nothing delivered on the run's own branch.
      expect(git(r, 'branch', '--list', `vigil/${runId}`)).toBe('');
    },
    patient(600_000),
  );

  it(
    "deliver=pr: the winner's branch is pushed to the remote and its pull request opened, as a single run's",
    async () => {
      const r = attemptsRepo();
      const remote = mkdtempSync(path.join(os.tmpdir(), 'vigil-origin-'));
      git(remote, 'init', '-q', '--bare');
      git(r, 'remote', 'add', 'origin', remote);
      const runId = uniqueId('steer-pr');
      const input = attemptsInput(r, attemptScenarios({}, [FAILING, CLEAN]), 2);
      input.run.knobs = { ...input.run.knobs, deliver: 'pr' };
      const handle = await env.client.workflow.start('vigilAttempts', { taskQueue: TQ, workflowId: runId, args: [input] });
      const outcome = (await handle.result()) as Outcome;
      expect(outcome.status).toBe('council_approved');
      expect(outcome.notes).toEqual(['pull request opened: https://github.com/o/r/pull/42']);
      const branch = `vigil/${runId}`;
      // The run's branch holds the winner (attempt 2), and the remote has it at the same commit.
      expect(git(r, 'show', `${branch}:src/feature.js`)).toContain('The feature (clean)');
      expect(git(remote, 'rev-parse', `refs/heads/${branch}`)).toBe(git(r, 'rev-parse', branch));
      // No attempt's branch was pushed.
      expect(git(remote, 'for-each-ref', '--format=%(refname)')).toBe(`refs/heads/${branch}`);
      const created = ghCallsIn(r).filter((a) => a[0] === 'pr' && a[1] === 'create');
      expect(created).toHaveLength(1);
      expect(created[0]?.[created[0].indexOf('--head') + 1]).toBe(branch);
      const s = await handle.query(attemptsQuery);
      expect(s.winner).toBe(2);
      expect(s.pullRequest).toEqual({ url: 'https://github.com/o/r/pull/42', note: 'pull request opened: https://github.com/o/r/pull/42' });
      const status = await runVigil(['status', runId], cli());
      expect(status.stdout).toContain('pull req. : pull request opened: https://github.com/o/r/pull/42');
    },
    patient(600_000),
  );
});
