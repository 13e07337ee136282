/**
 * Delivery with the default knobs (`deliver=branch`): a run the council approves leaves its work
 * committed on `vigil/<run id>` — the user's branch, index and working tree as the run left them —
 * and says so in its outcome, the commit and the pull request carrying the outcome's evidence
 * line; a run that ends without approval delivers nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeGh } from '../support/fake-gh.js';
import { fileWorker, makeRepo, runInput, startRun, uniqueId, writeScenario } from '../support/harness.js';

// A fake gh first on the worker's PATH (the worker runs in this process; tests/support/fake-gh.ts):
// it records every call's argv and answers as an installed, logged-in gh would.
const { ghDir, ghCallsIn } = fakeGh('https://github.com/o/r/pull/42');
const shared = fileWorker('delivery', () => {
  process.env.PATH = `${ghDir}${path.delimiter}${process.env.PATH ?? ''}`;
});
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

const ROLES = {
  checklist: { default: { output: '[{"id": "REQ-1", "title": "a.txt exists", "priority": "critical", "verify": "read a.txt"}]\n' } },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - a.txt exists\n' } },
  reviewer: { default: { output: 'VERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
};

describe.concurrent('delivery of a done run', () => {
  it('commits an approved run’s work on its run branch and leaves the user’s branch alone', async () => {
    const repo = makeRepo({ files: { 'README.md': '# s\n\nNotes.\n' } });
    const head = git(repo, 'rev-parse', 'HEAD');
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': '1\n' } }, { writes: { 'a.txt': '2\n' } }, { writes: { 'a.txt': '3\n' }, claim: 'file' }],
      roles: { ...ROLES, council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } } },
    });
    const id = uniqueId('deliver');
    const outcome = await (await startRun(shared.env, shared.taskQueue, runInput(repo, scenario, { maxIterations: 5 }), id)).result();
    expect(outcome.status).toBe('council_approved');
    const branch = `vigil/${id}`;
    expect(outcome.notes).toContainEqual(
      expect.stringMatching(new RegExp(`^delivered on branch ${branch} \\(commit [0-9a-f]{12}, 1 file\\(s\\)\\)`)),
    );
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'status', '--porcelain', '--', '.', ':(exclude).vigil')).toBe('?? a.txt');
    expect(git(repo, 'show', `${branch}:a.txt`)).toBe('3');
    expect(git(repo, 'log', '-1', '--format=%s%n%b', branch)).toMatch(
      /^Sample PRD\nDelivered by Vigil run .*: council_approved after 3 iteration\(s\)\./,
    );
    // What done rested on: the outcome's first note, and the same line in the delivered commit.
    const evidence = outcome.notes[0] ?? '';
    expect(evidence).toMatch(/^evidence: no test runner, integrity findings.*, gaming findings.*, tree [0-9a-f]{12}$/);
    expect(git(repo, 'log', '-1', '--format=%b', branch).split('\n')).toContain(`- ${evidence}`);
  });

  it('deliver=pr: pushes the run branch and opens a pull request through gh, its body the run’s report', async () => {
    const repo = makeRepo({ files: { 'README.md': '# s\n\nNotes.\n' } });
    const remote = mkdtempSync(path.join(os.tmpdir(), 'vigil-origin-'));
    git(remote, 'init', '-q', '--bare');
    git(repo, 'remote', 'add', 'origin', remote);
    const head = git(repo, 'rev-parse', 'HEAD');
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': '1\n' } }, { writes: { 'a.txt': '2\n' } }, { writes: { 'a.txt': '3\n' }, claim: 'file' }],
      roles: { ...ROLES, council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } } },
    });
    const id = uniqueId('deliver-pr');
    const outcome = await // followPr off: this test is about opening the pull request; following it is tests/workflow/follow-pr.test.ts.
    (
      await startRun(shared.env, shared.taskQueue, runInput(repo, scenario, { maxIterations: 5, deliver: 'pr', followPr: false }), id)
    ).result();
    expect(outcome.status).toBe('council_approved');
    const branch = `vigil/${id}`;
    expect(outcome.notes).toContainEqual(expect.stringMatching(new RegExp(`^delivered on branch ${branch} `)));
    expect(outcome.notes).toContain('pull request opened: https://github.com/o/r/pull/42');
    const bodyPath = path.join(repo, '.vigil/runs', id, 'pull-request.md');
    expect(ghCallsIn(repo).find((argv) => argv[1] === 'create')).toEqual([
      'pr',
      'create',
      '--head',
      branch,
      '--base',
      'main',
      '--title',
      'Sample PRD',
      '--body-file',
      bodyPath,
    ]);
    const body = readFileSync(bodyPath, 'utf8');
    expect(body.split('\n').slice(0, 3)).toEqual(['# Sample PRD', '', `Vigil run \`${id}\`: **council_approved** after 3 iteration(s).`]);
    expect(body).toContain('- council: APPROVED (3 approve, 0 reject of 3)');
    expect(body).toContain('- [x] REQ-1: a.txt exists (passing)');
    // The same evidence line as the outcome's (from the event store's report, or the run's own notes).
    expect(outcome.notes[0]).toMatch(/^evidence: /);
    expect(body.split('\n')).toContain(`- ${outcome.notes[0]}`);
    expect(git(remote, 'rev-parse', branch)).toBe(git(repo, 'rev-parse', branch));
    // The person's branch, index and working tree as the run left them.
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'status', '--porcelain', '--', '.', ':(exclude).vigil')).toBe('?? a.txt');
  });

  it('delivers nothing when the run ends without approval', async () => {
    const repo = makeRepo({ files: { 'README.md': '# s\n\nNotes.\n' } });
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [],
      default: { appends: { 'a.txt': 'more\n' } },
      roles: { ...ROLES, council: { default: { output: 'VOTE: REJECT\nREASON: not yet\n' } } },
    });
    const outcome = await (
      await startRun(shared.env, shared.taskQueue, runInput(repo, scenario, { maxIterations: 3 }), uniqueId('no-deliver'))
    ).result();
    expect(outcome.status).toBe('max_iterations_reached');
    expect(outcome.notes.some((n) => n.includes('deliver'))).toBe(false);
    expect(git(repo, 'branch', '--list', 'vigil/*')).toBe('');
  });
});
