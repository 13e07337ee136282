/**
 * Where a run's files live in the repository, as plain strings (sandbox-safe, so the workflow can
 * name a file for an activity): `.vigil/runs/<workflowId>/`.
 */
export const VIGIL_DIR = '.vigil';

/** A workflow id made safe as one path segment. */
export function safeSegment(id: string): string {
  const s = id.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return s.slice(0, 200) || '_';
}

/** The run's artifact folder (POSIX path). */
export function runDirPath(repoPath: string, runId: string): string {
  return `${repoPath.replace(/\/+$/, '')}/${VIGIL_DIR}/runs/${safeSegment(runId)}`;
}
