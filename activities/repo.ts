/**
 * Repository inspection: the run-start commit, and after each iteration a content hash of the
 * working tree plus what differs from the run start.
 *
 * The tree hash is the git tree id of the working tree as `git add -A` would stage it, computed
 * with a temporary index so the user's index is never touched. It covers committed, staged,
 * unstaged and untracked-but-not-ignored files, excludes `.vigil/`, and is content-addressed:
 * committing work does not change it, changing a file does.
 *
 * Every git command runs in the worker's git helper (activities/git-helper.ts, a small long-lived
 * process), never spawned from the worker itself; an iteration's inspection is one round trip.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
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
import { checkpointAsk } from './checkpoints.js';
import { helperInspect, helperTreeHash, runGit } from './git-helper.js';
import { readLearnings } from './agent-notes.js';
import { storeNote } from './prompt-memory.js';

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

function notAGitRepository(repoPath: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.notAGitRepository,
    nonRetryable: true,
    message: `not a git working tree: ${repoPath} (run \`git init\` there, or point --repo at a repository)`,
  });
}

function missingRepository(repoPath: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FAILURE_TYPES.notAGitRepository, nonRetryable: true, message: `repository path does not exist: ${repoPath}` });
}

export async function assertGitRepo(repoPath: string): Promise<void> {
  if (!existsSync(repoPath)) throw missingRepository(repoPath);
  const r = await runGit(repoPath, ['rev-parse', '--is-inside-work-tree']);
  if (r.exitCode !== 0 || r.stdout.trim() !== 'true') throw notAGitRepository(repoPath);
}

/** Git tree id of the working tree (see the file comment; computed in the git helper). */
export async function workingTreeHash(repoPath: string): Promise<string> {
  return helperTreeHash(repoPath);
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
  // By reference, the text stays in the run's prompt-parts store (activities/prompt-memory.ts).
  const byRef = input.learningsByRef === true;
  return { sha: await headSha(input.repoPath), treeHash: await workingTreeHash(input.repoPath), artifactDir, alwaysHigh: prdHigh, learnings: byRef ? null : learnings, learningsRef: byRef ? storeNote(input.repoPath, input.runId, learnings) : null };
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

/** Reads `git diff --numstat -z` output. */
function parseNumstat(out: string): NumStat {
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

/** The inspection after an iteration: one round trip to the git helper. */
export async function inspectRepo(raw: InspectRepoInput): Promise<RepoSnapshot> {
  return (await inspectRepoChanges(raw)).snapshot;
}

/** The inspection, with every path changed since the previous tree (null when that tree is unknown or gone): the gate pass after an agent call needs no diff of its own. */
export async function inspectRepoChanges(raw: InspectRepoInput): Promise<{ snapshot: RepoSnapshot; sinceLastPaths: string[] | null }> {
  const input = InspectRepoInputSchema.parse(raw);
  if (!existsSync(input.repoPath)) throw missingRepository(input.repoPath);
  const cp = input.checkpoint;
  const r = await helperInspect(input.repoPath, input.runStartSha, input.previousTree ?? null, cp ? checkpointAsk(cp.parent, cp.ref, cp.message, cp.prune) : null);
  if (!r.repo || r.treeHash === undefined) throw notAGitRepository(input.repoPath);
  const { files, insertions, deletions } = parseNumstat(r.sinceStart ?? '');
  let sinceLast: RepoSnapshot['sinceLast'] = null;
  let sinceLastPaths: string[] | null = null;
  if (input.previousTree && typeof r.sinceLast === 'string') {
    const d = parseNumstat(r.sinceLast);
    sinceLastPaths = d.files;
    sinceLast = { files: d.files.length, lines: d.insertions + d.deletions, manifestChanged: d.files.some(isDependencyManifest), paths: d.files.slice(0, 50) };
  }
  // A tree that changed became a checkpoint when the run asked for one.
  const checkpoint = cp && typeof r.checkpoint === 'string' ? { commit: r.checkpoint, ref: cp.ref } : null;
  return { snapshot: { treeHash: r.treeHash, head: r.head ?? null, changedFiles: files.slice(0, 50), changedCount: files.length, insertions, deletions, sinceLast, checkpoint }, sinceLastPaths };
}
