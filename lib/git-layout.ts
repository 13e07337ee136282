/**
 * Where a repository's git lives, as recorded when a run starts, and the check that it is still
 * there before Vigil's git touches the repository again. An agent works inside the repository
 * (the sandbox leaves most of `.git` writable, since its own commits need it), so between two of
 * Vigil's commands it could make git read another repository's configuration and hooks: write a
 * `commondir` into `.git`, replace `.git` with a `gitdir:` file, move `.git` away and put a crafted
 * one in its place, plant hooks, or edit a script or an included file that the repository's own
 * git configuration runs. Vigil records the layout at the run's start (`recordGitLayout`, in its
 * private folder under VIGIL_HOME, which no sandbox shows) and `checkGitLayout` compares it before
 * every command: what changed is moved into `.vigil/quarantine/<time>/` (the original `.git` put
 * back where it can be found), so neither Vigil's git nor the person's next `git status` follows
 * it, and the command is refused with what was found (activities/git-helper.ts). With no record
 * (a repository no run started on), the structure alone is checked and nothing is moved.
 *
 * The commands themselves run with the environment of lib/git-env.ts.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { vigilHome } from '../lib/paths.js';
import { configEnv, FIXED_SETTINGS, noHooksDir, pinnedDirsEnv, readConfig, type ConfigEntry, type GitDirs } from './git-env.js';
import { ensurePrivateDir } from './safe-files.js';

/** The layout of a repository's git, as recorded at a run's start. */
export interface GitLayout extends GitDirs {
  version: 1;
  /** What `.git` in the work tree is, and its identity (device:inode). */
  dotGit: { kind: 'dir' | 'file'; id: string; gitdirLine: string | null };
  gitDirId: string;
  commonDirId: string;
  /** The hooks folder's files: name → size:mtime:inode. */
  hooks: Record<string, string>;
  /** Files in the work tree that the repository's git configuration runs or includes, with their content (at most 64 KiB; null above). */
  protectedFiles: { path: string; why: string; sha256: string; content: string | null }[];
}

/** A layout that is not what git makes, or not what the run started with. */
export class UnsafeGitLayout extends Error {
  constructor(readonly findings: string[]) {
    super(findings.join('; '));
    this.name = 'UnsafeGitLayout';
  }
}

const idOf = (s: Stats): string => `${s.dev}:${s.ino}`;
const stampOf = (s: Stats): string => `${s.size}:${s.mtimeMs}:${s.ino}`;
const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const within = (p: string, dir: string): boolean => p === dir || p.startsWith(dir + path.sep);

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/**
 * The git folders of the work tree `workTree` as git would find them, checked against what git
 * itself makes: `.git` a folder without a `commondir` (only a linked worktree's folder has one),
 * or a `gitdir:` file naming `<common>/worktrees/<name>`, whose `commondir` names `<common>` and
 * whose `gitdir` names this `.git` back. Throws UnsafeGitLayout otherwise.
 */
export function readGitDirs(workTree: string): GitDirs & { dotGit: GitLayout['dotGit'] } {
  const dotGit = path.join(workTree, '.git');
  const st = lstatOrNull(dotGit);
  if (st === null) throw new UnsafeGitLayout([`${dotGit} does not exist`]);
  if (st.isSymbolicLink()) throw new UnsafeGitLayout([`${dotGit} is a symbolic link (git would follow it to another repository)`]);
  if (st.isDirectory()) {
    const gitDir = realpathSync(dotGit);
    if (existsSync(path.join(gitDir, 'commondir')))
      throw new UnsafeGitLayout([
        `${dotGit}/commondir exists: git would take this repository's configuration and hooks from ` +
          `${readText(path.join(gitDir, 'commondir'))}, and only a linked worktree's folder has one`,
      ]);
    return { workTree, gitDir, commonDir: gitDir, dotGit: { kind: 'dir', id: idOf(st), gitdirLine: null } };
  }
  if (!st.isFile()) throw new UnsafeGitLayout([`${dotGit} is neither a folder nor a gitdir file`]);
  const line = readText(dotGit);
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(line);
  if (!m) throw new UnsafeGitLayout([`${dotGit} is a file without a gitdir: line`]);
  const named = path.resolve(workTree, m[1] as string);
  const gitDir = existsSync(named) ? realpathSync(named) : named;
  const commondirFile = path.join(gitDir, 'commondir');
  if (!existsSync(commondirFile))
    throw new UnsafeGitLayout([`${dotGit} names ${gitDir}, which is not a linked worktree's folder (it has no commondir)`]);
  const common = path.resolve(gitDir, readText(commondirFile));
  const commonDir = existsSync(common) ? realpathSync(common) : common;
  if (path.dirname(gitDir) !== path.join(commonDir, 'worktrees'))
    throw new UnsafeGitLayout([`${dotGit} names ${gitDir}, which is not a folder of ${commonDir}/worktrees`]);
  const back = existsSync(path.join(gitDir, 'gitdir')) ? path.resolve(gitDir, readText(path.join(gitDir, 'gitdir'))) : null;
  if (back === null || realpathOr(back) !== realpathOr(dotGit))
    throw new UnsafeGitLayout([`${dotGit} names ${gitDir}, whose gitdir file does not name this work tree back`]);
  return { workTree, gitDir, commonDir, dotGit: { kind: 'file', id: idOf(st), gitdirLine: line.trim().slice(0, 4096) } };
}

function readText(file: string): string {
  return readFileSync(file, 'utf8').slice(0, 4096).trim();
}

function realpathOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function hooksOf(commonDir: string): Record<string, string> {
  const dir = path.join(commonDir, 'hooks');
  const out: Record<string, string> = {};
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const st = lstatOrNull(path.join(dir, name));
    if (st) out[name] = stampOf(st);
  }
  return out;
}

/** Shell-like words of a configured command (quotes stripped), for the files it names. */
function words(command: string): string[] {
  return (command.match(/"[^"]*"|'[^']*'|[^\s"']+/g) ?? []).map((w) => w.replace(/^["']|["']$/g, ''));
}

/** Files of the work tree the repository's configuration runs (driver and command keys) or includes. */
export function protectedPaths(entries: readonly ConfigEntry[], dirs: GitDirs): { path: string; why: string }[] {
  const out = new Map<string, string>();
  for (const e of entries) {
    if (e.scope === 'global' || e.scope === 'system' || e.scope === 'command') continue;
    if (e.file !== null && within(e.file, dirs.workTree)) out.set(e.file, `included by the repository's git configuration`);
    if (!/^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver|core\.fsmonitor|diff\.external)$/.test(e.key))
      continue;
    for (const w of words(e.value)) {
      const p = path.resolve(dirs.workTree, w);
      if (!within(p, dirs.workTree) || within(p, path.join(dirs.workTree, '.git'))) continue;
      const st = lstatOrNull(p);
      if (st?.isFile()) out.set(p, `run by the repository's git configuration (${e.key})`);
    }
  }
  return [...out].map(([p, why]) => ({ path: p, why }));
}

const MAX_KEPT = 64 * 1024;

/** Where the record of a work tree's layout is kept. */
export function layoutRecordPath(workTree: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(vigilHome(env), 'private', 'git-layouts', `${sha256(workTree).slice(0, 32)}.json`);
}

/**
 * Records the layout of `repoPath`'s git (a run starts on it, or Vigil made it a worktree). Makes
 * the hooks folder when there is none, so the sandbox can show it read-only. Throws
 * UnsafeGitLayout for a layout git would not make.
 */
export function recordGitLayout(repoPath: string, env: NodeJS.ProcessEnv = process.env): GitLayout {
  const workTree = realpathSync(repoPath);
  const dirs = readGitDirs(workTree);
  mkdirSync(path.join(dirs.commonDir, 'hooks'), { recursive: true });
  const fixed = [...FIXED_SETTINGS, ['core.hooksPath', noHooksDir(env)] as const];
  const entries = readConfig(dirs, { ...pinnedDirsEnv(dirs), ...configEnv(fixed, env) });
  const layout: GitLayout = {
    version: 1,
    workTree,
    gitDir: dirs.gitDir,
    commonDir: dirs.commonDir,
    dotGit: dirs.dotGit,
    gitDirId: idOf(statSync(dirs.gitDir)),
    commonDirId: idOf(statSync(dirs.commonDir)),
    hooks: hooksOf(dirs.commonDir),
    protectedFiles: protectedPaths(entries, dirs).map(({ path: p, why }) => {
      const b = readFileSync(p);
      return { path: p, why, sha256: sha256(b), content: b.length <= MAX_KEPT ? b.toString('base64') : null };
    }),
  };
  const file = layoutRecordPath(workTree, env);
  ensurePrivateDir(vigilHome(env), path.dirname(file));
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(layout), { mode: 0o600 });
  renameSync(tmp, file);
  records.delete(workTree);
  return layout;
}

const records = new Map<string, { stamp: string; layout: GitLayout | null }>();

/** The recorded layout of a work tree, or null when no run recorded one. */
export function recordedLayout(workTree: string, env: NodeJS.ProcessEnv = process.env): GitLayout | null {
  const file = layoutRecordPath(workTree, env);
  const st = lstatOrNull(file);
  const stamp = st ? stampOf(st) : '-';
  const known = records.get(workTree);
  if (known && known.stamp === stamp) return known.layout;
  let layout: GitLayout | null = null;
  if (st?.isFile()) {
    try {
      layout = JSON.parse(readFileSync(file, 'utf8')) as GitLayout;
    } catch {
      layout = null;
    }
  }
  records.set(workTree, { stamp, layout });
  return layout;
}
