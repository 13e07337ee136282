/**
 * Delivery (knob `deliver`, default `branch`): the work of a run that ended done (council
 * approved, or its promise fulfilled) is committed on a branch of its own, `vigil/<run id>`, so
 * that it is never left only as uncommitted changes. The user's current branch, index and working
 * tree are not touched: the commit is made from the working tree's hash (as `git add -A` would
 * stage it, `.vigil/` excluded — the tree the council judged) with HEAD as its parent, and only
 * the run branch's ref is written. The person merges, rebases or opens a pull request from it.
 *
 * With `deliverToCurrent` (opt-in, `vigil start --deliver-to-current`) the same commit goes on the
 * current branch instead, and the index is set to it (the working tree already is).
 *
 * With `deliver=pr`, `openPullRequest` then pushes the branch to the repository's remote and opens
 * a pull request through `gh`, when gh is installed and logged in (`gh auth status`); otherwise it
 * says why not, and the branch stays delivered. Its body is the run's report.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ensureRunDir } from './artifacts.js';
import { firstLine, ghReady, runGh, type GhRun } from '../lib/gh.js';
import { ensureMigrated, poolFor, workerStoreUrl } from '../lib/event-store.js';
import { reportRun, runMarkdown } from '../lib/run-report.js';
import { runBranch } from '../rules/delivery.js';
import { IDENTITY, git, headSha, objectExists, workingTreeHash } from './git.js';
import { gitEnvFor, runGit } from './git-helper.js';

export const DeliverRunInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  /** The commit message: what the run did, from the workflow's state. */
  message: z.string().min(1).max(20_000),
  /** Commit on the current branch (and set the index to it) instead of the run branch. */
  toCurrent: z.boolean().optional(),
  /**
   * Commit on top of the run branch's own tip when it exists, not HEAD: a followed pull request's
   * next push (knob followPr) then fast-forwards the branch the pull request was opened from.
   */
  onBranch: z.boolean().optional(),
});
export type DeliverRunInput = z.infer<typeof DeliverRunInputSchema>;

export const DeliveryResultSchema = z.object({
  /** The branch written, or null when nothing was delivered (`skipped` says why). */
  branch: z.string().nullable(),
  commit: z.string().nullable(),
  files: z.number().int().min(0),
  skipped: z.string().nullable(),
});
export type DeliveryResult = z.infer<typeof DeliveryResultSchema>;

export async function deliverRun(raw: DeliverRunInput): Promise<DeliveryResult> {
  const input = DeliverRunInputSchema.parse(raw);
  const { repoPath } = input;
  const tree = await workingTreeHash(repoPath);
  const head = await headSha(repoPath);
  const headTree = head ? (await git(repoPath, ['rev-parse', `${head}^{tree}`])).trim() : null;
  // A retried delivery on the current branch finds its own commit at HEAD.
  if (input.toCurrent && head && tree === headTree && (await isOwnCommit(repoPath, head, input.message))) {
    const parent = (await runGit(repoPath, ['rev-parse', '--verify', '-q', `${head}^`])).stdout.trim() || null;
    return { branch: await currentBranch(repoPath), commit: head, files: await filesBetween(repoPath, parent, tree), skipped: null };
  }
  if (tree === headTree)
    return { branch: null, commit: null, files: 0, skipped: 'the working tree is the same as HEAD: nothing to deliver' };
  if (input.toCurrent) return deliverToCurrent(repoPath, head, tree, input);
  const branch = runBranch(input.runId);
  const ref = `refs/heads/${branch}`;
  // A retried delivery finds its own commit: the same tree on the same parent is not committed twice.
  let tip: string | null = null;
  if (await objectExists(repoPath, ref)) {
    const existing = (await git(repoPath, ['rev-parse', ref])).trim();
    const existingTree = (await git(repoPath, ['rev-parse', `${existing}^{tree}`])).trim();
    if (existingTree === tree) return { branch, commit: existing, files: await filesBetween(repoPath, head, tree), skipped: null };
    tip = existing;
  }
  const parent = input.onBranch && tip ? tip : head;
  const commit = (await git(repoPath, ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-F', '-'], IDENTITY, input.message)).trim();
  await git(repoPath, ['update-ref', '-m', `vigil: deliver run ${input.runId}`, ref, commit]);
  return { branch, commit, files: await filesBetween(repoPath, head, tree), skipped: null };
}

async function filesBetween(repoPath: string, head: string | null, tree: string): Promise<number> {
  const from = head ?? (await git(repoPath, ['hash-object', '-t', 'tree', '/dev/null'])).trim();
  return (await git(repoPath, ['diff', '--name-only', '-z', '--no-renames', from, tree])).split('\0').filter(Boolean).length;
}

/** The current branch's short name, or `HEAD` when it is detached. */
async function currentBranch(repoPath: string): Promise<string> {
  const r = await runGit(repoPath, ['symbolic-ref', '-q', '--short', 'HEAD']);
  return r.exitCode === 0 && r.stdout.trim() ? r.stdout.trim() : 'HEAD';
}

/** Whether `commit` is Vigil's delivery commit with this message. */
async function isOwnCommit(repoPath: string, commit: string, message: string): Promise<boolean> {
  const out = await git(repoPath, ['log', '-1', '--format=%an%x00%B', commit]);
  const [author, body] = out.split('\0');
  return author === IDENTITY.GIT_AUTHOR_NAME && (body ?? '').trim() === message.trim();
}

/** The opt-in delivery on the current branch: the commit moves the branch (or a detached HEAD), and the index follows. */
async function deliverToCurrent(repoPath: string, head: string | null, tree: string, input: DeliverRunInput): Promise<DeliveryResult> {
  const commit = (await git(repoPath, ['commit-tree', tree, ...(head ? ['-p', head] : []), '-F', '-'], IDENTITY, input.message)).trim();
  // Moves the branch HEAD points at, only if it is still where the run left it.
  await git(repoPath, ['update-ref', '-m', `vigil: deliver run ${input.runId}`, 'HEAD', commit, head ?? '0'.repeat(40)]);
  // The index as the commit has it; the working tree already is the commit's tree.
  await git(repoPath, ['reset', '-q', '--mixed', 'HEAD']);
  return { branch: await currentBranch(repoPath), commit, files: await filesBetween(repoPath, head, tree), skipped: null };
}

export const OpenPullRequestInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  /** The branch the work was delivered on (the head of the pull request). */
  branch: z.string().min(1).max(400),
  title: z.string().min(1).max(300),
  /** The run's report as the workflow knows it (used when the event store has no report of the run). */
  body: z.string().max(60_000),
  /** The run journals into the event store: its report there (what `vigil report <id>` renders) is the body. */
  reportFromStore: z.boolean().optional(),
  /**
   * The remote tip a rebase replaced (knob prUpdate=rebase): the push is forced, only while the
   * remote still holds this commit (`--force-with-lease`); a branch the remote already holds at
   * the local tip is not pushed again.
   */
  lease: z
    .string()
    .regex(/^[0-9a-f]{7,64}$/)
    .optional(),
});
export type OpenPullRequestInput = z.infer<typeof OpenPullRequestInputSchema>;

export const PullRequestResultSchema = z.object({
  /** The pull request's address, or null when none was opened (`skipped` says why). */
  url: z.string().nullable(),
  skipped: z.string().nullable(),
  /** Where the body was written (the run's folder). */
  bodyPath: z.string().nullable(),
  /** The branch the pull request goes into, when it is the person's (null: the remote's default). */
  base: z.string().nullable().optional(),
});
export type PullRequestResult = z.infer<typeof PullRequestResultSchema>;

/** gh in the repository, with Vigil's safe git environment for the git it runs there. */
const gh = (repoPath: string, args: string[]): Promise<GhRun> => runGh(repoPath, args, gitEnvFor(repoPath));

/**
 * The run's report from this worker's event store (the one its events are projected into), as
 * `vigil report <id> --format md` renders it; null when the store has none of the run.
 */
async function storeReport(runId: string): Promise<string | null> {
  const { url, problem } = workerStoreUrl();
  if (!url) throw new Error(problem);
  await ensureMigrated(url);
  const r = await reportRun(poolFor(url), runId);
  return r ? runMarkdown(r) : null;
}

/**
 * The branch pushed to `remote`; with a lease, forced while the remote holds it, and not at all when the remote holds the
 * local tip already (a retried push).
 */
async function pushBranch(
  repoPath: string,
  remote: string,
  branch: string,
  lease: string | undefined,
): Promise<{ exitCode: number; stderr: string }> {
  const ref = `refs/heads/${branch}`;
  const env = { GIT_TERMINAL_PROMPT: '0' };
  if (!lease) return runGit(repoPath, ['push', '--quiet', remote, `${ref}:${ref}`], env);
  const tip = (await git(repoPath, ['rev-parse', ref])).trim();
  const there = await runGit(repoPath, ['ls-remote', remote, ref], env);
  if (there.exitCode === 0 && there.stdout.split(/\s/)[0] === tip) return { exitCode: 0, stderr: '' };
  return runGit(repoPath, ['push', '--quiet', `--force-with-lease=${ref}:${lease}`, remote, `${ref}:${ref}`], env);
}

/**
 * Pushes the delivered branch to the repository's remote and opens a pull request from it with
 * gh. Idempotent: a pull request already open for the branch is returned, not opened again.
 * Never throws for gh's or the remote's refusal: the result says why there is no pull request.
 */
export async function openPullRequest(raw: OpenPullRequestInput): Promise<PullRequestResult> {
  const input = OpenPullRequestInputSchema.parse(raw);
  const { repoPath, branch } = input;
  const ready = await ghReady(repoPath);
  if (!ready.ok)
    return { url: null, skipped: `${ready.problem ?? 'gh is not ready'} on the run's host, so no pull request was opened`, bodyPath: null };
  const remotes = (await git(repoPath, ['remote']))
    .split('\n')
    .map((r) => r.trim())
    .filter(Boolean);
  const remote = remotes.includes('origin') ? 'origin' : remotes[0];
  if (!remote)
    return { url: null, skipped: 'the repository has no remote to push the branch to: no pull request was opened', bodyPath: null };
  let body = input.body;
  if (input.reportFromStore) {
    try {
      body = (await storeReport(input.runId)) ?? body;
    } catch (err) {
      body = `${body}\n\n_The event store's report was not available: ${firstLine(err instanceof Error ? err.message : String(err))}_\n`;
    }
  }
  const dir = ensureRunDir(repoPath, input.runId);
  mkdirSync(dir, { recursive: true });
  const bodyPath = path.join(dir, 'pull-request.md');
  writeFileSync(bodyPath, body);
  const push = await pushBranch(repoPath, remote, branch, input.lease);
  if (push.exitCode !== 0)
    return { url: null, skipped: `the branch could not be pushed to ${remote}: ${firstLine(push.stderr)}`, bodyPath };
  // Into the branch the person is on (the run's starting point), unless the work was delivered on it: then the remote's default.
  const current = await currentBranch(repoPath);
  const base = current !== 'HEAD' && current !== branch ? current : null;
  const open = await gh(repoPath, ['pr', 'list', '--head', branch, '--state', 'open', '--json', 'url', '--jq', '.[0].url']);
  if (open.exitCode === 0 && /^https?:\/\//.test(open.stdout.trim())) return { url: open.stdout.trim(), skipped: null, bodyPath, base };
  const created = await gh(repoPath, [
    'pr',
    'create',
    '--head',
    branch,
    ...(base ? ['--base', base] : []),
    '--title',
    input.title,
    '--body-file',
    bodyPath,
  ]);
  if (created.exitCode !== 0)
    return { url: null, skipped: `gh pr create failed: ${firstLine(created.stderr || created.stdout)}`, bodyPath };
  const url =
    created.stdout
      .trim()
      .split('\n')
      .reverse()
      .find((l) => /^https?:\/\//.test(l.trim()))
      ?.trim() ?? firstLine(created.stdout);
  return { url: url || null, skipped: url ? null : 'gh pr create printed no address', bodyPath, base };
}
