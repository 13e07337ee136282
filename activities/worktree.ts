/**
 * Git for parallel streams: each task's stream works in a `git worktree` of its own (under
 * `.vigil/worktrees/<run>/<task>`, detached at the commit it starts from); a done stream's branch
 * (`vigil/<run>--<task>`, where its run delivered) is merged into the run's integration line
 * (`refs/vigil/streams/<run>`) with `git merge-tree` — no checkout, no index, the user's branch
 * untouched — and the merged tree is finally written into the run's working tree for its own
 * completion check. A stream's worktree deleted while it ran is made again on its resume, from its
 * last checkpoint. Every activity is idempotent: a retry after a lost worker finds what the first
 * attempt did (the worktree there, the merge on the line) and answers the same.
 */
import { recordGitLayout } from '../lib/git-layout.js';
import { existsSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ensureRepoDir, ensureRunDir, safeSegment, VIGIL_DIR } from './artifacts.js';
import { runBranch } from '../rules/delivery.js';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../schemas/activities.js';
import { restoreWorkingTree } from './checkpoints.js';
import { assertGitRepo, git, IDENTITY, notAGitRepository, objectExists } from './git.js';
import { runGit } from './git-helper.js';

/** Fixed dates: the same tree on the same parents makes the same commit, so a retried step finds its own. */
const FIXED = { ...IDENTITY, GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z' };

export const integrationRef = (runId: string): string => `refs/vigil/streams/${safeSegment(runId)}`;
export const worktreePath = (repoPath: string, runId: string, task: string): string =>
  path.join(repoPath, VIGIL_DIR, 'worktrees', safeSegment(runId), safeSegment(task));

export const StreamBaseInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  tree: z.string().max(64),
  parent: z.string().max(64).nullable(),
});
export type StreamBaseInput = z.infer<typeof StreamBaseInputSchema>;

/** The commit the streams start from: the run-start tree (the person's uncommitted changes included) on HEAD, the integration line's first commit. */
export async function streamBase(raw: StreamBaseInput): Promise<{ commit: string }> {
  const input = StreamBaseInputSchema.parse(raw);
  const commit = (
    await git(
      input.repoPath,
      ['commit-tree', input.tree, ...(input.parent ? ['-p', input.parent] : []), '-m', `vigil: streams of run ${input.runId} start here`],
      FIXED,
    )
  ).trim();
  const ref = integrationRef(input.runId);
  if (!(await objectExists(input.repoPath, ref))) await git(input.repoPath, ['update-ref', ref, commit]);
  return { commit };
}

export const WorktreeInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  task: z.string().max(40),
  base: z.string().max(64),
});
export type WorktreeInput = z.infer<typeof WorktreeInputSchema>;

/** A task's worktree, detached at `base`; an existing one (a retry) is returned as it is. */
export async function addWorktree(raw: WorktreeInput): Promise<{ path: string; created: boolean }> {
  const input = WorktreeInputSchema.parse(raw);
  const dir = worktreePath(input.repoPath, input.runId, input.task);
  const known = (await git(input.repoPath, ['worktree', 'list', '--porcelain'])).split('\n').some((l) => l === `worktree ${dir}`);
  if (known && existsSync(path.join(dir, '.git'))) return { path: dir, created: false };
  // A folder left by an attempt that died mid-add: pruned, then added again.
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  await git(input.repoPath, ['worktree', 'prune']);
  ensureRepoDir(input.repoPath, path.dirname(dir));
  await git(input.repoPath, ['worktree', 'add', '--detach', '--force', dir, input.base]);
  // Vigil made it: its layout is the one every later git command there is checked against.
  recordGitLayout(dir);
  return { path: dir, created: true };
}

export const RemoveWorktreeInputSchema = z.object({ repoPath: z.string(), runId: z.string(), task: z.string().max(40) });

/** A task's worktree removed (after its merge, or when it failed); none there is fine. */
export async function removeWorktree(raw: z.infer<typeof RemoveWorktreeInputSchema>): Promise<{ removed: boolean }> {
  const input = RemoveWorktreeInputSchema.parse(raw);
  const dir = worktreePath(input.repoPath, input.runId, input.task);
  const had = existsSync(dir);
  if (had) await runGit(input.repoPath, ['worktree', 'remove', '--force', dir]);
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  await git(input.repoPath, ['worktree', 'prune']);
  return { removed: had };
}

const SIDE_CHARS = 6000;
/** Both sides as the agent's prompt quotes them (the whole of them is in the sides file). */
const SIDES_EXCERPT = 6000;

export const MergeStreamInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  task: z.string().max(40),
  /** The stream's run id: its work is on its run branch. */
  childId: z.string(),
  /** The integration line's commit the workflow knows (the merge goes on it). */
  into: z.string().max(64),
});
export type MergeStreamInput = z.infer<typeof MergeStreamInputSchema>;

export const MergeStreamResultSchema = z.object({
  /** The integration line's new commit (the merge; with a conflict, its tree carries the conflict markers). */
  commit: z.string(),
  /** The stream delivered nothing: nothing to merge. */
  empty: z.boolean(),
  /** Files whose changes collided, and where both sides are written out for the agent or a person. */
  conflict: z
    .object({
      files: z.array(z.string().max(500)).max(50),
      sidesPath: z.string(),
      summary: z.string().max(2000),
      excerpt: z.string().max(SIDES_EXCERPT),
    })
    .nullable(),
});
export type MergeStreamResult = z.infer<typeof MergeStreamResultSchema>;

/**
 * Merges a done stream's branch into the integration line with `git merge-tree --write-tree`.
 * A clean merge is a merge commit on the line. A conflicting one is committed too, its tree with
 * the conflict markers, so the line goes on; both sides of each file are written to
 * `.vigil/runs/<run>/merge-<task>.md` for the merge iteration (or the person).
 */
export async function mergeStream(raw: MergeStreamInput): Promise<MergeStreamResult> {
  const input = MergeStreamInputSchema.parse(raw);
  const { repoPath, into } = input;
  const ref = integrationRef(input.runId);
  const branchRef = `refs/heads/${runBranch(input.childId)}`;
  if (!(await objectExists(repoPath, branchRef))) return { commit: into, empty: true, conflict: null };
  const theirs = (await git(repoPath, ['rev-parse', `${branchRef}^{commit}`])).trim();
  const tip = (await git(repoPath, ['rev-parse', ref])).trim();
  const r = await runGit(repoPath, ['merge-tree', '--write-tree', '--name-only', '--no-messages', into, theirs]);
  if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`git merge-tree failed (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 500)}`);
  const [tree = '', ...rest] = r.stdout.split('\n');
  const files = r.exitCode === 1 ? [...new Set(rest.map((l) => l.trim()).filter(Boolean))].slice(0, 50) : [];
  const message = `${files.length ? 'Merge (with conflicts)' : 'Merge'} task ${input.task} (${runBranch(input.childId)})`;
  const commit = (await git(repoPath, ['commit-tree', tree.trim(), '-p', into, '-p', theirs, '-m', message], FIXED)).trim();
  // A retry finds the line already moved to this very commit.
  if (tip !== commit) await git(repoPath, ['update-ref', ref, commit, tip]);
  if (!files.length) return { commit, empty: false, conflict: null };
  const base = (await runGit(repoPath, ['merge-base', into, theirs])).stdout.trim();
  const show = async (rev: string, file: string): Promise<string> => {
    const s = await runGit(repoPath, ['show', `${rev}:${file}`]);
    return s.exitCode === 0 ? s.stdout.slice(0, SIDE_CHARS) : '(absent)';
  };
  const parts = [
    `# Merge conflict: task ${input.task}`,
    '',
    `Merging ${runBranch(input.childId)} into the run's tree collided in ${files.length} file(s). The run's tree has the ` +
      `conflict markers; here are both sides.`,
    '',
  ];
  for (const f of files.slice(0, 10)) {
    parts.push(
      `## ${f}`,
      '',
      '### the run so far (ours)',
      '',
      '```',
      await show(into, f),
      '```',
      '',
      `### task ${input.task} (theirs)`,
      '',
      '```',
      await show(theirs, f),
      '```',
      '',
    );
    if (base) parts.push('### where both started (base)', '', '```', await show(base, f), '```', '');
  }
  const dir = ensureRunDir(repoPath, input.runId);
  const sidesPath = path.join(dir, `merge-${safeSegment(input.task)}.md`);
  const sides = `${parts.join('\n')}\n`;
  writeFileSync(sidesPath, sides);
  const summary = `merging task ${input.task} conflicted in ${files.join(', ')}`.slice(0, 2000);
  return { commit, empty: false, conflict: { files, sidesPath, summary, excerpt: sides.slice(0, SIDES_EXCERPT) } };
}

export const ApplyStreamsInputSchema = z.object({ repoPath: z.string(), runId: z.string(), commit: z.string().max(64) });

/**
 * Writes the merged tree into the run's working tree (files only: the index and the current
 * branch untouched), for the run's own completion check. Idempotent.
 */
export async function applyStreams(raw: z.infer<typeof ApplyStreamsInputSchema>): Promise<{ files: number }> {
  const input = ApplyStreamsInputSchema.parse(raw);
  const { repoPath, commit } = input;
  const before = (await runGit(repoPath, ['diff', '--name-only', '-z', commit, '--', '.', `:(exclude)${VIGIL_DIR}`])).stdout
    .split('\0')
    .filter(Boolean);
  await git(repoPath, ['restore', `--source=${commit}`, '--worktree', '--', '.', `:(exclude)${VIGIL_DIR}`]);
  return { files: before.length };
}

export const RecreateWorktreeInputSchema = z.object({
  /** The stream's repository: its worktree, `<repo>/.vigil/worktrees/<run>/<task>`. */
  worktree: z.string(),
  runId: z.string(),
  task: z.string().max(40),
  /** The commit the stream started from (its run-start commit): the worktree's HEAD again. */
  startSha: z.string().max(64).nullable(),
  /** The stream's last checkpoint, whose tree the worktree gets back (null: none yet, the start commit's tree). */
  checkpoint: z.object({ iteration: z.number().int().min(1), commit: z.string().max(64), tree: z.string().max(64) }).nullable(),
});
export type RecreateWorktreeInput = z.infer<typeof RecreateWorktreeInputSchema>;

export const RecreateWorktreeResultSchema = z.object({
  recreated: z.boolean(),
  /** The checkpoint's iteration the files came from (null: the start commit's, or nothing recreated). */
  fromIteration: z.number().int().nullable(),
});
export type RecreateWorktreeResult = z.infer<typeof RecreateWorktreeResultSchema>;

/**
 * A stream's worktree that is gone (deleted while the stream ran) made again, as its resume asks:
 * detached at the stream's start commit, its files those of the stream's last checkpoint (the
 * refs under `refs/vigil/` live in the run's common git folder and outlive the worktree). A
 * worktree still there is left as it is. The run's repository itself must be there: without it
 * the failure is the repository's (NotAGitRepository), and the stream stays paused.
 */
export async function recreateWorktree(raw: RecreateWorktreeInput): Promise<RecreateWorktreeResult> {
  const input = RecreateWorktreeInputSchema.parse(raw);
  const dir = path.resolve(input.worktree);
  // Only Vigil's own worktree of this task is ever made again (the path says which repository it lies in).
  const repoPath = path.resolve(dir, '..', '..', '..', '..');
  if (worktreePath(repoPath, input.runId, input.task) !== dir)
    throw ApplicationFailure.create({
      message: `${dir} is not Vigil's worktree of task ${input.task} of run ${input.runId}: nothing recreated`,
      type: FAILURE_TYPES.notAGitRepository,
      nonRetryable: true,
    });
  if (existsSync(path.join(dir, '.git')) && (await runGit(dir, ['rev-parse', '--is-inside-work-tree'])).stdout.trim() === 'true')
    return { recreated: false, fromIteration: null };
  await assertGitRepo(repoPath);
  // The repository's own top (not a folder inside another repository that only looks like one).
  const top = (await runGit(repoPath, ['rev-parse', '--show-toplevel'])).stdout.trim();
  if (!top || realpathSync(top) !== realpathSync(repoPath)) throw notAGitRepository(repoPath);
  const usable = async (sha: string | null | undefined): Promise<string | null> =>
    sha && (await objectExists(repoPath, `${sha}^{commit}`)) ? sha : null;
  const start = (await usable(input.startSha)) ?? (await usable(input.checkpoint?.commit));
  if (!start)
    throw ApplicationFailure.create({
      message: `neither the start commit nor the last checkpoint of task ${input.task} is in ${repoPath}: the worktree cannot be made again`,
      type: FAILURE_TYPES.notAGitRepository,
      nonRetryable: true,
    });
  // What is left of the folder (the agent's files without `.git`) is Vigil's own, made again below.
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  await git(repoPath, ['worktree', 'prune']);
  ensureRepoDir(repoPath, path.dirname(dir));
  await git(repoPath, ['worktree', 'add', '--detach', '--force', dir, start]);
  // A new worktree: its layout is the one later commands there are checked against.
  recordGitLayout(dir);
  const cp = input.checkpoint && (await objectExists(repoPath, `${input.checkpoint.tree}^{tree}`)) ? input.checkpoint : null;
  if (cp) await restoreWorkingTree(dir, cp.tree);
  return { recreated: true, fromIteration: cp?.iteration ?? null };
}
