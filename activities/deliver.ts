/**
 * Delivery (knob `deliver`, default `branch`): the work of a run that ended done (council
 * approved, or its promise fulfilled) is committed on a branch of its own, `vigil/<run id>`, so
 * that it is never left only as uncommitted changes. The user's current branch, index and working
 * tree are not touched: the commit is made from the working tree's hash (as `git add -A` would
 * stage it, `.vigil/` excluded — the tree the council judged) with HEAD as its parent, and only
 * the run branch's ref is written. The person merges, rebases or opens a pull request from it.
 */
import { z } from 'zod';
import { IDENTITY, git, headSha, objectExists, workingTreeHash } from './git.js';

export const DeliverRunInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  /** The commit message: what the run did, from the workflow's state. */
  message: z.string().min(1).max(20_000),
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

/** `vigil/<run id>`, with anything git refuses in a ref name replaced. */
export function runBranch(runId: string): string {
  const safe = runId.replace(/[^A-Za-z0-9._/-]/g, '-').replace(/\.\.+/g, '.').replace(/\/+/g, '/').replace(/^[./-]+|[./]+$/g, '').replace(/\.lock$/, '-lock');
  return `vigil/${safe || 'run'}`;
}

export async function deliverRun(raw: DeliverRunInput): Promise<DeliveryResult> {
  const input = DeliverRunInputSchema.parse(raw);
  const { repoPath } = input;
  const tree = await workingTreeHash(repoPath);
  const head = await headSha(repoPath);
  const headTree = head ? (await git(repoPath, ['rev-parse', `${head}^{tree}`])).trim() : null;
  if (tree === headTree) return { branch: null, commit: null, files: 0, skipped: 'the working tree is the same as HEAD: nothing to deliver' };
  const branch = runBranch(input.runId);
  const ref = `refs/heads/${branch}`;
  // A retried delivery finds its own commit: the same tree on the same parent is not committed twice.
  if (await objectExists(repoPath, ref)) {
    const existing = (await git(repoPath, ['rev-parse', ref])).trim();
    const existingTree = (await git(repoPath, ['rev-parse', `${existing}^{tree}`])).trim();
    if (existingTree === tree) return { branch, commit: existing, files: await filesBetween(repoPath, head, tree), skipped: null };
  }
  const commit = (await git(repoPath, ['commit-tree', tree, ...(head ? ['-p', head] : []), '-F', '-'], IDENTITY, input.message)).trim();
  await git(repoPath, ['update-ref', '-m', `vigil: deliver run ${input.runId}`, ref, commit]);
  return { branch, commit, files: await filesBetween(repoPath, head, tree), skipped: null };
}

async function filesBetween(repoPath: string, head: string | null, tree: string): Promise<number> {
  const from = head ?? (await git(repoPath, ['hash-object', '-t', 'tree', '/dev/null'])).trim();
  return (await git(repoPath, ['diff', '--name-only', '-z', '--no-renames', from, tree])).split('\0').filter(Boolean).length;
}
