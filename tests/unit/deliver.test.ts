/**
 * Delivery of a done run against real git repositories: the work is committed on `vigil/<run>`
 * from the working tree as it is (untracked files included, `.vigil/` and ignored files left out),
 * while the user's branch, index and working tree stay exactly as they were; a retried delivery
 * finds its own commit; a tree equal to HEAD delivers nothing. And the pure rules: who delivers,
 * the commit message.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverRun, openPullRequest } from '../../activities/deliver.js';
import { ghCheck } from '../../cli/doctor.js';
import { delivers, deliveryMessage, opensPullRequest, pullRequestTitle, runReportMarkdown, runBranch } from '../../rules/delivery.js';
import { ghReady } from '../../lib/gh.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Person',
  GIT_AUTHOR_EMAIL: 'p@example.invalid',
  GIT_COMMITTER_NAME: 'Person',
  GIT_COMMITTER_EMAIL: 'p@example.invalid',
};
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'commit.gpgsign=false', ...args], { cwd, env: ENV, encoding: 'utf8' }).trim();

function repo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-deliver-'));
  dirs.push(dir);
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'README.md'), '# sample\n');
  writeFileSync(path.join(dir, '.gitignore'), 'build/\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

describe('deliverRun', () => {
  it('commits the work on the run branch and leaves the branch, index and working tree alone', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(path.join(dir, 'README.md'), '# sample\n\nNow with docs.\n');
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src/feature.js'), 'export const feature = 1;\n');
    git(dir, 'add', 'README.md'); // something the person staged
    mkdirSync(path.join(dir, '.vigil/runs'), { recursive: true });
    writeFileSync(path.join(dir, '.vigil/runs/log.txt'), 'run log\n');
    mkdirSync(path.join(dir, 'build'));
    writeFileSync(path.join(dir, 'build/out.js'), 'ignored\n');
    const statusBefore = git(dir, 'status', '--porcelain');

    const d = await deliverRun({ repoPath: dir, runId: 'run-42', message: 'Feature\n\nDelivered by Vigil.\n' });
    expect(d).toEqual({ branch: 'vigil/run-42', commit: git(dir, 'rev-parse', 'vigil/run-42'), files: 2, skipped: null });
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(dir, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(git(dir, 'status', '--porcelain')).toBe(statusBefore);
    expect(git(dir, 'log', '-1', '--format=%P%n%an%n%B', 'vigil/run-42')).toBe(`${head}\nVigil\nFeature\n\nDelivered by Vigil.`);
    expect(git(dir, 'ls-tree', '-r', '--name-only', 'vigil/run-42').split('\n')).toEqual(['.gitignore', 'README.md', 'src/feature.js']);
    expect(git(dir, 'show', 'vigil/run-42:README.md')).toBe('# sample\n\nNow with docs.');

    // A retried delivery finds its own commit.
    expect(await deliverRun({ repoPath: dir, runId: 'run-42', message: 'again\n' })).toEqual(d);
  });

  it('onBranch (a followed pull request): the next delivery goes on top of the run branch, a fast-forward; without it, on HEAD', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(path.join(dir, 'a.txt'), '1\n');
    const first = await deliverRun({ repoPath: dir, runId: 'r', message: 'first\n' });
    writeFileSync(path.join(dir, 'a.txt'), '1\nfixed\n');
    const next = await deliverRun({ repoPath: dir, runId: 'r', message: 'the fix\n', onBranch: true });
    expect(next.branch).toBe('vigil/r');
    expect(git(dir, 'rev-parse', 'vigil/r^')).toBe(first.commit);
    expect(git(dir, 'show', 'vigil/r:a.txt')).toBe('1\nfixed');
    // Retried, it finds its own commit; the person's branch never moved.
    expect(await deliverRun({ repoPath: dir, runId: 'r', message: 'the fix\n', onBranch: true })).toEqual(next);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    // Without onBranch a new tree is committed on HEAD, as a run's first delivery is.
    writeFileSync(path.join(dir, 'a.txt'), '2\n');
    await deliverRun({ repoPath: dir, runId: 'r', message: 'again\n' });
    expect(git(dir, 'rev-parse', 'vigil/r^')).toBe(head);
  });

  it('delivers nothing when the tree is HEAD’s', async () => {
    const dir = repo();
    expect(await deliverRun({ repoPath: dir, runId: 'r', message: 'm\n' })).toEqual({
      branch: null,
      commit: null,
      files: 0,
      skipped: 'the working tree is the same as HEAD: nothing to deliver',
    });
    expect(git(dir, 'branch', '--list', 'vigil/*')).toBe('');
  });

  it('names the branch after the run, as git allows', () => {
    expect(runBranch('demo-2026')).toBe('vigil/demo-2026');
    expect(runBranch('a b..c~^:d.lock')).toBe('vigil/a-b.c---d-lock');
    expect(runBranch('..')).toBe('vigil/run');
  });
});

describe('who delivers, and the message', () => {
  it('delivers only a run that ended done, unless delivery is off', () => {
    expect(delivers('council_approved', 'branch')).toBe(true);
    expect(delivers('completion_promise_fulfilled', 'branch')).toBe(true);
    expect(delivers('force_stopped', 'branch')).toBe(false);
    expect(delivers('stopped', 'branch')).toBe(false);
    expect(delivers('max_iterations_reached', 'branch')).toBe(false);
    expect(delivers('council_approved', 'none')).toBe(false);
    expect(delivers('council_approved', 'pr')).toBe(true);
    expect(delivers('force_stopped', 'pr')).toBe(false);
  });

  it('asks for a pull request only with deliver=pr and a delivered branch', () => {
    expect(opensPullRequest('pr', 'vigil/r')).toBe(true);
    expect(opensPullRequest('pr', null)).toBe(false);
    expect(opensPullRequest('branch', 'vigil/r')).toBe(false);
    expect(pullRequestTitle('  Slugify\n  helper ')).toBe('Slugify helper');
    expect(pullRequestTitle('')).toBe('Vigil run');
  });

  it('reports the run in Markdown: outcome, council, gates, checklist, notes, spend', () => {
    const md = runReportMarkdown({
      prdTitle: 'Slugify',
      workflowId: 'run-7',
      status: 'council_approved',
      reason: 'council approved at iteration 4',
      iterations: 4,
      spendUsd: 0.5,
      calls: 3,
      notes: ['delivered on branch vigil/run-7'],
      council: { result: 'APPROVED', approve: 3, reject: 0, size: 3 },
      gates: [{ gate: 'tests', verdict: 'pass', reason: '' }],
      checklist: [
        { id: 'REQ-1', title: 'slugify exists', status: 'passing' },
        { id: 'REQ-2', title: 'docs', status: 'unverified' },
      ],
    });
    expect(md).toBe(
      '# Slugify\n\nVigil run `run-7`: **council_approved** after 4 iteration(s).\n\ncouncil approved at iteration 4\n\n## ' +
        'Judgement\n\n- council: APPROVED (3 approve, 0 reject of 3)\n- gate tests: pass\n\n## Checklist\n\n- [x] REQ-1: slugify ' +
        'exists (passing)\n- [ ] REQ-2: docs (unverified)\n\n## Notes\n\n- delivered on branch vigil/run-7\n\nSpend: $0.50 over ' +
        '3 priced agent call(s). The full report: `vigil report run-7`.\n',
    );
  });

  it('says what the run did in the commit message', () => {
    const m = deliveryMessage({
      prdTitle: '  Slugify   helper ',
      workflowId: 'run-7',
      status: 'council_approved',
      reason: 'council approved at iteration 4 (round 2, 3 of 3)',
      iterations: 4,
      spendUsd: 1.234,
      calls: 9,
      notes: ['completion not independently verified: no test command'],
    });
    expect(m).toBe(
      'Slugify helper\n\nDelivered by Vigil run run-7: council_approved after 4 iteration(s).\n\ncouncil approved at iteration ' +
        '4 (round 2, 3 of 3)\n\n- completion not independently verified: no test command\n\nSpend: $1.23 over 9 priced agent ' +
        'call(s).\nReport: vigil report run-7\n',
    );
  });

  it("never prices the calls that reported no cost at $0.00: a command agent's run says its spend is not known", () => {
    const base = {
      prdTitle: 'Slugify',
      workflowId: 'run-8',
      status: 'council_approved' as const,
      reason: 'approved',
      iterations: 6,
      notes: [],
    };
    expect(deliveryMessage({ ...base, spendUsd: 0, calls: 6, unpricedCalls: 6 })).toContain(
      'Spend: not known: none of the 6 agent call(s) reported its cost.\n',
    );
    expect(deliveryMessage({ ...base, spendUsd: 0.4, calls: 6, unpricedCalls: 2 })).toContain(
      'Spend: $0.40 over 4 priced agent call(s); 2 more reported no cost.\n',
    );
  });
});

describe('delivery on the current branch (opt-in)', () => {
  it('commits the work on the current branch and sets the index to it; a retry finds its commit', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(path.join(dir, 'README.md'), '# sample\n\nMore.\n');
    writeFileSync(path.join(dir, 'new.txt'), 'new\n');
    mkdirSync(path.join(dir, '.vigil/runs'), { recursive: true });
    writeFileSync(path.join(dir, '.vigil/runs/log.txt'), 'run log\n');
    const d = await deliverRun({ repoPath: dir, runId: 'run-9', message: 'Feature\n\nDelivered by Vigil.\n', toCurrent: true });
    const now = git(dir, 'rev-parse', 'HEAD');
    expect(d).toEqual({ branch: 'main', commit: now, files: 2, skipped: null });
    expect(git(dir, 'log', '-1', '--format=%P%n%an%n%B', 'main')).toBe(`${head}\nVigil\nFeature\n\nDelivered by Vigil.`);
    // The index and the working tree are the commit's; .vigil/ stays out of it.
    expect(git(dir, 'status', '--porcelain', '--', '.', ':(exclude).vigil')).toBe('');
    expect(git(dir, 'ls-tree', '-r', '--name-only', 'HEAD').split('\n')).toEqual(['.gitignore', 'README.md', 'new.txt']);
    expect(git(dir, 'branch', '--list', 'vigil/*')).toBe('');
    expect(await deliverRun({ repoPath: dir, runId: 'run-9', message: 'Feature\n\nDelivered by Vigil.\n', toCurrent: true })).toEqual(d);
    expect(git(dir, 'rev-list', '--count', 'HEAD')).toBe('2');
  });
});

describe('openPullRequest with gh', () => {
  /** A fake gh on PATH: records each call's argv (one JSON line) and answers as a logged-in gh would. */
  function fakeGh(opts: { auth?: boolean; existing?: string } = {}): { env: NodeJS.ProcessEnv; calls: () => string[][]; bin: string } {
    const bin = mkdtempSync(path.join(os.tmpdir(), 'vigil-gh-'));
    dirs.push(bin);
    const log = path.join(bin, 'calls.jsonl');
    writeFileSync(
      path.join(bin, 'gh'),
      `#!/usr/bin/env node
const fs = require('node:fs');
const a = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(a) + '\\n');
if (a[0] === '--version') { console.log('gh version 2.0.0-fake'); process.exit(0); }
if (a[0] === 'auth') {
  if (${opts.auth !== false}) { console.log('Logged in to github.com'); process.exit(0); }
  console.error('You are not logged into any GitHub hosts.'); process.exit(1);
}
if (a[0] === 'pr' && a[1] === 'list') { console.log(${JSON.stringify(opts.existing ?? '')}); process.exit(0); }
if (a[0] === 'pr' && a[1] === 'create') { console.log('https://github.com/o/r/pull/7'); process.exit(0); }
process.exit(2);
`,
    );
    chmodSync(path.join(bin, 'gh'), 0o755);
    const calls = (): string[][] =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as string[])
        : [];
    return { env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` }, calls, bin };
  }

  function withRemote(): { dir: string; remote: string } {
    const dir = repo();
    const remote = mkdtempSync(path.join(os.tmpdir(), 'vigil-remote-'));
    dirs.push(remote);
    git(remote, 'init', '-q', '--bare');
    git(dir, 'remote', 'add', 'origin', remote);
    writeFileSync(path.join(dir, 'feature.txt'), 'done\n');
    return { dir, remote };
  }

  const withPath = async <T>(env: NodeJS.ProcessEnv, fn: () => Promise<T>): Promise<T> => {
    const before = process.env.PATH;
    process.env.PATH = env.PATH;
    try {
      return await fn();
    } finally {
      process.env.PATH = before;
    }
  };

  it('pushes the run branch and opens the pull request with its report as the body', async () => {
    const { dir, remote } = withRemote();
    const d = await deliverRun({ repoPath: dir, runId: 'run-pr', message: 'Feature\n' });
    const gh = fakeGh();
    const r = await withPath(gh.env, () =>
      openPullRequest({ repoPath: dir, runId: 'run-pr', branch: d.branch ?? '', title: 'Slugify helper', body: '# report\n' }),
    );
    const bodyPath = path.join(dir, '.vigil/runs/run-pr/pull-request.md');
    expect(r).toEqual({ url: 'https://github.com/o/r/pull/7', skipped: null, bodyPath, base: 'main' });
    expect(readFileSync(bodyPath, 'utf8')).toBe('# report\n');
    expect(gh.calls().at(-1)).toEqual([
      'pr',
      'create',
      '--head',
      'vigil/run-pr',
      '--base',
      'main',
      '--title',
      'Slugify helper',
      '--body-file',
      bodyPath,
    ]);
    expect(git(remote, 'rev-parse', 'vigil/run-pr')).toBe(d.commit);
    // The person's branch is not pushed, moved or touched.
    expect(() => git(remote, 'rev-parse', '--verify', '-q', 'refs/heads/main')).toThrow();
  });

  it('reuses a pull request already open for the branch (a retried delivery opens none)', async () => {
    const { dir } = withRemote();
    const d = await deliverRun({ repoPath: dir, runId: 'run-again', message: 'Feature\n' });
    const gh = fakeGh({ existing: 'https://github.com/o/r/pull/3' });
    const r = await withPath(gh.env, () =>
      openPullRequest({ repoPath: dir, runId: 'run-again', branch: d.branch ?? '', title: 't', body: 'b' }),
    );
    expect(r.url).toBe('https://github.com/o/r/pull/3');
    expect(gh.calls().some((c) => c[1] === 'create')).toBe(false);
  });

  it('says why there is no pull request: gh missing, not logged in, no remote', async () => {
    const dir = repo();
    writeFileSync(path.join(dir, 'feature.txt'), 'done\n');
    const d = await deliverRun({ repoPath: dir, runId: 'run-x', message: 'Feature\n' });
    const input = { repoPath: dir, runId: 'run-x', branch: d.branch ?? '', title: 't', body: 'b' };
    const empty = mkdtempSync(path.join(os.tmpdir(), 'vigil-nogh-'));
    dirs.push(empty);
    // Only git's own folder on PATH: no gh anywhere.
    const gitDir = path.dirname(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim());
    const missing = await withPath({ PATH: `${empty}${path.delimiter}${gitDir}` }, () => openPullRequest(input));
    expect(missing.url).toBeNull();
    expect(missing.skipped).toMatch(/^gh is not installed .* no pull request was opened$/);
    expect((await ghReady(dir, { PATH: `${empty}${path.delimiter}${gitDir}` })).ok).toBe(false);

    const loggedOut = fakeGh({ auth: false });
    const out = await withPath(loggedOut.env, () => openPullRequest(input));
    expect(out).toEqual({
      url: null,
      skipped:
        "gh is not logged in (`gh auth login`): You are not logged into any GitHub hosts. on the run's host, so no pull request was opened",
      bodyPath: null,
    });
    expect(loggedOut.calls().map((c) => c[0])).toEqual(['--version', 'auth']);

    // vigil doctor with deliver=pr says the same, and how to fix it.
    const doctorMissing = await ghCheck({ PATH: `${empty}${path.delimiter}${gitDir}` });
    expect(doctorMissing).toMatchObject({
      name: 'gh',
      ok: false,
      required: true,
      fix: 'install gh (https://cli.github.com), then `gh auth login`',
    });
    expect(await ghCheck(loggedOut.env)).toMatchObject({
      ok: false,
      detail: expect.stringContaining('gh is not logged in'),
      fix: "run `gh auth login` as the worker's user",
    });
    expect(await ghCheck(fakeGh().env)).toMatchObject({
      ok: true,
      detail: 'gh version 2.0.0-fake, logged in: deliver=pr opens pull requests',
    });

    const noRemote = fakeGh();
    expect(await withPath(noRemote.env, () => openPullRequest(input))).toEqual({
      url: null,
      skipped: 'the repository has no remote to push the branch to: no pull request was opened',
      bodyPath: null,
    });
    expect(noRemote.calls().some((c) => c[0] === 'pr')).toBe(false);
  });
});
