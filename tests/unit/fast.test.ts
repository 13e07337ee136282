/**
 * The bin entry's pre-dispatch (cli/fast.ts) takes only plainly well-formed `status`, `pause`,
 * `resume`, `stop` and `input` command lines, read as commander reads them; everything else goes
 * to commander, whose usage errors and help are then the CLI's (the last test runs both ways).
 * And the plain endpoint (cli/endpoint.ts) equals what envconfig makes of the same environment,
 * or declines. The pre-dispatch runs from a bundle with its own copies of the CLI's error classes,
 * so those match by name.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { endpointFromEnv } from '../../cli/connection.js';
import { plainEndpoint } from '../../cli/endpoint.js';
import { CliError } from '../../cli/errors.js';
import { parseFast } from '../../cli/fast.js';
import { PAYLOADS, readDirective } from '../../cli/steer-commands.js';
import { parseMessage } from '../../schemas/messages.js';
import { UpdateRejectedError } from '../../cli/run-api.js';
import { assertBuilt, CLI } from '../support/harness.js';

describe('parseFast', () => {
  it('reads the five verbs, their options in any order, --opt=value, and --profile before or after the verb', () => {
    expect(parseFast(['status', 'r1'])).toEqual({ verb: 'status', args: ['r1'], opts: {} });
    expect(parseFast(['status', '--json', 'r1'])).toEqual({ verb: 'status', args: ['r1'], opts: { json: true } });
    expect(parseFast(['pause', 'r1', '--reason', 'lunch break', '--by=alice', '--signal'])).toEqual({
      verb: 'pause',
      args: ['r1'],
      opts: { reason: 'lunch break', by: 'alice', signal: true },
    });
    expect(parseFast(['resume', 'r1', '--by', 'bob'])).toEqual({ verb: 'resume', args: ['r1'], opts: { by: 'bob' } });
    expect(parseFast(['stop', '--now', 'r1', '--reason=', '--signal'])).toEqual({
      verb: 'stop',
      args: ['r1'],
      opts: { now: true, reason: '', signal: true },
    });
    expect(parseFast(['input', 'r1', 'use tabs'])).toEqual({ verb: 'input', args: ['r1', 'use tabs'], opts: {} });
    expect(parseFast(['input', 'r1', '--file', 'd.md'])).toEqual({ verb: 'input', args: ['r1'], opts: { file: 'd.md' } });
    expect(parseFast(['--profile', 'prod', 'status', 'r1'])).toEqual({ verb: 'status', args: ['r1'], opts: {}, profile: 'prod' });
    expect(parseFast(['--profile=prod', 'pause', 'r1'])).toEqual({ verb: 'pause', args: ['r1'], opts: {}, profile: 'prod' });
    expect(parseFast(['status', 'r1', '--profile', 'prod'])).toEqual({ verb: 'status', args: ['r1'], opts: {}, profile: 'prod' });
    // --json on the four messages too (their acknowledgement as JSON).
    expect(parseFast(['pause', 'r1', '--json'])).toEqual({ verb: 'pause', args: ['r1'], opts: { json: true } });
    expect(parseFast(['input', 'r1', 'use tabs', '--json', '--signal'])).toEqual({
      verb: 'input',
      args: ['r1', 'use tabs'],
      opts: { json: true, signal: true },
    });
    expect(parseFast(['input', 'r1', 'use tabs', '--signal', '--id', 'd-0a1b2c3d4e5f'])).toEqual({
      verb: 'input',
      args: ['r1', 'use tabs'],
      opts: { signal: true, id: 'd-0a1b2c3d4e5f' },
    });
  });

  it('leaves everything else to commander', () => {
    for (const argv of [
      [],
      ['--help'],
      ['-h'],
      ['--version'],
      ['-V'],
      ['status'],
      ['status', '--help'],
      ['status', 'r1', '-h'],
      ['status', 'r1', 'r2'],
      ['status', 'r1', '--signal'],
      ['status', 'r1', '--json=yes'],
      ['stop', 'r1', '--json', '--json'],
      ['pause', 'r1', '--bogus'],
      ['pause', 'r1', '--reason'],
      ['pause', 'r1', '--reason', '-x'],
      ['pause', 'r1', '--reason', 'a', '--reason', 'b'],
      ['pause', 'r1', '--signal', '--signal'],
      ['pause', '--', 'r1'],
      ['pause', '-r', 'x', 'r1'],
      ['resume', 'r1', '--now'],
      ['input', 'r1', 'a', 'b'],
      ['input', '-'],
      ['--profile', 'a', '--profile', 'b', 'status', 'r1'],
      ['--bogus', 'status', 'r1'],
      ['list'],
      ['watch', 'r1'],
      ['review', 'r1'],
      ['waive', 'r1', 'item'],
      ['budget', 'r1', '--usd', '5'],
      ['start', 'PRD.md'],
      ['constructor', 'x'],
      ['toString', 'x'],
    ]) {
      expect(parseFast(argv), argv.join(' ')).toBeNull();
    }
  });
});

describe("the CLI's error classes across copies of their module", () => {
  it('match an error of another copy by name (and CliError only with an exit code), nothing else', () => {
    /** What another copy of cli/errors.ts or cli/run-api.ts throws: an Error subclass with the same name. */
    const copy = (name: string, extra: object = {}): Error => Object.assign(new (class extends Error {})('m'), { name }, extra);
    expect(copy('CliError', { exitCode: 4 }) instanceof CliError).toBe(true);
    expect(new CliError('m', 2) instanceof CliError).toBe(true);
    expect(copy('CliError') instanceof CliError).toBe(false);
    expect(copy('Error', { exitCode: 4 }) instanceof CliError).toBe(false);
    expect(copy('UpdateRejectedError') instanceof UpdateRejectedError).toBe(true);
    expect(new UpdateRejectedError('m') instanceof UpdateRejectedError).toBe(true);
    expect(new Error('m') instanceof UpdateRejectedError).toBe(false);
    expect(new UpdateRejectedError('m') instanceof CliError).toBe(false);
    for (const v of [null, undefined, 'CliError', { name: 'CliError', exitCode: 2 }]) expect(v instanceof CliError).toBe(false);
  });
});

describe('plainEndpoint', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-plain-home-'));
  const base = { HOME: home, XDG_CONFIG_HOME: '' };

  it('equals endpointFromEnv for an environment with at most an address, a namespace and a task queue', () => {
    for (const env of [
      { ...base },
      { ...base, TEMPORAL_ADDRESS: ' 10.0.0.5:7233 ', TEMPORAL_NAMESPACE: 'team', VIGIL_TASK_QUEUE: 'q' },
      { ...base, TEMPORAL_ADDRESS: '   ', TEMPORAL_API_KEY: '', TEMPORAL_TLS: ' ' },
      { ...base, TEMPORAL_ADDRESS: 'my.tmprl.cloud:7233' },
      { ...base, TEMPORAL_ADDRESS: '[::1]:7300', VIGIL_UI_URL: 'http://ui.example/' },
    ]) {
      expect(plainEndpoint(env), JSON.stringify(env)).toEqual(endpointFromEnv(env));
    }
  });

  it('declines profiles, TLS, API keys, headers and a temporal.toml', () => {
    expect(plainEndpoint(base, 'prod')).toBeNull();
    for (const extra of [
      { TEMPORAL_PROFILE: 'p' },
      { TEMPORAL_CONFIG_FILE: '/nonexistent.toml' },
      { TEMPORAL_API_KEY: 'k' },
      { TEMPORAL_TLS: 'true' },
      { TEMPORAL_TLS_SERVER_NAME: 'x' },
      { TEMPORAL_GRPC_META_X: '' },
      { TEMPORAL_CODEC_ENDPOINT: 'http://c' },
    ]) {
      expect(plainEndpoint({ ...base, ...extra }), JSON.stringify(extra)).toBeNull();
    }
    const withFile = mkdtempSync(path.join(os.tmpdir(), 'vigil-plain-home-'));
    const dir = path.join(withFile, '.config', 'temporalio');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'temporal.toml'), '[profile.default]\naddress = "elsewhere:7233"\n');
    expect(plainEndpoint({ HOME: withFile })).toBeNull();
    expect(endpointFromEnv({ HOME: withFile }).address).toBe('elsewhere:7233');
  });
});

describe('the CLI, both ways', () => {
  assertBuilt();
  const run = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    promisify(execFile)(process.execPath, [CLI, ...args], { env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
    );

  it("usage errors and help are commander's; bad input and an unreachable server are the actions'", async () => {
    const [missing, extra, unknown, help, noDirective, both, unreachable] = await Promise.all([
      run(['pause']),
      run(['status', 'a', 'b']),
      run(['stop', 'a', '--bogus']),
      run(['status', '--help']),
      run(['input', 'a']),
      run(['input', 'a', 'text', '--file', 'f']),
      run(['status', 'a']),
    ]);
    expect([missing.code, missing.stderr]).toEqual([2, "error: missing required argument 'id'\n(run with --help for usage)\n"]);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain("too many arguments for 'status'");
    expect([unknown.code, unknown.stderr]).toEqual([2, "error: unknown option '--bogus'\n(run with --help for usage)\n"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: vigil status [options] <id>');
    expect([noDirective.code, noDirective.stderr]).toEqual([2, 'vigil: no directive: pass TEXT or --file F\n']);
    expect([both.code, both.stderr]).toEqual([2, 'vigil: give the directive as TEXT or with --file, not both\n']);
    expect(unreachable.code).toBe(4);
    expect(unreachable.stderr).toContain('vigil: cannot reach Temporal at 127.0.0.1:1 (');
  });

  it('an empty run id is a usage error before any connection; a bad --id is shown clipped', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-ids-'));
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(path.join(dir, 'PRD.md'), '# A PRD\n');
    const [status, pause, logs, start] = await Promise.all([
      run(['status', '']),
      run(['pause', ' ']),
      run(['logs', '']),
      run(['start', path.join(dir, 'PRD.md'), '--repo', dir, '--agent-command', 'true', '--id', `-${'a'.repeat(500)}`]),
    ]);
    const empty = (a: string) =>
      `error: command-argument value '${a}' is invalid for argument 'id'. a run id is not empty; \`vigil list\` shows the runs\n(run with --help for usage)\n`;
    expect([status.code, status.stderr]).toEqual([2, empty('')]);
    expect([pause.code, pause.stderr]).toEqual([2, empty(' ')]);
    expect([logs.code, logs.stderr]).toEqual([2, empty('')]);
    expect([start.code, start.stderr]).toEqual([
      2,
      `vigil: --id "-${'a'.repeat(59)}…" (501 characters) is not allowed: use 1-200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit\n`,
    ]);
  });
});

describe("vigil input's directive id", () => {
  it('is a fresh one for each directive, or the one given to resend it; a bad one is exit 2', () => {
    const a = PAYLOADS.input({ by: 'ana' }, 'use tabs');
    const b = PAYLOADS.input({ by: 'ana' }, 'use tabs');
    expect(a).toMatchObject({ directive: 'use tabs', by: 'ana', id: expect.stringMatching(/^d-[0-9a-f]{12}$/) });
    expect(b.id).not.toBe(a.id); // the same text twice is two directives
    expect(PAYLOADS.input({ id: a.id }, 'use tabs')).toMatchObject({ id: a.id });
    // What the CLI sends is what the run's input message takes.
    expect(parseMessage('input', a)).toMatchObject({ ok: true });
    let err: unknown;
    try {
      PAYLOADS.input({ id: 'no spaces please' }, 'use tabs');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CliError);
    expect(err).toMatchObject({ exitCode: 2, message: '--id no spaces please: letters, digits, . _ : - only, at most 100' });
  });
});

describe('vigil input --file', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-directive-'));
  const file = (name: string, data: string | Buffer): string => {
    const f = path.join(dir, name);
    writeFileSync(f, data);
    return f;
  };
  const refusal = (f: string): string => {
    try {
      readDirective(f);
    } catch (err) {
      expect(err).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(2);
      return (err as Error).message;
    }
    throw new Error(`${f} was read`);
  };

  it('reads UTF-8 text up to 1 MiB', () => {
    expect(readDirective(file('ok.md', 'Run the linter — then commit.\n'))).toBe('Run the linter — then commit.\n');
    expect(readDirective(file('max.md', 'x'.repeat(1024 * 1024)))).toHaveLength(1024 * 1024);
  });

  it('refuses, saying why: a missing file, a folder, binary, not UTF-8, too large (a file or an endless stream)', () => {
    expect(refusal(path.join(dir, 'nope.md'))).toBe(`cannot read directive file ${path.join(dir, 'nope.md')}: no such file`);
    expect(refusal(dir)).toBe(`cannot read directive file ${dir}: it is a folder`);
    const bin = file('a.out', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1]));
    expect(refusal(bin)).toBe(`directive file ${bin} looks binary (it holds NUL bytes); a directive is text`);
    const latin1 = file('latin1.txt', Buffer.from('caf\xe9\n', 'latin1'));
    expect(refusal(latin1)).toBe(`directive file ${latin1} is not UTF-8 text`);
    const big = file('big.md', 'x'.repeat(1024 * 1024 + 1));
    expect(refusal(big)).toBe(`directive file ${big} is 1048577 bytes; at most 1048576 bytes (1 MiB)`);
    expect(refusal('/dev/zero')).toBe('directive file /dev/zero is more than 1048576 bytes; at most 1048576 bytes (1 MiB)');
  });
});
