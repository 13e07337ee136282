/**
 * The worker's toolchain inside the sandbox. Users install their tools in their own folders —
 * pyenv's shims and versions, nvm's node, volta, asdf, conda, rustup and cargo, Go, `~/.local` —
 * and put them on PATH. The sandbox replaces HOME with a folder of its own, so a PATH entry alone
 * shows a shim whose interpreter is missing (every test run exits 127). `toolchainPaths` names, for
 * each PATH folder, what its tools need beside it, read-only:
 *
 * - a `shims` folder: the install it shims for (its parent: pyenv's root with `versions/`, asdf's
 *   with `installs/`, rbenv's);
 * - a `bin` folder: its install prefix (nvm's `versions/node/vX`, conda, volta, `~/.cargo`,
 *   `/usr/local/go`), except HOME itself, `~/.local` (only its `bin` and `lib`, where pip's user
 *   installs live), and a Go workspace (only its `bin` and the module cache);
 * - rustup's toolchains when cargo's `bin` is on PATH; pyenv's, volta's and asdf's roots when their
 *   variables name them.
 *
 * Never the credentials beside them: `credentialPaths` lists what the sandbox hides even inside
 * a folder it shows (SSH, GPG and cloud keys, registry tokens, git credentials), added to the paths
 * it never shows (activities/sandbox.ts `deniedPaths`). The agent CLIs' own sign-in files are not
 * shown either: HOME is the sandbox's, with a copy of the one provider's the call needs.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

const isDir = (p: string): boolean => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** Folders the system mounts already show (their prefixes need nothing more). */
const SYSTEM_PREFIXES = ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/etc', '/opt'];

export interface ToolchainPath {
  path: string;
  /** Why it is shown (for `vigil doctor`). */
  why: string;
}

/** What the tools on `env.PATH` need, read-only (see the file comment); existing folders only, no duplicates. */
export function toolchainPaths(env: Readonly<Record<string, string | undefined>>, home: string): ToolchainPath[] {
  const out = new Map<string, string>();
  const add = (p: string | undefined, why: string): void => {
    if (!p || !path.isAbsolute(p) || p === '/' || p === home || out.has(p) || !isDir(p)) return;
    if (SYSTEM_PREFIXES.some((s) => p === s || p.startsWith(`${s}/`)) && !p.startsWith('/opt/')) return;
    out.set(p, why);
  };
  const gopath = (env.GOPATH ?? '').split(':')[0] || path.join(home, 'go');
  const local = path.join(home, '.local');
  for (const dir of (env.PATH ?? '').split(':')) {
    if (!dir || !path.isAbsolute(dir) || !isDir(dir)) continue;
    const parent = path.dirname(dir);
    const base = path.basename(dir);
    if (base === 'shims' && parent !== home) add(parent, `the install ${dir} shims for`);
    else if (base === 'bin' && parent === local) {
      add(dir, 'on PATH');
      add(path.join(local, 'lib'), "pip's user installs, for ~/.local/bin");
    } else if (base === 'bin' && parent === gopath) {
      add(dir, 'on PATH');
      add(path.join(gopath, 'pkg', 'mod'), "Go's module cache");
    } else if (base === 'bin' && parent !== home) add(parent, `the install prefix of ${dir}`);
  }
  if (out.has(path.join(home, '.cargo')) || (env.PATH ?? '').includes(path.join(home, '.cargo', 'bin')))
    add(env.RUSTUP_HOME || path.join(home, '.rustup'), "rustup's toolchains, for cargo's bin");
  add(env.PYENV_ROOT, 'PYENV_ROOT');
  add(env.VOLTA_HOME, 'VOLTA_HOME');
  add(env.ASDF_DATA_DIR, 'ASDF_DATA_DIR');
  add(env.NVM_BIN ? path.dirname(env.NVM_BIN) : undefined, "nvm's current node");
  return [...out].map(([p, why]) => ({ path: p, why }));
}

/** Credentials the sandbox never shows, even inside a folder it does (relative to HOME, and named by the environment). */
export const HOME_CREDENTIALS: readonly string[] = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.gem/credentials',
  '.config/gh',
  '.config/gcloud',
  '.config/hub',
  '.config/git/credentials',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.password-store',
  '.local/share/keyrings',
  '.terraform.d/credentials.tfrc.json',
];

/** The credential paths of `home` and the environment (existing ones only). */
export function credentialPaths(env: Readonly<Record<string, string | undefined>>, home: string): string[] {
  const named = [
    env.AWS_SHARED_CREDENTIALS_FILE,
    env.GOOGLE_APPLICATION_CREDENTIALS,
    env.KUBECONFIG,
    env.DOCKER_CONFIG,
    env.NPM_CONFIG_USERCONFIG,
  ];
  return [...HOME_CREDENTIALS.map((rel) => path.join(home, rel)), ...named.filter((p): p is string => !!p && path.isAbsolute(p))].filter(
    (p) => existsSync(p),
  );
}
