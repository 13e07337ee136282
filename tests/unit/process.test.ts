/**
 * Tests of activities/process.ts: runProcess inside a mocked activity context (exit codes, log,
 * tail, watched text across chunk boundaries, timeout and cancellation killing the whole process
 * group), its supervisor (a later attempt of the same call re-attaches to the running child or
 * collects its result instead of running it again; a lost supervisor; a deleted run folder) and
 * killSurvivor (a record left by a crashed attempt). The supervisor runs from dist/: `npm run build`.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import type { Info as ActivityInfo } from '@temporalio/activity';
import { setHeartbeatSendMs } from '../../activities/heartbeat.js';
import { runProcess, supervisorPath, type ProcessResult, type ProcessSpec } from '../../activities/process.js';
import { killSurvivor } from '../../lib/process-tree.js';
import { configureSupervisor } from '../../activities/supervisor-client.js';
import { readState, type SupervisorState } from '../../lib/supervisor-state.js';
import { daemonPid, daemonSocketPath, type SupervisorMode } from '../../lib/supervisor-location.js';

if (!existsSync(supervisorPath())) throw new Error(`${supervisorPath()} is missing: run \`npm run build\` (npm test does it for you)`);

// A daemon of this file's own: its tests kill it, which must not touch other files' calls.
const daemonDir = mkdtempSync(path.join(os.tmpdir(), 'vigil-sup-'));
configureSupervisor({ mode: 'daemon', dir: daemonDir });
afterAll(() => {
  const rec = daemonPid();
  if (rec !== null) {
    try {
      process.kill(rec, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
  rmSync(daemonDir, { recursive: true, force: true });
});

const dirs: string[] = [];
/** Processes started by a test, killed afterwards (if still the same process) in case an assertion failed first. */
const started: { pid: number; startTime: string }[] = [];

function track(pid: number): void {
  const st = startTime(pid);
  if (st !== null) started.push({ pid, startTime: st });
}

afterEach(() => {
  for (const { pid, startTime: st } of started.splice(0)) {
    if (startTime(pid) !== st) continue; // gone, or the pid was reused
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-process-test-'));
  dirs.push(dir);
  return dir;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(cond: () => boolean, timeoutMs = 4000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (cond()) return true;
    await sleep(25);
  }
  return cond();
}

/** /proc/<pid>/stat fields after the command name (field 3 onwards). */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** A process is gone when it no longer exists or is a zombie waiting to be reaped. */
function isGone(pid: number): boolean {
  const fields = statFields(pid);
  return fields === null || fields[0] === 'Z';
}

/** Start time in clock ticks since boot (field 22), as the module records it. */
function startTime(pid: number): string | null {
  return statFields(pid)?.[19] ?? null;
}

async function readPid(file: string): Promise<number> {
  expect(await waitFor(() => existsSync(file) && /^\d+\s*$/.test(readFileSync(file, 'utf8')))).toBe(true);
  const pid = Number(readFileSync(file, 'utf8').trim());
  track(pid);
  return pid;
}

interface TestEnv {
  env: { run: (spec: ProcessSpec) => Promise<ProcessResult>; cancel: () => void };
  heartbeats: unknown[];
}

/** A mocked activity context that records heartbeats, with a typed runner for runProcess. */
function newEnv(info?: Partial<ActivityInfo>): TestEnv {
  const mock = new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') });
  const heartbeats: unknown[] = [];
  mock.on('heartbeat', (d: unknown) => heartbeats.push(d));
  return {
    env: { run: (s) => mock.run(runProcess, s) as Promise<ProcessResult>, cancel: () => mock.cancel() },
    heartbeats,
  };
}

function spec(dir: string, script: string, over: Partial<ProcessSpec> = {}): ProcessSpec {
  return {
    file: '/bin/sh',
    args: ['-c', script],
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdin: '',
    timeoutMs: 10_000,
    logPath: path.join(dir, 'out.log'),
    header: '=== test header ===',
    pidFile: path.join(dir, 'child.pid.json'),
    ...over,
  };
}

/** Spawns `sh -c script` detached (its own process group), as a crashed worker would have left it. */
function spawnDetached(script: string): number {
  const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error('spawn failed');
  track(pid);
  return pid;
}

// The calls below run as from a worker that sends heartbeats every 200 ms: the first beat of a
// call comes that far in (activities/heartbeat.ts), and the tests read the child's pid from it.
beforeAll(() => setHeartbeatSendMs('test', 200));

describe('runProcess', () => {
  it('returns the exit code, writes header, output and footer to the log, keeps a tail', async () => {
    const dir = tempDir();
    // A worker with the usual 5 s interval: a call this short sends no heartbeat at all.
    const { env, heartbeats } = newEnv({ taskQueue: 'usual-heartbeats' });
    const s = spec(dir, 'echo hello out; echo hello err >&2; exit 3');
    const r = await env.run(s);
    expect(r.exitCode).toBe(3);
    expect(r.timedOut).toBe(false);
    expect(r.spawnError).toBeNull();
    expect(r.sawWatched).toBe(false);
    expect(r.tail).toContain('hello out\n');
    expect(r.tail).toContain('hello err\n');
    expect(r.outputBytes).toBe('hello out\nhello err\n'.length);
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
    const log = readFileSync(s.logPath, 'utf8');
    expect(log.startsWith('=== test header ===\n')).toBe(true);
    expect(log).toContain('hello out\n');
    expect(log).toContain('hello err\n');
    expect(log).toMatch(/\n=== vigil: exit 3 after \d+ ms ===\n$/);
    expect(readState(s.pidFile)).toMatchObject({ state: 'exited', exit: { exitCode: 3, outputBytes: 20 } });
    expect(heartbeats).toEqual([]);
  });

  it('records a session chosen for the call in a heartbeat as soon as the call runs, before the first beat of the timer', async () => {
    const dir = tempDir();
    // The usual 5 s interval: without a session this call would send no heartbeat at all (above).
    const { env, heartbeats } = newEnv({ taskQueue: 'usual-heartbeats' });
    const r = await env.run(spec(dir, 'sleep 0.3; echo done', { heartbeatDetails: { session: 'chosen-session' } }));
    expect(r.exitCode).toBe(0);
    expect(heartbeats.length).toBeGreaterThanOrEqual(1);
    expect(heartbeats[0]).toMatchObject({ session: 'chosen-session', pid: expect.any(Number) });
  });

  it('appends to an existing log and returns 0 for a clean exit', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const s = spec(dir, 'printf ok', { header: 'header with newline\n' });
    writeFileSync(s.logPath, 'previous attempt\n');
    const r = await env.run(s);
    expect(r.exitCode).toBe(0);
    const log = readFileSync(s.logPath, 'utf8');
    expect(log.startsWith('previous attempt\nheader with newline\nok\n=== vigil: exit 0 ')).toBe(true);
  });

  it('passes stdin and only the given environment', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const s = spec(dir, 'cat; echo; echo "FOO=$FOO HOME=${HOME:-unset}"; pwd', {
      stdin: 'line one\nline two',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', FOO: 'bar baz' },
    });
    const r = await env.run(s);
    expect(r.exitCode).toBe(0);
    expect(r.tail).toContain('line one\nline two\n');
    expect(r.tail).toContain('FOO=bar baz HOME=unset');
    expect(r.tail).toContain(dir);
  });

  it('keeps only the last 64 KiB as the tail but counts all output, and the head when asked', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const s = spec(dir, "printf START; head -c 100000 /dev/zero | tr '\\0' x; printf END", { keepHead: 10 });
    const r = await env.run(s);
    expect(r.outputBytes).toBe(100008);
    expect(r.tail).toHaveLength(64 * 1024);
    expect(r.tail.endsWith('xEND')).toBe(true);
    expect(r.head).toBe('STARTxxxxx');
    expect(readFileSync(s.logPath, 'utf8')).toContain(`START${'x'.repeat(100000)}END`);
  });

  it('finds watched text split across two writes', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const r = await env.run(spec(dir, 'printf COMPLE; sleep 0.2; printf TION; sleep 0.1; echo', { watchFor: 'COMPLETION' }));
    expect(r.sawWatched).toBe(true);
    expect(r.exitCode).toBe(0);
  });

  it('finds watched text split across three writes', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const r = await env.run(spec(dir, 'printf "xx ALL "; sleep 0.15; printf D; sleep 0.15; printf "ONE yy"', { watchFor: 'ALL DONE' }));
    expect(r.sawWatched).toBe(true);
  });

  it('does not report watched text that is absent, or spread with other text in between', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const r = await env.run(spec(dir, 'printf COMPLE; sleep 0.15; printf xTION; echo COMPLETIO', { watchFor: 'COMPLETION' }));
    expect(r.sawWatched).toBe(false);
    const none = await env.run(spec(dir, 'echo COMPLETION', { watchFor: '' }));
    expect(none.sawWatched).toBe(false);
  });

  it('records the supervisor and the child in the state file while it runs, and how it ended afterwards', async () => {
    const dir = tempDir();
    const { env, heartbeats } = newEnv();
    const s = spec(dir, 'sleep 0.6');
    const run = env.run(s);
    expect(await waitFor(() => readState(s.pidFile)?.state === 'running')).toBe(true);
    const rec = readState(s.pidFile) as SupervisorState;
    expect(typeof rec.pid).toBe('number');
    expect(rec.startTime).toBe(startTime(rec.pid as number));
    expect(rec.supervisor.startTime).toBe(startTime(rec.supervisor.pid));
    expect(rec.key).toBe('test/00000000-0000-0000-0000-000000000000/test');
    expect(await waitFor(() => heartbeats.length > 0)).toBe(true);
    expect(heartbeats[0]).toMatchObject({ pid: rec.pid });
    const r = await run;
    expect(r.exitCode).toBe(0);
    expect(readState(s.pidFile)).toMatchObject({ state: 'exited', pid: rec.pid, exit: { exitCode: 0 } });
    // The daemon supervises the next call too.
    expect(rec.supervisor).toMatchObject({ pid: daemonPid(), shared: true });
    const next = spec(dir, 'exit 3', { pidFile: path.join(dir, 'next.pid.json') });
    expect((await newEnv().env.run(next)).exitCode).toBe(3);
    expect(readState(next.pidFile)?.supervisor.pid).toBe(rec.supervisor.pid);
  });

  it('kills the whole process group on timeout: exit 124, child and grandchild gone', async () => {
    const dir = tempDir();
    const { env, heartbeats } = newEnv();
    const gpidFile = path.join(dir, 'grandchild.pid');
    // A second: time for the shell to start its child and write its pid on a loaded machine.
    const s = spec(dir, `sleep 30 & echo $! > "${gpidFile}"; wait`, { timeoutMs: 1000 });
    const t0 = Date.now();
    const r = await env.run(s);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.exitCode).toBe(124);
    expect(r.timedOut).toBe(true);
    expect(r.spawnError).toBeNull();
    expect(await waitFor(() => heartbeats.length > 0, 5000)).toBe(true);
    const childPid = (heartbeats[0] as { pid: number }).pid;
    track(childPid);
    const grandchild = await readPid(gpidFile);
    expect(await waitFor(() => isGone(childPid))).toBe(true);
    expect(await waitFor(() => isGone(grandchild))).toBe(true);
    // The shell can die of SIGTERM before its child has: that child is then a leftover the final
    // SIGKILL sweep takes, and the footer says so.
    expect(readFileSync(s.logPath, 'utf8')).toMatch(
      /=== vigil: exit 124 \(timed out\)( \(1 leftover process\(es\) killed\))? after \d+ ms ===\n$/,
    );
    expect(readState(s.pidFile)?.exit).toMatchObject({ exitCode: 124, timedOut: true });
  });

  it('escalates to SIGKILL when the process group ignores SIGTERM', async () => {
    const dir = tempDir();
    const { env, heartbeats } = newEnv();
    const gpidFile = path.join(dir, 'grandchild.pid');
    const s = spec(dir, `trap '' TERM; sleep 30 & echo $! > "${gpidFile}"; wait; wait; wait`, { timeoutMs: 300 });
    const t0 = Date.now();
    const r = await env.run(s);
    const elapsed = Date.now() - t0;
    expect(r.exitCode).toBe(124);
    expect(r.timedOut).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(3000); // the grace period
    expect(elapsed).toBeLessThan(4800);
    expect(await waitFor(() => heartbeats.length > 0, 5000)).toBe(true);
    const childPid = (heartbeats[0] as { pid: number }).pid;
    track(childPid);
    const grandchild = await readPid(gpidFile);
    expect(await waitFor(() => isGone(childPid), 10_000)).toBe(true);
    expect(await waitFor(() => isGone(grandchild), 10_000)).toBe(true);
  });

  it('kills what the child left in its group when the child exits on its own', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const gpidFile = path.join(dir, 'grandchild.pid');
    // The background sleep does not hold the output pipe, so the child's exit ends the run.
    const r = await env.run(spec(dir, `sleep 30 >/dev/null 2>&1 & echo $! > "${gpidFile}"; exit 0`));
    expect(r.exitCode).toBe(0);
    const grandchild = await readPid(gpidFile);
    expect(await waitFor(() => isGone(grandchild))).toBe(true);
  });

  it('maps death by a signal to 128 + signal number', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const r = await env.run(spec(dir, 'kill -TERM $$'));
    expect(r.exitCode).toBe(143);
    expect(r.timedOut).toBe(false);
  });

  it('on cancellation kills the tree and throws a CancelledFailure', async () => {
    const dir = tempDir();
    const { env, heartbeats } = newEnv();
    const gpidFile = path.join(dir, 'grandchild.pid');
    const s = spec(dir, `sleep 30 & echo $! > "${gpidFile}"; wait`, { timeoutMs: 60_000 });
    const run = env.run(s);
    const outcome = run.then(
      () => null,
      (error: unknown) => error,
    );
    const grandchild = await readPid(gpidFile);
    // The first heartbeat may come after the grandchild wrote its pid on a busy machine.
    expect(await waitFor(() => heartbeats.length > 0, 5000)).toBe(true);
    const childPid = (heartbeats[0] as { pid: number }).pid;
    track(childPid);
    const t0 = Date.now();
    env.cancel();
    const error = await outcome;
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(error).toBeInstanceOf(CancelledFailure);
    // The tree is killed; how fast is the stop bench's business (bench/stop-latency.ts), so the
    // bound here only has to hold on a loaded machine.
    expect(await waitFor(() => isGone(childPid), 10_000)).toBe(true);
    expect(await waitFor(() => isGone(grandchild), 10_000)).toBe(true);
    // The grandchild may outlive the SIGTERM by a moment and be killed as a leftover.
    expect(readFileSync(s.logPath, 'utf8')).toMatch(/\(cancelled\)( \(\d+ leftover process\(es\) killed\))? after \d+ ms ===\n$/);
    expect(readState(s.pidFile)?.exit).toMatchObject({ cancelled: true });
  });

  it('reports a missing executable as a spawn error (exit 127), without throwing', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const s = spec(dir, '', { file: path.join(dir, 'no-such-program'), args: [] });
    const r = await env.run(s);
    expect(r.exitCode).toBe(127);
    expect(r.spawnError).toMatch(/no-such-program: command not found/);
    expect(r.timedOut).toBe(false);
    expect(readState(s.pidFile)?.exit).toMatchObject({ exitCode: 127 });
    const log = readFileSync(s.logPath, 'utf8');
    expect(log.startsWith('=== test header ===\n')).toBe(true);
    expect(log).toContain('command not found');
  });

  it('reports a missing command on PATH as a spawn error', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const r = await env.run(spec(dir, '', { file: 'vigil-no-such-command-xyz', args: [] }));
    expect(r.exitCode).toBe(127);
    expect(r.spawnError).toContain('command not found');
  });

  it('reports a file that is not executable as a spawn error', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const file = path.join(dir, 'not-executable.sh');
    writeFileSync(file, '#!/bin/sh\necho hi\n', { mode: 0o644 });
    const r = await env.run(spec(dir, '', { file, args: [] }));
    expect(r.exitCode).toBe(127);
    expect(r.spawnError).toContain('permission denied');
  });
});

describe('killSurvivor', () => {
  it('kills the recorded process group when the start time matches, and removes the file', async () => {
    const dir = tempDir();
    const gpidFile = path.join(dir, 'grandchild.pid');
    const pid = spawnDetached(`sleep 30 & echo $! > "${gpidFile}"; wait`);
    const grandchild = await readPid(gpidFile);
    const pidFile = path.join(dir, 'survivor.pid.json');
    const st = startTime(pid);
    expect(st).not.toBeNull();
    writeFileSync(pidFile, JSON.stringify({ pid, startTime: st, at: new Date().toISOString() }));
    expect(killSurvivor(pidFile)).toBe(true);
    expect(existsSync(pidFile)).toBe(false);
    expect(await waitFor(() => isGone(pid))).toBe(true);
    expect(await waitFor(() => isGone(grandchild))).toBe(true);
  });

  it('is what runProcess does first: a survivor recorded in its pid file is killed before the new child starts', async () => {
    const dir = tempDir();
    const pid = spawnDetached('sleep 30');
    expect(await waitFor(() => startTime(pid) !== null)).toBe(true);
    const s = spec(dir, 'echo second attempt');
    writeFileSync(s.pidFile, JSON.stringify({ pid, startTime: startTime(pid), at: new Date().toISOString() }));
    const { env } = newEnv();
    const r = await env.run(s);
    expect(r.exitCode).toBe(0);
    expect(await waitFor(() => isGone(pid))).toBe(true);
    expect(readState(s.pidFile)?.pid).not.toBe(pid);
  });

  it('does nothing when the start time does not match (pid reused), but removes the stale file', async () => {
    const dir = tempDir();
    const pid = spawnDetached('sleep 30');
    expect(await waitFor(() => startTime(pid) !== null)).toBe(true);
    const pidFile = path.join(dir, 'stale.pid.json');
    const wrong = String(Number(startTime(pid)) - 1);
    writeFileSync(pidFile, JSON.stringify({ pid, startTime: wrong, at: new Date().toISOString() }));
    expect(killSurvivor(pidFile)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);
    await sleep(200);
    expect(isGone(pid)).toBe(false);
  });

  it('does nothing for a process that is gone, a missing file, or a malformed file', async () => {
    const dir = tempDir();
    const child = spawn('/bin/sh', ['-c', 'exit 0'], { stdio: 'ignore' });
    const pid = child.pid as number;
    const st = startTime(pid) ?? '12345';
    await new Promise((resolve) => child.on('exit', resolve));
    expect(await waitFor(() => isGone(pid))).toBe(true);
    const pidFile = path.join(dir, 'gone.pid.json');
    writeFileSync(pidFile, JSON.stringify({ pid, startTime: st }));
    expect(killSurvivor(pidFile)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);

    expect(killSurvivor(path.join(dir, 'missing.pid.json'))).toBe(false);

    const bad = path.join(dir, 'bad.pid.json');
    writeFileSync(bad, '{not json');
    expect(killSurvivor(bad)).toBe(false);
    writeFileSync(bad, JSON.stringify({ pid: 'x', startTime: 1 }));
    expect(killSurvivor(bad)).toBe(false);
  });
});

for (const mode of ['daemon', 'per-call'] as SupervisorMode[])
  describe(`a call that outlives its worker (supervisor: ${mode})`, () => {
    beforeAll(() => configureSupervisor({ mode }));
    afterAll(() => configureSupervisor({ mode: 'daemon' }));
    /** A command that counts its runs in `counter`, prints, waits, prints again. */
    const counted = (counter: string, ms: number): string =>
      `echo run >> "${counter}"; echo first part; sleep ${ms / 1000}; echo second part; exit 7`;

    it('a later attempt of the same call re-attaches to the running child: it runs once, and the retry returns its real result', async () => {
      const dir = tempDir();
      const counter = path.join(tempDir(), 'runs');
      const s = spec(dir, counted(counter, 1500), { keepHead: 1000, watchFor: 'second part' });
      // Attempt 1 starts the call, as a worker would before it crashed ...
      const first = newEnv({ attempt: 1 });
      const lost = first.env.run(s);
      expect(await waitFor(() => readState(s.pidFile)?.state === 'running' && existsSync(counter))).toBe(true);
      const rec = readState(s.pidFile) as SupervisorState;
      track(rec.supervisor.pid);
      // ... and the retried attempt finds it still running.
      const second = newEnv({ attempt: 2 });
      const r = await second.env.run(s);
      expect(readFileSync(counter, 'utf8')).toBe('run\n');
      expect(r.exitCode).toBe(7);
      expect(r.head).toBe('first part\nsecond part\n');
      expect(r.tail).toBe('first part\nsecond part\n');
      expect(r.sawWatched).toBe(true);
      expect(r.outputBytes).toBe(23);
      expect(r.durationMs).toBeGreaterThanOrEqual(1500);
      // The retry heartbeats with the same child.
      expect(second.heartbeats[0]).toMatchObject({ pid: rec.pid });
      expect((await lost).exitCode).toBe(7);
      const log = readFileSync(s.logPath, 'utf8');
      expect(log.match(/=== test header ===/g)).toHaveLength(1);
      expect(log.match(/=== vigil: exit 7/g)).toHaveLength(1);
    });

    it('a later attempt collects the result of a child that finished while no worker watched, without running it again', async () => {
      const dir = tempDir();
      const counter = path.join(tempDir(), 'runs');
      const s = spec(dir, counted(counter, 100));
      const r1 = await newEnv({ attempt: 1 }).env.run(s);
      expect(r1.exitCode).toBe(7);
      const r2 = await newEnv({ attempt: 3 }).env.run(s);
      expect(readFileSync(counter, 'utf8')).toBe('run\n');
      expect(r2).toMatchObject({ exitCode: 7, tail: r1.tail, outputBytes: r1.outputBytes, durationMs: r1.durationMs });
    });

    it('runs again for another call, or for the same attempt (nothing of an earlier call is collected by mistake)', async () => {
      const dir = tempDir();
      const counter = path.join(tempDir(), 'runs');
      const s = spec(dir, counted(counter, 50));
      await newEnv({ attempt: 1 }).env.run(s);
      await newEnv({ attempt: 1 }).env.run(s);
      await newEnv({ attempt: 2, activityId: 'another' }).env.run(s);
      expect(readFileSync(counter, 'utf8')).toBe('run\nrun\nrun\n');
    });

    it('a supervisor killed with its worker (a machine lost): the attempt fails retryably, the child is killed, the next attempt runs it again', async () => {
      const dir = tempDir();
      const counter = path.join(tempDir(), 'runs');
      const s = spec(dir, counted(counter, 30_000));
      const run = newEnv({ attempt: 1 }).env.run(s);
      const outcome = run.then(
        () => null,
        (error: unknown) => error,
      );
      expect(await waitFor(() => readState(s.pidFile)?.state === 'running')).toBe(true);
      const rec = readState(s.pidFile) as SupervisorState;
      track(rec.pid as number);
      process.kill(rec.supervisor.pid, 'SIGKILL');
      const error = await outcome;
      expect(error).toBeInstanceOf(ApplicationFailure);
      expect((error as ApplicationFailure).type).toBe('ProcessSupervisorLost');
      expect((error as ApplicationFailure).nonRetryable).toBe(false);
      expect(await waitFor(() => isGone(rec.pid as number))).toBe(true);
      const again = await newEnv({ attempt: 2 }).env.run(spec(dir, `echo run >> "${counter}"`));
      expect(again.exitCode).toBe(0);
      expect(readFileSync(counter, 'utf8')).toBe('run\nrun\n');
    });

    it('an orphan whose run folder is gone kills its tree and ends', async () => {
      const dir = tempDir();
      const runFolder = path.join(dir, 'run');
      mkdirSync(runFolder);
      const s = spec(dir, 'sleep 60', { pidFile: path.join(runFolder, 'call.pid.json'), timeoutMs: 120_000 });
      const run = newEnv().env.run(s);
      expect(await waitFor(() => readState(s.pidFile)?.state === 'running')).toBe(true);
      const rec = readState(s.pidFile) as SupervisorState;
      track(rec.pid as number);
      rmSync(runFolder, { recursive: true, force: true });
      const t0 = Date.now();
      const r = await run;
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(r.exitCode).toBe(137);
      expect(await waitFor(() => isGone(rec.pid as number))).toBe(true);
      // A supervisor of its own ends with its call; the daemon goes on.
      expect(await waitFor(() => isGone(rec.supervisor.pid) === (mode === 'per-call'))).toBe(true);
    });

    it('records the supervisor and the child in the state file; a supervisor of its own does not outlive its child', async () => {
      const dir = tempDir();
      const s = spec(dir, 'sleep 0.3');
      const run = newEnv().env.run(s);
      expect(await waitFor(() => readState(s.pidFile)?.state === 'running')).toBe(true);
      const rec = readState(s.pidFile) as SupervisorState;
      expect(rec.supervisor.startTime).toBe(startTime(rec.supervisor.pid));
      expect(rec.supervisor.shared === true).toBe(mode === 'daemon');
      expect((await run).exitCode).toBe(0);
      expect(await waitFor(() => isGone(rec.supervisor.pid))).toBe(mode === 'per-call');
    });

    it('on cancellation kills the tree, leaves the daemon running, and records the call as cancelled', async () => {
      const dir = tempDir();
      const { env, heartbeats } = newEnv();
      const s = spec(dir, 'sleep 30', { timeoutMs: 60_000 });
      const outcome = env.run(s).then(
        () => null,
        (error: unknown) => error,
      );
      expect(await waitFor(() => heartbeats.length > 0, 5000)).toBe(true);
      const rec = readState(s.pidFile) as SupervisorState;
      track(rec.pid as number);
      env.cancel();
      expect(await outcome).toBeInstanceOf(CancelledFailure);
      expect(await waitFor(() => isGone(rec.pid as number), 10_000)).toBe(true);
      expect(readState(s.pidFile)?.exit).toMatchObject({ cancelled: true });
      if (mode === 'daemon') expect(isGone(rec.supervisor.pid)).toBe(false);
    });
  });

describe('the supervisor daemon', () => {
  it('supervises concurrent calls in one process: no Node process per call', async () => {
    const dir = tempDir();
    const specs = [0, 1, 2, 3].map((i) =>
      spec(dir, `sleep 0.5; echo call ${i}`, { pidFile: path.join(dir, `c${i}.pid.json`), logPath: path.join(dir, `c${i}.log`) }),
    );
    const results = await Promise.all(specs.map((x) => newEnv().env.run(x)));
    expect(results.map((r) => r.tail)).toEqual(['call 0\n', 'call 1\n', 'call 2\n', 'call 3\n']);
    const supervisors = new Set(specs.map((x) => readState(x.pidFile)?.supervisor.pid));
    expect([...supervisors]).toEqual([daemonPid()]);
  });

  it('a later call of the same state file takes over: the earlier tree is killed and records nothing over it', async () => {
    const dir = tempDir();
    const s = spec(dir, 'sleep 30', { timeoutMs: 60_000 });
    // Handled at once: it fails while the later call runs.
    const first = newEnv({ attempt: 1 })
      .env.run(s)
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(await waitFor(() => readState(s.pidFile)?.state === 'running')).toBe(true);
    const old = readState(s.pidFile) as SupervisorState;
    track(old.pid as number);
    // Another call (another activity id) with the same state file.
    const r = await newEnv({ attempt: 1, activityId: 'another' }).env.run(spec(dir, 'echo second'));
    expect(r.exitCode).toBe(0);
    expect(await waitFor(() => isGone(old.pid as number))).toBe(true);
    // The earlier call's worker learns it was lost, retryably (its activity runs again).
    expect(await first).toMatchObject({ type: 'ProcessSupervisorLost', nonRetryable: false });
    await sleep(200);
    expect(readState(s.pidFile)).toMatchObject({
      key: 'test/00000000-0000-0000-0000-000000000000/another',
      state: 'exited',
      exit: { exitCode: 0 },
    });
  });

  it('SIGTERM to the daemon kills every call it supervises and records no exit: the attempts fail retryably', async () => {
    const dir = tempDir();
    const specs = [0, 1].map((i) => spec(dir, 'sleep 30', { timeoutMs: 60_000, pidFile: path.join(dir, `t${i}.pid.json`) }));
    const outcomes = specs.map((x) =>
      newEnv()
        .env.run(x)
        .then(
          () => null,
          (error: unknown) => error,
        ),
    );
    expect(await waitFor(() => specs.every((x) => readState(x.pidFile)?.state === 'running'))).toBe(true);
    const recs = specs.map((x) => readState(x.pidFile) as SupervisorState);
    for (const r of recs) track(r.pid as number);
    process.kill(recs[0]?.supervisor.pid as number, 'SIGTERM');
    for (const o of outcomes) expect(await o).toMatchObject({ type: 'ProcessSupervisorLost', nonRetryable: false });
    for (const r of recs) expect(await waitFor(() => isGone(r.pid as number))).toBe(true);
    expect(await waitFor(() => isGone(recs[0]?.supervisor.pid as number))).toBe(true);
    // The next call starts a daemon again.
    expect((await newEnv().env.run(spec(dir, 'exit 0'))).exitCode).toBe(0);
  });

  it('exits when it has had nothing to do for its idle time, removing its socket; the next call starts another', async () => {
    configureSupervisor({ idleMs: 500 });
    try {
      const dir = tempDir();
      // A daemon of this file may still run (with the default idle time): this one must be new.
      const old = daemonPid();
      if (old !== null) process.kill(old, 'SIGTERM');
      expect(await waitFor(() => daemonPid() === null)).toBe(true);
      const s = spec(dir, 'exit 0');
      expect((await newEnv().env.run(s)).exitCode).toBe(0);
      const first = readState(s.pidFile)?.supervisor.pid as number;
      expect(first).toBe(daemonPid());
      expect(await waitFor(() => isGone(first) && !existsSync(daemonSocketPath()), 5000)).toBe(true);
      expect((await newEnv().env.run(spec(dir, 'exit 0'))).exitCode).toBe(0);
      expect(daemonPid()).not.toBe(first);
      expect(daemonPid()).not.toBeNull();
    } finally {
      configureSupervisor({ idleMs: null });
    }
  });

  it('a daemon folder others can enter is refused: the call gets a supervisor of its own', async () => {
    const open = mkdtempSync(path.join(os.tmpdir(), 'vigil-sup-open-'));
    dirs.push(open);
    chmodSync(open, 0o777);
    configureSupervisor({ dir: open });
    try {
      const dir = tempDir();
      const s = spec(dir, 'echo fine');
      const r = await newEnv().env.run(s);
      expect(r).toMatchObject({ exitCode: 0, tail: 'fine\n' });
      expect(readState(s.pidFile)?.supervisor.shared).toBeUndefined();
      expect(readdirSync(open)).toEqual([]);
    } finally {
      configureSupervisor({ dir: daemonDir });
    }
  });
});

describe('runProcess with multi-byte output split across reads', () => {
  it('keeps UTF-8 intact in the log, the tail and the watched-text search', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const r = await env.run(spec(dir, "printf 'DONE \\303'; sleep 0.2; printf '\\251T\\n'", { watchFor: 'DONE éT' }));
    expect(r.sawWatched).toBe(true);
    expect(r.tail).toBe('DONE éT\n');
    expect(r.outputBytes).toBe(9);
    expect(readFileSync(path.join(dir, 'out.log')).includes(Buffer.from('DONE éT\n'))).toBe(true);
  });
});

describe('runProcess against a hostile environment (full disk, escaped daemons, pipes held open)', () => {
  it('survives a log write failing with ENOSPC: no throw, the exit code and tail kept, the error reported', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    // /dev/full accepts the open and fails every write with ENOSPC, as a full disk does.
    const r = await env.run(spec(dir, 'for i in 1 2 3 4 5; do echo "line $i"; done; exit 2', { logPath: '/dev/full' }));
    expect(r.exitCode).toBe(2);
    expect(r.tail).toContain('line 5');
    expect(r.logError).toMatch(/ENOSPC/);
    expect(r.logError).toMatch(/disk or quota is full/);
  });

  it('caps the log: output past maxLogBytes is dropped with one notice, the footer still written', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const s = spec(dir, 'head -c 200000 /dev/zero | tr "\\0" x; echo; echo END', { maxLogBytes: 10_000 });
    const r = await env.run(s);
    expect(r.exitCode).toBe(0);
    expect(r.outputBytes).toBeGreaterThan(200_000);
    expect(r.tail).toContain('END');
    const log = readFileSync(s.logPath, 'utf8');
    expect(log.length).toBeLessThan(11_000);
    expect(log.match(/log truncated at 10000 bytes/g)).toHaveLength(1);
    expect(log).toMatch(/=== vigil: exit 0 .*===\n$/);
  });

  it('does not follow a symbolic link planted at the log path', async () => {
    const dir = tempDir();
    const outside = path.join(tempDir(), 'outside.txt');
    writeFileSync(outside, 'precious\n');
    const s = spec(dir, 'echo agent output');
    symlinkSync(outside, s.logPath);
    const { env } = newEnv();
    const r = await env.run(s);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(outside, 'utf8')).toBe('precious\n');
    expect(lstatSync(s.logPath).isSymbolicLink()).toBe(false);
    expect(readFileSync(s.logPath, 'utf8')).toContain('agent output');
  });

  it('ends when the child exits even though a background child still holds its output, and kills that child', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const gpidFile = path.join(dir, 'bg.pid');
    const t0 = Date.now();
    // A dev server started in the background that keeps stdout open: the agent itself is done.
    const r = await env.run(spec(dir, `sleep 60 & echo $! > "${gpidFile}"; echo done; exit 0`, { timeoutMs: 30_000 }));
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.tail).toContain('done');
    expect(r.strays).toBeGreaterThanOrEqual(1);
    const bg = await readPid(gpidFile);
    expect(await waitFor(() => isGone(bg))).toBe(true);
  });

  it('kills a setsid daemon that escaped the process group and holds the output, when the child exits', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const dpidFile = path.join(dir, 'daemon.pid');
    const t0 = Date.now();
    const r = await env.run(
      spec(dir, `setsid sh -c 'echo $$ > "${dpidFile}"; exec sleep 60' & sleep 0.3; echo started; exit 0`, { timeoutMs: 30_000 }),
    );
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(r.exitCode).toBe(0);
    const daemon = await readPid(dpidFile);
    expect(await waitFor(() => isGone(daemon))).toBe(true);
    expect(readFileSync(path.join(dir, 'out.log'), 'utf8')).toMatch(/leftover process\(es\) killed/);
  });

  it('bounds the whole call by the timeout even when a setsid daemon holds the output', async () => {
    const dir = tempDir();
    const { env } = newEnv();
    const dpidFile = path.join(dir, 'daemon.pid');
    const t0 = Date.now();
    const r = await env.run(spec(dir, `setsid sh -c 'echo $$ > "${dpidFile}"; exec sleep 60' & wait; sleep 60`, { timeoutMs: 500 }));
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(r.exitCode).toBe(124);
    const daemon = await readPid(dpidFile);
    expect(await waitFor(() => isGone(daemon))).toBe(true);
  });

  it('kills the setsid escapees of a crashed attempt by their token (killSurvivor)', async () => {
    const dir = tempDir();
    const dpidFile = path.join(dir, 'daemon.pid');
    const token = 'test-token-' + String(process.pid) + '-' + String(Date.now());
    const child = spawn('/bin/sh', ['-c', `setsid sh -c 'echo $$ > "${dpidFile}"; exec sleep 60' & sleep 60`], {
      detached: true,
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', VIGIL_PROCESS_TOKEN: token },
    });
    child.unref();
    const pid = child.pid as number;
    track(pid);
    const daemon = await readPid(dpidFile);
    const pidFile = path.join(dir, 'crashed.pid.json');
    writeFileSync(pidFile, JSON.stringify({ pid, startTime: startTime(pid), token }));
    expect(killSurvivor(pidFile)).toBe(true);
    expect(await waitFor(() => isGone(pid))).toBe(true);
    expect(await waitFor(() => isGone(daemon))).toBe(true);
  });
});

describe('the heartbeat line', () => {
  it('is the last non-empty output line, cut to 200 characters after redaction', async () => {
    const { lastLine } = await import('../../activities/process.js');
    expect(lastLine('compiling\nrunning tests\n\n  \n')).toBe('running tests');
    expect(lastLine('')).toBe('');
    expect(lastLine(`step\n${'x'.repeat(300)}`)).toBe(`${'x'.repeat(199)}…`);
    const key = `sk-${'Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7'}`;
    const line = lastLine(`${'.'.repeat(190)} OPENAI_API_KEY=${key}`);
    expect(line).not.toContain(key.slice(0, 12));
  });
});

describe("the child's environment", () => {
  it("never carries the worker's Temporal, codec, secret or event-store settings", async () => {
    const { inheritedEnv } = await import('../../lib/child-env.js');
    const saved = { ...process.env };
    try {
      Object.assign(process.env, {
        TEMPORAL_API_KEY: 'k',
        VIGIL_CODEC_KEY: 'c',
        VIGIL_WORKER_SECRET: 's',
        DATABASE_URL: 'postgres://vigil:pw@db/vigil_events',
        VIGIL_DATABASE_URL: 'postgres://vigil:pw@db/vigil_events',
        PATH_LIKE_SETTING: 'kept',
      });
      const env = inheritedEnv();
      for (const k of ['TEMPORAL_API_KEY', 'VIGIL_CODEC_KEY', 'VIGIL_WORKER_SECRET', 'DATABASE_URL', 'VIGIL_DATABASE_URL'])
        expect(env[k], k).toBeUndefined();
      expect(env.PATH_LIKE_SETTING).toBe('kept');
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});
