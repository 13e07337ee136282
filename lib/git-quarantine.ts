/**
 * The check before each of Vigil's git commands that a repository's git is where its run found it
 * (lib/git-layout.ts records it): what an agent changed is moved into
 * `.vigil/quarantine/<time>/` and the original put back where it can be, and the findings say what
 * was found and done. Vigil's git then refuses the command (activities/git-helper.ts); a person's
 * own git finds the repository as it was.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import type { GitDirs } from './git-env.js';
import { layoutRecordPath, readGitDirs, recordedLayout, UnsafeGitLayout, type GitLayout } from './git-layout.js';
import { ensurePrivateDir } from './safe-files.js';

const idOf = (s: Stats): string => `${s.dev}:${s.ino}`;
const stampOf = (s: Stats): string => `${s.size}:${s.mtimeMs}:${s.ino}`;

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

function statId(p: string): string | null {
  try {
    return idOf(statSync(p));
  } catch {
    return null;
  }
}

let quarantines = 0;

/** A new folder under the work tree's `.vigil/quarantine/` for what is moved out of the way. */
export function quarantineDir(workTree: string, now: Date = new Date()): string {
  quarantines += 1;
  const name = `${now.toISOString().replace(/[:.]/g, '-')}-${process.pid}-${quarantines}`;
  return ensurePrivateDir(workTree, path.join(workTree, '.vigil', 'quarantine', name));
}

/** Moves `what` into the quarantine folder (made on first use); returns where it went, relative to the work tree. */
export function moveAside(workTree: string, what: string, as: string, box: { dir: string | null }): string {
  box.dir ??= quarantineDir(workTree);
  const to = path.join(box.dir, as);
  renameSync(what, to);
  return path.relative(workTree, to);
}

/** Where the agent put the recorded `.git` folder, if it is still near: an entry of the work tree, or of one of its folders. */
function findById(workTree: string, id: string): string | null {
  const look = (dir: string, depth: number): string | null => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return null;
    }
    for (const name of names) {
      const p = path.join(dir, name);
      const st = lstatOrNull(p);
      if (!st?.isDirectory()) continue;
      if (idOf(st) === id) return p;
      if (depth > 0 && name !== 'node_modules' && name !== '.vigil') {
        const hit = look(p, depth - 1);
        if (hit) return hit;
      }
    }
    return null;
  };
  return look(workTree, 1);
}

/** Puts `.git` back as the record says it was; a finding says what happened. */
function restoreDotGit(workTree: string, rec: GitLayout, box: { dir: string | null }): string {
  const dotGit = path.join(workTree, '.git');
  const moved = lstatOrNull(dotGit) !== null ? moveAside(workTree, dotGit, 'dot-git', box) : null;
  const was = moved ? `its replacement moved to ${moved}` : 'nothing was in its place';
  if (rec.dotGit.kind === 'file' && rec.dotGit.gitdirLine !== null) {
    writeFileSync(dotGit, `${rec.dotGit.gitdirLine}\n`);
    return `.git was changed (${was}); the worktree's gitdir file is written back`;
  }
  const original = findById(workTree, rec.dotGit.id);
  if (original === null)
    return `.git is not the repository's git folder the run started with (${was}), and that folder was not found: restore it from a backup`;
  renameSync(original, dotGit);
  return `.git was replaced (${was}); the original, found at ${path.relative(workTree, original)}, is back`;
}

/**
 * Checks the work tree's git against its record (or, without one, its structure), moving what the
 * agent changed out of the way. `dirs`: the folders to pin git to (null: not a repository Vigil
 * knows, leave git to say so); `findings`: what was found and done, empty when nothing was.
 */
export function checkGitLayout(repoPath: string): { dirs: GitDirs | null; findings: string[] } {
  if (!existsSync(repoPath)) return { dirs: null, findings: [] };
  const workTree = realpathSync(repoPath);
  const rec = recordedLayout(workTree);
  if (rec === null) {
    if (lstatOrNull(path.join(workTree, '.git')) === null) return { dirs: null, findings: [] };
    const cur = readGitDirs(workTree); // throws UnsafeGitLayout: nothing to compare with, nothing moved
    return { dirs: cur, findings: [] };
  }
  const findings: string[] = [];
  const box: { dir: string | null } = { dir: null };
  let cur: ReturnType<typeof readGitDirs> | null = null;
  try {
    cur = readGitDirs(workTree);
  } catch (err) {
    if (!(err instanceof UnsafeGitLayout)) throw err;
    const commondir = path.join(workTree, '.git', 'commondir');
    const st = lstatOrNull(path.join(workTree, '.git'));
    if (st?.isDirectory() && idOf(st) === rec.dotGit.id && existsSync(commondir))
      findings.push(
        `.git/commondir was written (${readFileSync(commondir, 'utf8').trim().slice(0, 200)}); moved to ${moveAside(workTree, commondir, 'commondir', box)}`,
      );
    else findings.push(restoreDotGit(workTree, rec, box));
  }
  if (cur !== null && (cur.dotGit.id !== rec.dotGit.id || cur.gitDir !== rec.gitDir || cur.commonDir !== rec.commonDir))
    findings.push(restoreDotGit(workTree, rec, box));
  if (statId(rec.gitDir) !== rec.gitDirId || statId(rec.commonDir) !== rec.commonDirId)
    findings.push(`the git folders the run started with (${rec.gitDir}) are gone or replaced: restore them from a backup`);
  findings.push(...checkHooks(workTree, rec, box));
  findings.push(...checkProtectedFiles(workTree, rec, box));
  if (findings.length > 0) notePending(workTree, findings);
  return { dirs: { workTree, gitDir: rec.gitDir, commonDir: rec.commonDir }, findings };
}

/**
 * Findings not yet reported by an inspection. Whatever command met the change refuses it, but an
 * activity may not surface a refusal (a reviewer's tree check tolerates a failed git): the next
 * inspection of the run's repository takes them (`takePendingFindings`) and refuses with them,
 * so the run always hears of it.
 */
function pendingPath(workTree: string): string {
  return layoutRecordPath(workTree).replace(/\.json$/, '.pending.json');
}

function notePending(workTree: string, findings: readonly string[]): void {
  const file = pendingPath(workTree);
  let known: string[] = [];
  try {
    known = JSON.parse(readFileSync(file, 'utf8')) as string[];
  } catch {
    known = [];
  }
  writeFileSync(file, JSON.stringify([...known, ...findings].slice(-50)), { mode: 0o600 });
}

/** The findings no inspection reported yet (and forgets them). */
export function takePendingFindings(repoPath: string): string[] {
  if (!existsSync(repoPath)) return [];
  const file = pendingPath(realpathSync(repoPath));
  try {
    const found = JSON.parse(readFileSync(file, 'utf8')) as string[];
    rmSync(file, { force: true });
    return Array.isArray(found) ? found.map(String) : [];
  } catch {
    return [];
  }
}

/** Hooks planted or changed since the run started: moved out of the way. */
function checkHooks(workTree: string, rec: GitLayout, box: { dir: string | null }): string[] {
  const dir = path.join(rec.commonDir, 'hooks');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const st = lstatOrNull(path.join(dir, name));
    if (!st || rec.hooks[name] === stampOf(st)) continue;
    out.push(
      `the hook ${name} was ${rec.hooks[name] ? 'changed' : 'planted'}; moved to ${moveAside(workTree, path.join(dir, name), `hook-${name}`, box)}`,
    );
  }
  return out;
}

/**
 * Files of the work tree that the repository's git configuration runs or includes, changed since
 * the run started: the agent's version is moved aside and the original written back (a file too
 * large to have been kept is moved aside only).
 */
export function checkProtectedFiles(workTree: string, rec: GitLayout, box: { dir: string | null } = { dir: null }): string[] {
  const out: string[] = [];
  for (const f of rec.protectedFiles) {
    let now: Buffer | null = null;
    try {
      now = readFileSync(f.path);
    } catch {
      now = null;
    }
    if (now !== null && createHash('sha256').update(now).digest('hex') === f.sha256) continue;
    const rel = path.relative(workTree, f.path);
    const aside =
      now !== null ? `; the agent's version moved to ${moveAside(workTree, f.path, `file-${rel.replace(/[/\\]/g, '__')}`, box)}` : '';
    if (f.content !== null) writeFileSync(f.path, Buffer.from(f.content, 'base64'));
    out.push(
      `${rel}, ${f.why}, was ${now === null ? 'removed' : 'changed'}${f.content !== null ? '; written back as the run found it' : ''}${aside}`,
    );
  }
  return out;
}
