/**
 * Where the supervisor daemon (supervisor-daemon.ts) lives and whether calls use it: the socket is
 * `<dir>/sup-<build>.sock`, `<dir>` being VIGIL_SUPERVISOR_DIR, else `<tmp>/vigil-supervisor-<uid>`
 * (owner-only), and `<build>` a hash of the daemon's code and of the Node binary, so a worker never
 * talks to a daemon of another build. VIGIL_SUPERVISOR=per-call turns the daemon off. The worker's
 * side of the daemon (starting it, connecting) is activities/supervisor-client.ts; the sandbox's
 * list of hidden paths and `vigil doctor` read the socket's folder from here.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from './paths.js';

export type SupervisorMode = 'daemon' | 'per-call';

export interface SupervisorSettings {
  mode: SupervisorMode;
  dir: string;
  /** How long a daemon this worker starts stays with nothing to do; null: its default (a minute). */
  idleMs: number | null;
}

function defaults(): SupervisorSettings {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return {
    mode: process.env.VIGIL_SUPERVISOR === 'per-call' ? 'per-call' : 'daemon',
    dir: process.env.VIGIL_SUPERVISOR_DIR || path.join(os.tmpdir(), `vigil-supervisor-${uid}`),
    idleMs: null,
  };
}

let settings: SupervisorSettings | undefined;

/** Overrides where the daemon lives and whether it is used (activities/supervisor-client.ts's configureSupervisor). */
export function setSupervisorSettings(over: Partial<SupervisorSettings>): void {
  settings = { ...(settings ?? defaults()), ...over };
}

/** How long a daemon this worker starts stays with nothing to do (null: its default). */
export function supervisorIdleMs(): number | null {
  settings ??= defaults();
  return settings.idleMs;
}

export function supervisorMode(): SupervisorMode {
  settings ??= defaults();
  return settings.mode;
}

/** A compiled module of lib/, where the daemon lives (from sources, as under the tests: the one `npm run build` wrote). */
export function compiledModule(name: string): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return path.join(path.dirname(here), name);
  return path.join(packageRoot(), 'dist', 'lib', name);
}

/** The modules the daemon runs: a change to any of them is another build. */
const DAEMON_MODULES = [
  'supervisor-daemon.js',
  'supervised-call.js',
  'call-silence.js',
  'supervisor-state.js',
  'process-tree.js',
  'safe-files.js',
  'sandbox-proxy.js',
  'sandbox-net.js',
  'sandbox-limits.js',
  'sandbox-cgroups.js',
];
let build: string | undefined;

/** The daemon's socket for this build. */
export function daemonSocketPath(): string {
  settings ??= defaults();
  if (build === undefined) {
    const h = createHash('sha256').update(process.execPath);
    for (const m of DAEMON_MODULES) h.update(readFileSync(compiledModule(m)));
    build = h.digest('hex').slice(0, 12);
  }
  return path.join(settings.dir, `sup-${build}.sock`);
}

/** The pid of the daemon serving this build's socket (the process whose command line names it), or null (Linux). */
export function daemonPid(): number | null {
  const sock = daemonSocketPath();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').includes(sock)) return Number(e);
    } catch {
      /* gone */
    }
  }
  return null;
}
