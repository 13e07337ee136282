/**
 * The Wall, one step at a time (activities/acceptance.ts, lib/acceptance-files.ts,
 * rules/acceptance.ts): the folder a person names is refused with the reason when it
 * is missing, inside the repository, holds no test or does not parse; sealed, its files are run on
 * a tree exported from the repository's object store, with real runners (pytest, unittest, node's
 * test runner, vitest) in the sandbox. Against each runner: the buggy tree and a hard-coded answer
 * the visible tests accept are red, with the failing names and never the tests' text; the honest
 * fix is green; a sealed file changed afterwards is refused, not run. Whole runs:
 * tests/workflow/acceptance.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAcceptance, sealAcceptance, sealedDir } from '../../activities/acceptance.js';
import { inspectAcceptanceDir } from '../../lib/acceptance-files.js';
import { acceptanceStatusLine } from '../../cli/status.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import type { AcceptanceResult, SealAcceptanceResult } from '../../schemas/acceptance.js';
import { acceptanceCommandLine, acceptanceFindings, acceptanceVerdict, testName } from '../../rules/acceptance.js';
import { RUNNERS } from '../support/cheat-corpus.js';
import { ACCEPTANCE, HIDDEN_MARK, SNEAKY_HARD_CODE } from '../support/acceptance-corpus.js';
import { git, ROOT } from '../support/harness.js';
import { patient } from '../support/patience.js';

describe('the acceptance decisions', () => {
  it('runs only the acceptance files, in the way each runner takes them', () => {
    expect(acceptanceCommandLine('python3 -m pytest --tb=short -q', 'pytest', ['test_wall.py', 'a b/test_x.py'])).toBe(
      "python3 -m pytest --tb=short -q test_wall.py 'a b/test_x.py'",
    );
    expect(acceptanceCommandLine('npm test --silent', 'node-test', ['wall.test.mjs'])).toBe('npm test --silent -- wall.test.mjs');
    expect(acceptanceCommandLine('python3 -m unittest discover -v', 'unittest', ['wall/test_wall.py'])).toBe(
      'python3 -m unittest -v wall.test_wall',
    );
    expect(acceptanceCommandLine('go test ./...', 'go-test', ['x_test.go'])).toBe('go test ./...');
  });

  it("names a test by its report id's last part", () => {
    expect(testName('test_wall.py::test_wall_mixed')).toBe('test_wall_mixed');
    expect(testName('Wall::negative#2')).toBe('negative');
  });

  it('a skipped acceptance test is never green; the verdict carries names and counts', () => {
    const facts = {
      format: 'junit' as const,
      complete: true,
      total: 2,
      passed: 1,
      failed: 0,
      skipped: 1,
      baselineTotal: null,
      baselinePassed: null,
      missing: [],
      missingCount: 0,
      failing: [],
      notPassed: [],
      notPassedCount: 0,
    };
    const v = acceptanceVerdict({ verdict: 'pass', reason: 'pytest: 1 passed, 1 skipped', facts });
    expect(v.verdict).toBe('fail');
    expect(v.reason).toMatch(/1 of 2 acceptance tests were skipped/);
    const red = acceptanceVerdict({ verdict: 'fail', reason: 'x', facts: { ...facts, skipped: 0, failed: 1, failing: ['t.py::test_a'] } });
    expect(red).toMatchObject({ verdict: 'fail', failed: 1, failing: ['test_a'] });
  });

  it("the builder's findings hold the count and the names", () => {
    const text = acceptanceFindings(
      { verdict: 'fail', reason: 'acceptance: pytest: 2 failed', failed: 2, failing: ['test_a', 'test_b'] },
      3,
    );
    expect(text).toMatch(/2 acceptance tests failed/);
    expect(text).toMatch(/Failing: test_a, test_b/);
    expect(text).not.toMatch(/pytest: 2 failed/);
  });
});

describe('the acceptance folder', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-acceptance-dir-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const folder = (name: string, files: Record<string, string>): string => {
    const dir = path.join(root, name);
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      writeFileSync(path.join(dir, f), text);
    }
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  it('refuses a folder that is missing, holds no test, or does not parse, saying why', () => {
    const miss = inspectAcceptanceDir(path.join(root, 'nope'), null);
    expect(miss).toEqual({ ok: false, reason: expect.stringMatching(/no such folder/) });
    const none = inspectAcceptanceDir(folder('none', { 'helper.py': 'X = 1\n', 'notes.md': '# n\n' }), null);
    expect(none).toEqual({ ok: false, reason: expect.stringMatching(/holds no test file/) });
    const py = inspectAcceptanceDir(folder('py', { 'test_bad.py': 'def test_x(:\n    pass\n' }), null);
    expect(py).toEqual({ ok: false, reason: expect.stringMatching(/test_bad\.py does not parse: SyntaxError/) });
    const js = inspectAcceptanceDir(folder('js', { 'bad.test.mjs': "import x from 'y';\nconst = 3;\n" }), null);
    expect(js).toEqual({ ok: false, reason: expect.stringMatching(/bad\.test\.mjs does not parse: SyntaxError/) });
    const link = folder('link', { 'test_ok.py': 'def test_x():\n    pass\n' });
    symlinkSync('/etc/hostname', path.join(link, 'test_link.py'));
    expect(inspectAcceptanceDir(link, null)).toEqual({ ok: false, reason: expect.stringMatching(/test_link\.py is a symbolic link/) });
  });

  it('refuses a folder inside the repository, where the agents would read it', () => {
    const repo = folder('repo', { 'acc/test_a.py': 'def test_a():\n    pass\n' });
    const r = inspectAcceptanceDir(path.join(repo, 'acc'), repo);
    expect(r).toEqual({ ok: false, reason: expect.stringMatching(/lies inside the repository/) });
  });

  it('an honest folder: every file with its sha256, no bytecode written', () => {
    const dir = folder('ok', { 'test_a.py': 'def test_a():\n    pass\n', 'data/cases.json': '[1]\n' });
    const r = inspectAcceptanceDir(dir, null);
    expect(r.ok && r.files.map((f) => f.path)).toEqual(['data/cases.json', 'test_a.py']);
    expect(r.ok && r.files.every((f) => /^[0-9a-f]{64}$/.test(f.sha256))).toBe(true);
    expect(inspectAcceptanceDir(dir, null)).toEqual(r);
  });
});

describe.runIf(sandboxPlatform().problem === null)('acceptance tests on a tree, with real runners in the sandbox', () => {
  const saved = { ...process.env };
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-acceptance-run-'));
    process.env.VIGIL_HOME = path.join(root, 'vigil-home');
    process.env.VIGIL_SANDBOX = 'auto';
  });
  afterAll(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(root, { recursive: true, force: true });
  });

  const act = <R>(fn: (input: never) => Promise<R>, input: unknown): Promise<R> =>
    new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') }).run(fn, input as never) as Promise<R>;
  const write = (dir: string, files: Record<string, string>): void => {
    for (const [f, text] of Object.entries(files)) writeFileSync(path.join(dir, f), text);
  };
  /** The working tree as a tree object of the repository (what an inspection records). */
  const tree = (repo: string): string => {
    git(repo, 'add', '-A');
    return execFileSync('git', ['write-tree'], { cwd: repo, encoding: 'utf8' }).trim();
  };

  for (const r of RUNNERS) {
    it(
      `${r.name}: red on the bug and on a hard-coded answer, green on the fix, refused once a sealed file changed`,
      async () => {
        const repo = path.join(root, `repo-${r.name}`);
        mkdirSync(repo);
        write(repo, r.files);
        // A project's own installed vitest: linked, as npm would have put it (the run links it read-only).
        if (r.name === 'vitest') symlinkSync(realpathSync(path.join(ROOT, 'node_modules')), path.join(repo, 'node_modules'));
        git(repo, 'init', '-q');
        const acc = path.join(root, `acceptance-${r.name}`);
        mkdirSync(acc);
        write(acc, ACCEPTANCE[r.name]);
        const runId = `acceptance-${r.name}`;
        const seal = await act<SealAcceptanceResult>(sealAcceptance, { runId, sourceDir: acc, repoPath: repo });
        expect(seal.ok, seal.reason).toBe(true);
        let iteration = 0;
        const run = (treeHash: string): Promise<AcceptanceResult> =>
          act<AcceptanceResult>(runAcceptance, {
            runId,
            repoPath: repo,
            treeHash,
            files: seal.files,
            command: r.name === 'vitest' ? 'node_modules/.bin/vitest run' : '',
            iteration: (iteration += 1),
            timeoutSeconds: 120,
          });
        const base = await run(tree(repo));
        expect(base.verdict, base.reason).toBe('fail');
        expect(base.failing.sort(), `${base.reason} ${base.command}`).toEqual(
          ['all_negative', 'mixed'].map((n) => (r.name.startsWith('node') || r.name === 'vitest' ? n : `test_${n}`)),
        );
        expect(base.sandbox?.applied).toBe(true);
        write(repo, SNEAKY_HARD_CODE[r.name]);
        const visible = execFileSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' });
        expect(visible).not.toMatch(/wall|accept/);
        const cheat = await run(tree(repo));
        expect(cheat.verdict, cheat.reason).toBe('fail');
        expect(cheat.failed).toBe(2);
        write(repo, r.fix);
        const fixed = await run(tree(repo));
        expect(fixed.verdict, fixed.reason).toBe('pass');
        expect(fixed.passed).toBe(2);
        for (const res of [base, cheat, fixed]) expect(JSON.stringify(res)).not.toContain(HIDDEN_MARK);
        // The scratch tree is gone; the repository never held the acceptance files.
        expect(execFileSync('git', ['ls-files', '-o', '-c'], { cwd: repo, encoding: 'utf8' })).not.toMatch(/wall/);
        // A sealed file changed after the start is refused, not run.
        const first = seal.files[0]?.path ?? '';
        writeFileSync(path.join(sealedDir(runId), first), 'def test_anything():\n    pass\n');
        const tampered = await run(tree(repo));
        expect(tampered).toMatchObject({ verdict: 'refused', durationMs: 0 });
        expect(tampered.reason).toMatch(/no longer have the digest recorded at the start/);
      },
      patient(120_000),
    );
  }
});

describe("vigil status's acceptance line", () => {
  const last = {
    treeHash: 'abc',
    iteration: 2,
    verdict: 'fail' as const,
    reason: 'x',
    passed: 1,
    failed: 2,
    failing: ['test_a', 'test_b'],
  };
  it('says how many files were sealed, where they last ran, and what failed', () => {
    expect(acceptanceStatusLine({ files: 3, last: null })).toBe('3 sealed file(s); not run yet');
    expect(acceptanceStatusLine({ files: 3, last })).toBe('3 sealed file(s); iteration 2: fail (1 of 3 passed); failing: test_a, test_b');
    expect(acceptanceStatusLine({ files: 1, last: { ...last, iteration: 0, verdict: 'pass', passed: 2, failed: 0, failing: [] } })).toBe(
      '1 sealed file(s); on the starting tree: pass (2 of 2 passed)',
    );
    // The acceptance role's tests that passed before any work: not used, and status says why.
    const drafted = { dir: '/v/acc', shown: true, attempt: 2, dropped: 'they passed' };
    expect(
      acceptanceStatusLine({ files: 1, last: { ...last, iteration: 0, verdict: 'pass', passed: 1, failed: 0, failing: [] }, drafted }),
    ).toBe(
      '1 sealed file(s) written by the acceptance agent from the PRD (/v/acc); not used: they passed on the starting tree ' +
        'before any work, so they cannot tell when the PRD is done',
    );
  });
});
