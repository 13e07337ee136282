/**
 * The acceptance role's call (knob `acceptanceFromPrd`; docs/agent-contract.md), as the agent
 * activity prepares it: a fresh, empty folder of the run's private one,
 * `$VIGIL_HOME/private/<run>/acceptance-draft/`, which the call's sandbox shows writable (the
 * repository stays read-only for it, as for every reviewing role) and `VIGIL_ACCEPTANCE_DIR`
 * names; and the prompt with the map of the repository (its tracked files, bounded) appended.
 * The seal (activities/acceptance.ts) copies the folder from there; no builder or reviewer
 * sandbox ever shows it.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { repositoryMap, withRepositoryMap } from '../rules/acceptance-author.js';
import { ensurePrivateRunDir } from './artifacts.js';
import { git } from './git.js';
import { ensurePrivateDir } from '../lib/safe-files.js';

/** The folder the acceptance role writes into (emptied before each of its calls). */
export function acceptanceDraftDir(runId: string): string {
  return path.join(ensurePrivateRunDir(runId), 'acceptance-draft');
}

/** A fresh, empty draft folder: what an earlier attempt left is not sealed. */
export function freshDraftDir(runId: string): string {
  const dir = acceptanceDraftDir(runId);
  rmSync(dir, { recursive: true, force: true });
  return ensurePrivateDir(path.dirname(dir), dir);
}

/** The acceptance role's prompt with the map of the repository appended (its tracked files; none when git cannot list them). */
export async function acceptancePrompt(prompt: string, repoPath: string): Promise<string> {
  const listing = await git(repoPath, ['-c', 'core.quotePath=false', 'ls-files', '-z'])
    .then((out) => out.split('\0').join('\n'))
    .catch(() => '');
  return withRepositoryMap(prompt, repositoryMap(listing));
}
