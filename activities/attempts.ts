/**
 * Git and facts for attempts from the start (`vigil start --attempts K`, workflows/attempts-workflow.ts):
 * each attempt's worktree (the streams' worktrees, activities/worktree.ts, named `attempt-<n>`),
 * each ended attempt's facts read from its run's status, and the winner's branch brought onto the
 * run's branch (`vigil/<run>`) while the other attempts' worktrees and branches go (or stay, with
 * keepAttempts). Every activity is idempotent: a retry after a lost worker answers the same.
 */
import { Context } from '@temporalio/activity';
import { z } from 'zod';
import type { StatusSnapshot } from '../schemas/status.js';
import type { AttemptFacts } from '../rules/attempts.js';
import { runBranch } from '../rules/delivery.js';
import { git, IDENTITY, objectExists } from './git.js';
import { runGit } from './git-helper.js';
import { addWorktree, removeWorktree } from './worktree.js';
import { restoreWorkingTree } from './checkpoints.js';

export const AddAttemptsInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  k: z.number().int().min(1).max(9),
  /** The commit to start from (a fork's base, forkBase); absent: the repository's HEAD. */
  base: z.string().max(64).optional(),
});

/**
 * The K worktrees, each detached at `base`, else at the repository's HEAD commit (the person's
 * uncommitted changes are not carried).
 */
export async function addAttempts(raw: z.infer<typeof AddAttemptsInputSchema>): Promise<{ base: string; paths: string[] }> {
  const input = AddAttemptsInputSchema.parse(raw);
  const head = await runGit(input.repoPath, ['rev-parse', '--verify', `${input.base ?? 'HEAD'}^{commit}`]);
  if (head.exitCode !== 0)
    throw new Error(
      input.base
        ? `${input.base} is no commit of ${input.repoPath}: the fork's base is gone; start the run again`
        : `${input.repoPath} has no commit to start attempts from: commit something first, or start without --attempts`,
    );
  const base = head.stdout.trim();
  const paths: string[] = [];
  for (let n = 1; n <= input.k; n++)
    paths.push((await addWorktree({ repoPath: input.repoPath, runId: input.runId, task: `attempt-${n}`, base })).path);
  return { base, paths };
}

export const DescribeAttemptsInputSchema = z.object({
  attempts: z.array(z.object({ n: z.number().int().min(1), workflowId: z.string(), status: z.string(), spendUsd: z.number() })).max(9),
});

/** Review findings of a run's last review, every severity (a finding a person waived included: it was found). */
function findingsOf(s: StatusSnapshot): number {
  const review = s.quality?.lastReview;
  if (!review) return 0;
  return [...review.reviewers, ...(review.devilsAdvocate ? [review.devilsAdvocate] : [])].reduce(
    (sum, r) => sum + r.counts.critical + r.counts.high + r.counts.medium + r.counts.low,
    0,
  );
}

/** Each ended attempt's facts for the pick rule, read from its run's status (the run is closed: the query replays it). */
export async function describeAttempts(raw: z.infer<typeof DescribeAttemptsInputSchema>): Promise<AttemptFacts[]> {
  const input = DescribeAttemptsInputSchema.parse(raw);
  const { client } = Context.current();
  const out: AttemptFacts[] = [];
  for (const a of input.attempts) {
    Context.current().heartbeat(a.n);
    // The run's `status` query (workflows/messages.ts), by name: activities take workflow code by value only from decisions.
    const s = await client.workflow.getHandle(a.workflowId).query<StatusSnapshot>('status');
    out.push({ n: a.n, status: a.status, findings: findingsOf(s), iterations: s.iteration, spendUsd: a.spendUsd || s.spend.usd });
  }
  return out;
}

export const SettleAttemptsInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  /** Every attempt's run id, 1..K in order. */
  attemptIds: z.array(z.string()).max(9),
  /** The winner's number (null: none approved). */
  winner: z.number().int().min(1).nullable(),
  keepAttempts: z.boolean(),
});

const FIXED = { ...IDENTITY, GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z' };

/**
 * The winner's branch onto the run's branch `vigil/<run>` (created there, fast-forwarded, or a
 * merge commit when it moved meanwhile; a conflict fails with what to do), then every attempt's
 * worktree removed and, without keepAttempts, every attempt's branch deleted.
 */
export async function settleAttempts(
  raw: z.infer<typeof SettleAttemptsInputSchema>,
): Promise<{ branch: string | null; commit: string | null }> {
  const input = SettleAttemptsInputSchema.parse(raw);
  const { repoPath } = input;
  let delivered: { branch: string; commit: string } | null = null;
  if (input.winner !== null) {
    const from = `refs/heads/${runBranch(input.attemptIds[input.winner - 1] ?? '')}`;
    const to = `refs/heads/${runBranch(input.runId)}`;
    const runTip = (await objectExists(repoPath, to)) ? (await git(repoPath, ['rev-parse', `${to}^{commit}`])).trim() : null;
    // The winner's branch is gone on a retry after it was deleted: the run's branch already has it.
    if (!(await objectExists(repoPath, from))) {
      if (!runTip) throw new Error(`the winning attempt's branch ${from} is missing: nothing to deliver`);
      delivered = { branch: runBranch(input.runId), commit: runTip };
    } else {
      const theirs = (await git(repoPath, ['rev-parse', `${from}^{commit}`])).trim();
      let commit = theirs;
      if (runTip && runTip !== theirs && (await runGit(repoPath, ['merge-base', '--is-ancestor', runTip, theirs])).exitCode !== 0) {
        const r = await runGit(repoPath, ['merge-tree', '--write-tree', runTip, theirs]);
        if (r.exitCode !== 0) throw new Error(`merging ${from} into ${to} conflicted: merge it by hand (the attempt's branch is kept)`);
        const tree = r.stdout.split('\n')[0]?.trim() ?? '';
        commit = (
          await git(
            repoPath,
            ['commit-tree', tree, '-p', runTip, '-p', theirs, '-m', `Merge attempt ${input.winner} of ${input.runId}`],
            FIXED,
          )
        ).trim();
      }
      await git(repoPath, ['update-ref', to, commit]);
      delivered = { branch: runBranch(input.runId), commit };
    }
  }
  for (let n = 1; n <= input.attemptIds.length; n++) {
    Context.current().heartbeat(n);
    await removeWorktree({ repoPath, runId: input.runId, task: `attempt-${n}` });
    if (input.keepAttempts) continue;
    const ref = `refs/heads/${runBranch(input.attemptIds[n - 1] ?? '')}`;
    if (await objectExists(repoPath, ref)) await git(repoPath, ['update-ref', '-d', ref]);
  }
  return { branch: delivered?.branch ?? null, commit: delivered?.commit ?? null };
}

export const ForkBaseInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  /** The stuck run's checkpoint tree (or its start tree). */
  tree: z.string().max(64),
  /** The run start's HEAD (null: the repository had no commit). */
  parent: z.string().max(64).nullable(),
  iteration: z.number().int().min(0),
});

/**
 * The commit the forks of a stuck run start from (onStuck=fork): the checkpoint's tree on the run
 * start's HEAD, so a fork's branch grows from the person's history. Fixed dates: a retry makes the same commit.
 */
export async function forkBase(raw: z.infer<typeof ForkBaseInputSchema>): Promise<{ commit: string }> {
  const input = ForkBaseInputSchema.parse(raw);
  const message = `vigil: the forks of run ${input.runId} start here (iteration ${input.iteration})`;
  const parent = input.parent ? ['-p', input.parent] : [];
  return { commit: (await git(input.repoPath, ['commit-tree', input.tree, ...parent, '-m', message], FIXED)).trim() };
}

export const ApplyForkInputSchema = z.object({ repoPath: z.string(), runId: z.string(), forkId: z.string() });

/**
 * The winning fork's tree made the stuck run's working tree (files only: the index and the current
 * branch untouched; `.vigil/` and ignored files left alone), from the branch its run delivered on,
 * so the run delivers it as its own. Idempotent. Fails, saying so, when that branch is missing.
 */
export async function applyFork(raw: z.infer<typeof ApplyForkInputSchema>): Promise<{ commit: string; tree: string; files: number }> {
  const input = ApplyForkInputSchema.parse(raw);
  const ref = `refs/heads/${runBranch(input.forkId)}`;
  if (!(await objectExists(input.repoPath, ref)))
    throw new Error(
      `the winning fork's branch ${ref} is missing: nothing to bring into run ${input.runId}; see vigil status ${input.forkId}`,
    );
  const commit = (await git(input.repoPath, ['rev-parse', `${ref}^{commit}`])).trim();
  const tree = (await git(input.repoPath, ['rev-parse', `${commit}^{tree}`])).trim();
  // The working tree becomes that tree exactly, as `git add -A` sees it (what the stuck run made since is set aside: a checkpoint keeps it).
  const files = await restoreWorkingTree(input.repoPath, tree);
  return { commit, tree, files };
}
