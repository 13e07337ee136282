/**
 * Runs with attempts for the tests (tests/workflow/attempts*.test.ts): the scripted agent playing
 * the builder and every reviewing role of each attempt, a scenario per attempt (`{attempt}` in the
 * scenario path, filled from VIGIL_ATTEMPT), and the comparison's council in the run's own
 * repository (the scenario `attempt-.json`: VIGIL_ATTEMPT is unset there).
 *
 * The scenarios live under one folder the sandbox may read (VIGIL_SANDBOX_READABLE, as an operator
 * would set it): `attempt-{attempt}.json` names no file, so the sandbox would not let the agent
 * read it otherwise. The sandbox stays on. Set by importing this module, before any worker starts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultKnobs } from '../../schemas/knobs.js';
import type { AttemptsInput } from '../../schemas/attempts.js';
import { makeRepo, SCRIPTED_AGENT, writePrd, type ScenarioInput } from './harness.js';

export const SCENARIOS = mkdtempSync(path.join(os.tmpdir(), 'vigil-attempts-'));
process.env.VIGIL_SANDBOX_READABLE = [process.env.VIGIL_SANDBOX_READABLE, SCENARIOS].filter(Boolean).join(':');

type Roles = NonNullable<ScenarioInput['roles']>;
export type Script = Omit<ScenarioInput, 'version'>;

const vote = { output: 'Read the evidence.\nVOTE: APPROVE\nREASON: the feature is there and tested\n' };

/** Every reviewing role approves, in its format, in every attempt. */
export const ROLES: Roles = {
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

/** Right from the start, with a review finding (a low one its reviewer passed). */
export const FOUND: Script = {
  roles: {
    reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n- [Low] the feature has no doc example (src/feature.js:1)\n' } },
  },
  iterations: [{ writes: { 'src/feature.js': feature(1, 'with a finding') }, claim: 'file' }],
  default: { appends: { 'src/feature.js': '// checked again\n' }, claim: 'file' },
};

/** Right one iteration later, clean. */
export const CLEAN: Script = {
  iterations: [
    { writes: { 'src/feature.js': '/** The feature (clean, not yet). */\nexport const feature = 0;\n' } },
    { appends: { 'notes.md': 'thinking\n' } },
    { appends: { 'notes.md': 'still thinking\n' } },
  ],
  default: { writes: { 'src/feature.js': feature(1, 'clean') }, appends: { 'notes.md': 'again\n' }, claim: 'file' },
};

/** Attempt n follows `attempts[n-1]`; the comparison's council answers as `council` says. Returns the scenario path. */
export function attemptScenarios(council: Roles, attempts: Script[]): string {
  const dir = mkdtempSync(path.join(SCENARIOS, 'run-'));
  const write = (n: number | '', s: Script): void =>
    writeFileSync(path.join(dir, `attempt-${n}.json`), JSON.stringify({ version: 1, ...s, roles: { ...ROLES, ...s.roles } }, null, 2));
  write('', { iterations: [], roles: council });
  attempts.forEach((script, i) => write(i + 1, script));
  return path.join(dir, 'attempt-{attempt}.json');
}

/** A repository whose test asks for feature = 1. */
export function attemptsRepo(): string {
  return makeRepo({
    files: {
      'README.md': '# sample\n\nA sample project.\n',
      'package.json': '{"name":"sample","type":"module","private":true,"scripts":{"test":"node --test"}}\n',
      'src/index.js': '/** Entry point. */\nexport const name = "sample";\n',
      'src/feature.js': '/** The feature, not there yet. */\nexport const feature = 0;\n',
      'test/feature.test.js':
        "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { feature } from " +
        "'../src/feature.js';\ntest('feature', () => assert.equal(feature, 1));\n",
    },
  });
}

/**
 * The input of a run with one attempt per script. Knobs at the product's defaults but time:
 * maxIterations 5, so that a failing attempt ends at the cap rather than at the done-signal valve
 * ten iterations in.
 */
export function attemptsInput(repo: string, scenario: string, k: number): AttemptsInput {
  return {
    run: {
      prdPath: writePrd('# Feature\n\nsrc/feature.js exports feature = 1, and the tests pass.\n'),
      prdTitle: 'Feature',
      repoPath: repo,
      knobs: {
        ...defaultKnobs(),
        agentCommand: [SCRIPTED_AGENT, '--scenario', scenario],
        baseWaitSeconds: 1,
        backoffJitterSeconds: 0,
        heartbeatTimeoutSeconds: 5,
        maxIterations: 5,
      },
    },
    attempts: k,
    // As every start from this release on: messages forwarded, deliver=pr, worktrees removed when stopped.
    forwarding: true,
  };
}
