/**
 * The loop's small rules on a real Temporal server, with the product's default knobs (gates,
 * code review, the PRD checklist, the council all on) and the scripted agent playing the builder
 * and every reviewing role, each of which approves.
 *
 * The one-time grace at the iteration cap (spec §1.11, LOKI_ITERATION_GRACE; rules/grace.ts):
 * - honest control: the builder claims completion at the cap and its call crashes; the claim
 *   was never judged, so the run gets one more iteration, where the builder claims again and the
 *   council approves;
 * - adversarial: a builder that claims and crashes at every iteration gets that iteration once,
 *   and the run ends at the cap plus one;
 * - adversarial: a builder that claims at the cap while the tests gate fails gets none.
 *
 * Knobs this file changes, and why (only time, never behaviour): the agent command (the scripted
 * agent) and maxIterations 3 (the cap is what the rule is about; 3 is the council's floor, so no
 * check happens before it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '@temporalio/worker';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  runInput,
  startRun,
  status,
  uniqueId,
  writeScenario,
  type ScenarioInput,
  type TestEnv,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
const TQ = uniqueId('loop-rules');
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

const FILES: Record<string, string> = {
  'README.md': '# sample\n\nA sample project.\n',
  'package.json': '{"name":"sample","type":"module","private":true,"scripts":{"test":"node --test"}}\n',
  'src/index.js': '/** Entry point. */\nexport const name = "sample";\n',
  'test/index.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { name } from " +
    "'../src/index.js';\ntest('name', () => assert.equal(name, 'sample'));\n",
};

const vote = { output: 'Read the evidence.\nVOTE: APPROVE\nREASON: every requirement is met\n' };
/** Every reviewing role approves. */
const ROLES: NonNullable<ScenarioInput['roles']> = {
  checklist: {
    default: {
      output:
        '```json\n[{"id": "REQ-1", "title": "The feature exists in src/feature.js", "priority": "critical", "verify": "read src/feature.js"}]\n```\n',
    },
  },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - src/feature.js has it\n' } },
  reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
  council: { default: vote },
};

const FEATURE = { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 1;\n' }, output: 'wrote the feature\n' };
const MORE = { appends: { 'src/feature.js': '// more work\n' }, output: 'more work\n' };
/** Claims completion, then crashes: the claim is never judged. */
const CLAIM_AND_CRASH = { ...MORE, claim: 'file' as const, stderr: 'fatal: the tool crashed after claiming\n', exitCode: 1 };

async function runToEnd(scenario: ScenarioInput) {
  const repo = makeRepo({ files: FILES });
  const input = runInput(repo, writeScenario(repo, scenario), { maxIterations: 3 });
  const handle = await startRun(env, TQ, input);
  const outcome = await handle.result();
  return { outcome, s: await status(handle), repo };
}

describe('the one-time grace at the iteration cap', () => {
  it(
    'honest control: a claim whose call crashed at the cap gets one more iteration, claims again and is approved',
    async () => {
      const { outcome, s, repo } = await runToEnd({
        version: 1,
        roles: ROLES,
        iterations: [FEATURE, MORE, CLAIM_AND_CRASH, { ...MORE, output: 'finished and verified\n', claim: 'file' }],
      });
      expect(outcome.status, JSON.stringify(outcome)).toBe('council_approved');
      expect(outcome.iteration).toBe(4);
      expect(agentCalls(repo).filter((c) => c.role === 'iteration')).toHaveLength(4);
      expect(s.recentIterations.map((r) => [r.iteration, r.exitCode, r.claimed])).toEqual([
        [1, 0, false],
        [2, 0, false],
        [3, 1, true],
        [4, 0, true],
      ]);
    },
    patient(300_000),
  );

  it(
    'adversarial: a builder that claims and crashes at every iteration gets the grace once, and the run ends at 4 of 3',
    async () => {
      const { outcome, repo } = await runToEnd({ version: 1, roles: ROLES, iterations: [FEATURE, MORE], default: CLAIM_AND_CRASH });
      expect(outcome.status, JSON.stringify(outcome)).toBe('max_iterations_reached');
      expect(outcome.iteration).toBe(4);
      expect(outcome.reason).toMatch(/iteration cap reached: 4 of 4/);
      expect(agentCalls(repo).filter((c) => c.role === 'iteration')).toHaveLength(4);
    },
    patient(300_000),
  );

  it(
    'adversarial: a claim at the cap while the tests gate fails gets no grace',
    async () => {
      const failing =
        "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('feature', () => assert.equal(1, 2));\n";
      const { outcome, repo } = await runToEnd({
        version: 1,
        roles: ROLES,
        iterations: [FEATURE, { ...MORE, writes: { 'test/feature.test.js': failing } }, CLAIM_AND_CRASH],
        default: { ...MORE, claim: 'file' },
      });
      expect(outcome.status, JSON.stringify(outcome)).toBe('max_iterations_reached');
      expect(outcome.iteration).toBe(3);
      expect(agentCalls(repo).filter((c) => c.role === 'iteration')).toHaveLength(3);
    },
    patient(300_000),
  );
});
