/**
 * The parts of "Vigil's git never runs repository-controlled code" one at a time: the layout
 * check against what git itself makes (lib/git-layout.ts), the environment of every
 * command (lib/git-env.ts: which configuration entries are the repository's, which the
 * agent could write, what is neutralised), and a repository whose own configuration runs things
 * (fsmonitor, hooks, a clean filter): Vigil's git runs none of them, the person's git still does.
 * Last, a changed layout refused by the library (the CLI's git) and by the activities, which say it
 * to Temporal as a non-retryable UnsafeRepository failure.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentWritable, neutralisedSettings, parseConfigList, type ConfigEntry, type GitDirs } from '../../lib/git-env.js';
import { ApplicationFailure } from '@temporalio/common';
import { gitEnvFor, runGit } from '../../activities/git-helper.js';
import { git as activityGit, workingTreeHash } from '../../activities/git.js';
import { restoreWorkingTree } from '../../activities/checkpoints.js';
import { UnsafeRepositoryError } from '../../lib/git-helper.js';
import { git as libGit } from '../../lib/git.js';
import { FAILURE_TYPES } from '../../schemas/activities.js';
import { readGitDirs, recordGitLayout, UnsafeGitLayout } from '../../lib/git-layout.js';
import { checkGitLayout } from '../../lib/git-quarantine.js';

const saved = { ...process.env };
let root: string;
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8', stdio: 'pipe' }).trim();

function repo(name: string): string {
  const r = path.join(root, name);
  mkdirSync(r, { recursive: true });
  writeFileSync(path.join(r, 'a.txt'), 'a\n');
  git(r, 'init', '-q');
  git(r, 'add', '-A');
  git(r, 'commit', '-qm', 'start');
  return r;
}

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'vigil-git-safety-'));
  process.env.VIGIL_HOME = path.join(root, 'vigil-home');
});

afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  rmSync(root, { recursive: true, force: true });
});

describe('the layout git makes, and what it does not', () => {
  it('accepts a repository and a linked worktree of it, with their folders', () => {
    const r = repo('plain');
    expect(readGitDirs(r)).toMatchObject({ gitDir: path.join(r, '.git'), commonDir: path.join(r, '.git'), dotGit: { kind: 'dir' } });
    const wt = path.join(root, 'plain-wt');
    git(r, 'worktree', 'add', '-q', '--detach', wt);
    expect(readGitDirs(wt)).toMatchObject({ gitDir: path.join(r, '.git', 'worktrees', 'plain-wt'), commonDir: path.join(r, '.git') });
  });

  it('refuses a .git link, a commondir in a .git folder, and a gitdir file naming something that is not a worktree', () => {
    const r = repo('odd');
    writeFileSync(path.join(r, '.git', 'commondir'), '/elsewhere\n');
    expect(() => readGitDirs(r)).toThrow(/commondir exists: git would take this repository's configuration and hooks from \/elsewhere/);
    rmSync(path.join(r, '.git', 'commondir'));
    const l = repo('linked');
    const target = path.join(root, 'target-git');
    execFileSync('mv', [path.join(l, '.git'), target]);
    symlinkSync(target, path.join(l, '.git'));
    expect(() => readGitDirs(l)).toThrow(UnsafeGitLayout);
    rmSync(path.join(l, '.git'));
    mkdirSync(path.join(root, 'fake'));
    writeFileSync(path.join(l, '.git'), `gitdir: ${path.join(root, 'fake')}\n`);
    expect(() => readGitDirs(l)).toThrow(/is not a linked worktree's folder/);
  });

  it('moves a planted hook aside and says so; with no record, it refuses without moving anything', () => {
    const r = repo('hooked');
    recordGitLayout(r);
    writeFileSync(path.join(r, '.git', 'hooks', 'post-index-change'), '#!/bin/sh\nexit 0\n');
    const checked = checkGitLayout(r);
    expect(checked.findings).toEqual([expect.stringMatching(/^the hook post-index-change was planted; moved to \.vigil\/quarantine\//)]);
    expect(readdirSync(path.join(r, '.git', 'hooks'))).not.toContain('post-index-change');
    expect(checkGitLayout(r).findings).toEqual([]);
    const unknown = repo('unrecorded');
    writeFileSync(path.join(unknown, '.git', 'commondir'), '/elsewhere\n');
    expect(() => checkGitLayout(unknown)).toThrow(UnsafeGitLayout);
    expect(readdirSync(path.join(unknown, '.git'))).toContain('commondir');
  });
});

describe("the environment of Vigil's git", () => {
  const dirs: GitDirs = { workTree: '/r', gitDir: '/r/.git', commonDir: '/r/.git' };
  const entry = (scope: string, file: string | null, key: string, value: string): ConfigEntry => ({ scope, file, key, value });

  it('reads git config --list -z with scopes and origins', () => {
    const out = 'global\0file:/home/u/.gitconfig\0user.name\nU\0local\0file:.git/config\0filter.x.clean\nsh x.sh\0';
    expect(parseConfigList(out, '/r')).toEqual([
      { scope: 'global', file: '/home/u/.gitconfig', key: 'user.name', value: 'U' },
      { scope: 'local', file: '/r/.git/config', key: 'filter.x.clean', value: 'sh x.sh' },
    ]);
  });

  it("neutralises the repository's drivers, and commands only from files the agent can write", () => {
    const entries = [
      entry('local', '/r/.git/config', 'filter.fmt.clean', 'sh scripts/fmt.sh'),
      entry('local', '/r/.git/config', 'diff.img.textconv', 'exiftool'),
      entry('local', '/r/.git/config', 'core.sshcommand', 'ssh -i key'),
      entry('local', '/r/team.gitconfig', 'core.sshcommand', './evil'),
      entry('local', '/r/team.gitconfig', 'credential.helper', '!./steal'),
      entry('global', '/home/u/.gitconfig', 'filter.lfs.process', 'git-lfs filter-process'),
    ];
    expect(agentWritable(entries[0] as ConfigEntry, dirs)).toBe(false);
    expect(agentWritable(entries[3] as ConfigEntry, dirs)).toBe(true);
    expect(neutralisedSettings(entries, dirs)).toEqual([
      ['filter.fmt.clean', ''],
      ['filter.fmt.required', 'false'],
      ['diff.img.textconv', ''],
      ['core.sshcommand', ''],
      ['credential.helper', ''],
    ]);
  });

  it("runs nothing of a repository whose own configuration has an fsmonitor, hooks and a clean filter; the person's git does", async () => {
    const r = repo('configured');
    const marks = path.join(root, 'marks');
    mkdirSync(marks);
    const payload = path.join(root, 'payload.sh');
    writeFileSync(payload, `#!/bin/sh\ntouch "${marks}/$1"\ncat\n`);
    chmodSync(payload, 0o755);
    git(r, 'config', 'core.fsmonitor', `${payload} fsmonitor`);
    git(r, 'config', 'filter.x.clean', `${payload} filter`);
    writeFileSync(path.join(r, '.gitattributes'), '* filter=x\n');
    for (const h of ['post-index-change', 'reference-transaction']) {
      writeFileSync(path.join(r, '.git', 'hooks', h), `#!/bin/sh\n${payload} ${h}\n`);
      chmodSync(path.join(r, '.git', 'hooks', h), 0o755);
    }
    writeFileSync(path.join(r, 'b.txt'), 'b\n');
    expect(gitEnvFor(r)).toMatchObject({ GIT_DIR: path.join(r, '.git'), GIT_WORK_TREE: r });
    for (const args of [['status'], ['add', '-A'], ['diff', '--cached'], ['update-ref', 'refs/vigil/t', 'HEAD']])
      expect((await runGit(r, args)).exitCode).toBe(0);
    expect(readdirSync(marks)).toEqual([]);
    // The person's git: status asks the fsmonitor and writes the index (post-index-change); add
    // hashes the changed file through the clean filter. Status alone would not be enough: a file
    // whose size changed is "modified" without being read, so the filter would run only when a
    // file happened to be racily clean, which depends on the clock.
    writeFileSync(path.join(r, 'b.txt'), 'b, changed\n');
    git(r, 'status');
    git(r, 'add', 'b.txt');
    expect(readdirSync(marks).sort()).toEqual(['filter', 'fsmonitor', 'post-index-change'].sort());
  });
});

describe('a repository whose git was changed under the run, refused in each layer', () => {
  const rewired = (name: string): string => {
    const r = repo(name);
    writeFileSync(path.join(r, '.git', 'commondir'), '/elsewhere\n');
    return r;
  };

  it('the library (the CLI) refuses with the findings and the repository, running no git', async () => {
    const r = rewired('lib-refusal');
    const err = await libGit(r, ['status']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeRepositoryError);
    expect((err as UnsafeRepositoryError).repoPath).toBe(r);
    expect((err as Error).message).toMatch(/the repository's git was changed under the run, and Vigil's git does not follow it/);
    expect((err as Error).message).toContain('commondir');
  });

  it('the activities say the same refusal to Temporal: UnsafeRepository, not retried', async () => {
    for (const call of [
      (r: string) => runGit(r, ['status']),
      (r: string) => activityGit(r, ['status']),
      (r: string) => workingTreeHash(r),
      (r: string) => restoreWorkingTree(r, '4b825dc642cb6eb9a060e54bf8d69288fbee4904'),
    ]) {
      const r = rewired(`activity-refusal-${Math.random().toString(36).slice(2, 8)}`);
      const err = await call(r).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect((err as ApplicationFailure).type).toBe(FAILURE_TYPES.unsafeRepository);
      expect((err as ApplicationFailure).nonRetryable).toBe(true);
      expect((err as Error).message).toMatch(/Vigil's git does not follow it/);
    }
  });

  it('an ordinary failure stays as it is in both (a missing object is not a refusal)', async () => {
    const r = repo('ordinary');
    for (const call of [libGit, activityGit]) {
      const err = await call(r, ['cat-file', '-p', 'no-such-object']).catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(ApplicationFailure);
      expect(err).not.toBeInstanceOf(UnsafeRepositoryError);
      expect((err as Error).message).toMatch(/git cat-file -p no-such-object failed/);
    }
  });
});
