/**
 * Git primitives shared by the repository activities (repo.ts, checkpoints.ts, evidence, gates,
 * handoff, review): a checked git command, object and HEAD lookups, the working tree's hash, the
 * paths between two trees, and what the git helper needs to make a checkpoint. Every command runs
 * in the worker's git helper (activities/git-helper.ts), never spawned from the worker itself.
 */
import { existsSync } from 'node:fs';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../schemas/activities.js';
import { VIGIL_DIR } from './artifacts.js';
import { helperTreeHash, runGit, type CheckpointAsk } from './git-helper.js';

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

export function notAGitRepository(repoPath: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.notAGitRepository,
    nonRetryable: true,
    message: `not a git working tree: ${repoPath} (run \`git init\` there, or point --repo at a repository)`,
  });
}

export function missingRepository(repoPath: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.notAGitRepository,
    nonRetryable: true,
    message: `repository path does not exist: ${repoPath}`,
  });
}

export async function assertGitRepo(repoPath: string): Promise<void> {
  if (!existsSync(repoPath)) throw missingRepository(repoPath);
  const r = await runGit(repoPath, ['rev-parse', '--is-inside-work-tree']);
  if (r.exitCode !== 0 || r.stdout.trim() !== 'true') throw notAGitRepository(repoPath);
}

/** Git tree id of the working tree (see the file comment of activities/repo.ts; computed in the git helper). */
export async function workingTreeHash(repoPath: string): Promise<string> {
  return helperTreeHash(repoPath);
}

/** Paths that differ between two trees (`.vigil/` excluded). */
export async function changedPaths(repoPath: string, from: string, to: string): Promise<string[]> {
  return (await git(repoPath, ['diff', '--name-only', '-z', '--no-renames', from, to, '--', '.', EXCLUDE])).split('\0').filter(Boolean);
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
