/**
 * The silence watchdog of an agent call (lib/call-silence.ts): the pure judgement (a call
 * that printed or wrote a file within the limit is not silent; one that did neither is), the
 * newest change under a repository (`.git` and `.vigil` left out, links not followed), the watch
 * itself on real timers, and supervised calls (activities/process.ts through the supervisor
 * daemon, from dist/: `npm run build`): a call that prints nothing and sleeps is ended at the
 * limit with every process of it gone, and the honest controls — a quiet call that keeps writing
 * files, a call that keeps printing — run to their end.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isSilent, newestChange, silenceReason, silentForMs, watchSilence, type SilenceFacts } from '../../lib/call-silence.js';
import { runProcess, supervisorPath, type ProcessResult, type ProcessSpec } from '../../activities/process.js';
import { processesWithToken } from '../../lib/process-tree.js';
import { configureSupervisor } from '../../activities/supervisor-client.js';
import { readState } from '../../lib/supervisor-state.js';
import { daemonPid } from '../../lib/supervisor-location.js';

if (!existsSync(supervisorPath())) throw new Error(`${supervisorPath()} is missing: run \`npm run build\``);

const daemonDir = mkdtempSync(path.join(os.tmpdir(), 'vigil-sup-silence-'));
configureSupervisor({ mode: 'daemon', dir: daemonDir });
afterAll(() => {
  const pid = daemonPid();
  if (pid !== null) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
  rmSync(daemonDir, { recursive: true, force: true });
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'vigil-silence-'));
  dirs.push(d);
  return d;
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const MIN = 60_000;
const at = (over: Partial<SilenceFacts>): SilenceFacts => ({
  nowMs: 100 * MIN,
  startedMs: 0,
  lastOutputMs: null,
  newestChangeMs: null,
  limitMs: 15 * MIN,
  ...over,
});

describe('isSilent (pure)', () => {
  it('judges a call that printed nothing and changed nothing for the limit silent', () => {
    expect(isSilent(at({ nowMs: 15 * MIN }))).toBe(true);
    expect(isSilent(at({ nowMs: 15 * MIN - 1 }))).toBe(false);
    expect(isSilent(at({ lastOutputMs: 10 * MIN, newestChangeMs: 20 * MIN, nowMs: 35 * MIN }))).toBe(true);
    expect(silentForMs(at({ lastOutputMs: 10 * MIN, newestChangeMs: 20 * MIN, nowMs: 35 * MIN }))).toBe(15 * MIN);
  });

  it('never judges a call that prints silent (the false positive)', () => {
    expect(isSilent(at({ lastOutputMs: 100 * MIN - 1000 }))).toBe(false);
    expect(isSilent(at({ lastOutputMs: 86 * MIN }))).toBe(false);
  });

  it('never judges a call that prints nothing but keeps writing files silent (the false positive)', () => {
    expect(isSilent(at({ lastOutputMs: null, newestChangeMs: 99 * MIN }))).toBe(false);
    expect(isSilent(at({ lastOutputMs: 1 * MIN, newestChangeMs: 90 * MIN }))).toBe(false);
  });

  it('does not count changes made before the call started, nor a change dated after now as lasting activity', () => {
    // The repository's files were written long before the call: it is still silent since its start.
    expect(isSilent(at({ startedMs: 80 * MIN, newestChangeMs: 10 * MIN }))).toBe(true);
    expect(isSilent(at({ startedMs: 90 * MIN, newestChangeMs: 10 * MIN }))).toBe(false);
    // A file dated in the future (a clock that went back) counts as a change now, not for ever.
    expect(isSilent(at({ newestChangeMs: 500 * MIN }))).toBe(false);
    expect(silentForMs(at({ newestChangeMs: 500 * MIN }))).toBe(0);
  });

  it('is off at 0', () => {
    expect(isSilent(at({ limitMs: 0, nowMs: 10_000 * MIN }))).toBe(false);
  });

  it('says why in words people read, with the real limit', () => {
    expect(silenceReason(15 * MIN)).toBe('no output for 15 min: ended');
    expect(silenceReason(1.5 * MIN)).toBe('no output for 1.5 min: ended');
    expect(silenceReason(6000)).toBe('no output for 6 s: ended');
  });
});

describe('newestChange', () => {
  it('sees a write, a new file deep down and a deletion; not .git, not .vigil, not what a link points to', async () => {
    const repo = tempDir();
    const outside = tempDir();
    mkdirSync(path.join(repo, 'src', 'deep'), { recursive: true });
    mkdirSync(path.join(repo, '.git', 'objects'), { recursive: true });
    mkdirSync(path.join(repo, '.vigil', 'runs'), { recursive: true });
    writeFileSync(path.join(repo, 'src', 'deep', 'a.ts'), 'a');
    symlinkSync(outside, path.join(repo, 'linked'));
    const base = (await newestChange(repo)) as number;
    expect(base).toBeGreaterThan(0);
    await sleep(30);
    // Writes where the agent's doing is not: git's objects, Vigil's logs, a linked folder's contents.
    writeFileSync(path.join(repo, '.git', 'objects', 'x'), 'x');
    writeFileSync(path.join(repo, '.vigil', 'runs', 'log'), 'x');
    writeFileSync(path.join(outside, 'elsewhere.txt'), 'x');
    expect(await newestChange(repo)).toBe(base);
    // A write to an existing file deep down.
    writeFileSync(path.join(repo, 'src', 'deep', 'a.ts'), 'b');
    const afterWrite = (await newestChange(repo)) as number;
    expect(afterWrite).toBeGreaterThan(base);
    await sleep(30);
    rmSync(path.join(repo, 'src', 'deep', 'a.ts'));
    expect(await newestChange(repo)).toBeGreaterThan(afterWrite);
  });

  it('cannot tell for a tree too large or a folder that is gone', async () => {
    const repo = tempDir();
    for (let i = 0; i < 20; i++) writeFileSync(path.join(repo, `f${i}`), '');
    expect(await newestChange(repo, 10)).toBeNull();
    expect(await newestChange(repo, 100)).not.toBeNull();
    expect(await newestChange(path.join(repo, 'gone'))).toBeNull();
  });
});

describe('watchSilence (real timers)', () => {
  /** Runs a watch for `ms`, `activity` every 150 ms; when it found the call silent (ms after its start), or null. */
  async function watchFor(ms: number, limitMs: number, root: string, activity: (() => void) | null): Promise<number | null> {
    const startedMs = Date.now();
    let firedAt: number | null = null;
    const stop = watchSilence({ limitMs, root, startedMs, lastOutputMs: () => null, onSilent: () => (firedAt = Date.now() - startedMs) });
    const tick = activity ? setInterval(activity, 150) : undefined;
    try {
      while (Date.now() - startedMs < ms && firedAt === null) await sleep(50);
    } finally {
      clearInterval(tick);
      stop();
    }
    return firedAt;
  }

  it('ends a silent call at the limit, and leaves a quiet writer alone', async () => {
    const repo = tempDir();
    const fired = await watchFor(4000, 800, repo, null);
    expect(fired).not.toBeNull();
    expect(fired as number).toBeGreaterThanOrEqual(800);
    expect(fired as number).toBeLessThan(2500);
    let n = 0;
    expect(await watchFor(3000, 800, repo, () => writeFileSync(path.join(repo, `w${n++ % 3}`), String(n)))).toBeNull();
  });
});

/** A mocked activity context for runProcess. */
function run(spec: ProcessSpec): Promise<ProcessResult> {
  const mock = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  return mock.run(runProcess, spec) as Promise<ProcessResult>;
}

function spec(dir: string, script: string, limitMs: number): ProcessSpec {
  return {
    file: '/bin/sh',
    args: ['-c', script],
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdin: '',
    timeoutMs: 120_000,
    logPath: path.join(dir, '.vigil', 'out.log'),
    header: '=== silence test ===',
    pidFile: path.join(dir, '.vigil', 'call.pid.json'),
    silence: { limitMs, root: dir },
  };
}

describe('a supervised call with the watchdog', () => {
  it('ends a call that prints nothing and sleeps, far before its timeout, and every process of it is gone', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, '.vigil'));
    // Two processes: the shell and a sleep it waits for (and one escaped into a session of its own).
    const t0 = Date.now();
    const r = await run(spec(dir, 'setsid sleep 300 & sleep 300', 1500));
    const token = readState(path.join(dir, '.vigil', 'call.pid.json'))?.token ?? '';
    expect(r.silence).toBe('no output for 1.5 s: ended');
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(124);
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(token).not.toBe('');
    expect(processesWithToken(token)).toEqual([]);
    expect(readFileSync(path.join(dir, '.vigil', 'out.log'), 'utf8')).toContain('(no output for 1.5 s: ended)');
  });

  it('the honest controls: a quiet call that writes files and a call that prints run to their end', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, '.vigil'));
    // 4 s of work with a 1.5 s limit: quiet, but a file changes every half second.
    const writer = await run(spec(dir, 'for i in 1 2 3 4 5 6 7 8; do echo $i > work.txt; sleep 0.5; done', 1500));
    expect(writer.silence).toBeNull();
    expect(writer.exitCode).toBe(0);
    expect(writer.outputBytes).toBe(0);
    expect(writer.durationMs).toBeGreaterThanOrEqual(4000);
    const printer = await run(spec(dir, 'for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 0.5; done', 1500));
    expect(printer.silence).toBeNull();
    expect(printer.exitCode).toBe(0);
    expect(printer.tail).toContain('tick 8');
  });

  it('is off without a limit', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, '.vigil'));
    const r = await run({ ...spec(dir, 'sleep 2.5', 0) });
    expect(r.silence).toBeNull();
    expect(r.exitCode).toBe(0);
  });
});
