/**
 * The discovery call of a run started from a goal (`vigil start --goal`; rules/discovery.ts), as
 * the agent activity prepares and reads it: a fresh, empty folder of the run's private one,
 * `$VIGIL_HOME/private/<run>/discovery/`, which the call's sandbox shows writable (the repository
 * stays read-only, as for every reviewing role) and whose `PRD.md` `VIGIL_PRD_FILE` names; after
 * the call, that file, checked as a PRD is (a regular file of UTF-8 text, not empty, at most
 * 1 MiB), is copied into the run folder (`.vigil/runs/<run>/PRD.md`, the run's `prdPath`), where
 * the person and every later call read it.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { AgentResult } from '../schemas/activities.js';
import { DISCOVERED_PRD } from '../schemas/paths.js';
import { discoveredPrdProblem, MAX_DISCOVERED_PRD_BYTES, prdTitle } from '../rules/discovery.js';
import { ensurePrivateRunDir, ensureRunDir } from './artifacts.js';
import { describeWriteError, ensurePrivateDir, isStorageError, readRegularFile, writePrivateFile } from '../lib/safe-files.js';

/** The file the discovery call writes its PRD into, in a folder emptied before each of its calls. */
export function freshDiscoveryFile(runId: string): string {
  const dir = path.join(ensurePrivateRunDir(runId), 'discovery');
  rmSync(dir, { recursive: true, force: true });
  return path.join(ensurePrivateDir(path.dirname(dir), dir), DISCOVERED_PRD);
}

/** What the discovery call wrote, kept in the run folder as the run's PRD, or why it cannot be the PRD. */
export function keepDiscoveredPrd(
  written: string,
  repoPath: string,
  runId: string,
  exitCode: number,
): NonNullable<AgentResult['discovered']> {
  const dest = path.join(ensureRunDir(repoPath, runId), DISCOVERED_PRD);
  const none = (problem: string): NonNullable<AgentResult['discovered']> => ({ ok: false, path: dest, title: '', bytes: 0, problem });
  if (exitCode !== 0) return none(`the discovery agent exited with ${exitCode}`);
  const read = readRegularFile(written, MAX_DISCOVERED_PRD_BYTES + 1);
  if (read === null) return none('the discovery agent wrote no PRD (nothing at $VIGIL_PRD_FILE)');
  if (!read.ok) return none(`the PRD the discovery agent wrote cannot be read: ${read.problem}`);
  const problem = discoveredPrdProblem(read.text, read.bytes);
  if (problem !== null) return none(`the PRD the discovery agent wrote cannot be the run's PRD: ${problem}`);
  try {
    writePrivateFile(dest, read.text);
  } catch (err) {
    if (!isStorageError(err)) throw err;
    return none(describeWriteError(`cannot write the PRD to ${dest}`, err));
  }
  return { ok: true, path: dest, title: prdTitle(read.text) || 'PRD', bytes: read.bytes, problem: null };
}
