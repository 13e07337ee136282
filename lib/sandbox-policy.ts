/**
 * The agent sandbox's rules, as pure functions of facts gathered elsewhere (activities/sandbox.ts
 * reads the file system, the environment and the platform): which mode applies, whether a call
 * runs sandboxed or is refused, which endpoints its network may reach, the bubblewrap command
 * line that isolates it, and which refusals its output shows. No I/O here, so every rule is
 * unit-tested (tests/unit/sandbox-policy.test.ts). What the sandbox lets through and why:
 * docs/security.md, The agent's sandbox.
 */
import path from 'node:path';
import type { SandboxDenial, SandboxMode } from '../schemas/sandbox.js';
import { addDenial, endpointText, isLoopbackHost, parseEndpoint, type Endpoint } from './sandbox-net.js';

export { addDenial, allowedTarget, endpointText, isLoopbackHost, parseEndpoint, type Endpoint } from './sandbox-net.js';

/**
 * Who runs in the sandbox. builder: the iteration's agent, the repository writable; reviewer:
 * every reviewing role (council, reviewers, devil's advocates, checklist, verifier), the tree
 * read-only; tests: the run's test command, writable like the builder; gate: a gate's checker
 * (eslint, tsc, ...), read-only.
 */
export type SandboxKind = 'builder' | 'reviewer' | 'tests' | 'gate';

/**
 * The mode a call runs under: the run's knob when the run chose one (strict or off; a run at the
 * default, auto, passes none: rules/sandbox.ts `sandboxArgs`), else the worker's setting (VIGIL_SANDBOX, default auto); a
 * worker set to strict is never
 * lowered by a run (an operator may require isolation for every run it executes).
 */
export function effectiveSandboxMode(run: SandboxMode | null | undefined, worker: SandboxMode): SandboxMode {
  if (worker === 'strict') return 'strict';
  return run ?? worker;
}

/** What the platform offers, as activities/sandbox.ts probed it. */
export interface SandboxPlatform {
  /** The bubblewrap binary, or null when none is installed. */
  bwrap: string | null;
  /** bubblewrap's version, when known. */
  version: string | null;
  /** Why the sandbox cannot run here (no Linux, no bwrap, user namespaces refused), or null when it can. */
  problem: string | null;
}

export type SandboxVerdict = { run: 'sandboxed' } | { run: 'unsandboxed'; reason: string } | { run: 'refused'; reason: string };

/** Whether a call runs sandboxed, unsandboxed (saying why), or not at all. */
export function sandboxVerdict(mode: SandboxMode, platform: SandboxPlatform): SandboxVerdict {
  if (mode === 'off')
    return { run: 'unsandboxed', reason: 'sandbox=off: the agent runs as the worker, with everything the worker can reach' };
  if (platform.problem === null && platform.bwrap !== null) return { run: 'sandboxed' };
  const problem = platform.problem ?? 'bubblewrap (bwrap) is not installed';
  if (mode === 'strict') {
    return {
      run: 'refused',
      reason:
        `sandbox=strict and the sandbox cannot run on this worker: ${problem}. Install bubblewrap (scripts/install-sandbox.sh, ` +
        `or apt-get install bubblewrap) and check with vigil doctor, or set sandbox=auto to run unsandboxed`,
    };
  }
  return { run: 'unsandboxed', reason: `sandbox=auto and the sandbox cannot run on this worker: ${problem}` };
}

/** The model endpoints each provider's CLI talks to (telemetry and update checks are left out on purpose). */
export const PROVIDER_ENDPOINTS: Record<string, readonly string[]> = {
  claude: ['api.anthropic.com:443'],
  // ChatGPT sign-in: the Codex backend and its token refresh.
  codex: ['api.openai.com:443', 'chatgpt.com:443', 'auth.openai.com:443'],
  // API key, and Google sign-in (Code Assist and its token refresh).
  gemini: ['generativelanguage.googleapis.com:443', 'cloudcode-pa.googleapis.com:443', 'oauth2.googleapis.com:443'],
  aider: ['api.anthropic.com:443', 'api.openai.com:443', 'generativelanguage.googleapis.com:443', 'openrouter.ai:443'],
  opencode: ['api.anthropic.com:443', 'api.openai.com:443', 'generativelanguage.googleapis.com:443', 'openrouter.ai:443'],
  // Cline's own provider (its default), and the API providers `cline auth` may configure.
  cline: ['api.cline.bot:443', 'api.anthropic.com:443', 'api.openai.com:443', 'openrouter.ai:443'],
  command: [],
};

/** Package registries: reachable by the builder and the test runs unless the run sets sandboxRegistries=false; never by a reviewing role or a gate. */
export const REGISTRY_ENDPOINTS: readonly string[] = [
  'registry.npmjs.org:443',
  'registry.yarnpkg.com:443',
  'pypi.org:443',
  'files.pythonhosted.org:443',
  'proxy.golang.org:443',
  'sum.golang.org:443',
  'index.crates.io:443',
  'static.crates.io:443',
  'crates.io:443',
  'rubygems.org:443',
  'repo.maven.apache.org:443',
];

/** Variables that name a provider's base URL (a gateway, a local model server): that host:port is a model endpoint. */
const BASE_URL_VAR = /(_BASE_URL|_API_BASE|_BASE_URI)$/;
/** Variables that name a package registry's URL: reachable with the registries. */
const REGISTRY_URL_VARS = ['npm_config_registry', 'NPM_CONFIG_REGISTRY', 'PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL', 'UV_INDEX_URL', 'GOPROXY'];

/** The package registries a call's environment may use: the known ones, and the registry URLs its environment configures. */
export function registryEndpoints(env: Record<string, string>): Endpoint[] {
  const out = new Map<string, Endpoint>();
  for (const text of [...REGISTRY_ENDPOINTS, ...REGISTRY_URL_VARS.flatMap((k) => (env[k] ?? '').split(/[\s,]+/))]) {
    const e = text ? parseEndpoint(text) : null;
    if (e) out.set(endpointText(e), e);
  }
  return [...out.values()];
}

/** Whether a call of `kind` may reach the package registries when its run opens them: the builder and the test runs only. */
export const registriesFor = (kind: SandboxKind): boolean => kind === 'builder' || kind === 'tests';

/**
 * The endpoints a call's network may reach: its provider's model endpoints, the base URLs its
 * environment configures, the worker's VIGIL_SANDBOX_ALLOW entries, and for the builder and the
 * test runs with `registries` the package registries (registryEndpoints). Nothing for a gate; a
 * reviewing role never reaches the registries, whatever `registries` says.
 */
export function allowedEndpoints(opts: {
  kind: SandboxKind;
  provider: string | null;
  env: Record<string, string>;
  extra: readonly string[];
  registries: boolean;
}): Endpoint[] {
  const out = new Map<string, Endpoint>();
  const add = (text: string): void => {
    const e = parseEndpoint(text);
    if (e) out.set(endpointText(e), e);
  };
  if (opts.kind === 'gate') return [];
  if (opts.kind === 'builder' || opts.kind === 'reviewer') {
    for (const e of PROVIDER_ENDPOINTS[opts.provider ?? 'command'] ?? []) add(e);
    for (const [k, v] of Object.entries(opts.env)) if (BASE_URL_VAR.test(k)) add(v);
    for (const e of opts.extra) add(e);
  }
  if (opts.registries && registriesFor(opts.kind)) for (const e of registryEndpoints(opts.env)) out.set(endpointText(e), e);
  return [...out.values()];
}

/** Whether `p` is `parent` or inside it (both absolute and normalised). */
export function isWithin(p: string, parent: string): boolean {
  const rel = path.relative(parent, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** A path and what it is, as found on disk. */
export interface PathFact {
  path: string;
  dir: boolean;
}

/** Everything the mount plan needs, gathered by activities/sandbox.ts. All paths absolute, real (links resolved) where they are sources. */
export interface SandboxFacts {
  kind: SandboxKind;
  repo: string;
  cwd: string;
  /** The worker's uid: root runs the sandbox as an unprivileged uid. */
  uid: number;
  gid: number;
  /** System folders that exist: bound read-only (a link, such as /bin on merged /usr, is recreated as the link). */
  system: { path: string; linkTo: string | null }[];
  /** Secret files and folders inside the system folders (/etc/shadow, /etc/ssh, ...) that exist: hidden. */
  secrets: PathFact[];
  /** The HOME the agent sees (the worker's HOME path) and the folder Vigil owns that is mounted there, writable. */
  home: string;
  homeSource: string;
  /** Read-only extras that Vigil itself chose (the Node bridge and its interpreter): refused, as any extra, when inside a path of `denied`. */
  vigilReadable: PathFact[];
  /**
   * The Go bridge's binary (sandbox-bridge-choice.ts), shown read-only at SANDBOX_BRIDGE_PATH and
   * nowhere else: the one file of a never-shown path the sandbox may show (an installed package
   * builds it into VIGIL_HOME/tools), and only that file, never its folder or what lies beside it.
   * A folder is refused. Null or absent: the Node bridge, or no network.
   */
  bridgeBinary?: PathFact | null;
  /** The call's own files (its prompt and evidence read-only, what its CLI writes beside the prompt writable), each at `dest` inside. */
  callFiles: { src: string; dest: string; writable: boolean }[];
  /** Read-only extras derived from the call (PATH folders, the agent's program, files its argv names): dropped when denied. */
  readable: PathFact[];
  /** Writable extras the worker's operator named (VIGIL_SANDBOX_WRITABLE): dropped when denied. */
  writable: PathFact[];
  /** What must never be visible and exists: VIGIL_HOME, the run secret, the codec key, the worker's certificates, the supervisor's sockets... */
  denied: PathFact[];
  /** Folders of the repository's `.vigil/` that exist: runs, handoffs, signals. */
  vigilDirs: { runs: boolean; handoffs: boolean; signals: boolean; root: boolean };
  /**
   * A reviewing call's own signals folder (a folder Vigil owns), mounted writable at
   * `.vigil/signals` in place of the repository's: the cost report it writes there (`USAGE`) reaches
   * Vigil from it, and nothing it writes there (a completion claim, a request for a person)
   * reaches the repository's signals. Null: the repository's signals, read-only for every role
   * but the builder.
   */
  signalsSource?: string | null;
  /**
   * The repository's git files that, written, would make git run code or read another
   * repository's configuration (activities/sandbox.ts, `gitControlPaths`): that exist.
   */
  gitControl: PathFact[];
  /**
   * The repository's own `.git` folder (null: none, or a worktree's `.git` file), mounted on
   * itself so that it cannot be moved away or replaced; what is inside stays as the repository's
   * mount makes it (writable for the builder, but for `gitControl`).
   */
  gitFolder?: PathFact | null;
  /**
   * A repository that is a git worktree (a stream's, `.git` a file naming its git folder): the
   * repository's common git folder that holds it (objects, refs, the worktree's HEAD and index),
   * mounted as the repository is (writable or read-only by role) so git works inside; its control
   * files are in `gitControl`. Null: `.git` is a folder of the repository's own.
   */
  gitCommonDir?: PathFact | null;
  /** The network: a folder holding the proxy's socket, mounted at SANDBOX_PROXY_DIR; null: no network at all. */
  proxyDir: string | null;
}

/** Where the call's files that live outside the repository (a hidden role's prompt) appear inside the sandbox. */
export const SANDBOX_FILES_DIR = '/run/vigil-files';
/** Where the Go bridge's binary appears inside the sandbox (the sandboxed command line starts it there). */
export const SANDBOX_BRIDGE_PATH = '/run/vigil-bridge/sandbox-bridge';
/** Where the proxy's socket folder appears inside the sandbox. */
export const SANDBOX_PROXY_DIR = '/run/vigil-proxy';
export const SANDBOX_PROXY_SOCKET = `${SANDBOX_PROXY_DIR}/proxy.sock`;
/** The uid (and gid) a root worker's sandbox runs as. */
export const SANDBOX_ROOT_UID = 1000;

interface Mount {
  op: '--ro-bind' | '--bind' | '--tmpfs' | '--symlink' | '--mask-file';
  src: string;
  dest: string;
}

export interface SandboxPlan {
  /** bubblewrap's arguments, up to and including `--`. */
  args: string[];
  /** Paths asked for that were not mounted, and why. */
  refused: { path: string; why: string }[];
  /** Whether the repository's tree is writable. */
  repoWritable: boolean;
}

const depth = (p: string): number => (p === '/' ? 0 : p.split('/').length - 1);

/**
 * bubblewrap's command line for `facts`: new user, pid, ipc, uts and network namespaces (the
 * network is loopback only; the proxy's socket is the one way out), all capabilities dropped, a
 * fresh /proc, /dev and /tmp, the system read-only with its secrets hidden, HOME from Vigil's
 * folder, the repository writable or read-only by role (Vigil's records in `.vigil/` and the git
 * files Vigil's own commands would run read-only for every role), and nothing of `denied`.
 */
export function sandboxPlan(facts: SandboxFacts): SandboxPlan {
  const refused: SandboxPlan['refused'] = [];
  const mounts: Mount[] = [];
  // A mount that is or lies inside a denied path is refused; a denied path inside a mount is hidden (below).
  const isDenied = (p: string): string | null => facts.denied.find((d) => isWithin(p, d.path))?.path ?? null;
  for (const s of facts.system)
    mounts.push(s.linkTo !== null ? { op: '--symlink', src: s.linkTo, dest: s.path } : { op: '--ro-bind', src: s.path, dest: s.path });
  mounts.push({ op: '--bind', src: facts.homeSource, dest: facts.home });
  // checked: an extra the call or the operator named (refused where it holds HOME too); 'denied':
  // one Vigil chose, refused only inside a never-shown path.
  const extra = (p: PathFact, op: Mount['op'], checked: boolean | 'denied'): void => {
    if (p.path === '/' || !path.isAbsolute(p.path)) return void refused.push({ path: p.path, why: 'not an absolute path below /' });
    const hit = checked ? isDenied(p.path) : null;
    if (hit !== null) return void refused.push({ path: p.path, why: `it is or lies inside ${hit}, which the sandbox never shows` });
    if (checked === true && isWithin(facts.home, p.path))
      return void refused.push({ path: p.path, why: `it holds HOME (${facts.home}), whose files the sandbox replaces with its own` });
    if (isWithin(p.path, facts.repo)) return; // the repository's own mount decides
    if (op === '--ro-bind' && facts.system.some((s) => s.linkTo === null && isWithin(p.path, s.path))) return; // already read-only
    mounts.push({ op, src: p.path, dest: p.path });
  };
  for (const p of facts.vigilReadable) extra(p, '--ro-bind', 'denied');
  // The Go bridge: the exception to `denied`, one file at a path of the sandbox's own.
  const bridge = facts.bridgeBinary ?? null;
  if (bridge !== null) {
    if (bridge.dir || !path.isAbsolute(bridge.path))
      refused.push({ path: bridge.path, why: 'the bridge is shown only as a single file, by its absolute path' });
    else mounts.push({ op: '--ro-bind', src: bridge.path, dest: SANDBOX_BRIDGE_PATH });
  }
  for (const p of facts.readable) extra(p, '--ro-bind', true);
  for (const p of facts.writable) extra(p, '--bind', true);
  if (facts.proxyDir !== null) mounts.push({ op: '--bind', src: facts.proxyDir, dest: SANDBOX_PROXY_DIR });
  for (const f of facts.callFiles) mounts.push({ op: f.writable ? '--bind' : '--ro-bind', src: f.src, dest: f.dest });

  const repoWritable = facts.kind === 'builder' || facts.kind === 'tests';
  if (facts.gitCommonDir) extra(facts.gitCommonDir, repoWritable ? '--bind' : '--ro-bind', true);
  mounts.push({ op: repoWritable ? '--bind' : '--ro-bind', src: facts.repo, dest: facts.repo });
  const gitFolder = facts.gitFolder ?? null;
  if (gitFolder?.dir && isWithin(gitFolder.path, facts.repo))
    mounts.push({ op: repoWritable ? '--bind' : '--ro-bind', src: gitFolder.path, dest: gitFolder.path });
  const vigil = path.join(facts.repo, '.vigil');
  // `.vigil/` is not part of the tree: a reviewing agent may keep its own notes there (a scripted
  // agent its counters), but Vigil's records (runs: prompts, logs, call state; handoffs) are
  // read-only for every role, and the repository's signals (a completion claim) for every role but
  // the builder; a reviewing call writes its cost report in a signals folder of its own.
  if (facts.vigilDirs.root && facts.kind === 'reviewer') mounts.push({ op: '--bind', src: vigil, dest: vigil });
  if (facts.vigilDirs.runs) mounts.push({ op: '--ro-bind', src: path.join(vigil, 'runs'), dest: path.join(vigil, 'runs') });
  if (facts.vigilDirs.handoffs) mounts.push({ op: '--ro-bind', src: path.join(vigil, 'handoffs'), dest: path.join(vigil, 'handoffs') });
  if (facts.vigilDirs.signals && facts.kind === 'reviewer' && facts.signalsSource)
    mounts.push({ op: '--bind', src: facts.signalsSource, dest: path.join(vigil, 'signals') });
  else if (facts.vigilDirs.signals && facts.kind !== 'builder')
    mounts.push({ op: '--ro-bind', src: path.join(vigil, 'signals'), dest: path.join(vigil, 'signals') });
  if (repoWritable) for (const g of facts.gitControl) mounts.push({ op: '--ro-bind', src: g.path, dest: g.path });

  // Secrets: the system's, and whatever denied path a mount's source holds.
  const hide: PathFact[] = [...facts.secrets];
  for (const d of facts.denied) {
    if (mounts.some((m) => (m.op === '--bind' || m.op === '--ro-bind') && m.src === m.dest && d.path !== m.src && isWithin(d.path, m.src)))
      hide.push(d);
  }
  for (const h of hide)
    mounts.push(h.dir ? { op: '--tmpfs', src: '', dest: h.path } : { op: '--mask-file', src: '/dev/null', dest: h.path });

  // Parents before children; at the same path, the order above (later mounts cover earlier ones).
  const ordered = mounts
    .map((m, i) => ({ m, i }))
    .sort((a, b) => depth(a.m.dest) - depth(b.m.dest) || a.i - b.i)
    .map((x) => x.m);
  const uid = facts.uid === 0 ? SANDBOX_ROOT_UID : facts.uid;
  const gid = facts.uid === 0 ? SANDBOX_ROOT_UID : facts.gid;
  const args = [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-net',
    '--unshare-cgroup-try',
    '--uid',
    String(uid),
    '--gid',
    String(gid),
    '--hostname',
    'vigil-sandbox',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/var/tmp',
  ];
  for (const m of ordered) {
    if (m.op === '--tmpfs') args.push('--tmpfs', m.dest);
    else if (m.op === '--mask-file') args.push('--ro-bind', '/dev/null', m.dest);
    else args.push(m.op, m.src, m.dest);
  }
  // The sandbox's own root (a tmpfs holding the mount points) read-only: outside its mounts, a
  // write fails (EROFS) instead of landing in a folder nobody sees.
  args.push('--remount-ro', '/', '--chdir', facts.cwd, '--');
  return { args, refused, repoWritable };
}

/** The environment a sandboxed process gets on top of its own: its own tmp, PWD, HOME, and the proxy when it has a network. */
export function sandboxEnv(opts: { cwd: string; home: string; proxyPort: number | null }): Record<string, string> {
  const env: Record<string, string> = { PWD: opts.cwd, HOME: opts.home, TMPDIR: '/tmp', TMP: '/tmp', TEMP: '/tmp' };
  if (opts.proxyPort !== null) {
    const url = `http://127.0.0.1:${opts.proxyPort}`;
    Object.assign(env, {
      HTTPS_PROXY: url,
      HTTP_PROXY: url,
      https_proxy: url,
      http_proxy: url,
      ALL_PROXY: url,
      all_proxy: url,
      NO_PROXY: '',
      no_proxy: '',
      NODE_USE_ENV_PROXY: '1',
    });
  }
  return env;
}

/**
 * The loopback ports the sandbox's bridge listens on inside the network namespace: the allowed
 * loopback endpoints (a local model server, reached as if directly) and the worker's own services
 * (Temporal frontend, event store, ...: a connection there is refused by the proxy and recorded).
 * The proxy's own port is chosen apart from them.
 */
export function bridgePorts(allow: readonly Endpoint[], watched: readonly number[]): { listen: number[]; proxyPort: number } {
  const listen = [...new Set([...allow.filter((e) => isLoopbackHost(e.host)).map((e) => e.port), ...watched])].sort((a, b) => a - b);
  let proxyPort = 3128;
  while (listen.includes(proxyPort)) proxyPort++;
  return { listen, proxyPort };
}

// A write to a read-only mount (EROFS), or a rename or replace of a mount point (EBUSY: `.git`, `.git/config`).
const ROFS = /read-only file system|\bEROFS\b|device or resource busy|\bEBUSY\b/i;
const EACCES = /permission denied|\bEACCES\b|operation not permitted|\bEPERM\b/i;

/**
 * The refused writes and accesses an output shows (the kernel tells only the process: its error
 * messages are what there is). The target is the first quoted path of the line, else what a
 * shell names (`cannot create X:`), else the line itself, shortened.
 */
export function deniedInOutput(text: string): SandboxDenial[] {
  const out: SandboxDenial[] = [];
  for (const line of text.split(/\r?\n/)) {
    const kind = ROFS.test(line) ? 'write' : EACCES.test(line) ? 'access' : null;
    if (kind === null) continue;
    const quoted = /['"`‘]([^'"`’]{1,300})['"`’]/.exec(line)?.[1];
    const shell = new RegExp(
      String.raw`(?:${[
        /cannot create|can't create|cannot open|can't open|cannot touch|cannot remove|cannot make directory/.source,
        /cannot move|could not write config file/.source,
      ].join('|')})\s+([^:]+?)(?: to [^:]+)?:`,
      'i',
    ).exec(line)?.[1];
    const target = (quoted ?? shell ?? line.trim()).trim().slice(0, 200);
    addDenial(out, { kind, target });
  }
  return out;
}
