/**
 * `vigil try` as a new user runs it on their own repository, before any LLM: real `node
 * bin/vigil.js try` processes, the default knobs (gates, review, checklist, council, the sandbox
 * on), on three kinds of repository — a Node package with a test script (the command starting its
 * own dev server and event store, as on a fresh machine), a Python package with pytest and an
 * almost empty repository (on the suite's running server). Each must end approved, print every
 * step and the next ones, deliver on `vigil/<run id>` only, and leave the person's branch, index
 * and files exactly as they were (checked here independently of what the command says, with an
 * uncommitted and a staged change in the checkout). Bad input is refused before anything starts.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { freePort } from '../../workers/dev-server.js';
import { assertBuilt, git, makeRepo, temporalAddress, uniqueId } from '../support/harness.js';
import { runVigil, show, waitUntil, type CliResult } from './cli-helpers.js';
import { patient } from '../support/patience.js';

beforeAll(() => assertBuilt());

/** Everything a run could disturb in the person's checkout: HEAD, branch, index, status and every file's bytes. */
function snapshot(repo: string): Record<string, string> {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (dir === repo && name === '.git') continue;
      const abs = path.join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else files.push(`${path.relative(repo, abs)} ${createHash('sha256').update(readFileSync(abs)).digest('hex')}`);
    }
  };
  walk(repo);
  return {
    head: git(repo, 'rev-parse', 'HEAD'),
    branch: git(repo, 'symbolic-ref', 'HEAD'),
    index: git(repo, 'ls-files', '--stage'),
    status: git(repo, '--no-optional-locks', 'status', '--porcelain', '--untracked-files=all'),
    files: files.join('\n'),
  };
}

/** An uncommitted edit and a staged new file: the rehearsal must leave both as they are. */
function dirty(repo: string): void {
  writeFileSync(path.join(repo, 'NOTES.txt'), 'work in progress, not committed\n');
  writeFileSync(path.join(repo, 'staged.txt'), 'staged, not committed\n');
  git(repo, 'add', 'staged.txt');
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    VIGIL_HOME: mkdtempSync(path.join(os.tmpdir(), 'vigil-try-home-')),
    TEMPORAL_ADDRESS: temporalAddress(),
    VIGIL_TASK_QUEUE: uniqueId('vigil-try'),
    ...extra,
  };
}

interface GateVerdict {
  gate: string;
  verdict: string;
  reason: string;
}

/**
 * The gates of a rehearsal's pass `n`, from the pass's report in its worktree: what is printed follows
 * the latest pass, and may skip one under load.
 */
function gatePass(e: Record<string, string>, runId: string, n: number): GateVerdict[] {
  const file = path.join(
    e.VIGIL_HOME as string,
    'try',
    runId,
    'repo',
    '.vigil',
    'runs',
    runId,
    'gates',
    `pass-${String(n).padStart(4, '0')}.json`,
  );
  return (JSON.parse(readFileSync(file, 'utf8')) as { gates: GateVerdict[] }).gates;
}

const runIdOf = (r: CliResult): string => {
  const m = /Started run (vigil-try-\S+):/.exec(r.stdout);
  if (!m) throw new Error(`no run line in:\n${show(r)}`);
  return m[1] as string;
};

/** What every approved rehearsal prints and leaves, whatever the repository. */
function expectApproved(r: CliResult, repo: string, before: Record<string, string>): string {
  expect(r.code, show(r)).toBe(0);
  const out = r.stdout;
  expect(out).toMatch(/PRD checklist: 5 item\(s\), 1 held out from the agent/);
  expect(out).toMatch(/iteration 1 · ACT .*changed/);
  expect(out).toMatch(
    new RegExp(
      [
        /quality gates on iteration 2: ✓ static analysis · ✓ secret scan · [✓–] build · . tests · /.source,
        /✓ mock integrity · ✓ test mutation · .*✓ doc coverage/.source,
      ].join(''),
    ),
  );
  expect(out).toMatch(
    /code review 1 \(iteration 3\): PASS · requirements-verifier PASS, architecture-strategist PASS, maintainer-mergeability PASS.* · devil's advocate PASS/,
  );
  expect(out).toMatch(/council round 1 \(iteration 3, [a-z ]+\): APPROVED · 3 of 3 approve, 2 needed · devil's advocate confirmed/);
  expect(out).toMatch(/finished: council_approved \(exit 0\)/);
  expect(out.match(/finished: /g), 'the outcome said once').toHaveLength(1);
  expect(out).toContain('The rehearsal was approved after 3 iteration(s)');
  expect(out).not.toContain('what refused it');
  expect(out).toMatch(
    sandboxPlatform().problem === null ? /Agents: sandbox=auto: bubblewrap [\d.]+; repository / : /Agents: sandbox=auto: NOT isolated — /,
  );
  // The sandbox shows the agent its scenario (in the worktree's .vigil/): nothing it was given is hidden.
  expect(out).not.toMatch(/^Agents: .*not shown/m);
  expect(out).toContain('Your checkout is as it was');
  // The next steps: a real agent in the scripted one's place.
  expect(out).toContain('vigil doctor --provider claude');
  expect(out).toContain('vigil doctor --agent-command "my-agent --flag"');
  expect(out).toMatch(new RegExp(`vigil start \\S+ --repo ${repo} --provider claude`));
  const runId = runIdOf(r);
  expect(out).toContain(`git -C ${repo} branch -D vigil/${runId}`);

  // Untouched, checked independently: the same HEAD, branch, index, status and bytes.
  expect(snapshot(repo)).toEqual(before);
  // Delivered as any run: one commit on vigil/<run id>, on top of the person's HEAD.
  expect(git(repo, 'rev-parse', `vigil/${runId}^`)).toBe(before.head);
  expect(git(repo, 'show', `vigil/${runId}:VIGIL_TRY.md`)).toContain(`It lives on the branch \`vigil/${runId}\` only`);
  return runId;
}

describe('vigil try on three kinds of repository', () => {
  it(
    'a Node package with a test script, with a PRD of its own: starts its own server and store, ends approved',
    async () => {
      const repo = makeRepo({
        files: {
          'README.md': '# app\n',
          // Publishable as npm reads it (a name, a version, no "private"): the gate says so, and the rehearsal's Markdown passes it.
          'package.json': JSON.stringify({ name: 'app', version: '1.0.0', type: 'module', scripts: { test: 'node --test' } }, null, 2),
          'src/sum.js': '/** The sum of two numbers. */\nexport function sum(a, b) {\n  return a + b;\n}\n',
          'test/sum.test.js':
            "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { sum } from " +
            "'../src/sum.js';\n\ntest('sums', () => assert.equal(sum(2, 3), 5));\n",
        },
      });
      const prd = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-try-prd-')), 'PRD.md');
      writeFileSync(prd, '# Sum helper\n\n1. src/sum.js exports sum(a, b).\n');
      dirty(repo);
      const before = snapshot(repo);
      // A port nothing answers at: the command starts the dev server (and the embedded event store) itself.
      const e = env({ TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
      const r = await runVigil(['try', prd, '--repo', repo, '--headless'], e, { timeoutMs: 240_000 });
      expect(r.stdout).toMatch(/Temporal dev server .* is up/);
      expect(r.stdout).toMatch(/event store {2}: 127\.0\.0\.1:\d+\/vigil_events \(embedded Postgres/);
      expect(r.stdout).toContain(`yours, ${prd}, reads fine`);
      expect(r.stdout).toContain('your 2 uncommitted change(s) are not in it');
      expect(r.stdout).toContain(
        "knobs      : those `vigil start` would use here, but maxIterations=8, baseWaitSeconds=2, backoffJitterSeconds=0 (vigil try's; --set changes them)",
      );
      expect(r.stdout).not.toContain('not used   :');
      const runId = expectApproved(r, repo, before);
      // The repository's own tests, green in the sandbox (the last pass before the claim is always printed).
      expect(r.stdout).toMatch(/quality gates on iteration 2: .*✓ tests/);
      expect(r.stdout).toContain(`vigil start ${prd} --repo ${repo} --provider claude`);
      expect(git(repo, 'diff', '--name-only', before.head as string, `vigil/${runId}`)).toBe('VIGIL_TRY.md');
      expect(r.stdout).toContain(`Its timeline: vigil report ${runId}`);
    },
    patient(300_000),
  );

  it('a Python package with pytest, without a PRD: a sample PRD marked as such, and how to write one', async () => {
    const repo = makeRepo({
      files: {
        'README.md': '# calc\n',
        'pyproject.toml': '[project]\nname = "calc"\nversion = "0.1.0"\n',
        'calc/__init__.py': '"""A calculator."""\n\n\ndef add(a, b):\n    """The sum of a and b."""\n    return a + b\n',
        'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
      },
    });
    dirty(repo);
    const before = snapshot(repo);
    // The event store is started (and checked) by the first test; here it would only add its start-up time.
    const e = env();
    const r = await runVigil(['try', '--repo', repo, '--no-store'], e, { timeoutMs: 180_000 });
    expect(r.stdout).toContain('using the Temporal server already answering');
    expect(r.stdout).toContain('No PRD given: this rehearsal runs on a SAMPLE PRD that vigil try writes');
    expect(r.stdout).toContain('a SAMPLE PRD written by vigil try');
    const runId = expectApproved(r, repo, before);
    expect(r.stdout).toMatch(/quality gates on iteration 2: .*✓ tests/);
    expect(r.stdout).toContain(`vigil start PRD.md --repo ${repo} --provider claude`);
    expect(git(repo, 'diff', '--name-only', before.head as string, `vigil/${runId}`)).toBe('VIGIL_TRY.md');
  });

  it('an almost empty repository: no README (the scripted agent writes one), no tests', async () => {
    const repo = makeRepo({ files: { '.gitignore': 'node_modules/\n' } });
    const before = snapshot(repo);
    const e = env();
    const r = await runVigil(['try', '--repo', repo, '--no-store'], e, { timeoutMs: 180_000 });
    expect(r.stdout).toContain('no README here: the scripted agent writes one');
    const runId = expectApproved(r, repo, before);
    // The documentation gate judges the change: a README the repository never had is listed as
    // already in the base tree, not held against the agent; the second tree has the README.
    const pass = (n: number): GateVerdict[] => gatePass(e, runId, n);
    expect(pass(1).find((g) => g.gate === 'doc_coverage')).toMatchObject({
      verdict: 'pass',
      reason: expect.stringMatching(/^no README; .*; 1 already in the base tree \(advisory\)$/),
    });
    expect(r.stdout).toMatch(/quality gates on iteration 2: .*\? tests/);
    expect(pass(2).find((g) => g.gate === 'doc_coverage')).toMatchObject({ verdict: 'pass' });
    expect(git(repo, 'diff', '--name-only', before.head as string, `vigil/${runId}`).split('\n')).toEqual(['README.md', 'VIGIL_TRY.md']);
  });
});

describe('vigil try on a repository that refuses it', () => {
  /** A Node package whose own test fails: no rehearsal can be approved on it. */
  const failingRepo = (): string =>
    makeRepo({
      files: {
        'README.md': '# app\n',
        'package.json': JSON.stringify({ name: 'app', private: true, type: 'module', scripts: { test: 'node --test' } }, null, 2),
        'src/sum.js': '/** The sum of two numbers (it is not). */\nexport function sum(a, b) {\n  return a - b;\n}\n',
        'test/sum.test.js':
          "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { sum } from " +
          "'../src/sum.js';\n\ntest('sums', () => assert.equal(sum(2, 3), 5));\n",
      },
    });

  it('a Node package whose own test fails: not approved, says what refused it and what to do, exit non-zero', async () => {
    const repo = failingRepo();
    const before = snapshot(repo);
    // The agent a person configured (here in the environment) is replaced by the scripted one, and said so;
    // a knob set on the command line is taken, and vigil try's own value for it is not.
    const e = env({ VIGIL_PROVIDER: 'claude' });
    const r = await runVigil(['try', '--repo', repo, '--no-store', '--set', 'maxIterations=5'], e, { timeoutMs: 180_000 });
    expect(r.code, show(r)).toBe(20);
    const out = r.stdout;
    expect(out).toContain(
      "knobs      : those `vigil start` would use here, but baseWaitSeconds=2, backoffJitterSeconds=0 (vigil try's; --set changes them)",
    );
    expect(out).toContain("not used   : provider claude (VIGIL_PROVIDER): the rehearsal's agent is the scripted one");
    expect(out).toMatch(
      /quality gates on iteration \d: .*✗ tests · .* — tests: (?:full suite \([^)]*\): )?node-test: 1 of 1 baseline tests did not pass/,
    );
    expect(out).toMatch(
      new RegExp(
        [
          /completion at iteration \d refused before the council was asked \(tests\): tests: /.source,
          /(?:full suite \([^)]*\): )?node-test: 1 of 1 baseline tests did not pass .*: test\/sum\.test\.js::sums/.source,
        ].join(''),
      ),
    );
    expect(out).not.toMatch(/council round \d+ \([^)]*\): APPROVED/);
    expect(out).toContain(
      'The rehearsal ended without approval after 5 iteration(s): max_iterations_reached — iteration cap reached: 5 of 5',
    );
    expect(out).toContain('The scripted agent did its part; what refused it is your repository');
    expect(out).toContain('`vigil try --set key=value`');
    const runId = runIdOf(r);
    expect(out).toContain(`Nothing was delivered on vigil/${runId}.`);
    expect(out).toContain(`worktree remove --force `);
    expect(out).not.toContain('branch -D');
    expect(out).toContain('Your checkout is as it was');
    expect(snapshot(repo)).toEqual(before);
    expect(git(repo, 'branch', '--list', `vigil/${runId}`)).toBe('');
  });
  it('a run that pauses for a person is stopped, with why, since a rehearsal waits for nobody; exit non-zero', async () => {
    const repo = failingRepo();
    const before = snapshot(repo);
    const e = env();
    // A long rehearsal (its claims refused until iteration 30), paused by a person from another terminal as soon as it started.
    const running = runVigil(['try', '--repo', repo, '--no-store', '--set', 'maxIterations=30'], e, { timeoutMs: 180_000 });
    const runId = await waitUntil('the rehearsal to start', () => readdirSync(path.join(e.VIGIL_HOME as string, 'try'))[0], 60_000);
    const paused = await waitUntil(
      'the pause to be taken',
      async () => {
        const p = await runVigil(['pause', runId, '--reason', 'looking at it', '--by', 'tester'], e);
        return p.code === 0 ? p : null;
      },
      60_000,
      500,
    );
    expect(paused.code).toBe(0);
    const r = await running;
    expect(r.code, show(r)).toBe(1);
    const out = r.stdout;
    expect(out).toMatch(/The run paused for a person at iteration \d+: paused by tester: looking at it/);
    expect(out).toContain('A real run would wait there for you (`vigil resume` once it is mended); vigil try ended it');
    expect(out).toMatch(/finished: stopped \(exit 0\) — .*vigil try ends the rehearsal: the run paused by tester: looking at it/);
    expect(out).not.toContain('max_iterations_reached');
    expect(out).toContain('The scripted agent did its part; what refused it is your repository');
    expect(out).toContain(`Nothing was delivered on vigil/${runId}.`);
    expect(snapshot(repo)).toEqual(before);
  });
});

describe('vigil try refuses bad input before it starts anything', () => {
  it('a folder that is not a git repository, a repository without a commit, a PRD that is not there, a knob that is not one', async () => {
    const e = env({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    const plain = mkdtempSync(path.join(os.tmpdir(), 'vigil-try-plain-'));
    const r1 = await runVigil(['try', '--repo', plain], e);
    expect(r1.code, show(r1)).toBe(2);
    expect(r1.stderr).toContain('is not a git working tree; run `git init` there first');
    const r2 = await runVigil(['try', '--repo', makeRepo({ commit: false })], e);
    expect(r2.code, show(r2)).toBe(2);
    expect(r2.stderr).toMatch(/has no commit yet: .*git commit --allow-empty -m start/);
    const r3 = await runVigil(['try', path.join(plain, 'PRD.md'), '--repo', makeRepo()], e);
    expect(r3.code, show(r3)).toBe(2);
    expect(r3.stderr).toContain('PRD file not found');
    const r4 = await runVigil(['try', '--repo', makeRepo(), '--set', 'maxIteration=3'], e);
    expect(r4.code, show(r4)).toBe(2);
    expect(r4.stderr).toContain('maxIteration');
    expect(readdirSync(e.VIGIL_HOME as string)).toEqual([]);
  });
});
