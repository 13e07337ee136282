/**
 * The CLI's startup stays light (cli/main.ts loads what a command needs in its action): `vigil
 * status` and `vigil pause` talk to Temporal through the light client (cli/wire/, bundled with the
 * bin entry's pre-dispatch into dist/cli/fast.bundle.js), never loading
 * the SDK's client, its protos, gRPC library, the worker, the workflow code, the activities or
 * zod; with a payload codec key they use the SDK's client (and its codec) instead; `--help` loads
 * not even the light client (only the small envconfig package). Checked by tracing every module
 * the process resolves (a resolve hook) and every CommonJS module it loads (require.cache at exit).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { assertBuilt, CLI } from '../support/harness.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-trace-'));
writeFileSync(
  path.join(dir, 'loader.mjs'),
  "import { appendFileSync } from 'node:fs';\n" +
    'export async function resolve(specifier, context, next) {\n' +
    '  const r = await next(specifier, context);\n' +
    '  appendFileSync(process.env.VIGIL_TRACE_FILE, `${r.url}\\n`);\n' +
    '  return r;\n' +
    '}\n',
);
writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./loader.mjs', import.meta.url);\n");
writeFileSync(
  path.join(dir, 'cjs.cjs'),
  "process.on('exit', () => require('node:fs').appendFileSync(process.env.VIGIL_TRACE_FILE, Object.keys(require.cache).join('\\n') + '\\n'));\n",
);

let n = 0;
/** Every module `vigil ARGS` loaded, and its exit code. */
async function loaded(args: string[], extraEnv: Record<string, string> = {}): Promise<{ modules: string[]; code: number }> {
  const trace = path.join(dir, `trace-${(n += 1)}`);
  writeFileSync(trace, '');
  const code = await promisify(execFile)(
    process.execPath,
    ['--require', path.join(dir, 'cjs.cjs'), '--import', path.join(dir, 'register.mjs'), CLI, ...args],
    {
      env: {
        ...process.env,
        VIGIL_TRACE_FILE: trace,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: 'default',
        ...extraEnv,
      },
    },
  ).then(
    () => 0,
    (err: { code?: number }) => err.code ?? -1,
  );
  return { modules: readFileSync(trace, 'utf8').split('\n').filter(Boolean), code };
}

const CLI_URL = pathToFileURL(CLI).href;
const BUNDLE_URL = pathToFileURL(path.join(path.dirname(CLI), '..', 'dist', 'cli', 'fast.bundle.js')).href;
const sdkClient = [/node_modules\/@temporalio\/(client|proto)\//, /node_modules\/@grpc\/grpc-js\//, /node_modules\/protobufjs\//];
const heavy = [
  /node_modules\/@temporalio\/worker\//,
  /node_modules\/zod\//,
  /\/workflows\/run-workflow\.js/,
  /\/activities\//,
  /\/cli\/runs\.js/,
  /\/schemas\/run\.js/,
];

describe('the CLI loads only what a command needs', () => {
  assertBuilt();

  for (const args of [
    ['status', 'no-such-run-for-the-trace'],
    ['pause', 'no-such-run-for-the-trace', '--reason', 'x'],
  ]) {
    it(`vigil ${args[0]}: the light client, not the SDK's client, the worker, the workflow code or the schemas`, async () => {
      const { modules, code } = await loaded(args);
      expect(code).toBe(3); // it went all the way: connected and asked
      expect(modules).toContain(BUNDLE_URL); // the light client is in it
      for (const re of [...sdkClient, ...heavy])
        expect(
          modules.filter((m) => re.test(m)),
          String(re),
        ).toEqual([]);
    });
  }

  it('vigil status and pause in an environment without a profile, TLS or API key: neither commander nor envconfig (the bin entry runs them)', async () => {
    const xdg = mkdtempSync(path.join(os.tmpdir(), 'vigil-cli-xdg-'));
    for (const args of [
      ['status', 'no-such-run-for-the-trace', '--json'],
      ['pause', 'no-such-run-for-the-trace', '--reason=x'],
    ]) {
      const { modules, code } = await loaded(args, { XDG_CONFIG_HOME: xdg });
      expect(code).toBe(3);
      expect(
        modules.filter((m) => /\/node_modules\/(commander|@temporalio\/envconfig|smol-toml)\//.test(m) || m.endsWith('/cli/main.js')),
      ).toEqual([]);
      // The bin entry and the quick path's bundle: no other module of Vigil's own.
      expect(modules.filter((m) => /\/(bin|dist)\//.test(m))).toEqual([CLI_URL, BUNDLE_URL]);
    }
    // With a profile named, envconfig reads it (and says it is missing): the endpoint comes from
    // cli/connection.js, loaded beside the bundle, whose CliError (exit 2) is its own copy's.
    const { modules, code } = await loaded(['--profile', 'nosuch', 'status', 'x'], { XDG_CONFIG_HOME: xdg });
    expect(code).toBe(2);
    expect(modules.some((m) => m.includes('/node_modules/@temporalio/envconfig/'))).toBe(true);
  });

  it("vigil status with a payload codec key: the SDK's client and its codec (the light client cannot decrypt)", async () => {
    const { modules, code } = await loaded(['status', 'no-such-run-for-the-trace'], { VIGIL_CODEC_KEY: 'a'.repeat(64) });
    expect(code).toBe(3);
    expect(modules.some((m) => m.includes('/node_modules/@temporalio/client/'))).toBe(true);
    expect(modules.some((m) => m.endsWith('/workers/codec.js'))).toBe(true);
    expect(modules.some((m) => m.includes('/cli/wire/'))).toBe(false);
    for (const re of heavy)
      expect(
        modules.filter((m) => re.test(m)),
        String(re),
      ).toEqual([]);
  });

  it('vigil status --help: not even the client', async () => {
    const { modules, code } = await loaded(['status', '--help']);
    expect(code).toBe(0);
    expect(modules.some((m) => m.includes('/cli/main.js'))).toBe(true);
    // The endpoint in the help text comes from @temporalio/envconfig, a small package (with a few
    // small files of @temporalio/common); not the client, the protos or the worker.
    expect(
      modules.filter((m) =>
        /\/node_modules\/(@temporalio\/(client|worker|proto|workflow)\/|@temporalio\/common\/lib\/index\.js|zod\/)/.test(m),
      ),
    ).toEqual([]);
    expect(modules.filter((m) => m.includes('/cli/wire/'))).toEqual([]);
  });
});
