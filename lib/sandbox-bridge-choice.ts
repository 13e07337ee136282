/**
 * Which network bridge a sandboxed call runs in front of its command (docs/security.md, The
 * network): the static Go build of it (`native/sandbox-bridge/`) where it is built and answers the
 * protocol this code speaks, else the Node bridge (sandbox-bridge.ts), which does the same and
 * costs a Node start, ~0.07 CPU-s, per networked call. Both listen on the same ports, tunnel
 * through the same proxy and have no policy of their own: which one runs changes the cost of a
 * call, never what it may reach. `VIGIL_SANDBOX_BRIDGE=node` on the worker keeps the Node bridge
 * (to compare, or where a binary may not run).
 *
 * The binary is looked for in the tools folder (lib/paths.ts `toolsDir`): a source checkout's
 * `.tools/sandbox-bridge/`, which scripts/build-sandbox-bridge.sh (run by the bootstrap) builds;
 * an installed package's `VIGIL_HOME/tools/sandbox-bridge/`, which `vigil setup` builds from the
 * Go sources the package carries (workers/sandbox-bridge-setup.ts), with the Go on PATH. Either
 * way the sandbox shows that one file, read-only, at SANDBOX_BRIDGE_PATH and runs it from there:
 * never its folder, and nothing else of VIGIL_HOME (sandbox-policy.ts, `bridgeBinary`). Without Go
 * the Node bridge runs, and `vigil doctor` says which bridge runs and why.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { compiledModule } from '../lib/supervisor-location.js';
import { isSourceCheckout, packageRoot, toolsDir } from '../lib/paths.js';
import { SANDBOX_BRIDGE_PATH } from '../lib/sandbox-policy.js';

/** The command line and behaviour the Go bridge must answer with `--version` (`protocol` in native/sandbox-bridge/main.go). */
export const BRIDGE_PROTOCOL = '1';

/**
 * Where the Go bridge's binary is built: the tools folder's `sandbox-bridge/` (a source checkout's
 * `.tools/`, by scripts/build-sandbox-bridge.sh; an installed package's VIGIL_HOME/tools, by `vigil setup`).
 */
export function goBridgePath(root: string = packageRoot(), env: NodeJS.ProcessEnv = process.env): string {
  return path.join(toolsDir(env, root), 'sandbox-bridge', 'sandbox-bridge');
}

/** What builds the binary where it is looked for. */
const buildHint = (root: string): string => (isSourceCheckout(root) ? 'run scripts/build-sandbox-bridge.sh' : 'run vigil setup');

export interface SandboxBridge {
  kind: 'go' | 'node';
  /** What runs before `<socket> <proxy-port> <ports> -- <file> [args...]` inside the sandbox. */
  command: string[];
  /** What the sandbox must show read-only at its own path for it to run (besides the interpreter's install folder). */
  readable: string[];
  /** The Go bridge's binary on the worker, which the sandbox shows (that file only) at SANDBOX_BRIDGE_PATH; null for the Node bridge. */
  binary: string | null;
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
    return isSourceCheckout(root)
      ? `${path.relative(root, bin)} is not built (install Go 1.21 or later and run scripts/build-sandbox-bridge.sh)`
      : `${bin} is not built (install Go 1.21 or later and run vigil setup)`;
  }
  if (probed?.key === key) return probed.problem;
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 5000 });
  const answer = (r.stdout ?? '').trim();
  const problem =
    r.status === 0 && answer === `vigil-sandbox-bridge ${BRIDGE_PROTOCOL}`
      ? null
      : `${bin} ` +
        (r.error ? `does not run here (${r.error.message})` : `answers "${answer.slice(0, 60)}", not protocol ${BRIDGE_PROTOCOL}`) +
        `: ${buildHint(root)}`;
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

/**
 * The bridge this worker's sandboxed calls run. `packageDir`: the package whose bridge to look for
 * (its root decides between a source checkout and an installed package); the running one by default.
 */
export function sandboxBridge(env: NodeJS.ProcessEnv = process.env, packageDir?: string): SandboxBridge {
  const wanted = env.VIGIL_SANDBOX_BRIDGE?.trim().toLowerCase();
  const node = (why: string): SandboxBridge => {
    const exe = real(process.execPath);
    const js = compiledModule('sandbox-bridge.js');
    return {
      kind: 'node',
      command: [exe, js],
      readable: [js],
      binary: null,
      interpreter: exe,
      note: `Node (${why}; each networked call starts a Node process, ~0.07 CPU-s)`,
    };
  };
  if (wanted === 'node') return node('VIGIL_SANDBOX_BRIDGE=node');
  let root: string;
  try {
    root = packageDir ?? packageRoot();
  } catch {
    return node('no package root');
  }
  const bin = goBridgePath(root, env);
  const problem = goBridgeProblem(bin, root);
  if (problem !== null) return node(problem);
  const where = isSourceCheckout(root) ? path.relative(root, bin) : `${bin}, built by vigil setup`;
  return {
    kind: 'go',
    command: [SANDBOX_BRIDGE_PATH],
    readable: [],
    binary: bin,
    interpreter: null,
    note: `a static Go program (${where})`,
  };
}
