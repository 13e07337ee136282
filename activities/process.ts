/**
 * Runs one child process for an activity: in its own process group, output streamed to a log
 * file (errors such as a full disk are reported, never thrown; size capped), a short tail kept,
 * heartbeats while it runs. The call ends when the child exits: whatever it left behind — in its
 * group or escaped with `setsid`, found by a per-call environment token — is killed and the pipes
 * are closed after a short grace, so a background process holding the output cannot stretch the
 * call. The timeout bounds the whole call. Cancellation (STOP --now, worker shutdown) kills the
 * tree; a pid file lets a later attempt kill the survivors of a crashed worker.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { Context } from '@temporalio/activity';
import { redactSecrets } from '../workflows/decisions/scans.js';
import { CancelledFailure } from '@temporalio/common';
import { processStartTime, signalTree, TOKEN_VAR } from './process-tree.js';
import { describeWriteError, LogSink, writePrivateFile } from './safe-files.js';

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
  /** Records the child so a later attempt can kill a survivor of a crashed worker. */
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
}

/** SIGTERM → SIGKILL grace on timeout and cancellation. */
const KILL_GRACE_MS = 3000;
/** After the child exits, how long its output pipes may stay open (drained) before they are closed. */
const PIPE_GRACE_MS = 500;
const TAIL_KEEP = 64 * 1024;
export const DEFAULT_MAX_LOG_BYTES = 64 * 1024 * 1024;

/** The worker's own settings, never handed to an agent, a test run or a gate's tools. */
const WORKER_ONLY = new Set(['VIGIL_WORKER_SECRET', 'DATABASE_URL', 'VIGIL_DATABASE_URL']);

/**
 * The worker's environment for a child, minus the worker's own Temporal, codec and event-store
 * settings (the store's URL holds its password).
 */
export function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('TEMPORAL_') && !k.startsWith('VIGIL_CODEC_') && !WORKER_ONLY.has(k)) env[k] = v;
  }
  return env;
}

interface PidRecord {
  pid?: unknown;
  startTime?: unknown;
  token?: unknown;
}

/** Kills the process tree recorded in `pidFile` if that exact process (or a token holder) is still alive. */
export function killSurvivor(pidFile: string): boolean {
  let rec: PidRecord;
  try {
    rec = JSON.parse(readFileSync(pidFile, 'utf8')) as PidRecord;
  } catch {
    return false;
  }
  rmSync(pidFile, { force: true });
  if (typeof rec.pid !== 'number' || typeof rec.startTime !== 'string') return false;
  const token = typeof rec.token === 'string' ? rec.token : '';
  const alive = processStartTime(rec.pid) === rec.startTime; // else gone, or the pid was reused
  const strays = signalTree(alive ? rec.pid : undefined, token, 'SIGKILL');
  return alive || strays > 0;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

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

export async function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const ctx = Context.current();
  const started = Date.now();
  killSurvivor(spec.pidFile);

  const log = new LogSink(spec.logPath, spec.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES);
  log.write(spec.header.endsWith('\n') ? spec.header : `${spec.header}\n`);

  let tail = '';
  let head = '';
  const keepHead = spec.keepHead ?? 0;
  let outputBytes = 0;
  let sawWatched = false;
  const watch = spec.watchFor ?? '';
  let carry = '';
  let pidFileError: string | null = null;
  let session: string | null = null;

  const token = randomUUID();
  // Called only once the child exists (from its output and the heartbeat timer).
  function beatNow(): void {
    // What the UI's pending activity shows: how long the call has run and its last output line
    // (credentials redacted, as everything that leaves the activity).
    ctx.heartbeat({
      pid: child.pid,
      outputBytes,
      elapsedSeconds: Math.round((Date.now() - started) / 1000),
      lastLine: lastLine(tail),
      ...spec.heartbeatDetails,
      ...(session ? { session } : {}),
    });
  }
  const child = spawn(spec.file, spec.args, {
    cwd: spec.cwd,
    env: { ...spec.env, [TOKEN_VAR]: token },
    detached: true, // own process group: the whole tree can be signalled
    stdio: ['pipe', 'pipe', 'pipe'],
  });

  // The log gets the raw bytes; text (tail, promise search) is decoded across chunk boundaries
  // so a multi-byte character split between two reads is not mangled.
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
    log.write(chunk);
    onText(decoder.write(chunk));
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  // A child that does not read its input closes the pipe: EPIPE is not our failure.
  child.stdin.on('error', () => {});
  child.stdin.end(spec.stdin);

  const pid = child.pid;
  if (pid !== undefined) {
    try {
      writePrivateFile(spec.pidFile, JSON.stringify({ pid, startTime: processStartTime(pid), token, at: new Date().toISOString() }));
    } catch (err) {
      pidFileError = describeWriteError(`cannot write ${spec.pidFile}`, err);
    }
  }

  // Resolves when the child has exited (or could not start), not when its pipes close.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error: NodeJS.ErrnoException | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, error: null }));
    child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, error }));
  });
  const pipesClosed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let timedOut = false;
  let cancelled = false;
  let killTimer: NodeJS.Timeout | undefined;
  const terminate = (): void => {
    if (pid === undefined || killTimer) return;
    signalTree(pid, token, 'SIGTERM');
    killTimer = setTimeout(() => signalTree(pid, token, 'SIGKILL'), KILL_GRACE_MS);
  };
  const timeout = setTimeout(() => {
    timedOut = true;
    terminate();
  }, spec.timeoutMs);
  const onAbort = (): void => {
    cancelled = true;
    terminate();
  };
  ctx.cancellationSignal.addEventListener('abort', onAbort);
  // Heartbeat from a timer, not only on output: a silent agent is still alive.
  const beat = setInterval(beatNow, 1000);
  beatNow();

  const exit = await exited;
  clearTimeout(timeout);
  // The direct child is gone; nothing it started may outlive the call (its group, and anything
  // that escaped the group but carries the call's token).
  const strays = pid !== undefined ? signalTree(pid, token, 'SIGKILL') : 0;
  // Drain what is still in the pipes; a survivor that escaped every kill cannot hold the call open.
  await Promise.race([pipesClosed, new Promise((r) => setTimeout(r, PIPE_GRACE_MS))]);
  child.stdout.destroy();
  child.stderr.destroy();
  onText(decoder.end());
  clearInterval(beat);
  ctx.cancellationSignal.removeEventListener('abort', onAbort);
  if (killTimer) clearTimeout(killTimer);
  rmSync(spec.pidFile, { force: true });

  const durationMs = Date.now() - started;
  let exitCode: number;
  let spawnError: string | null = null;
  const code = exit.error?.code;
  if (pid === undefined || exit.error) {
    spawnError = `${spec.file}: ${code === 'ENOENT' ? 'command not found' : code === 'EACCES' ? 'permission denied' : (exit.error?.message ?? 'could not start')}`;
    exitCode = 127;
  } else if (timedOut) {
    exitCode = 124;
  } else if (typeof exit.code === 'number') {
    exitCode = exit.code;
  } else {
    exitCode = 128 + (SIGNAL_NUMBERS[exit.signal ?? 'SIGKILL'] ?? 9);
  }
  const footer = `\n=== vigil: exit ${exitCode}${timedOut ? ' (timed out)' : ''}${cancelled ? ' (cancelled)' : ''}${spawnError ? ` (${spawnError})` : ''}${strays ? ` (${strays} leftover process(es) killed)` : ''} after ${durationMs} ms ===\n`;
  await log.end(footer);

  if (cancelled) throw new CancelledFailure('the process was cancelled');
  return { exitCode, timedOut, durationMs, tail, head, outputBytes, sawWatched, spawnError, logError: log.error ?? pidFileError, strays };
}
