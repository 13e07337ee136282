/**
 * Git primitives shared by the repository activities and the CLI (checkpoints, rejudge): a checked
 * git command, object and HEAD lookups, the working tree's hash, the paths between two trees, a
 * file's content in a tree, and what the git helper needs to make a checkpoint. Every command runs
 * in the process's git helper (lib/git-helper.ts), or with its environment, never with the
 * repository's own configuration. A repository whose git an agent changed is refused with
 * UnsafeRepositoryError (the activities' versions, activities/git.ts, say it to Temporal).
 */
import { execa } from 'execa';
import { VIGIL_DIR } from '../schemas/paths.js';
import { gitEnvFor, helperTreeHash, runGit, type CheckpointAsk } from './git-helper.js';

export const EXCLUDE = `:(exclude)${VIGIL_DIR}`;

export async function git(cwd: string, args: string[], env: Record<string, string> = {}, input?: string): Promise<string> {
  const r = await runGit(cwd, args, env, input);
  if (r.exitCode !== 0) {
    throw new Error(`git ${args.join(' ')} failed in ${cwd} (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 1000)}`);
  }
  return r.stdout;
}

/** True when `spec` names an object of the repository (`git cat-file -e`). */
export async function objectExists(cwd: string, spec: string): Promise<boolean> {
  return (await runGit(cwd, ['cat-file', '-e', spec])).exitCode === 0;
}

export async function headSha(cwd: string): Promise<string | null> {
  // `--verify -q` prints nothing for a repository without commits (plain rev-parse prints "HEAD").
  const r = await runGit(cwd, ['rev-parse', '--verify', '-q', 'HEAD^{commit}']);
  const out = r.stdout.trim();
  return r.exitCode === 0 && out ? out : null;
}

/** The object a ref points at, or null when there is no such ref. */
export async function refTarget(repoPath: string, ref: string): Promise<string | null> {
  const r = await runGit(repoPath, ['rev-parse', '--verify', '-q', ref]);
  const out = r.stdout.trim();
  return r.exitCode === 0 && out ? out : null;
}

/** Git tree id of the working tree (see the file comment of activities/repo.ts; computed in the git helper). */
export async function workingTreeHash(repoPath: string): Promise<string> {
  return helperTreeHash(repoPath);
}

/** Paths that differ between two trees (`.vigil/` excluded). */
export async function changedPaths(repoPath: string, from: string, to: string): Promise<string[]> {
  return (await git(repoPath, ['diff', '--name-only', '-z', '--no-renames', from, to, '--', '.', EXCLUDE])).split('\0').filter(Boolean);
}

/** At most this much of a file is read from a tree. */
export const MAX_TREE_FILE_BYTES = 512 * 1024;

/** The content of `rel` in `tree`, capped at `maxBytes`; null when the path is not in the tree. */
export async function readAtTree(repoPath: string, tree: string, rel: string, maxBytes = MAX_TREE_FILE_BYTES): Promise<string | null> {
  const r = await execa('git', ['show', '--no-textconv', `${tree}:${rel}`], {
    cwd: repoPath,
    reject: false,
    stdin: 'ignore',
    stripFinalNewline: false,
    maxBuffer: maxBytes,
    // Never a command of the repository's (lib/git-env.ts); `--no-textconv` above for the same reason.
    env: { ...gitEnvFor(repoPath), GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' },
  });
  if (r.isMaxBuffer) return String(r.stdout);
  return r.exitCode === 0 ? String(r.stdout) : null;
}

/** Who checkpoint commits are by (no user configuration needed, no signing). */
export const IDENTITY = {
  GIT_AUTHOR_NAME: 'Vigil',
  GIT_AUTHOR_EMAIL: 'vigil@vigil.invalid',
  GIT_COMMITTER_NAME: 'Vigil',
  GIT_COMMITTER_EMAIL: 'vigil@vigil.invalid',
};

/** What the git helper needs to make a checkpoint. */
export function checkpointAsk(parent: string | null, ref: string, message: string, prune: readonly string[] = []): CheckpointAsk {
  return { parent, ref, message, prune, env: IDENTITY };
}
