/**
 * Repository trouble (spec: a run must never end as a bare Temporal failure): when the repository
 * is gone, is no longer a git work tree (a damaged `.git`), or plants links where Vigil keeps its
 * files, repository activities fail for good. What the run does then is decided here: in
 * supervised mode it pauses and a person is told (restore the repository, then resume; for a
 * parallel stream, whose repository is Vigil's own worktree, resume makes it again); in perpetual
 * mode it ends with its own outcome, `repository_unavailable` (exit 20).
 */
import type { Knobs } from '../schemas/knobs.js';

/** Activities whose repeated failure means the repository itself is in trouble. */
export const REPOSITORY_ACTIVITIES: ReadonlySet<string> = new Set([
  'prepareRun',
  'inspectIteration',
  'collectEvidence',
  'writeHandoff',
  'recreateWorktree',
]);

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

/** A parallel stream's place: its run, its task, and the iteration of its last checkpoint (null: none yet). */
export interface StreamPlace {
  parentId: string;
  task: string;
  checkpoint: number | null;
}

/**
 * What a person can do for a stream whose repository — Vigil's own worktree of the stream — is
 * lost: a resume makes the worktree again from the stream's last checkpoint (workflows/run/streams.ts
 * `recoverStreamWorktree`), a stop ends this attempt and its task is tried once more.
 */
export function streamWorktreeAdvice(runId: string, stream: StreamPlace): string {
  const from = stream.checkpoint === null ? 'its start commit' : `its last checkpoint (iteration ${stream.checkpoint})`;
  return (
    `This is Vigil's own worktree of this stream: \`vigil resume ${runId}\` (or \`vigil resume ${stream.parentId}\`) makes it again from ${from}` +
    ` and the stream goes on; or \`vigil stop ${runId}\` ends this attempt, and task ${stream.task} is tried once more from a ` +
    `fresh worktree if it has an attempt left`
  );
}

/**
 * A full disk pauses the run in every mode (like an exhausted budget: ending a run over a
 * condition a person fixes in a minute would lose it); a lost repository pauses a supervised run
 * and ends a perpetual one.
 */
export function onRepositoryTrouble(
  trouble: RepositoryTrouble,
  runId: string,
  knobs: Pick<Knobs, 'autonomyMode'>,
  stream: StreamPlace | null = null,
): RepositoryTroubleAction {
  if (trouble.kind === 'disk_full') {
    return {
      kind: 'pause',
      reason: `disk full under the repository: ${trouble.problem}`.slice(0, 1500) + `. Free space, then \`vigil resume ${runId}\``,
    };
  }
  const what = `repository unavailable: ${trouble.problem}`.slice(0, 1500);
  if (knobs.autonomyMode === 'supervised') {
    if (stream) return { kind: 'pause', reason: `${what.slice(0, 1000)}. ${streamWorktreeAdvice(runId, stream)}` };
    return { kind: 'pause', reason: `${what}. Restore the repository, then \`vigil resume ${runId}\` (or \`vigil stop ${runId}\`)` };
  }
  return { kind: 'end', reason: what };
}
