/**
 * The sandbox's network bridge, both builds of it — the static Go program
 * (native/sandbox-bridge/, built by scripts/build-sandbox-bridge.sh) and the Node one
 * (lib/sandbox-bridge.ts) — held to the same behaviour as real processes against a real
 * proxy socket: a connection to the proxy port is passed through unchanged, a loopback port is
 * tunnelled with CONNECT and closed when the proxy refuses, a proxy that comes up late is waited
 * for, the command's exit status and a fatal signal are passed back, and a signal sent to the
 * bridge reaches the command. Then which build a worker picks (lib/sandbox-bridge-choice.ts)
 * and that a sandboxed call runs it. The bridges run here outside bubblewrap (on free ports of the
 * host's loopback); tests/unit/sandbox.test.ts runs the chosen one inside it against a hostile
 * agent. The Node bridge runs from dist/: `npm run build`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BRIDGE_CA_VARIABLE, BRIDGE_PROTOCOL, bridgeEnv, goBridgePath, sandboxBridge } from '../../lib/sandbox-bridge-choice.js';
import { compiledModule } from '../../lib/supervisor-location.js';
import { prepareSandbox } from '../../lib/sandbox.js';
import { SANDBOX_BRIDGE_PATH } from '../../lib/sandbox-policy.js';
import { hasGo } from '../support/go.js';
import { ROOT } from '../support/harness.js';
import { describeSandbox, sandboxPlatform } from '../../lib/sandbox-host.js';

let root: string;

beforeAll(() => {
  if (!existsSync(compiledModule('sandbox-bridge.js'))) throw new Error('dist/ is missing: run `npm run build` (npm test does it for you)');
  // What the bootstrap does: a no-op when the binary is newer than its sources.
  if (hasGo) execFileSync('bash', [path.join(ROOT, 'scripts/build-sandbox-bridge.sh')], { stdio: 'inherit' });
  root = mkdtempSync(path.join(os.tmpdir(), 'vigil-bridge-'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve) => {
          const s = net.createServer();
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/**
 * A proxy on a unix socket, as the supervisor's is reached: CONNECT 127.0.0.1:<allowed> answers
 * 200 with a first byte of the tunnel in the same packet, then echoes prefixed "tunnel:";
 * any other CONNECT 403; anything else is a plain pass-through, echoed prefixed "proxy:".
 */
function startProxy(socketPath: string, allowed: number): Promise<{ server: net.Server; requests: string[] }> {
  const requests: string[] = [];
  const server = net.createServer((s) => {
    s.once('data', (first) => {
      const text = first.toString('latin1');
      const line = text.split('\r\n')[0] ?? '';
      requests.push(line);
      if (line.startsWith('CONNECT ')) {
        if (line === `CONNECT 127.0.0.1:${allowed} HTTP/1.1`) {
          s.write('HTTP/1.1 200 Connection established\r\n\r\nEARLY|');
          s.on('data', (d) => s.write(`tunnel:${d.toString()}`));
        } else s.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      s.write(`proxy:${text}`);
      s.on('data', (d) => s.write(`proxy:${d.toString()}`));
    });
    s.on('error', () => s.destroy());
  });
  return new Promise((resolve) => server.listen(socketPath, () => resolve({ server, requests })));
}

/** The command the bridge runs: talks to the proxy port, the allowed and the refused tunnel, prints what it got as JSON. */
const CLIENT = `
const net = require('node:net');
const [proxyPort, allowed, refused] = process.argv.slice(1).map(Number);
function talk(port, text, want) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    s.on('connect', () => s.write(text));
    s.on('data', (d) => { got += d; if (want && got.length >= want) { s.destroy(); resolve(got); } });
    s.on('error', (e) => resolve('error:' + e.code));
    s.on('close', () => resolve(got === '' ? 'closed' : got));
  });
}
(async () => {
  const out = {
    proxy: await talk(proxyPort, 'GET http://x/ HTTP/1.1\\r\\n\\r\\n', 'proxy:GET http://x/ HTTP/1.1\\r\\n\\r\\n'.length),
    tunnel: await talk(allowed, 'hello', 'EARLY|tunnel:hello'.length),
    refused: await talk(refused, 'hello', 0),
  };
  console.log(JSON.stringify(out));
})();
`;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runBridge(
  command: readonly string[],
  args: readonly string[],
  onStart?: (pid: number) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Exit> {
  return new Promise((resolve) => {
    const [file, ...pre] = command as [string, ...string[]];
    const child = spawn(file, [...pre, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    if (onStart && child.pid !== undefined) onStart(child.pid);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const BRIDGES: { name: string; command: () => string[]; runIf: boolean }[] = [
  { name: 'the Go bridge', command: () => [goBridgePath()], runIf: hasGo },
  { name: 'the Node bridge', command: () => [process.execPath, compiledModule('sandbox-bridge.js')], runIf: true },
];

for (const b of BRIDGES) {
  describe.runIf(b.runIf)(b.name, () => {
    it('passes the proxy port through, tunnels an allowed loopback port and closes a refused one', async () => {
      const sock = path.join(mkdtempSync(path.join(root, 's-')), 'proxy.sock');
      const [proxyPort, allowed, refused] = (await freePorts(3)) as [number, number, number];
      const proxy = await startProxy(sock, allowed);
      try {
        const r = await runBridge(b.command(), [
          sock,
          String(proxyPort),
          `${allowed},${refused}`,
          '--',
          process.execPath,
          '-e',
          CLIENT,
          String(proxyPort),
          String(allowed),
          String(refused),
        ]);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        const out = JSON.parse(r.stdout) as { proxy: string; tunnel: string; refused: string };
        expect({ proxy: out.proxy, tunnel: out.tunnel }).toEqual({
          proxy: 'proxy:GET http://x/ HTTP/1.1\r\n\r\n',
          tunnel: 'EARLY|tunnel:hello',
        });
        // Refused: closed with nothing passed (a reset when what the command sent was still unread as the bridge closed it).
        expect(['closed', 'error:ECONNRESET']).toContain(out.refused);
        expect(proxy.requests).toEqual([
          'GET http://x/ HTTP/1.1',
          `CONNECT 127.0.0.1:${allowed} HTTP/1.1`,
          `CONNECT 127.0.0.1:${refused} HTTP/1.1`,
        ]);
      } finally {
        proxy.server.close();
      }
    });

    it('waits for a proxy that comes up after the command first connects', async () => {
      const sock = path.join(mkdtempSync(path.join(root, 's-')), 'proxy.sock');
      const [proxyPort, allowed, refused] = (await freePorts(3)) as [number, number, number];
      let proxy: { server: net.Server } | null = null;
      const late = setTimeout(() => void startProxy(sock, allowed).then((p) => (proxy = p)), 400);
      try {
        const r = await runBridge(b.command(), [
          sock,
          String(proxyPort),
          String(allowed),
          '--',
          process.execPath,
          '-e',
          CLIENT,
          String(proxyPort),
          String(allowed),
          String(refused),
        ]);
        expect(r.code).toBe(0);
        // The refused port is not one the bridge listens on: nothing answers there.
        expect(JSON.parse(r.stdout)).toEqual({
          proxy: 'proxy:GET http://x/ HTTP/1.1\r\n\r\n',
          tunnel: 'EARLY|tunnel:hello',
          refused: 'error:ECONNREFUSED',
        });
      } finally {
        clearTimeout(late);
        (proxy as { server: net.Server } | null)?.server.close();
      }
    });

    it('exits as the command exits: its code, 127 for a command not found, and its fatal signal', async () => {
      const sock = path.join(root, 'no-proxy.sock');
      const [port] = (await freePorts(1)) as [number];
      expect((await runBridge(b.command(), [sock, String(port), '', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7'])).code).toBe(7);
      const ok = await runBridge(b.command(), [sock, String(port), '', '--', 'sh', '-c', 'echo out; echo err >&2']);
      expect(ok).toMatchObject({ code: 0, stdout: 'out\n', stderr: 'err\n' });
      const missing = await runBridge(b.command(), [sock, String(port), '', '--', 'no-such-command-here']);
      expect(missing.code).toBe(127);
      expect(missing.stderr).toContain('no-such-command-here: command not found');
      const killed = await runBridge(b.command(), [sock, String(port), '', '--', 'sh', '-c', 'kill -KILL $$']);
      expect(killed.signal).toBe('SIGKILL');
      const usage = await runBridge(b.command(), [sock, String(port)]);
      expect(usage.code).toBe(64);
      expect(usage.stderr).toContain('usage:');
    });

    it('passes SIGTERM on to the command and ends by it', async () => {
      const sock = path.join(root, 'no-proxy.sock');
      const [port] = (await freePorts(1)) as [number];
      const marker = path.join(root, `${b.name.replace(/\W/g, '')}-term`);
      // The command records the signal it got, then dies of it.
      const started = `${marker}-started`;
      const script =
        `trap 'echo TERM > ${marker}; trap - TERM; kill -TERM $$' TERM; echo ready; : > ${started}; ` + 'while :; do sleep 0.05; done';
      let pid = 0;
      const done = runBridge(b.command(), [sock, String(port), '', '--', 'sh', '-c', script], (p) => (pid = p));
      // Signalled once the command has set its trap (a loaded machine may take seconds to start the bridge).
      for (let waited = 0; !existsSync(started) && waited < 30_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      expect(existsSync(started)).toBe(true);
      process.kill(pid, 'SIGTERM');
      const r = await done;
      expect(r.stdout).toBe('ready\n');
      expect(existsSync(marker)).toBe(true);
      expect(r.signal).toBe('SIGTERM');
    });
  });
}

describe('NODE_EXTRA_CA_CERTS and the Node bridge', () => {
  it('the Node bridge starts without it (Node would read the bundle at every start) and hands it to the command', async () => {
    const node = sandboxBridge({ VIGIL_SANDBOX_BRIDGE: 'node' });
    const env = { PATH: '/usr/bin:/bin', NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' };
    const started = bridgeEnv(node, env);
    expect(started).toEqual({ PATH: '/usr/bin:/bin', [BRIDGE_CA_VARIABLE]: '/etc/ssl/certs/ca-certificates.crt' });
    const [port] = (await freePorts(1)) as [number];
    const r = await runBridge(
      node.command,
      [path.join(root, 'no-proxy.sock'), String(port), '', '--', 'sh', '-c', `echo "$NODE_EXTRA_CA_CERTS|\${${BRIDGE_CA_VARIABLE}-unset}"`],
      undefined,
      started,
    );
    expect(r).toMatchObject({ code: 0, stdout: '/etc/ssl/certs/ca-certificates.crt|unset\n' });
    // The Go bridge reads no bundle: the command's environment as it is; nothing to move without the variable.
    expect(bridgeEnv({ ...node, kind: 'go' }, env)).toBe(env);
    expect(bridgeEnv(node, { PATH: '/bin' })).toEqual({ PATH: '/bin' });
  });
});

describe('which bridge a worker runs', () => {
  it.runIf(hasGo)('the Go one in a source checkout where it is built, the Node one when VIGIL_SANDBOX_BRIDGE=node', () => {
    const go = sandboxBridge({});
    // Run from the one path the sandbox shows it at; only that file of the tools folder is shown.
    expect(go).toMatchObject({ kind: 'go', command: [SANDBOX_BRIDGE_PATH], readable: [], binary: goBridgePath(), interpreter: null });
    expect(execFileSync(goBridgePath(), ['--version'], { encoding: 'utf8' }).trim()).toBe(`vigil-sandbox-bridge ${BRIDGE_PROTOCOL}`);
    const node = sandboxBridge({ VIGIL_SANDBOX_BRIDGE: 'node' });
    expect(node).toMatchObject({ kind: 'node', command: [expect.any(String), compiledModule('sandbox-bridge.js')] });
    expect(node.note).toContain('VIGIL_SANDBOX_BRIDGE=node');
  });

  it('the Node one, saying why, where the binary is missing, stale or in an installed package', () => {
    const checkout = path.join(root, 'checkout');
    mkdirSync(path.join(checkout, '.git'), { recursive: true });
    expect(sandboxBridge({}, checkout)).toMatchObject({
      kind: 'node',
      note: expect.stringContaining('.tools/sandbox-bridge/sandbox-bridge is not built'),
    });
    // A binary from an older protocol is not run.
    mkdirSync(path.dirname(goBridgePath(checkout)), { recursive: true });
    writeFileSync(goBridgePath(checkout), '#!/bin/sh\necho "vigil-sandbox-bridge 0"\n');
    chmodSync(goBridgePath(checkout), 0o755);
    expect(sandboxBridge({}, checkout)).toMatchObject({
      kind: 'node',
      note: expect.stringContaining(`not protocol ${BRIDGE_PROTOCOL}: run scripts/build-sandbox-bridge.sh`),
    });
    // An installed package (no .git) looks in VIGIL_HOME/tools, where `vigil setup` builds it.
    const installed = path.join(root, 'installed');
    mkdirSync(installed, { recursive: true });
    const vigilHome = path.join(root, 'installed-home');
    expect(goBridgePath(installed, { VIGIL_HOME: vigilHome })).toBe(path.join(vigilHome, 'tools', 'sandbox-bridge', 'sandbox-bridge'));
    expect(sandboxBridge({ VIGIL_HOME: vigilHome }, installed)).toMatchObject({
      kind: 'node',
      note: expect.stringContaining(
        `${goBridgePath(installed, { VIGIL_HOME: vigilHome })} is not built (install Go 1.21 or later and run vigil setup)`,
      ),
    });
  });

  it.runIf(hasGo && sandboxPlatform().problem === null)('a sandboxed call runs the chosen bridge, and vigil doctor names it', () => {
    const repo = path.join(root, 'repo');
    mkdirSync(repo, { recursive: true });
    const home = path.join(root, 'vigil-home');
    const saved = process.env.VIGIL_HOME;
    process.env.VIGIL_HOME = home; // the call's sandbox HOME goes under it
    onTestFinished(() => {
      if (saved === undefined) delete process.env.VIGIL_HOME;
      else process.env.VIGIL_HOME = saved;
    });
    const call = {
      kind: 'builder' as const,
      runId: 'bridge-choice',
      repoPath: repo,
      cwd: repo,
      file: 'true',
      args: [],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir() },
      provider: 'command',
    };
    const go = prepareSandbox(call, { ...process.env, VIGIL_HOME: home, VIGIL_SANDBOX: 'auto' });
    expect(go.args).toContain(SANDBOX_BRIDGE_PATH);
    expect(go.args.join(' ')).not.toContain('sandbox-bridge.js');
    expect(go.args.join(' ')).toContain(`--ro-bind ${goBridgePath()} ${SANDBOX_BRIDGE_PATH}`);
    expect(go.args.filter((a) => a.includes('.tools'))).toEqual([goBridgePath()]);
    const node = prepareSandbox(call, { ...process.env, VIGIL_HOME: home, VIGIL_SANDBOX: 'auto', VIGIL_SANDBOX_BRIDGE: 'node' });
    expect(node.args).toContain(compiledModule('sandbox-bridge.js'));
    expect(node.args.join(' ')).not.toContain(SANDBOX_BRIDGE_PATH);
    expect(node.args).not.toContain(goBridgePath());
    // A call's NODE_EXTRA_CA_CERTS: the Go bridge's environment keeps it, the Node bridge's carries it aside.
    const withCa = { ...call, env: { ...call.env, NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' } };
    expect(prepareSandbox(withCa, { ...process.env, VIGIL_HOME: home, VIGIL_SANDBOX: 'auto' }).env.NODE_EXTRA_CA_CERTS).toBe(
      '/etc/ssl/certs/ca-certificates.crt',
    );
    const nodeCa = prepareSandbox(withCa, { ...process.env, VIGIL_HOME: home, VIGIL_SANDBOX: 'auto', VIGIL_SANDBOX_BRIDGE: 'node' }).env;
    expect([nodeCa.NODE_EXTRA_CA_CERTS, nodeCa[BRIDGE_CA_VARIABLE]]).toEqual([undefined, '/etc/ssl/certs/ca-certificates.crt']);
    expect(describeSandbox({ ...process.env, VIGIL_SANDBOX: 'auto' }).line).toContain(
      'network bridge: a static Go program (.tools/sandbox-bridge/sandbox-bridge)',
    );
    expect(describeSandbox({ ...process.env, VIGIL_SANDBOX: 'auto', VIGIL_SANDBOX_BRIDGE: 'node' }).line).toContain(
      'network bridge: Node (VIGIL_SANDBOX_BRIDGE=node',
    );
  });
});
