/**
 * Supervision of one call: the part of the process supervisor that does not depend on how it
 * talks to the worker. Starts the child in a process group of its own, writes its output to the
 * log, records the child's pid, exit status and output extent in the state file (atomically, so
 * a retried attempt re-attaches or collects the result), enforces the call's timeout, its run
 * folder, an agent call's silence watchdog (call-silence.ts) and a sandboxed call's limits
 * (sandbox-limits.ts), and kills whatever the child leaves behind, waiting until all of it is
 * gone. Used by the supervisor daemon (one process for many calls, supervisor-daemon.ts) and
 * the per-call supervisor (process-supervisor.ts). Node built-ins only: both must start fast.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import {
  awaitTreeGone,
  processesWithToken,
  processStartTime,
  SANDBOX_STATUS_FD,
  sandboxStatusReader,
  signalTree,
  TOKEN_VAR,
} from './process-tree.js';
import { startSandboxProxy, type SandboxProxy } from './sandbox-proxy.js';
import { CallLimiter } from './sandbox-limits.js';
import { watchSilence } from './call-silence.js';
import { describeWriteError, logTruncatedNotice } from './safe-files.js';
import {
  CANCEL_GRACE_MS,
  KILL_GRACE_MS,
  readState,
  writeState,
  type SupervisorExit,
  type SupervisorMessage,
  type SupervisorSpec,
  type SupervisorState,
} from './supervisor-state.js';

/** After the child exits, how long its output pipes may stay open (drained) before they are closed. */
const PIPE_GRACE_MS = 500;
const TAIL_KEEP = 64 * 1024;
/** How often the supervisor checks that its run folder still exists. */
const WATCHDOG_MS = 5000;
const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
/** The exit code of a call a limit ended that exited 0 all the same (it was killed: 128 + SIGKILL). */
const LIMIT_EXIT = 137;

/**
 * An append-only, size-capped log written synchronously (the supervisor records the output's extent
 * in its state file right after): safe-files.ts's LogSink, without the stream. A failed write is
 * recorded, never thrown.
 */
class SyncLog {
  private fd: number | null = null;
  private written = 0;
  error: string | null = null;
  truncated = false;

  constructor(
    readonly file: string,
    private readonly maxBytes: number,
  ) {
    try {
      try {
        if (lstatSync(file).isSymbolicLink()) rmSync(file, { force: true });
      } catch {
        /* absent */
      }
      this.fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    this.error ??= describeWriteError(`cannot write ${this.file}`, err);
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  size(): number {
    if (this.fd === null) return 0;
    try {
      return fstatSync(this.fd).size;
    } catch {
      return 0;
    }
  }

  private put(buf: Buffer): void {
    if (this.fd === null) return;
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    } catch (err) {
      this.fail(err);
    }
  }

  write(chunk: Buffer | string): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.written + buf.length > this.maxBytes) {
      if (!this.truncated) {
        this.truncated = true;
        this.put(Buffer.from(logTruncatedNotice(this.maxBytes)));
      }
      return;
    }
    this.written += buf.length;
    this.put(buf);
  }

  /** Writes the footer (always, even past the cap) and closes. */
  end(footer: string): void {
    this.put(Buffer.from(footer));
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** How a supervision talks to its worker; both are no-ops once the worker is gone. */
export interface CallChannel {
  /** The child's output, as it comes. */
  output(chunk: Buffer): void;
  tell(message: SupervisorMessage): void;
}

/** The supervising process, as recorded in the state file. */
export interface SupervisorIdentity {
  pid: number;
  startTime: string | null;
  /** A daemon that supervises many calls: never killed for one of them. */
  shared?: boolean;
}

export interface SupervisedCall {
  /** The worker's cancellation (STOP --now, worker shutdown): kill the tree at once. */
  cancel(): void;
  /**
   * Another call took over the state file (a later call of the same label): kill the tree and
   * record nothing more.
   */
  abandon(): void;
  /** The child's pid, once started. */
  pid: number | undefined;
  token: string;
  statePath: string;
  /** Resolves once the exit is recorded and the log closed. */
  done: Promise<SupervisorExit>;
}

/** How long a sandboxed call's namespace may take to empty after bubblewrap exits. */
const SANDBOX_SETTLE_MS = 500;

/** Resolves once no process carries `token`, or after `ms`. */
async function settled(token: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (processesWithToken(token).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}

/** Removes the per-call folder of a sandbox proxy's socket (made by activities/sandbox.ts; only a `vigil-sbx-` folder, only when empty). */
function removeProxyDir(socketPath: string): void {
  const dir = path.dirname(socketPath);
  if (!path.basename(dir).startsWith('vigil-sbx-')) return;
  try {
    rmSync(socketPath, { force: true });
    rmdirSync(dir);
  } catch {
    /* not empty, or gone */
  }
}

/** Starts `spec`'s child under supervision. */
export function superviseCall(spec: SupervisorSpec, self: SupervisorIdentity, channel: CallChannel): SupervisedCall {
  const started = Date.now();
  const log = new SyncLog(spec.logPath, spec.maxLogBytes);
  log.write(spec.header.endsWith('\n') ? spec.header : `${spec.header}\n`);
  const logStart = log.size();
  let stateError: string | null = null;
  let abandoned = false;
  const record = (s: Omit<SupervisorState, 'v' | 'key' | 'attempt' | 'supervisor' | 'token' | 'startedAt' | 'logStart'>): void => {
    if (abandoned) return;
    // A state file that names a later call belongs to that call now (a supervisor of another
    // build that missed the hand-over).
    const current = readState(spec.statePath);
    if (current && current.token !== spec.token && current.startedAt > started) {
      abandoned = true;
      return;
    }
    try {
      writeState(spec.statePath, {
        v: 2,
        key: spec.key,
        attempt: spec.attempt,
        supervisor: self,
        token: spec.token,
        startedAt: started,
        logStart,
        ...s,
      });
    } catch (err) {
      stateError ??= describeWriteError(`cannot write ${spec.statePath}`, err);
    }
  };

  // A sandboxed call's network: its proxy lives as long as the call (the sandbox's bridge waits
  // for its socket). A proxy that cannot listen leaves the call without a network, and says so.
  let proxy: SandboxProxy | null = null;
  if (spec.sandboxProxy) proxy = startSandboxProxy(spec.sandboxProxy, (m) => log.write(`\n=== vigil: ${m} ===\n`));

  // A sandboxed call's limits: its cgroup, joined before bubblewrap starts (or the fallback).
  const limiter = spec.limits ? new CallLimiter(spec.limits, spec.token) : null;
  const command = limiter ? limiter.wrap(spec.file, spec.args) : { file: spec.file, args: spec.args };
  const child = spawn(command.file, command.args, {
    cwd: spec.cwd,
    env: { ...spec.env, [TOKEN_VAR]: spec.token },
    detached: true, // own process group: the whole tree can be signalled
    // A sandbox's bubblewrap writes its status (its pid namespace) to a pipe of its own.
    stdio: spec.ownPidNamespace ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
  }) as ChildProcessByStdio<Writable, Readable, Readable>;
  const status = sandboxStatusReader();
  const statusPipe = spec.ownPidNamespace ? (child.stdio[SANDBOX_STATUS_FD] as Readable | null | undefined) : null;
  statusPipe?.on('data', status.push);
  statusPipe?.on('error', () => {});
  const pid = child.pid;
  const startTime = pid !== undefined ? processStartTime(pid) : null;
  if (pid !== undefined) {
    record({ pid, startTime, state: 'running' });
    channel.tell({ t: 'started', pid, startTime, logStart });
  }

  let outputBytes = 0;
  let tail = Buffer.alloc(0);
  let lastOutputMs: number | null = null;
  const onData = (chunk: Buffer): void => {
    outputBytes += chunk.length;
    lastOutputMs = Date.now();
    log.write(chunk);
    tail = tail.length + chunk.length > TAIL_KEEP * 2 ? Buffer.concat([tail, chunk]).subarray(-TAIL_KEEP) : Buffer.concat([tail, chunk]);
    channel.output(chunk);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  // A child that does not read its input closes the pipe: EPIPE is not our failure.
  child.stdin.on('error', () => {});
  child.stdin.end(spec.stdin);

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error: NodeJS.ErrnoException | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, error: null }));
    child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, error }));
  });
  const pipesClosed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let timedOut = false;
  let cancelled = false;
  let killTimer: NodeJS.Timeout | undefined;
  const terminate = (graceMs: number): void => {
    if (pid === undefined || killTimer) return;
    signalTree(pid, spec.token, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    killTimer = setTimeout(() => signalTree(pid, spec.token, 'SIGKILL'), graceMs);
  };
  const timeout = setTimeout(() => {
    timedOut = true;
    terminate(KILL_GRACE_MS);
  }, spec.timeoutMs);
  const watchdog = setInterval(() => {
    if (!existsSync(path.dirname(spec.statePath))) terminate(0);
  }, WATCHDOG_MS);
  // A hung agent call (no output, no change in its repository for the limit) is ended as a timeout is.
  let silenced: string | null = null;
  const stopSilence =
    spec.silence && pid !== undefined
      ? watchSilence({
          limitMs: spec.silence.limitMs,
          root: spec.silence.root,
          startedMs: started,
          lastOutputMs: () => lastOutputMs,
          onSilent: (reason) => {
            silenced = reason;
            terminate(KILL_GRACE_MS);
          },
        })
      : undefined;
  // A call at its pid limit, or that lost a process to the OOM killer, is ended at once.
  if (pid !== undefined) limiter?.started(pid);
  const limitWatch =
    limiter && pid !== undefined
      ? setInterval(() => {
          if (!limiter.check()) return;
          terminate(0);
          limiter.kill();
        }, limiter.intervalMs)
      : undefined;

  const done = (async (): Promise<SupervisorExit> => {
    const exit = await exited;
    clearTimeout(timeout);
    clearInterval(watchdog);
    clearInterval(limitWatch);
    stopSilence?.();
    // A sandboxed call's processes die with its pid namespace as bubblewrap exits, and none can
    // leave it: nothing is looked for by token (a scan of every process's environment), but the
    // namespace is waited for below (bubblewrap exits before the kernel has emptied it). Other
    // calls: the direct child is gone; nothing it started may outlive the call (its group, and
    // anything that escaped the group but carries the call's token); a sandbox without its own
    // pid namespace waits a little first, so that processes still being torn down are not counted.
    if (spec.sandboxProxy && !spec.ownPidNamespace && pid !== undefined) await settled(spec.token, SANDBOX_SETTLE_MS);
    const strays = pid !== undefined ? signalTree(pid, spec.ownPidNamespace ? '' : spec.token, 'SIGKILL') : 0;
    // Drain what is still in the pipes; a survivor that escaped every kill cannot hold the call open.
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([pipesClosed, new Promise((r) => (grace = setTimeout(r, PIPE_GRACE_MS)))]);
    clearTimeout(grace);
    child.stdout.destroy();
    child.stderr.destroy();
    if (killTimer) clearTimeout(killTimer);

    // The last look at the limits (an OOM kill that ended the call between two looks), the group removed.
    const limits = limiter ? await limiter.close() : null;
    // The call ends when every process of it is gone (bubblewrap exits before the kernel has
    // emptied its namespace): nothing of it writes any more once its end is recorded.
    const ns = status.pidNamespace();
    const survivors = pid !== undefined ? await awaitTreeGone({ pid, token: ns ? '' : spec.token, pidNamespace: ns }) : [];
    statusPipe?.destroy();
    // Closed first: a registry tunnel still open is logged as it is closed.
    proxy?.close();
    const sandboxDenials = proxy?.denials() ?? [];
    const sandboxFetches = proxy?.fetches() ?? null;
    if (spec.sandboxProxy) removeProxyDir(spec.sandboxProxy.socketPath);
    const durationMs = Date.now() - started;
    let exitCode: number;
    let spawnError: string | null = null;
    const code = exit.error?.code;
    if (pid === undefined || exit.error) {
      const why =
        code === 'ENOENT' ? 'command not found' : code === 'EACCES' ? 'permission denied' : (exit.error?.message ?? 'could not start');
      spawnError = `${spec.file}: ${why}`;
      exitCode = 127;
    } else if (timedOut || silenced !== null) {
      exitCode = 124;
    } else if (typeof exit.code === 'number') {
      exitCode = exit.code;
    } else {
      exitCode = 128 + (SIGNAL_NUMBERS[exit.signal ?? 'SIGKILL'] ?? 9);
    }
    if (limits?.hit && exitCode === 0) exitCode = LIMIT_EXIT;
    const logEnd = log.size();
    const notes = [
      limits?.reason,
      timedOut ? 'timed out' : null,
      silenced,
      cancelled ? 'cancelled' : null,
      abandoned ? 'abandoned: another call took its place' : null,
      spawnError,
      strays ? `${strays} leftover process(es) killed` : null,
      survivors.length ? `${survivors.length} process(es) would not die: ${survivors.slice(0, 5).join(', ')}` : null,
    ];
    const footer = `\n=== vigil: exit ${exitCode}${notes.map((n) => (n ? ` (${n})` : '')).join('')} after ${durationMs} ms ===\n`;
    const incomplete = log.truncated || log.error !== null;
    const result: SupervisorExit = {
      exitCode,
      timedOut: timedOut || silenced !== null,
      cancelled,
      spawnError,
      outputBytes,
      logError: log.error ?? stateError,
      strays,
      durationMs,
      logEnd,
      ...(incomplete ? { tail: new StringDecoder('utf8').end(tail.subarray(-TAIL_KEEP)) } : {}),
      ...(spec.sandboxProxy ? { sandboxDenials } : {}),
      ...(sandboxFetches && (sandboxFetches.fetches > 0 || sandboxFetches.refused > 0) ? { sandboxFetches } : {}),
      ...(limits ? { limits } : {}),
      ...(silenced !== null ? { silence: silenced } : {}),
    };
    // The state first, then the footer: a reader that saw the call still running after reading
    // the log has not read the footer (activities/process.ts, attach).
    record({ pid: pid ?? null, startTime, state: 'exited', exit: result });
    log.end(footer);
    // An abandoned call is lost to its worker: it is run again, not collected.
    if (!abandoned) channel.tell({ t: 'exit', ...result });
    return result;
  })();

  return {
    cancel: () => {
      cancelled = true;
      terminate(CANCEL_GRACE_MS);
    },
    abandon: () => {
      abandoned = true;
      terminate(0);
    },
    pid,
    token: spec.token,
    statePath: spec.statePath,
    done,
  };
}
