/**
 * The git helper: one small long-lived Node process (git-helper-child.ts) that runs every git
 * command of the process (the worker's activities, the CLI's checkpoints and rejudge), so the
 * process itself never spawns git. Started
 * on first use, shared by every activity of the process, answered over stdio (requests in flight
 * at once are answered as they finish), and restarted on the next request when it died — a
 * request lost with it is sent again once (every operation is read-only for the repository).
 * It holds the worker's event loop open only while a request is in flight, and exits when the
 * worker does (its stdin closes).
 *
 * It runs at a lower CPU priority than the worker (`configureGitHelper`; the worker's
 * `--git-niceness`, workers/tuning.ts), and so do the git commands it starts: on a machine the runs
 * keep busy, the worker answers its workflow tasks (a pause, a status) before the bookkeeping of
 * the runs' repositories, instead of queueing behind it. Where the machine is idle, a niceness
 * changes nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import os from 'node:os';
import { configEnv, FIXED_SETTINGS, noHooksDir, safeGitEnv } from './git-env.js';
import { gitHelperMain } from './git-helper-child.js';
import { UnsafeGitLayout } from './git-layout.js';
import { checkGitLayout } from './git-quarantine.js';

/** A request lasting longer than this is taken as a hung helper: it is killed (and restarted by the next request). */
const REQUEST_TIMEOUT_MS = 15 * 60 * 1000;

export interface GitRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface GitInspection {
  repo: boolean;
  treeHash?: string;
  head?: string | null;
  /** `git diff --numstat -z` from the run start (or the empty tree) to the working tree. */
  sinceStart?: string;
  /** The same from the previous tree; '' when unchanged, null when the previous tree is unknown or gone. */
  sinceLast?: string | null;
  /** The checkpoint commit made of the tree, when one was asked for and the tree is not the previous one. */
  checkpoint?: string | null;
}

/** A checkpoint to make: a commit of the tree under `ref` (parent `parent` when it still exists), `prune` deleted with it; `env` the committer. */
export interface CheckpointAsk {
  parent: string | null;
  ref: string;
  message: string;
  prune: readonly string[];
  env: Readonly<Record<string, string>>;
}

type Request = { baseEnv?: Record<string, string> } & (
  | { op: 'git'; cwd: string; args: string[]; env?: Record<string, string>; input?: string }
  | { op: 'treeHash'; cwd: string }
  | { op: 'inspect'; cwd: string; runStartSha: string | null; previousTree: string | null; checkpoint: CheckpointAsk | null }
  | ({ op: 'checkpoint'; cwd: string; tree: string } & CheckpointAsk)
);

interface Pending {
  resolve: (answer: Record<string, unknown>) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  /** The helper the request was sent to: only its own exit fails the request. */
  child: ChildProcess;
}

/** The niceness of helpers started from now on (0: the worker's own priority). */
let niceness = 0;

/**
 * Sets the niceness (0–19) of the git helper, the running one included (the git it starts from
 * then on inherits it). Lowering a running helper's niceness needs a privilege; without it, the
 * running helper keeps its own and the next one started gets the new value.
 */
export function configureGitHelper(settings: { niceness: number }): void {
  if (!Number.isInteger(settings.niceness) || settings.niceness < 0 || settings.niceness > 19)
    throw new RangeError(`the git helper's niceness must be an integer from 0 to 19, got ${settings.niceness}`);
  niceness = settings.niceness;
  const pid = gitHelper.pid;
  if (pid !== null) renice(pid, niceness);
}

function renice(pid: number, value: number): void {
  try {
    os.setPriority(pid, value);
  } catch {
    /* a system that refuses it leaves the helper as it is */
  }
}

/** The helper died with the request: it may be sent again. */
class HelperLost extends Error {}

class GitHelper {
  private child: ChildProcess | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private starts = 0;

  /** The helper's pid, or null while none runs. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** How many helper processes this worker has started (1 unless one died). */
  get started(): number {
    return this.starts;
  }

  private start(): ChildProcess {
    const child = spawn(process.execPath, ['-e', `(${gitHelperMain.toString()})()`], { stdio: ['pipe', 'pipe', 'inherit'] });
    // Before the first request, so that every git it starts inherits the priority (raising a
    // niceness needs no privilege).
    if (niceness > 0 && child.pid !== undefined) renice(child.pid, niceness);
    this.starts += 1;
    // Each helper's answers are read on their own: a helper being stopped that still prints
    // cannot mix its bytes into the next one's lines.
    let buffered = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        this.answer(line);
      }
    });
    // A write to a helper that just died fails here, and its exit handler answers the requests.
    child.stdin?.on('error', () => {});
    child.on('error', () => {});
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      // Only the requests sent to this helper: a stopped helper whose exit is noticed late (a
      // busy machine) never fails the requests of the one started after it.
      const why = new HelperLost(`the git helper exited (${signal ?? `code ${code}`})`);
      for (const [id, p] of this.pending) {
        if (p.child !== child) continue;
        clearTimeout(p.timer);
        this.pending.delete(id);
        p.reject(why);
      }
      if (this.pending.size === 0) this.hold(false);
    });
    this.child = child;
    this.hold(false);
    return child;
  }

  /** Keeps the event loop alive only while requests are in flight. */
  private hold(on: boolean): void {
    const c = this.child;
    if (!c) return;
    for (const s of [c.stdin, c.stdout] as (Socket | null)[]) {
      if (on) s?.ref();
      else s?.unref();
    }
    if (on) c.ref();
    else c.unref();
  }

  private answer(line: string): void {
    let answer: Record<string, unknown> & { id?: number; ok?: boolean; error?: string };
    try {
      answer = JSON.parse(line) as typeof answer;
    } catch {
      return;
    }
    const p = this.pending.get(answer.id ?? -1);
    if (!p) return;
    this.pending.delete(answer.id as number);
    clearTimeout(p.timer);
    if (this.pending.size === 0) this.hold(false);
    if (answer.ok) p.resolve(answer);
    else p.reject(new Error(answer.error ?? 'the git helper failed'));
  }

  private once(req: Request): Promise<Record<string, unknown>> {
    const child = this.child ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the git helper did not answer within ${REQUEST_TIMEOUT_MS / 1000}s (${req.op} in ${req.cwd}); it is restarted`));
        child.kill('SIGKILL');
      }, REQUEST_TIMEOUT_MS);
      timer.unref();
      if (this.pending.size === 0) this.hold(true);
      this.pending.set(id, { resolve, reject, timer, child });
      child.stdin?.write(`${JSON.stringify({ id, ...req })}\n`);
    });
  }

  async request(ask: Request): Promise<Record<string, unknown>> {
    const req = { ...ask, baseEnv: gitEnvFor(ask.cwd) };
    try {
      return await this.once(req);
    } catch (err) {
      if (!(err instanceof HelperLost)) throw err;
      return this.once(req);
    }
  }

  /** Stops the helper (tests; a worker's helper simply ends with the worker). */
  stop(): void {
    this.child?.kill();
    this.child = null;
  }
}

/**
 * The refusal of a repository whose git an agent changed: the run pauses or ends over it
 * (rules/repository.ts). The activities say it to Temporal as a non-retryable UnsafeRepository
 * failure (activities/git-helper.ts); the CLI prints its message.
 */
export class UnsafeRepositoryError extends Error {
  constructor(
    readonly repoPath: string,
    readonly findings: readonly string[],
  ) {
    super(
      `the repository's git was changed under the run, and Vigil's git does not follow it (${repoPath}): ${findings.join('; ')}`.slice(
        0,
        4000,
      ),
    );
    this.name = 'UnsafeRepositoryError';
  }
}

/**
 * The environment for git commands in `cwd`: the repository's git checked first (a change is
 * moved aside and refused: UnsafeRepositoryError), then its folders pinned and its configuration's
 * commands neutralised (lib/git-env.ts). A folder that is not a repository gets the fixed
 * settings only.
 */
export function gitEnvFor(cwd: string): Record<string, string> {
  let checked: ReturnType<typeof checkGitLayout>;
  try {
    checked = checkGitLayout(cwd);
  } catch (err) {
    if (err instanceof UnsafeGitLayout) throw new UnsafeRepositoryError(cwd, err.findings);
    throw err;
  }
  if (checked.findings.length > 0) throw new UnsafeRepositoryError(cwd, checked.findings);
  const fixed = [...FIXED_SETTINGS, ['core.hooksPath', noHooksDir()] as const];
  if (checked.dirs === null) return configEnv(fixed);
  try {
    return safeGitEnv(checked.dirs);
  } catch {
    // A configuration git cannot read: the command fails on it with git's own message.
    return configEnv(fixed);
  }
}

/** The helper of this process. */
export const gitHelper = new GitHelper();

/** Runs git in `cwd` through the helper; the exit code is the caller's to judge. */
export async function runGit(cwd: string, args: string[], env?: Record<string, string>, input?: string): Promise<GitRun> {
  const r = await gitHelper.request({ op: 'git', cwd, args, ...(env ? { env } : {}), ...(input !== undefined ? { input } : {}) });
  return { exitCode: Number(r.exitCode), stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
}

/** The tree hash of the working tree (see activities/repo.ts), in one round trip. */
export async function helperTreeHash(cwd: string): Promise<string> {
  return String((await gitHelper.request({ op: 'treeHash', cwd })).treeHash);
}

/** Everything an iteration's inspection needs from git, the checkpoint of a changed tree included, in one round trip. */
export async function helperInspect(
  cwd: string,
  runStartSha: string | null,
  previousTree: string | null,
  checkpoint: CheckpointAsk | null = null,
): Promise<GitInspection> {
  return (await gitHelper.request({ op: 'inspect', cwd, runStartSha, previousTree, checkpoint })) as unknown as GitInspection;
}

/** A checkpoint commit of `tree` (see CheckpointAsk), in one round trip. */
export async function helperCheckpoint(cwd: string, tree: string, ask: CheckpointAsk): Promise<string> {
  return String((await gitHelper.request({ op: 'checkpoint', cwd, tree, ...ask })).commit);
}
