/**
 * A followed pull request whose base branch moved (knob prUpdate): the run branch is rebased onto
 * the remote's new base (or the base merged into it) in a scratch worktree of its own, the branch's
 * ref moved to the result only if it is still where it was, and the new tree written into the
 * run's working tree, where the evidence is judged again before anything is pushed (the push is
 * the delivery's, activities/deliver.ts, with a lease after a rebase).
 *
 * Idempotent, so a worker lost mid-way costs nothing: the commits are made with fixed dates (the
 * same rebase makes the same commits), and a retry after the ref moved finds the branch already on
 * the new base and only writes its tree again. A conflict is aborted and reported with its files:
 * nothing moves, the workflow asks a person.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { safeSegment, VIGIL_DIR } from './artifacts.js';
import { restoreWorkingTree } from './checkpoints.js';
import { git, IDENTITY, objectExists } from './git.js';
import { runGit } from './git-helper.js';

export const UpdatePrBranchInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  /** The run branch, the pull request's head. */
  branch: z.string().min(1).max(400),
  mode: z.enum(['rebase', 'merge']),
  /** The pull request's base, when the run kept it (absent: found here). */
  base: z.string().min(1).max(400).optional(),
});
export type UpdatePrBranchInput = z.infer<typeof UpdatePrBranchInputSchema>;

export const PrBranchUpdateSchema = z.object({
  result: z.enum(['updated', 'current', 'conflict', 'failed']),
  /** The base branch on the remote (the branch the pull request was opened into). */
  base: z.string(),
  /** The branch's tip before (what the remote holds, for the push's lease). */
  previous: z.string().nullable(),
  /** The branch's tip now. */
  commit: z.string().nullable(),
  /** The tree of the run's working tree now (updated, current). */
  tree: z.string().nullable(),
  /** The files in conflict (conflict). */
  files: z.array(z.string()).max(50),
  note: z.string().max(500),
});
export type PrBranchUpdate = z.infer<typeof PrBranchUpdateSchema>;

/** Fixed dates: the same rebase of the same commits onto the same base makes the same commits. */
const FIXED = { ...IDENTITY, GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z', GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z' };
const NO_PROMPT = { GIT_TERMINAL_PROMPT: '0' };

const firstLine = (s: string): string =>
  (
    s
      .trim()
      .split('\n')
      .find((l) => l.trim()) ?? ''
  )
    .trim()
    .slice(0, 300);

/** The remote the pull request's branch was pushed to (as openPullRequest picks it). */
async function remoteOf(repoPath: string): Promise<string | null> {
  const remotes = (await git(repoPath, ['remote']))
    .split('\n')
    .map((r) => r.trim())
    .filter(Boolean);
  return remotes.includes('origin') ? 'origin' : (remotes[0] ?? null);
}

/**
 * The pull request's base when the run kept none: the branch the person is on (openPullRequest's base), else the
 * remote's default (as this clone knows it, else as the remote says: `git ls-remote --symref`).
 */
async function baseOf(repoPath: string, remote: string, branch: string): Promise<string | null> {
  const current = await runGit(repoPath, ['symbolic-ref', '-q', '--short', 'HEAD']);
  const name = current.exitCode === 0 ? current.stdout.trim() : '';
  if (name && name !== branch) return name;
  const head = await runGit(repoPath, ['symbolic-ref', '-q', '--short', `refs/remotes/${remote}/HEAD`]);
  if (head.exitCode === 0 && head.stdout.trim()) return head.stdout.trim().slice(remote.length + 1);
  const said = await runGit(repoPath, ['ls-remote', '--symref', remote, 'HEAD'], NO_PROMPT);
  const m = said.exitCode === 0 ? /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(said.stdout) : null;
  return m?.[1] ?? null;
}

export async function updatePrBranch(raw: UpdatePrBranchInput): Promise<PrBranchUpdate> {
  const { repoPath, runId, branch, mode, base: kept } = UpdatePrBranchInputSchema.parse(raw);
  const none = { previous: null, commit: null, tree: null, files: [] };
  const remote = await remoteOf(repoPath);
  if (!remote) return { ...none, result: 'failed', base: '', note: 'the repository has no remote: the base cannot be fetched' };
  const base = kept ?? (await baseOf(repoPath, remote, branch));
  if (!base) return { ...none, result: 'failed', base: '', note: "the pull request's base branch is not known here (HEAD is detached)" };
  const baseRef = `refs/vigil/pr-base/${safeSegment(runId)}`;
  const fetched = await runGit(repoPath, ['fetch', '--quiet', '--no-tags', remote, `+refs/heads/${base}:${baseRef}`], NO_PROMPT);
  if (fetched.exitCode !== 0)
    return { ...none, result: 'failed', base, note: `git fetch ${remote} ${base} failed: ${firstLine(fetched.stderr)}` };
  const ref = `refs/heads/${branch}`;
  if (!(await objectExists(repoPath, ref))) return { ...none, result: 'failed', base, note: `the run branch ${branch} is not here` };
  const newBase = (await git(repoPath, ['rev-parse', baseRef])).trim();
  const tip = (await git(repoPath, ['rev-parse', ref])).trim();
  const onBase = (await runGit(repoPath, ['merge-base', '--is-ancestor', newBase, tip])).exitCode === 0;
  if (onBase) {
    // Already on the new base (or a retry after the ref moved): its tree in the working tree, nothing else.
    const tree = (await git(repoPath, ['rev-parse', `${tip}^{tree}`])).trim();
    await restoreWorkingTree(repoPath, tree);
    return { result: 'current', base, previous: tip, commit: tip, tree, files: [], note: `${branch} is already on ${remote}/${base}` };
  }
  const scratch = path.join(repoPath, VIGIL_DIR, 'worktrees', safeSegment(runId), 'pr-update');
  await dropWorktree(repoPath, scratch);
  await git(repoPath, ['worktree', 'add', '--quiet', '--detach', scratch, tip]);
  try {
    const step =
      mode === 'rebase'
        ? await runGit(scratch, ['rebase', '--quiet', newBase], FIXED)
        : await runGit(scratch, ['merge', '--quiet', '--no-edit', '-m', `Merge ${base} into ${branch}`, newBase], FIXED);
    if (step.exitCode !== 0) {
      const files = (await runGit(scratch, ['diff', '--name-only', '--diff-filter=U'])).stdout.split('\n').filter(Boolean).slice(0, 50);
      await runGit(scratch, [mode, '--abort']);
      const why = files.length ? `conflicts in ${files.join(', ')}` : firstLine(step.stderr || step.stdout);
      return {
        ...none,
        result: 'conflict',
        base,
        previous: tip,
        commit: tip,
        files,
        note: `${mode} onto ${remote}/${base}: ${why}`.slice(0, 500),
      };
    }
    const commit = (await git(scratch, ['rev-parse', 'HEAD'])).trim();
    const tree = (await git(repoPath, ['rev-parse', `${commit}^{tree}`])).trim();
    // Only if the branch is still where this update found it.
    await git(repoPath, ['update-ref', '-m', `vigil: ${mode} ${branch} onto ${base}`, ref, commit, tip]);
    await restoreWorkingTree(repoPath, tree);
    const did = mode === 'rebase' ? `rebased onto ${remote}/${base}` : `${remote}/${base} merged in`;
    return { result: 'updated', base, previous: tip, commit, tree, files: [], note: `${branch} ${did} (${newBase.slice(0, 12)})` };
  } finally {
    await dropWorktree(repoPath, scratch);
  }
}

async function dropWorktree(repoPath: string, dir: string): Promise<void> {
  await runGit(repoPath, ['worktree', 'remove', '--force', dir]);
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  await runGit(repoPath, ['worktree', 'prune']);
}
