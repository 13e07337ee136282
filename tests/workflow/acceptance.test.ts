/**
 * The Wall as whole runs, with the product's default knobs (supervised, the sandbox on, the gates,
 * the code review, the checklist, the council, delivery) and a sycophantic council: a builder
 * (tests/support/acceptance-seeker-agent.mjs) that first hard-codes the visible failing input — a
 * lookup the visible tests and the gaming rule both let through — is refused by the acceptance
 * tests and told only their count and names; its honest fix is approved. In every call it searches
 * every path it can read, and its prompt, for the acceptance files: it never finds their names or
 * their text, and neither do the run's history nor its files in the repository. Acceptance tests
 * that already pass on the starting tree end the run `already_satisfied` before any builder call.
 * One step at a time: tests/unit/acceptance.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { ACCEPTANCE, ALREADY_PASSING, HIDDEN_MARK } from '../support/acceptance-corpus.js';
import { RUNNERS } from '../support/cheat-corpus.js';
import {
  assertBuilt,
  createTestEnv,
  makeWorker,
  ROOT,
  runInput,
  startRun,
  status,
  uniqueId,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

const AGENT = path.join(ROOT, 'tests/support/acceptance-seeker-agent.mjs');
const PYTEST = RUNNERS.find((r) => r.name === 'pytest');
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

function folder(name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  mkdirSync(dir);
  for (const [f, text] of Object.entries(files)) writeFileSync(path.join(dir, f), text);
  return dir;
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

describe.runIf(sandboxPlatform().problem === null)('the Wall: acceptance tests the builder never sees', () => {
  beforeAll(async () => {
    assertBuilt();
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-wall-run-'));
    Object.assign(process.env, {
      VIGIL_HOME: path.join(root, 'vigil-home'),
      VIGIL_SANDBOX: 'auto',
      ACCEPTANCE_MARK: HIDDEN_MARK,
      ACCEPTANCE_NAMES: [...Object.keys(ACCEPTANCE.pytest), ...Object.keys(ALREADY_PASSING)].join(','),
    });
    env = await createTestEnv();
    tq = uniqueId('wall');
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
    'a hard-coded answer is refused by the acceptance tests, the honest fix approved; the builder never finds them',
    async () => {
      const repo = makeRepo('hard-coded');
      const acc = folder('acceptance-hard-coded', ACCEPTANCE.pytest);
      const input = runInput(repo, writeScenario(root, { version: 1, iterations: [] }), {
        agentCommand: [process.execPath, AGENT],
        acceptanceTests: acc,
      });
      const handle = await startRun(env, tq, input, uniqueId('wall-hard-coded'));
      const outcome = await handle.result();
      expect(outcome.status, JSON.stringify(outcome)).toBe('council_approved');
      // No check before the council's minimum iteration (3): the hard-coded tree is judged there,
      // refused by the acceptance tests alone, and the fix that follows is approved.
      const snap = await status(handle);
      expect(outcome.iteration, JSON.stringify(snap.checks)).toBe(4);
      expect(snap.checks?.byCause).toEqual({ acceptance: 1 });
      // What done rested on says the acceptance tests, first among the outcome's notes.
      expect(outcome.notes[0]).toMatch(/^evidence: baseline tests \d+ of \d+ passed .*, acceptance (\d+) of \1 passed, /);
      // The refused claim: green to the visible tests, refused by the acceptance tests, by name only.
      const fourth = readFileSync(path.join(repo, '.vigil', 'prompt-4.md'), 'utf8');
      expect(fourth).toMatch(/acceptance tests, which a person wrote from the PRD and which you cannot see, did not pass/);
      expect(fourth).toMatch(/2 acceptance tests failed/);
      expect(fourth).toMatch(/Failing: test_all_negative, test_mixed/);
      // Everything the builder could read, in both calls: neither the files' names nor their text.
      for (const n of [1, 2, 3, 4]) {
        const seen = JSON.parse(readFileSync(path.join(repo, '.vigil', `seeker-${n}.json`), 'utf8')) as {
          found: string[];
          files: number;
          read: number;
        };
        expect(seen.files, 'the builder searched').toBeGreaterThan(1000);
        // Read whole: everything outside the machine's system folders (the repository, the home, /tmp).
        expect(seen.read, 'the builder read the files outside the system folders').toBeGreaterThan(3);
        expect(seen.found).toEqual([]);
      }
      // Nor the repository's run files, the delivered branch, or the run's history.
      expect(holding(repo)).toEqual([]);
      // The history's payloads are base64: read them decoded, every one.
      const history = decodedPayloads(JSON.stringify(await handle.fetchHistory()));
      expect(history).not.toContain(HIDDEN_MARK);
      expect(history).toMatch(/"sha256"/);
    },
    patient(240_000),
  );

  it(
    'acceptance tests that already pass on the starting tree end the run already_satisfied, without a builder call',
    async () => {
      const repo = makeRepo('already');
      const acc = folder('acceptance-already', ALREADY_PASSING);
      const input = runInput(repo, writeScenario(root, { version: 1, iterations: [] }), {
        agentCommand: [process.execPath, AGENT],
        acceptanceTests: acc,
      });
      const handle = await startRun(env, tq, input, uniqueId('wall-already'));
      const outcome = await handle.result();
      expect(outcome).toMatchObject({ status: 'already_satisfied', exitCode: 0, iteration: 0 });
      expect(outcome.reason).toMatch(/already pass on the tree the run started with \(1 passed/);
      expect(existsSync(path.join(repo, '.vigil', 'seeker-1.json')), 'no builder call').toBe(false);
    },
    patient(120_000),
  );

  it(
    'a folder that cannot be sealed ends the run failed with the reason, before any builder call',
    async () => {
      const repo = makeRepo('unsealable');
      const input = runInput(repo, writeScenario(root, { version: 1, iterations: [] }), {
        agentCommand: [process.execPath, AGENT],
        acceptanceTests: path.join(root, 'no-such-folder'),
      });
      const outcome = await (await startRun(env, tq, input, uniqueId('wall-unsealable'))).result();
      expect(outcome.status).toBe('failed');
      expect(outcome.reason).toMatch(/acceptance tests could not be sealed.*no such folder/);
      expect(existsSync(path.join(repo, '.vigil', 'seeker-1.json'))).toBe(false);
    },
    patient(120_000),
  );
});
