/**
 * Checkpoints and rewind against a real Temporal server, real git and the scripted agent: a
 * checkpoint ref per changed iteration, pruned at the bound, with the user's HEAD, index and
 * stash untouched; a run rewound from 8 to 4 continuing at 5 with the tree, counters and history
 * of iteration 4 and the directive in its prompt; every refusal changing nothing; a rewind that
 * cancels a running agent call.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workingTreeHash } from '../../activities/repo.js';
import type { RewindPayload } from '../../schemas/messages.js';
import { checkpointRef, runRefPrefix } from '../../rules/checkpoints.js';
import { pauseUpdate, resumeUpdate, rewindUpdate, stopUpdate } from '../../workflows/messages.js';
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
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

const refs = (repo: string, wf: string): string[] =>
  git(repo, 'for-each-ref', '--format=%(refname)', runRefPrefix(wf))
    .split('\n')
    .filter(Boolean)
    .map((r) => r.slice(runRefPrefix(wf).length));

/** Everything of the user's git state a checkpoint must not touch. */
function userGitState(repo: string): Record<string, string> {
  return {
    head: git(repo, 'rev-parse', 'HEAD'),
    branch: git(repo, 'symbolic-ref', 'HEAD'),
    index: createHash('sha256')
      .update(readFileSync(path.join(repo, '.git/index')))
      .digest('hex'),
    staged: git(repo, 'diff', '--cached', '--name-status'),
    stash: git(repo, 'stash', 'list', '--format=%H %s'),
    branches: git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/stash', 'refs/tags'),
  };
}

const rejection = async (p: Promise<unknown>): Promise<string> => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'the rewind was expected to be rejected').toBeInstanceOf(WorkflowUpdateFailedError);
  const e = err as WorkflowUpdateFailedError;
  return e.cause?.message ?? e.message;
};

describe('checkpoints', () => {
  it('takes one checkpoint per changed iteration, prunes at the bound, and leaves HEAD, index and stash alone', async () => {
    const repo = makeRepo({ files: { 'README.md': '# sample\n', 'notes.txt': 'v1\n' } });
    // A stash entry and a staged change of the person's own.
    writeFileSync(path.join(repo, 'notes.txt'), 'stashed\n');
    git(repo, 'stash', 'push', '-q', '-m', 'person stash');
    writeFileSync(path.join(repo, 'staged.txt'), 'staged\n');
    git(repo, 'add', 'staged.txt');
    userGitState(repo); // any index refresh by these commands happens now, not between before and after
    const before = userGitState(repo);
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'a.txt': '1\n' } },
        { writes: { 'a.txt': '2\n' } },
        { writes: { 'b.txt': '3\n' } },
        { output: 'thinking\n' },
        { writes: { 'a.txt': '5\n' } },
        { deletes: ['b.txt'] },
      ],
    });
    // An id that is not a legal ref component as it is.
    const wf = uniqueId('ckpt:odd..id.lock');
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const snap = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 6, checkpointsKept: 3 }), wf);
      const outcome = await handle.result();
      expect(outcome.status).toBe('max_iterations_reached');
      return status(handle);
    });
    // Iteration 4 changed nothing; 1 and 2 fell out of the bound of 3.
    expect(refs(repo, wf).sort()).toEqual(['3', '5', '6']);
    expect(runRefPrefix(wf)).toMatch(/^refs\/vigil\/ckpt%3Aodd%2E%2Eid%2Elock-/);
    expect(() => git(repo, 'check-ref-format', checkpointRef(wf, 3))).not.toThrow();
    expect(snap.checkpoints?.list.map((c) => c.iteration)).toEqual([3, 5, 6]);
    expect(snap.recentIterations.map((r) => (r.checkpoint ? 'c' : '-')).join('')).toBe('ccc-cc');
    for (const c of snap.checkpoints?.list ?? []) {
      expect(git(repo, 'rev-parse', c.ref)).toBe(c.commit);
      expect(git(repo, 'rev-parse', `${c.commit}^{tree}`)).toBe(c.tree);
      expect(snap.recentIterations.find((r) => r.iteration === c.iteration)?.checkpoint).toBe(c.commit);
      expect(git(repo, 'log', '-1', '--format=%s', c.commit)).toBe(`vigil checkpoint: run ${wf}, iteration ${c.iteration}`);
    }
    // Each checkpoint's parent is the previous one, pruned refs included.
    const [c3, c5, c6] = snap.checkpoints?.list ?? [];
    expect(git(repo, 'rev-parse', `${c6?.commit}^`)).toBe(c5?.commit);
    expect(git(repo, 'rev-parse', `${c5?.commit}^`)).toBe(c3?.commit);
    expect(git(repo, 'rev-parse', `${c3?.commit}^`)).toBe(snap.recentIterations[1]?.checkpoint);
    // The latest checkpoint is the tree as the agent left it, staged file included.
    expect(c6?.tree).toBe(await workingTreeHash(repo));
    expect(git(repo, 'ls-tree', '--name-only', c6?.commit ?? '')).toBe('README.md\na.txt\nnotes.txt\nstaged.txt');
    expect(userGitState(repo)).toEqual(before);
  });

  it('rewinds a paused run from 8 to 4: tree, counters and records of 4, the directive in the next prompt, refusals that change nothing', async () => {
    const repo = makeRepo();
    const step = (n: number, extra: Record<string, unknown> = {}) => ({
      writes: { 'step.txt': `${n}\n`, [`f${n}.txt`]: `${n}\n` },
      ...extra,
    });
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        step(1),
        step(2),
        { output: 'reading\n' }, // 3: no change, no checkpoint
        step(4, { exitCode: 1 }), // 4: changed, failed: one failure in a row after it
        step(5),
        step(6, { output: 'all tests pass\n' }), // a done signal
        step(7),
        step(8, { sleepMs: 3000 }),
      ],
    });
    const wf = uniqueId('rewind');
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 10 }), wf);
      await waitForStatus(handle, (s) => s.iteration === 8 && s.agentRunning, 120_000);
      await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'looking at it', by: 'alice' }] });
      const at8 = await waitForStatus(handle, (s) => s.paused && !s.agentRunning && s.lastIteration?.iteration === 8, 60_000);
      expect(at8.consecutiveFailures).toBe(0);
      expect(at8.totalDoneSignals).toBeGreaterThan(0);
      expect(at8.checkpoints?.list.map((c) => c.iteration)).toEqual([1, 2, 4, 5, 6, 7, 8]);
      const c4 = at8.checkpoints?.list.find((c) => c.iteration === 4);
      const c8 = at8.checkpoints?.list.find((c) => c.iteration === 8);
      const tree8 = await workingTreeHash(repo);
      expect(tree8).toBe(c8?.tree);
      const refs8 = refs(repo, wf);

      const rewind = (p: RewindPayload) => handle.executeUpdate(rewindUpdate, { args: [p] });
      const unchanged = async (): Promise<void> => {
        const s = await status(handle);
        expect(s.iteration).toBe(8);
        expect(s.checkpoints?.rewinds).toEqual([]);
        expect(s.pendingDirectives).toBe(0);
        expect(refs(repo, wf)).toEqual(refs8);
      };
      // Refusals: each says why and changes nothing.
      expect(await rejection(rewind({ to: 3, by: 'alice' }))).toMatch(/iteration 3 has no checkpoint .*checkpoints: 1, 2, 4, 5, 6, 7, 8/);
      expect(await rejection(rewind({ to: 9, by: 'alice' }))).toMatch(/iteration 9 has not happened yet: the run is at iteration 8/);
      await unchanged();
      expect(await workingTreeHash(repo)).toBe(tree8);
      // A person edits the tree while the run is paused.
      writeFileSync(path.join(repo, 'person.txt'), 'mine\n');
      writeFileSync(path.join(repo, 'f2.txt'), 'edited\n');
      const dirty = await rejection(rewind({ to: 4, by: 'alice' }));
      expect(dirty).toMatch(
        /changes made since the run last inspected it \(2 file\(s\): f2\.txt, person\.txt\); nothing was changed.*--force/,
      );
      await unchanged();
      expect(readFileSync(path.join(repo, 'person.txt'), 'utf8')).toBe('mine\n');
      const dirtyTree = await workingTreeHash(repo);

      // With --force: the person's changes are kept in a checkpoint, then the tree goes back to 4.
      const ack = await rewind({ to: 4, by: 'alice', reason: 'the ORM was a mistake', directive: 'Try it without the ORM.', force: true });
      expect(ack.message).toMatch(/rewound from iteration 8 to iteration 4/);
      const s = await status(handle);
      expect(s.iteration).toBe(4);
      expect(s.paused).toBe(true); // a person's pause stays
      expect(s.consecutiveFailures).toBe(1);
      expect(s.totalDoneSignals).toBe(0);
      expect(s.recentIterations.map((r) => r.iteration)).toEqual([1, 2, 3, 4]);
      expect(s.pendingDirectives).toBe(1);
      expect(s.checkpoints?.list.map((c) => c.iteration)).toEqual([1, 2, 4]);
      expect(s.checkpoints?.lastTree).toBe(c4?.tree);
      expect(s.checkpoints?.rewinds).toEqual([
        expect.objectContaining({
          from: 8,
          to: 4,
          by: 'alice',
          reason: 'the ORM was a mistake',
          directive: 'Try it without the ORM.',
          checkpoint: c4?.commit,
          interruptedAgent: false,
        }),
      ]);
      expect(await workingTreeHash(repo)).toBe(c4?.tree);
      expect(existsSync(path.join(repo, 'f5.txt')) || existsSync(path.join(repo, 'person.txt'))).toBe(false);
      expect(readFileSync(path.join(repo, 'step.txt'), 'utf8')).toBe('4\n');
      // The tree before the rewind is recoverable: the person's edits on top of checkpoint 8.
      const saved = s.checkpoints?.rewinds[0]?.savedRef ?? '';
      expect(refs(repo, wf)).toEqual(['1', '2', '4', 'before-rewind-1']);
      expect(git(repo, 'rev-parse', `${saved}^{tree}`)).toBe(dirtyTree);
      expect(git(repo, 'rev-parse', `${saved}^`)).toBe(c8?.commit);
      expect(git(repo, 'diff', '--name-only', c8?.commit ?? '', saved)).toBe('f2.txt\nperson.txt');

      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'alice' }] });
      const outcome = await handle.result();
      expect(outcome.status).toBe('max_iterations_reached');
      const end = await status(handle);
      expect(end.recentIterations.map((r) => r.iteration)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      // 9 and 10 have no step in the scenario: they change nothing.
      expect(end.checkpoints?.list.map((c) => c.iteration)).toEqual([1, 2, 4, 5, 6, 7, 8]);
      // The history shows the rewinds: the refused one (the person's edits) and the one that
      // happened, and the activities that looked at the tree and restored it. Validator
      // rejections (no checkpoint, not happened yet) never entered history.
      const history = await handle.fetchHistory();
      const events = history.events ?? [];
      expect(
        events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'rewind'),
      ).toHaveLength(2);
      const completed = events
        .map((e) => e.workflowExecutionUpdateCompletedEventAttributes?.outcome)
        .filter((o) => o !== undefined && o !== null);
      expect(completed.filter((o) => o?.failure).map((o) => o?.failure?.message)).toEqual([
        expect.stringMatching(/^rewind: the working tree has changes/),
      ]);
      expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'rewindRepo')).toHaveLength(2);
    });
    // Iterations 5.. ran again, and the prompt of the new 5 carries the directive and the rewind.
    expect(
      agentCalls(repo)
        .filter((c) => c.role === 'iteration')
        .map((c) => c.iteration),
    ).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 5, 6, 7, 8, 9, 10]);
    const prompt5 = readFileSync(path.join(repo, '.vigil/runs', wf, 'iteration-0005.prompt.md'), 'utf8');
    expect(prompt5).toContain('Try it without the ORM.');
    expect(prompt5).toMatch(/rewound by alice from iteration 8 to iteration 4/);
    const prompt6 = readFileSync(path.join(repo, '.vigil/runs', wf, 'iteration-0006.prompt.md'), 'utf8');
    // One-shot: no longer a directive in the next prompt; the run memory keeps that it was given,
    // and that iterations 5-8 were set aside.
    expect(prompt6).not.toContain('HUMAN DIRECTIVE');
    expect(prompt6).toContain('- iteration 5: directive from alice: "Try it without the ORM."');
    expect(prompt6).toMatch(
      new RegExp(
        [
          /- iteration 4: rewound by alice from iteration 8 to 4 \(the ORM was a mistake\): iterations 5-8 set as/.source,
          /ide; that tree is kept under refs\/vigil\/\S+\/before-rewind-1/.source,
        ].join(''),
      ),
    );
    expect(prompt6).not.toMatch(/- iteration [78]: /);
  });

  it('a rewind of a running iteration cancels the agent call first and keeps its partial work', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'a.txt': '1\n' } },
        { writes: { 'a.txt': '2\n' } },
        { writes: { 'partial.txt': 'half done\n' }, sleepMs: 120_000 },
      ],
    });
    const wf = uniqueId('rewind-running');
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 10 }), wf);
      await waitForStatus(handle, (s) => s.iteration === 3 && s.agentRunning, 120_000);
      // The agent has written its partial work before it sleeps.
      const deadline = Date.now() + 30_000;
      while (!existsSync(path.join(repo, 'partial.txt')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      const ack = await handle.executeUpdate(rewindUpdate, { args: [{ to: 1, by: 'bob', reason: 'wrong turn' }] });
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(ack.message).toMatch(/rewound from iteration 3 to iteration 1/);
      const s = await status(handle);
      expect(s.checkpoints?.rewinds[0]).toMatchObject({ from: 3, to: 1, interruptedAgent: true });
      expect(readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('1\n');
      expect(existsSync(path.join(repo, 'partial.txt'))).toBe(false);
      const saved = s.checkpoints?.rewinds[0]?.savedRef ?? '';
      expect(git(repo, 'show', `${saved}:partial.txt`)).toBe('half done');
      await waitForStatus(handle, (x) => x.iteration === 3 && x.agentRunning, 120_000);
      // The call is scheduled before its agent starts: stop once the agent has really begun.
      const begun = Date.now() + 60_000;
      while (agentCalls(repo).filter((c) => c.role === 'iteration').length < 5 && Date.now() < begun)
        await new Promise((r) => setTimeout(r, 100));
      await handle.executeUpdate(stopUpdate, { args: [{ now: true, by: 'bob' }] });
      expect((await handle.result()).status).toBe('stopped');
    });
    expect(
      agentCalls(repo)
        .filter((c) => c.role === 'iteration')
        .map((c) => c.iteration),
    ).toEqual([1, 2, 3, 2, 3]);
    rmSync(repo, { recursive: true, force: true });
  });
});
