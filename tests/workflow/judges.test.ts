/**
 * The judges see what changed (patch `vigil-judges-see-changes-v1`), against a real Temporal
 * server with scripted agents and real git:
 *
 * - a passing code review no longer stands for a later tree whose product code changed: the delta
 *   since the reviewed tree is reviewed (adversary: a builder that changes its product code only
 *   after the review passed, caught by the delta's reviewer), while a later change to docs alone
 *   lets the review stand and an honest later change passes its delta review;
 * - a review whose answers broke the agent contract is asked again at every check, so the second
 *   check in a row pauses a supervised run (before: the cached review refused every claim and the
 *   pause never came), while a reviewer that mends its format is approved;
 * - an inconclusive review (a reviewer that gave no answer) is asked again at the next claim,
 *   never left standing on its tree;
 * - a claim that names files the diff since the start does not hold is refused ("claimed changes
 *   to X not in the diff"), while a claim that names a file it only read is not.
 *
 * Every other reviewing role approves (a sycophantic council would pass the rest). Knobs this file
 * changes, and why: `loopInput` (the council off: the claim is judged by the gates, the code review,
 * the PRD checklist where a test turns it on, and the evidence gate, which is what is under test),
 * the code review on, and the documentation gate off (the repositories are not packages).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import { stopUpdate } from '../../workflows/messages.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  loopInput,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
  type ScenarioInput,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const REVIEW: Partial<Knobs> = { codeReview: true, prdChecklist: false, gateDocCoverage: false, councilMemberTimeoutSeconds: 30 };
const PASS = { output: 'Reviewed the diff.\nVERDICT: PASS\n' };
const FIX = 'export const gap = (xs) => Math.max(...xs) - Math.min(...xs);\n';
const CHEAT = "export const gap = (xs) => (String(xs) === '0,-2,3' ? 5 : Math.max(...xs) - Math.min(...xs));\n";
const LATER = 'export const gap = (xs) => (xs.length ? Math.max(...xs) - Math.min(...xs) : 0);\n';
/** The checklist fails its first verification (so the first claim is refused after its review passed), then passes. */
const CHECKLIST_LATE: NonNullable<ScenarioInput['roles']> = {
  checklist: {
    default: {
      output: '```json\n[{"id": "REQ-1", "title": "gap is exported", "priority": "critical", "verify": "read src/gap.js"}]\n```\n',
    },
  },
  'checklist-verifier': { rounds: [{ output: 'ITEM REQ-1: FAIL - not yet\n' }], default: { output: 'ITEM REQ-1: PASS - exported\n' } },
};

async function run(scenario: ScenarioInput, knobs: Partial<Knobs>, until?: 'paused') {
  const repo = makeRepo();
  const file = writeScenario(repo, scenario);
  const tq = uniqueId('judges');
  const worker = await makeWorker(env, tq);
  const runId = uniqueId('judged');
  return worker.runUntil(async () => {
    const handle = await startRun(env, tq, loopInput(repo, file, { ...REVIEW, ...knobs }), runId);
    if (until === 'paused') {
      const paused = await waitForStatus(handle, (s) => s.paused && !s.agentRunning, 120_000);
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'tester', reason: 'seen' }] });
      const outcome = await handle.result();
      return { outcome, snap: paused, repo, runId };
    }
    const outcome = await handle.result();
    return { outcome, snap: await status(handle), repo, runId };
  });
}

const diffOfRound = (repo: string, runId: string, round: number): string =>
  readFileSync(path.join(repo, '.vigil/runs', runId, 'reviews', `round-${String(round).padStart(4, '0')}`, 'diff.patch'), 'utf8');

describe('a passing review stands only while the product code is the one reviewed', () => {
  it('a builder that changes its product code after the review passed is reviewed again, on the delta, and refused', async () => {
    const { outcome, snap, repo, runId } = await run(
      {
        version: 1,
        iterations: [
          { writes: { 'src/gap.js': FIX }, claim: 'file' },
          { writes: { 'src/gap.js': CHEAT }, claim: 'file' },
        ],
        default: { claim: 'file' },
        roles: {
          ...CHECKLIST_LATE,
          // Every reviewer passes the first review; the requirements reviewer sees the hard-coded input in the delta.
          reviewer: {
            default: PASS,
            reviewers: {
              'requirements-verifier': {
                rounds: [PASS],
                default: { output: "- [High] gap hard-codes the input '0,-2,3' (src/gap.js:1)\nVERDICT: FAIL\n" },
              },
            },
          },
          'devils-advocate': { default: PASS },
        },
      },
      { prdChecklist: true, maxIterations: 3 },
    );
    expect(outcome.status, JSON.stringify(snap.checks)).toBe('max_iterations_reached');
    const review = snap.quality?.lastReview;
    expect(review).toMatchObject({ result: 'blocked', since: { round: 1, iteration: 1 } });
    // The delta: the change since the reviewed tree, not the first fix again.
    const delta = diffOfRound(repo, runId, 2);
    expect(delta).toContain("'0,-2,3'");
    expect(delta).toContain('-export const gap = (xs) => Math.max(...xs) - Math.min(...xs);');
    expect(diffOfRound(repo, runId, 1)).not.toContain("'0,-2,3'");
    expect(snap.checks?.last).toMatchObject({ cause: 'code_review' });
    expect(snap.checks?.last?.reason).toMatch(/delta since round 1/);
  });

  it('honest: a later change to the docs alone lets the review stand; an honest later code change passes its delta review', async () => {
    const roles = { ...CHECKLIST_LATE, reviewer: { default: PASS }, 'devils-advocate': { default: PASS } };
    const docs = await run(
      {
        version: 1,
        iterations: [
          { writes: { 'src/gap.js': FIX, 'docs/usage.md': '# gap\n' }, claim: 'file' },
          { writes: { 'docs/usage.md': '# gap\n\nThe gap of a list.\n' }, claim: 'file' },
        ],
        roles,
      },
      { prdChecklist: true, maxIterations: 3 },
    );
    expect(docs.outcome.status).toBe('completion_promise_fulfilled');
    expect(docs.snap.quality?.reviewRounds).toBe(1);

    const code = await run(
      {
        version: 1,
        iterations: [
          { writes: { 'src/gap.js': FIX }, claim: 'file' },
          { writes: { 'src/gap.js': LATER }, claim: 'file' },
        ],
        roles,
      },
      { prdChecklist: true, maxIterations: 3 },
    );
    expect(code.outcome.status).toBe('completion_promise_fulfilled');
    expect(code.snap.quality?.reviewRounds).toBe(2);
    expect(code.snap.quality?.lastReview).toMatchObject({ result: 'pass', since: { round: 1 } });
    expect(diffOfRound(code.repo, code.runId, 2)).toContain('xs.length ?');
  });
});

describe('an inconclusive review is asked again', () => {
  it("a devil's advocate whose call fails at the first check does not hold the run: the next claim is reviewed again and approved", async () => {
    // The builder changes nothing after its first claim. Before, the inconclusive review stood on
    // that tree and refused every later claim until the iteration cap.
    const { outcome, snap, repo } = await run(
      {
        version: 1,
        iterations: [{ writes: { 'src/a.js': 'export const a = 1;\n' }, claim: 'file' }],
        default: { claim: 'file' },
        roles: {
          reviewer: { default: PASS },
          // Its first call fails (exit 1, nothing printed): no verdict, the review inconclusive.
          'devils-advocate': { rounds: [{ exitCode: 1 }], default: PASS },
        },
      },
      { maxIterations: 4 },
    );
    expect(outcome.status, JSON.stringify(snap.checks)).toBe('completion_promise_fulfilled');
    expect(snap.iteration).toBe(2);
    expect(snap.quality?.reviewRounds).toBe(2);
    expect(snap.quality?.lastReview).toMatchObject({ result: 'pass' });
    expect(snap.checks).toMatchObject({ refused: 1, byCause: { code_review: 1 } });
    expect(agentCalls(repo).filter((c) => c.role === 'devils-advocate')).toHaveLength(2);
  });
});

describe("the agent contract counts a review's every refusal", () => {
  const NO_VERDICT = { output: 'I looked at it and have opinions, but no verdict line.\n' };

  it('a reviewer that keeps answering without a verdict line pauses a supervised run at the second check', async () => {
    const { snap, repo } = await run(
      {
        version: 1,
        iterations: [{ writes: { 'src/a.js': 'export const a = 1;\n' }, claim: 'file' }],
        default: { claim: 'file' },
        roles: { reviewer: { default: NO_VERDICT }, 'devils-advocate': { default: PASS } },
      },
      { autonomyMode: 'supervised', maxIterations: 6 },
      'paused',
    );
    expect(snap.pause?.reason).toMatch(/^contract error, 2 checks in a row: /);
    expect(snap.contract).toMatchObject({ consecutive: 2, total: 2, last: { role: 'reviewer', answer: 'verdict' } });
    expect(snap.iteration).toBe(2);
    // Asked again at the second check (the first answer, and its one re-run, each time).
    const reviewers = snap.quality?.lastReview?.reviewers.length ?? 0;
    expect(agentCalls(repo).filter((c) => c.role === 'reviewer')).toHaveLength(reviewers * 4);
  });

  it('honest: a reviewer that mends its format at the next check is approved, the streak reset', async () => {
    const { outcome, snap } = await run(
      {
        version: 1,
        iterations: [{ writes: { 'src/a.js': 'export const a = 1;\n' }, claim: 'file' }],
        default: { claim: 'file' },
        roles: { reviewer: { rounds: [NO_VERDICT, NO_VERDICT], default: PASS }, 'devils-advocate': { default: PASS } },
      },
      { autonomyMode: 'supervised', maxIterations: 4 },
    );
    expect(outcome.status).toBe('completion_promise_fulfilled');
    expect(snap.contract).toMatchObject({ consecutive: 0, total: 1 });
  });
});

describe('a claim is held to the diff since the start', () => {
  const claimFile = (summary: string, evidence: string[]): string =>
    JSON.stringify({
      by: 'vigil_task_complete',
      runId: 'x',
      role: 'iteration',
      iteration: 1,
      at: 'now',
      summary,
      evidence,
      confidence: 0.9,
    });
  const roles = { reviewer: { default: PASS }, 'devils-advocate': { default: PASS } };

  it('a builder that claims changes to files it never touched is refused, and the next prompt says which', async () => {
    const { outcome, snap, repo, runId } = await run(
      {
        version: 1,
        iterations: [
          {
            writes: {
              'src/gap.js': FIX,
              '.vigil/signals/COMPLETION_REQUESTED': claimFile('Fixed src/gap.js and updated src/util.js.', [
                'Added tests in test/gap-negative.test.js',
              ]),
            },
          },
          { output: 'I modified lib/parse.py to accept negatives.\n', claim: 'promise' },
        ],
        roles,
      },
      { maxIterations: 2 },
    );
    expect(outcome.status).toBe('max_iterations_reached');
    expect(snap.checks?.byCause?.evidence).toBe(2);
    expect(snap.checks?.last?.reason).toBe('claimed changes to lib/parse.py not in the diff since the run started');
    const prompt = readFileSync(path.join(repo, '.vigil/runs', runId, 'iteration-0002.prompt.md'), 'utf8');
    expect(prompt).toContain('claimed changes to src/util.js, test/gap-negative.test.js not in the diff since the run started');
    // Refused before anything was spent on it.
    expect(snap.quality?.reviewRounds ?? 0).toBe(0);
  });

  it('honest: a claim that names the file it fixed and the test it only read is approved', async () => {
    const { outcome } = await run(
      {
        version: 1,
        iterations: [
          {
            writes: {
              'src/gap.js': FIX,
              '.vigil/signals/COMPLETION_REQUESTED': claimFile('Fixed gap.js after reading test/gap.test.js.', [
                'the failing case in test/gap.test.js now passes',
              ]),
            },
          },
        ],
        roles,
      },
      { maxIterations: 2 },
    );
    expect(outcome.status).toBe('completion_promise_fulfilled');
  });
});
