/**
 * What the worker and its process supervisor (process-supervisor.ts) share: the spec the worker
 * hands over, the state file the supervisor keeps next to the log, the control messages, and
 * the kill graces. Node built-ins only: the supervisor must start fast.
 */
import { readFileSync, renameSync } from 'node:fs';
import { writePrivateFile } from './safe-files.js';

/** What the worker writes on the supervisor's stdin. */
export interface SupervisorSpec {
  file: string;
  args: string[];
  cwd: string;
  /** The child's whole environment (the supervisor's own is minimal). */
  env: Record<string, string>;
  stdin: string;
  logPath: string;
  header: string;
  maxLogBytes: number;
  timeoutMs: number;
  statePath: string;
  /** Which activity call this is (workflow id, run id, activity id): only a later attempt of it may re-attach. */
  key: string;
  /** The activity attempt that started it. */
  attempt: number;
  /** Put in the child's environment; finds descendants that left its process group. */
  token: string;
}

/** How the child ended, as the supervisor saw it. */
export interface SupervisorExit {
  exitCode: number;
  timedOut: boolean;
  cancelled: boolean;
  spawnError: string | null;
  outputBytes: number;
  logError: string | null;
  strays: number;
  durationMs: number;
  /** Log offset where the footer starts (the child's output ends there). */
  logEnd: number;
  /** The last 64 KiB of output, when the log does not hold all of it (truncated or unwritable). */
  tail?: string;
}

/** The state file (`<label>.pid.json`). */
export interface SupervisorState {
  v: 2;
  key: string;
  attempt: number;
  supervisor: { pid: number; startTime: string | null };
  /** The child, once started. */
  pid: number | null;
  startTime: string | null;
  token: string;
  /** Epoch ms when the call started. */
  startedAt: number;
  /** Log offset where the child's output starts (after the header). */
  logStart: number;
  state: 'starting' | 'running' | 'exited';
  exit?: SupervisorExit;
}

/** Control messages on fd 3. */
export type SupervisorMessage = { t: 'started'; pid: number; startTime: string | null; logStart: number } | ({ t: 'exit' } & SupervisorExit);

/** SIGTERM → SIGKILL grace on timeout. */
export const KILL_GRACE_MS = 3000;
/** SIGTERM → SIGKILL grace on cancellation: STOP --now means now. */
export const CANCEL_GRACE_MS = 250;
/** Writes the state file atomically (a temporary file renamed over it; never through a link). */
export function writeState(file: string, state: SupervisorState): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writePrivateFile(tmp, JSON.stringify(state));
  renameSync(tmp, file);
}

/** The state file's record, or null when it is absent, unreadable or from an older version (a pid record). */
export function readState(file: string): SupervisorState | null {
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as Partial<SupervisorState> | null;
    return s && s.v === 2 && typeof s.key === 'string' && typeof s.attempt === 'number' && typeof s.token === 'string' && typeof s.supervisor?.pid === 'number' ? (s as SupervisorState) : null;
  } catch {
    return null;
  }
}
