/**
 * Runs one child process for an activity under a process supervisor (process-supervisor.ts): a
 * small detached Node process that outlives the worker, puts the child in its own process group,
 * writes its output to a log file (errors such as a full disk are reported, never thrown; size
 * capped) and records the child's pid and exit status in a state file next to the log. The
 * worker reads the output as it comes (a short tail, the head when asked, a watched text, a
 * session id) and heartbeats while the child runs. The call ends when the child exits: whatever
 * it left behind — in its group or escaped with `setsid`, found by a per-call environment token —
 * is killed and the pipes are closed after a short grace. The timeout bounds the whole call.
 * Cancellation (STOP --now, worker shutdown) kills the tree at once.
 *
 * A worker that crashes loses nothing: the attempt Temporal retries (same workflow run and activity, a later
 * attempt) finds the state file, re-attaches to the child still running — following its log — or collects the
 * result of a child that finished meanwhile, instead of killing it and running it again. Only a call whose
 * supervisor is gone too (a machine restart) is killed and run again.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { redactSecrets } from '../rules/scans.js';
import { killSurvivor, processStartTime, signalTree } from '../lib/process-tree.js';
import { beatWhileRunning } from './heartbeat.js';
import { describeWriteError } from '../lib/safe-files.js';
import { connectDaemon } from './supervisor-client.js';
import type { SandboxProxySpec } from '../lib/sandbox-proxy.js';
import type { Denial } from '../lib/sandbox-net.js';
import type { FetchCounts } from '../rules/package-fetches.js';
import type { CallLimitsSpec, LimitsOutcome } from '../lib/sandbox-limits.js';
import {
  CANCEL_GRACE_MS,
  FRAME_DATA,
  FRAME_MESSAGE,
  KILL_GRACE_MS,
  lineReader,
  readState,
  writeState,
  type DaemonRequest,
  type SupervisorExit,
  type SupervisorMessage,
  type SupervisorSpec,
  type SupervisorState,
} from '../lib/supervisor-state.js';
import { compiledModule } from '../lib/supervisor-location.js';

export interface ProcessSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: string;
  timeoutMs: number;
  /** Output is appended here, after `header`. */
  logPath: string;
  header: string;
  /**
   * The call's state file (kept by its supervisor: pid, exit status, log extent), so a later
   * attempt re-attaches to it after a worker crash. An older pid record found there is killed.
   */
  pidFile: string;
  /** Text searched for in the output, across chunk boundaries. Empty: no search. */
  watchFor?: string;
  /** Keep up to this many characters from the start of the output (returned as `head`). */
  keepHead?: number;
  /** Bytes of output written to the log at most (default 64 MiB); the rest is dropped with a notice. */
  maxLogBytes?: number;
  /** Sent with every heartbeat (e.g. the session id chosen for the call). */
  heartbeatDetails?: Record<string, unknown>;
  /** A session id in the output (first group), sent with heartbeats once seen, so a retry can resume it. */
  sessionPattern?: RegExp;
  /** What cancels the call (default: the activity's cancellation). */
  cancelSignal?: AbortSignal;
  /** A sandboxed call's network proxy (activities/sandbox.ts), run by the call's supervisor. */
  sandboxProxy?: SandboxProxySpec | null;
  /** The call runs in a pid namespace of its own that dies with it (bubblewrap): no leftover to look for by token. */
  ownPidNamespace?: boolean;
  /** A sandboxed call's limits, applied by its supervisor (sandbox-limits.ts). */
  limits?: CallLimitsSpec | null;
  /** An agent call's silence watchdog, kept by its supervisor (call-silence.ts): ended after `limitMs` with no output and no change under `root`. */
  silence?: { limitMs: number; root: string } | null;
}

export interface ProcessResult {
  exitCode: number;
  timedOut: boolean;
  durationMs: number;
  /** The last ~64 KiB of output. */
  tail: string;
  /** The first `keepHead` characters of output ('' unless asked for). */
  head: string;
  outputBytes: number;
  sawWatched: boolean;
  /** Set when the process could not be started at all (e.g. ENOENT, EACCES). */
  spawnError: string | null;
  /** Set when the log (or pid file) could not be written: the output is then only in `tail`. */
  logError: string | null;
  /** Processes the child left running (in its group or escaped from it) that were killed after it exited. */
  strays: number;
  /** What a sandboxed call's network proxy refused (empty unsandboxed). */
  sandboxDenials: Denial[];
  /** A sandboxed call's package fetches, counted (null: none, nor any refused). */
  sandboxFetches: FetchCounts | null;
  /** How a sandboxed call was limited and the limit that ended it (null: no limits, or the supervisor was lost). */
  limits: LimitsOutcome | null;
  /** Why the silence watchdog ended the call (`no output for 15 min: ended`; `timedOut` is then true); null: it did not. */
  silence: string | null;
}

const TAIL_KEEP = 64 * 1024;
/** How often a re-attached call reads the log and the state file. */
const ATTACH_POLL_MS = 250;
/** After asking the supervisor to cancel, how long before the worker kills the tree itself. */
const CANCEL_FORCE_MS = CANCEL_GRACE_MS + 1500;
export const DEFAULT_MAX_LOG_BYTES = 64 * 1024 * 1024;

/** The last non-empty line of `text` (from its last 2 KiB), at most 200 characters, redacted. */
export function lastLine(text: string): string {
  const lines = text.slice(-2048).split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = (lines[i] as string).trim();
    if (!l) continue;
    // Redacted before it is cut, so a key cut in half is still recognised.
    const red = redactSecrets(l).text;
    return red.length > 200 ? `${red.slice(0, 199)}…` : red;
  }
  return '';
}

/** The compiled per-call supervisor script (from sources, as under the tests: the one `npm run build` wrote). */
export function supervisorPath(): string {
  return compiledModule('process-supervisor.js');
}

/** One supervised call, started here or re-attached to. */
interface Call {
  attached: boolean;
  startedAt: number;
  token: string;
  supervisorPid: number | undefined;
  /** The child's pid, once it runs. */
  pid(): number | undefined;
  /** How the child ended; null when the supervisor was lost without saying. */
  ended: Promise<SupervisorExit | null>;
  /** Asks the supervisor to kill the tree now. */
  cancel(): void;
  /** Kills supervisor and tree without asking. */
  kill(): void;
  stop(): void;
}

function alive(p: { pid: number; startTime: string | null }): boolean {
  if (p.startTime !== null) return processStartTime(p.pid) === p.startTime;
  try {
    process.kill(p.pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

/** The spec a supervisor is handed for `spec`. */
function handover(spec: ProcessSpec, key: string, attempt: number, token: string): SupervisorSpec {
  return {
    file: spec.file,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    stdin: spec.stdin,
    logPath: spec.logPath,
    header: spec.header,
    maxLogBytes: spec.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES,
    timeoutMs: spec.timeoutMs,
    statePath: spec.pidFile,
    key,
    attempt,
    token,
    ...(spec.sandboxProxy ? { sandboxProxy: spec.sandboxProxy } : {}),
    ...(spec.ownPidNamespace ? { ownPidNamespace: true } : {}),
    ...(spec.limits ? { limits: spec.limits } : {}),
    ...(spec.silence && spec.silence.limitMs > 0 ? { silence: spec.silence } : {}),
  };
}

/** Records a call as started before its supervisor hears of it: a retry never misses a call that was started. */
function recordStarting(
  spec: ProcessSpec,
  key: string,
  attempt: number,
  token: string,
  startedAt: number,
  supervisor: SupervisorState['supervisor'],
): string | null {
  try {
    writeState(spec.pidFile, {
      v: 2,
      key,
      attempt,
      supervisor,
      pid: null,
      startTime: null,
      token,
      startedAt,
      logStart: 0,
      state: 'starting',
    });
    return null;
  } catch (err) {
    return describeWriteError(`cannot write ${spec.pidFile}`, err);
  }
}

/** Starts the call under the supervisor daemon, or under a supervisor of its own when the daemon cannot be used. */
async function launch(
  spec: ProcessSpec,
  key: string,
  attempt: number,
  onData: (chunk: Buffer) => void,
  onStarted: () => void,
): Promise<Call & { stateError: string | null }> {
  const token = randomUUID();
  const startedAt = Date.now();
  let childPid: number | undefined;
  let exit: SupervisorExit | null = null;
  const onMessage = (m: SupervisorMessage): void => {
    if (m.t === 'started') {
      childPid = m.pid;
      onStarted();
    } else {
      const { t: _t, ...rest } = m;
      exit = rest;
    }
  };
  const conn = await connectDaemon((type, payload) => {
    if (type === FRAME_DATA) onData(payload);
    else if (type === FRAME_MESSAGE) onMessage(JSON.parse(payload.toString('utf8')) as SupervisorMessage);
  });
  if (conn === null)
    return launchPerCall(
      spec,
      key,
      attempt,
      token,
      startedAt,
      onData,
      onMessage,
      () => childPid,
      () => exit,
    );
  const { socket, hello } = conn;
  const stateError = recordStarting(spec, key, attempt, token, startedAt, { pid: hello.pid, startTime: hello.startTime, shared: true });
  socket.on('error', () => {});
  const request = (r: DaemonRequest): void => {
    if (socket.writable) socket.write(`${JSON.stringify(r)}\n`);
  };
  request({ t: 'run', spec: handover(spec, key, attempt, token) });
  // 'close': the daemon has ended the call's connection after recording its exit, or died.
  const ended = new Promise<SupervisorExit | null>((resolve) => {
    socket.once('close', () => resolve(exit ?? finishedState(spec.pidFile, key)));
  });
  return {
    attached: false,
    startedAt,
    token,
    supervisorPid: hello.pid,
    stateError,
    pid: () => childPid,
    ended,
    cancel: () => request({ t: 'cancel' }),
    // The daemon supervises other calls: only this call's tree is killed, and the call is no
    // longer waited for (a daemon that hangs cannot hold it).
    kill: () => {
      signalTree(childPid, token, 'SIGKILL');
      socket.destroy();
    },
    stop: () => socket.destroy(),
  };
}

/** Starts a supervisor process for `spec` alone; output arrives on `onData`. */
function launchPerCall(
  spec: ProcessSpec,
  key: string,
  attempt: number,
  token: string,
  startedAt: number,
  onData: (chunk: Buffer) => void,
  onMessage: (m: SupervisorMessage) => void,
  childPid: () => number | undefined,
  exit: () => SupervisorExit | null,
): Call & { stateError: string | null } {
  const sup = spawn(process.execPath, [supervisorPath()], {
    cwd: '/',
    // The child's environment travels in the spec: none of it (NODE_OPTIONS...) applies to the supervisor.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    detached: true, // outlives the worker: its own session and process group
    stdio: ['pipe', 'pipe', 'ignore', 'pipe'],
  });
  const stateError =
    sup.pid !== undefined
      ? recordStarting(spec, key, attempt, token, startedAt, { pid: sup.pid, startTime: processStartTime(sup.pid) })
      : null;
  const control = sup.stdio[3] as Readable;
  control.on(
    'data',
    lineReader((line) => {
      try {
        onMessage(JSON.parse(line) as SupervisorMessage);
      } catch {
        /* not a message */
      }
    }),
  );
  sup.stdout?.on('data', onData);
  sup.stdin?.on('error', () => {});
  sup.stdin?.end(JSON.stringify(handover(spec, key, attempt, token)));
  // 'close': the supervisor has exited and everything it wrote has been read.
  const ended = new Promise<SupervisorExit | null>((resolve) => {
    sup.once('close', () => resolve(exit() ?? finishedState(spec.pidFile, key)));
    sup.once('error', () => resolve(null));
  });
  return {
    attached: false,
    startedAt,
    token,
    supervisorPid: sup.pid,
    stateError,
    pid: childPid,
    ended,
    cancel: () => signal(sup.pid, 'SIGTERM'),
    kill: () => {
      signal(sup.pid, 'SIGKILL');
      signalTree(childPid(), token, 'SIGKILL');
    },
    stop: () => {},
  };
}

/** The exit a state file records for this call, if it finished. */
function finishedState(file: string, key: string): SupervisorExit | null {
  const s = readState(file);
  return s?.key === key && s.state === 'exited' && s.exit ? s.exit : null;
}

/** Follows a call a crashed attempt started: its log from where its output starts, and its state file. */
function attach(spec: ProcessSpec, prev: SupervisorState, onData: (chunk: Buffer) => void, onStarted: () => void): Call {
  let state = prev;
  let offset = prev.logStart;
  let fd: number | null = null;
  const buf = Buffer.alloc(64 * 1024);
  /** What the log holds past `offset`, up to `limit`, not delivered yet. */
  const readLog = (limit = Infinity): Buffer[] => {
    const got: Buffer[] = [];
    try {
      fd ??= openSync(spec.logPath, constants.O_RDONLY | constants.O_NOFOLLOW);
      let at = offset;
      while (at < limit) {
        const n = readSync(fd, buf, 0, Math.min(buf.length, limit - at), at);
        if (n <= 0) break;
        at += n;
        got.push(Buffer.from(buf.subarray(0, n)));
      }
    } catch {
      /* no log (a full disk): the state file's tail stands in */
    }
    return got;
  };
  const deliver = (chunks: Buffer[], limit = Infinity): void => {
    for (const c of chunks) {
      const part = c.subarray(0, Math.max(0, Math.min(c.length, limit - offset)));
      if (part.length === 0) break;
      offset += part.length;
      onData(part);
    }
  };
  let started = false;
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<SupervisorExit | null>((resolve) => {
    const finish = (exit: SupervisorExit, chunks: Buffer[]): void => {
      deliver(chunks, exit.logEnd);
      deliver(readLog(exit.logEnd), exit.logEnd);
      resolve(exit);
    };
    const tick = (): void => {
      // The log before the state: the supervisor records the exit before it writes the footer, so
      // what was read while the state still said "running" holds no footer.
      const chunks = state.state === 'starting' ? [] : readLog();
      state = readState(spec.pidFile) ?? state;
      if (state.state !== 'starting' && !started) {
        started = true;
        offset = state.logStart;
        onStarted();
      }
      if (state.state === 'exited' && state.exit) return finish(state.exit, chunks);
      if (!alive(state.supervisor)) {
        const last = readState(spec.pidFile);
        if (last?.state === 'exited' && last.exit) {
          state = last;
          return finish(last.exit, chunks);
        }
        return resolve(null);
      }
      deliver(chunks);
      timer = setTimeout(tick, ATTACH_POLL_MS);
    };
    tick();
  });
  void ended.finally(() => {
    if (fd !== null) closeSync(fd);
  });
  /** The child, while it is still the process the state file names. */
  const child = (): number | undefined =>
    state.pid !== null && state.startTime !== null && processStartTime(state.pid) === state.startTime ? state.pid : undefined;
  return {
    attached: true,
    startedAt: prev.startedAt,
    token: prev.token,
    supervisorPid: prev.supervisor.pid,
    pid: () => state.pid ?? undefined,
    ended,
    // A daemon supervises other calls too: the tree is signalled, never the daemon.
    cancel: () => {
      if (state.supervisor.shared) signalTree(child(), state.token, 'SIGTERM');
      else if (alive(state.supervisor)) signal(state.supervisor.pid, 'SIGTERM');
    },
    kill: () => {
      if (!state.supervisor.shared && alive(state.supervisor)) signal(state.supervisor.pid, 'SIGKILL');
      signalTree(child(), state.token, 'SIGKILL');
    },
    stop: () => clearTimeout(timer),
  };
}

/** What makes two attempts one call: the workflow run and the activity (its attempts share an id). */
function callKey(): string {
  const { info } = Context.current();
  return `${info.workflowExecution?.workflowId ?? ''}/${info.workflowExecution?.runId ?? ''}/${info.activityId}`;
}

/** The record of an earlier attempt of this same call that `runProcess` re-attaches to (running, or exited while no worker watched), else null. */
function earlierAttempt(pidFile: string): SupervisorState | null {
  const prev = readState(pidFile);
  const attempt = Context.current().info.attempt;
  return prev && prev.key === callKey() && prev.attempt < attempt && (prev.state === 'exited' || alive(prev.supervisor)) ? prev : null;
}

/**
 * The attempt whose process `runProcess` with this state file will collect instead of starting
 * one (null: it starts one). What that process writes (a test report) is in that attempt's
 * places, which the caller must neither clear nor swap for its own.
 */
export function resumedAttempt(pidFile: string): number | null {
  return earlierAttempt(pidFile)?.attempt ?? null;
}

export async function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const ctx = Context.current();
  const { info } = ctx;
  const key = callKey();

  let tail = '';
  let head = '';
  const keepHead = spec.keepHead ?? 0;
  let outputBytes = 0;
  let sawWatched = false;
  const watch = spec.watchFor ?? '';
  let carry = '';
  let session: string | null = null;

  // The log gets the raw bytes (the supervisor writes it); text (tail, promise search) is decoded
  // across chunk boundaries so a multi-byte character split between two reads is not mangled.
  const decoder = new StringDecoder('utf8');
  const onText = (text: string): void => {
    if (spec.sessionPattern && session === null) {
      const m = spec.sessionPattern.exec(tail.slice(-512) + text);
      if (m?.[1]) {
        session = m[1];
        beatNow();
      }
    }
    tail = (tail + text).slice(-TAIL_KEEP);
    if (head.length < keepHead) head += text.slice(0, keepHead - head.length);
    if (watch && !sawWatched) {
      const hay = carry + text;
      if (hay.includes(watch)) sawWatched = true;
      carry = watch.length > 1 ? hay.slice(-(watch.length - 1)) : '';
    }
  };
  const onData = (chunk: Buffer): void => {
    outputBytes += chunk.length;
    onText(decoder.write(chunk));
  };

  let call: Call | undefined;
  const started = Date.now();
  function beatNow(): void {
    const pid = call?.pid();
    if (pid === undefined) return;
    // What the UI's pending activity shows: how long the call has run and its last output line
    // (credentials redacted, as everything that leaves the activity).
    ctx.heartbeat({
      pid,
      outputBytes,
      elapsedSeconds: Math.round((Date.now() - (call?.startedAt ?? started)) / 1000),
      lastLine: lastLine(tail),
      ...spec.heartbeatDetails,
      ...(session ? { session } : {}),
    });
  }
  let stopBeats: (() => void) | undefined;
  const onStarted = (): void => {
    if (stopBeats) return;
    // Heartbeat from a timer, not only on output: a silent agent is still alive. From one send
    // interval in (activities/heartbeat.ts): a call shorter than that costs the server none.
    stopBeats = beatWhileRunning(beatNow, ctx);
    // A session chosen for the call is recorded as soon as the call runs, not when the CLI first
    // prints (which a sandbox's start delays by a second or more): a machine lost at any point of
    // the call lets its retry resume that session.
    if (spec.heartbeatDetails?.session !== undefined) beatNow();
  };

  const earlier = earlierAttempt(spec.pidFile);
  const prev = earlier ?? readState(spec.pidFile);
  if (earlier) {
    call = attach(spec, earlier, onData, onStarted);
  } else if (prev?.supervisor.shared && prev.state !== 'exited' && alive(prev.supervisor)) {
    // Another call of a daemon still running: this call's record takes over the state file first
    // (the daemon abandons the earlier call when this one reaches it: it records and reports
    // nothing more, so its worker runs it again), then whatever of its tree is left is killed (a
    // daemon of another build does not hear of this call).
    call = await launch(spec, key, info.attempt, onData, onStarted);
    signalTree(
      prev.pid !== null && prev.startTime !== null && processStartTime(prev.pid) === prev.startTime ? prev.pid : undefined,
      prev.token,
      'SIGKILL',
    );
  } else {
    // A survivor of an earlier call that cannot be collected (another call, or its supervisor died).
    killSurvivor(spec.pidFile);
    call = await launch(spec, key, info.attempt, onData, onStarted);
  }
  const running = call;

  let cancelled = false;
  let forcedTimeout = false;
  let force: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    cancelled = true;
    running.cancel();
    force ??= setTimeout(() => running.kill(), CANCEL_FORCE_MS);
  };
  const cancelSignal = spec.cancelSignal ?? ctx.cancellationSignal;
  cancelSignal.addEventListener('abort', onAbort);
  if (cancelSignal.aborted) onAbort();
  // The supervisor enforces the timeout; this is the backstop should it hang.
  const backstop = setTimeout(
    () => {
      forcedTimeout = true;
      running.kill();
    },
    Math.max(0, running.startedAt + spec.timeoutMs - Date.now()) + KILL_GRACE_MS + 5000,
  );

  const exit = await running.ended;
  running.stop();
  stopBeats?.();
  clearTimeout(backstop);
  if (force) clearTimeout(force);
  cancelSignal.removeEventListener('abort', onAbort);
  onText(decoder.end());

  if (cancelled) {
    // Whatever of the tree outlived its supervisor (it should not) goes with the call.
    running.kill();
    throw new CancelledFailure('the process was cancelled');
  }
  if (exit === null && !forcedTimeout) {
    running.kill();
    throw ApplicationFailure.create({
      type: 'ProcessSupervisorLost',
      message: `the supervisor of ${spec.file} ended without recording how the process ended (killed?); the call is run again`,
    });
  }
  const stateError = 'stateError' in running ? (running as { stateError: string | null }).stateError : null;
  if (exit === null) {
    const durationMs = Date.now() - running.startedAt;
    return {
      exitCode: 124,
      timedOut: true,
      durationMs,
      tail,
      head,
      outputBytes,
      sawWatched,
      spawnError: null,
      logError: stateError,
      strays: 0,
      sandboxDenials: [],
      sandboxFetches: null,
      limits: null,
      silence: null,
    };
  }
  // Re-attached to a call whose log is incomplete: the supervisor kept the tail.
  if (running.attached && exit.tail !== undefined) tail = exit.tail;
  return {
    exitCode: exit.exitCode,
    timedOut: exit.timedOut,
    durationMs: exit.durationMs,
    tail,
    head,
    outputBytes: running.attached ? exit.outputBytes : outputBytes,
    sawWatched,
    spawnError: exit.spawnError,
    logError: exit.logError ?? stateError,
    strays: exit.strays,
    sandboxDenials: exit.sandboxDenials ?? [],
    sandboxFetches: exit.sandboxFetches ?? null,
    limits: exit.limits ?? null,
    silence: exit.silence ?? null,
  };
}
