/**
 * The safety nets together, as a new user gets them: every knob at the product's default (quality
 * gates, code review, the PRD checklist, the council, escalation and the tier ladder all on), on a
 * real Temporal server, with the scripted agent playing the builder and every reviewing role.
 *
 * The matrix: {a documentation gap the builder leaves, none} × {no test runner, passing tests} ×
 * {supervised, perpetual} ×
 * {stagnant, claims without change, split council, oscillating tree, failing agent, wrong
 * reviewer format, unmet checklist}. Each cell asserts the original's outcome (spec §2.3, §2.10, §2.11, §7) and the
 * iteration it happens at, that the tier never drops while the agent idles, and what status says.
 * In the gap cells the repository is a publishable package that started without a README and the
 * builder's export has no doc comment: the documentation gate refuses every check for the
 * builder's own line, never for the README the repository never had (gates judge the change).
 *
 * Two cells stand beside it for the build gate: a project whose `npm run build` runs an entry
 * point no test imports; a builder whose export the entry point cannot import (tests green) is
 * refused at every check until the claims valve ends the run, and one whose export it can is
 * approved at the first check (every reviewing role approves in both).
 *
 * Two cells stand beside it for the app check (on by default: the repository's
 * `.vigil/app-check.sh` as the run started): its entry point must load. A builder whose export the
 * entry point cannot import, and who rewrites the app check file to `exit 0`, is refused at every
 * check (the check runs the copy kept at the start) until the claims valve ends the run; one whose
 * export it can is approved at the first check. Every other cell has no app check file, and says so.
 *
 * One cell stands beside the cross product: a builder that adds dependencies (`npm install` of a
 * small npm package, `pip download` of a small PyPI one, through the sandbox's proxy to the real
 * registries, which this machine reaches) and a test command that installs before it tests; with
 * every net on, the run is approved and status counts the package fetches (sandboxRegistries is
 * on by default; tests/workflow/registries.test.ts closes it).
 *
 * Another stands beside it for affected tests between checks (affectedTestsFullEvery, default 5):
 * a Python package whose tests pytest runs (detected, no test command configured); the builder
 * changes one module each iteration. The iterations' tests gates run that module's tests alone
 * (pytest's own count in the test log), the completion check the whole suite, and the run is
 * approved at the floor.
 *
 * Knobs this file changes, and why (only time, never behaviour): the agent command (the scripted
 * agent; for the installing cell behind a wrapper that installs first), and for the failing agent
 * the backoff (base wait and jitter 0) so that 25 failed iterations do not wait out real minutes
 * of backoff.
 *
 * And one for following the pull request (followPr, on by default with deliver=pr, the one knob
 * the cell sets: the behaviour it is about): the PR's checks fail once, an iteration fixes the
 * work, the council approves it again and it is pushed to the same branch on the real bare remote,
 * the checks pass (no event), the PR is merged. And its base moves (another clone pushes to main):
 * the branch is rebased, judged again on the new tree and pushed onto the new base, then merged.
 * `gh` is faked there, and only gh (tests/support/fake-gh.ts): the one part that talks to GitHub.
 *
 * And one for effort that fits the task (complexity, default auto): the run started as `vigil start`
 * starts it for a person who set no knob (`knobsGiven` empty; the other cells, started through the
 * API with no such list, count every knob as set, so their complexity changes nothing). The task,
 * one documented feature in a two-file repository, is simple: the council convenes from iteration
 * 1, and the honest builder's first claim is approved there.
 *
 * A new default-on behaviour joins this matrix: add its dimension or its cell. The builder that
 * cheats its way to green (deletes, skips or edits the failing test, rewires the harness, ends the
 * test process with status 0, hard-codes the input, reads the caller's source) is this matrix's
 * cheat dimension, kept in a file of its own with its four test runners, both autonomy modes and
 * its honest controls: tests/workflow/cheat-corpus.test.ts.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '@temporalio/worker';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';
import type { Outcome, RunInput } from '../../schemas/run.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { fetchLogPath } from '../../schemas/paths.js';
import { stopUpdate } from '../../workflows/messages.js';
import { execFileSync } from 'node:child_process';
import { fakeGh } from '../support/fake-gh.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  ROOT,
  runInput,
  SCRIPTED_AGENT,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writePrd,
  writeScenario,
  type ScenarioInput,
  type TestEnv,
} from '../support/harness.js';

const BEHAVIOURS = [
  'stagnant',
  'claims without change',
  'split council',
  'oscillating tree',
  'failing agent',
  'wrong reviewer format',
  'unmet checklist',
] as const;
/** The cell beside the cross product: the builder installs packages from the registries. */
const INSTALLS = 'installs packages';
/** The cells of the build gate beside it: the builder's change breaks the build its tests never run; the honest one builds. */
const BREAKS_BUILD = 'breaks the build';
const BUILDS = 'builds';
/** The cells of the app check: the builder's change keeps the app from loading (and rewrites the check); the honest one loads. */
const NO_BOOT = 'keeps the app from loading';
const BOOTS = 'loads';
/** And one more: the builder changes one module of a suite whose tests pytest selects. */
const AFFECTED = 'changes one module';
/** And the simple task started as `vigil start` starts it: the council from iteration 1. */
const FITS = 'a simple task, as vigil start sends it';
type Behaviour =
  | (typeof BEHAVIOURS)[number]
  | typeof INSTALLS
  | typeof BREAKS_BUILD
  | typeof BUILDS
  | typeof NO_BOOT
  | typeof BOOTS
  | typeof AFFECTED
  | typeof FITS;
interface Cell {
  /** The builder's export is undocumented in a publishable package (which started without a README). */
  gap: boolean;
  tests: boolean;
  mode: 'supervised' | 'perpetual';
  behaviour: Behaviour;
}

let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
const TQ = uniqueId('default-knobs');
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

const vote = (v: 'APPROVE' | 'REJECT') => ({ output: `Read the evidence.\nVOTE: ${v}\nREASON: member says ${v.toLowerCase()}\n` });

/** Every reviewing role answers in its format unless the behaviour says otherwise. */
function roles(behaviour: Behaviour): NonNullable<ScenarioInput['roles']> {
  return {
    checklist: {
      default: {
        output:
          '```json\n[{"id": "REQ-1", "title": "The feature exists in src/feature.js", "priority": "critical", "verify": "read src/feature.js"}]\n```\n',
      },
    },
    'checklist-verifier': {
      default: {
        output:
          behaviour === 'unmet checklist'
            ? 'ITEM REQ-1: FAIL - src/feature.js lacks the feature\n'
            : 'ITEM REQ-1: PASS - src/feature.js has it\n',
      },
    },
    reviewer: {
      default: {
        output: behaviour === 'wrong reviewer format' ? 'Reviewed the diff. Looks fine to me.\n' : 'Reviewed the diff.\nVERDICT: PASS\n',
      },
    },
    'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
    // Split: one member approves, two reject; never enough to approve (all approve an honest install, and the build and app check cells).
    council:
      behaviour === INSTALLS ||
      behaviour === BREAKS_BUILD ||
      behaviour === BUILDS ||
      behaviour === NO_BOOT ||
      behaviour === BOOTS ||
      behaviour === AFFECTED ||
      behaviour === FITS
        ? { default: vote('APPROVE') }
        : { members: { '0': { default: vote('APPROVE') } }, default: vote('REJECT') },
  };
}

function scenario(c: Cell): ScenarioInput {
  const behaviour = c.behaviour;
  const doc = (comment: string): string => (c.gap ? '' : `/** ${comment} */\n`);
  const A = { writes: { 'src/feature.js': `${doc('The feature.')}export const feature = 1;\n` } };
  const B = { writes: { 'src/feature.js': `${doc('The feature, again.')}export const feature = 2;\n` } };
  const base = { version: 1 as const, roles: roles(behaviour) };
  switch (behaviour) {
    case AFFECTED:
      // A documented function more each iteration, always in the add module, and a claim every time.
      return {
        ...base,
        iterations: [{ writes: { 'calc/add.py': `${PY_ADD}${pyFn(1)}` }, claim: 'file' }],
        default: { appends: { 'calc/add.py': pyFn(2) }, claim: 'file' },
      };
    case 'stagnant':
      return { ...base, iterations: [], default: { output: 'Looked around; nothing to change.\n' } };
    case 'claims without change':
      return { ...base, iterations: [], default: { output: 'All done.\n', claim: 'file' } };
    case 'split council':
    case 'wrong reviewer format':
    case 'unmet checklist':
    case INSTALLS:
    case BREAKS_BUILD:
    case BUILDS:
    case NO_BOOT:
    case BOOTS:
    case FITS:
      // Progress every iteration (a new line), and a claim every time.
      return {
        ...base,
        iterations: [
          behaviour === BREAKS_BUILD
            ? { writes: { 'src/feature.js': '/** The feature, misnamed. */\nexport const feature2 = 1;\n' }, claim: 'file' }
            : behaviour === NO_BOOT
              ? {
                  writes: {
                    'src/feature.js': '/** The feature, misnamed. */\nexport const feature2 = 1;\n',
                    '.vigil/app-check.sh': 'exit 0\n',
                  },
                  claim: 'file',
                }
              : { ...A, claim: 'file' },
        ],
        default: { appends: { 'src/feature.js': '// more work\n' }, claim: 'file' },
      };
    case 'oscillating tree':
      return { ...base, iterations: Array.from({ length: 30 }, (_, i) => ({ ...(i % 2 === 0 ? A : B), claim: 'file' as const })) };
    case 'failing agent':
      return { ...base, iterations: [], default: { stderr: 'fatal: the build tool crashed\n', exitCode: 1 } };
  }
}

const PY_ADD = '"""Addition."""\n\n\ndef add(a, b):\n    """The sum."""\n    return a + b\n';
const pyFn = (n: number): string => `\n\ndef add_${n}(a):\n    """Adds ${n}."""\n    return a + ${n}\n`;

/** The affected-tests cell's package: add (2 tests) and mul (3 tests). */
const PY_FILES: Record<string, string> = {
  'README.md': '# calc\n\nA sample package.\n',
  '.gitignore': '__pycache__/\n',
  'calc/__init__.py': '"""A calculator."""\n',
  'calc/add.py': PY_ADD,
  'calc/mul.py': '"""Multiplication."""\n\n\ndef mul(a, b):\n    """The product."""\n    return a * b\n',
  'tests/test_add.py':
    '"""Tests of add."""\nfrom calc.add import add\n\n\ndef test_add():\n    """Adds."""\n    assert add(1, 2) == 3\n\n\ndef ' +
    'test_add_neg():\n    """Adds negatives."""\n    assert add(-1, -2) == -3\n',
  'tests/test_mul.py':
    '"""Tests of mul."""\nfrom calc.mul import mul\n\n\ndef test_mul():\n    """Multiplies."""\n    assert mul(2, 3) == ' +
    '6\n\n\ndef test_mul_zero():\n    """By zero."""\n    assert mul(2, 0) == 0\n\n\ndef test_mul_neg():\n    """By a ' +
    'negative."""\n    assert mul(2, -3) == -6\n',
};

function repoFiles(c: Cell): Record<string, string> {
  if (c.behaviour === AFFECTED) return PY_FILES;
  const files: Record<string, string> = { 'src/index.js': '/** Entry point. */\nexport const name = "sample";\n' };
  if (!c.gap) files['README.md'] = '# sample\n\nA sample project.\n';
  // The gap cells' package is publishable (a name and a version, not private).
  const pkg = (scripts: string): string =>
    `{"name":"sample","type":"module",${c.gap ? '"version":"1.0.0"' : '"private":true'}${scripts ? `,"scripts":{"test":"${scripts}"}` : ''}}\n`;
  if (c.gap && !c.tests) files['package.json'] = pkg('');
  if (c.behaviour === BREAKS_BUILD || c.behaviour === BUILDS) {
    // The build runs an entry point no test imports: only the build sees whether it loads.
    files['package.json'] =
      '{"name":"sample","type":"module","private":true,"scripts":{"test":"node --test","build":"node src/main.js"}}\n';
    files['src/main.js'] =
      "/** The entry point the build loads. */\nimport { feature } from './feature.js';\nexport const shown = String(feature);\n";
    files['test/index.test.js'] =
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { name } from " +
      "'../src/index.js';\ntest('name', () => assert.equal(name, 'sample'));\n";
  } else if (c.behaviour === NO_BOOT || c.behaviour === BOOTS) {
    // The app's entry point no test imports; the repository's app check loads it and reads it.
    files['package.json'] = pkg('node --test');
    files['src/main.js'] =
      "/** The app's entry point. */\nimport { feature } from './feature.js';\nexport const shown = String(feature);\n";
    files['.vigil/app-check.sh'] = "node -e \"import('./src/main.js').then((m) => process.exit(m.shown === '1' ? 0 : 3))\"\n";
    files['test/index.test.js'] =
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { name } from " +
      "'../src/index.js';\ntest('name', () => assert.equal(name, 'sample'));\n";
  } else if (c.tests && c.behaviour === INSTALLS) {
    // A test run that needs a fresh install; node_modules stays out of the tree.
    files['package.json'] = pkg('npm install --no-audit --no-fund --no-package-lock --fetch-retries=0 && node --test');
    files['.gitignore'] = 'node_modules/\n';
  } else if (c.tests) {
    files['package.json'] = pkg('node --test');
    files['test/index.test.js'] =
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { name } from " +
      "'../src/index.js';\ntest('name', () => assert.equal(name, 'sample'));\n";
  }
  return files;
}

interface Expected {
  /** The run ends so (exit code 20 unless said). */
  outcome?: { status: Outcome['status']; iteration: number; reason: RegExp; exitCode?: number };
  /** The run pauses for a person at this iteration, saying this. */
  paused?: { iteration: number; reason: RegExp };
  /** What refused the last completion check (when any check happened). */
  lastCause?: string;
}

/** The original's outcome for each cell, and why. */
function expected(c: Cell): Expected {
  const checksRefusedByGates = c.gap; // the documentation gate refuses every check of the builder's undocumented export
  switch (c.behaviour) {
    case 'stagnant':
      // The breaker trips at 5 iterations without change; each forced check is refused by the
      // evidence gate (empty diff); the stagnation valve fires at 2 × 5.
      return {
        outcome: { status: 'force_stopped', iteration: 10, reason: /^stopped without approval: no change for 10 iterations in a row/ },
        lastCause: 'evidence',
      };
    case 'claims without change':
      // Claims from iteration 1; checks from the floor (3); both valves at 10.
      return {
        outcome: {
          status: 'force_stopped',
          iteration: 10,
          reason: /no change for 10 iterations in a row .* and 10 completion claims without approval/,
        },
        lastCause: 'evidence',
      };
    case 'split council':
      // A claim every iteration, each refused (gates, or the split council): the done-signal valve at 10.
      return {
        outcome: { status: 'force_stopped', iteration: 10, reason: /10 completion claims without approval/ },
        lastCause: checksRefusedByGates ? 'quality_gates' : 'council',
      };
    case 'oscillating tree':
      if (checksRefusedByGates)
        return {
          outcome: { status: 'force_stopped', iteration: 10, reason: /10 completion claims without approval/ },
          lastCause: 'quality_gates',
        };
      // Councils reject 1 of 3 from iteration 3 on; the tree returns to an earlier state from 3 on.
      // Uncertainty is judged after each iteration from the rounds before it: two split rounds
      // (3, 4) are seen at 5, the second co-occurring iteration is 6, and a person is asked then:
      // supervised pauses, perpetual goes on.
      if (c.mode === 'supervised') return { paused: { iteration: 6, reason: /escalation \(uncertainty\)/ } };
      return { outcome: { status: 'force_stopped', iteration: 10, reason: /10 completion claims without approval/ }, lastCause: 'council' };
    case 'failing agent':
      // The same failure five times is a dead letter: a person is asked (supervised: a pause).
      if (c.mode === 'supervised') return { paused: { iteration: 5, reason: /escalation \(dead letter\)/ } };
      return { outcome: { status: 'max_iterations_reached', iteration: 25, reason: /iteration cap reached: 25 of 25/ } };
    case 'wrong reviewer format':
      // (The documentation gate has failed 10 times by then too: its pause waits for the check, which the valve ends.)
      if (checksRefusedByGates)
        return {
          outcome: { status: 'force_stopped', iteration: 10, reason: /10 completion claims without approval/ },
          lastCause: 'quality_gates',
        };
      // The first check (iteration 3) and the second (4) have reviewers without a verdict line.
      if (c.mode === 'supervised')
        return {
          paused: {
            iteration: 4,
            reason: /contract error, 2 checks in a row: the code reviewer .* answered without a line `VERDICT: PASS` or `VERDICT: FAIL`/,
          },
          lastCause: 'contract',
        };
      return {
        outcome: { status: 'contract_error', iteration: 4, reason: /contract error, 2 checks in a row: the code reviewer .*VERDICT: PASS/ },
        lastCause: 'contract',
      };
    case 'unmet checklist':
      return {
        outcome: { status: 'force_stopped', iteration: 10, reason: /10 completion claims without approval/ },
        lastCause: checksRefusedByGates ? 'quality_gates' : 'checklist',
      };
    case BREAKS_BUILD:
    case NO_BOOT:
      // A claim every iteration, tests green, each check refused by the build gate (the app check): the done-signal valve at 10.
      return {
        outcome: { status: 'force_stopped', iteration: 10, reason: /10 completion claims without approval/ },
        lastCause: 'quality_gates',
      };
    case BUILDS:
    case BOOTS:
    case INSTALLS:
    case AFFECTED:
      // Claims from iteration 1; the first check, at the floor (3), passes every net.
      return { outcome: { status: 'council_approved', iteration: 3, reason: /./, exitCode: 0 } };
    case FITS:
      // A simple task: the floor is 1, and the first claim passes every net there.
      return { outcome: { status: 'council_approved', iteration: 1, reason: /./, exitCode: 0 } };
  }
}

/**
 * Where the installing wrapper lives: inside this package (test-artifacts/, ignored by git), so
 * that the sandbox shows the package it is installed in, as it shows the scripted agent's
 * (activities/sandbox.ts, programRoot): the wrapper execs the scripted agent, which runs from dist/.
 */
function installingAgentDir(): string {
  mkdirSync(path.join(ROOT, 'test-artifacts'), { recursive: true });
  return mkdtempSync(path.join(ROOT, 'test-artifacts', 'installing-agent-'));
}

/**
 * The installing builder: at its first iteration, `npm install` of a small npm package in the
 * repository and `pip download` of a small PyPI one (retries off: a refusal fails at once), then
 * the scripted agent. Outside the repository, so that the agent cannot edit it.
 */
function installingAgent(): string {
  const file = path.join(installingAgentDir(), 'install-then-agent.sh');
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      'if [ "${VIGIL_ROLE:-iteration}" = iteration ] && [ "$VIGIL_ITERATION" = 1 ]; then',
      '  npm install --no-audit --no-fund --no-package-lock --fetch-retries=0 is-number@7.0.0 </dev/null >&2 || exit 41',
      '  python3 -m pip download --no-deps --no-cache-dir --retries 0 --timeout 30 -d "${TMPDIR:-/tmp}/dl" six==1.16.0 </dev/null >&2 || exit 42',
      'fi',
      'exec "$@"',
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return file;
}

function input(c: Cell, repo: string, scenarioFile: string): RunInput {
  const knobs: Knobs = {
    ...defaultKnobs(),
    agentCommand: [...(c.behaviour === INSTALLS ? [installingAgent()] : []), SCRIPTED_AGENT, '--scenario', scenarioFile],
    autonomyMode: c.mode,
    // Time only: 25 failed iterations must not wait out minutes of backoff.
    ...(c.behaviour === 'failing agent' ? { baseWaitSeconds: 0, backoffJitterSeconds: 0 } : {}),
  };
  return {
    prdPath: writePrd('# Feature\n\nAdd the feature to src/feature.js.\n'),
    prdTitle: 'Feature',
    repoPath: repo,
    knobs,
    ...(c.behaviour === FITS ? { knobsGiven: [] } : {}),
  };
}

const LEVELS = ['LOW', 'MEDIUM', 'HIGH'];

const cells: Cell[] = [];
for (const gap of [true, false])
  for (const tests of [false, true])
    for (const mode of ['supervised', 'perpetual'] as const)
      for (const behaviour of BEHAVIOURS) cells.push({ gap, tests, mode, behaviour });
cells.push({ gap: false, tests: true, mode: 'supervised', behaviour: INSTALLS });
cells.push({ gap: false, tests: true, mode: 'supervised', behaviour: BREAKS_BUILD });
cells.push({ gap: false, tests: true, mode: 'supervised', behaviour: BUILDS });
cells.push({ gap: false, tests: true, mode: 'supervised', behaviour: NO_BOOT });
cells.push({ gap: false, tests: true, mode: 'supervised', behaviour: BOOTS });
cells.push({ gap: false, tests: true, mode: 'supervised', behaviour: AFFECTED });
cells.push({ gap: false, tests: true, mode: 'supervised', behaviour: FITS });
const label = (c: Cell) =>
  `${c.behaviour} · ${c.gap ? 'doc gap' : 'documented'} · ${c.tests ? 'passing tests' : 'no test runner'} · ${c.mode}`;

describe.concurrent('default knobs: every safety net together', () => {
  it.each(cells.map((c) => [label(c), c] as const))('%s', async (_name, c) => {
    const repo = makeRepo({ files: repoFiles(c) });
    const file = writeScenario(repo, scenario(c));
    const handle = await startRun(env, TQ, input(c, repo, file), uniqueId('matrix'));
    const want = expected(c);
    let snap: StatusSnapshot;
    let outcome: Outcome | null = null;
    if (want.paused) {
      snap = await waitForStatus(
        handle,
        (s) => s.paused && !s.agentRunning && s.outcome === null && s.iteration >= (want.paused?.iteration ?? 0),
        150_000,
      );
      expect(snap.iteration, 'paused at').toBe(want.paused.iteration);
      expect(snap.pause?.by).toBe('vigil');
      expect(snap.pause?.reason).toMatch(want.paused.reason);
      expect(snap.status).toBe('paused');
      await handle.executeUpdate(stopUpdate, { args: [{ reason: 'matrix cell checked', by: 'test' }] });
      expect((await handle.result()).status).toBe('stopped');
    } else {
      outcome = await handle.result();
      snap = await status(handle);
      // On a failure: what refused the last check, and every gate that did not pass.
      const why = JSON.stringify({ last: snap.checks?.last, gates: snap.quality?.gates.filter((g) => g.verdict !== 'pass') });
      expect({ status: outcome.status, iteration: outcome.iteration }, why).toEqual({
        status: want.outcome?.status,
        iteration: want.outcome?.iteration,
      });
      expect(outcome.reason).toMatch(want.outcome?.reason ?? /./);
      expect(outcome.exitCode).toBe(want.outcome?.exitCode ?? 20);
      // Status says the same as the outcome.
      expect(snap.outcome?.reason).toBe(outcome.reason);
    }
    if (want.lastCause) expect(snap.checks?.last?.cause, JSON.stringify(snap.checks)).toBe(want.lastCause);
    // The documentation gate refuses the builder's own line, and lists the README the repository never had as advisory.
    if (want.lastCause === 'quality_gates' && c.gap) {
      const doc = snap.quality?.gates.find((g) => g.gate === 'doc_coverage');
      expect(doc?.verdict).toBe('fail');
      expect(doc?.reason).toMatch(/^src\/feature\.js:\d+: export const feature has no /);
      expect(doc?.findings.filter((f) => f.severity !== 'info').map((f) => f.file)).toEqual(['src/feature.js']);
      expect(doc?.findings.find((f) => f.file === null)?.message).toMatch(/^already in the base tree: README missing/);
    }
    // The build gate: the one refusing the checks, its log's tail saying why; the honest build passes.
    const build = snap.quality?.gates.find((g) => g.gate === 'build');
    if (c.behaviour === BREAKS_BUILD) {
      expect(build?.verdict, JSON.stringify(snap.quality)).toBe('fail');
      expect(build?.reason).toMatch(/^the build `npm run build` failed \(exit 1\)/);
      expect(build?.findings.map((f) => f.message).join('\n')).toMatch(/log tail: .*does not provide an export named 'feature'/);
      expect(snap.lastTests?.verdict).toBe('pass');
    } else if (c.behaviour === BUILDS) expect(build).toMatchObject({ verdict: 'pass', reason: 'builds (`npm run build` exited 0)' });
    else expect(build?.reason ?? 'no gate pass', JSON.stringify(snap.quality)).toMatch(/^not applicable: no build detected|no gate pass/);
    // The app check: the copy of the file kept at the start refuses the builder who rewrote it; no file, not applicable.
    const app = snap.quality?.gates.find((g) => g.gate === 'app_check');
    if (c.behaviour === NO_BOOT) {
      expect(app?.verdict, JSON.stringify(snap.quality)).toBe('fail');
      expect(app?.reason).toBe('the app check `.vigil/app-check.sh (as the run started)` failed (exit 1)');
      expect(app?.findings.map((f) => f.message).join('\n')).toMatch(/log tail: .*does not provide an export named 'feature'/);
      expect(snap.lastTests?.verdict).toBe('pass');
    } else if (c.behaviour === BOOTS) expect(app?.verdict, JSON.stringify(snap.quality)).toBe('pass');
    else expect(app?.reason ?? 'no gate pass', JSON.stringify(snap.quality)).toMatch(/^not applicable: no app check|no gate pass/);
    // An idle agent is never stepped down the tier ladder.
    if (c.behaviour === 'stagnant' || c.behaviour === 'claims without change') {
      const downs = (snap.ladder?.changes ?? []).filter((ch) => LEVELS.indexOf(ch.to) < LEVELS.indexOf(ch.from));
      expect(downs).toEqual([]);
      expect(snap.tier).toBe('development');
    }
    // The builder's installs and the test runs' went through the proxy, each counted (and logged).
    if (c.behaviour === INSTALLS) {
      const p = snap.sandbox?.packages;
      expect(
        p?.hosts.map((h) => h.host),
        JSON.stringify(snap.sandbox),
      ).toEqual(expect.arrayContaining(['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org']));
      expect(p?.refused).toBe(0);
      const log = readFileSync(fetchLogPath(repo, handle.workflowId), 'utf8').split('\n').filter(Boolean);
      expect(log).toHaveLength(p?.fetches ?? -1);
    }
    // Between checks pytest ran the add module's 2 tests alone; the check (iteration 3) ran all 5.
    if (c.behaviour === AFFECTED) {
      const counts = (i: number): string[] =>
        [
          ...readFileSync(path.join(repo, '.vigil/runs', handle.workflowId, `tests-000${i}.log`), 'utf8').matchAll(/^(\d+) passed in /gm),
        ].map((m) => m[1] as string);
      expect(counts(0)).toEqual(['5']);
      expect(counts(1)).toEqual(['2']);
      expect(counts(2)).toEqual(['2']);
      expect(counts(3)).toEqual(['2', '5']);
      expect(snap.lastTests?.selected ?? null).toBeNull();
      expect(outcome?.notes[0]).toMatch(/^evidence: baseline tests 5 of 5 passed /);
    }
    // Every cell's task is simple; started as vigil start starts it, its floor and interval are set, elsewhere nothing is.
    expect(snap.complexity?.tier).toBe('simple');
    if (c.behaviour === FITS) expect(snap.complexity?.applied).toMatchObject({ councilMinIterations: 1, councilCheckInterval: 3 });
    else expect(snap.complexity?.applied).toEqual({});
    // A contract mistake is never counted as a failing gate.
    if (c.behaviour === 'wrong reviewer format') expect(snap.quality?.failing.code_review ?? 0).toBe(0);
    // The council is never asked while the checklist blocks: its verifier, asked in the round first, stops it.
    if (c.behaviour === 'unmet checklist') {
      const calls = readFileSync(path.join(repo, '.vigil/scripted-agent/calls.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { role: string }).role);
      expect(calls.filter((r) => r === 'council')).toEqual([]);
      expect(snap.council.rounds).toBe(0);
      if (!c.gap) expect(calls.filter((r) => r === 'checklist-verifier').length).toBeGreaterThanOrEqual(8);
    }
  });
});

describe('default knobs: following the pull request', () => {
  it('PR checks fail once, then pass: the fix is judged again, pushed to the same branch, and the merge ends the run', async () => {
    const { ghDir, ghCallsIn } = fakeGh();
    // The worker runs in this process: gh resolves through PATH at each call; no other cell calls gh.
    if (!(process.env.PATH ?? '').startsWith(ghDir)) process.env.PATH = `${ghDir}${path.delimiter}${process.env.PATH ?? ''}`;
    const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    const repo = makeRepo({ files: { 'README.md': '# feature\n' } });
    const remote = mkdtempSync(path.join(os.tmpdir(), 'vigil-origin-'));
    git(remote, 'init', '-q', '--bare');
    git(repo, 'remote', 'add', 'origin', remote);
    const scenarioFile = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 1;\n' } },
        { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 2;\n' } },
        { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 3;\n' }, claim: 'file' },
        { writes: { 'src/feature.js': '/** The feature, as CI wants it. */\nexport const feature = 4;\n' }, claim: 'file' },
      ],
      roles: roles('builds'),
    });
    const handle = await startRun(env, TQ, runInput(repo, scenarioFile, { deliver: 'pr' }), uniqueId('default-knobs-pr'));
    await waitForStatus(handle, (s) => s.pullRequest?.waiting === true, 180_000);
    const branch = `vigil/${handle.workflowId}`;
    const first = git(remote, 'rev-parse', branch);
    await handle.signal('prEvent', { kind: 'checks-failed', id: 'ci-1', checks: [{ name: 'CI', logTail: 'expected feature to be 4' }] });
    const fixed = await waitForStatus(handle, (s) => s.pullRequest?.waiting === true && s.iteration === 4, 180_000);
    expect(fixed.council.rounds).toBe(2);
    expect(git(remote, 'rev-parse', `${branch}^`)).toBe(first);
    expect(git(remote, 'show', `${branch}:src/feature.js`)).toContain('feature = 4');
    expect(ghCallsIn(repo).filter((a) => a[1] === 'create')).toHaveLength(1);
    await handle.signal('prEvent', { kind: 'merged', id: 'ci-2', mergeCommit: 'c0ffee' });
    const outcome = await handle.result();
    expect(outcome).toMatchObject({ status: 'merged', exitCode: 0, iteration: 4 });
    expect(outcome.notes[0]).toMatch(/^evidence: /);
  });

  it('PR base moved: rebased onto the new base, judged again on the new tree, pushed with a lease, and the merge ends the run', async () => {
    const { ghDir, ghCallsIn } = fakeGh();
    if (!(process.env.PATH ?? '').startsWith(ghDir)) process.env.PATH = `${ghDir}${path.delimiter}${process.env.PATH ?? ''}`;
    const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    const repo = makeRepo({ files: { 'README.md': '# feature\n' } });
    const remote = mkdtempSync(path.join(os.tmpdir(), 'vigil-origin-'));
    git(remote, 'init', '-q', '--bare');
    git(repo, 'remote', 'add', 'origin', remote);
    git(repo, 'push', '-q', 'origin', 'main');
    const scenarioFile = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 1;\n' } },
        { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 2;\n' } },
        { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 3;\n' }, claim: 'file' },
      ],
      roles: roles('builds'),
    });
    const handle = await startRun(env, TQ, runInput(repo, scenarioFile, { deliver: 'pr' }), uniqueId('default-knobs-pr-base'));
    await waitForStatus(handle, (s) => s.pullRequest?.waiting === true, 180_000);
    const branch = `vigil/${handle.workflowId}`;
    const first = git(remote, 'rev-parse', branch);
    // Another clone moves the base: a file of its own, so the rebase applies cleanly.
    const other = mkdtempSync(path.join(os.tmpdir(), 'vigil-other-clone-'));
    git(other, 'clone', '-q', '-b', 'main', remote, '.');
    writeFileSync(path.join(other, 'NOTICE'), 'from the base\n');
    git(other, 'add', 'NOTICE');
    git(other, '-c', 'user.name=Other', '-c', 'user.email=other@example.com', 'commit', '-q', '-m', 'the base moves');
    git(other, 'push', '-q', 'origin', 'main');
    const base = git(other, 'rev-parse', 'HEAD');
    await handle.signal('prEvent', { kind: 'base-moved', id: 'push-1' });
    const rebased = await waitForStatus(
      handle,
      (s) => s.pullRequest?.waiting === true && (s.pullRequest.updates?.length ?? 0) === 1 && git(remote, 'rev-parse', branch) !== first,
      180_000,
    );
    expect(rebased.pullRequest?.updates?.[0]).toMatchObject({ result: 'updated', mode: 'rebase' });
    // Judged again on the new tree (a second council round) without an agent call, then pushed onto the new base.
    expect(rebased.council.rounds).toBe(2);
    expect(rebased.iteration).toBe(3);
    const tip = git(remote, 'rev-parse', branch);
    expect(git(remote, 'rev-parse', `${tip}^`)).toBe(base);
    expect(git(remote, 'show', `${tip}:NOTICE`)).toBe('from the base');
    expect(git(remote, 'show', `${tip}:src/feature.js`)).toContain('feature = 3');
    expect(ghCallsIn(repo).filter((a) => a[1] === 'create')).toHaveLength(1);
    await handle.signal('prEvent', { kind: 'merged', id: 'push-2', mergeCommit: 'c0ffee' });
    expect(await handle.result()).toMatchObject({ status: 'merged', exitCode: 0, iteration: 3 });
  });
});
