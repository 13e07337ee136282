/**
 * Shared by the gate activities: find a checker binary that is already on this machine (the
 * repository's `node_modules/.bin` first, then PATH — never fetched), and run it with a hard
 * timeout, no input and capped output. Gates read tool output as facts; a tool that hangs, floods
 * its output or is cancelled must not hold the activity, so every run is bounded in time and size
 * and its whole process tree is killed when it ends.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import path from 'node:path';
import { inheritedEnv } from '../child-env.js';
import { awaitTreeGone, SANDBOX_STATUS_FD, sandboxStatusReader, signalTree, TOKEN_VAR } from '../process-tree.js';
import { workerStoreUrl } from '../event-store.js';
import { prepareSandbox, sandboxReport, type PreparedSandbox } from '../sandbox.js';
import { CallLimiter } from '../sandbox-limits.js';
import type { SandboxMode, SandboxReport } from '../../schemas/sandbox.js';

/** Output kept per stream by default: enough for any summary, small enough for the worker's memory. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** SIGTERM → SIGKILL grace on timeout and cancellation. */
const KILL_GRACE_MS = 2000;
/** After the tool exits, how long a leftover holder of its pipes may delay the end of the call. */
const PIPE_GRACE_MS = 300;

export interface ToolRunOptions {
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Variables set over the worker's inherited environment (e.g. a PATH, GOTOOLCHAIN). */
  env?: Record<string, string>;
  /** Bytes kept per stream (stdout, stderr); the rest is dropped and `truncated` set. */
  maxOutputBytes?: number;
  /** Run the tool in the agent sandbox (a gate reads code the agent wrote: an eslint config is a program). */
  sandbox?: ToolSandbox;
}

/**
 * A gate tool's sandbox: the run's repository read-only, no network, nothing of the worker's
 * (docs/security.md, The agent's sandbox). `report` receives how each run was isolated and what
 * it was refused.
 */
export interface ToolSandbox {
  runId: string;
  repoPath: string;
  /** The run's sandbox knob (absent: the worker's setting). */
  mode?: SandboxMode | undefined;
  report?: (r: SandboxReport) => void;
  /** Host folders shown read-only besides the repository (a scratch tree's linked dependency folders). */
  readable?: string[];
}

export interface ToolRun {
  /** The exit code; null when the tool was killed by a signal or never started. */
  exitCode: number | null;
  timedOut: boolean;
  /** The run was cancelled through `signal`. */
  aborted: boolean;
  stdout: string;
  stderr: string;
  /** Some output was dropped (over `maxOutputBytes`). */
  truncated: boolean;
  /** Set when the tool could not be started at all (ENOENT, EACCES, ...). */
  spawnError: string | null;
}

/** Environment for a checker: the worker's (minus its secrets), non-interactive and colourless, so output parses. */
export function toolEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = inheritedEnv();
  return { ...env, CI: env.CI ?? 'true', NO_COLOR: '1', FORCE_COLOR: '0', TERM: 'dumb', ...extra };
}

/** Keeps the first `max` bytes of a stream and counts what was dropped. */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  dropped = false;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    const room = this.max - this.kept;
    if (room <= 0) {
      this.dropped = true;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.dropped = true;
    this.chunks.push(part);
    this.kept += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * Runs `file args` in its own process group with stdin closed. On timeout or abort the group (and
 * anything that escaped it carrying this run's token) gets SIGTERM, then SIGKILL after a grace; when
 * the tool exits, whatever it left running is killed too. Never throws: a tool that cannot start
 * is reported in `spawnError`.
 */
export async function runTool(file: string, args: readonly string[], opts: ToolRunOptions): Promise<ToolRun> {
  const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const out = new CappedBuffer(max);
  const err = new CappedBuffer(max);
  if (opts.signal?.aborted)
    return { exitCode: null, timedOut: false, aborted: true, stdout: '', stderr: '', truncated: false, spawnError: null };
  if (opts.timeoutMs <= 0)
    return { exitCode: null, timedOut: true, aborted: false, stdout: '', stderr: '', truncated: false, spawnError: null };

  const token = randomUUID();
  let run = { file, args: [...args], env: toolEnv(opts.env) };
  let sandbox: PreparedSandbox | null = null;
  if (opts.sandbox) {
    try {
      sandbox = prepareSandbox({
        kind: 'gate',
        runId: opts.sandbox.runId,
        repoPath: opts.sandbox.repoPath,
        cwd: opts.cwd,
        file,
        args: [...args],
        env: run.env,
        provider: null,
        runMode: opts.sandbox.mode,
        registries: false,
        ...(opts.sandbox.readable?.length ? { readable: opts.sandbox.readable } : {}),
        storeUrl: workerStoreUrl().url,
      });
    } catch (e) {
      // strict, and the sandbox cannot run here: the tool does not run unsandboxed.
      return {
        exitCode: null,
        timedOut: false,
        aborted: false,
        stdout: '',
        stderr: '',
        truncated: false,
        spawnError: `${path.basename(file)}: ${e instanceof Error ? e.message : String(e)}`.slice(0, 500),
      };
    }
    run = { file: sandbox.file, args: sandbox.args, env: sandbox.env };
  }
  // A sandboxed tool runs within the sandbox's limits (sandbox-limits.ts), as an agent call does.
  const limiter = sandbox?.limits ? new CallLimiter(sandbox.limits, token) : null;
  if (limiter) run = { ...run, ...limiter.wrap(run.file, run.args) };
  const child = spawn(run.file, run.args, {
    cwd: opts.cwd,
    env: { ...run.env, [TOKEN_VAR]: token },
    detached: true, // own process group: the whole tree can be signalled
    // A sandbox's bubblewrap writes its status (its pid namespace) to a pipe of its own.
    stdio: sandbox?.pidNamespace ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
  }) as ChildProcessByStdio<null, Readable, Readable>;
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const status = sandboxStatusReader();
  const statusPipe = sandbox?.pidNamespace ? (child.stdio[SANDBOX_STATUS_FD] as Readable | null | undefined) : null;
  statusPipe?.on('data', status.push);
  statusPipe?.on('error', () => {});

  const exited = new Promise<{ code: number | null; error: NodeJS.ErrnoException | null }>((resolve) => {
    child.once('exit', (code) => resolve({ code, error: null }));
    child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, error }));
  });
  const pipesClosed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  const pid = child.pid;
  let timedOut = false;
  let aborted = false;
  let killTimer: NodeJS.Timeout | undefined;
  const terminate = (): void => {
    if (pid === undefined || killTimer) return;
    signalTree(pid, token, 'SIGTERM');
    killTimer = setTimeout(() => signalTree(pid, token, 'SIGKILL'), KILL_GRACE_MS);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    terminate();
  }, opts.timeoutMs);
  if (pid !== undefined) limiter?.started(pid);
  const limitWatch =
    limiter && pid !== undefined
      ? setInterval(() => {
          if (!limiter.check()) return;
          signalTree(pid, token, 'SIGKILL');
          limiter.kill();
        }, limiter.intervalMs)
      : undefined;
  const onAbort = (): void => {
    aborted = true;
    terminate();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  const exit = await exited;
  clearTimeout(timer);
  clearInterval(limitWatch);
  opts.signal?.removeEventListener('abort', onAbort);
  if (pid !== undefined && !exit.error) signalTree(pid, token, 'SIGKILL'); // leftovers of a finished tool
  await Promise.race([pipesClosed, new Promise((r) => setTimeout(r, PIPE_GRACE_MS))]);
  child.stdout.destroy();
  child.stderr.destroy();
  if (killTimer) clearTimeout(killTimer);

  let spawnError: string | null = null;
  if (exit.error || pid === undefined) {
    const code = exit.error?.code;
    spawnError =
      `${path.basename(file)}: ` +
      `${code === 'ENOENT' ? 'command not found' : code === 'EACCES' ? 'permission denied' : (exit.error?.message ?? 'could not start')}`;
  }
  const limits = limiter ? await limiter.close() : null;
  // The tool has ended when every process of it is gone (bubblewrap exits before the kernel has
  // emptied its namespace): nothing of it still writes when the next step reads the tree.
  if (pid !== undefined) {
    const ns = status.pidNamespace();
    const survivors = await awaitTreeGone({ pid, token: ns ? '' : token, pidNamespace: ns });
    if (survivors.length) err.push(Buffer.from(`\nvigil: ${survivors.length} process(es) of the tool would not die\n`));
  }
  statusPipe?.destroy();
  if (limits?.reason) err.push(Buffer.from(`\nvigil: ${limits.reason}\n`));
  if (sandbox && opts.sandbox?.report)
    opts.sandbox.report(sandboxReport(sandbox, [], `${err.text().slice(-8192)}\n${out.text().slice(-8192)}`, limits));
  return {
    exitCode: timedOut || aborted ? null : exit.code,
    timedOut,
    aborted,
    stdout: out.text(),
    stderr: err.text(),
    truncated: out.dropped || err.dropped,
    spawnError,
  };
}
