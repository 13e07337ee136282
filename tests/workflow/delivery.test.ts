/**
 * Delivery with the default knobs (`deliver=branch`): a run the council approves leaves its work
 * committed on `vigil/<run id>` — the user's branch, index and working tree as the run left them —
 * and says so in its outcome; a run that ends without approval delivers nothing.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fileWorker, makeRepo, runInput, startRun, uniqueId, writeScenario } from '../support/harness.js';

const shared = fileWorker('delivery');
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
    expect(outcome.notes).toContainEqual(expect.stringMatching(new RegExp(`^delivered on branch ${branch} \\(commit [0-9a-f]{12}, 1 file\\(s\\)\\)`)));
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'status', '--porcelain', '--', '.', ':(exclude).vigil')).toBe('?? a.txt');
    expect(git(repo, 'show', `${branch}:a.txt`)).toBe('3');
    expect(git(repo, 'log', '-1', '--format=%s%n%b', branch)).toMatch(/^Sample PRD\nDelivered by Vigil run .*: council_approved after 3 iteration\(s\)\./);
  });

  it('delivers nothing when the run ends without approval', async () => {
    const repo = makeRepo({ files: { 'README.md': '# s\n\nNotes.\n' } });
    const scenario = writeScenario(repo, { version: 1, iterations: [], default: { appends: { 'a.txt': 'more\n' } }, roles: { ...ROLES, council: { default: { output: 'VOTE: REJECT\nREASON: not yet\n' } } } });
    const outcome = await (await startRun(shared.env, shared.taskQueue, runInput(repo, scenario, { maxIterations: 3 }), uniqueId('no-deliver'))).result();
    expect(outcome.status).toBe('max_iterations_reached');
    expect(outcome.notes.some((n) => n.includes('deliver'))).toBe(false);
    expect(git(repo, 'branch', '--list', 'vigil/*')).toBe('');
  });
});
