/**
 * Repository inspection: the run-start commit, and after each iteration a content hash of the
 * working tree plus what differs from the run start.
 *
 * The tree hash is the git tree id of the working tree as `git add -A` would stage it, computed
 * with a temporary index so the user's index is never touched. It covers committed, staged,
 * unstaged and untracked-but-not-ignored files, excludes `.vigil/`, and is content-addressed:
 * committing work does not change it, changing a file does.
 */
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { execa } from 'execa';
import {
  FAILURE_TYPES,
  InspectRepoInputSchema,
  PrepareRunInputSchema,
  type InspectRepoInput,
  type PrepareRunInput,
  type PrepareRunResult,
  type RepoSnapshot,
} from '../schemas/activities.js';
import { alwaysHigh, isDependencyManifest } from '../workflows/decisions/tier-ladder.js';
import { ensureRunDir, VIGIL_DIR } from './artifacts.js';
import { createCheckpoint } from './checkpoints.js';
import { readLearnings } from './agent-notes.js';

export const EXCLUDE = `:(exclude)${VIGIL_DIR}`;

export async function git(cwd: string, args: string[], env: Record<string, string> = {}, input?: string): Promise<string> {
  const r = await execa('git', args, {
    cwd,
    env: { ...env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' },
    reject: false,
    stripFinalNewline: true,
    ...(input !== undefined ? { input } : { stdin: 'ignore' as const }),
  });
  if (r.exitCode !== 0) {
    throw new Error(`git ${args.join(' ')} failed in ${cwd} (exit ${r.exitCode}): ${String(r.stderr).trim().slice(0, 1000)}`);
  }
  return String(r.stdout);
}

export async function headSha(cwd: string): Promise<string | null> {
  // `--verify -q` prints nothing for a repository without commits (plain rev-parse prints "HEAD").
  const r = await execa('git', ['rev-parse', '--verify', '-q', 'HEAD^{commit}'], { cwd, reject: false, stdin: 'ignore' });
  const out = String(r.stdout).trim();
  return r.exitCode === 0 && out ? out : null;
}

export async function assertGitRepo(repoPath: string): Promise<void> {
  if (!existsSync(repoPath)) {
    throw ApplicationFailure.create({ type: FAILURE_TYPES.notAGitRepository, nonRetryable: true, message: `repository path does not exist: ${repoPath}` });
  }
  const r = await execa('git', ['rev-parse', '--is-inside-work-tree'], { cwd: repoPath, reject: false, stdin: 'ignore' });
  if (r.exitCode !== 0 || String(r.stdout).trim() !== 'true') {
    throw ApplicationFailure.create({
      type: FAILURE_TYPES.notAGitRepository,
      nonRetryable: true,
      message: `not a git working tree: ${repoPath} (run \`git init\` there, or point --repo at a repository)`,
    });
  }
}

/** Git tree id of the working tree (see the file comment). */
export async function workingTreeHash(repoPath: string): Promise<string> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'vigil-index-'));
  try {
    const tmpIndex = path.join(tmp, 'index');
    const realIndex = path.resolve(repoPath, await git(repoPath, ['rev-parse', '--git-path', 'index']));
    // Starting from a copy of the real index lets git reuse its stat cache instead of rehashing.
    // The copy keeps the original's mtime: git re-reads "racily clean" entries (modified in the
    // same second the index was written) only when the index looks no newer than them.
    if (existsSync(realIndex)) {
      const st = statSync(realIndex);
      copyFileSync(realIndex, tmpIndex);
      utimesSync(tmpIndex, st.atime, st.mtime);
    }
    const env = { GIT_INDEX_FILE: tmpIndex };
    await git(repoPath, ['add', '-A'], env);
    await git(repoPath, ['rm', '-r', '-q', '--cached', '--ignore-unmatch', '--', VIGIL_DIR], env);
    return await git(repoPath, ['write-tree'], env);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Keeps `.vigil/` out of `git status` without touching the user's .gitignore. */
function excludeVigilDir(repoPath: string, excludeFile: string): void {
  const file = path.resolve(repoPath, excludeFile);
  const line = `/${VIGIL_DIR}/`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (current.split('\n').some((l) => l.trim() === line)) return;
  mkdirSync(path.dirname(file), { recursive: true });
  appendFileSync(file, `${current && !current.endsWith('\n') ? '\n' : ''}# Vigil run artifacts\n${line}\n`);
}

export async function prepareRun(raw: PrepareRunInput): Promise<PrepareRunResult> {
  const input = PrepareRunInputSchema.parse(raw);
  await assertGitRepo(input.repoPath);
  excludeVigilDir(input.repoPath, await git(input.repoPath, ['rev-parse', '--git-path', 'info/exclude']));
  const artifactDir = ensureRunDir(input.repoPath, input.runId);
  let prdHigh: string | null = null;
  if (input.prdPath && existsSync(input.prdPath)) prdHigh = alwaysHigh(readFileSync(input.prdPath, 'utf8'));
  const learnings = input.learnings ? readLearnings(input.repoPath).learnings : null;
  return { sha: await headSha(input.repoPath), treeHash: await workingTreeHash(input.repoPath), artifactDir, alwaysHigh: prdHigh, learnings };
}

/** Paths that differ between two trees (`.vigil/` excluded). */
export async function changedPaths(repoPath: string, from: string, to: string): Promise<string[]> {
  return (await git(repoPath, ['diff', '--name-only', '-z', '--no-renames', from, to, '--', '.', EXCLUDE])).split('\0').filter(Boolean);
}

interface NumStat {
  files: string[];
  insertions: number;
  deletions: number;
}

async function numstat(repoPath: string, from: string, to: string): Promise<NumStat> {
  const out = await git(repoPath, ['diff', '--numstat', '-z', '--no-renames', from, to, '--', '.', EXCLUDE]);
  const files: string[] = [];
  let insertions = 0;
  let deletions = 0;
  for (const rec of out.split('\0')) {
    const m = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(rec);
    if (!m) continue;
    files.push(m[3] as string);
    if (m[1] !== '-') insertions += Number(m[1]);
    if (m[2] !== '-') deletions += Number(m[2]);
  }
  return { files, insertions, deletions };
}

export async function inspectRepo(raw: InspectRepoInput): Promise<RepoSnapshot> {
  const input = InspectRepoInputSchema.parse(raw);
  await assertGitRepo(input.repoPath);
  const treeHash = await workingTreeHash(input.repoPath);
  const head = await headSha(input.repoPath);
  // With no run-start commit, everything counts as new: diff against the empty tree.
  const base = input.runStartSha ?? (await git(input.repoPath, ['mktree'], {}, ''));
  const { files, insertions, deletions } = await numstat(input.repoPath, base, treeHash);
  let sinceLast: RepoSnapshot['sinceLast'] = null;
  if (input.previousTree) {
    const prevOk = (await execa('git', ['cat-file', '-e', `${input.previousTree}^{tree}`], { cwd: input.repoPath, reject: false, stdin: 'ignore' })).exitCode === 0;
    if (prevOk) {
      const d = await numstat(input.repoPath, input.previousTree, treeHash);
      sinceLast = { files: d.files.length, lines: d.insertions + d.deletions, manifestChanged: d.files.some(isDependencyManifest), paths: d.files.slice(0, 50) };
    }
  }
  // A tree that changed becomes a checkpoint when the run asks for one.
  const cp = input.checkpoint;
  const checkpoint = cp && treeHash !== input.previousTree ? await createCheckpoint(input.repoPath, treeHash, cp.parent, cp.ref, cp.message, cp.prune) : null;
  return { treeHash, head, changedFiles: files.slice(0, 50), changedCount: files.length, insertions, deletions, sinceLast, checkpoint };
}
