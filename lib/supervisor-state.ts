/**
 * What the worker and its process supervisor (process-supervisor.ts) share: the spec the worker
 * hands over, the state file the supervisor keeps next to the log, the control messages, and
 * the kill graces. Node built-ins only: the supervisor must start fast.
 */
import type { CallLimitsSpec, LimitsOutcome } from './sandbox-limits.js';
import type { SandboxProxySpec } from './sandbox-proxy.js';
import type { Denial } from './sandbox-net.js';
import type { FetchCounts } from '../rules/package-fetches.js';
import { readFileSync, renameSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
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
  /** A sandboxed call's network proxy, run by the supervisor for as long as the call (sandbox-proxy.ts). */
  sandboxProxy?: SandboxProxySpec | null;
  /**
   * The child is bubblewrap with a pid namespace of its own that dies with it: every process the
   * call started is in it, so the kernel kills them all; none is looked for by token.
   */
  ownPidNamespace?: boolean;
  /** A sandboxed call's limits (sandbox-limits.ts): its cgroup, or the fallback. */
  limits?: CallLimitsSpec;
  /** An agent call's silence watchdog (call-silence.ts): ended after `limitMs` with no output and no change under `root`. */
  silence?: { limitMs: number; root: string };
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
  /** What a sandboxed call's proxy refused. */
  sandboxDenials?: Denial[];
  /** A sandboxed call's package fetches, counted (absent: none, nor any refused). */
  sandboxFetches?: FetchCounts;
  /** How a sandboxed call was limited, and the limit that ended it. */
  limits?: LimitsOutcome;
  /** Why the silence watchdog ended the call (`no output for 15 min: ended`); absent: it did not. */
  silence?: string;
}

/** The state file (`<label>.pid.json`). */
export interface SupervisorState {
  v: 2;
  key: string;
  attempt: number;
  /** The supervising process; `shared`: a daemon supervising many calls (never killed for one). */
  supervisor: { pid: number; startTime: string | null; shared?: boolean };
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
export type SupervisorMessage =
  { t: 'started'; pid: number; startTime: string | null; logStart: number } | ({ t: 'exit' } & SupervisorExit);

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
    return s &&
      s.v === 2 &&
      typeof s.key === 'string' &&
      typeof s.attempt === 'number' &&
      typeof s.token === 'string' &&
      typeof s.supervisor?.pid === 'number'
      ? (s as SupervisorState)
      : null;
  } catch {
    return null;
  }
}

/**
 * The supervisor daemon's wire (supervisor-daemon.ts), over a unix socket, one connection per
 * call. Worker → daemon: JSON lines (`run` once, then `cancel`). Daemon → worker: frames of a
 * type byte, a 4-byte big-endian length and the payload: the child's output (`D`) or a control
 * message (`M`, JSON: `hello` on connect, then `started` and `exit`).
 */
export type DaemonRequest = { t: 'run'; spec: SupervisorSpec } | { t: 'cancel' };
export interface DaemonHello {
  t: 'hello';
  pid: number;
  startTime: string | null;
}
export type DaemonMessage = DaemonHello | SupervisorMessage;
export const FRAME_DATA = 0x44;
export const FRAME_MESSAGE = 0x4d;

export function frame(type: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head[0] = type;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** Splits a byte stream into frames; calls `onFrame` for each complete one. */
export function frameReader(onFrame: (type: number, payload: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 5) {
      const len = pending.readUInt32BE(1);
      if (pending.length < 5 + len) break;
      onFrame(pending[0] as number, pending.subarray(5, 5 + len));
      pending = pending.subarray(5 + len);
    }
  };
}

/** Splits a byte stream into lines (without the newline). */
export function lineReader(onLine: (line: string) => void): (chunk: Buffer) => void {
  let pending = '';
  const decoder = new StringDecoder('utf8');
  return (chunk) => {
    pending += decoder.write(chunk);
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      onLine(line);
    }
  };
}
