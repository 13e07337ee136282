/**
 * The Go network bridge of an installed package: `vigil setup`'s build of it
 * (workers/sandbox-bridge-setup.ts) from the sources the package carries into VIGIL_HOME/tools,
 * with the real Go on PATH, and a sandboxed call of that layout (a package folder that is no
 * source checkout, a scratch VIGIL_HOME) in real bubblewrap behind the real proxy
 * (lib/sandbox-proxy.ts): it runs the Go bridge from the one path the sandbox shows it at,
 * reaches an allowed loopback model server through it, and reads nothing else of VIGIL_HOME —
 * not the run secret, not the tools folder, not the file beside the binary.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE_PROTOCOL, goBridgePath, sandboxBridge } from '../../lib/sandbox-bridge-choice.js';
import { SANDBOX_BRIDGE_PATH } from '../../lib/sandbox-policy.js';
import { startSandboxProxy } from '../../lib/sandbox-proxy.js';
import { prepareSandbox, sandboxReport } from '../../lib/sandbox.js';
import { PACKAGE_NAME } from '../../lib/paths.js';
import { BRIDGE_BUILD_ENV, setupSandboxBridge } from '../../workers/sandbox-bridge-setup.js';
import { hasGo } from '../support/go.js';
import { ROOT } from '../support/harness.js';
import { describeSandbox, sandboxPlatform } from '../../lib/sandbox-host.js';

const sandboxable = sandboxPlatform().problem === null;

let root: string;
/** An installed package's folder: package.json and the bridge's sources, no .git. */
let pkg: string;
let vigilHome: string;
let env: NodeJS.ProcessEnv;
const savedHome = process.env.VIGIL_HOME;

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'vigil-bridge-installed-'));
  pkg = path.join(root, 'lib', 'node_modules', PACKAGE_NAME);
  mkdirSync(pkg, { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: PACKAGE_NAME }));
  cpSync(path.join(ROOT, 'native', 'sandbox-bridge'), path.join(pkg, 'native', 'sandbox-bridge'), { recursive: true });
  vigilHome = path.join(root, 'vigil-home');
  mkdirSync(path.join(vigilHome, 'tools', 'other-tool'), { recursive: true });
  writeFileSync(path.join(vigilHome, 'run-secret'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });
  writeFileSync(path.join(vigilHome, 'tools', 'other-tool', 'token'), 'tool-secret\n');
  env = { ...process.env, VIGIL_HOME: vigilHome, VIGIL_SANDBOX: 'auto' };
  delete env.VIGIL_SANDBOX_BRIDGE;
  process.env.VIGIL_HOME = vigilHome; // the call's private files (its sandbox HOME) go under it
});

afterAll(() => {
  if (savedHome === undefined) delete process.env.VIGIL_HOME;
  else process.env.VIGIL_HOME = savedHome;
  rmSync(root, { recursive: true, force: true });
});

describe('vigil setup builds the Go bridge of an installed package', () => {
  it("as scripts/build-sandbox-bridge.sh builds it in a source checkout: static, offline, with no toolchain, workspace or flags of the user's", () => {
    const line =
      readFileSync(path.join(ROOT, 'scripts', 'build-sandbox-bridge.sh'), 'utf8')
        .split('\n')
        .find((l) => l.includes(' go build ')) ?? '';
    for (const [k, v] of Object.entries(BRIDGE_BUILD_ENV)) expect(line).toContain(` ${k}=${v} `);
    expect(line).toContain("go build -trimpath -ldflags='-s -w'");
  });

  it('without Go: says so in one line, builds nothing, and the Node bridge runs', () => {
    const noGoHome = path.join(root, 'no-go-home');
    const noGo = { ...env, VIGIL_HOME: noGoHome, PATH: '/usr/bin:/bin' };
    const r = setupSandboxBridge({ env: noGo, root: pkg });
    expect(r).toEqual({
      outcome: 'none',
      path: null,
      line: 'sandbox network bridge: Go is not on PATH (install Go 1.21 or later and run vigil setup again); sandboxed calls use the Node bridge',
    });
    expect(existsSync(path.join(noGoHome, 'tools'))).toBe(false);
    expect(sandboxBridge(noGo, pkg)).toMatchObject({ kind: 'node', note: expect.stringContaining('run vigil setup') });
  });

  it.runIf(hasGo)('into VIGIL_HOME/tools with the Go on PATH; again: nothing to do; after an upgrade changed the sources: again', () => {
    const bin = path.join(vigilHome, 'tools', 'sandbox-bridge', 'sandbox-bridge');
    expect(goBridgePath(pkg, env)).toBe(bin);
    const built = setupSandboxBridge({ env, root: pkg });
    expect(built).toMatchObject({
      outcome: 'built',
      path: bin,
      line: expect.stringMatching(/^sandbox network bridge: built .* with go1\.\d+/),
    });
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()).toBe(`vigil-sandbox-bridge ${BRIDGE_PROTOCOL}`);
    // Static: no interpreter (dynamic loader) named in the binary.
    expect(readFileSync(bin).includes('ld-linux')).toBe(false);
    const mtime = statSync(bin).mtimeMs;

    expect(setupSandboxBridge({ env, root: pkg })).toEqual({
      outcome: 'current',
      path: bin,
      line: `sandbox network bridge: ${bin} (up to date)`,
    });
    expect(statSync(bin).mtimeMs).toBe(mtime);

    // An upgrade's files carry the registry's fixed date: the content tells a change.
    appendFileSync(path.join(pkg, 'native', 'sandbox-bridge', 'main.go'), '\n// upgraded\n');
    expect(setupSandboxBridge({ env, root: pkg }).outcome).toBe('built');
    expect(setupSandboxBridge({ env, root: pkg }).outcome).toBe('current');
    // A binary that does not answer the protocol is built again whatever the stamp says.
    writeFileSync(bin, '#!/bin/sh\necho "vigil-sandbox-bridge 0"\n');
    chmodSync(bin, 0o755);
    expect(setupSandboxBridge({ env, root: pkg }).outcome).toBe('built');
  });
});

function listening(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

describe.runIf(hasGo && sandboxable)('a sandboxed call of an installed package', () => {
  it('runs the Go bridge from VIGIL_HOME/tools, reaches the allowed model server through it, and reads nothing else of VIGIL_HOME', async () => {
    expect(setupSandboxBridge({ env, root: pkg }).path).toBe(goBridgePath(pkg, env));
    const bridge = sandboxBridge(env, pkg);
    expect(bridge).toMatchObject({
      kind: 'go',
      binary: goBridgePath(pkg, env),
      command: [SANDBOX_BRIDGE_PATH],
      note: `a static Go program (${goBridgePath(pkg, env)}, built by vigil setup)`,
    });

    const model = http.createServer((_req, res) => res.end('pong'));
    const modelPort = await listening(model);
    const repo = path.join(root, 'repo');
    mkdirSync(repo, { recursive: true });
    const tools = path.join(vigilHome, 'tools');
    const script = [
      `curl -s -m 10 http://127.0.0.1:${modelPort}/ && echo ' MODEL-REACHED' || echo MODEL-UNREACHED`,
      `tr '\\0' ' ' < /proc/$PPID/cmdline; echo`,
      `ls /run/vigil-bridge`,
      `cat ${vigilHome}/run-secret 2>/dev/null && echo SECRET-READ || echo SECRET-HIDDEN`,
      `ls ${tools} 2>/dev/null && echo TOOLS-LISTED || echo TOOLS-HIDDEN`,
      `cat ${tools}/other-tool/token 2>/dev/null && echo TOKEN-READ || echo TOKEN-HIDDEN`,
      `cat ${tools}/sandbox-bridge/sandbox-bridge.sources 2>/dev/null && echo STAMP-READ || echo STAMP-HIDDEN`,
      `test -e ${tools}/sandbox-bridge/sandbox-bridge && echo BINARY-AT-HOME || echo BINARY-NOT-AT-HOME`,
      `echo x > ${SANDBOX_BRIDGE_PATH} 2>/dev/null && echo BRIDGE-WRITTEN || echo BRIDGE-READ-ONLY`,
    ].join('\n');
    const call = {
      kind: 'builder' as const,
      runId: 'installed-bridge',
      repoPath: repo,
      cwd: repo,
      file: 'bash',
      args: ['-c', script],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), ANTHROPIC_BASE_URL: `http://127.0.0.1:${modelPort}` },
      provider: 'claude',
    };
    const prepared = prepareSandbox(call, env, pkg);
    expect(prepared.report.applied).toBe(true);
    // Of VIGIL_HOME the sandbox mounts the bridge's binary (at its own path) and the call's HOME, nothing else.
    const sources: string[] = [];
    for (let i = 0; i < prepared.args.length; i++)
      if (prepared.args[i] === '--bind' || prepared.args[i] === '--ro-bind')
        sources.push(`${prepared.args[i + 1]} -> ${prepared.args[i + 2]}`);
    expect(
      sources.filter((s) => s.startsWith(vigilHome) && !s.startsWith(path.join(vigilHome, 'private', 'installed-bridge', 'sandbox-home'))),
    ).toEqual([`${goBridgePath(pkg, env)} -> ${SANDBOX_BRIDGE_PATH}`]);

    const proxyErrors: string[] = [];
    const proxy = startSandboxProxy(prepared.proxy as NonNullable<typeof prepared.proxy>, (m) => proxyErrors.push(m));
    let out = '';
    let code: number | null = null;
    try {
      code = await new Promise<number | null>((resolve) => {
        // bubblewrap writes its status to descriptor 3 (SANDBOX_STATUS_FD), as every spawner of a
        // sandbox gives it: without a pipe there it would write into whatever this process has open there.
        const child = spawn(prepared.file, prepared.args, { env: prepared.env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
        child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', resolve);
      });
    } finally {
      proxy.close();
      model.close();
      sandboxReport(prepared, proxy.denials(), out);
    }
    expect(code, out).toBe(0);
    const lines = out.split('\n');
    expect(lines).toContain('pong MODEL-REACHED');
    // The command's parent is the Go bridge, started from the sandbox's own path.
    expect(
      lines.find((l) => l.startsWith(SANDBOX_BRIDGE_PATH)),
      out,
    ).toMatch(new RegExp(`^${SANDBOX_BRIDGE_PATH} /run/vigil-proxy/proxy\\.sock \\d+ `));
    expect(lines).toContain('sandbox-bridge');
    for (const hidden of ['SECRET-HIDDEN', 'TOOLS-HIDDEN', 'TOKEN-HIDDEN', 'STAMP-HIDDEN', 'BINARY-NOT-AT-HOME', 'BRIDGE-READ-ONLY'])
      expect(lines, out).toContain(hidden);
    expect(out).not.toContain('tool-secret');
    expect(out).not.toContain('abab');
    expect(proxy.denials()).toEqual([]);
    expect(proxyErrors).toEqual([]);

    // vigil doctor names it.
    expect(describeSandbox(env, pkg).line).toContain(
      `network bridge: a static Go program (${goBridgePath(pkg, env)}, built by vigil setup)`,
    );
  });
});
