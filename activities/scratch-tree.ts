/**
 * A tree of the repository run in a scratch folder of the run's private one: the tree exported
 * with Vigil's safe git (a scratch index of its own, `checkout-index`: no hook, filter or driver of
 * the repository runs), the repository's dependency folders linked (shown read-only in the
 * sandbox), and a test runner run there with its per-test report asked for, sandboxed like the
 * run's tests (the scratch tree its repository). The Wall's acceptance runs (activities/acceptance.ts)
 * and test provenance's run on the start code (activities/gates/test-provenance.ts) use it.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import type { SandboxMode } from '../schemas/sandbox.js';
import { workerStoreUrl } from '../lib/event-store.js';
import { reportSetup, type ReportSetup } from '../lib/gates/test-report.js';
import { git } from './git.js';
import { runProcess, type ProcessResult } from './process.js';
import { prepareSandbox, type PreparedSandbox } from './sandbox.js';
import { inheritedEnv } from '../lib/child-env.js';

/** The repository's dependency folders, linked into the scratch tree when present (never part of a tree). */
const DEPENDENCY_DIRS = ['node_modules', '.venv', 'venv'];

/** A scratch folder left by a worker that died while using it is removed by the next one after this long. */
const STALE_SCRATCH_MS = 24 * 3600_000;

/**
 * A folder of its own under `parent` for one use (its name: `label`, then a nonce), created empty.
 * Two uses at once never share one: an activity attempt that timed out may still be running while
 * its retry starts, and each removes only its own folder when done (`release`). What a killed
 * worker left behind is removed once it is a day old.
 */
export function ownScratch(parent: string, label: string, make: (dir: string) => void): { dir: string; release: () => void } {
  if (existsSync(parent))
    for (const name of readdirSync(parent)) {
      const p = path.join(parent, name);
      try {
        if (Date.now() - statSync(p).mtimeMs > STALE_SCRATCH_MS) rmSync(p, { recursive: true, force: true });
      } catch {
        /* gone already */
      }
    }
  const dir = path.join(parent, `${label}-${randomUUID().slice(0, 8)}`);
  make(dir);
  return { dir, release: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The tree `treeHash` of the repository, written into `into` by Vigil's safe git (a scratch index of its own). */
export async function exportTree(repoPath: string, treeHash: string, into: string): Promise<void> {
  const index = path.join(path.dirname(into), `${path.basename(into)}.index`);
  const env = { GIT_INDEX_FILE: index };
  try {
    await git(repoPath, ['read-tree', treeHash], env);
    await git(repoPath, ['checkout-index', '-a', '-f', `--prefix=${into}${path.sep}`], env);
  } finally {
    rmSync(index, { force: true });
  }
}

/** The repository's dependency folders, linked into the scratch tree; their real paths, for the sandbox to show read-only. */
export function linkDependencies(repoPath: string, scratch: string): string[] {
  const shown: string[] = [];
  for (const d of DEPENDENCY_DIRS) {
    const from = path.join(repoPath, d);
    const to = path.join(scratch, d);
    try {
      if (!existsSync(from) || !lstatSync(realpathSync(from)).isDirectory()) continue;
      // A link the tree itself holds is replaced by the repository's folder; a folder it holds (vendored) stays.
      if (isLink(to)) rmSync(to, { force: true });
      else if (existsSync(to)) continue;
      const real = realpathSync(from);
      symlinkSync(real, to);
      shown.push(real);
    } catch {
      /* not linkable: the runner goes without it */
    }
  }
  return shown;
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

export interface ScratchRun {
  runId: string;
  scratch: string;
  /** Host folders the sandbox shows read-only (the linked dependency folders). */
  readable: string[];
  runner: string;
  /** The command line (the runner's report arguments are added to it). */
  line: string;
  /** An empty folder for the runner's report. */
  reportDir: string;
  logPath: string;
  pidFile: string;
  header: string;
  sandbox?: SandboxMode | undefined;
  registries?: boolean | undefined;
  timeoutMs: number;
}

/** Runs `line` in the scratch tree, sandboxed as the run's tests are: what ran, the report's setup, and the sandbox it ran in. */
export async function runInScratch(o: ScratchRun): Promise<{ setup: ReportSetup; proc: ProcessResult; sandbox: PreparedSandbox }> {
  const env = inheritedEnv();
  const setup = reportSetup(o.runner, o.line, o.reportDir, env);
  const sandbox = prepareSandbox({
    kind: 'tests',
    runId: o.runId,
    repoPath: o.scratch,
    cwd: o.scratch,
    file: '/bin/sh',
    args: ['-c', setup.command],
    env: { ...env, ...setup.env, CI: env.CI ?? 'true' },
    reportDir: o.reportDir,
    readable: o.readable,
    provider: null,
    runMode: o.sandbox,
    registries: o.registries,
    storeUrl: workerStoreUrl().url,
  });
  const proc = await runProcess({
    file: sandbox.file,
    args: sandbox.args,
    cwd: o.scratch,
    env: sandbox.env,
    sandboxProxy: sandbox.proxy,
    ...(sandbox.pidNamespace ? { ownPidNamespace: true } : {}),
    stdin: '',
    timeoutMs: o.timeoutMs,
    logPath: o.logPath,
    pidFile: o.pidFile,
    header: o.header,
  });
  return { setup, proc, sandbox };
}
