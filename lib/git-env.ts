/**
 * The environment every git command Vigil runs on a repository gets, so that none of them runs
 * code the repository (and so the agent working in it) controls:
 *
 * - the git folders and the work tree pinned (`GIT_DIR`, `GIT_COMMON_DIR`, `GIT_WORK_TREE`) to
 *   what lib/git-layout.ts checked, so a `.git` file, a `commondir` or a moved `.git`
 *   written since is never followed;
 * - configuration on top of every file (`GIT_CONFIG_COUNT`, which git also hands to the git it
 *   starts inside nested repositories): no hooks (`core.hooksPath` an empty folder of Vigil's),
 *   no fsmonitor, no recursion into submodules or nested repositories, no `ext::` transport, no
 *   background gc or maintenance, no signing, `safe.directory` the repository itself;
 * - the commands of the repository's own configuration neutralised where git would run them on
 *   its own during an add, a status or a diff: every filter driver (clean, smudge, process), diff
 *   driver (textconv, command) and merge driver defined in the repository's configuration (or a
 *   file it includes), and every other command-running key that comes from a file the agent can
 *   write (an include inside the work tree or the git folder). The operator's own configuration
 *   (system, global) is kept: a git-lfs installed there still runs, as it would for them.
 *
 * The result is cached per repository and computed again when one of its configuration files
 * changes (their sizes and times). No git command here runs anything: reading configuration
 * executes nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { vigilHome } from '../lib/paths.js';

/** Where git keeps a repository (as lib/git-layout.ts read it). */
export interface GitDirs {
  workTree: string;
  gitDir: string;
  commonDir: string;
}

/** Settings every command gets, whatever the repository says. */
export const FIXED_SETTINGS: readonly (readonly [string, string])[] = [
  ['core.fsmonitor', 'false'],
  ['core.untrackedCache', 'false'],
  ['submodule.recurse', 'false'],
  ['diff.ignoreSubmodules', 'dirty'],
  ['status.submoduleSummary', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['push.recurseSubmodules', 'no'],
  ['protocol.ext.allow', 'never'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
];

/** Driver keys git runs by itself (an add, a status, a diff, a merge): neutralised when the repository defines them. */
const DRIVER_KEY = /^(filter\.[^\n]+\.(clean|smudge|process)|diff\.[^\n]+\.(textconv|command)|merge\.[^\n]+\.driver)$/i;

/** Keys whose value is a command git may run: neutralised when they come from a file the agent can write. */
const COMMAND_KEY = new RegExp(
  String.raw`^(${[
    /core\.(fsmonitor|hookspath|sshcommand|gitproxy|askpass|editor|pager|alternaterefscommand)|sequence\.editor/.source,
    /gpg(\.[^.\n]+)?\.program|credential(\.[^\n]+)?\.helper|remote\.[^\n]+\.(receivepack|uploadpack|vcs)/.source,
    /diff\.external|pager\.[^\n]+|include(if\.[^\n]+)?\.path/.source,
  ].join('|')})$`,
  'i',
);

/** One entry of `git config --list --show-scope --show-origin -z`. */
export interface ConfigEntry {
  scope: string;
  /** The file it came from (absolute), or null for the command line, a blob or standard input. */
  file: string | null;
  key: string;
  value: string;
}

/** Parses `git config --list --show-scope --show-origin -z` (scope NUL origin NUL key LF value NUL). */
export function parseConfigList(out: string, cwd: string): ConfigEntry[] {
  const parts = out.split('\0');
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 2 < parts.length; i += 3) {
    const scope = parts[i] as string;
    const origin = parts[i + 1] as string;
    const kv = parts[i + 2] as string;
    const nl = kv.indexOf('\n');
    const key = (nl < 0 ? kv : kv.slice(0, nl)).toLowerCase();
    const value = nl < 0 ? '' : kv.slice(nl + 1);
    const file = origin.startsWith('file:') ? path.resolve(cwd, origin.slice('file:'.length)) : null;
    entries.push({ scope, file, key, value });
  }
  return entries;
}

const within = (p: string, dir: string): boolean => p === dir || p.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/**
 * The files of a repository's configuration the agent cannot write: the sandbox shows them
 * read-only (activities/sandbox.ts, `gitControl`). Any other file inside the work tree or the
 * git folders (an include) is the agent's to change.
 */
export function trustedConfigFiles(dirs: GitDirs): string[] {
  return [path.join(dirs.commonDir, 'config'), path.join(dirs.commonDir, 'config.worktree'), path.join(dirs.gitDir, 'config.worktree')];
}

/** Whether an entry comes from a file the agent may have written. */
export function agentWritable(entry: ConfigEntry, dirs: GitDirs): boolean {
  if (entry.file === null) return false;
  if (trustedConfigFiles(dirs).includes(entry.file)) return false;
  return within(entry.file, dirs.workTree) || within(entry.file, dirs.gitDir) || within(entry.file, dirs.commonDir);
}

/** The overrides for a repository's configuration entries (see the file comment). */
export function neutralisedSettings(entries: readonly ConfigEntry[], dirs: GitDirs): [string, string][] {
  const out = new Map<string, string>();
  for (const e of entries) {
    const repositorys = e.scope === 'local' || e.scope === 'worktree' || agentWritable(e, dirs);
    if (repositorys && DRIVER_KEY.test(e.key)) out.set(e.key, '');
    else if (agentWritable(e, dirs) && COMMAND_KEY.test(e.key) && !/^include/.test(e.key)) out.set(e.key, '');
    if (repositorys && /^filter\.[^\n]+\.clean$/.test(e.key)) out.set(e.key.replace(/clean$/, 'required'), 'false');
  }
  return [...out];
}

/** The empty folder every command's hooks are looked for in (Vigil's own, outside every repository). */
export function noHooksDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = path.join(vigilHome(env), 'git', 'no-hooks');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** `GIT_CONFIG_COUNT` and its pairs for `settings`, after any the worker's own environment sets (later pairs win). */
export function configEnv(settings: readonly (readonly [string, string])[], base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const start = Number(base.GIT_CONFIG_COUNT ?? 0);
  const first = Number.isInteger(start) && start > 0 ? start : 0;
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(first + settings.length) };
  settings.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${first + i}`] = k;
    env[`GIT_CONFIG_VALUE_${first + i}`] = v;
  });
  return env;
}

/** The pinned folders, as environment variables. */
export function pinnedDirsEnv(dirs: GitDirs): Record<string, string> {
  return { GIT_DIR: dirs.gitDir, GIT_COMMON_DIR: dirs.commonDir, GIT_WORK_TREE: dirs.workTree };
}

/** Per work tree: the configuration files read (their stamp says when to read them again) and the environment made of them. */
const cache = new Map<string, { files: string[]; stamp: string; gitDir: string; env: Record<string, string> }>();

function stampOf(files: readonly string[]): string {
  return files
    .map((f) => {
      try {
        const s = statSync(f);
        return `${s.size}:${s.mtimeMs}:${s.ino}`;
      } catch {
        return '-';
      }
    })
    .join('|');
}

/** Reads the repository's whole configuration (nothing runs), with the folders pinned. */
export function readConfig(dirs: GitDirs, base: Record<string, string>): ConfigEntry[] {
  const r = spawnSync('git', ['config', '--list', '--show-scope', '--show-origin', '-z'], {
    cwd: dirs.workTree,
    env: { ...process.env, ...base, GIT_TERMINAL_PROMPT: '0' },
    encoding: 'utf8',
    timeout: 30_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.status !== 0)
    throw new Error(`git config --list failed in ${dirs.workTree}: ${(r.stderr || r.error?.message || '').trim().slice(0, 500)}`);
  return parseConfigList(r.stdout, dirs.workTree);
}

/**
 * The environment for git commands on the repository of `dirs` (see the file comment), computed
 * again when one of the repository's configuration files (or a file they include) changes.
 */
export function safeGitEnv(dirs: GitDirs, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const fixed: (readonly [string, string])[] = [...FIXED_SETTINGS, ['core.hooksPath', noHooksDir(env)], ['safe.directory', dirs.workTree]];
  const known = cache.get(dirs.workTree);
  if (known && known.gitDir === dirs.gitDir && known.stamp === stampOf(known.files)) return known.env;
  const entries = readConfig(dirs, { ...pinnedDirsEnv(dirs), ...configEnv(fixed, env) });
  const repositoryFiles = entries.flatMap((e) => (e.file !== null && e.scope !== 'global' && e.scope !== 'system' ? [e.file] : []));
  const files = [...new Set([...trustedConfigFiles(dirs), ...repositoryFiles])];
  const safe = { ...pinnedDirsEnv(dirs), ...configEnv([...fixed, ...neutralisedSettings(entries, dirs)], env) };
  cache.set(dirs.workTree, { files, stamp: stampOf(files), gitDir: dirs.gitDir, env: safe });
  return safe;
}

/** Forgets what was computed (tests). */
export function forgetGitEnvs(): void {
  cache.clear();
}
