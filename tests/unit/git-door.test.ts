/**
 * The sandbox's git door, one vector at a time: a builder in the default sandbox rigs the
 * repository so that any git that follows the rigging runs its payload (tests/support/
 * git-door-agent.mjs), then Vigil's own git does what a run does next — the inspection with a
 * checkpoint, a tree hash, a plain command, delivery on the run branch and on the current one.
 * Whatever the builder managed, nothing outside the sandbox runs its code (a folder it cannot
 * write stays empty), Vigil says what it refused, and the person's own `git status` and `git
 * diff` afterwards run nothing either. The whole-run version is tests/workflow/git-door.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../activities/agent.js';
import { deliverRun } from '../../activities/deliver.js';
import { git as vigilGit, workingTreeHash } from '../../activities/git.js';
import { inspectRepo, prepareRun } from '../../activities/repo.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import type { AgentResult, RunAgentInput } from '../../schemas/activities.js';
import { ROOT } from '../support/harness.js';

const AGENT = path.join(ROOT, 'tests/support/git-door-agent.mjs');
const saved = { ...process.env };
let root: string;

/** The person's own git, with a plain environment (no Vigil settings). */
const personGit = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=p@example.com', '-c', 'user.name=p', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: path.join(root, 'person-home') },
    stdio: 'pipe',
  });

/**
 * A repository as a person keeps one: a commit, a clean filter of its own configuration that runs
 * a script of the work tree (as formatters and git-crypt do), and an included configuration file
 * of the work tree; no hooks folder.
 */
function makeRepo(name: string): string {
  const repo = path.join(root, name);
  mkdirSync(path.join(repo, 'scripts'), { recursive: true });
  writeFileSync(path.join(repo, 'README.md'), '# door\n');
  writeFileSync(path.join(repo, 'scripts', 'fmt.sh'), '#!/bin/sh\ncat\n');
  chmodSync(path.join(repo, 'scripts', 'fmt.sh'), 0o755);
  writeFileSync(path.join(repo, 'team.gitconfig'), '[user]\n\tname = team\n');
  personGit(repo, 'init', '-q', '-b', 'main');
  personGit(repo, 'config', 'filter.fmt.clean', 'sh scripts/fmt.sh');
  personGit(repo, 'config', 'include.path', '../team.gitconfig');
  personGit(repo, 'add', '-A');
  personGit(repo, 'commit', '-qm', 'start');
  rmSync(path.join(repo, '.git', 'hooks'), { recursive: true, force: true });
  return repo;
}

const builder = (repo: string): Promise<AgentResult> =>
  new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') }).run(runAgent, {
    runId: 'door-run',
    repoPath: repo,
    argv: [process.execPath, AGENT],
    prompt: 'work\n',
    role: 'iteration',
    iteration: 1,
    phase: 'ACT',
    tier: 'development',
    timeoutSeconds: 60,
    completionPromise: 'COMPLETION PROMISE FULFILLED',
  } as RunAgentInput) as Promise<AgentResult>;

/** Runs a step of Vigil's, keeping its refusal (an Error's message) instead of throwing. */
async function attempt(what: string, fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
    return `${what}: ok`;
  } catch (err) {
    return `${what}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** What the rigging's payload recorded having run (nothing, when the door holds). */
const ran = (marks: string): string[] => readdirSync(marks).filter((f) => f.startsWith('ran-'));

/**
 * Per vector, what Vigil's first step says: in the sandbox (null: the sandbox itself refused the
 * rigging) and without it (sandbox=off, where the builder can do anything its user can: the
 * defences outside the sandbox alone; null: nothing to refuse, and nothing of it runs).
 */
const VECTORS: Record<string, { sandboxed: RegExp | null; unsandboxed: RegExp | null }> = {
  commondir: { sandboxed: /\.git\/commondir was written/, unsandboxed: /\.git\/commondir was written/ },
  gitfile: { sandboxed: null, unsandboxed: /\.git was changed|\.git was replaced .*the original, found at \.door\/original-git, is back/ },
  renamed: { sandboxed: null, unsandboxed: /\.git was replaced .*the original, found at \.door-original-git, is back/ },
  hooks: { sandboxed: null, unsandboxed: /the hook pre-commit was planted/ },
  nested: { sandboxed: /vendor\/lib is a git repository of its own/, unsandboxed: /vendor\/lib is a git repository of its own/ },
  attributes: {
    sandboxed: /scripts\/fmt\.sh, run by the repository's git configuration \(filter\.fmt\.clean\), was changed/,
    unsandboxed: /scripts\/fmt\.sh, run by the repository's git configuration \(filter\.fmt\.clean\), was changed/,
  },
  include: {
    sandboxed: /team\.gitconfig, included by the repository's git configuration, was changed/,
    unsandboxed: /team\.gitconfig, included by the repository's git configuration, was changed/,
  },
  config: { sandboxed: null, unsandboxed: null },
};

describe.runIf(sandboxPlatform().problem === null)("the sandbox's git door", () => {
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-git-door-'));
    mkdirSync(path.join(root, 'person-home'));
    process.env.VIGIL_HOME = path.join(root, 'vigil-home');
    process.env.VIGIL_SANDBOX = 'auto';
  });

  afterAll(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(root, { recursive: true, force: true });
  });

  for (const [vector, expected] of Object.entries(VECTORS).flatMap(([v, e]) => [
    [v, { sandbox: 'auto', refusal: e.sandboxed }] as const,
    [v, { sandbox: 'off', refusal: e.unsandboxed }] as const,
  ])) {
    const { sandbox, refusal } = expected;
    it(`${vector} (sandbox=${sandbox}): nothing outside the sandbox runs the builder's code, and what changed is refused`, async () => {
      const repo = makeRepo(`${vector}-${sandbox}`);
      const marks = path.join(root, `marks-${vector}-${sandbox}`);
      mkdirSync(marks);
      process.env.GIT_DOOR_MARKS = marks;
      process.env.GIT_DOOR_VECTOR = vector;
      // sandbox=off: the builder can do whatever its user can; what is tested is Vigil's own git.
      process.env.VIGIL_SANDBOX = sandbox;
      const start = await prepareRun({ repoPath: repo, runId: 'door-run' });

      const result = await builder(repo);
      const log = readFileSync(result.logPath, 'utf8');
      if (sandbox === 'auto') expect(log, 'the sandbox keeps the marks folder out of reach').toMatch(/^DOOR write-marks refused/m);
      else expect(log, 'without the sandbox, the rigging is done').toMatch(new RegExp(`^DOOR rig-${vector} ok`, 'm'));
      // What the builder's own commands ran (without the sandbox, its own git runs its own code: that
      // is the builder, not Vigil); from here on, anything new was run by Vigil's git or the person's.
      const byBuilder = ran(marks);
      if (sandbox === 'auto') expect(byBuilder).toEqual([]);
      const ranSince = (): string[] => ran(marks).filter((f) => !byBuilder.includes(f));

      // What a run does next with the repository, each step outside the sandbox.
      const steps = [
        await attempt('inspect', () =>
          inspectRepo({
            repoPath: repo,
            runStartSha: start.sha,
            previousTree: start.treeHash,
            checkpoint: { parent: null, ref: 'refs/vigil/door-run/0001', message: 'checkpoint', prune: [] },
          }),
        ),
        await attempt('tree hash', () => workingTreeHash(repo)),
        await attempt('status', () => vigilGit(repo, ['status', '--porcelain'])),
        await attempt('deliver', () => deliverRun({ repoPath: repo, runId: 'door-run', message: 'deliver' })),
        await attempt('deliver to current', () => deliverRun({ repoPath: repo, runId: 'door-run', message: 'deliver', toCurrent: true })),
      ];
      expect(ranSince(), `${log}\n${steps.join('\n')}`).toEqual([]);
      if (refusal) expect(steps[0], steps.join('\n')).toMatch(refusal);
      else if (sandbox === 'auto')
        expect(log, 'the sandbox itself refused this one').toMatch(new RegExp(`^DOOR rig-${vector} refused`, 'm'));
      if (refusal) expect(steps[0]).toMatch(/Vigil's git does not follow it/);
      // Without the sandbox, a builder that rewrites .git/config rigs the person's own git (it runs
      // as their user anyway: only the sandbox makes that a boundary); Vigil's git still ran nothing.
      if (sandbox === 'off' && vector === 'config') return;

      // The person's own git afterwards: the repository is as the run found it, and nothing runs.
      personGit(repo, 'status');
      personGit(repo, 'diff');
      personGit(repo, 'diff', 'HEAD~1');
      expect(ranSince()).toEqual([]);
      expect(existsSync(path.join(repo, '.git', 'commondir'))).toBe(false);
      expect(readFileSync(path.join(repo, 'scripts', 'fmt.sh'), 'utf8')).toBe('#!/bin/sh\ncat\n');
    });
  }

  it('an honest builder in the same repository is refused nothing', async () => {
    process.env.VIGIL_SANDBOX = 'auto';
    const repo = makeRepo('honest');
    const marks = path.join(root, 'marks-honest');
    mkdirSync(marks);
    process.env.GIT_DOOR_MARKS = marks;
    process.env.GIT_DOOR_VECTOR = 'none';
    const start = await prepareRun({ repoPath: repo, runId: 'door-run' });
    await builder(repo);
    const snap = await inspectRepo({
      repoPath: repo,
      runStartSha: start.sha,
      previousTree: start.treeHash,
      checkpoint: { parent: null, ref: 'refs/vigil/door-run/0001', message: 'checkpoint', prune: [] },
    });
    expect(snap.changedFiles).toEqual(['hello.txt']);
    const delivered = await deliverRun({ repoPath: repo, runId: 'door-run', message: 'deliver' });
    expect(delivered.files).toBe(1);
    // The repository's own clean filter still applies to the person's own git (it is theirs).
    expect(personGit(repo, 'config', 'filter.fmt.clean').trim()).toBe('sh scripts/fmt.sh');
    expect(existsSync(path.join(repo, '.vigil', 'quarantine'))).toBe(false);
  });
});
