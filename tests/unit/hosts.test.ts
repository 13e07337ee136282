/**
 * Host names and their task queues, which host a command means (flag, VIGIL_HOST, this machine),
 * and reading a log chunk on the host: whole lines, redacted, bounded, never through a link.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOST_NAME_MAX, hostTaskQueue, parseHostName } from '../../schemas/hosts.js';
import { RunInputSchema } from '../../schemas/run.js';
import { defaultKnobs } from '../../schemas/knobs.js';
import { pathOnHost, resolveHost, thisHost } from '../../cli/hosts.js';
import { prdOnHost } from '../../cli/prd.js';
import { CliError, EXIT } from '../../cli/connection.js';
import { cutPoint, iterationLogPath, readLogChunk } from '../../activities/logs.js';
import { hostQueueLine } from '../../workers/host-workers.js';

describe('host names', () => {
  it('normalises to lower case and accepts what machines are called', () => {
    for (const [raw, host] of [
      ['alpha', 'alpha'],
      ['  Build-Box-7 ', 'build-box-7'],
      ['Johns-MacBook-Pro.local', 'johns-macbook-pro.local'],
      ['ip-10-0-0-12.eu-west-1.compute.internal', 'ip-10-0-0-12.eu-west-1.compute.internal'],
      ['worker_2', 'worker_2'],
      ['7', '7'],
      ['a'.repeat(HOST_NAME_MAX), 'a'.repeat(HOST_NAME_MAX)],
    ] as const) {
      expect(parseHostName(raw)).toEqual({ ok: true, host });
    }
  });

  it('refuses names that cannot be a host, saying what a name may hold', () => {
    for (const raw of [
      '',
      '   ',
      'two words',
      'alpha@beta',
      '-alpha',
      'alpha.',
      'a/b',
      'ünïcode',
      'tab\there',
      'a'.repeat(HOST_NAME_MAX + 1),
    ]) {
      const r = parseHostName(raw);
      expect(r.ok, raw).toBe(false);
      if (!r.ok) expect(r.problem).toMatch(raw.trim() === '' ? /empty/ : /is not a host name: use 1-253 letters, digits/);
    }
  });

  it('names the host queue after the shared one', () => {
    expect(hostTaskQueue('vigil', 'alpha')).toBe('vigil@alpha');
    expect(hostTaskQueue('team-runs', 'build-box-7')).toBe('team-runs@build-box-7');
    expect(
      hostQueueLine(
        [
          { name: 'vigil', serves: 'workflows and activities' },
          { name: 'vigil@alpha', serves: 'activities' },
        ],
        'alpha',
      ),
    ).toBe('"vigil@alpha" (the activities of runs on host "alpha")');
  });

  it('is optional in the run input (old runs have none) and checked when present', () => {
    const base = { prdPath: '/p/PRD.md', prdTitle: 't', repoPath: '/r', knobs: defaultKnobs() };
    expect(RunInputSchema.parse(base).host).toBeUndefined();
    expect(RunInputSchema.parse({ ...base, host: 'alpha' }).host).toBe('alpha');
    expect(RunInputSchema.safeParse({ ...base, host: 'Alpha Beta' }).success).toBe(false);
  });
});

describe('which host a command means', () => {
  const machine = (): string => 'Desk-01';
  const fails = (f: () => unknown): CliError => {
    try {
      f();
    } catch (err) {
      if (err instanceof CliError) return err;
      throw err;
    }
    throw new Error('expected a CliError');
  };

  it('takes --host, else VIGIL_HOST, else the machine name, normalised', () => {
    expect(resolveHost('Alpha', { VIGIL_HOST: 'beta' }, machine)).toBe('alpha');
    expect(resolveHost(undefined, { VIGIL_HOST: ' Beta ' }, machine)).toBe('beta');
    expect(resolveHost(undefined, { VIGIL_HOST: '  ' }, machine)).toBe('desk-01');
    expect(resolveHost(undefined, {}, machine)).toBe('desk-01');
  });

  it('says which setting is wrong and what to do, exit 2', () => {
    const flag = fails(() => resolveHost('my box', {}, machine));
    expect(flag.exitCode).toBe(EXIT.usage);
    expect(flag.message).toBe(
      `--host: "my box" is not a host name: use 1-253 letters, digits, '.', '_' or '-', starting and ending with a letter or ` +
        `digit (case does not matter); pass another --host`,
    );
    expect(fails(() => resolveHost(undefined, { VIGIL_HOST: 'a@b' }, machine)).message).toMatch(
      /^VIGIL_HOST: "a@b" is not a host name: .*; set VIGIL_HOST to another name$/,
    );
    expect(fails(() => resolveHost(undefined, {}, () => 'weird name')).message).toMatch(
      /^this machine's name: "weird name" is not a host name: .*; set VIGIL_HOST \(or pass --host NAME\)$/,
    );
  });
});

describe('starting a run on another host', () => {
  it("knows this machine's host, or that it has no valid name", () => {
    expect(thisHost({ VIGIL_HOST: 'Alpha' }, () => 'x')).toBe('alpha');
    expect(thisHost({}, () => 'Desk-01')).toBe('desk-01');
    expect(thisHost({}, () => 'not valid')).toBeNull();
  });

  it('takes absolute paths there as they are, and refuses relative ones (exit 2)', () => {
    expect(pathOnHost('--repo', '/srv/src/app/', 'beta')).toBe('/srv/src/app');
    expect(pathOnHost('--repo', '/', 'beta')).toBe('/');
    expect(prdOnHost('/srv/src/app/docs/PRD.md')).toEqual({ path: '/srv/src/app/docs/PRD.md', title: 'PRD', bytes: 0, sha256: null });
    try {
      pathOnHost('--repo', '.', 'beta');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(EXIT.usage);
      expect((err as CliError).message).toBe(
        '--repo "." must be an absolute path on host "beta" (another machine: vigil start cannot look at it from here)',
      );
    }
  });
});

describe('reading a log chunk', () => {
  function logFile(text: string | Buffer): { repo: string; file: string } {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'vigil-logs-'));
    const file = iterationLogPath(repo, 'run-1', 3);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return { repo, file };
  }

  it('finds the iteration log where the agent activity writes it', () => {
    expect(iterationLogPath('/r', 'run:1', 12)).toBe('/r/.vigil/runs/run%3A1/iteration-0012.log');
  });

  it('returns whole lines up to the bound, and the offset to go on from', () => {
    const { repo, file } = logFile('one\ntwo\nthree\n');
    expect(readLogChunk(repo, file, 0, 9)).toMatchObject({ found: true, text: 'one\ntwo\n', offset: 0, nextOffset: 8, size: 14 });
    expect(readLogChunk(repo, file, 8, 1000)).toMatchObject({ text: 'three\n', offset: 8, nextOffset: 14 });
    expect(readLogChunk(repo, file, 14, 1000)).toMatchObject({ found: true, text: '', nextOffset: 14 });
  });

  it('holds back a last line without its newline while following, not when reading it whole', () => {
    const { repo, file } = logFile('done\nhalf a li');
    expect(readLogChunk(repo, file, 0, 1000, false)).toMatchObject({ text: 'done\n', nextOffset: 5 });
    expect(readLogChunk(repo, file, 5, 1000, false)).toMatchObject({ text: '', nextOffset: 5 });
    expect(readLogChunk(repo, file, 5, 1000, true)).toMatchObject({ text: 'half a li', nextOffset: 14 });
  });

  it('redacts credentials, which never straddle two chunks while lines fit one', () => {
    const key = `sk-ant-api03-${'a1B2'.repeat(20)}`;
    const { repo, file } = logFile(`calling the API\nexport ANTHROPIC_API_KEY=${key}\nok\n`);
    for (const bound of [128, 200, 1000]) {
      let offset = 0;
      let text = '';
      let redactions = 0;
      for (let i = 0; i < 20; i++) {
        const c = readLogChunk(repo, file, offset, bound);
        if (c.text === '') break;
        text += c.text;
        redactions += c.redactions;
        offset = c.nextOffset;
      }
      expect(text, `bound ${bound}`).not.toContain(key.slice(14, 40));
      expect(text).toContain('calling the API\n');
      expect(text.endsWith('ok\n')).toBe(true);
      expect(redactions).toBeGreaterThan(0);
    }
  });

  it('cuts a line longer than the chunk on a character boundary', () => {
    const long = Buffer.from('é'.repeat(10)); // 2 bytes each, no newline
    expect(cutPoint(long.subarray(0, 7), true, false)).toBe(6);
    expect(cutPoint(long.subarray(0, 8), true, false)).toBe(8);
    expect(cutPoint(Buffer.from('€€'), true, false)).toBe(6);
    expect(cutPoint(Buffer.from('€€').subarray(0, 5), true, false)).toBe(3);
    expect(cutPoint(Buffer.from('a\nb'), true, true)).toBe(2);
    expect(cutPoint(Buffer.from('a\nb'), false, true)).toBe(3);
    // A long line is cut after its last blank when it has one.
    expect(cutPoint(Buffer.from('token is sk-ant-abc'), true, false)).toBe(9);
    const { repo, file } = logFile(long);
    const c = readLogChunk(repo, file, 0, 7);
    expect(c).toMatchObject({ text: 'ééé', nextOffset: 6 });
  });

  it('starts over when the log is shorter than the offset (it was replaced)', () => {
    const { repo, file } = logFile('new\n');
    expect(readLogChunk(repo, file, 500, 1000)).toMatchObject({ found: true, text: 'new\n', offset: 0, nextOffset: 4 });
  });

  it('tells a missing log, a missing repository and a planted link apart', () => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'vigil-logs-'));
    expect(readLogChunk(repo, iterationLogPath(repo, 'run-1', 1), 0, 100)).toMatchObject({ found: false, problem: null });
    expect(readLogChunk('/nonexistent/repo', iterationLogPath('/nonexistent/repo', 'run-1', 1), 0, 100)).toMatchObject({
      found: false,
      problem: 'the repository /nonexistent/repo does not exist on this host',
    });
    const outside = mkdtempSync(path.join(os.tmpdir(), 'vigil-outside-'));
    writeFileSync(path.join(outside, 'secret'), 'do not read\n');
    // A link as the log itself, and a link as a folder on the way.
    const { repo: r1, file: f1 } = logFile('x\n');
    const linked = iterationLogPath(r1, 'run-1', 4);
    symlinkSync(path.join(outside, 'secret'), linked);
    expect(readLogChunk(r1, linked, 0, 100)).toMatchObject({ found: false, text: '', problem: expect.stringMatching(/symbolic link/) });
    expect(readLogChunk(r1, f1, 0, 100).text).toBe('x\n');
    const r2 = mkdtempSync(path.join(os.tmpdir(), 'vigil-logs-'));
    mkdirSync(path.join(outside, 'runs', 'run-1'), { recursive: true });
    writeFileSync(path.join(outside, 'runs', 'run-1', 'iteration-0001.log'), 'do not read\n');
    symlinkSync(outside, path.join(r2, '.vigil'));
    expect(readLogChunk(r2, iterationLogPath(r2, 'run-1', 1), 0, 100)).toMatchObject({
      found: false,
      text: '',
      problem: expect.stringMatching(/\.vigil is a symbolic link/),
    });
  });
});
