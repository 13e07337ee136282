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
import {
  InspectRepoInputSchema,
  PrepareRunInputSchema,
  type InspectRepoInput,
  type PrepareRunInput,
  type PrepareRunResult,
  type RepoSnapshot,
} from '../schemas/activities.js';
import { alwaysHigh, isDependencyManifest } from '../rules/tier-ladder.js';
import { structuralFacts } from '../rules/structural-change.js';
import { sensitivePaths } from '../rules/notify-triggers.js';
import { ensureRunDir, VIGIL_DIR } from './artifacts.js';
import { helperInspect, unsafeGit } from './git-helper.js';
import { recordGitLayout, UnsafeGitLayout } from '../lib/git-layout.js';
import { checkGitLayout, moveAside, takePendingFindings } from '../lib/git-quarantine.js';
import { assertGitRepo, checkpointAsk, git, headSha, missingRepository, notAGitRepository, workingTreeHash } from './git.js';
import { readLearnings } from './agent-notes.js';
import { keepStartAppCheck } from './gates/product-checks.js';
import { storeNote } from './prompt-memory.js';
import { measureRepository } from './repo-measure.js';

/** The working tree's hash lives with the other git primitives (git.ts); re-exported for the tests that read it from here. */
export { workingTreeHash } from './git.js';

/** Keeps `.vigil/` out of `git status` without touching the user's .gitignore. */
/**
 * Kept out of the tree hash, the evidence diff and any commit, in `.git/info/exclude` (never the
 * user's .gitignore): Vigil's own folder, and the repository map aider writes even for a
 * read-only call (its chat histories go beside the prompt instead, lib/providers/aider.ts).
 */
const EXCLUDED = [
  { line: `/${VIGIL_DIR}/`, why: '# Vigil run artifacts' },
  { line: '/.aider.tags.cache.v*/', why: "# aider's repository map (an agent CLI's cache)" },
];

function excludeVigilDir(repoPath: string, excludeFile: string): void {
  const file = path.resolve(repoPath, excludeFile);
  let current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const present = new Set(current.split('\n').map((l) => l.trim()));
  for (const { line, why } of EXCLUDED) {
    if (present.has(line)) continue;
    mkdirSync(path.dirname(file), { recursive: true });
    const add = `${current && !current.endsWith('\n') ? '\n' : ''}${why}\n${line}\n`;
    appendFileSync(file, add);
    current += add;
  }
}

function recordLayoutOrRefuse(repoPath: string): void {
  try {
    recordGitLayout(repoPath);
  } catch (err) {
    if (err instanceof UnsafeGitLayout)
      throw unsafeGit(repoPath, [
        ...err.findings,
        'Vigil does not start a run on it: put the repository right (git itself never makes this), then start again',
      ]);
    throw err;
  }
}

export async function prepareRun(raw: PrepareRunInput): Promise<PrepareRunResult> {
  const input = PrepareRunInputSchema.parse(raw);
  // The layout of the repository's git as the run finds it: what every later git command of the
  // run checks first (lib/git-layout.ts). One git would not make is refused here.
  if (existsSync(path.join(input.repoPath, '.git'))) recordLayoutOrRefuse(input.repoPath);
  await assertGitRepo(input.repoPath);
  excludeVigilDir(input.repoPath, await git(input.repoPath, ['rev-parse', '--git-path', 'info/exclude']));
  const artifactDir = ensureRunDir(input.repoPath, input.runId);
  // The app check file as the run starts, before any agent call: the copy the app check runs.
  keepStartAppCheck(input.repoPath, input.runId);
  let prdHigh: string | null = null;
  if (input.prdPath && existsSync(input.prdPath)) prdHigh = alwaysHigh(readFileSync(input.prdPath, 'utf8'));
  const learnings = input.learnings ? readLearnings(input.repoPath).learnings : null;
  // By reference, the text stays in the run's prompt-parts store (activities/prompt-memory.ts).
  const byRef = input.learningsByRef === true;
  return {
    sha: await headSha(input.repoPath),
    treeHash: await workingTreeHash(input.repoPath),
    artifactDir,
    alwaysHigh: prdHigh,
    learnings: byRef ? null : learnings,
    learningsRef: byRef ? storeNote(input.repoPath, input.runId, learnings) : null,
    measure: input.measure ? await measureRepository(input.repoPath, input.prdPath) : null,
  };
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

/**
 * A repository the agent made inside the run's (a folder of the diff with a `.git` of its own, not
 * a submodule the run started with) is never committed as a gitlink: git would run that nested
 * repository's configuration (its fsmonitor, its filters) for whoever checks the gitlink's state
 * later. Its `.git` is moved aside (`.vigil/quarantine/`), so its files count as plain files, and
 * the inspection is refused with what was found.
 */
async function refuseNestedRepositories(repoPath: string, files: readonly string[], runStartSha: string | null): Promise<void> {
  const nested = files.filter((f) => f !== '.git' && !f.endsWith('/.git') && existsSync(path.join(repoPath, f, '.git')));
  const box: { dir: string | null } = { dir: null };
  const findings: string[] = [];
  for (const f of nested) {
    if (runStartSha !== null && /^160000 /.test(await git(repoPath, ['ls-tree', runStartSha, '--', f]).catch(() => ''))) continue;
    const to = moveAside(repoPath, path.join(repoPath, f, '.git'), `nested-${f.replace(/[/\\]/g, '__')}.git`, box);
    findings.push(`${f} is a git repository of its own (its .git moved to ${to}; its files stay, as plain files)`);
  }
  if (findings.length > 0) throw unsafeGit(repoPath, findings);
}

/**
 * The inspection reports every change to the repository's git that Vigil moved aside since the
 * last one (lib/git-quarantine.ts): found now, or by a command of another activity.
 */
function refuseGitChanges(repoPath: string): void {
  try {
    checkGitLayout(repoPath);
  } catch (err) {
    if (err instanceof UnsafeGitLayout) throw unsafeGit(repoPath, err.findings);
    throw err;
  }
  const findings = takePendingFindings(repoPath);
  if (findings.length > 0) throw unsafeGit(repoPath, findings);
}

/** The inspection after an iteration: one round trip to the git helper. */
export async function inspectRepo(raw: InspectRepoInput): Promise<RepoSnapshot> {
  return (await inspectRepoChanges(raw)).snapshot;
}

/**
 * The inspection, with every path changed since the previous tree (null when that tree is unknown or gone): the gate pass
 * after an agent call needs no diff of its own.
 */
export async function inspectRepoChanges(
  raw: InspectRepoInput,
): Promise<{ snapshot: RepoSnapshot; sinceLastPaths: string[] | null; sinceStartPaths: string[] }> {
  const input = InspectRepoInputSchema.parse(raw);
  if (!existsSync(input.repoPath)) throw missingRepository(input.repoPath);
  refuseGitChanges(input.repoPath);
  const cp = input.checkpoint;
  const r = await helperInspect(
    input.repoPath,
    input.runStartSha,
    input.previousTree ?? null,
    cp ? checkpointAsk(cp.parent, cp.ref, cp.message, cp.prune) : null,
  );
  if (!r.repo || r.treeHash === undefined) throw notAGitRepository(input.repoPath);
  const { files, insertions, deletions } = parseNumstat(r.sinceStart ?? '');
  await refuseNestedRepositories(input.repoPath, files, input.runStartSha);
  let sinceLast: RepoSnapshot['sinceLast'] = null;
  let sinceLastPaths: string[] | null = null;
  if (input.previousTree && typeof r.sinceLast === 'string') {
    const d = parseNumstat(r.sinceLast);
    sinceLastPaths = d.files;
    // Only when the change says something about its structure: most iterations carry none.
    const structural = structuralFacts(d.files);
    const says = structural.corePaths.length + structural.contracts.length + structural.services.length > 0;
    // Every changed path is looked at, not only the 50 the snapshot names.
    const sensitive = sensitivePaths(d.files);
    sinceLast = {
      files: d.files.length,
      lines: d.insertions + d.deletions,
      manifestChanged: d.files.some(isDependencyManifest),
      paths: d.files.slice(0, 50),
      ...(says ? { structural } : {}),
      ...(sensitive.length ? { sensitive } : {}),
    };
  }
  // A tree that changed became a checkpoint when the run asked for one.
  const checkpoint = cp && typeof r.checkpoint === 'string' ? { commit: r.checkpoint, ref: cp.ref } : null;
  return {
    snapshot: {
      treeHash: r.treeHash,
      head: r.head ?? null,
      changedFiles: files.slice(0, 50),
      changedCount: files.length,
      insertions,
      deletions,
      sinceLast,
      checkpoint,
    },
    sinceLastPaths,
    sinceStartPaths: files,
  };
}
