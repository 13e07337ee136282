/**
 * Repository trouble (spec: a run must never end as a bare Temporal failure): when the repository
 * is gone, is no longer a git work tree (a damaged `.git`), or plants links where Vigil keeps its
 * files, repository activities fail for good. What the run does then is decided here: in
 * supervised mode it pauses and a person is told (restore the repository, then resume); in
 * perpetual mode it ends with its own outcome, `repository_unavailable` (exit 20).
 */
import type { Knobs } from '../../schemas/knobs.js';

/** Activities whose repeated failure means the repository itself is in trouble. */
export const REPOSITORY_ACTIVITIES: ReadonlySet<string> = new Set(['prepareRun', 'inspectIteration', 'collectEvidence', 'writeHandoff']);

/** Failure types activities use for a repository that cannot be used. */
export const REPOSITORY_FAILURE_TYPES: ReadonlySet<string> = new Set(['NotAGitRepository', 'UnsafeRepository']);

export interface FailureFacts {
  /** The activity type that failed, when known. */
  activityType: string | null;
  /** The ApplicationFailure type of the cause, when known. */
  failureType: string | null;
  message: string;
}

export interface RepositoryTrouble {
  /** `disk_full`: the disk or quota under the repository is full (it passes once space is freed). */
  kind: 'lost' | 'disk_full';
  problem: string;
}

const DISK_FULL = /no space left on device|disk quota exceeded|ENOSPC|EDQUOT/i;

/** The trouble, or null when the failure is not about the repository. */
export function repositoryTrouble(f: FailureFacts): RepositoryTrouble | null {
  const typed = f.failureType !== null && REPOSITORY_FAILURE_TYPES.has(f.failureType);
  const repoActivity = f.activityType !== null && REPOSITORY_ACTIVITIES.has(f.activityType);
  if (!typed && !repoActivity) return null;
  if (DISK_FULL.test(f.message)) return { kind: 'disk_full', problem: f.message };
  return { kind: 'lost', problem: typed ? f.message : `${f.activityType} failed on every attempt: ${f.message}` };
}

export type RepositoryTroubleAction = { kind: 'pause'; reason: string } | { kind: 'end'; reason: string };

/**
 * A full disk pauses the run in every mode (like an exhausted budget: ending a run over a
 * condition a person fixes in a minute would lose it); a lost repository pauses a supervised run
 * and ends a perpetual one.
 */
export function onRepositoryTrouble(
  trouble: RepositoryTrouble,
  runId: string,
  knobs: Pick<Knobs, 'autonomyMode'>,
): RepositoryTroubleAction {
  if (trouble.kind === 'disk_full') {
    return {
      kind: 'pause',
      reason: `disk full under the repository: ${trouble.problem}`.slice(0, 1500) + `. Free space, then \`vigil resume ${runId}\``,
    };
  }
  const what = `repository unavailable: ${trouble.problem}`.slice(0, 1500);
  if (knobs.autonomyMode === 'supervised') {
    return { kind: 'pause', reason: `${what}. Restore the repository, then \`vigil resume ${runId}\` (or \`vigil stop ${runId}\`)` };
  }
  return { kind: 'end', reason: what };
}
