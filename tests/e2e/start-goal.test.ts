/**
 * `vigil start --goal "…"`, end to end (a run without a PRD; the seed's codebase-analysis mode):
 * real `node bin/vigil.js` processes against the suite's Temporal dev server and a `vigil worker`
 * child process, the scripted agent as the builder, the discovery agent and every reviewing role,
 * every knob at its default (the sandbox on, the PRD checklist, quality gates, code review and the
 * council all on) but for `autonomyMode=perpetual` in the cell that is about it.
 *
 * - Supervised (the default): the discovery call writes the PRD into the run folder, and the run
 *   pauses before anything else with the PRD's path in the pause's reason (status shows it), no
 *   other call made; an input sent while it waits reaches the first iteration's prompt; a resume
 *   goes on from the PRD (its checklist extracted then) to the council's approval.
 * - Perpetual: no pause; the run goes on from the PRD to the council's approval.
 * - The discovery agent that says it wrote the PRD and did not (adversarial): the run ends `failed`
 *   saying why, with no builder call.
 * - Refused before anything starts (exit 2, with what to do): an empty goal, a goal beside a PRD,
 *   beside --tasks.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ScenarioInput } from '../support/harness.js';
import {
  agentCalls,
  assertBuilt,
  makeRepo,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  writePrd,
  writeScenario,
} from '../support/harness.js';
import { patient } from '../support/patience.js';
import { runVigil, show, startWorkerProcess, waitUntil, type CliResult, type WorkerProcess } from './cli-helpers.js';

const NAMESPACE = 'default';
const GOAL = 'Add the feature to src/feature.js, documented and tested';
const PRD = [
  '# The feature',
  '',
  '## Goal',
  '',
  'Add `feature` to src/feature.js.',
  '',
  '## What exists',
  '',
  'JavaScript (ES modules), tests with `node --test` in test/.',
  '',
  '## Requirements',
  '',
  '- [ ] src/feature.js exports `feature`, documented — read src/feature.js',
  '',
].join('\n');

let taskQueue: string;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;
let client: Client;
const started = new Set<string>();

const baseEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: NAMESPACE,
  VIGIL_TASK_QUEUE: taskQueue,
});
const vigil = (args: string[]): Promise<CliResult> => runVigil(args, baseEnv());

const vote = { output: 'Read the evidence.\nVOTE: APPROVE\nREASON: the feature is there, documented and tested\n' };

/** Every role in its format; the discovery agent writes the PRD (or, `lies`, only says it did). */
function scenario(lies = false): ScenarioInput {
  return {
    version: 1,
    roles: {
      discovery: {
        default: lies
          ? { output: 'I analysed the repository and wrote the PRD.\n' }
          : { writes: { 'PRD.md': PRD }, output: 'PRD written.\n' },
      },
      checklist: {
        default: {
          output:
            '```json\n[{"id": "REQ-1", "title": "src/feature.js exports feature, documented", "priority": "critical", "verify": "read src/feature.js"}]\n```\n',
        },
      },
      'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - src/feature.js exports it, with its doc comment\n' } },
      reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n' } },
      'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
      council: { default: vote },
    },
    iterations: [{ writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 1;\n' }, claim: 'file' }],
    default: { appends: { 'src/feature.js': '// more work\n' }, claim: 'file' },
  };
}

/** A small JavaScript project with a passing test: a simple task. */
function repository(): string {
  return makeRepo({
    files: {
      'README.md': '# sample\n\nA sample project.\n',
      'package.json': '{"name":"sample","type":"module","private":true,"scripts":{"test":"node --test"}}\n',
      'src/index.js': '/** Entry point. */\nexport const name = "sample";\n',
      'test/index.test.js':
        "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n" +
        "import { name } from '../src/index.js';\ntest('name', () => assert.equal(name, 'sample'));\n",
    },
  });
}

function startArgs(id: string, source: string[], s: ScenarioInput, extra: string[] = []): { args: string[]; repo: string } {
  const repo = repository();
  started.add(id);
  const agent = `"${SCRIPTED_AGENT}" --scenario "${writeScenario(repo, s)}"`;
  return { args: ['start', ...source, '--repo', repo, '--agent-command', agent, '--id', id, ...extra], repo };
}

interface StatusJson {
  status: string;
  paused: boolean;
  pause: { reason: string; by: string } | null;
  outcome: { status: string; reason: string; exitCode: number } | null;
}
const statusOf = async (id: string): Promise<StatusJson> => {
  const r = await vigil(['status', id, '--json']);
  return JSON.parse(r.stdout) as StatusJson;
};
const ended = (id: string, ms: number): Promise<StatusJson> =>
  waitUntil(`run ${id} ends`, async () => ((await statusOf(id)).outcome ? await statusOf(id) : null), ms, 500) as Promise<StatusJson>;

const prdOf = (repo: string, id: string): string => path.join(repo, '.vigil', 'runs', id, 'PRD.md');

beforeAll(async () => {
  assertBuilt();
  taskQueue = uniqueId('start-goal');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: NAMESPACE });
  worker = await startWorkerProcess(baseEnv());
}, patient(120_000));

afterAll(async () => {
  if (connection)
    await Promise.all(
      [...started].map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('vigil start --goal e2e cleanup')
          .catch(() => undefined),
      ),
    );
  await worker?.stop();
  await connection?.close();
});

describe.concurrent('vigil start --goal', () => {
  it(
    'supervised: the discovery call writes the PRD, the run pauses to show it, an input and a resume go on to approval',
    async ({ expect }) => {
      const id = uniqueId('goal-supervised');
      const { args, repo } = startArgs(id, ['--goal', GOAL], scenario());
      const r = await vigil(args);
      expect(r.code, show(r)).toBe(0);
      expect(r.stdout).toContain(`started run ${id}`);
      expect(r.stdout).toContain(`PRD        : ${prdOf(repo, id)}`);
      expect(r.stdout).toContain('goal       : no PRD yet: a discovery call analyses the repository and writes it');
      expect(r.stdout).toContain('the run then pauses for you to read it');

      const paused = (await waitUntil(
        'the PRD shown',
        async () => ((await statusOf(id)).pause ? await statusOf(id) : null),
        90_000,
        500,
      )) as StatusJson;
      expect(paused.pause?.by).toBe('vigil');
      expect(paused.pause?.reason).toContain(`The discovery agent wrote the run's PRD from its goal: ${prdOf(repo, id)} ("The feature"`);
      expect(paused.pause?.reason).toContain(`vigil resume ${id}`);
      expect(readFileSync(prdOf(repo, id), 'utf8')).toBe(PRD);
      // Nothing but the discovery call before the person's answer: no checklist, no builder.
      expect(agentCalls(repo).map((c) => c.role)).toEqual(['discovery']);
      // Its prompt asked for the codebase analysis, named the goal and carried the map of the repository.
      const prompt = readFileSync(path.join(repo, '.vigil', 'runs', id, 'discovery-0001.prompt.md'), 'utf8');
      expect(prompt).toContain(GOAL);
      expect(prompt).toContain('how its tests run');
      expect(prompt).toContain('test/index.test.js');

      const input = await vigil(['input', id, 'Keep the feature a number.']);
      expect(input.code, show(input)).toBe(0);
      const resumed = await vigil(['resume', id]);
      expect(resumed.code, show(resumed)).toBe(0);
      const end = await ended(id, 240_000);
      expect(end.outcome, JSON.stringify(end)).toMatchObject({ status: 'council_approved', exitCode: 0 });
      const roles = agentCalls(repo).map((c) => c.role);
      expect(roles[0]).toBe('discovery');
      expect(roles.filter((x) => x === 'discovery')).toHaveLength(1);
      expect(roles.indexOf('checklist')).toBeLessThan(roles.indexOf('iteration'));
      // The input sent while the PRD was shown reached the builder.
      expect(readFileSync(path.join(repo, '.vigil', 'runs', id, 'iteration-0001.prompt.md'), 'utf8')).toContain(
        'Keep the feature a number.',
      );
    },
    patient(360_000),
  );

  it(
    'perpetual: no pause, the run goes on from the PRD the discovery call wrote to approval',
    async ({ expect }) => {
      const id = uniqueId('goal-perpetual');
      // The one knob set: the behaviour under test (a run that does not wait for a person).
      const { args, repo } = startArgs(id, ['--goal', GOAL], scenario(), ['--set', 'autonomyMode=perpetual']);
      const r = await vigil(args);
      expect(r.code, show(r)).toBe(0);
      expect(r.stdout).not.toContain('the run then pauses');
      const end = await ended(id, 240_000);
      expect(end.outcome, JSON.stringify(end)).toMatchObject({ status: 'council_approved', exitCode: 0 });
      expect(end.pause).toBeNull();
      expect(readFileSync(prdOf(repo, id), 'utf8')).toBe(PRD);
      expect(agentCalls(repo)[0]?.role).toBe('discovery');
    },
    patient(300_000),
  );

  it(
    'a discovery agent that says it wrote the PRD and did not ends the run failed, before any builder call',
    async ({ expect }) => {
      const id = uniqueId('goal-lies');
      const { args, repo } = startArgs(id, ['--goal', GOAL], scenario(true));
      const r = await vigil(args);
      expect(r.code, show(r)).toBe(0);
      const end = await ended(id, 90_000);
      expect(end.outcome?.status).toBe('failed');
      expect(end.outcome?.reason).toContain('the discovery agent could not write the PRD from the goal, so nothing was built');
      expect(end.outcome?.reason).toContain('wrote no PRD');
      expect(agentCalls(repo).map((c) => c.role)).toEqual(['discovery']);
    },
    patient(120_000),
  );

  it(
    'refuses what it cannot take before anything starts, saying what to do',
    async ({ expect }) => {
      const prd = writePrd();
      const tasks = writePrd('- [ ] T1: one\n');
      const cases: [string[], string][] = [
        [['--goal', '  '], '--goal needs the goal as text'],
        [[prd, '--goal', GOAL], `give --goal or a PRD (${prd}), not both`],
        [
          ['--goal', GOAL, '--tasks', tasks],
          '--tasks splits a PRD you wrote; with --goal the PRD is written as the run starts: drop --tasks',
        ],
      ];
      const ids = cases.map(() => uniqueId('goal-refused'));
      const results = await Promise.all(cases.map(([source], i) => vigil(startArgs(ids[i] as string, source, scenario()).args)));
      for (const [i, res] of results.entries()) {
        expect(res.code, show(res)).toBe(2);
        expect(res.stderr).toContain(cases[i]?.[1]);
        expect(res.stdout).not.toContain('started run');
      }
    },
    patient(60_000),
  );
});
