/**
 * The build gate: the project builds as it will ship, not only its tests pass (a type error in a
 * file no test imports, a module that does not compile). The command is the knob `buildCommand`,
 * else detected from the repository's root, first match wins:
 *
 * | the repository has | the build |
 * |---|---|
 * | `package.json` with a `build` script | `npm run build` |
 * | `tsconfig.json` and typescript in its `node_modules` | `tsc -p tsconfig.json --noEmit` |
 * | `go.mod` | `go build ./...` |
 * | `Cargo.toml` | `cargo build --offline` |
 * | `pyproject.toml`, `setup.py` or `setup.cfg` | `python3 -m compileall -q .` |
 *
 * Python: `python -m build` makes an isolated build environment, which fetches the build backend
 * from the registries (the gate's sandbox has no network) and costs a minute or more a pass;
 * `pip install --no-deps --no-build-isolation .` needs the backend already installed in the
 * worker's interpreter and installs into it (the sandbox keeps it read-only). Both would make the
 * gate red for reasons of the machine, not of the code. `compileall` compiles every module of
 * the project in seconds and catches what makes a package fail to import (a syntax error in a
 * module the tests never load); a project that wants its packaging checked sets `buildCommand`.
 *
 * The build runs in the gate sandbox (the repository read-only, no network) in a scratch copy of
 * the working tree (its `node_modules`, `.git` and virtualenvs linked, not copied), so a build's
 * output never lands in the tree the gates judge. Its whole log goes to the run's folder
 * (`gates/build-NNNN.log`), its tail into the finding.
 *
 * Verdicts, as honest as the tests': exit 0 passes; any other exit fails; a command that cannot
 * start (exit 127, not installed), is killed or overruns the gate's budget fails too (a build
 * nobody saw finish is never green). No build configured or detected passes as not applicable,
 * and says so ("no build detected"); the run's evidence does not count it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { FindingInput, GateResultInput } from '../../schemas/gates.js';
import { buildOff } from '../../rules/gates.js';
import { describeWriteError, isStorageError, writePrivateFile } from '../../lib/safe-files.js';
import { runTool, type ToolRun, type ToolSandbox } from '../../lib/gates/tools.js';
import { findBinary } from '../../lib/find-binary.js';

export type BuildEcosystem = 'command' | 'npm' | 'typescript' | 'go' | 'rust' | 'python';

/** The build to run: `argv` runs in the scratch copy (`argv[0]` an absolute path; null when the tool is not installed). */
export interface BuildPlan {
  ecosystem: BuildEcosystem;
  /** The command as people read it (`npm run build`). */
  label: string;
  /** The program and its arguments; null when the tool the repository needs is not installed here. */
  argv: string[] | null;
  /** What to install, when `argv` is null. */
  missing: string | null;
  env: Record<string, string>;
}

/** What the gate found to do: a build, nothing (not applicable, and why), or off by the knob. */
export type BuildDetection = { kind: 'build'; plan: BuildPlan } | { kind: 'none'; reason: string } | { kind: 'off' };

/** Short: it travels in every gate pass's result (the cases it looked for are in the docs). */
export const NO_BUILD_REASON = 'not applicable: no build detected (set buildCommand to name one)';

/** Folders `compileall` leaves alone: version control, dependencies and virtualenvs. */
const PY_SKIP = String.raw`(^|/)(\.git|\.vigil|node_modules|\.venv|venv|env|\.tox|\.nox|site-packages|__pypackages__)(/|$)`;

const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** The `build` script of the repository's package.json, or null (none, unreadable, or not a string). */
export function npmBuildScript(repoPath: string): string | null {
  const file = path.join(repoPath, 'package.json');
  if (!isFile(file) || statSync(file).size > 4 * 1024 * 1024) return null;
  try {
    const pkg: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof pkg !== 'object' || pkg === null) return null;
    const scripts = (pkg as { scripts?: unknown }).scripts;
    if (typeof scripts !== 'object' || scripts === null) return null;
    const build = (scripts as Record<string, unknown>).build;
    return typeof build === 'string' && build.trim() !== '' ? build : null;
  } catch {
    return null;
  }
}

/**
 * What the build gate runs for `repoPath` (the table of the file comment). `command`: the knob
 * (empty: detect; `off`/`none`: off). `pathEnv`: the PATH searched for the tools (default: the
 * worker's); a repository never supplies npm, go, cargo or python (only its own typescript).
 */
export function detectBuild(repoPath: string, command: string, pathEnv: string | undefined = process.env.PATH): BuildDetection {
  if (buildOff(command)) return { kind: 'off' };
  const find = (name: string): string | null => findBinary(name, undefined, pathEnv);
  const plan = (
    ecosystem: BuildEcosystem,
    label: string,
    tool: string | null,
    args: string[],
    missing: string,
    env = {},
  ): BuildDetection => ({
    kind: 'build',
    plan: { ecosystem, label, argv: tool ? [tool, ...args] : null, missing: tool ? null : missing, env },
  });
  if (command.trim() !== '') return plan('command', command.trim(), find('sh'), ['-c', command], 'sh: not installed');
  if (npmBuildScript(repoPath) !== null)
    return plan('npm', 'npm run build', find('npm'), ['run', 'build'], 'npm: not installed (install Node.js with npm)');
  const tsc = path.join(repoPath, 'node_modules', '.bin', 'tsc');
  if (isFile(path.join(repoPath, 'tsconfig.json')) && existsSync(tsc))
    // The repository's own typescript (linked into the copy), the version the project pinned.
    return plan('typescript', 'tsc -p tsconfig.json --noEmit', 'node_modules/.bin/tsc', ['-p', 'tsconfig.json', '--noEmit'], '');
  if (isFile(path.join(repoPath, 'go.mod')))
    return plan('go', 'go build ./...', find('go'), ['build', './...'], 'go: not installed (https://go.dev/dl/)', {
      GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'local',
    });
  if (isFile(path.join(repoPath, 'Cargo.toml')))
    // Offline: the gate has no network; the dependencies come from the worker's cargo cache.
    return plan(
      'rust',
      'cargo build --offline',
      find('cargo'),
      ['build', '--offline', '--quiet'],
      'cargo: not installed (https://rustup.rs)',
      {
        CARGO_TERM_COLOR: 'never',
      },
    );
  if (['pyproject.toml', 'setup.py', 'setup.cfg'].some((f) => isFile(path.join(repoPath, f)))) {
    const py = find('python3') ?? find('python');
    return plan('python', 'python3 -m compileall -q .', py, ['-m', 'compileall', '-q', '-x', PY_SKIP, '.'], 'python3: not installed');
  }
  return { kind: 'none', reason: NO_BUILD_REASON };
}

/**
 * The shell script that copies the working tree to a scratch folder and runs the build there
 * (its arguments: the program and its own). The first line of output names the folder, so the
 * log can be read with the repository's paths. Large or shared folders are linked, not copied.
 */
export const SCRATCH_SCRIPT = [
  'exec 2>&1',
  'src=$PWD',
  'dst=$(mktemp -d "${TMPDIR:-/tmp}/vigil-build-XXXXXX") || { echo "vigil-build: the working tree could not be copied: no scratch folder"; exit 125; }',
  `trap 'rm -rf "$dst"' EXIT`,
  'echo "vigil-build-copy: $dst"',
  'tar -C "$src" --exclude=./node_modules --exclude=./.git --exclude=./.vigil --exclude=./.venv --exclude=./venv ' +
    '--exclude=./target -cf - . | tar -C "$dst" -xf - || { echo "vigil-build: the working tree could not be copied to $dst"; ' +
    'exit 125; }',
  'for d in node_modules .git .venv venv; do [ -e "$src/$d" ] && ln -s "$src/$d" "$dst/$d"; done',
  'cd "$dst" || { echo "vigil-build: the working tree could not be copied to $dst"; exit 125; }',
  // Cargo builds in the sandbox's home (kept between the run's passes), not in the copy made anew each time.
  'CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/vigil-build/cargo-target}" "$@"',
].join('\n');

const MARKER = /^vigil-build-copy: (\S+)\n/;

/** The log as read back: the copy's folder named as the repository's root (`./`), the marker line gone. */
export function readableLog(out: string): string {
  const m = MARKER.exec(out);
  if (!m?.[1]) return out;
  return out.slice(m[0].length).split(`${m[1]}/`).join('').split(m[1]).join('.');
}

/** The last lines of a log, at most `max` characters, on one line each joined by ` | ` (for a finding). */
export function logTail(log: string, max = 460): string {
  const lines = log
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter((l) => l !== '');
  const out: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0 && out.length < 12; i--) {
    const l = (lines[i] as string).slice(0, 200);
    if (size + l.length + 3 > max) break;
    out.unshift(l);
    size += l.length + 3;
  }
  return out.join(' | ');
}

/** Located errors in a build log (tsc's `file(l,c): error`, and `file:l:c: message` of go, cargo, gcc), at most `max`. */
export function locatedErrors(log: string, max = 15): FindingInput[] {
  const out: FindingInput[] = [];
  for (const line of log.split('\n')) {
    if (out.length >= max) break;
    const m =
      /^([^\s:()]+\.[A-Za-z0-9]+)\((\d+),\d+\): (error .*)$/.exec(line.trim()) ??
      /^(?:\.\/)?([^\s:()]+\.[A-Za-z0-9]+):(\d+):\d+: (.*)$/.exec(line.trim());
    if (!m?.[1] || m[1].startsWith('/') || m[1].includes('..')) continue;
    out.push({ gate: 'build', severity: 'high', file: m[1].replace(/^\.\//, ''), line: Number(m[2]), message: (m[3] ?? '').slice(0, 300) });
  }
  return out;
}

/**
 * The verdict of a finished build run (pure): what the rules of the file comment say of it.
 * `logNote`: where the log is (or why it is not).
 */
export function buildVerdict(plan: BuildPlan, r: ToolRun, log: string, budgetSeconds: number, logNote: string): GateResultInput {
  const cmd = `\`${plan.label.slice(0, 120)}\``;
  const fail = (reason: string, extra: FindingInput[] = []): GateResultInput => {
    const tail = logTail(log);
    const findings: FindingInput[] = [
      ...extra,
      {
        gate: 'build',
        severity: 'high',
        file: null,
        line: null,
        message: `${reason}; ${logNote}${tail ? `; log tail: ${tail}` : ''}`.slice(0, 500),
      },
    ];
    return { gate: 'build', verdict: 'fail', reason: reason.slice(0, 500), findings, findingCount: findings.length };
  };
  if (r.spawnError) return fail(`the build ${cmd} could not start (${r.spawnError}); install what it needs or set buildCommand`);
  if (r.timedOut) return fail(`the build ${cmd} did not finish within ${budgetSeconds}s (gateTimeoutSeconds)`);
  if (r.exitCode === null) return fail(`the build ${cmd} was killed before it finished`);
  if (r.exitCode === 127)
    return fail(`the build ${cmd} could not start (exit 127: a command it runs is not installed); install it or set buildCommand`);
  if (r.exitCode === 125 && log.includes('vigil-build: the working tree could not be copied'))
    return fail(`the build ${cmd} could not start: the working tree could not be copied to a scratch folder`);
  if (r.exitCode !== 0) {
    const located = locatedErrors(log);
    return fail(
      `the build ${cmd} failed (exit ` +
        `${r.exitCode}${located.length ? `, ${located.length}${located.length === 15 ? '+' : ''} located error${located.length === 1 ? '' : 's'}` : ''})`,
      located,
    );
  }
  return { gate: 'build', verdict: 'pass', reason: `builds (${cmd} exited 0)` };
}

export interface BuildGateOptions {
  repoPath: string;
  /** The knob buildCommand (empty: detect). */
  command: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Where the whole log goes (the run's folder). */
  logPath: string;
  sandbox?: ToolSandbox;
  /** The PATH searched for tools and given to them (default: the worker's). */
  pathEnv?: string;
}

/** The build gate (see the file comment). A cancellation throws (it is not a verdict). */
export async function buildGate(opts: BuildGateOptions): Promise<GateResultInput> {
  const found = detectBuild(opts.repoPath, opts.command, opts.pathEnv ?? process.env.PATH);
  if (found.kind === 'off') return { gate: 'build', verdict: 'pass', reason: 'not applicable: the build gate is off (buildCommand)' };
  if (found.kind === 'none') return { gate: 'build', verdict: 'pass', reason: found.reason };
  const { plan } = found;
  const budgetSeconds = Math.round(opts.timeoutMs / 1000);
  if (plan.argv === null) {
    const reason = `the build ${plan.label} cannot run: ${plan.missing ?? 'not installed'}; install it on the worker or set buildCommand`;
    return {
      gate: 'build',
      verdict: 'fail',
      reason,
      missingTools: plan.missing ? [plan.missing] : [],
      findings: [{ gate: 'build', severity: 'high', file: null, line: null, message: reason }],
      findingCount: 1,
    };
  }
  const sh = findBinary('sh', undefined, opts.pathEnv ?? process.env.PATH) ?? '/bin/sh';
  const env: Record<string, string> = { ...plan.env };
  if (opts.pathEnv !== undefined) env.PATH = opts.pathEnv;
  const r = await runTool(sh, ['-c', SCRATCH_SCRIPT, 'vigil-build', ...plan.argv], {
    cwd: opts.repoPath,
    timeoutMs: opts.timeoutMs,
    env,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
  });
  if (r.aborted || opts.signal?.aborted) {
    const why: unknown = opts.signal?.reason;
    throw why instanceof Error ? why : new Error('build gate cancelled');
  }
  const log = readableLog(`${r.stdout}${r.stderr ? `\n${r.stderr}` : ''}`);
  let logNote = `log: ${opts.logPath}`;
  try {
    writePrivateFile(opts.logPath, `$ ${plan.label}\n${log}${r.truncated ? '\n[output cut at 1 MiB]\n' : ''}`);
  } catch (err) {
    if (!isStorageError(err)) throw err;
    logNote = describeWriteError('log not written', err);
  }
  return buildVerdict(plan, r, log, budgetSeconds, logNote);
}
