/**
 * The changed files as the static-analysis gate (activities/gates/static-analysis.ts) sees them:
 * repository-relative, existing, sorted, grouped by the checker that fits their language (a shell
 * script without an extension is known by its first line) and by the folder that configures them,
 * and handed to a tool in batches, never as an option.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';

const JS_EXT = new Set(['.js', '.jsx', '.mjs', '.cjs', '.ts', '.tsx', '.mts', '.cts']);
/** Files per tool invocation: a command line stays well under the system's limit. */
const BATCH = 200;

/** `p` (relative to `base`, or absolute) as a repository-relative POSIX path; null when outside the repository. */
export function repoRelative(repoPath: string, base: string, p: string): string | null {
  const rel = path.relative(repoPath, path.resolve(base, p));
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return rel.split(path.sep).join('/');
}

export function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Shell scripts without an extension are recognised by their first line. */
export function hasShellShebang(abs: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(abs, 'r');
    const buf = Buffer.alloc(128);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const first = buf.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
    return /^#!\s{0,4}(?:\/usr)?\/bin\/(?:env\s{1,4})?(?:ba)?sh(?:\s|$)/.test(first);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Guards a file name from being read as an option by a tool. */
export const asArg = (f: string): string => (f.startsWith('-') ? `./${f}` : f);

export function batches<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}

/** The nearest directory from `file`'s folder up to the repository root that holds `marker`. */
export function nearestWith(repoPath: string, file: string, marker: string): string | null {
  let dir = path.dirname(path.join(repoPath, file));
  for (;;) {
    if (existsSync(path.join(dir, marker))) return dir;
    if (path.resolve(dir) === path.resolve(repoPath)) return null;
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

export function groupBy(files: readonly string[], key: (f: string) => string | null): { groups: Map<string, string[]>; none: string[] } {
  const groups = new Map<string, string[]>();
  const none: string[] = [];
  for (const f of files) {
    const k = key(f);
    if (k === null) none.push(f);
    else groups.set(k, [...(groups.get(k) ?? []), f]);
  }
  return { groups, none };
}

export function classify(
  repoPath: string,
  files: readonly string[],
): { js: string[]; py: string[]; sh: string[]; go: string[]; rs: string[] } {
  const kinds = { js: [] as string[], py: [] as string[], sh: [] as string[], go: [] as string[], rs: [] as string[] };
  for (const f of files) {
    const ext = path.extname(f);
    if (JS_EXT.has(ext)) kinds.js.push(f);
    else if (ext === '.py') kinds.py.push(f);
    else if (ext === '.sh' || ext === '.bash') kinds.sh.push(f);
    else if (ext === '.go') kinds.go.push(f);
    else if (ext === '.rs') kinds.rs.push(f);
    else if (ext === '' && hasShellShebang(path.join(repoPath, f))) kinds.sh.push(f);
  }
  return kinds;
}

/** The changed files that exist, as sorted unique repository-relative paths (`.vigil/` and paths outside the repo dropped). */
export function normalizeFiles(repoPath: string, files: readonly string[]): string[] {
  const out = new Set<string>();
  for (const f of files) {
    const rel = repoRelative(repoPath, repoPath, f);
    if (!rel || rel === '.vigil' || rel.startsWith('.vigil/')) continue;
    if (isFile(path.join(repoPath, rel))) out.add(rel);
  }
  return [...out].sort();
}
