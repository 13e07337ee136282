/**
 * What orchestration costs in agent calls, counted by role from the scripted agent's own record,
 * with the product's default knobs (the test command given, as a user with tests gives it):
 *
 * - a claim refused by a failing tool gate (the tests) costs no review, verifier or council call;
 * - a claim refused by the code review costs the review's calls and no council call;
 * - after a refused round, a claim on a tree that changed only in reviewed files nobody flagged
 *   costs the council's calls and the verifier's re-check of the item whose file changed — no
 *   second review;
 * - a long green run without a claim convenes at the first green tree and then at the interval
 *   (`councilCheckInterval`) only, because nothing that changed could flip the verdict.
 */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../schemas/run.js';
import { agentCalls, makeRepo, fileWorker, runInput, startRun, type ScenarioInput, uniqueId, writeScenario } from '../support/harness.js';

const shared = fileWorker('orchestration-calls');

const vote = (v: 'APPROVE' | 'REJECT') => ({ output: `VOTE: ${v}\nREASON: member says ${v.toLowerCase()}\n` });
const ROLES = {
  checklist: {
    default: {
      output: '[{"id": "REQ-1", "title": "notes.txt has a line per step", "priority": "critical", "verify": "read notes.txt"}]\n',
    },
  },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - notes.txt has them\n' } },
  reviewer: { default: { output: 'VERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
};
const step = (n: number, claim = false) => ({ appends: { 'notes.txt': `line ${n}\n` }, ...(claim ? { claim: 'file' as const } : {}) });

const PASSING = "import { test } from 'node:test';\ntest('ok', () => {});\n";
const FAILING = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('broken', () => assert.equal(1, 2));\n";

async function run(
  sc: ScenarioInput,
  opts: { tests: string; maxIterations: number },
): Promise<{ outcome: Outcome; byRole: Record<string, number> }> {
  const repo = makeRepo({
    files: {
      'README.md': '# notes\n\nOne line per step.\n',
      'package.json': '{"name":"s","type":"module","private":true,"scripts":{"test":"node --test"}}\n',
      'test/ok.test.js': opts.tests,
    },
  });
  const handle = await startRun(
    shared.env,
    shared.taskQueue,
    runInput(repo, writeScenario(repo, sc), { testCommand: 'node --test', maxIterations: opts.maxIterations }),
    uniqueId('calls'),
  );
  const outcome = await handle.result();
  const byRole: Record<string, number> = {};
  for (const c of agentCalls(repo)) byRole[c.role] = (byRole[c.role] ?? 0) + 1;
  return { outcome, byRole };
}

describe.concurrent('orchestration calls by role, default knobs', () => {
  it('a claim refused by a failing tool gate costs no review, verifier or council call', async () => {
    const { outcome, byRole } = await run(
      {
        version: 1,
        iterations: [step(1), step(2), step(3, true), step(4, true)],
        roles: { ...ROLES, council: { default: vote('APPROVE') } },
      },
      { tests: FAILING, maxIterations: 4 },
    );
    expect(outcome.status).toBe('max_iterations_reached');
    expect(byRole).toEqual({ iteration: 4, checklist: 1 });
  });

  it('a claim refused by the code review costs the review and no council call', async () => {
    const blocking = { output: 'VERDICT: FAIL\n- [High] notes.txt repeats itself (notes.txt:1)\n' };
    const { outcome, byRole } = await run(
      {
        version: 1,
        iterations: [step(1), step(2), step(3, true)],
        roles: { ...ROLES, reviewer: { default: blocking }, council: { default: vote('APPROVE') } },
      },
      { tests: PASSING, maxIterations: 3 },
    );
    expect(outcome.status).toBe('max_iterations_reached');
    // The review's reviewers (no devil's advocate: nothing passed unanimously), and nothing after it.
    expect(byRole).toEqual({ iteration: 3, checklist: 1, reviewer: 4 });
  });

  it('refused rounds on a tree that changed only in reviewed files cost the council and one re-check each', async () => {
    const { outcome, byRole } = await run(
      {
        version: 1,
        iterations: [step(1), step(2), step(3, true), step(4, true), step(5, true)],
        roles: { ...ROLES, council: { rounds: [vote('REJECT'), vote('REJECT')], default: vote('APPROVE') } },
      },
      { tests: PASSING, maxIterations: 6 },
    );
    expect(outcome.status).toBe('council_approved');
    expect(outcome.reason).toMatch(/^council approved at iteration 5 \(round 3/);
    // Round 1 (iteration 3): the review (4 reviewers, its devil's advocate), the verifier, 3 members.
    // Rounds 2 and 3: the verifier on REQ-1 (notes.txt changed) and 3 members; round 3's unanimous
    // approval adds the council's devil's advocate.
    expect(byRole).toEqual({ iteration: 5, checklist: 1, reviewer: 4, 'devils-advocate': 2, 'checklist-verifier': 3, council: 9 });
  });

  it('a long green run convenes at the first green tree and then at the interval only', async () => {
    const { outcome, byRole } = await run(
      { version: 1, iterations: [], default: step(0), roles: { ...ROLES, council: { default: vote('REJECT') } } },
      { tests: PASSING, maxIterations: 6 },
    );
    expect(outcome.status).toBe('max_iterations_reached');
    // Rounds at 3 (the early check: tests green) and 5 (councilCheckInterval); 4 and 6 changed
    // only notes.txt, which the round saw, nobody flagged and whose checklist item passes.
    expect(byRole).toEqual({ iteration: 6, checklist: 1, reviewer: 4, 'devils-advocate': 1, 'checklist-verifier': 2, council: 6 });
  });
});
