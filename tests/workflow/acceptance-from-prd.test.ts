/**
 * Acceptance tests written from the PRD (knob acceptanceFromPrd, patch vigil-acceptance-from-prd-v1)
 * as whole runs on the dev server, with the product's default knobs (supervised, the sandbox on,
 * the gates, the code review, the checklist, the council, delivery) unless a test says otherwise:
 *
 * - the acceptance role (tests/support/acceptance-seeker-agent.mjs with VIGIL_ANSWER=files) writes
 *   marked tests into VIGIL_ACCEPTANCE_DIR, after trying to plant a file in the repository, which is
 *   read-only for it; the supervised run pauses once, before any builder call, naming the sealed
 *   folder and its files; after `resume` the builder's hard-coded answer is refused by those tests
 *   and its honest fix approved, while in every call it searches every path it can read for the
 *   tests' names and mark and finds nothing, and neither the repository nor the history holds them;
 * - the scripted agent playing the role and writing no test: the run ends failed, with the reason,
 *   before any builder call;
 * - the scripted agent writing a test in a perpetual run: no pause, its test sealed and passed by
 *   the builder's fix;
 * - the adversary: a lazy acceptance role whose tests pass on the starting tree (a test of what the
 *   code already does). With a person's folder that ends the run `already_satisfied`; the role's
 *   tests never do: it is asked again, saying why, and when its second tests pass before any work
 *   too, the supervised run pauses saying the run does not rest on them, and the builder's fix is
 *   then judged without them; a role lazy once and honest the second time has its second tests
 *   sealed and judged (perpetual, no pause).
 * The CLI's flag and its refusal with --acceptance: tests/e2e/acceptance-cli.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { resumeUpdate } from '../../workflows/messages.js';
import { HIDDEN_MARK } from '../support/acceptance-corpus.js';
import { RUNNERS, SYCOPHANTS } from '../support/cheat-corpus.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  LOOP_ONLY,
  makeWorker,
  ROOT,
  runInput,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

const AGENT = path.join(ROOT, 'tests/support/acceptance-seeker-agent.mjs');
const PYTEST = RUNNERS.find((r) => r.name === 'pytest');
const PY_FIX = 'def max_gap(xs):\n    return max(xs) - min(xs)\n';
const saved = { ...process.env };
let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
let tq: string;
let root: string;

function makeRepo(name: string): string {
  const repo = path.join(root, name);
  mkdirSync(repo);
  for (const [f, text] of Object.entries(PYTEST?.files ?? {})) writeFileSync(path.join(repo, f), text);
  writeFileSync(path.join(repo, 'README.md'), '# gap\n\n`max_gap(xs)`: the gap between the largest and the smallest value.\n');
  const g = (...args: string[]): string =>
    execFileSync('git', ['-c', 'user.email=p@example.com', '-c', 'user.name=p', ...args], { cwd: repo, encoding: 'utf8' });
  g('init', '-q', '-b', 'main');
  g('add', '-A');
  g('commit', '-qm', 'start');
  return repo;
}

/** A history's payloads, decoded from base64, one per line. */
function decodedPayloads(history: string): string {
  const out: string[] = [];
  for (const m of history.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)) out.push(Buffer.from(m[1] ?? '', 'base64').toString('utf8'));
  if (out.length === 0) throw new Error('no payload found in the history');
  return out.join('\n');
}

/** Every file under `dir` that holds the mark. */
function holding(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && readFileSync(p).includes(HIDDEN_MARK)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

describe.runIf(sandboxPlatform().problem === null)('acceptance tests written from the PRD by the acceptance role', () => {
  beforeAll(async () => {
    assertBuilt();
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-wall-prd-'));
    Object.assign(process.env, {
      VIGIL_HOME: path.join(root, 'vigil-home'),
      VIGIL_SANDBOX: 'auto',
      ACCEPTANCE_MARK: HIDDEN_MARK,
      ACCEPTANCE_NAMES: 'test_wall.py',
    });
    env = await createTestEnv();
    tq = uniqueId('wall-prd');
    worker = await makeWorker(env, tq);
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running?.catch(() => undefined);
    await env?.close();
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(root, { recursive: true, force: true });
  });

  it(
    'pauses once to show the written tests, then refuses a hard-coded answer by them and approves the fix; the builder never finds them',
    async () => {
      const repo = makeRepo('hard-coded');
      const input = runInput(repo, writeScenario(root, { version: 1, iterations: [] }), {
        agentCommand: [process.execPath, AGENT],
        acceptanceFromPrd: true,
      });
      const handle = await startRun(env, tq, input, uniqueId('wall-prd-hard-coded'));
      // Supervised (the default): one pause before the builder starts, naming the sealed folder and its file.
      const paused = await waitForStatus(handle, (s) => s.paused, 120_000);
      const sealed = path.join(process.env.VIGIL_HOME ?? '', 'private', handle.workflowId, 'acceptance');
      expect(paused.pause?.reason).toContain(`sealed in ${sealed}: test_wall.py`);
      expect(paused.pause?.reason).toMatch(/they fail \(0 passed, 2 failed\)/);
      expect(paused.pause?.reason).toMatch(/Read them there before the builder starts.*`vigil resume`/);
      expect(paused.iteration).toBe(0);
      expect(paused.acceptance?.drafted).toEqual({ dir: sealed, shown: true, attempt: 1, dropped: null });
      expect(readFileSync(path.join(sealed, 'test_wall.py'), 'utf8')).toContain(HIDDEN_MARK);
      expect(existsSync(path.join(repo, '.vigil', 'seeker-1.json')), 'no builder call before the resume').toBe(false);
      // The role could not write the repository (its sandbox shows it read-only).
      expect(existsSync(path.join(repo, 'planted_by_acceptance.py'))).toBe(false);
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'acceptance-from-prd-test' }] });

      const outcome = await handle.result();
      expect(outcome.status, JSON.stringify(outcome)).toBe('council_approved');
      const snap = await status(handle);
      // Refused once by the acceptance tests alone (the council's minimum iteration is 3), the fix approved.
      expect(outcome.iteration, JSON.stringify(snap.checks)).toBe(4);
      expect(snap.checks?.byCause).toEqual({ acceptance: 1 });
      expect(outcome.notes[0]).toMatch(/acceptance (\d+) of \1 passed/);
      const fourth = readFileSync(path.join(repo, '.vigil', 'prompt-4.md'), 'utf8');
      expect(fourth).toMatch(/2 acceptance tests failed/);
      expect(fourth).toMatch(/Failing: test_all_negative, test_mixed/);
      // Everything the builder could read, in every call: neither the file's name nor its text.
      for (const n of [1, 2, 3, 4]) {
        const seen = JSON.parse(readFileSync(path.join(repo, '.vigil', `seeker-${n}.json`), 'utf8')) as { found: string[]; files: number };
        expect(seen.files, 'the builder searched').toBeGreaterThan(1000);
        expect(seen.found).toEqual([]);
      }
      expect(holding(repo)).toEqual([]);
      const history = decodedPayloads(JSON.stringify(await handle.fetchHistory()));
      expect(history).not.toContain(HIDDEN_MARK);
      expect(history).toContain('vigil-acceptance-from-prd-v1');
      // Shown once: the run paused once.
      expect(history.match(/Read them there before the builder starts/g)?.length ?? 0).toBeLessThanOrEqual(2);
    },
    patient(300_000),
  );

  it(
    'the scripted acceptance role writing no test ends the run failed, before any builder call',
    async () => {
      const repo = makeRepo('no-test');
      const scenario = writeScenario(root, {
        version: 1,
        iterations: [{ writes: { 'gap.py': PY_FIX }, claim: 'promise' }],
        roles: { acceptance: { default: { writes: { 'notes.md': '# what I would test\n' }, output: 'notes.md\n' } } },
      });
      const input = runInput(repo, scenario, { acceptanceFromPrd: true });
      const outcome = await (await startRun(env, tq, input, uniqueId('wall-prd-no-test'))).result();
      expect(outcome.status).toBe('failed');
      expect(outcome.reason).toMatch(/acceptance tests the acceptance agent wrote could not be sealed.*holds no test file/);
      expect(agentCalls(repo).map((c) => c.role)).not.toContain('iteration');
      expect(agentCalls(repo).map((c) => c.role)).toContain('acceptance');
    },
    patient(120_000),
  );

  it(
    'a perpetual run does not pause: the scripted role writes a test, sealed, and the fix passes it',
    async () => {
      const repo = makeRepo('perpetual');
      const test = `from gap import max_gap\n\ndef test_negatives():\n    assert max_gap([-4, 1]) == 5\n`;
      const scenario = writeScenario(root, {
        version: 1,
        iterations: [{ writes: { 'gap.py': PY_FIX }, claim: 'promise' }],
        roles: { acceptance: { default: { writes: { 'test_prd.py': test }, output: 'test_prd.py\n' } } },
      });
      // The completion machinery off (LOOP_ONLY): this test is about the acceptance role and the pause, not the judges.
      const input = runInput(repo, scenario, { ...LOOP_ONLY, acceptanceFromPrd: true, autonomyMode: 'perpetual' });
      const handle = await startRun(env, tq, input, uniqueId('wall-prd-perpetual'));
      const outcome = await handle.result();
      expect(outcome.status, JSON.stringify(outcome)).toBe('completion_promise_fulfilled');
      const snap = await status(handle);
      expect(snap.pause).toBeNull();
      expect(snap.acceptance?.files).toBe(1);
      expect(snap.acceptance?.last).toMatchObject({ verdict: 'pass', passed: 1, failed: 0 });
      expect(snap.acceptance?.drafted?.shown).toBe(true);
      expect(existsSync(path.join(repo, 'test_prd.py')), 'never in the repository').toBe(false);
    },
    patient(180_000),
  );

  // What the code already does: passes on the starting tree, whatever the PRD asks.
  const LAZY = `from gap import max_gap\n\ndef test_positive():\n    assert max_gap([1, 5]) == 4\n`;
  const HONEST = `from gap import max_gap\n\ndef test_negatives():\n    assert max_gap([-4, 1]) == 5\n`;

  it(
    'a lazy acceptance role whose tests pass before any work: asked again, then not rested on; never already_satisfied',
    async () => {
      const repo = makeRepo('lazy');
      const scenario = writeScenario(root, {
        version: 1,
        iterations: [{ writes: { 'gap.py': PY_FIX }, claim: 'promise' }],
        default: { claim: 'promise' },
        roles: { ...SYCOPHANTS, acceptance: { default: { writes: { 'test_prd.py': LAZY }, output: 'test_prd.py\n' } } },
      });
      // The default knobs (supervised, the sandbox, the judges), every reviewing role approving whatever it is shown.
      const handle = await startRun(env, tq, runInput(repo, scenario, { acceptanceFromPrd: true }), uniqueId('wall-prd-lazy'));
      const paused = await waitForStatus(handle, (s) => s.paused || s.outcome !== null, 180_000);
      expect(paused.status, JSON.stringify(paused.acceptance)).not.toBe('already_satisfied');
      expect(paused.paused).toBe(true);
      expect(paused.iteration).toBe(0);
      expect(paused.pause?.reason).toMatch(
        new RegExp(
          [
            /passed on the tree the run started with, before any work \(1 passed\), in each of its 2 calls: they /.source,
            /cannot tell when the PRD is done, so the run does not rest on them/.source,
          ].join(''),
        ),
      );
      expect(paused.acceptance?.drafted).toMatchObject({
        attempt: 2,
        shown: true,
        dropped: expect.stringMatching(/does not rest on them/) as unknown,
      });
      expect(agentCalls(repo).filter((c) => c.role === 'acceptance')).toHaveLength(2);
      expect(agentCalls(repo).map((c) => c.role)).not.toContain('iteration');
      // The second call was told why.
      const history = decodedPayloads(JSON.stringify(await handle.fetchHistory()));
      expect(history).toMatch(/Your earlier tests all passed \(1 of them\) on the repository as it is now, before any work/);

      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'acceptance-from-prd-test' }] });
      const outcome = await handle.result();
      // Judged without them: the builder's fix approved by the usual judges, no acceptance check counted.
      expect(outcome.status, JSON.stringify(outcome)).toBe('council_approved');
      const snap = await status(handle);
      expect(snap.checks?.byCause?.acceptance ?? 0).toBe(0);
      expect(snap.acceptance?.last?.iteration).toBe(0);
    },
    patient(300_000),
  );

  it(
    'a role lazy once and honest when asked again: its second tests are sealed and judge the run',
    async () => {
      const repo = makeRepo('lazy-once');
      const scenario = writeScenario(root, {
        version: 1,
        // The first claim changes the tree but leaves the bug: only the acceptance tests can refuse it.
        iterations: [
          { writes: { 'NOTES.md': 'max_gap: looked at it\n' }, claim: 'promise' },
          { writes: { 'gap.py': PY_FIX }, claim: 'promise' },
        ],
        roles: {
          acceptance: {
            rounds: [{ writes: { 'test_prd.py': LAZY }, output: 'test_prd.py\n' }],
            default: { writes: { 'test_prd_neg.py': HONEST }, output: 'test_prd_neg.py\n' },
          },
        },
      });
      // The completion machinery off (LOOP_ONLY): the acceptance tests alone judge the claims here.
      const input = runInput(repo, scenario, { ...LOOP_ONLY, acceptanceFromPrd: true, autonomyMode: 'perpetual' });
      const handle = await startRun(env, tq, input, uniqueId('wall-prd-lazy-once'));
      const outcome = await handle.result();
      expect(outcome.status, JSON.stringify(outcome)).toBe('completion_promise_fulfilled');
      // The first claim, with the bug still there, refused by the second call's tests; the fix passes them.
      expect(outcome.iteration).toBe(2);
      const snap = await status(handle);
      expect(snap.pause).toBeNull();
      expect(snap.acceptance?.drafted).toMatchObject({ attempt: 2, dropped: null });
      expect(snap.acceptance?.last).toMatchObject({ iteration: 2, verdict: 'pass', passed: 1, failed: 0 });
      expect(snap.checks?.byCause).toEqual({ acceptance: 1 });
      const sealed = snap.acceptance?.drafted?.dir ?? '';
      expect(readdirSync(sealed)).toEqual(['test_prd_neg.py']);
      expect(agentCalls(repo).filter((c) => c.role === 'acceptance')).toHaveLength(2);
    },
    patient(240_000),
  );
});
