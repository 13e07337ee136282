/**
 * The agent sandbox, on the worker's side (docs/security.md, The agent's sandbox): finds out
 * what the platform offers (bubblewrap and user namespaces, probed once per process), decides by
 * the mode whether a call runs sandboxed, unsandboxed or not at all, gathers the facts the policy
 * (sandbox-policy.ts) turns into bubblewrap's command line — the system folders, the agent's own
 * program, the paths that must never be visible — prepares the folder Vigil owns that the call
 * sees as HOME (a per-run copy of the provider CLI's configuration) and the folder of the call's
 * network proxy, and turns the process's command into the sandboxed one. The proxy itself runs in
 * the call's supervisor (sandbox-proxy.ts), which reports what it refused; `sandboxReport` adds
 * what the output shows and makes the call's report. A call the sandbox refuses to run here is
 * AgentNotRunnable (activities/sandbox.ts says it to Temporal).
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import {
  copyFileSync,
  cpSync,
  existsSync,
  readFileSync,
  readdirSync,
  writeFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  closeSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentNotRunnable } from './providers/call.js';
import { KNOBS } from '../schemas/knobs.js';
import {
  ReleaseRunFilesInputSchema,
  type ReleaseRunFilesInput,
  type ReleaseRunFilesResult,
  type SandboxDenial,
  type SandboxLimits,
  type SandboxMode,
  type SandboxReport,
} from '../schemas/sandbox.js';
import { vigilHome, privateRunDir } from '../lib/paths.js';
import { toolchainPaths } from '../lib/sandbox-toolchain.js';
import { fetchLogPath } from '../schemas/paths.js';
import { ensurePrivateDir, writePrivateFile } from '../lib/safe-files.js';
import { bridgeEnv, sandboxBridge } from '../lib/sandbox-bridge-choice.js';
import {
  addDenial,
  allowedEndpoints,
  bridgePorts,
  deniedInOutput,
  effectiveSandboxMode,
  endpointText,
  isWithin,
  parseEndpoint,
  registriesFor,
  registryEndpoints,
  sandboxEnv,
  sandboxPlan,
  sandboxVerdict,
  SANDBOX_FILES_DIR,
  SANDBOX_PROXY_SOCKET,
  type Endpoint,
  type SandboxKind,
} from '../lib/sandbox-policy.js';
import type { SandboxProxySpec } from '../lib/sandbox-proxy.js';
import type { Denial } from '../lib/sandbox-net.js';
import type { FetchCounts } from '../rules/package-fetches.js';
import type { CallLimitsSpec, LimitsOutcome } from '../lib/sandbox-limits.js';
import { cgroupSettings } from '../lib/sandbox-cgroups.js';
import {
  deniedPaths,
  fact,
  facts,
  findOnPath,
  sandboxPlatform,
  statusArgs,
  systemFolders,
  workerSandboxMode,
} from '../lib/sandbox-host.js';

const execFileAsync = promisify(execFile);
/** Secrets inside them, hidden. */
const SYSTEM_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/ssh',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssl/private',
  '/etc/security/opasswd',
];

/**
 * The provider CLIs' own configuration and credentials, relative to HOME: copied into the call's HOME (a folder Vigil owns
 * per run and provider) when newer than the copy, so the CLI signs in as it does outside, while what the agent writes there
 * (settings, hooks) never reaches the person's own configuration.
 */
const PROVIDER_CONFIG: Record<string, readonly string[]> = {
  claude: ['.claude.json', '.claude/settings.json', '.claude/.credentials.json', '.claude/CLAUDE.md'],
  codex: ['.codex/config.toml', '.codex/auth.json', '.codex/AGENTS.md'],
  gemini: ['.gemini/settings.json', '.gemini/oauth_creds.json', '.gemini/google_accounts.json', '.gemini/.env', '.gemini/GEMINI.md'],
  aider: ['.aider.conf.yml', '.aider.model.settings.yml', '.aider.model.metadata.json', '.env'],
  opencode: ['.config/opencode', '.local/share/opencode/auth.json'],
  cline: ['.cline/data/settings/providers.json'],
  command: [],
};

/**
 * The git folder of a repository that is a git worktree (`.git` a file `gitdir: <folder>`, as
 * `git worktree add` leaves it), or null: a repository with a `.git` folder of its own, or none.
 */
export function worktreeGitDir(repo: string): string | null {
  const dotGit = path.join(repo, '.git');
  try {
    if (!lstatSync(dotGit).isFile()) return null;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8').slice(0, 4096));
    return m ? realpathSync(path.resolve(repo, m[1] as string)) : null;
  } catch {
    return null;
  }
}

/**
 * The common git folder of a repository that is a git worktree (its git folder's `commondir`
 * names it), or null: a repository with a `.git` folder of its own, or none.
 */
export function worktreeCommonDir(repo: string): string | null {
  const gitDir = worktreeGitDir(repo);
  if (gitDir === null) return null;
  try {
    const common = existsSync(path.join(gitDir, 'commondir'))
      ? path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim())
      : gitDir;
    return realpathSync(common);
  } catch {
    return null;
  }
}

/**
 * The git files that, written, would make git run code or read another repository's
 * configuration: shown read-only to the roles that may write the repository. The configuration
 * and hooks of the repository (and of its submodules' git folders); for a worktree, its `.git`
 * file and its git folder's `commondir` and `gitdir`. A repository without a hooks folder gets an
 * empty one first (as `git init` makes), so none can be planted there.
 */
export function gitControlPaths(repo: string): string[] {
  const worktreeGit = worktreeGitDir(repo);
  const common = worktreeGit === null ? path.join(repo, '.git') : worktreeCommonDir(repo);
  if (common === null || !existsSync(common)) return [];
  try {
    if (!existsSync(path.join(common, 'hooks'))) mkdirSync(path.join(common, 'hooks'));
  } catch {
    // A git folder Vigil cannot write: nothing is planted there by the agent either.
  }
  const modules = path.join(common, 'modules');
  let submodules: string[] = [];
  try {
    submodules = readdirSync(modules).flatMap((m) => [path.join(modules, m, 'config'), path.join(modules, m, 'hooks')]);
  } catch {
    submodules = [];
  }
  return [
    path.join(common, 'config'),
    path.join(common, 'config.worktree'),
    path.join(common, 'hooks'),
    ...submodules,
    ...(worktreeGit === null
      ? []
      : [
          path.join(repo, '.git'),
          path.join(worktreeGit, 'commondir'),
          path.join(worktreeGit, 'gitdir'),
          path.join(worktreeGit, 'config.worktree'),
        ]),
  ];
}

/**
 * The folder an executable belongs to, so it runs with what it needs beside it: the install
 * prefix of a package in node_modules, else the nearest folder with a package.json or a Python
 * venv's pyvenv.cfg (up to six levels), else the prefix of a `bin` folder, else its own folder.
 */
export function programRoot(file: string): string {
  const nm = file.indexOf(`${path.sep}node_modules${path.sep}`);
  if (nm > 0) return file.slice(0, nm);
  let dir = path.dirname(file);
  for (let i = 0; i < 6 && dir !== path.dirname(dir); i++, dir = path.dirname(dir)) {
    if (dir === os.homedir()) break;
    if (existsSync(path.join(dir, 'package.json')) || existsSync(path.join(dir, 'pyvenv.cfg'))) return dir;
  }
  const own = path.dirname(file);
  return path.basename(own) === 'bin' && path.dirname(own) !== '/' ? path.dirname(own) : own;
}

/** The interpreter a script's first line names (`#!/usr/bin/env node` → node on PATH), or null. */
function interpreterOf(file: string, pathVar: string | undefined): string | null {
  let line = '';
  try {
    const fd = openSync(file, 'r');
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, 256, 0);
    closeSync(fd);
    line = buf.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
  } catch {
    return null;
  }
  if (!line.startsWith('#!')) return null;
  const words = line.slice(2).trim().split(/\s+/);
  const first = words[0] ?? '';
  if (path.basename(first) === 'env') {
    const name = words.slice(1).find((w) => !w.startsWith('-'));
    return name ? findOnPath(name, pathVar) : null;
  }
  return first || null;
}

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** What the sandbox lets the program and its interpreter read: their program roots (links followed), and the PATH folders. */
function programPaths(file: string, args: readonly string[], env: Record<string, string>): string[] {
  const out: string[] = [];
  for (const dir of (env.PATH ?? '').split(':')) if (dir && path.isAbsolute(dir) && dir !== '/') out.push(dir);
  const exe = findOnPath(file, env.PATH);
  if (exe) {
    out.push(programRoot(exe), programRoot(real(exe)));
    const interp = interpreterOf(real(exe), env.PATH);
    if (interp && path.isAbsolute(interp)) out.push(programRoot(interp), programRoot(real(interp)));
  }
  // Files the command line names (a scenario, a configuration): readable, unless denied.
  for (const a of args) {
    const v = a.startsWith('--') && a.includes('=') ? a.slice(a.indexOf('=') + 1) : a;
    if (path.isAbsolute(v) && fact(v)?.dir === false) out.push(v);
  }
  return out;
}

/** The worker's Go module cache: downloaded dependencies, which a test run or a gate reads but never changes. */
function goModCache(home: string): string {
  const set = process.env.GOMODCACHE?.trim();
  if (set && path.isAbsolute(set)) return set;
  const gopath = process.env.GOPATH?.split(':')[0]?.trim();
  return path.join(gopath && path.isAbsolute(gopath) ? gopath : path.join(home, 'go'), 'pkg', 'mod');
}

/** Dependency caches a test run or a gate tool may read (those that exist): the Go module cache. */
function dependencyCaches(kind: SandboxKind, home: string): string[] {
  if (kind !== 'tests' && kind !== 'gate') return [];
  const go = goModCache(home);
  return existsSync(go) ? [go] : [];
}

/** Go inside the sandbox reads the worker's module cache and fetches nothing unless the registries are allowed. */
function goCacheEnv(home: string, fetch: boolean): Record<string, string> {
  const go = goModCache(home);
  return existsSync(go) ? { GOMODCACHE: go, ...(fetch ? {} : { GOPROXY: 'off' }) } : {};
}

/** The worker's own service ports on loopback (Temporal frontend and UI, the event store, the codec server): watched in the sandbox's namespace. */
export function watchedPorts(env: NodeJS.ProcessEnv = process.env, storeUrl: string | null = null): number[] {
  const ports = new Set<number>([7233, 8233, 5432, 8081]);
  for (const v of [
    env.TEMPORAL_ADDRESS,
    env.VIGIL_DATABASE_URL,
    env.DATABASE_URL,
    storeUrl,
    ...(env.VIGIL_SANDBOX_WATCH ?? '').split(','),
  ]) {
    if (!v) continue;
    const e = parseEndpoint(v.replace(/^postgres(ql)?:/, 'http:')) ?? parseEndpoint(`http://${v}`);
    if (e) ports.add(e.port);
    else if (/^\d+$/.test(v.trim())) ports.add(Number(v));
  }
  return [...ports].filter((p) => p > 0 && p < 65536);
}

/** One process the sandbox is asked to run. */
export interface SandboxCall {
  kind: SandboxKind;
  runId: string;
  repoPath: string;
  cwd: string;
  file: string;
  args: string[];
  env: Record<string, string>;
  /** The provider whose model endpoints the network reaches (null: none, for tests and gates). */
  provider: string | null;
  /** The run's sandbox knob, when the run passes one (else the worker's setting decides). */
  runMode?: SandboxMode | null | undefined;
  /**
   * The run's sandboxRegistries knob (on by default), when passed (else VIGIL_SANDBOX_REGISTRIES on
   * the worker, off unless set: a run whose workflow passes none predates the knob's default).
   * Only the builder and the test runs ever reach the registries.
   */
  registries?: boolean | null | undefined;
  /** The call's name in the run's fetch log (default: its prompt's name, else its kind). */
  label?: string;
  /** Files Vigil hands the call (its prompt, the evidence): readable. Those outside the repository (a hidden role's prompt) appear under /run/vigil-files. */
  files?: string[];
  /**
   * The call's prompt: files its command line names beside it (aider's histories) are the call's
   * own, writable (created empty when missing), everything else in Vigil's records stays read-only.
   */
  promptPath?: string;
  /** The event store's URL (its port is watched), when the worker has one. */
  storeUrl?: string | null;
  /** The run's sandbox limits (absent: their defaults, as for a run from before them). */
  limits?: SandboxLimits | null | undefined;
  /**
   * A folder of the call's own outside the repository that it writes (a test run's per-test
   * report): writable, under /run/vigil-files like the call's other files (the command line and
   * the environment name it there).
   */
  reportDir?: string;
  /** Folders outside the repository the call reads at their own path, read-only (an acceptance run's linked dependencies): refused when denied. */
  readable?: string[];
}

/** The limits a call gets when its run passes none: the knobs' defaults. */
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  pids: KNOBS.sandboxPids.default,
  memoryMb: KNOBS.sandboxMemoryMb.default,
  cpuWeight: KNOBS.sandboxCpuWeight.default,
};

const LIMIT_SUBJECT: Record<SandboxKind, string> = {
  builder: 'the agent',
  reviewer: 'the agent',
  tests: 'the test run',
  gate: 'the gate tool',
};

export interface PreparedSandbox {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** The network proxy the supervisor runs for the call; null: no network (or unsandboxed). */
  proxy: SandboxProxySpec | null;
  /** The report so far (denials are added when the call ends, sandboxReport). */
  report: SandboxReport;
  /**
   * Where this call's `.vigil/signals` writes land when they are not the repository's: a reviewing
   * call's own folder (its `USAGE` is read from there, callSignalPath); null: the repository's.
   */
  signalsDir: string | null;
  /**
   * The call runs in a pid namespace of its own that dies with bubblewrap (`--unshare-pid`,
   * `--die-with-parent`): the kernel kills every process of it, so its supervisor looks for no
   * leftover by token (a scan of every process's environment, ~2 ms of CPU each). Bubblewrap
   * exits as soon as the command has, while the kernel is still killing the rest: it writes the
   * namespace's id to `SANDBOX_STATUS_FD` (process-tree.ts), where the spawner gives it a pipe,
   * and the spawner waits until no process of that namespace is left.
   */
  pidNamespace?: boolean;
  /** The call's limits, applied by its supervisor (sandbox-limits.ts); null: unsandboxed, no limits. */
  limits?: CallLimitsSpec | null;
}

/** Where the call's signal file `name` is read: its own signals folder when the sandbox gave it one, else the repository's. */
export function callSignalPath(prepared: PreparedSandbox, repoSignal: string): string {
  return prepared.signalsDir ? path.join(prepared.signalsDir, path.basename(repoSignal)) : repoSignal;
}

/** Removes a reviewing call's own signals folder once its signals are read (what else the call left there goes nowhere). */
export function discardCallSignals(prepared: PreparedSandbox): void {
  if (prepared.signalsDir) rmSync(prepared.signalsDir, { recursive: true, force: true });
}

const flag = (v: string | undefined): boolean => ['1', 'true', 'yes', 'on'].includes((v ?? '').trim().toLowerCase());

function list(v: string | undefined, sep: RegExp): string[] {
  return (v ?? '')
    .split(sep)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Copies the provider's configuration from the worker's HOME into the call's HOME where the copy is missing or older. */
function seedHome(provider: string | null, from: string, to: string): void {
  for (const rel of PROVIDER_CONFIG[provider ?? 'command'] ?? []) {
    const src = path.join(from, rel);
    const dst = path.join(to, rel);
    try {
      const s = statSync(src);
      if (s.isDirectory()) {
        cpSync(src, dst, {
          recursive: true,
          force: true,
          dereference: true,
          preserveTimestamps: true,
          filter: (f) => !lstatSync(f).isSymbolicLink() || statSync(f).isFile(),
        });
        continue;
      }
      let newer = true;
      try {
        newer = statSync(dst).mtimeMs < s.mtimeMs;
      } catch {
        /* no copy yet */
      }
      if (!newer) continue;
      mkdirSync(path.dirname(dst), { recursive: true, mode: 0o700 });
      copyFileSync(src, dst);
    } catch {
      /* nothing to copy */
    }
  }
}

/**
 * The call's HOME gets a `.gitconfig` with the worker's git identity (user.name and user.email
 * only, never its credential helpers or URL rewrites), or Vigil's when it has none: a CLI that
 * needs an identity and finds none writes one into the repository's `.git/config` (aider does,
 * "Your Name"), which the sandbox keeps read-only, and the call fails.
 */
function seedGitIdentity(from: string, to: string): void {
  const target = path.join(to, '.gitconfig');
  if (existsSync(target)) return;
  const get = (key: string): string | null => {
    const r = spawnSync('git', ['config', '--global', '--get', key], {
      encoding: 'utf8',
      env: { ...process.env, HOME: from },
      timeout: 5000,
    });
    const v = r.status === 0 ? r.stdout.trim() : '';
    return v && !/[\n\r]/.test(v) ? v : null;
  };
  const name = get('user.name') ?? 'Vigil agent';
  const email = get('user.email') ?? 'agent@vigil.invalid';
  const quote = (v: string): string => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  try {
    writeFileSync(target, `[user]\n\tname = ${quote(name)}\n\temail = ${quote(email)}\n`, { mode: 0o600 });
  } catch {
    /* the call goes on without one */
  }
}

/** The worker's HOME as the call's environment names it. */
function homeOf(env: Record<string, string>): string {
  const h = env.HOME?.trim();
  return h && path.isAbsolute(h) && h !== '/' ? path.normalize(h) : os.homedir();
}

/**
 * The command that runs `call` in the sandbox, or the command as is (with the reason) when the
 * mode or the platform says so. Throws a non-retryable AgentNotRunnable failure when the mode is
 * strict and the sandbox cannot run here. A command that cannot be found is passed through as is
 * (its start fails as it always did, and nothing runs). `packageDir`: the package whose network
 * bridge runs (sandbox-bridge-choice.ts; the running one by default).
 */
export function prepareSandbox(call: SandboxCall, workerEnv: NodeJS.ProcessEnv = process.env, packageDir?: string): PreparedSandbox {
  const worker = workerSandboxMode(workerEnv);
  const mode = effectiveSandboxMode(call.runMode, worker.mode);
  const platform = mode === 'off' ? { bwrap: null, version: null, problem: null } : sandboxPlatform(workerEnv);
  const verdict = sandboxVerdict(mode, platform);
  const withPwd = { ...call.env, PWD: call.cwd };
  if (verdict.run === 'refused') {
    // The agent cannot be run here, as a missing binary cannot: the run ends agent_not_runnable with the reason.
    throw new AgentNotRunnable(worker.problem ? `${worker.problem}; ${verdict.reason}` : verdict.reason);
  }
  if (verdict.run === 'unsandboxed')
    return {
      file: call.file,
      args: call.args,
      env: withPwd,
      proxy: null,
      report: { mode, applied: false, isolation: 'none', reason: verdict.reason, denied: [] },
      signalsDir: null,
    };
  if (findOnPath(call.file, call.env.PATH) === null)
    return {
      file: call.file,
      args: call.args,
      env: withPwd,
      proxy: null,
      report: { mode, applied: false, isolation: 'none', reason: `${call.file} cannot be found or run`, denied: [] },
      signalsDir: null,
    };

  const repo = path.resolve(call.repoPath);
  const home = homeOf(call.env);
  const sandboxHome = path.join(privateRunDir(call.runId), 'sandbox-home', call.provider ?? call.kind);
  mkdirSync(vigilHome(workerEnv), { recursive: true, mode: 0o700 });
  ensurePrivateDir(vigilHome(workerEnv), sandboxHome);
  seedHome(call.provider, home, sandboxHome);
  seedGitIdentity(home, sandboxHome);

  const registries = call.registries ?? flag(workerEnv.VIGIL_SANDBOX_REGISTRIES);
  const allow: Endpoint[] = allowedEndpoints({
    kind: call.kind,
    provider: call.provider,
    env: call.env,
    extra: list(workerEnv.VIGIL_SANDBOX_ALLOW, /[\s,]+/),
    registries,
  });
  const network = call.kind !== 'gate';
  // The registries as the proxy sees them: every fetch from one (or refused there) goes to the run's fetch log.
  const packages = network
    ? {
        endpoints: registryEndpoints(call.env),
        refusal: registriesFor(call.kind) ? ('closed' as const) : ('reviewing' as const),
        logPath: path.normalize(fetchLogPath(repo, call.runId)),
        call: (call.label ?? (call.promptPath ? path.basename(call.promptPath).replace(/\.prompt\.md$/, '') : call.kind)).slice(0, 200),
      }
    : null;
  const proxyDir = network ? mkdtempSync(path.join(existsSync('/tmp') ? '/tmp' : os.tmpdir(), 'vigil-sbx-')) : null;
  const ports = bridgePorts(allow, watchedPorts(workerEnv, call.storeUrl ?? null));
  const bridge = sandboxBridge(workerEnv, packageDir);

  // The call's own files: at their path when inside the repository, else under /run/vigil-files
  // (the command line and the environment are rewritten to name them there).
  const callFiles: { src: string; dest: string; writable: boolean }[] = [];
  const rename = new Map<string, string>();
  const place = (src: string, writable: boolean): void => {
    const abs = path.resolve(src);
    if (callFiles.some((f) => f.src === abs)) return;
    const dest = isWithin(abs, repo) ? abs : path.join(SANDBOX_FILES_DIR, `${callFiles.length}-${path.basename(abs)}`);
    if (dest !== abs) rename.set(abs, dest);
    callFiles.push({ src: abs, dest, writable });
  };
  for (const f of call.files ?? []) if (fact(path.resolve(f))?.dir === false) place(f, false);
  if (call.reportDir && fact(path.resolve(call.reportDir))?.dir === true) place(call.reportDir, true);
  if (call.promptPath) {
    const beside = path.dirname(path.resolve(call.promptPath));
    for (const a of call.args) {
      if (!path.isAbsolute(a) || path.dirname(a) !== beside || a === call.promptPath || /\.(log|pid\.json|prompt\.md)$/.test(a)) continue;
      try {
        if (!existsSync(a)) writePrivateFile(a, '');
        place(a, true);
      } catch {
        /* cannot be made: the CLI says so itself */
      }
    }
  }
  const renamed = (text: string): string => {
    let out = text;
    for (const [from, to] of rename) out = out.split(from).join(to);
    return out;
  };
  const callArgs = call.args.map(renamed);
  const callEnv = Object.fromEntries(Object.entries(call.env).map(([k, v]) => [k, renamed(v)]));

  const vigil = path.join(repo, '.vigil');
  // The folders the plan makes read-only must exist, or an agent could create them (and plant a
  // completion claim or a handoff there).
  if (existsSync(vigil)) {
    for (const d of ['runs', 'handoffs', 'signals']) {
      try {
        ensurePrivateDir(repo, path.join(vigil, d));
      } catch {
        /* a link or a file there: the repository's own checks refuse it */
      }
    }
  }
  // A reviewing call's signals folder of its own, named after its prompt (so the attempt that
  // re-attaches to it after a worker crash reads the same folder).
  let signalsDir: string | null = null;
  if (call.kind === 'reviewer' && existsSync(path.join(vigil, 'signals'))) {
    const label = call.promptPath ? path.basename(call.promptPath).replace(/\.prompt\.md$/, '') : call.kind;
    signalsDir = path.join(privateRunDir(call.runId), 'call-signals', label);
    ensurePrivateDir(vigilHome(workerEnv), signalsDir);
  }
  const worktreeGit = worktreeCommonDir(repo);
  const plan = sandboxPlan({
    kind: call.kind,
    repo,
    cwd: path.resolve(call.cwd),
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    system: systemFolders(),
    secrets: facts(SYSTEM_SECRETS),
    home,
    homeSource: sandboxHome,
    callFiles,
    vigilReadable: facts(network ? [...bridge.readable, ...(bridge.interpreter ? [programRoot(bridge.interpreter)] : [])] : []),
    bridgeBinary: network && bridge.binary !== null ? (facts([bridge.binary])[0] ?? null) : null,
    readable: facts([
      ...programPaths(call.file, call.args, call.env),
      ...toolchainPaths({ ...workerEnv, ...call.env }, home).map((t) => t.path),
      ...dependencyCaches(call.kind, home),
      ...(call.readable ?? []),
      ...list(workerEnv.VIGIL_SANDBOX_READABLE, /:/),
    ]),
    writable: facts(list(workerEnv.VIGIL_SANDBOX_WRITABLE, /:/)),
    denied: deniedPaths(workerEnv),
    vigilDirs: {
      root: existsSync(vigil),
      runs: existsSync(path.join(vigil, 'runs')),
      handoffs: existsSync(path.join(vigil, 'handoffs')),
      signals: existsSync(path.join(vigil, 'signals')),
    },
    gitControl: facts(gitControlPaths(repo)),
    gitCommonDir: worktreeGit ? (facts([worktreeGit])[0] ?? null) : null,
    gitFolder: worktreeGit ? null : (facts([path.join(repo, '.git')]).find((f) => f.dir) ?? null),
    proxyDir,
    signalsSource: signalsDir,
  });
  const env: Record<string, string> = {
    ...callEnv,
    ...sandboxEnv({ cwd: path.resolve(call.cwd), home, proxyPort: network ? ports.proxyPort : null }),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    // Claude Code: no telemetry or update traffic the proxy would refuse (and record) on every call.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // npm and pip: no check for their own new version (npm's fetches 3 MB of its metadata each
    // time), so the run's fetch log holds the packages the call asked for; the caller's own value wins.
    npm_config_update_notifier: callEnv.npm_config_update_notifier ?? 'false',
    PIP_DISABLE_PIP_VERSION_CHECK: callEnv.PIP_DISABLE_PIP_VERSION_CHECK ?? '1',
    // Go: the worker's module cache, read-only (dependencies already downloaded), and no fetching without the registries.
    ...(call.kind === 'tests' || call.kind === 'gate' ? goCacheEnv(home, network && registries) : {}),
  };
  const inner = network
    ? [...bridge.command, SANDBOX_PROXY_SOCKET, String(ports.proxyPort), ports.listen.join(','), '--', call.file, ...callArgs]
    : [call.file, ...callArgs];
  const refusedNote = plan.refused.length ? `; not shown: ${plan.refused.map((r) => r.path).join(', ')}` : '';
  // The network in a few words: the model endpoints by name, the registries as one (a dozen host names would crowd out the rest).
  const registryTexts = new Set((packages?.endpoints ?? []).map(endpointText));
  const reachesRegistries = registries && registriesFor(call.kind);
  const reached = [
    ...allow.map(endpointText).filter((e) => !reachesRegistries || !registryTexts.has(e)),
    ...(reachesRegistries ? ['the package registries'] : []),
  ];
  const isolation =
    `bubblewrap ${platform.version ?? ''}`.trim() +
    `; repository ${plan.repoWritable ? 'writable' : 'read-only'}; network: ${network && reached.length ? reached.join(', ') : 'none'}${refusedNote}`;
  return {
    file: platform.bwrap as string,
    args: [...statusArgs(platform.version), ...plan.args, ...inner],
    env: network ? bridgeEnv(bridge, env) : env,
    proxy: proxyDir !== null ? { socketPath: path.join(proxyDir, 'proxy.sock'), allow, packages } : null,
    report: { mode, applied: true, isolation: isolation.slice(0, 300), reason: null, denied: [] },
    signalsDir,
    pidNamespace: true,
    limits: { ...(call.limits ?? DEFAULT_SANDBOX_LIMITS), subject: LIMIT_SUBJECT[call.kind], ...cgroupSettings(workerEnv) },
  };
}

/**
 * The call's report: what the proxy refused, the refused writes and accesses its output shows,
 * how it was limited, and its package fetches, counted.
 */
export function sandboxReport(
  prepared: PreparedSandbox,
  proxyDenials: readonly Denial[],
  output: string,
  limits: LimitsOutcome | null = null,
  fetches: FetchCounts | null = null,
): SandboxReport {
  // The proxy's folder, when its supervisor did not remove it (a call re-attached to after a worker crash never used this one).
  if (prepared.proxy) {
    try {
      rmSync(prepared.proxy.socketPath, { force: true });
      rmdirSync(path.dirname(prepared.proxy.socketPath));
    } catch {
      /* gone, or in use */
    }
  }
  if (!prepared.report.applied) return prepared.report;
  const denied: SandboxDenial[] = [];
  for (const d of proxyDenials) addDenial(denied, d);
  for (const d of deniedInOutput(output)) addDenial(denied, d);
  return {
    ...prepared.report,
    denied,
    ...(limits ? { limits: limits.applied.slice(0, 300), limitHit: limits.reason?.slice(0, 300) ?? null } : {}),
    ...(fetches && (fetches.fetches > 0 || fetches.refused > 0) ? { packages: fetches } : {}),
  };
}

/**
 * At a run's end: the folders its sandboxed calls kept in VIGIL_HOME — each provider's sandbox
 * home (a per-run copy of the CLI's configuration and credentials, its caches and sessions) and
 * the reviewing calls' signal folders — are removed. The hidden roles' logs beside them stay (the
 * run's record). Idempotent: a retried call finds nothing and says so.
 */
export async function releaseRunFiles(raw: ReleaseRunFilesInput): Promise<ReleaseRunFilesResult> {
  const { runId } = ReleaseRunFilesInputSchema.parse(raw);
  const dir = privateRunDir(runId);
  const removed: string[] = [];
  const problems: string[] = [];
  for (const name of ['sandbox-home', 'call-signals']) {
    const target = path.join(dir, name);
    if (!existsSync(target)) continue;
    try {
      // The run's close waits for this (a stop --now too): a sandbox home is a handful of entries, which
      // rmSync removes in a millisecond or two, where the promise-based rm waits on the busy event loop
      // at every entry. A CLI may leave read-only folders (a Go module cache), whose entries cannot be
      // removed: only then is chmod run (a process, off the event loop), and the removal tried again.
      try {
        rmSync(target, { recursive: true, force: true });
      } catch {
        await execFileAsync('chmod', ['-R', 'u+w', target], { timeout: 60_000 }).catch(() => undefined);
        rmSync(target, { recursive: true, force: true, maxRetries: 3 });
      }
      removed.push(path.relative(vigilHome(), target));
    } catch (e) {
      problems.push(`${path.relative(vigilHome(), target)}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { removed, problem: problems.length ? problems.join('; ').slice(0, 500) : null };
}

export { isWithin };
