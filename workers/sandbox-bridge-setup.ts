/**
 * `vigil setup`'s build of the sandbox's network bridge (lib/sandbox-bridge-choice.ts,
 * docs/security.md, The network): the Go sources the package carries (`native/sandbox-bridge/`,
 * Go's standard library only) built with the Go on PATH, as scripts/build-sandbox-bridge.sh does
 * in a source checkout — static (CGO_ENABLED=0), never a downloaded toolchain (GOTOOLCHAIN=local),
 * no module fetched (GOPROXY=off), no workspace or GOFLAGS of the user's (GOWORK=off, GOFLAGS=) —
 * into the tools folder (lib/paths.ts `toolsDir`: VIGIL_HOME/tools for an installed package).
 * A binary already there that answers the protocol and was built from these very sources (their
 * hash beside it: an upgrade's files all carry the registry's fixed date, so times tell nothing)
 * is left alone. Without Go, or when the build fails, setup says so in one line and goes on: the
 * Node bridge runs.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BRIDGE_PROTOCOL, goBridgePath } from '../lib/sandbox-bridge-choice.js';
import { packageRoot } from '../lib/paths.js';

/** The environment of the build: the user's, with what makes it offline, static and reproducible. */
export const BRIDGE_BUILD_ENV = { CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '', GOWORK: 'off' } as const;

export interface BridgeSetup {
  /** built: compiled now; current: the binary there was built from these sources; none: no binary (the Node bridge runs). */
  outcome: 'built' | 'current' | 'none';
  /** The binary, or null with `none`. */
  path: string | null;
  /** One line for setup's output. */
  line: string;
}

/** The hash of the bridge's sources (every file of the folder, by name and content). */
export function bridgeSourceHash(src: string): string {
  const h = createHash('sha256');
  for (const name of readdirSync(src).sort()) {
    h.update(`${name}\0`);
    h.update(readFileSync(path.join(src, name)));
    h.update('\0');
  }
  return h.digest('hex');
}

const answersProtocol = (bin: string): boolean => {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 5000 });
  return r.status === 0 && (r.stdout ?? '').trim() === `vigil-sandbox-bridge ${BRIDGE_PROTOCOL}`;
};

/** Builds the bridge into the tools folder unless the one there is current; never throws for want of Go or a failed build. */
export function setupSandboxBridge(opts: { env?: NodeJS.ProcessEnv; root?: string } = {}): BridgeSetup {
  const env = opts.env ?? process.env;
  const root = opts.root ?? packageRoot();
  const src = path.join(root, 'native', 'sandbox-bridge');
  const out = goBridgePath(root, env);
  const stamp = `${out}.sources`;
  const node = (why: string): BridgeSetup => ({
    outcome: 'none',
    path: null,
    line: `sandbox network bridge: ${why}; sandboxed calls use the Node bridge`,
  });
  let hash: string;
  try {
    hash = bridgeSourceHash(src);
  } catch {
    return node(`the package has no sources of the Go bridge (${src})`);
  }
  let stamped = '';
  try {
    stamped = readFileSync(stamp, 'utf8').trim();
  } catch {
    /* not built by setup yet */
  }
  if (stamped === hash && answersProtocol(out))
    return { outcome: 'current', path: out, line: `sandbox network bridge: ${out} (up to date)` };

  const version = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8', env: { ...env, ...BRIDGE_BUILD_ENV }, timeout: 30_000 });
  if (version.error || version.status !== 0) return node('Go is not on PATH (install Go 1.21 or later and run vigil setup again)');
  const go = version.stdout.trim();
  mkdirSync(path.dirname(out), { recursive: true, mode: 0o700 });
  const tmp = `${out}.tmp.${process.pid}`;
  const build = spawnSync('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', tmp, '.'], {
    cwd: src,
    encoding: 'utf8',
    env: { ...env, ...BRIDGE_BUILD_ENV },
    timeout: 300_000,
  });
  if (build.status !== 0 || !answersProtocol(tmp)) {
    rmSync(tmp, { force: true });
    const why = (build.stderr || build.error?.message || '').trim().split('\n').pop() ?? '';
    return node(`the build failed with ${go} (Go 1.21 or later is needed${why ? `: ${why.slice(0, 160)}` : ''})`);
  }
  renameSync(tmp, out);
  writeFileSync(stamp, `${hash}\n`);
  return { outcome: 'built', path: out, line: `sandbox network bridge: built ${out} with ${go}` };
}
