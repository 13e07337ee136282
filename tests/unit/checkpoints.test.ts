/**
 * Owns the unit tests of rules/checkpoints.ts (ref names, retention, sealing,
 * rewind validation and the state after a rewind) and activities/checkpoints.ts (checkpoint
 * commits and working-tree restores in real git repositories).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCheckpoint, restoreWorkingTree, rewindRepo } from '../../activities/checkpoints.js';
import { workingTreeHash } from '../../activities/git.js';
import { type CheckpointRecord, type RewindRecord, type RunState } from '../../schemas/run.js';
import {
  addCheckpoint,
  checkpointRef,
  planCheckpoint,
  refComponent,
  rewindProblem,
  rewindState,
  sealCheckpoint,
  snapshotOf,
} from '../../rules/checkpoints.js';
import { git, makeRepo } from '../support/harness.js';
import { runState } from '../support/run-state.js';

const legalRef = (ref: string): boolean => {
  try {
    execFileSync('git', ['check-ref-format', ref], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

const record = (iteration: number, over: Partial<CheckpointRecord> = {}): CheckpointRecord => ({
  iteration,
  commit: `c${iteration}`,
  tree: `t${iteration}`,
  ref: checkpointRef('run', iteration),
  at: '2026-01-01T00:00:00.000Z',
  filesChanged: 1,
  filesSinceStart: iteration,
  exitCode: 0,
  tests: null,
  verdict: null,
  snapshot: null,
  ...over,
});

const state = (over: Partial<RunState> = {}): RunState => runState(over);

describe('refComponent', () => {
  it.each([
    'vigil-demo',
    'a:b',
    '..',
    '.hidden',
    'x.lock',
    'a b',
    'a~b^c:d?e*f[g\\h',
    'a@{b',
    'é日本',
    'tab\there',
    'end.',
    'a/b',
    'x'.repeat(400),
  ])('%j is a legal, single ref component', (id) => {
    const c = refComponent(id);
    expect(c).not.toContain('/');
    expect(c.length).toBeLessThanOrEqual(150);
    expect(legalRef(`refs/vigil/${c}/1`)).toBe(true);
  });

  it('keeps plain ids readable and distinct ids distinct', () => {
    expect(refComponent('vigil-demo_1')).toBe('vigil-demo_1');
    expect(refComponent('a:b')).toBe('a%3Ab');
    expect(refComponent('a.b')).not.toBe(refComponent('a_b'));
    expect(refComponent('x'.repeat(400))).not.toBe(refComponent(`${'x'.repeat(399)}y`));
    expect(() => refComponent('')).toThrow(/empty/);
  });
});

describe('retention', () => {
  it('asks for a checkpoint on top of the previous one and prunes past the bound', () => {
    const list = [record(1), record(2), record(4)];
    expect(planCheckpoint(list, 'run', 5, 3)).toEqual({
      ref: 'refs/vigil/run/5',
      parent: 'c4',
      message: expect.stringMatching(/^vigil checkpoint: run run, iteration 5\n/),
      prune: ['refs/vigil/run/1'],
    });
    expect(planCheckpoint(list, 'run', 5, 50)?.prune).toEqual([]);
    expect(planCheckpoint(list, 'run', 5, 1)?.prune).toEqual(['refs/vigil/run/1', 'refs/vigil/run/2', 'refs/vigil/run/4']);
    expect(planCheckpoint(list, 'run', 5, 0)).toBeNull();
    expect(planCheckpoint([], 'run', 1, 3)?.parent).toBeNull();
    expect(addCheckpoint(list, record(5), 3).map((c) => c.iteration)).toEqual([2, 4, 5]);
    expect(addCheckpoint(list, record(5), 1).map((c) => c.iteration)).toEqual([5]);
  });

  it('seals the latest checkpoint with the state after its iteration, once', () => {
    const s = state({ iteration: 4, consecutiveFailures: 2, checkpoints: { list: [record(2), record(4)], rewinds: [], rewindCount: 0 } });
    const sealed = sealCheckpoint(s.checkpoints.list, s);
    expect(sealed[1]?.snapshot).toMatchObject({ iteration: 4, consecutiveFailures: 2 });
    expect(sealed[0]?.snapshot).toBeNull();
    const again = sealCheckpoint(sealed, { ...s, consecutiveFailures: 9 });
    expect(again[1]?.snapshot?.consecutiveFailures).toBe(2);
    expect(sealCheckpoint(s.checkpoints.list, { ...s, iteration: 5 })[1]?.snapshot).toBeNull();
  });
});

describe('rewind', () => {
  const cp = { list: [record(2, { snapshot: null }), record(4)], rewinds: [], rewindCount: 0 };
  it('says why a target is not valid', () => {
    expect(rewindProblem(cp, 4, 4, 50)).toBeNull();
    expect(rewindProblem(cp, 3, 4, 50)).toBe(
      'iteration 3 has no checkpoint (it changed nothing, or its checkpoint was pruned: 50 are kept); checkpoints: 2, 4',
    );
    expect(rewindProblem(cp, 7, 4, 50)).toBe('iteration 7 has not happened yet: the run is at iteration 4');
    expect(rewindProblem(cp, 2, 4, 50)).toBe('checkpoint 2 has no saved state; checkpoints: 2, 4');
    expect(rewindProblem(cp, 2, 4, 0)).toMatch(/keeps no checkpoints \(knob checkpointsKept is 0\)/);
    expect(rewindProblem({ ...cp, list: [] }, 1, 4, 50)).toMatch(/the run has no checkpoints yet/);
  });

  it("restores counters, cuts the lists back, keeps spend and a person's pause, lifts an automatic one", () => {
    const at4 = state({
      iteration: 4,
      consecutiveFailures: 1,
      convergence: { lastHash: 't4', consecutiveNoChange: 0, recentHashes: ['t2', 't4'], doneSignals: 0, totalDoneSignals: 0 },
    });
    const c4 = record(4, { snapshot: snapshotOf(at4) });
    const iter = (n: number) => ({
      iteration: n,
      phase: 'ACT' as const,
      tier: 'development' as const,
      exitCode: 0,
      durationMs: 1,
      logPath: '',
      attempts: 1,
      claimed: false,
      changed: true,
      filesChangedSinceStart: n,
      treeHash: `t${n}`,
      at: '',
    });
    const now = state({
      iteration: 8,
      consecutiveFailures: 0,
      convergence: { lastHash: 't8', consecutiveNoChange: 3, recentHashes: ['t6', 't8'], doneSignals: 2, totalDoneSignals: 5 },
      recentIterations: [1, 2, 3, 4, 5, 6, 7, 8].map(iter),
      spend: { usd: 3.5, inputTokens: 10, outputTokens: 10, calls: 8 },
      pause: { reason: 'looking', by: 'alice', at: '' },
      lastFindings: 'old findings',
      checkpoints: { list: [record(2), c4, record(6), record(8)], rewinds: [], rewindCount: 0 },
    });
    const r: RewindRecord = {
      from: 8,
      to: 4,
      by: 'alice',
      reason: 'ORM',
      directive: 'no ORM',
      checkpoint: 'c4',
      savedRef: 'refs/vigil/run/before-rewind-1',
      savedCommit: 's',
      interruptedAgent: false,
      at: 'now',
    };
    const after = rewindState(now, c4, r, { text: 'no ORM', by: 'alice', at: 'now' });
    expect(after.iteration).toBe(4);
    expect(after.consecutiveFailures).toBe(1);
    expect(after.convergence).toMatchObject({ lastHash: 't4', totalDoneSignals: 0, consecutiveNoChange: 0 });
    expect(after.recentIterations.map((x) => x.iteration)).toEqual([1, 2, 3, 4]);
    expect(after.spend.usd).toBe(3.5);
    expect(after.pause?.by).toBe('alice');
    expect(after.pendingDirectives).toEqual([{ text: 'no ORM', by: 'alice', at: 'now' }]);
    expect(after.lastFindings).toMatch(/rewound by alice from iteration 8 to iteration 4 \(ORM\).*Follow the directive below/);
    expect(after.checkpoints).toMatchObject({
      list: [expect.objectContaining({ iteration: 2 }), expect.objectContaining({ iteration: 4 })],
      rewinds: [r],
      rewindCount: 1,
    });
    const autoPaused = rewindState({ ...now, pause: { reason: 'escalation', by: 'vigil', at: '' } }, c4, r, null);
    expect(autoPaused.pause).toBeNull();
    expect(autoPaused.pendingDirectives).toEqual([]);
  });
});

describe('checkpoint activities', () => {
  it('commits a tree under a ref with the previous checkpoint as parent, pruning in the same transaction', async () => {
    const repo = makeRepo();
    writeFileSync(path.join(repo, 'a.txt'), '1\n');
    const t1 = await workingTreeHash(repo);
    const one = await createCheckpoint(repo, t1, null, 'refs/vigil/r/1', 'vigil checkpoint: run r, iteration 1\n');
    writeFileSync(path.join(repo, 'a.txt'), '2\n');
    const t2 = await workingTreeHash(repo);
    const two = await createCheckpoint(repo, t2, one.commit, 'refs/vigil/r/2', 'two\n', ['refs/vigil/r/1']);
    expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/vigil/')).toBe('refs/vigil/r/2');
    expect(git(repo, 'rev-parse', `${two.commit}^`)).toBe(one.commit);
    expect(git(repo, 'log', '-1', '--format=%an <%ae>', two.commit)).toBe('Vigil <vigil@vigil.invalid>');
    expect(git(repo, 'status', '--porcelain')).toBe('?? a.txt');
  });

  it('restores a working tree: changed, added, deleted files and a file that became a folder; the index and .vigil untouched', async () => {
    const repo = makeRepo({ files: { 'README.md': '# r\n', 'keep.txt': 'k\n', x: 'file\n' } });
    mkdirSync(path.join(repo, '.vigil'), { recursive: true });
    writeFileSync(path.join(repo, '.vigil/own.txt'), 'vigil\n');
    const start = await workingTreeHash(repo);
    const indexBefore = readFileSync(path.join(repo, '.git/index'));
    writeFileSync(path.join(repo, 'keep.txt'), 'changed\n');
    writeFileSync(path.join(repo, 'new.txt'), 'new\n');
    execFileSync('rm', [path.join(repo, 'x')]);
    mkdirSync(path.join(repo, 'x/deep'), { recursive: true });
    writeFileSync(path.join(repo, 'x/deep/f.txt'), 'f\n');
    const later = await workingTreeHash(repo);
    expect(await restoreWorkingTree(repo, start)).toBeGreaterThan(0);
    expect(await workingTreeHash(repo)).toBe(start);
    expect(readFileSync(path.join(repo, 'x'), 'utf8')).toBe('file\n');
    expect(existsSync(path.join(repo, 'new.txt'))).toBe(false);
    expect(readFileSync(path.join(repo, '.vigil/own.txt'), 'utf8')).toBe('vigil\n');
    expect(readFileSync(path.join(repo, '.git/index')).equals(indexBefore)).toBe(true);
    await restoreWorkingTree(repo, later);
    expect(readFileSync(path.join(repo, 'x/deep/f.txt'), 'utf8')).toBe('f\n');
  });

  it(
    'rewindRepo refuses a tree changed since the last inspection (nothing changed), saves and restores otherwise, and finishes a ' +
      'retried attempt',
    async () => {
      const repo = makeRepo();
      writeFileSync(path.join(repo, 'a.txt'), '1\n');
      const t1 = await workingTreeHash(repo);
      const c1 = await createCheckpoint(repo, t1, null, 'refs/vigil/r/1', 'one\n');
      writeFileSync(path.join(repo, 'a.txt'), '2\n');
      const t2 = await workingTreeHash(repo);
      const c2 = await createCheckpoint(repo, t2, c1.commit, 'refs/vigil/r/2', 'two\n');
      writeFileSync(path.join(repo, 'mine.txt'), 'person\n');
      const input = {
        repoPath: repo,
        lastTree: t2,
        target: { commit: c1.commit, tree: t1 },
        latest: c2.commit,
        savedRef: 'refs/vigil/r/before-rewind-1',
        message: 'saved\n',
        force: false,
        drop: ['refs/vigil/r/2'],
      };
      expect(await rewindRepo(input)).toEqual({ ok: false, files: ['mine.txt'], count: 1 });
      expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/vigil/')).toBe('refs/vigil/r/1\nrefs/vigil/r/2');
      expect(existsSync(path.join(repo, 'mine.txt'))).toBe(true);
      const ok = await rewindRepo({ ...input, force: true });
      expect(ok).toMatchObject({ ok: true, restoredTree: t1 });
      expect(await workingTreeHash(repo)).toBe(t1);
      expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/vigil/')).toBe('refs/vigil/r/1\nrefs/vigil/r/before-rewind-1');
      expect(git(repo, 'show', 'refs/vigil/r/before-rewind-1:mine.txt')).toBe('person');
      expect(git(repo, 'rev-parse', 'refs/vigil/r/before-rewind-1^')).toBe(c2.commit);
      // A retry of the same rewind (its saved ref exists) only makes sure the tree is restored.
      expect(await rewindRepo(input)).toMatchObject({ ok: true, changedFiles: 0 });
    },
  );
});
