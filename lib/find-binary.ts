/**
 * Where a tool a check runs is installed: the repository's own pinned copy first, then the PATH.
 * Used by the gates (activities/gates/) and by `vigil doctor` / `vigil try` before a first run.
 */
import path from 'node:path';
import { isExecutableFile } from './providers/probe.js';

/**
 * The absolute path of `name`: `<repoPath>/node_modules/.bin/<name>` when it exists (the version the
 * project pinned), else the first match in `pathEnv` (default: the worker's PATH). Relative PATH
 * entries are skipped so that the checked repository cannot plant a binary through `.` in PATH.
 * Null when the tool is not installed: the caller reports it, it never downloads it.
 */
export function findBinary(name: string, repoPath?: string, pathEnv: string | undefined = process.env.PATH): string | null {
  if (repoPath) {
    const local = path.join(repoPath, 'node_modules', '.bin', name);
    if (isExecutableFile(local)) return local;
  }
  for (const dir of (pathEnv ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}
