/**
 * Helpers for driving the `vigil` CLI as a user would: each command is a real `node bin/vigil.js`
 * process with a clean environment (no inherited VIGIL_* / TEMPORAL_* variables) and a timeout,
 * plus a `vigil worker` child process that is started once per test file.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { CLI, sleep } from '../support/harness.js';
import { patient } from '../support/patience.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A scratch working directory for CLI commands, so no `vigil.config.json` is picked up by accident. */
export const CLI_CWD = mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-cwd-'));

/**
 * VIGIL_HOME of the CLI commands and workers of this test file (one for all of them, so they share
 * the run secret): never the machine's ~/.vigil, whose local event store (say, after a demo) would
 * turn every run's event store on.
 */
export const CLI_HOME = mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-home-'));

/** The parent environment without any Vigil, Temporal or store settings, plus `extra` (VIGIL_HOME: CLI_HOME unless given). */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('VIGIL_') || k.startsWith('TEMPORAL_') || k === 'DATABASE_URL' || k.startsWith('OTEL_')) continue;
    env[k] = v;
  }
  return { ...env, VIGIL_HOME: CLI_HOME, ...extra };
}

export interface VigilOptions {
  env?: Record<string, string>;
  timeoutMs?: number;
  cwd?: string;
}

/** Runs `vigil ARGS` to completion (never rejects on a non-zero exit; throws on a timeout). */
export async function runVigil(args: string[], base: Record<string, string>, opts: VigilOptions = {}): Promise<CliResult> {
  const timeout = patient(opts.timeoutMs ?? 60_000);
  const r = await execa(process.execPath, [CLI, ...args], {
    env: cleanEnv({ ...base, ...opts.env }),
    extendEnv: false,
    cwd: opts.cwd ?? CLI_CWD,
    stdin: 'ignore',
    reject: false,
    timeout,
  });
  if (r.timedOut || r.exitCode === undefined) {
    throw new Error(
      `vigil ${args.join(' ')} ${r.timedOut ? `timed out after ${timeout} ms` : `was killed by ${r.signal ?? 'a signal'}`}\n` +
        `stdout: ${String(r.stdout)}\nstderr: ${String(r.stderr)}`,
    );
  }
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** A one-line summary of a CLI result for assertion messages. */
export function show(r: CliResult): string {
  return `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

export interface WorkerProcess {
  /** stdout and stderr as they came (the last 50 KB). */
  output(): string;
  /** Each stream alone, in full. */
  stdout(): string;
  stderr(): string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts `vigil worker [args]` as its own process and resolves once it says it is polling. */
export async function startWorkerProcess(env: Record<string, string>, timeoutMs = 90_000, args: string[] = []): Promise<WorkerProcess> {
  const child: ResultPromise = execa(process.execPath, [CLI, 'worker', ...args], {
    env: cleanEnv(env),
    extendEnv: false,
    cwd: CLI_CWD,
    stdin: 'ignore',
    reject: false,
    buffer: false,
  });
  let seen = '';
  let stdout = '';
  let stderr = '';
  let polling = false;
  let onPolling: (() => void) | null = null;
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
    seen = (seen + d.toString()).slice(-50_000);
    if (!polling && seen.includes('polling')) {
      polling = true;
      onPolling?.();
    }
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    seen = (seen + d.toString()).slice(-50_000);
  });
  let exited = false;
  const done = child.then(() => {
    exited = true;
  });
  await new Promise<void>((resolve, reject) => {
    const limit = patient(timeoutMs);
    const timer = setTimeout(() => reject(new Error(`vigil worker did not start polling within ${limit} ms:\n${seen}`)), limit);
    onPolling = () => {
      clearTimeout(timer);
      resolve();
    };
    if (polling) onPolling();
    void done.then(() => {
      clearTimeout(timer);
      reject(new Error(`vigil worker exited before polling:\n${seen}`));
    });
  });
  return {
    output: () => seen,
    stdout: () => stdout,
    stderr: () => stderr,
    pid: child.pid ?? -1,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const graceful = await Promise.race([done.then(() => true), sleep(20_000).then(() => false)]);
      if (!graceful) {
        child.kill('SIGKILL');
        await done;
      }
    },
  };
}

/** Polls `probe` until it returns a value other than undefined/false/null, or throws after `timeoutMs`. */
export async function waitUntil<T>(
  what: string,
  probe: () => T | Promise<T>,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<NonNullable<T>> {
  timeoutMs = patient(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
    }
    await sleep(intervalMs);
  }
}

export interface ConsoleProcess {
  /** The URL it printed, without the `?token=…` a non-loopback console adds. */
  url: string;
  pid: number;
  child: ResultPromise;
  /** All it printed so far. */
  out: () => string;
}

/** `vigil console ARGS` as a child process (with `env` over a clean environment), once it serves. */
export async function startConsoleProcess(args: string[], env: Record<string, string>): Promise<ConsoleProcess> {
  const child = execa(process.execPath, [CLI, 'console', ...args], {
    env: cleanEnv(env),
    extendEnv: false,
    cwd: CLI_CWD,
    stdin: 'ignore',
    reject: false,
    buffer: false,
    all: true,
  });
  let out = '';
  child.all?.on('data', (d: Buffer) => (out += d.toString()));
  const url = await waitUntil(
    'the console to print its URL',
    () => /^console: (\S+?)(?:\?token=\S+)?$/m.exec(out)?.[1] ?? (child.exitCode !== null ? Promise.reject(new Error(out)) : null),
    60_000,
    100,
  );
  return { url, pid: child.pid as number, child, out: () => out };
}
