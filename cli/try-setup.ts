/**
 * What `vigil try` prepares before its run starts, and the checks of the person's checkout: the
 * repository (a git work tree with a commit), a scratch git worktree of its HEAD under
 * `$VIGIL_HOME/try/<run>/repo` where the run works (so the person's branch, index and files stay
 * as they are), the rehearsal's PRD beside it and the scripted agent's scenario, both filled in
 * from examples/try/. The scenario lies in the worktree's `.vigil/try/` (outside the tree, like
 * all of `.vigil/`): the sandbox hides the rest of VIGIL_HOME from the agent it runs.
 *
 * Git runs without optional locks (a status never rewrites the index) and with the settings
 * Vigil's own git always has (lib/git-env.ts): no hooks, no fsmonitor, no submodule
 * recursion, no signing.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseScenario } from '../schemas/scenario.js';
import { readmeCandidates } from '../rules/readme.js';
import { runBranch } from '../rules/delivery.js';
import { configEnv, FIXED_SETTINGS } from '../lib/git-env.js';
import { CliError, EXIT } from './errors.js';
import type { Prd } from './prd.js';
import { checkRepo } from './runs.js';

/** git in `cwd` with Vigil's fixed settings (no hooks, no fsmonitor, ...) and no optional locks; stdout as text. */
export function gitOut(cwd: string, args: string[]): string {
  return execFileSync('git', ['--no-optional-locks', ...args], {
    cwd,
    env: { ...process.env, ...configEnv([...FIXED_SETTINGS, ['core.hooksPath', '/dev/null']]) },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
}

function gitOk(cwd: string, args: string[]): string | null {
  try {
    return gitOut(cwd, args).trim();
  } catch {
    return null;
  }
}

/** The person's checkout as `vigil try` found it: what must be the same afterwards. */
export interface Checkout {
  /** The repository's top-level folder. */
  top: string;
  head: string;
  /** The current branch's short name, or null when HEAD is detached. */
  branch: string | null;
  /** sha256 of `git ls-files --stage` (the index) and of `git status --porcelain` (the working tree against it). */
  index: string;
  status: string;
  /** Uncommitted changes (lines of `git status --porcelain`): not part of the rehearsal, which starts from HEAD. */
  changes: number;
}

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Reads the checkout at `dir` (any folder inside it); bad input is a CliError that says what to do. */
export function readCheckout(dir: string): Checkout {
  const top = gitOut(checkRepo(dir), ['rev-parse', '--show-toplevel']).trim();
  const head = gitOk(top, ['rev-parse', '--verify', '-q', 'HEAD^{commit}']);
  if (!head)
    throw new CliError(
      `${top} has no commit yet: vigil try rehearses a run on a scratch worktree of your HEAD. ` +
        'Commit something first (`git commit --allow-empty -m start` will do) and run it again.',
      EXIT.usage,
    );
  const status = gitOut(top, ['status', '--porcelain', '--untracked-files=all']);
  return {
    top,
    head,
    branch: gitOk(top, ['symbolic-ref', '-q', '--short', 'HEAD']) || null,
    index: sha(gitOut(top, ['ls-files', '--stage'])),
    status: sha(status),
    changes: status.split('\n').filter((l) => l.trim()).length,
  };
}

/** What differs between two readings of a checkout (empty: untouched). */
export function checkoutChanges(before: Checkout, after: Checkout): string[] {
  const out: string[] = [];
  if (after.branch !== before.branch)
    out.push(`the current branch is ${after.branch ?? 'a detached HEAD'}, was ${before.branch ?? 'a detached HEAD'}`);
  if (after.head !== before.head) out.push(`HEAD is ${after.head.slice(0, 12)}, was ${before.head.slice(0, 12)}`);
  if (after.index !== before.index) out.push('the index changed');
  if (after.status !== before.status) out.push('the working tree changed (git status differs)');
  return out;
}

/** `vigil-try-<repository folder>-<UTC time>`. */
export function tryRunId(top: string, now = new Date()): string {
  const slug =
    path
      .basename(top)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'repo';
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `vigil-try-${slug}-${stamp}`;
}

/** The rehearsal's files: the run's folder under VIGIL_HOME and what is in it. */
export interface TryPlan {
  runId: string;
  branch: string;
  dir: string;
  worktree: string;
  prdFile: string;
  scenarioFile: string;
  /** The repository had no README: the scripted builder writes one (the documentation gate asks for it). */
  readmeAdded: boolean;
}

export function planTry(home: string, checkout: Checkout, now = new Date()): TryPlan {
  const runId = tryRunId(checkout.top, now);
  const dir = path.join(home, 'try', runId);
  return {
    runId,
    branch: runBranch(runId),
    dir,
    worktree: path.join(dir, 'repo'),
    prdFile: path.join(dir, 'PRD.md'),
    // In the worktree's .vigil/ (not part of its tree): the sandbox shows the repository, not VIGIL_HOME.
    scenarioFile: path.join(dir, 'repo', '.vigil', 'try', 'scenario.json'),
    readmeAdded: false,
  };
}

/** Whether the tree has a root README the documentation gate accepts (one of its names, any case, with text). */
export function hasReadme(tree: string): boolean {
  return readmeCandidates(readdirSync(tree)).some((name) => {
    try {
      return readFileSync(path.join(tree, name), 'utf8').trim() !== '';
    } catch {
      return false;
    }
  });
}

/** The rehearsal's PRD text: examples/try/PRD.md with what it says about the person's own PRD. */
export function rehearsalPrd(template: string, own: Prd | null): string {
  const about = own
    ? `Your PRD, ${own.path} ("${own.title}"), reads as a PRD; a real agent builds it (the next steps say how).`
    : 'You gave no PRD of your own.';
  return template.replace('{{ABOUT}}', about);
}

/** The README the scripted builder writes where the repository has none. */
export function readmeStub(top: string): string {
  return (
    `# ${path.basename(top)}\n\n` +
    'This README was written by the scripted agent of `vigil try` (no LLM): the repository had none,\n' +
    "and Vigil's documentation gate asks for one (the knob `gateDocCoverage`). Replace it with what the\n" +
    'project is and how to use it.\n'
  );
}

/**
 * The scenario: examples/try/scenario.json with the branch, worktree and commit filled in (as JSON
 * strings), and, where the repository has no README, one written at iteration 2. Validated.
 */
export function rehearsalScenario(
  template: string,
  vars: { branch: string; worktree: string; head: string },
  readmeText: string | null,
): string {
  const fill = (text: string): string =>
    text
      .replaceAll('{{BRANCH}}', JSON.stringify(vars.branch).slice(1, -1))
      .replaceAll('{{WORKTREE}}', JSON.stringify(vars.worktree).slice(1, -1))
      .replaceAll('{{HEAD}}', JSON.stringify(vars.head.slice(0, 12)).slice(1, -1));
  const raw = JSON.parse(fill(template)) as { iterations: { writes?: Record<string, string>; output?: string }[] };
  const second = raw.iterations[1];
  if (readmeText !== null && second) {
    second.writes = { ...second.writes, 'README.md': readmeText };
    second.output = `${second.output ?? ''}The repository had no README, which the documentation gate asks for: wrote a README.md saying so.\n`;
  }
  parseScenario(raw);
  return `${JSON.stringify(raw, null, 2)}\n`;
}

/**
 * Makes the rehearsal's folder: the scratch worktree (detached at the person's HEAD), the PRD and
 * the scenario. Returns the plan with `readmeAdded` set.
 */
export function prepareTry(plan: TryPlan, checkout: Checkout, root: string, own: Prd | null): TryPlan {
  mkdirSync(plan.dir, { recursive: true });
  if (existsSync(plan.worktree)) throw new CliError(`${plan.worktree} exists already: run vigil try again in a second`, EXIT.usage);
  gitOut(checkout.top, ['worktree', 'add', '--detach', '-q', plan.worktree, checkout.head]);
  const readme = hasReadme(plan.worktree) ? null : readmeStub(checkout.top);
  writeFileSync(plan.prdFile, rehearsalPrd(readFileSync(path.join(root, 'examples/try/PRD.md'), 'utf8'), own));
  const template = readFileSync(path.join(root, 'examples/try/scenario.json'), 'utf8');
  mkdirSync(path.dirname(plan.scenarioFile), { recursive: true });
  writeFileSync(
    plan.scenarioFile,
    rehearsalScenario(template, { branch: plan.branch, worktree: plan.worktree, head: checkout.head }, readme),
  );
  return { ...plan, readmeAdded: readme !== null };
}

/** Removes the scratch worktree and its folder (a run that never started). */
export function discardTry(plan: TryPlan, checkout: Checkout): void {
  gitOk(checkout.top, ['worktree', 'remove', '--force', plan.worktree]);
  rmSync(plan.dir, { recursive: true, force: true });
  gitOk(checkout.top, ['worktree', 'prune']);
}
