/**
 * What this machine offers the agent sandbox, and what it never shows: the worker's sandbox
 * setting (VIGIL_SANDBOX), bubblewrap and whether it can make the namespaces (probed once), the
 * system folders every sandbox sees read-only, and the paths it hides whatever a call asks for.
 * `describeSandbox` is what `vigil doctor` says; activities/sandbox.ts prepares each call's
 * sandbox from the same facts.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, lstatSync, readlinkSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SandboxModeSchema, type SandboxMode } from '../schemas/sandbox.js';
import { vigilHome } from './paths.js';
import { credentialPaths } from './sandbox-toolchain.js';
import { runSecretPath } from './run-signing.js';
import { daemonSocketPath } from './supervisor-location.js';
import { sandboxBridge } from './sandbox-bridge-choice.js';
import { sandboxVerdict, type PathFact, type SandboxPlatform } from './sandbox-policy.js';
import { SANDBOX_STATUS_FD } from './process-tree.js';

/** The system folders every sandbox sees read-only (those that exist). */
export const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/** The worker's setting (VIGIL_SANDBOX): auto by default; a value that is not a mode fails closed (strict) and says so. */
export function workerSandboxMode(env: NodeJS.ProcessEnv = process.env): { mode: SandboxMode; problem: string | null } {
  const raw = env.VIGIL_SANDBOX?.trim().toLowerCase();
  if (!raw) return { mode: 'auto', problem: null };
  const parsed = SandboxModeSchema.safeParse(raw);
  return parsed.success
    ? { mode: parsed.data, problem: null }
    : { mode: 'strict', problem: `VIGIL_SANDBOX=${env.VIGIL_SANDBOX} is not auto, strict or off (taken as strict)` };
}

let probed: { key: string; platform: SandboxPlatform } | null = null;

export function findOnPath(name: string, pathVar: string | undefined): string | null {
  if (name.includes('/')) return isExecutable(name) ? path.resolve(name) : null;
  for (const dir of (pathVar ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    if (!dir) continue;
    const p = path.join(dir, name);
    if (isExecutable(p)) return p;
  }
  return null;
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** What this machine offers: bubblewrap, and whether it can make the namespaces the sandbox needs (probed once). */
export function sandboxPlatform(env: NodeJS.ProcessEnv = process.env): SandboxPlatform {
  // VIGIL_SANDBOX_BWRAP names the binary where it is not on PATH (and nothing else is tried then).
  const named = env.VIGIL_SANDBOX_BWRAP?.trim();
  const bwrap =
    process.platform !== 'linux'
      ? null
      : named
        ? findOnPath(path.resolve(named), undefined)
        : (findOnPath('bwrap', env.PATH) ?? findOnPath('/usr/bin/bwrap', undefined));
  const key = `${process.platform}:${named ?? ''}:${bwrap ?? ''}`;
  if (probed?.key === key) return probed.platform;
  let platform: SandboxPlatform;
  if (process.platform !== 'linux')
    platform = { bwrap: null, version: null, problem: `the sandbox needs Linux (bubblewrap); this is ${process.platform}` };
  else if (!bwrap)
    platform = {
      bwrap: null,
      version: null,
      problem: named
        ? `VIGIL_SANDBOX_BWRAP=${named} is not an executable file`
        : 'bubblewrap (bwrap) is not installed: run scripts/install-sandbox.sh, or apt-get install bubblewrap',
    };
  else {
    const v = spawnSync(bwrap, ['--version'], { encoding: 'utf8', timeout: 5000 });
    const version = /bubblewrap\s+(\S+)/.exec(v.stdout ?? '')?.[1] ?? null;
    const trial = spawnSync(
      bwrap,
      [
        '--unshare-user',
        '--unshare-pid',
        '--unshare-net',
        '--unshare-ipc',
        '--die-with-parent',
        '--cap-drop',
        'ALL',
        ...systemArgs(),
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        '--',
        '/bin/sh',
        '-c',
        'exit 0',
      ],
      { encoding: 'utf8', timeout: 10_000 },
    );
    const problem =
      trial.status === 0
        ? null
        : `bubblewrap cannot make the sandbox's namespaces here ` +
          `(${(trial.stderr || trial.error?.message || `exit ${trial.status}`).trim().slice(0, 200)}): unprivileged user ` +
          `namespaces may be turned off (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap), or a ` +
          `container refuses them`;
    platform = { bwrap, version, problem };
  }
  probed = { key, platform };
  return platform;
}

/** bubblewrap 0.5 and later write their status, the pid namespace's id with it, to a descriptor (`--json-status-fd`). */
export function statusArgs(version: string | null): string[] {
  const m = /^(\d+)\.(\d+)/.exec(version ?? '');
  return m && (Number(m[1]) > 0 || Number(m[2]) >= 5) ? ['--json-status-fd', String(SANDBOX_STATUS_FD)] : [];
}

export function systemArgs(): string[] {
  const out: string[] = [];
  for (const s of systemFolders()) out.push(...(s.linkTo !== null ? ['--symlink', s.linkTo, s.path] : ['--ro-bind', s.path, s.path]));
  return out;
}

export function systemFolders(): { path: string; linkTo: string | null }[] {
  const out: { path: string; linkTo: string | null }[] = [];
  for (const p of SYSTEM) {
    try {
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out.push({ path: p, linkTo: readlinkSync(p) });
      else if (st.isDirectory()) out.push({ path: p, linkTo: null });
    } catch {
      /* absent */
    }
  }
  return out;
}

export function fact(p: string): PathFact | null {
  try {
    return { path: p, dir: statSync(p).isDirectory() };
  } catch {
    return null;
  }
}

export const facts = (paths: readonly (string | null | undefined)[]): PathFact[] => {
  const seen = new Set<string>();
  const out: PathFact[] = [];
  for (const p of paths) {
    if (!p || !path.isAbsolute(p)) continue;
    const norm = path.normalize(p);
    if (seen.has(norm)) continue;
    seen.add(norm);
    const f = fact(norm);
    if (f) out.push(f);
  }
  return out;
};

/** Paths the sandbox never shows, whatever a call asks for (those that exist). */
export function deniedPaths(env: NodeJS.ProcessEnv = process.env): PathFact[] {
  const list: (string | undefined)[] = [
    vigilHome(env),
    runSecretPath(env),
    env.VIGIL_CODEC_KEY_FILE,
    path.join(os.homedir(), '.ssh'),
    ...credentialPaths(env, os.homedir()),
  ];
  for (const [k, v] of Object.entries(env))
    if (v && (k.startsWith('TEMPORAL_TLS') || k.startsWith('VIGIL_TLS')) && path.isAbsolute(v)) list.push(v);
  try {
    list.push(path.dirname(daemonSocketPath()));
  } catch {
    /* no compiled daemon: no socket to hide */
  }
  if (env.VIGIL_SUPERVISOR_DIR) list.push(env.VIGIL_SUPERVISOR_DIR);
  return facts(list.map((p) => (p ? path.resolve(p) : p)));
}

/** What `vigil doctor` says about this worker's sandbox: the mode, whether it would apply, and why not (`packageDir`: as for prepareSandbox). */
export function describeSandbox(
  env: NodeJS.ProcessEnv = process.env,
  packageDir?: string,
): { mode: SandboxMode; applies: boolean; line: string; problem: string | null } {
  const worker = workerSandboxMode(env);
  const platform = sandboxPlatform(env);
  const verdict = sandboxVerdict(worker.mode, platform);
  const uid = process.getuid?.() ?? 0;
  if (verdict.run === 'sandboxed') {
    return {
      mode: worker.mode,
      applies: true,
      line:
        `sandbox=${worker.mode}: agents and test runs run in bubblewrap ${platform.version ?? ''} (${platform.bwrap}): own user, ` +
        `pid and network namespaces${uid === 0 ? `, uid ${1000} inside instead of root` : ''}; the repository writable for the ` +
        `builder and tests, read-only for reviewing roles; network only to the provider's model endpoints through a proxy, and ` +
        `for the builder and test runs to the package registries (unless a run sets sandboxRegistries=false; each fetch logged ` +
        `to the run); never VIGIL_HOME, the run secret, keys or the worker's services; network bridge: ` +
        `${sandboxBridge(env, packageDir).note}`,
      problem: worker.problem,
    };
  }
  return {
    mode: worker.mode,
    applies: false,
    line: verdict.reason,
    problem: worker.problem ?? (verdict.run === 'refused' ? verdict.reason : null),
  };
}
