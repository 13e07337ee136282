/**
 * Which network bridge a sandboxed call runs in front of its command (docs/security.md, The
 * network): the static Go build of it (`native/sandbox-bridge/`, built into this checkout's
 * `.tools/sandbox-bridge/` by scripts/build-sandbox-bridge.sh, which the bootstrap runs) where it
 * is there and answers the protocol this code speaks, else the Node bridge (sandbox-bridge.ts),
 * which does the same and costs a Node start, ~0.07 CPU-s, per networked call. Both listen on the
 * same ports, tunnel through the same proxy and have no policy of their own: which one runs
 * changes the cost of a call, never what it may reach. `VIGIL_SANDBOX_BRIDGE=node` on the worker
 * keeps the Node bridge (to compare, or where a binary may not run). The binary is looked for in
 * a source checkout only: an installed package's tools live under VIGIL_HOME, which no sandbox
 * shows, so there the Node bridge runs (and `vigil doctor` says so).
 */
import { spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { compiledModule } from './supervisor-client.js';
import { isSourceCheckout, packageRoot } from '../workers/paths.js';

/** The command line and behaviour the Go bridge must answer with `--version` (`protocol` in native/sandbox-bridge/main.go). */
export const BRIDGE_PROTOCOL = '1';

/** Where scripts/build-sandbox-bridge.sh puts the binary in a source checkout. */
export function goBridgePath(root: string = packageRoot()): string {
  return path.join(root, '.tools', 'sandbox-bridge', 'sandbox-bridge');
}

export interface SandboxBridge {
  kind: 'go' | 'node';
  /** What runs before `<socket> <proxy-port> <ports> -- <file> [args...]` inside the sandbox. */
  command: string[];
  /** What the sandbox must show read-only for it to run (besides the interpreter's install folder). */
  readable: string[];
  /** The interpreter it runs on (its install folder must be readable too), or null for a binary. */
  interpreter: string | null;
  /** One line for `vigil doctor`: which bridge, and for the Node one why not the Go one. */
  note: string;
}

let probed: { key: string; problem: string | null } | null = null;

/** Whether the binary at `bin` runs here and speaks this protocol (asked once per binary and modification time). */
function goBridgeProblem(bin: string, root: string): string | null {
  let key: string;
  try {
    const st = statSync(bin);
    key = `${bin}:${st.mtimeMs}:${st.size}`;
  } catch {
    return `${path.relative(root, bin)} is not built (install Go 1.21 or later and run scripts/build-sandbox-bridge.sh)`;
  }
  if (probed?.key === key) return probed.problem;
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 5000 });
  const answer = (r.stdout ?? '').trim();
  const problem =
    r.status === 0 && answer === `vigil-sandbox-bridge ${BRIDGE_PROTOCOL}`
      ? null
      : `${bin} ${r.error ? `does not run here (${r.error.message})` : `answers "${answer.slice(0, 60)}", not protocol ${BRIDGE_PROTOCOL}`}: run scripts/build-sandbox-bridge.sh`;
  probed = { key, problem };
  return problem;
}

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** Where the Node bridge finds the command's NODE_EXTRA_CA_CERTS (sandbox-bridge.ts puts it back for the command). */
export const BRIDGE_CA_VARIABLE = 'VIGIL_BRIDGE_EXTRA_CA_CERTS';

/**
 * The sandboxed environment as the bridge starts with it: Node reads the file NODE_EXTRA_CA_CERTS
 * names at every start (~90 ms for a system bundle), which the Node bridge, making no TLS
 * connection, does not need; it starts without it and hands it on to the command. The Go bridge
 * reads no such file: its environment is the command's.
 */
export function bridgeEnv(bridge: SandboxBridge, env: Record<string, string>): Record<string, string> {
  if (bridge.kind !== 'node' || env.NODE_EXTRA_CA_CERTS === undefined) return env;
  const { NODE_EXTRA_CA_CERTS: ca, ...rest } = env;
  return { ...rest, [BRIDGE_CA_VARIABLE]: ca };
}

/** The bridge this worker's sandboxed calls run. */
export function sandboxBridge(env: NodeJS.ProcessEnv = process.env, packageDir?: string): SandboxBridge {
  const wanted = env.VIGIL_SANDBOX_BRIDGE?.trim().toLowerCase();
  const node = (why: string): SandboxBridge => {
    const exe = real(process.execPath);
    const js = compiledModule('sandbox-bridge.js');
    return { kind: 'node', command: [exe, js], readable: [js], interpreter: exe, note: `Node (${why}; each networked call starts a Node process, ~0.07 CPU-s)` };
  };
  if (wanted === 'node') return node('VIGIL_SANDBOX_BRIDGE=node');
  let root: string;
  try {
    root = packageDir ?? packageRoot();
  } catch {
    return node('no package root');
  }
  if (!isSourceCheckout(root)) return node('an installed package has no Go build of it');
  const bin = goBridgePath(root);
  const problem = goBridgeProblem(bin, root);
  if (problem !== null) return node(problem);
  return { kind: 'go', command: [bin], readable: [bin], interpreter: null, note: `a static Go program (${path.relative(root, bin)})` };
}
