/**
 * Attempts from a stuck point (knob `onStuck=fork`, workflows/run/fork.ts) on a real Temporal
 * server, the sandbox on and every knob at the product's default but the two this feature is:
 * `onStuck=fork` and `forkWith=model:weak,model:strong` (two forks, one per scripted "model"). The
 * scripted agent plays the builder and every reviewing role; its scenario path has `{model}` in it
 * (VIGIL_MODEL: empty in the stuck run, `weak` or `strong` in the forks), so each model follows a
 * scenario of its own and a fork whose calls lacked its model would find none.
 *
 * The stuck run: iteration 1 makes the feature (its tests pass: checkpoint 1 is the last good one),
 * then claims done every iteration without changing anything while its council rejects (the
 * README says nothing of the feature); the done-signal valve would force-stop it at 10 claims.
 *
 * Honest (a): the `strong` fork documents the feature and is approved; the `weak` fork, adversarial,
 * claims done at once without doing anything, every reviewing role approving it: its own evidence
 * gate refuses it (nothing changed since the fork started), so it never continues the run. The run
 * ends approved with the strong fork's tree delivered on `vigil/<run>`, its status and history
 * showing the fork: from checkpoint 1, fork 2 won. (b): both forks claim without working: none is
 * approved, the run ends `force_stopped` as without the knob. (c), the knob off, is the default:
 * tests/workflow/default-knobs.test.ts's stuck runs force-stop as before.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '@temporalio/worker';
import { defaultKnobs } from '../../schemas/knobs.js';
import type { Outcome, RunInput } from '../../schemas/run.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { budgetUpdate, inputUpdate, pauseUpdate, resumeUpdate, statusQuery, stopSignal } from '../../workflows/messages.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  git,
  makeWorker,
  SCRIPTED_AGENT,
  uniqueId,
  writePrd,
  type TestEnv,
} from '../support/harness.js';
import { attemptsRepo, ROLES, SCENARIOS, type Script } from '../support/attempts.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
const TQ = uniqueId('fork');
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

const FEATURE = '/** The feature. */\nexport const feature = 1;\n';

/**
 * The stuck run: the feature at iteration 1 (its tests pass), then a claim every iteration and nothing else; its checklist
 * verifier wants the README to say so (a refusal that convenes no council, so no split council asks a person first).
 */
const STUCK: Script = {
  roles: { 'checklist-verifier': { default: { output: 'ITEM REQ-1: FAIL - the README says nothing of the feature\n' } } },
  iterations: [{ writes: { 'src/feature.js': FEATURE }, claim: 'file' }],
  default: { claim: 'file' },
};
/** A fork that claims done every iteration and does nothing (every reviewing role approving it). */
const CLAIMS_ONLY: Script = { iterations: [], default: { claim: 'file' } };
/**
 * A fork that documents the feature, works on for a while and claims only after five calls: by then the claims-only fork's
 * checks (from the floor, iteration 3) have been refused, so it is the one a first-come rule without the check would take.
 */
const DOCUMENTS: Script = {
  iterations: [
    { appends: { 'README.md': '\n`feature` is 1 (src/feature.js).\n' } },
    ...[2, 3, 4, 5].map((i) => ({ appends: { 'notes.md': `iteration ${i}\n` } })),
  ],
  default: { appends: { 'notes.md': 'done\n' }, claim: 'file' },
};

/** A fork that keeps working and never claims: it runs until something stops it. */
const WORKS_ON: Script = { iterations: [], default: { appends: { 'notes.md': 'more\n' } } };

/** The scenario path: `model-<model>.json` per model, the stuck run's as `model-.json`. */
function scenarios(byModel: Record<string, Script>): string {
  const dir = mkdtempSync(path.join(SCENARIOS, 'fork-'));
  for (const [model, s] of Object.entries(byModel))
    writeFileSync(path.join(dir, `model-${model}.json`), JSON.stringify({ version: 1, ...s, roles: { ...ROLES, ...s.roles } }, null, 2));
  return path.join(dir, 'model-{model}.json');
}

async function runStuck(forks: { weak: Script; strong: Script }, whileForking?: (runId: string) => Promise<void>) {
  const repo = attemptsRepo();
  const runId = uniqueId('fork-run');
  const input: RunInput = {
    prdPath: writePrd('# Feature\n\nsrc/feature.js exports feature = 1, the README says so, and the tests pass.\n'),
    prdTitle: 'Feature',
    repoPath: repo,
    knobs: {
      ...defaultKnobs(),
      agentCommand: [SCRIPTED_AGENT, '--scenario', scenarios({ '': STUCK, ...forks })],
      baseWaitSeconds: 1,
      backoffJitterSeconds: 0,
      heartbeatTimeoutSeconds: 5,
      // The feature under test.
      onStuck: 'fork',
      forkWith: 'model:weak,model:strong',
    },
  };
  const handle = await env.client.workflow.start('vigilRun', { taskQueue: TQ, workflowId: runId, args: [input] });
  if (whileForking) await whileForking(runId);
  const outcome = (await handle.result()) as Outcome;
  const s = await handle.query(statusQuery);
  const history = await handle.fetchHistory();
  const children = (history.events ?? [])
    .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId)
    .filter((x): x is string => Boolean(x));
  return { repo, runId, outcome, s: s as StatusSnapshot, children, fork: (id: string) => env.client.workflow.getHandle(id) };
}

describe('onStuck=fork', () => {
  it(
    'a stuck run forks from its last good checkpoint; the fork on the other model is approved and continues the run; the one that only claims never does',
    async () => {
      const { repo, runId, outcome, s, children, fork } = await runStuck({ weak: CLAIMS_ONLY, strong: DOCUMENTS });

      // The stuck run got as far as the valve: ten claims, every one refused.
      expect(s.fork).toMatchObject({ stuckAt: 10, phase: 'ended', winner: 2, from: { iteration: 1 } });
      expect(s.fork?.stuck).toMatch(/^stopped without approval: .*10 completion claims without approval/);
      expect(s.fork?.attempts.map((a) => [a.n, a.workflowId, a.model])).toEqual([
        [1, `${runId}-attempt-1`, 'weak'],
        [2, `${runId}-attempt-2`, 'strong'],
      ]);
      expect(s.fork?.attempts[1]?.status).toBe('council_approved');
      // It claimed only once it had worked for a while (the scenario's claims start after its fifth call).
      expect(s.fork?.attempts[1]?.iterations).toBeGreaterThanOrEqual(5);
      // The one that only claimed was refused by its own evidence gate every time: stuck itself, or stopped once the other won.
      // (Its valve may end it before the other is approved, as it does on an idle machine: its refusals are cheap.)
      expect(['stopped', 'force_stopped']).toContain(s.fork?.attempts[0]?.status);
      const weak = await fork(`${runId}-attempt-1`).query(statusQuery);
      expect(weak.checks?.byCause.evidence).toBeGreaterThan(0);
      expect(weak.checks?.last).toMatchObject({ approved: false, cause: 'evidence' });

      expect(outcome).toMatchObject({ status: 'council_approved', exitCode: 0, iteration: 10 });
      expect(outcome.reason).toMatch(
        /^stuck at iteration 10 \(stopped without approval: .*\); forked 2 attempt\(s\) from the checkpoint of iteration 1: /,
      );
      expect(outcome.reason).toMatch(
        /: fork 2 \(command strong, tier development\) council_approved after \d+ iteration\(s\) continued the run/,
      );
      // What done rested on is the winning fork's own evidence, on its tree.
      expect(outcome.notes[0]).toMatch(/^evidence: baseline tests 1 of 1 passed/);
      expect(outcome.notes[0]).toContain(`tree ${s.fork?.tree?.slice(0, 12)}`);
      // The history shows the fork: both children started from this run.
      expect(children).toEqual([`${runId}-attempt-1`, `${runId}-attempt-2`]);
      // The stuck run's own iterations, in its own repository: ten (each fork's are in its worktree, removed).
      expect(agentCalls(repo).filter((c) => c.role === 'iteration')).toHaveLength(10);

      // The winner's tree is the run's, delivered as usual on the run's branch; the person's branch untouched.
      expect(git(repo, 'show', `vigil/${runId}:README.md`)).toContain('`feature` is 1');
      expect(git(repo, 'show', `vigil/${runId}:src/feature.js`)).toBe(FEATURE.trimEnd());
      expect(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
      // The forks' worktrees and branches are gone.
      expect(git(repo, 'branch', '--list', `vigil/${runId}-attempt-*`)).toBe('');
      expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length).toBe(1);
    },
    patient(900_000),
  );

  it(
    'every fork stuck too: the run ends force_stopped, as without the knob',
    async () => {
      const { runId, outcome, s, children } = await runStuck({ weak: CLAIMS_ONLY, strong: CLAIMS_ONLY });

      expect(children).toEqual([`${runId}-attempt-1`, `${runId}-attempt-2`]);
      expect(s.fork?.winner).toBeNull();
      expect(s.fork?.attempts.map((a) => a.status)).toEqual(['force_stopped', 'force_stopped']);
      expect(outcome).toMatchObject({ status: 'force_stopped', exitCode: 20, iteration: 10 });
      expect(outcome.reason).toMatch(/forked 2 attempt\(s\) from the checkpoint of iteration 1; none was approved: fork 1 \(command weak/);
    },
    patient(900_000),
  );
  it(
    "a person's pause, directive, budget, resume and stop while the forks run reach them: the run ends stopped, nothing delivered",
    async () => {
      const { repo, runId, outcome, s } = await runStuck({ weak: WORKS_ON, strong: WORKS_ON }, async (id) => {
        // Once both forks have worked an iteration, the run is stopped.
        const deadline = Date.now() + patient(600_000);
        for (;;) {
          const st = await env.client.workflow
            .getHandle(id)
            .query(statusQuery)
            .catch(() => null);
          const running = st?.fork?.attempts.map((a) => a.workflowId) ?? [];
          const worked = await Promise.all(
            running.map(
              async (f) =>
                ((
                  await env.client.workflow
                    .getHandle(f)
                    .query(statusQuery)
                    .catch(() => null)
                )?.iteration ?? 0) >= 2,
            ),
          );
          if (worked.length === 2 && worked.every(Boolean)) break;
          if (Date.now() > deadline) throw new Error('the forks never got going');
          await new Promise((r) => setTimeout(r, 500));
        }
        // The run's other messages reach the live forks too: a pause, a directive, a budget, a resume.
        const run = env.client.workflow.getHandle(id);
        const forks = [1, 2].map((n) => env.client.workflow.getHandle(`${id}-attempt-${n}`));
        const eachFork = async (ok: (st: StatusSnapshot) => boolean, what: string): Promise<StatusSnapshot[]> => {
          const until = Date.now() + patient(120_000);
          for (;;) {
            const sts = await Promise.all(forks.map((f) => f.query(statusQuery)));
            if (sts.every(ok)) return sts;
            if (Date.now() > until) throw new Error(`the forks never ${what}: ${JSON.stringify(sts.map((x) => [x.pause, x.budgetUsd]))}`);
            await new Promise((r) => setTimeout(r, 250));
          }
        };
        expect((await run.executeUpdate(pauseUpdate, { args: [{ by: 'alice', reason: 'lunch' }] })).changed).toBe(true);
        const paused = await eachFork((x) => x.pause !== null, 'paused');
        expect(paused.map((x) => x.pause?.reason)).toEqual(['the run is paused: lunch', 'the run is paused: lunch']);
        await run.executeUpdate(inputUpdate, { args: [{ directive: 'Mention the feature in CHANGELOG.md too.', by: 'alice' }] });
        await eachFork((x) => x.pendingDirectives === 1, 'took the directive');
        // The run's own queue gave it up: it is the forks' now.
        expect((await run.query(statusQuery)).pendingDirectives).toBe(0);
        // No budget before: $10 for the whole run, nothing spent (scripted calls cost nothing), shared by the two live forks.
        await run.executeUpdate(budgetUpdate, { args: [{ usd: 10, by: 'alice' }] });
        await eachFork((x) => x.budgetUsd === 5, 'took their share of the budget');
        await run.executeUpdate(resumeUpdate, { args: [{ by: 'alice' }] });
        await eachFork((x) => x.pause === null, 'resumed');
        await run.signal(stopSignal, { by: 'alice', reason: 'enough' });
      });

      expect(outcome).toMatchObject({ status: 'stopped', reason: 'stopped by alice: enough' });
      expect(outcome.notes).toContainEqual(
        expect.stringMatching(/^stuck at iteration 10 .*; none was approved: fork 1 \(command weak, tier development\) stopped/),
      );
      expect(s.fork?.attempts.map((a) => a.status)).toEqual(['stopped', 'stopped']);
      expect(s.fork?.winner).toBeNull();
      expect(git(repo, 'branch', '--list', `vigil/${runId}*`)).toBe('');
      expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length).toBe(1);
    },
    patient(900_000),
  );
});
