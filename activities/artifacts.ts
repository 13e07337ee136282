/**
 * Where a run keeps its files inside the repository: `.vigil/runs/<workflowId>/` holds prompts,
 * per-iteration agent logs and test logs; `.vigil/signals/` holds files agents write to talk to
 * Vigil. `.vigil/` is excluded from tree hashes and diffs and added to `.git/info/exclude`.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { runDirPath, safeSegment, VIGIL_DIR } from '../schemas/paths.js';

export { safeSegment, VIGIL_DIR };

export function runDir(repoPath: string, runId: string): string {
  return path.normalize(runDirPath(repoPath, runId));
}

export function ensureRunDir(repoPath: string, runId: string): string {
  const dir = runDir(repoPath, runId);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function signalPath(repoPath: string, name: string): string {
  return path.join(repoPath, VIGIL_DIR, 'signals', name);
}

export const pad = (n: number): string => String(n).padStart(4, '0');
