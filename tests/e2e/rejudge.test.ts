/**
 * `vigil rejudge` on real whole runs: `vigil up` (the embedded event store, the suite's Temporal
 * server) runs three scripted runs with the default knobs and the sandbox on, each ending
 * council_approved with every reviewing role approving — the scripted agent's README example
 * (its first review carries Low findings: a mergeability under 100), the same with a clean review (the
 * honest control), and one that also adds a CI workflow (a file of the tests' harness),
 * recorded with the integrity gates off (as a release before them ran) — then the CLI rejudges
 * them from the store, their Temporal histories and their repositories' checkpoints: unchanged
 * rules flip nothing; `reviewMergeabilityMin=100` flips the README run only;
 * `gateTestMutation=true` flips the harness run only, naming the finding.
 *
 * With VIGIL_RECORD_REJUDGE=1 it also writes the runs to tests/fixtures/rejudge/ (the suite's
 * corpus, tests/unit/rejudge-corpus.test.ts), the third with the integrity knobs taken out of its
 * recorded input, as an input from a release before them lacks them.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { RecordedRunSchema, RejudgeReportSchema, type RejudgeReport } from '../../schemas/rejudge.js';
import { assertBuilt, CLI, ROOT, SCRIPTED_AGENT, temporalAddress, uniqueId, writePrd } from '../support/harness.js';
import { cleanEnv, runVigil, show, waitUntil } from './cli-helpers.js';
import { patient } from '../support/patience.js';

const README = readFileSync(path.join(ROOT, 'examples/agents/scripted-agent/README.md'), 'utf8');
const EXAMPLE = (() => {
  const section = README.slice(README.indexOf('\n## Example\n'));
  const m = /```json\n([\s\S]*?)\n```/.exec(section);
  if (!m?.[1]) throw new Error('no json block under "## Example" in the scripted agent\'s README');
  return JSON.parse(m[1]) as { iterations: { writes?: Record<string, string> }[]; roles: Record<string, unknown> };
})();
const PACKAGE = '{ "name": "add", "private": true, "type": "module", "scripts": { "test": "node --test" } }\n';
const CORPUS = path.join(ROOT, 'tests/fixtures/rejudge');

const base = {
  VIGIL_HOME: mkdtempSync(path.join(os.tmpdir(), 'vigil-rejudge-home-')),
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_CLI: inject('temporalCli'),
  VIGIL_TASK_QUEUE: uniqueId('vigil-rejudge'),
};
let up: ResultPromise | undefined;
let upOut = '';

beforeAll(async () => {
  assertBuilt();
  up = execa(process.execPath, [CLI, 'up'], { env: cleanEnv(base), extendEnv: false, all: true, reject: false, buffer: false });
  up.all?.on('data', (d: Buffer) => {
    upOut += d.toString();
  });
  await waitUntil('vigil up to poll', () => upOut.includes('polling') || up?.exitCode !== null, 120_000, 200);
}, patient(150_000));
afterAll(async () => {
  up?.kill('SIGINT');
  await up;
});

async function git(cwd: string, args: string[]): Promise<void> {
  await execa('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  });
}

/** One whole run of a variant of the README example; its id. */
async function record(name: string, scenario: unknown, knobs: string[] = []): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `vigil-rejudge-${name}-`));
  const repo = path.join(dir, 'repo');
  mkdirSync(repo);
  await git(repo, ['init', '-q']);
  writeFileSync(path.join(repo, 'package.json'), PACKAGE);
  await git(repo, ['add', 'package.json']);
  await git(repo, ['commit', '-q', '-m', 'start']);
  writeFileSync(path.join(dir, 'scenario.json'), JSON.stringify(scenario));
  const prd = writePrd('# add()\n\n1. src/add.js exports add(a, b).\n2. Tests pass with node --test.\n3. The README shows add.\n');
  const id = uniqueId(`rejudge-${name}`);
  const agent = ['--agent-command', `${SCRIPTED_AGENT} --scenario ${path.join(dir, 'scenario.json')}`];
  const started = await runVigil(['start', prd, '--repo', repo, ...agent, ...knobs, '--id', id, '--wait'], base, { timeoutMs: 240_000 });
  expect(started.code, `${show(started)}\n--- vigil up ---\n${upOut.slice(-4000)}`).toBe(0);
  return id;
}

async function rejudge(args: string[]): Promise<RejudgeReport> {
  const r = await runVigil(['rejudge', ...args, '--json'], base, { timeoutMs: 120_000 });
  expect(r.code, show(r)).toBe(0);
  return RejudgeReportSchema.parse(JSON.parse(r.stdout));
}

it(
  'rejudges three recorded runs: unchanged rules flip nothing, each stricter knob flips its own run and no other',
  async () => {
    const roles = EXAMPLE.roles as Record<string, unknown>;
    const advisory = await record('advisory', EXAMPLE);
    const clean = await record('clean', { ...EXAMPLE, roles: { ...roles, reviewer: { default: { output: 'VERDICT: PASS\n' } } } });
    // Its test step also adds a CI workflow: a change to the tests' harness the integrity gate would refuse.
    const iterations = EXAMPLE.iterations.map((it, i) =>
      i === 1
        ? {
            ...it,
            writes: {
              ...it.writes,
              '.github/workflows/test.yml': 'on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: node --test\n',
            },
          }
        : it,
    );
    const harness = await record(
      'harness',
      { ...EXAMPLE, iterations, roles: { ...roles, reviewer: { default: { output: 'VERDICT: PASS\n' } } } },
      [
        // As a release before the integrity gates ran it.
        '--set',
        'gateTestMutation=false',
        '--set',
        'gateTestGaming=false',
      ],
    );
    const ids = [advisory, clean, harness];
    const exported = mkdtempSync(path.join(os.tmpdir(), 'vigil-rejudge-export-'));

    const same = await rejudge([...ids, '--export', exported]);
    expect(same.runs.map((r) => [r.outcome, r.flips, r.needsNewJudgement])).toEqual([
      ['council_approved', 0, 0],
      ['council_approved', 0, 0],
      ['council_approved', 0, 0],
    ]);
    for (const r of same.runs)
      expect(
        r.checks.some((c) => c.round !== null && c.recorded.verdict === 'approved'),
        JSON.stringify(r),
      ).toBe(true);

    const merge = await rejudge([...ids, '--set', 'reviewMergeabilityMin=100']);
    expect(merge.runs.map((r) => r.flips)).toEqual([1, 0, 0]);
    const flipped = merge.runs[0]?.checks.find((c) => c.flipped);
    expect(flipped?.now).toMatchObject({ verdict: 'refused', by: 'code_review' });
    expect(flipped?.now.reason).toMatch(/^code review: mergeability [1-9]\d? is below the minimum 100$/);

    const integrity = await rejudge([...ids, '--set', 'gateTestMutation=true', '--set', 'gateTestGaming=true']);
    expect(integrity.runs.map((r) => r.flips)).toEqual([0, 0, 1]);
    expect(integrity.runs[2]?.checks.find((c) => c.flipped)?.now.reason).toMatch(
      new RegExp(
        [
          /^test mutation \(the run was recorded without this gate; it would have said\): 1 finding\(s\): harness/.source,
          /_changed-[0-9a-f]{8}: \.github\/workflows\/test\.yml: a harness file was added/.source,
        ].join(''),
      ),
    );

    // What --export wrote: the recorded runs, each with its knobs, start tree and the trees its checks judged.
    for (const id of ids) {
      const run = RecordedRunSchema.parse(JSON.parse(readFileSync(path.join(exported, `${id}.json`), 'utf8')));
      expect(run.startTree).toMatch(/^[0-9a-f]{40}$/);
      expect(run.trees.length).toBeGreaterThan(0);
      expect(run.knobs).toMatchObject({ councilSize: 3 });
    }
    if (process.env.VIGIL_RECORD_REJUDGE === '1') {
      mkdirSync(CORPUS, { recursive: true });
      for (const [id, name] of [
        [advisory, 'add-advisory-finding'],
        [clean, 'add-clean'],
        [harness, 'add-harness-before-integrity'],
      ] as const) {
        const run = JSON.parse(readFileSync(path.join(exported, `${id}.json`), 'utf8')) as { knobs: Record<string, unknown> };
        if (name === 'add-harness-before-integrity') {
          delete run.knobs.gateTestMutation;
          delete run.knobs.gateTestGaming;
        }
        writeFileSync(path.join(CORPUS, `${name}.json`), `${JSON.stringify(run, null, 2)}\n`);
      }
    }
  },
  patient(300_000),
);
