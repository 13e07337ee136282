/**
 * Attempts from the start (`vigil start --attempts K`, workflows/attempts-workflow.ts) on a real
 * Temporal server, every knob at the product's default, the scripted agent playing the builder and
 * every reviewing role — each attempt its own scenario (`{attempt}` in the scenario path, filled
 * from VIGIL_ATTEMPT, so an attempt whose calls lacked it would find no scenario and never be approved).
 *
 * Three attempts: attempt 1 never makes the tests pass; attempts 2 and 3 are approved, attempt 3
 * one iteration later. The pick rule takes attempt 2, whose change lands on the run's branch
 * `vigil/<run>`; the attempts' worktrees and branches are gone (keepAttempts off), and status lists
 * each attempt's outcome. The rule's adversarial case (a waived blocking finding against a clean
 * attempt) is a unit test: tests/unit/attempts.test.ts.
 *
 * Knob this file changes, and why (time only): maxIterations 5, so that the failing attempt ends at
 * the cap instead of at the done-signal valve ten iterations in (the approved ones end at 3 and 4).
 * The CLI's multiplier message is checked against an address nothing listens on: it is said before
 * anything connects.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '@temporalio/worker';
import { defaultKnobs } from '../../schemas/knobs.js';
import type { AttemptsInput } from '../../schemas/attempts.js';
import type { Outcome } from '../../schemas/run.js';
import type { ScenarioInput } from '../support/harness.js';
import { attemptsQuery } from '../../workflows/attempts-messages.js';
import {
  assertBuilt,
  createTestEnv,
  git,
  makeRepo,
  makeWorker,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  writePrd,
  type TestEnv,
} from '../support/harness.js';
import { runVigil, show } from '../e2e/cli-helpers.js';
import { patient } from '../support/patience.js';

/**
 * The attempts' scenarios, one folder for all: the sandbox lets an agent read the files its command
 * line names, and `attempt-{attempt}.json` names none, so the folder is made readable as an operator
 * would (VIGIL_SANDBOX_READABLE, read by the in-process worker at each call). The sandbox stays on.
 */
const SCENARIOS = mkdtempSync(path.join(os.tmpdir(), 'vigil-attempts-'));
process.env.VIGIL_SANDBOX_READABLE = [process.env.VIGIL_SANDBOX_READABLE, SCENARIOS].filter(Boolean).join(':');

let env: TestEnv;
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
  worker?.shutdown();
  await running;
  await env?.close();
});

const vote = { output: 'Read the evidence.\nVOTE: APPROVE\nREASON: the feature is there and tested\n' };

/** Every reviewing role approves, in its format, in every attempt. */
const ROLES: NonNullable<ScenarioInput['roles']> = {
  checklist: {
    default: {
      output:
        '```json\n[{"id": "REQ-1", "title": "src/feature.js exports feature = 1", "priority": "critical", "verify": "read src/feature.js"}]\n```\n',
    },
  },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - src/feature.js has it\n' } },
  reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
  council: { default: vote },
};

const feature = (value: number, who: string): string => `/** The feature (${who}). */\nexport const feature = ${value};\n`;

/** Attempt 1: a wrong value every iteration (tests red); 2: right from the start; 3: right one iteration later. */
function scenarios(dir: string): string {
  const write = (n: number, s: Omit<ScenarioInput, 'version' | 'roles'>): void =>
    writeFileSync(path.join(dir, `attempt-${n}.json`), JSON.stringify({ version: 1, roles: ROLES, ...s }, null, 2));
  write(1, { iterations: [], default: { appends: { 'src/feature.js': feature(2, 'attempt 1') }, claim: 'file' } });
  write(2, {
    iterations: [{ writes: { 'src/feature.js': feature(1, 'attempt 2') }, claim: 'file' }],
    default: { appends: { 'src/feature.js': '// checked again\n' }, claim: 'file' },
  });
  write(3, {
    iterations: [
      { writes: { 'src/feature.js': '/** The feature (attempt 3, not yet). */\nexport const feature = 0;\n' } },
      { appends: { 'notes.md': 'thinking\n' } },
      { appends: { 'notes.md': 'still thinking\n' } },
    ],
    default: { writes: { 'src/feature.js': feature(1, 'attempt 3') }, appends: { 'notes.md': 'again\n' }, claim: 'file' },
  });
  return path.join(dir, 'attempt-{attempt}.json');
}

function repo(): string {
  return makeRepo({
    files: {
      'README.md': '# sample\n\nA sample project.\n',
      'package.json': '{"name":"sample","type":"module","private":true,"scripts":{"test":"node --test"}}\n',
      'src/index.js': '/** Entry point. */\nexport const name = "sample";\n',
      'src/feature.js': '/** The feature, not there yet. */\nexport const feature = 0;\n',
      'test/feature.test.js':
        "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { feature } from '../src/feature.js';\ntest('feature', () => assert.equal(feature, 1));\n",
    },
  });
}

describe('vigilAttempts', () => {
  it(
    'three attempts, one failing its tests: the rule picks the approved one with fewer iterations and delivers it on the run branch',
    async () => {
      const r = repo();
      const scenario = scenarios(SCENARIOS);
      const runId = uniqueId('attempts-run');
      const input: AttemptsInput = {
        run: {
          prdPath: writePrd('# Feature\n\nsrc/feature.js exports feature = 1, and the tests pass.\n'),
          prdTitle: 'Feature',
          repoPath: r,
          knobs: {
            ...defaultKnobs(),
            agentCommand: [SCRIPTED_AGENT, '--scenario', scenario],
            baseWaitSeconds: 1,
            backoffJitterSeconds: 0,
            heartbeatTimeoutSeconds: 5,
            maxIterations: 5,
          },
        },
        attempts: 3,
      };
      const handle = await env.client.workflow.start('vigilAttempts', { taskQueue: TQ, workflowId: runId, args: [input] });
      const outcome = (await handle.result()) as Outcome;
      const s = await handle.query(attemptsQuery);

      expect(s.attempts.map((a) => a.status)).toEqual(['max_iterations_reached', 'council_approved', 'council_approved']);
      expect(s.attempts.map((a) => a.iterations)).toEqual([5, 3, 4]);
      expect(s.winner).toBe(2);
      expect(s.why).toMatch(/^attempt 2 of 2 approved: fewest review findings \(0\), then iterations \(3\)/);
      expect(outcome).toMatchObject({ status: 'council_approved', exitCode: 0, iteration: 3 });
      expect(outcome.reason).toContain(`delivered on vigil/${runId}`);

      // The winner's change is on the run's branch; the person's branch and tree are untouched.
      expect(git(r, 'show', `vigil/${runId}:src/feature.js`)).toContain('The feature (attempt 2)');
      expect(git(r, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
      expect(git(r, 'show', 'HEAD:src/feature.js')).toContain('not there yet');
      // Without keepAttempts: no attempt's branch, no worktree left.
      expect(git(r, 'branch', '--list', `vigil/${runId}-attempt-*`)).toBe('');
      expect(existsSync(path.join(r, '.vigil/worktrees', runId, 'attempt-1'))).toBe(false);
      expect(git(r, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length).toBe(1);

      // `vigil status` of the run lists the attempts.
      const status = await runVigil(['status', runId], { TEMPORAL_ADDRESS: temporalAddress(), VIGIL_TASK_QUEUE: TQ });
      expect(status.code, show(status)).toBe(0);
      expect(status.stdout).toContain(`run ${runId} (3 attempts): ended`);
      expect(status.stdout).toMatch(/attempt 1: max_iterations_reached, 5 iteration\(s\)/);
      expect(status.stdout).toMatch(/attempt 2 \(winner\): council_approved, 3 iteration\(s\), 0 review finding\(s\)/);
    },
    patient(600_000),
  );

  it(
    '`vigil start --attempts 3` says the multiplier before it starts anything',
    async () => {
      const r = repo();
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
