/**
 * Effort that fits the task, on the suite's real Temporal server with the scripted agent as the
 * builder and every reviewing role (each approves): the run measures its task as it starts, and the
 * complexity it detects sets the council's floor and size, unless the person set that knob.
 *
 * Every knob is at its default but the agent command and the test timing (harness `runInput`); the
 * runs are started with `knobsGiven` as `vigil start` sends it (the knobs the person set: none, or
 * the one a case names). One case turns the complexity knob off, to show that off goes by the
 * knobs as given.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import type { RunInput } from '../../schemas/run.js';
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
  writePrd,
  writeScenario,
  type ScenarioInput,
  type TestEnv,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

const vote = { output: 'Read the evidence.\nVOTE: APPROVE\nREASON: member says approve\n' };

/** A documented feature at iteration 1 and a claim every iteration; every reviewing role approves. */
const SCENARIO: ScenarioInput = {
  version: 1,
  roles: {
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
  },
  iterations: [{ writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 1;\n' }, claim: 'file' }],
  default: { appends: { 'src/feature.js': '// more work\n' }, claim: 'file' },
};

const FILES: Record<string, string> = {
  'src/index.js': '/** Entry point. */\nexport const name = "sample";\n',
  'README.md': '# sample\n\nA sample project.\n',
  'package.json': '{"name":"sample","type":"module","private":true,"scripts":{"test":"node --test"}}\n',
  'test/index.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { name } from " +
    "'../src/index.js';\ntest('name', () => assert.equal(name, 'sample'));\n",
};

/** Three services behind a gateway, in a compose file. */
const COMPOSE = 'services:\n  gateway:\n    image: nginx\n  orders:\n    build: ./orders\n  notifications:\n    build: ./notifications\n';

async function run(o: { files?: Record<string, string>; prd?: string; knobs?: Partial<Knobs>; given: string[] }) {
  const repo = makeRepo({ files: { ...FILES, ...o.files } });
  const tq = uniqueId('effort');
  const worker = await makeWorker(env, tq);
  const base = runInput(repo, writeScenario(repo, SCENARIO), o.knobs);
  const input: RunInput = { ...base, prdPath: writePrd(o.prd ?? '# Feature\n\nAdd the feature to src/feature.js.\n'), knobsGiven: o.given };
  return worker.runUntil(async () => {
    const handle = await startRun(env, tq, input);
    const outcome = await handle.result();
    const snap = await status(handle);
    const council = agentCalls(repo).filter((c) => c.role === 'council');
    return { outcome, snap, council };
  });
}

describe('effort that fits the task', () => {
  it(
    'a one-file task is simple: the council convenes from iteration 1, and approves the claim there',
    async () => {
      const { outcome, snap, council } = await run({ given: [] });
      expect(snap.complexity).toMatchObject({
        tier: 'simple',
        source: 'detected',
        phases: ['IMPLEMENT', 'TEST', 'DEPLOY'],
        applied: { councilSize: 3, councilMinIterations: 1, councilCheckInterval: 3, reviewComplexity: 'simple' },
        kept: [],
      });
      expect(snap.complexity?.measure).toMatchObject({ sourceFiles: 2, languages: ['JavaScript'], microservices: false });
      expect(outcome.status).toBe('council_approved');
      expect(outcome.iteration).toBe(1);
      expect(council.map((c) => c.iteration)).toEqual([1, 1, 1]);
    },
    patient(180_000),
  );

  it(
    'the control: the same task with councilMinIterations set by the person keeps its floor (3), and status says so',
    async () => {
      const { outcome, snap } = await run({ given: ['councilMinIterations'], knobs: { councilMinIterations: 3 } });
      expect(snap.complexity).toMatchObject({ tier: 'simple', kept: ['councilMinIterations'] });
      expect(snap.complexity?.applied.councilMinIterations).toBeUndefined();
      expect(outcome.status).toBe('council_approved');
      expect(outcome.iteration).toBe(3);
    },
    patient(240_000),
  );

  it(
    'a change across three services with Stripe is complex: a council of 5, from the default floor',
    async () => {
      const prd = '# Checkout\n\nThe orders service takes payments with Stripe; the notifications service sends the receipt.\n';
      const { outcome, snap, council } = await run({ given: [], files: { 'docker-compose.yml': COMPOSE }, prd });
      expect(snap.complexity).toMatchObject({
        tier: 'complex',
        reasons: ['external integrations: Stripe', 'microservices (3 services)'],
        applied: { councilSize: 5, councilMinIterations: 3, reviewComplexity: 'complex' },
      });
      expect(snap.complexity?.phases).toHaveLength(8);
      expect(outcome.status).toBe('council_approved');
      expect(outcome.iteration).toBe(3);
      expect(council.map((c) => c.member).sort()).toEqual([0, 1, 2, 3, 4]);
    },
    patient(240_000),
  );

  it(
    'with the complexity knob off nothing is measured and the knobs are as given: the floor of 3',
    async () => {
      // Off: the behaviour this case is about.
      const { outcome, snap } = await run({ given: ['complexity'], knobs: { complexity: 'off' } });
      expect(snap.complexity).toBeNull();
      expect(outcome.status).toBe('council_approved');
      expect(outcome.iteration).toBe(3);
    },
    patient(240_000),
  );
});

describe('the model-override file', () => {
  it(
    'sets the next calls’ tier under the maxTier ceiling, one call at a time; an unknown word is ignored with a note',
    async () => {
      // The person wrote the override between iterations; here the builder writes it (it may: the
      // ceiling holds either way, which is what this case shows).
      const scenario: ScenarioInput = {
        ...SCENARIO,
        iterations: [
          { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 1;\n', '.vigil/model-override': 'OPUS\n' } },
          { appends: { 'src/feature.js': '// two\n' }, writes: { '.vigil/model-override': 'fast' } },
          { appends: { 'src/feature.js': '// three\n' }, writes: { '.vigil/model-override': 'turbo' } },
          { appends: { 'src/feature.js': '// four\n' }, writes: { '.vigil/model-override': '' } },
          { appends: { 'src/feature.js': '// five\n' }, claim: 'file' },
        ],
      };
      const repo = makeRepo({ files: FILES });
      const tq = uniqueId('override');
      const worker = await makeWorker(env, tq);
      // The council's interval is set long so that the run reaches its fifth call: this case is
      // about the calls, not about when the council convenes.
      const base = runInput(repo, writeScenario(repo, scenario), { maxTier: 'development', councilCheckInterval: 10 });
      const prdPath = writePrd('# Feature\n\nAdd the feature to src/feature.js.\n');
      const input: RunInput = { ...base, prdPath, knobsGiven: ['maxTier', 'councilCheckInterval'] };
      const snap = await worker.runUntil(async () => {
        const handle = await startRun(env, tq, input);
        await handle.result();
        return status(handle);
      });
      const its = [...snap.recentIterations].sort((a, b) => a.iteration - b.iteration);
      expect(its.map((i) => i.iteration)).toEqual([1, 2, 3, 4, 5]);
      const [first, second, third, fourth, fifth] = its;
      expect(first?.override).toBeUndefined(); // no file yet when the first call started
      // "opus" asks for planning; the run's ceiling is development.
      expect(second).toMatchObject({
        tier: 'development',
        override: '.vigil/model-override "opus": ran at development, capped by maxTier',
      });
      expect(third).toMatchObject({ tier: 'fast', override: '.vigil/model-override "fast": ran at fast' });
      expect(fourth?.override).toMatch(
        /^\.vigil\/model-override says "turbo", not one of haiku, sonnet, opus, fable, fast, development, planning: ignored$/,
      );
      expect(fourth?.tier).toBe(first?.tier);
      // An empty file is no override: the run's own tier again.
      expect(fifth?.override).toBeUndefined();
      expect(fifth?.tier).toBe(first?.tier);
    },
    patient(240_000),
  );
});

describe('the tier ladder’s structural triggers', () => {
  it(
    'an iteration that changes the core climbs a level, named in ladder.changes; the control, an ordinary change, does not',
    async () => {
      const climbs = async (path: string) => {
        const scenario: ScenarioInput = {
          ...SCENARIO,
          iterations: [
            { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 1;\n' } },
            { writes: { [path]: '/** Changed. */\nexport const engine = 2;\n' }, claim: 'file' },
          ],
        };
        const repo = makeRepo({ files: { ...FILES, 'core/engine.js': '/** The engine. */\nexport const engine = 1;\n' } });
        const tq = uniqueId('structural');
        const worker = await makeWorker(env, tq);
        const input: RunInput = {
          ...runInput(repo, writeScenario(repo, scenario)),
          prdPath: writePrd('# Feature\n\nAdd the feature to src/feature.js.\n'),
          knobsGiven: [],
        };
        return worker.runUntil(async () => {
          const handle = await startRun(env, tq, input);
          await handle.result();
          return (await status(handle)).ladder?.changes ?? [];
        });
      };
      const changes = await climbs('core/engine.js');
      expect(changes).toContainEqual(
        expect.objectContaining({ iteration: 2, trigger: expect.stringMatching(/^core changed \(core\/engine\.js\) at (LOW|MEDIUM)$/) }),
      );
      expect(await climbs('src/engine.js')).toEqual([]);
    },
    patient(300_000),
  );
});
