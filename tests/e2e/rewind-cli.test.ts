/**
 * `vigil checkpoints` and `vigil rewind` as a person runs them: the listing, the rejections with
 * their exit codes (each changing nothing), and `--fork` of a finished run from a checkpoint.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workingTreeHash } from '../../activities/repo.js';
import { runRefPrefix } from '../../rules/checkpoints.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  git,
  makeRepo,
  makeWorker,
  loopInput,
  startRun,
  status,
  temporalAddress,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { runVigil, show } from './cli-helpers.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

describe('vigil checkpoints and vigil rewind', () => {
  it('lists checkpoints, refuses what it cannot do with clear exit codes, and forks a finished run from a checkpoint', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'a.txt': '1\n' } },
        { writes: { 'a.txt': '2\n', 'b.txt': 'b\n' } },
        { output: 'no change\n' },
        { writes: { 'a.txt': '4\n' } },
      ],
    });
    const wf = uniqueId('cli-rewind');
    const tq = uniqueId('tq');
    const base = { TEMPORAL_ADDRESS: temporalAddress(), VIGIL_TASK_QUEUE: tq, USER: 'carol' };
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 4 }), wf);
      expect((await handle.result()).status).toBe('max_iterations_reached');
      const snap = await status(handle);

      const list = await runVigil(['checkpoints', wf], base);
      expect(list.code, show(list)).toBe(0);
      expect(list.stdout).toContain(`checkpoints of ${wf} (3 kept of at most 50; refs under ${runRefPrefix(wf)}`);
      expect(list.stdout.split('\n').filter((l) => /^ {2}[124] /.test(l))).toHaveLength(3);
      const json = JSON.parse((await runVigil(['checkpoints', wf, '--json'], base)).stdout) as {
        list: { iteration: number; filesChanged: number }[];
      };
      expect(json.list.map((c) => [c.iteration, c.filesChanged])).toEqual([
        [1, 1],
        [2, 2],
        [4, 1],
      ]);

      const tree = await workingTreeHash(repo);
      const refsBefore = git(repo, 'for-each-ref', runRefPrefix(wf));
      const finished = await runVigil(['rewind', wf, '--to', '2'], base);
      expect(finished.code, show(finished)).toBe(5);
      expect(finished.stderr).toMatch(
        /has finished \(max_iterations_reached.*a finished run cannot be rewound.*vigil rewind .* --to 2 --fork/s,
      );
      const bad = await runVigil(['rewind', wf, '--to', 'two'], base);
      expect(bad.code, show(bad)).toBe(2);
      expect(bad.stderr).toMatch(/--to must be an integer/);
      const noCheckpoint = await runVigil(['rewind', wf, '--to', '3', '--fork'], base);
      expect(noCheckpoint.code, show(noCheckpoint)).toBe(2);
      expect(noCheckpoint.stderr).toMatch(/iteration 3 has no checkpoint .*checkpoints: 1, 2, 4/);
      const idWithoutFork = await runVigil(['rewind', wf, '--to', '2', '--id', 'x'], base);
      expect(idWithoutFork.code, show(idWithoutFork)).toBe(2);
      // A person's edit after the run ended: refused, naming the file.
      writeFileSync(path.join(repo, 'mine.txt'), 'mine\n');
      const dirty = await runVigil(['rewind', wf, '--to', '2', '--fork'], base);
      expect(dirty.code, show(dirty)).toBe(2);
      expect(dirty.stderr).toMatch(/changes made after run .* ended \(1 file\(s\): mine\.txt\); nothing was changed.*--force/s);
      expect(readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('4\n');
      expect(git(repo, 'for-each-ref', runRefPrefix(wf))).toBe(refsBefore);
      expect(await workingTreeHash(repo)).not.toBe(tree);

      // --force keeps the edit in a checkpoint, restores checkpoint 2 and starts the fork with the directive.
      const forkId = uniqueId('forked');
      const fork = await runVigil(
        ['rewind', wf, '--to', '2', '--fork', '--force', '--id', forkId, '--input', 'Keep b.txt as it is.'],
        base,
      );
      expect(fork.code, show(fork)).toBe(0);
      expect(fork.stdout).toContain(`forked run ${wf} at iteration 2: started run ${forkId}`);
      const c2 = snap.checkpoints?.list.find((c) => c.iteration === 2);
      const forked = env.client.workflow.getHandle(forkId);
      const first = await waitForStatus(forked, (s) => s.iteration >= 1 && !s.agentRunning && s.recentIterations.length >= 1, 120_000);
      // Its first checkpoint is checkpoint 2's tree plus what its iteration 1 wrote (a.txt).
      const f1 = first.checkpoints?.list[0]?.commit ?? '';
      expect(git(repo, 'diff', '--name-only', c2?.commit ?? '', f1)).toBe('a.txt');
      await forked.result();
      const saved = git(repo, 'for-each-ref', '--format=%(refname)', `${runRefPrefix(wf)}before-fork-*`);
      expect(git(repo, 'show', `${saved}:mine.txt`)).toBe('mine');
      expect(git(repo, 'rev-parse', `${saved}^`)).toBe(snap.checkpoints?.list.at(-1)?.commit);
      const prompt1 = readFileSync(path.join(repo, '.vigil/runs', forkId, 'iteration-0001.prompt.md'), 'utf8');
      expect(prompt1).toContain('Keep b.txt as it is.');
      expect(c2).toBeDefined();

      // A fork under the id of a run that ended: refused before the tree is touched, naming --replace.
      const treeAfterFork = await workingTreeHash(repo);
      const taken = await runVigil(['rewind', wf, '--to', '2', '--fork', '--id', forkId], base);
      expect(taken.code, show(taken)).toBe(2);
      expect(taken.stderr).toMatch(new RegExp(`run "${forkId}" already ran .*nothing was started.*--replace`, 's'));
      expect(await workingTreeHash(repo)).toBe(treeAfterFork);
      const replaceAlone = await runVigil(['rewind', wf, '--to', '2', '--fork', '--replace'], base);
      expect(replaceAlone.code, show(replaceAlone)).toBe(2);
      expect(replaceAlone.stderr).toMatch(/--replace takes the id given with --fork --id/);
      // With --replace, on purpose: a new run under that id.
      const again = await runVigil(['rewind', wf, '--to', '2', '--fork', '--id', forkId, '--replace'], base);
      expect(again.code, show(again)).toBe(0);
      expect(again.stdout).toContain(`started run ${forkId}`);
      expect((await env.client.workflow.getHandle(forkId).result()).status).toBe('max_iterations_reached');
    });
    // The fork started from checkpoint 2's tree: its first iteration wrote a.txt over "2", b.txt was there.
    expect(existsSync(path.join(repo, 'mine.txt'))).toBe(false);
    expect(existsSync(path.join(repo, 'b.txt'))).toBe(true);
    expect(agentCalls(repo).filter((c) => c.role === 'iteration').length).toBe(12);
  });
});
