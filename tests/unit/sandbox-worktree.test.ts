/**
 * A stream's repository is a git worktree: its `.git` is a file naming a folder inside the run's
 * repository's `.git`. The sandbox shows that common git folder as it shows the repository (so
 * git works for the agent inside): writable for the builder, with the control files Vigil's own
 * git commands would run (config, hooks) read-only; read-only for a reviewing role.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../activities/agent.js';
import { worktreeCommonDir } from '../../lib/sandbox.js';
import type { AgentResult, RunAgentInput } from '../../schemas/activities.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';

const saved = { ...process.env };
let root: string;
let main: string;
let worktree: string;
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'vigil-sandbox-worktree-'));
  main = path.join(root, 'repo');
  mkdirSync(main);
  writeFileSync(path.join(main, 'README.md'), '# main\n');
  git(main, 'init', '-q');
  git(main, 'add', '-A');
  git(main, 'commit', '-qm', 'start');
  worktree = path.join(main, '.vigil', 'worktrees', 'run-1', 'api');
  git(main, 'worktree', 'add', '-q', '-b', 'vigil/run-1--api', worktree);
  process.env.VIGIL_HOME = path.join(root, 'vigil-home');
  process.env.VIGIL_SANDBOX = 'auto';
});

afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  rmSync(root, { recursive: true, force: true });
});

const agent = (role: 'iteration' | 'reviewer', script: string): Promise<AgentResult> =>
  new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') }).run(runAgent, {
    runId: 'run-1--api',
    repoPath: worktree,
    argv: ['bash', '-c', script],
    prompt: 'work\n',
    role,
    iteration: 1,
    phase: 'ACT',
    tier: 'development',
    timeoutSeconds: 60,
    completionPromise: 'DONE',
    ...(role === 'reviewer' ? { parse: 'review', extraEnv: { VIGIL_REVIEWER: 'r', VIGIL_REVIEW_ROUND: '1' } } : {}),
  } as RunAgentInput) as Promise<AgentResult>;

const SCRIPT = [
  'cat > /dev/null',
  'git status --porcelain > /dev/null && echo STATUS-OK || echo STATUS-FAILED',
  'echo new > new.txt',
  'git add new.txt && git -c user.email=a@example.com -c user.name=a commit -qm "from the sandbox" && echo COMMITTED || echo COMMIT-FAILED',
  'common=$(git rev-parse --git-common-dir)',
  '(echo "#!/bin/sh" > "$common/hooks/post-checkout") 2>/dev/null && echo HOOK-WRITTEN || echo HOOK-REFUSED',
  '(echo "[core]" >> "$common/config") 2>/dev/null && echo CONFIG-WRITTEN || echo CONFIG-REFUSED',
  'echo VERDICT: PASS',
].join('\n');

describe.runIf(sandboxPlatform().problem === null)('a stream’s git worktree in the sandbox', () => {
  it('finds the common git folder of a worktree, and none for a repository of its own', () => {
    expect(worktreeCommonDir(worktree)).toBe(path.join(main, '.git'));
    expect(worktreeCommonDir(main)).toBeNull();
  });

  it('lets the builder use git in its worktree, and never write the hooks or config Vigil’s git commands run', async () => {
    const r = await agent('iteration', SCRIPT);
    expect(r.sandbox?.applied, r.tail).toBe(true);
    expect(r.tail).toContain('STATUS-OK');
    expect(r.tail).toContain('COMMITTED');
    expect(r.tail).toContain('HOOK-REFUSED');
    expect(r.tail).toContain('CONFIG-REFUSED');
    expect(git(main, 'log', '-1', '--format=%s', 'vigil/run-1--api')).toBe('from the sandbox');
    expect(existsSync(path.join(main, '.git', 'hooks', 'post-checkout'))).toBe(false);
  });

  it('shows a reviewing role the worktree’s history, read-only', async () => {
    const before = git(main, 'rev-parse', 'vigil/run-1--api');
    const r = await agent('reviewer', SCRIPT.replace('echo new > new.txt', 'git log --oneline -1 > /dev/null && echo LOG-OK'));
    expect(r.sandbox?.applied, r.tail).toBe(true);
    expect(r.tail).toContain('STATUS-OK');
    expect(r.tail).toContain('LOG-OK');
    expect(r.tail).toContain('COMMIT-FAILED');
    expect(git(main, 'rev-parse', 'vigil/run-1--api')).toBe(before);
  });
});
