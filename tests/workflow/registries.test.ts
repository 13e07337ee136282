/**
 * Packages by default, visibly (docs/security.md, Package registries), as a whole run on the real
 * Temporal dev server with the sandbox on: a builder that adds dependencies — `npm install` of a
 * small npm package and `pip download` of a small PyPI one, through the sandbox's proxy to the
 * real registries, which this machine reaches — with the default knobs is approved, and what
 * `vigil status` prints counts its fetches, by host; with sandboxRegistries=false both installs
 * fail, and status says why and which knob opens them. The scripted agent plays every role; a
 * small wrapper outside the repository installs first.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '@temporalio/worker';
import { printStatus } from '../../cli/status.js';
import { defaultKnobs } from '../../schemas/knobs.js';
import { fetchLogPath } from '../../schemas/paths.js';
import type { RunInput } from '../../schemas/run.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { stopUpdate } from '../../workflows/messages.js';
import { parseFetchLog } from '../../rules/package-fetches.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  ROOT,
  SCRIPTED_AGENT,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writePrd,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
let wrapper: string;
const TQ = uniqueId('registries');

/**
 * Where the installing wrapper lives: inside this package (test-artifacts/, ignored by git), so
 * that the sandbox shows the package it is installed in, as it shows the scripted agent's
 * (activities/sandbox.ts, programRoot): the wrapper execs the scripted agent, which runs from dist/.
 */
function installingAgentDir(): string {
  mkdirSync(path.join(ROOT, 'test-artifacts'), { recursive: true });
  return mkdtempSync(path.join(ROOT, 'test-artifacts', 'installing-agent-'));
}

beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
  worker = await makeWorker(env, TQ);
  running = worker.run();
  // At the first iteration, the builder installs (retries off: a refused fetch fails at once), then the scripted agent runs.
  wrapper = path.join(installingAgentDir(), 'install-then-agent.sh');
  writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      'if [ "${VIGIL_ROLE:-iteration}" = iteration ] && [ "$VIGIL_ITERATION" = 1 ]; then',
      '  npm install --no-audit --no-fund --no-package-lock --fetch-retries=0 is-number@7.0.0 </dev/null >&2 || echo "npm install failed" >&2',
      '  python3 -m pip download --no-deps --no-cache-dir --retries 0 --timeout 30 -d "${TMPDIR:-/tmp}/dl" six==1.16.0 ' +
        '</dev/null >&2 || echo "pip download failed" >&2',
      '  test -d node_modules/is-number || exit 41',
      'fi',
      'exec "$@"',
      '',
    ].join('\n'),
  );
  chmodSync(wrapper, 0o755);
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.close();
});

const vote = { output: 'Read the evidence.\nVOTE: APPROVE\nREASON: the dependency is added and used\n' };
const FEATURE = {
  'src/feature.js': "import check from 'is-number';\n\n/** The feature: is-number's check. */\nexport const isNumber = check;\n",
};

function runInput(repo: string, sandboxRegistries: boolean): RunInput {
  const scenario = writeScenario(repo, {
    version: 1,
    iterations: [{ writes: FEATURE, claim: 'file' }],
    default: { appends: { 'src/feature.js': '// more work\n' }, claim: 'file' },
    roles: {
      checklist: {
        default: {
          output:
            '```json\n[{"id": "REQ-1", "title": "src/feature.js exports isNumber from is-number", "priority": "critical", ' +
            '"verify": "read src/feature.js"}]\n```\n',
        },
      },
      'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - src/feature.js has it\n' } },
      reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n' } },
      'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
      council: { default: vote },
    },
  });
  return {
    prdPath: writePrd('# Feature\n\nAdd is-number as a dependency and export its check from src/feature.js.\n'),
    prdTitle: 'Feature',
    repoPath: repo,
    knobs: { ...defaultKnobs(), agentCommand: [wrapper, SCRIPTED_AGENT, '--scenario', scenario], sandboxRegistries },
  };
}

function repoFiles(): Record<string, string> {
  return {
    'README.md': '# sample\n\nA sample project.\n',
    'src/index.js': '/** Entry point. */\nexport const name = "sample";\n',
    '.gitignore': 'node_modules/\n',
    'package.json': '{"name":"sample","type":"module","private":true,"scripts":{"test":"node --test"}}\n',
    'test/index.test.js':
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { name } from " +
      "'../src/index.js';\ntest('name', () => assert.equal(name, 'sample'));\n",
  };
}

/** What `vigil status` prints for the run, its `packages` lines. */
function packagesSaid(workflowId: string, snap: StatusSnapshot, finished: boolean): string[] {
  const lines: string[] = [];
  printStatus(
    finished
      ? { kind: 'finished', workflowId, temporalStatus: 'COMPLETED', outcome: null, snapshot: snap, iteration: snap.iteration }
      : {
          kind: 'running',
          workflowId,
          snapshot: snap,
          workerAnswered: true,
          iteration: snap.iteration,
          searchStatus: 'running',
          taskFailing: null,
        },
    (l = '') => lines.push(l),
  );
  return lines.filter((l) => l.startsWith('  packages'));
}

describe('the package registries in a whole run', () => {
  it(
    'default knobs: the builder installs an npm and a PyPI package, the run is approved, and status counts the fetches',
    async () => {
      const repo = makeRepo({ files: repoFiles() });
      const handle = await startRun(env, TQ, runInput(repo, defaultKnobs().sandboxRegistries), uniqueId('registries-open'));
      const outcome = await handle.result();
      const snap = await status(handle);
      expect(outcome.status, `${outcome.reason}\n${JSON.stringify(snap.sandbox)}`).toBe('council_approved');
      expect(snap.sandbox?.last?.applied).toBe(true);
      const p = snap.sandbox?.packages;
      expect(p?.hosts.map((h) => h.host)).toEqual(expect.arrayContaining(['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org']));
      expect(p?.refused).toBe(0);
      // The dependency is in the delivered work (package.json), the tree never held node_modules.
      expect(readFileSync(path.join(repo, 'package.json'), 'utf8')).toContain('"is-number"');
      // Every fetch is a line of the run's fetch log, with its call; the state holds only the counts.
      const { entries, skipped } = parseFetchLog(readFileSync(fetchLogPath(repo, handle.workflowId), 'utf8'));
      expect(skipped).toBe(0);
      expect(entries).toHaveLength(p?.fetches ?? -1);
      expect(new Set(entries.map((e) => e.call))).toContain('iteration-0001');
      const said = packagesSaid(handle.workflowId, snap, true);
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(
        new RegExp(
          `^  packages  : ${p?.fetches} fetches from .*registry\\.npmjs\\.org \\(\\d+, .*pypi\\.org \\(\\d+, .*; each in .*packages\\.jsonl$`,
        ),
      );
    },
    patient(300_000),
  );

  it(
    'sandboxRegistries=false: both installs fail, and status says the registries are closed and which knob opens them',
    async () => {
      // The knob is turned off on purpose: closing the registries is what this test is about.
      const repo = makeRepo({ files: repoFiles() });
      const handle = await startRun(env, TQ, runInput(repo, false), uniqueId('registries-closed'));
      const snap = await waitForStatus(
        handle,
        (s) => s.iteration >= 1 && !s.agentRunning && (s.sandbox?.packages?.refused ?? 0) >= 2,
        180_000,
      );
      const p = snap.sandbox?.packages;
      expect(p?.fetches).toBe(0);
      expect(p?.refusedWhy).toBe('closed');
      expect(p?.refusedHosts).toEqual(expect.arrayContaining(['registry.npmjs.org', 'pypi.org']));
      expect(readFileSync(path.join(repo, 'package.json'), 'utf8')).not.toContain('"is-number"');
      const said = packagesSaid(handle.workflowId, snap, false);
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(
        /refused: the package registries are closed for this run \(sandboxRegistries=false\).*--set sandboxRegistries=true/,
      );
      // The failed install failed the iteration (the wrapper's exit 41), not the run.
      const first = await waitForStatus(handle, (s) => s.recentIterations.length >= 1, 60_000);
      expect(first.recentIterations[0]?.exitCode).toBe(41);
      await handle.executeUpdate(stopUpdate, { args: [{ reason: 'checked', by: 'test' }] });
      expect((await handle.result()).status).toBe('stopped');
    },
    patient(300_000),
  );
});
