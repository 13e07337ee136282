/**
 * `vigil pr-event` as a person or a CI job runs it: bad flags are exit 2 before anything connects;
 * red checks from a log file reach the followed run's next prompt; `--merged` ends it `merged`.
 *
 * Real git and a real bare remote (every push goes to it); `gh` is faked, and only gh
 * (tests/support/fake-gh.ts): it is the one part that talks to GitHub, which cannot run here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileWorker, makeRepo, runInput, startRun, temporalAddress, uniqueId, waitForStatus, writeScenario } from '../support/harness.js';
import { fakeGh } from '../support/fake-gh.js';
import { patient } from '../support/patience.js';
import { runVigil, show } from './cli-helpers.js';

const { ghDir } = fakeGh();
const shared = fileWorker('pr-event-cli', () => {
  process.env.PATH = `${ghDir}${path.delimiter}${process.env.PATH ?? ''}`;
});
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

describe('vigil pr-event', () => {
  it(
    'refuses bad flags with exit 2, sends red checks from a log into the next prompt, and --merged ends the run merged',
    async () => {
      const base = { TEMPORAL_ADDRESS: temporalAddress(), VIGIL_TASK_QUEUE: shared.taskQueue, USER: 'carol' };
      const none = await runVigil(['pr-event', 'no-such-run'], base);
      expect(none.code, show(none)).toBe(2);
      expect(none.stderr).toContain('give exactly one of --checks-failed FILE');
      const anonymous = await runVigil(['pr-event', 'no-such-run', '--comment', 'rename it'], base);
      expect(anonymous.code, show(anonymous)).toBe(2);
      expect(anonymous.stderr).toContain('--comment needs --author NAME');

      const repo = makeRepo({ files: { 'README.md': '# s\n' } });
      const remote = mkdtempSync(path.join(os.tmpdir(), 'vigil-origin-'));
      git(remote, 'init', '-q', '--bare');
      git(repo, 'remote', 'add', 'origin', remote);
      const scenario = writeScenario(repo, {
        version: 1,
        iterations: [
          { writes: { 'a.txt': '1\n' } },
          { writes: { 'a.txt': '2\n' } },
          { writes: { 'a.txt': '3\n' }, claim: 'file' },
          { writes: { 'a.txt': '4\n' }, claim: 'file' },
        ],
        roles: {
          checklist: {
            default: { output: '[{"id": "REQ-1", "title": "a.txt exists", "priority": "critical", "verify": "read a.txt"}]\n' },
          },
          'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - a.txt exists\n' } },
          reviewer: { default: { output: 'VERDICT: PASS\n' } },
          'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
          council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } },
        },
      });
      const id = uniqueId('pr-event');
      const handle = await startRun(shared.env, shared.taskQueue, runInput(repo, scenario, { maxIterations: 8, deliver: 'pr' }), id);
      await waitForStatus(handle, (s) => s.pullRequest?.waiting === true, 120_000);

      const log = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-ci-log-')), 'jenkins.log');
      writeFileSync(log, 'Started by an SCM change\n...\nFAILED tests/test_a.py::test_four - assert 3 == 4\n');
      const red = await runVigil(['pr-event', id, '--checks-failed', log, '--check', 'jenkins: unit', '--id', 'jenkins-41'], base);
      expect(red.code, show(red)).toBe(0);
      expect(red.stdout).toContain(`${id}: checks-failed event jenkins-41 sent`);
      await waitForStatus(handle, (s) => s.pullRequest?.waiting === true && s.iteration === 4, 120_000);
      const prompt = readFileSync(path.join(repo, '.vigil/runs', id, 'iteration-0004.prompt.md'), 'utf8');
      expect(prompt).toContain('### jenkins: unit');
      expect(prompt).toContain('FAILED tests/test_a.py::test_four - assert 3 == 4');

      const merged = await runVigil(['pr-event', id, '--merged', '--merge-commit', 'feedface'], base);
      expect(merged.code, show(merged)).toBe(0);
      expect(await handle.result()).toMatchObject({ status: 'merged', exitCode: 0, iteration: 4 });
    },
    patient(300_000),
  );
});
