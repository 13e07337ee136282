/**
 * Attempts from the start (`vigil start --attempts K`, workflows/attempts-workflow.ts) on a real
 * Temporal server, every knob at the product's default, the scripted agent playing the builder and
 * every reviewing role — each attempt its own scenario (`{attempt}` in the scenario path, filled
 * from VIGIL_ATTEMPT, so an attempt whose calls lacked it would find no scenario and never be approved).
 *
 * Three attempts: attempt 1 never makes the tests pass; attempts 2 and 3 are approved, attempt 2
 * with a review finding (a low one its reviewer passed), attempt 3 clean one iteration later. Two
 * approved: the comparison round asks the run's council (in the run's own repository, where no
 * attempt runs: the scenario `attempt-.json`, VIGIL_ATTEMPT being unset there) to pick one from the
 * comparison pack. Honest: every member picks attempt 3, which lands on the run's branch
 * `vigil/<run>`; the attempts' worktrees and branches are gone (keepAttempts off), and status lists
 * each attempt's outcome and the picks. Adversarial: every member picks attempt 1, which was not
 * approved: the council is not obeyed, the pick rule decides. The rule's own adversarial case (a
 * waived blocking finding against a clean attempt) is a unit test: tests/unit/attempts.test.ts,
 * and the comparison's rule tests/unit/comparison.test.ts.
 *
 * The scenarios, the repository and the knobs are tests/support/attempts.ts's: the only knob
 * changed (time only) is maxIterations 5, so that the failing attempt ends at the cap instead of at
 * the done-signal valve ten iterations in (the approved ones end at 3 and 4).
 * The CLI's multiplier message is checked against an address nothing listens on: it is said before
 * anything connects.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '@temporalio/worker';
import type { AttemptsStatus } from '../../schemas/attempts.js';
import type { Outcome } from '../../schemas/run.js';
import type { ScenarioInput } from '../support/harness.js';
import { attemptsQuery } from '../../workflows/attempts-messages.js';
import { ATTEMPTS_COMPARISON_PATCH } from '../../workflows/run/eras.js';
import { patchIds } from '../replay/command-sequence.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  git,
  makeWorker,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  WorkerProcesses,
  writePrd,
  type TestEnv,
} from '../support/harness.js';
import { attemptsInput, attemptScenarios, attemptsRepo, CLEAN, FOUND, type Script } from '../support/attempts.js';
import { runVigil, show } from '../e2e/cli-helpers.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
const workers = new WorkerProcesses();
let worker: Worker;
let running: Promise<void>;
const TQ = uniqueId('attempts');
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
  worker = await makeWorker(env, TQ);
  running = worker.run();
});
afterAll(async () => {
  workers.killAll();
  worker?.shutdown();
  await running;
  await env?.close();
});

/** The council in the run's own repository: every member picks attempt `n`. */
const picking = (n: number): NonNullable<ScenarioInput['roles']> => ({
  council: { default: { output: `Read the pack.\nPICK: ${n}\nREASON: attempt ${n} is the one to keep\n` } },
});

/** A wrong value every iteration (tests red). */
const FAILING: Script = {
  iterations: [],
  default: { appends: { 'src/feature.js': '/** The feature (failing). */\nexport const feature = 2;\n' }, claim: 'file' },
};

/** Starts a run with one attempt per script, the comparison's council answering as `council` says. */
async function startAttempts(council: NonNullable<ScenarioInput['roles']>, scripts: Script[]) {
  const r = attemptsRepo();
  const runId = uniqueId('attempts-run');
  const input = attemptsInput(r, attemptScenarios(council, scripts), scripts.length);
  const handle = await env.client.workflow.start('vigilAttempts', { taskQueue: TQ, workflowId: runId, args: [input] });
  return { r, runId, handle };
}

/** Runs the three attempts (failing, with a finding, clean) to their end, the comparison's council picking `councilPicks`. */
async function runAttempts(councilPicks: number): Promise<{ r: string; runId: string; outcome: Outcome; s: AttemptsStatus }> {
  const { r, runId, handle } = await startAttempts(picking(councilPicks), [FAILING, FOUND, CLEAN]);
  const outcome = (await handle.result()) as Outcome;
  const s = await handle.query(attemptsQuery);
  // The same three attempts each time: 1 failed its tests, 2 approved with a finding, 3 approved clean one iteration later.
  expect(s.attempts.map((a) => a.status)).toEqual(['max_iterations_reached', 'council_approved', 'council_approved']);
  expect(s.attempts.map((a) => a.iterations)).toEqual([5, 3, 4]);
  expect(s.attempts[1]?.findings).toBeGreaterThan(0);
  expect(s.attempts[2]?.findings).toBe(0);
  expect(s.attempts[1]?.evidence).toMatch(/^evidence: /);
  // Several approved: the run asked for the comparison's era and recorded its marker (runs from before it replay down the rule alone).
  expect(patchIds(await handle.fetchHistory())).toEqual([ATTEMPTS_COMPARISON_PATCH]);
  return { r, runId, outcome, s };
}

describe('vigilAttempts', () => {
  it(
    'three attempts, one failing its tests: the council compares the two approved ones, picks the clean one, and it is delivered on the run branch',
    async () => {
      const { r, runId, outcome, s } = await runAttempts(3);

      expect(s.winner).toBe(3);
      expect(s.comparison).toMatchObject({ decidedBy: 'council', split: false });
      expect(s.comparison?.picks.map((p) => p.attempt)).toEqual([3, 3, 3]);
      expect(s.why).toBe('the council picked attempt 3 (attempt 2: 0, attempt 3: 3 of 3 member(s))');
      expect(outcome).toMatchObject({ status: 'council_approved', exitCode: 0, iteration: 4 });
      expect(outcome.reason).toContain(`delivered on vigil/${runId}`);
      // The members read the pack: both approved attempts' diffs, evidence lines and findings, by reference.
      const pack = readFileSync(s.comparison?.packPath ?? '', 'utf8');
      expect(pack).toContain('## Attempt 2');
      expect(pack).toContain('## Attempt 3');
      expect(pack).not.toContain('## Attempt 1');
      expect(pack).toContain('the feature has no doc example');
      expect(pack).toContain('+/** The feature (clean). */');
      // Three member calls in the run's own repository, one each.
      expect(
        agentCalls(r)
          .filter((c) => c.role === 'council')
          .map((c) => c.member),
      ).toEqual(expect.arrayContaining([0, 1, 2]));
      expect(agentCalls(r).filter((c) => c.role === 'council')).toHaveLength(3);

      // The winner's change is on the run's branch; the person's branch and tree are untouched.
      expect(git(r, 'show', `vigil/${runId}:src/feature.js`)).toContain('The feature (clean)');
      expect(git(r, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
      expect(git(r, 'show', 'HEAD:src/feature.js')).toContain('not there yet');
      // Without keepAttempts: no attempt's branch, no worktree left.
      expect(git(r, 'branch', '--list', `vigil/${runId}-attempt-*`)).toBe('');
      expect(existsSync(path.join(r, '.vigil/worktrees', runId, 'attempt-1'))).toBe(false);
      expect(git(r, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length).toBe(1);

      // `vigil status` of the run lists the attempts and the picks.
      const status = await runVigil(['status', runId], { TEMPORAL_ADDRESS: temporalAddress(), VIGIL_TASK_QUEUE: TQ });
      expect(status.code, show(status)).toBe(0);
      expect(status.stdout).toContain(`run ${runId} (3 attempts): ended`);
      expect(status.stdout).toMatch(/attempt 1: max_iterations_reached, 5 iteration\(s\)/);
      expect(status.stdout).toMatch(/attempt 3 \(winner\): council_approved, 4 iteration\(s\), 0 review finding\(s\)/);
      expect(status.stdout).toContain('compared  : decided by the council; picks: member 0: 3, member 1: 3, member 2: 3');
    },
    patient(600_000),
  );

  it(
    'adversarial: a council that picks the attempt that failed its tests is not obeyed; the pick rule decides',
    async () => {
      const { r, runId, outcome, s } = await runAttempts(1);

      expect(s.comparison).toMatchObject({ decidedBy: 'rule', split: false });
      expect(s.comparison?.picks.map((p) => p.attempt)).toEqual([1, 1, 1]);
      expect(s.winner).toBe(3);
      expect(s.why).toMatch(/^no majority of the council \(attempt 2: 0, attempt 3: 0 of 3 member\(s\); 3 pick\(s\) ignored/);
      expect(outcome).toMatchObject({ status: 'council_approved', exitCode: 0 });
      expect(git(r, 'show', `vigil/${runId}:src/feature.js`)).toContain('The feature (clean)');
    },
    patient(600_000),
  );

  it(
    'a supervised run whose council split waits for `vigil pick`; bad picks are refused with exit 2 and the reason',
    async () => {
      // Two approved attempts; member 0 picks 1, member 1 picks 2, member 2 an attempt that does not exist: a split.
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
      const scenario = attemptScenarios(council, [FOUND, CLEAN]);
      const runId = uniqueId('attempts-run');
      // Started as a person would, so served as a person's is: a `vigil worker` process, which also polls the run's host queue.
      const tq = uniqueId('attempts-pick');
      await workers.spawn(tq, undefined, { VIGIL_SANDBOX_READABLE: process.env.VIGIL_SANDBOX_READABLE ?? '' });
      const cli = { TEMPORAL_ADDRESS: temporalAddress(), VIGIL_TASK_QUEUE: tq };
      // Started as a person would, followed to its end: --wait and --json with --attempts (the knobs as attemptsInput's).
      const knobs = ['maxIterations=5', 'baseWaitSeconds=1', 'backoffJitterSeconds=0', 'heartbeatTimeoutSeconds=5'].flatMap((k) => [
        '--set',
        k,
      ]);
      const prd = writePrd('# Feature\n\nsrc/feature.js exports feature = 1, and the tests pass.\n');
      const agent = `"${SCRIPTED_AGENT}" --scenario ${scenario}`;
      const following = runVigil(
        ['start', prd, '--repo', r, '--id', runId, '--attempts', '2', '--agent-command', agent, ...knobs, '--no-store', '--wait', '--json'],
        cli,
        { timeoutMs: 600_000 },
      );
      const handle = env.client.workflow.getHandle(runId);
      // The run waits (no timer): the test asks until it says so.
      const deadline = Date.now() + patient(600_000);
      const ask = () => handle.query(attemptsQuery).catch(() => null);
      let s = await ask();
      while (s?.phase !== 'waiting_for_pick' && s?.phase !== 'ended' && Date.now() < deadline) {
        await new Promise((ok) => setTimeout(ok, 500));
        s = await ask();
      }
      if (!s) throw new Error('the run never answered');
      expect(s.phase).toBe('waiting_for_pick');
      expect(s.comparison).toMatchObject({ decidedBy: 'rule', split: true, pickFrom: [1, 2] });
      const status = await runVigil(['status', runId], cli);
      expect(status.stdout).toContain(`run ${runId} (2 attempts): waiting_for_pick`);
      expect(status.stdout).toContain(`waiting for a person's pick: vigil pick ${runId} <1|2>`);

      // Bad input, each refused with its reason; the run keeps waiting.
      const notAttempt = await runVigil(['pick', runId, '3'], cli);
      expect(notAttempt.code, show(notAttempt)).toBe(2);
      expect(notAttempt.stderr).toContain(`3 is not an attempt of run ${runId}: pick one of 1, 2`);
      const notNumber = await runVigil(['pick', runId, 'two'], cli);
      expect(notNumber.code, show(notNumber)).toBe(2);
      expect(notNumber.stderr).toContain('the attempt is a whole number from 1');
      const attemptRun = await runVigil(['pick', `${runId}-attempt-1`, '1'], cli);
      expect(attemptRun.code, show(attemptRun)).toBe(2);
      expect(attemptRun.stderr).toContain(`run ${runId}-attempt-1 is not a run with attempts: nothing to pick`);
      const noRun = await runVigil(['pick', `${runId}-nope`, '1'], cli);
      expect(noRun.code, show(noRun)).toBe(3);
      expect((await handle.query(attemptsQuery)).phase).toBe('waiting_for_pick');

      const picked = await runVigil(['pick', runId, '2', '--by', 'alice'], cli);
      expect(picked.code, show(picked)).toBe(0);
      expect(picked.stdout).toContain(`attempt 2 picked by alice: run ${runId} delivers it`);
      const outcome = (await handle.result()) as Outcome;
      s = await handle.query(attemptsQuery);
      // `vigil start --wait --json` followed it: started, the attempts as they changed (the wait among them), finished with the exit code.
      const followed = await following;
      expect(followed.code, show(followed)).toBe(0);
      const lines = followed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { kind: string; status?: AttemptsStatus; exitCode?: number });
      expect(lines[0]).toMatchObject({ kind: 'started', workflowId: runId, attempts: 2 });
      expect(lines.some((l) => l.kind === 'attempts' && l.status?.phase === 'waiting_for_pick')).toBe(true);
      expect(lines.at(-1)).toMatchObject({ kind: 'finished', exitCode: 0, outcome: { status: 'council_approved' } });
      expect(s.winner).toBe(2);
      expect(s.comparison).toMatchObject({ decidedBy: 'person', pickedBy: 'alice' });
      expect(s.why).toBe('alice picked attempt 2; the council split (attempt 1: 1, attempt 2: 1)');
      expect(outcome).toMatchObject({ status: 'council_approved', exitCode: 0 });
      expect(git(r, 'show', `vigil/${runId}:src/feature.js`)).toContain('The feature (clean)');

      // Ended: nothing to pick any more.
      const late = await runVigil(['pick', runId, '1'], cli);
      expect(late.code, show(late)).toBe(2);
      expect(late.stderr).toMatch(/not waiting for a pick/);
    },
    patient(600_000),
  );

  it(
    '`vigil start --attempts 3` says the multiplier before it starts anything',
    async () => {
      const r = attemptsRepo();
      const prd = writePrd();
      // Nothing listens there: what is said before connecting is all this checks.
      const res = await runVigil(
        [
          'start',
          prd,
          '--repo',
          r,
          '--attempts',
          '3',
          '--set',
          'budgetUsd=30',
          '--agent-command',
          `"${SCRIPTED_AGENT}" --scenario x.json`,
          '--no-store',
        ],
        { TEMPORAL_ADDRESS: '127.0.0.1:1' },
      );
      expect(res.code, show(res)).not.toBe(0);
      expect(res.stderr).toContain(
        '3 attempts: up to 3× the spend of one run; the budget covers all of them: each attempt gets $10.00 of $30.00.',
      );
      const bad = await runVigil(['start', prd, '--repo', r, '--attempts', '1', '--agent-command', 'x', '--no-store'], {
        TEMPORAL_ADDRESS: '127.0.0.1:1',
      });
      expect(bad.code, show(bad)).toBe(2);
      expect(bad.stderr).toContain('--attempts takes a whole number from 2 to 9, not 1');
    },
    patient(60_000),
  );
});
