/**
 * Runs one child process for an activity: in its own process group (so the whole tree can be
 * killed), output streamed to a log file, a short tail kept, heartbeats while it runs, killed on
 * timeout, on activity cancellation (STOP --now, worker shutdown) and, via a pid file, when a later
 * attempt finds a survivor of a crashed worker.
 */
import { createWriteStream, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { execa } from 'execa';
import { StringDecoder } from 'node:string_decoder';

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
}

const KILL_GRACE_MS = 3000;

/** The worker's environment for a child, minus the worker's own Temporal connection settings. */
export function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEMPORAL_')) env[k] = v;
  return env;
}
const TAIL_KEEP = 64 * 1024;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone, or not a group leader any more: try the process itself.
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
  }
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** Kills the process group recorded in `pidFile` if that exact process is still alive. */
export function killSurvivor(pidFile: string): boolean {
  let rec: { pid?: unknown; startTime?: unknown };
  try {
    rec = JSON.parse(readFileSync(pidFile, 'utf8')) as { pid?: unknown; startTime?: unknown };
  } catch {
    return false;
  }
  rmSync(pidFile, { force: true });
  if (typeof rec.pid !== 'number' || typeof rec.startTime !== 'string') return false;
  if (processStartTime(rec.pid) !== rec.startTime) return false; // gone, or the pid was reused
  killGroup(rec.pid, 'SIGKILL');
  return true;
}

export async function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const ctx = Context.current();
  const started = Date.now();
  killSurvivor(spec.pidFile);

  const log: WriteStream = createWriteStream(spec.logPath, { flags: 'a' });
  log.write(spec.header.endsWith('\n') ? spec.header : `${spec.header}\n`);

  let tail = '';
  let head = '';
  const keepHead = spec.keepHead ?? 0;
  let outputBytes = 0;
  let sawWatched = false;
  const watch = spec.watchFor ?? '';
  let carry = '';

  const child = execa(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    extendEnv: false,
    input: spec.stdin,
    detached: true, // own process group: the whole tree can be signalled
    reject: false,
    buffer: false,
    stripFinalNewline: false,
    all: true,
    encoding: 'buffer',
  });

  // The log gets the raw bytes; text (tail, promise search) is decoded across chunk boundaries
  // so a multi-byte character split between two reads is not mangled.
  const decoder = new StringDecoder('utf8');
  const onText = (text: string): void => {
    tail = (tail + text).slice(-TAIL_KEEP);
    if (head.length < keepHead) head += text.slice(0, keepHead - head.length);
    if (watch && !sawWatched) {
      const hay = carry + text;
      if (hay.includes(watch)) sawWatched = true;
      carry = watch.length > 1 ? hay.slice(-(watch.length - 1)) : '';
    }
  };
  const onData = (chunk: Buffer | string): void => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    outputBytes += buf.length;
    log.write(buf);
    onText(decoder.write(buf));
  };
  child.all?.on('data', onData);

  const pid = child.pid;
  if (pid !== undefined) {
    writeFileSync(spec.pidFile, JSON.stringify({ pid, startTime: processStartTime(pid), at: new Date().toISOString() }));
  }

  let timedOut = false;
  let cancelled = false;
  let killTimer: NodeJS.Timeout | undefined;
  const terminate = (): void => {
    if (pid === undefined || killTimer) return;
    killGroup(pid, 'SIGTERM');
    killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), KILL_GRACE_MS);
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
  const beat = setInterval(() => ctx.heartbeat({ pid, outputBytes }), 1000);
  ctx.heartbeat({ pid, outputBytes });

  const result = await child;
  onText(decoder.end());
  clearInterval(beat);
  clearTimeout(timeout);
  ctx.cancellationSignal.removeEventListener('abort', onAbort);
  // The direct child is gone; make sure nothing it started lingers in its group.
  if (pid !== undefined) killGroup(pid, 'SIGKILL');
  if (killTimer) clearTimeout(killTimer);
  rmSync(spec.pidFile, { force: true });

  const durationMs = Date.now() - started;
  let exitCode: number;
  let spawnError: string | null = null;
  const code = (result as { code?: string }).code;
  if (pid === undefined || code === 'ENOENT' || code === 'EACCES') {
    spawnError = `${spec.file}: ${code === 'ENOENT' ? 'command not found' : code === 'EACCES' ? 'permission denied' : (result.shortMessage ?? 'could not start')}`;
    exitCode = 127;
  } else if (timedOut) {
    exitCode = 124;
  } else if (typeof result.exitCode === 'number') {
    exitCode = result.exitCode;
  } else {
    const sig = result.signal ?? 'SIGKILL';
    const num: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
    exitCode = 128 + (num[sig] ?? 9);
  }
  const footer = `\n=== vigil: exit ${exitCode}${timedOut ? ' (timed out)' : ''}${cancelled ? ' (cancelled)' : ''}${spawnError ? ` (${spawnError})` : ''} after ${durationMs} ms ===\n`;
  await new Promise<void>((resolve) => log.end(footer, () => resolve()));

  if (cancelled) throw new CancelledFailure('the process was cancelled');
  return { exitCode, timedOut, durationMs, tail, head, outputBytes, sawWatched, spawnError };
}
