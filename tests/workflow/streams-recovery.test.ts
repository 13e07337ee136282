/**
 * A parallel stream whose worktree is deleted while it runs, with the default knobs but
 * `parallelStreams` (the sandbox on, supervised): the stream pauses with advice that says what
 * works — `vigil resume` makes Vigil's worktree again from the stream's last checkpoint — and the
 * run's resume does so: the stream goes on from that checkpoint, and the run ends approved with
 * both streams merged. And a stream stopped on its own (here one whose worktree was deleted) is
 * tried once more from a fresh worktree, as docs/how-a-run-works.md says of any stream that does
 * not end done, while the run's own stop still stops its streams for good (tests/workflow/streams.test.ts).
 *
 * The test deletes the worktree between the stream's iterations' checkpoints, as a person's
 * `rm -rf` or a clean-up script would. The agent is the scripted one behind a small wrapper that
 * picks each stream's scenario by its worktree (`<task>.json`, `parent.json` for the run itself).
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TaskList } from '../../schemas/tasks.js';
import { resumeUpdate, stopUpdate } from '../../workflows/messages.js';
import {
  fileWorker,
  git,
  makeRepo,
  ROOT,
  runInput,
  SCRIPTED_AGENT,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  type ScenarioInput,
} from '../support/harness.js';

// The scenarios live beside the wrapper: the sandbox shows the agent program's folder (read-only).
const WRAPPER = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-recovery-agent-')), 'stream-agent.cjs');
writeFileSync(
  WRAPPER,
  `#!/usr/bin/env node
// Runs the scripted agent with the scenario of the stream whose worktree this is.
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const [agent, scenarios] = process.argv.slice(2);
const m = /[\\\\/]worktrees[\\\\/][^\\\\/]+[\\\\/]([^\\\\/]+)$/.exec(process.cwd());
const r = spawnSync(agent, ['--scenario', path.join(scenarios, (m ? m[1] : 'parent') + '.json')], { stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
`,
);
chmodSync(WRAPPER, 0o755);
// The worker (in this process) shows the agent's sandbox the scripted agent's build (read-only).
process.env.VIGIL_SANDBOX_READABLE = [process.env.VIGIL_SANDBOX_READABLE, ROOT].filter(Boolean).join(':');
const shared = fileWorker('streams-recovery');

const ROLES = {
  checklist: { default: { output: '[{"id": "REQ-1", "title": "the work exists", "priority": "critical", "verify": "read the files"}]\n' } },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - it is there\n' } },
  reviewer: { default: { output: 'VERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
  council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } },
};

/** Writes `files` in iteration 1, then works slowly (`ms` an iteration) until iteration `claimAt`, where it claims. */
const builder = (files: Record<string, string>, ms: number, claimAt: number): ScenarioInput => ({
  version: 1,
  iterations: [
    { writes: files, sleepMs: 300 },
    ...Array.from({ length: claimAt - 2 }, () => ({ appends: { 'notes.md': '.\n' }, sleepMs: ms })),
    { claim: 'file' },
  ],
  default: { claim: 'file' },
  roles: ROLES,
});

const task = (id: string): TaskList[number] => ({
  id,
  title: `task ${id}`,
  items: [{ id: 'REQ-1', title: `${id}.txt exists`, priority: 'high', verify: '' }],
  dependsOn: [],
});

function streamsRun(scenarios: Record<string, ScenarioInput>, tasks: TaskList): { repo: string; input: ReturnType<typeof runInput> } {
  const repo = makeRepo({ files: { 'README.md': '# s\n\nNotes.\n' } });
  const dir = mkdtempSync(path.join(path.dirname(WRAPPER), 'scenarios-'));
  for (const [who, s] of Object.entries(scenarios)) writeFileSync(path.join(dir, `${who}.json`), JSON.stringify(s));
  // Every knob at its default but parallelStreams (and a cap on iterations, so a broken run ends).
  const input = {
    ...runInput(repo, path.join(dir, 'parent.json'), {
      maxIterations: 12,
      parallelStreams: 2,
      agentCommand: [WRAPPER, SCRIPTED_AGENT, dir],
    }),
    tasks,
  };
  return { repo, input };
}

const worktreeOf = (repo: string, id: string, t: string): string => path.join(repo, '.vigil', 'worktrees', id, t);

/** Waits until the stream has a checkpoint and its next agent call runs, then deletes its worktree. */
async function deleteWorktreeMidRun(id: string, repo: string, t: string): Promise<number> {
  const child = shared.env.client.workflow.getHandle(`${id}--${t}`);
  const s = await waitForStatus(child, (x) => (x.checkpoints?.list.length ?? 0) >= 1 && x.agentRunning, 120_000);
  const dir = worktreeOf(repo, id, t);
  expect(existsSync(path.join(dir, `${t}.txt`))).toBe(true);
  rmSync(dir, { recursive: true, force: true });
  return s.checkpoints?.list.at(-1)?.iteration ?? 0;
}

describe('a stream whose worktree is deleted mid-run', () => {
  it(
    'pauses with advice that works: the run’s resume makes the worktree again from its last checkpoint, and the run ends ' +
      'approved with both streams merged',
    async () => {
      // l's first iteration writes l.txt (in its first checkpoint); nothing later writes it again.
      const { repo, input } = streamsRun(
        { l: builder({ 'l.txt': 'L' }, 4000, 5), o: builder({ 'o.txt': 'O' }, 300, 3), parent: builder({}, 300, 3) },
        [task('l'), task('o')],
      );
      const id = uniqueId('streams-lost');
      const handle = await startRun(shared.env, shared.taskQueue, input, id);
      const child = shared.env.client.workflow.getHandle(`${id}--l`);
      const checkpoint = await deleteWorktreeMidRun(id, repo, 'l');
      expect(checkpoint).toBeGreaterThanOrEqual(1);
      const paused = await waitForStatus(child, (x) => x.paused, 120_000);
      // The advice names what works, and no longer asks the person to restore a folder only Vigil can make.
      expect(paused.pause?.by).toBe('vigil');
      expect(paused.pause?.reason).toMatch(/^repository unavailable: /);
      expect(paused.pause?.reason).toContain(
        `\`vigil resume ${id}--l\` (or \`vigil resume ${id}\`) makes it again from its last checkpoint`,
      );
      expect(paused.pause?.reason).not.toContain('Restore the repository');
      // The run shows the stream waiting, with the same advice.
      const run = await waitForStatus(handle, (x) => (x.streams ?? []).some((t) => t.task === 'l' && t.waiting), 60_000);
      expect(run.streams?.find((t) => t.task === 'l')?.waiting?.reason).toContain('makes it again from its last checkpoint');
      expect(existsSync(worktreeOf(repo, id, 'l'))).toBe(false);
      const resumedAt = Date.now();
      const ack = await handle.executeUpdate(resumeUpdate, { args: [{ by: 'tester' }] });
      expect(ack.message).toBe('resumed 1 stream(s) waiting for a person: l');
      // The stream goes on in its worktree made again: its files those of its last checkpoint.
      await waitForStatus(child, (x) => !x.paused && x.iteration > paused.iteration, 120_000);
      console.log(`streams-recovery: the stream went on ${Date.now() - resumedAt} ms after the run's resume`);
      expect(readFileSync(path.join(worktreeOf(repo, id, 'l'), 'l.txt'), 'utf8')).toBe('L');
      const outcome = await handle.result();
      expect(outcome.status).toBe('council_approved');
      const lo = await child.result();
      expect(lo.status).toBe('council_approved');
      const s = await status(handle);
      expect(s.streams?.map((t) => [t.task, t.state, t.attempts, t.merged !== null])).toEqual([
        ['l', 'done', 1, true],
        ['o', 'done', 1, true],
      ]);
      // Both streams' work is on the run's branch; the recreated worktree is gone with the others.
      expect(['l.txt', 'o.txt'].map((f) => git(repo, 'show', `vigil/${id}:${f}`))).toEqual(['L', 'O']);
      expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain('.vigil/worktrees');
    },
  );

  it(
    'stopped on its own, it is tried once more from a fresh worktree ' +
      '(the run’s stop alone stops a stream for good), and the run ends approved',
    async () => {
      const { repo, input } = streamsRun(
        { l: builder({ 'l.txt': 'L' }, 4000, 4), o: builder({ 'o.txt': 'O' }, 300, 3), parent: builder({}, 300, 3) },
        [task('l'), task('o')],
      );
      const id = uniqueId('streams-stopped');
      const handle = await startRun(shared.env, shared.taskQueue, input, id);
      const child = shared.env.client.workflow.getHandle(`${id}--l`);
      await deleteWorktreeMidRun(id, repo, 'l');
      const first = (await child.describe()).runId;
      const paused = await waitForStatus(child, (x) => x.paused, 120_000);
      expect(paused.pause?.reason).toContain(`or \`vigil stop ${id}--l\` ends this attempt, and task l is tried once more`);
      await child.executeUpdate(stopUpdate, { args: [{ reason: 'start it again', by: 'tester', now: false }] });
      // The task's second attempt: the same stream id, a new execution, in a fresh worktree.
      const again = await waitForStatus(handle, (x) => (x.streams ?? []).some((t) => t.task === 'l' && t.attempts === 2), 120_000);
      expect(again.streams?.find((t) => t.task === 'l')?.state).toBe('in_progress');
      expect((await child.describe()).runId).not.toBe(first);
      expect((await handle.result()).status).toBe('council_approved');
      const s = await status(handle);
      expect(s.streams?.map((t) => [t.task, t.state, t.attempts, t.deadLetter])).toEqual([
        ['l', 'done', 2, null],
        ['o', 'done', 1, null],
      ]);
      expect(['l.txt', 'o.txt'].map((f) => git(repo, 'show', `vigil/${id}:${f}`))).toEqual(['L', 'O']);
    },
  );
});
