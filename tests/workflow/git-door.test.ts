/**
 * The sandbox's git door, as whole runs with the product's default knobs (supervised, the sandbox
 * on, checkpoints, the code review, the checklist, the council, delivery on the run branch): the
 * builder rigs the repository in its first iteration, one way per run (tests/support/
 * git-door-agent.mjs), so that any git that follows the rigging runs its payload; every reviewing
 * role approves. Nothing outside the sandbox runs the payload (a folder the builder cannot write
 * stays empty), a rigging the sandbox let through pauses the run with what Vigil found and moved
 * aside, a person's resume lets the run finish as an honest one, and the person's own git status
 * afterwards runs nothing. One step at a time: tests/unit/git-door.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { resumeUpdate } from '../../workflows/messages.js';
import {
  assertBuilt,
  createTestEnv,
  makeWorker,
  ROOT,
  runInput,
  startRun,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

const AGENT = path.join(ROOT, 'tests/support/git-door-agent.mjs');
const saved = { ...process.env };
let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
let tq: string;
let root: string;

const personGit = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=p@example.com', '-c', 'user.name=p', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: path.join(root, 'person-home') },
    stdio: 'pipe',
  });

/** A repository as a person keeps one (see tests/unit/git-door.test.ts), with a test the tests gate runs. */
function makeRepo(name: string): string {
  const repo = path.join(root, name);
  mkdirSync(path.join(repo, 'scripts'), { recursive: true });
  writeFileSync(path.join(repo, 'README.md'), '# door\n\nSays hello.\n');
  writeFileSync(path.join(repo, 'hello.test.mjs'), "import test from 'node:test';\ntest('hello', () => {});\n");
  writeFileSync(path.join(repo, 'scripts', 'fmt.sh'), '#!/bin/sh\ncat\n');
  chmodSync(path.join(repo, 'scripts', 'fmt.sh'), 0o755);
  writeFileSync(path.join(repo, 'team.gitconfig'), '[user]\n\tname = team\n');
  personGit(repo, 'init', '-q', '-b', 'main');
  personGit(repo, 'config', 'filter.fmt.clean', 'sh scripts/fmt.sh');
  personGit(repo, 'config', 'include.path', '../team.gitconfig');
  personGit(repo, 'add', '-A');
  personGit(repo, 'commit', '-qm', 'start');
  return repo;
}

/** Per vector, what the pause says (null: the sandbox refused the rigging, and the run never paused for it). */
const VECTORS: Record<string, RegExp | null> = {
  commondir: /\.git\/commondir was written/,
  gitfile: null,
  renamed: null,
  hooks: null,
  nested: /vendor\/lib is a git repository of its own/,
  attributes: /scripts\/fmt\.sh, run by the repository's git configuration \(filter\.fmt\.clean\), was changed; written back/,
  include: /team\.gitconfig, included by the repository's git configuration, was changed; written back/,
  config: null,
};

describe.runIf(sandboxPlatform().problem === null)("whole runs through the sandbox's git door", () => {
  beforeAll(async () => {
    assertBuilt();
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-git-door-run-'));
    mkdirSync(path.join(root, 'person-home'));
    Object.assign(process.env, { VIGIL_HOME: path.join(root, 'vigil-home'), VIGIL_SANDBOX: 'auto' });
    env = await createTestEnv();
    tq = uniqueId('git-door');
    worker = await makeWorker(env, tq);
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running?.catch(() => undefined);
    await env?.close();
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  for (const [vector, pause] of Object.entries(VECTORS)) {
    it(
      `${vector}: runs nothing of the builder's outside the sandbox, ` +
        `${pause ? 'pauses with what it refused, and finishes after a resume' : 'and finishes'}`,
      async () => {
        const repo = makeRepo(vector);
        const marks = path.join(root, `marks-${vector}`);
        mkdirSync(marks);
        Object.assign(process.env, { GIT_DOOR_MARKS: marks, GIT_DOOR_VECTOR: vector });
        const input = runInput(repo, writeScenario(root, { version: 1, iterations: [{}] }), {
          agentCommand: [process.execPath, AGENT],
          testCommand: 'node --test',
        });
        const handle = await startRun(env, tq, input, uniqueId(`door-${vector}`));
        if (pause) {
          const paused = await waitForStatus(handle, (s) => s.pause !== null, 120_000);
          expect(paused.pause?.reason).toMatch(/the repository's git was changed under the run, and Vigil's git does not follow it/);
          expect(paused.pause?.reason).toMatch(pause);
          expect(readdirSync(path.join(repo, '.vigil', 'quarantine'))).toHaveLength(1);
          await handle.executeUpdate(resumeUpdate, { args: [{ by: 'tester' }] });
        }
        const outcome = await handle.result();
        expect(outcome.status, JSON.stringify(outcome)).toBe('council_approved');
        expect(readdirSync(marks), 'nothing outside the sandbox ran the payload').toEqual([]);
        // Delivered on the run branch, without the rigging.
        const files = personGit(repo, 'ls-tree', '-r', '--name-only', `vigil/${handle.workflowId}`).split('\n');
        expect(files).toContain('hello.txt');
        expect(files.filter((f) => f.startsWith('.git/') || f === '.git' || f.startsWith('vendor/lib/.git'))).toEqual([]);
        // The person's own git afterwards runs nothing either.
        personGit(repo, 'status');
        personGit(repo, 'diff');
        expect(readdirSync(marks)).toEqual([]);
      },
    );
  }

  it('a perpetual run whose builder rigs the repository ends repository_unavailable, having run none of it', async () => {
    const repo = makeRepo('perpetual');
    const marks = path.join(root, 'marks-perpetual');
    mkdirSync(marks);
    Object.assign(process.env, { GIT_DOOR_MARKS: marks, GIT_DOOR_VECTOR: 'commondir' });
    const input = runInput(repo, writeScenario(root, { version: 1, iterations: [{}] }), {
      agentCommand: [process.execPath, AGENT],
      testCommand: 'node --test',
      autonomyMode: 'perpetual',
    });
    const handle = await startRun(env, tq, input, uniqueId('door-perpetual'));
    const outcome = await handle.result();
    expect(outcome.status).toBe('repository_unavailable');
    expect(outcome.reason).toMatch(/\.git\/commondir was written/);
    personGit(repo, 'status');
    expect(readdirSync(marks)).toEqual([]);
  });
});
