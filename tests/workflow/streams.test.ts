/**
 * Parallel streams with the default knobs but `parallelStreams`: a run split into tasks runs each
 * as a child run in a git worktree of its own, at once, merges them into its tree, judges the
 * merged tree with its own completion check and delivers it on its run branch as one commit. Two
 * tasks that change the same lines reach a merge iteration that resolves them (with
 * mergeConflicts=person, a pause that shows both sides); a task waits for the tasks it depends on
 * to be merged; a task whose stream fails is retried once, then dead-lettered, while the others
 * finish; a pause and a stop of the run reach every stream.
 *
 * The agent is the scripted one behind a small wrapper that picks each stream's scenario by its
 * worktree (`<task>.json`, `parent.json` for the run itself) and records every call's start and
 * end, which is how the overlap of the streams is measured.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import type { TaskList } from '../../schemas/tasks.js';
import { waitingFor } from '../../cli/console/model.js';
import { pauseUpdate, resumeUpdate, rewindUpdate, stopUpdate } from '../../workflows/messages.js';
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
import { patient } from '../support/patience.js';

// Where the wrapper records its calls: writable from inside the agent's sandbox (the default, auto).
const LOGS = mkdtempSync(path.join(os.tmpdir(), 'vigil-streams-log-'));
// The scenarios live beside the wrapper: the sandbox shows the agent program's folder (read-only).
const WRAPPER = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-streams-agent-')), 'stream-agent.cjs');
writeFileSync(
  WRAPPER,
  `#!/usr/bin/env node
// Runs the scripted agent with the scenario of the stream whose worktree this is, and records the call.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const [agent, scenarios] = process.argv.slice(2);
const m = /[\\\\/]worktrees[\\\\/][^\\\\/]+[\\\\/]([^\\\\/]+)$/.exec(process.cwd());
// The log is named after the run's repository (a stream's worktree lies in it), in a folder the worker shows the sandbox writable.
const repo = process.cwd().replace(/[\\\\/]\\.vigil[\\\\/]worktrees[\\\\/].*$/, '');
const logFile = path.join(${JSON.stringify(LOGS)}, path.basename(repo) + '.jsonl');
const who = m ? m[1] : 'parent';
const start = Date.now();
const seen = fs.readdirSync(process.cwd()).filter((f) => !f.startsWith('.')).sort();
const r = spawnSync(agent, ['--scenario', path.join(scenarios, who + '.json')], { stdio: 'inherit' });
const role = process.env.VIGIL_ROLE || 'iteration';
const iteration = process.env.VIGIL_ITERATION || null;
fs.appendFileSync(logFile, JSON.stringify({ who, role, iteration, start, end: Date.now(), seen }) + '\\n');
process.exit(r.status === null ? 1 : r.status);
`,
);
chmodSync(WRAPPER, 0o755);

// The worker (in this process) shows the agent's sandbox the scripted agent's build (read-only; the
// wrapper runs it from an argument, not as the program) and the call log (writable).
process.env.VIGIL_SANDBOX_READABLE = [process.env.VIGIL_SANDBOX_READABLE, ROOT].filter(Boolean).join(':');
process.env.VIGIL_SANDBOX_WRITABLE = [process.env.VIGIL_SANDBOX_WRITABLE, LOGS].filter(Boolean).join(':');
const shared = fileWorker('streams');

interface Call {
  who: string;
  role: string;
  iteration: string | null;
  start: number;
  end: number;
  seen: string[];
}

const ROLES = {
  checklist: { default: { output: '[{"id": "REQ-1", "title": "the work exists", "priority": "critical", "verify": "read the files"}]\n' } },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - it is there\n' } },
  reviewer: { default: { output: 'VERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
  council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } },
};

/** A stream (or the run itself) that writes `files` in its first iteration, waits `ms` in each, and claims at its third. */
const builder = (files: Record<string, string>, ms = 0): ScenarioInput => ({
  version: 1,
  iterations: [
    { writes: files, sleepMs: ms },
    { appends: { 'notes.md': '' }, sleepMs: ms },
    { claim: 'file', sleepMs: ms },
  ],
  default: { claim: 'file' },
  roles: ROLES,
});

/** A repository, its scenarios (by stream), the run's input with `knobs` (every other one at its default) and its tasks. */
function streamsRun(
  scenarios: Record<string, ScenarioInput>,
  tasks: TaskList,
  knobs: Partial<Knobs>,
): { repo: string; input: ReturnType<typeof runInput>; log: string } {
  const repo = makeRepo({ files: { 'README.md': '# s\n\nNotes.\n' } });
  const dir = mkdtempSync(path.join(path.dirname(WRAPPER), 'scenarios-'));
  for (const [who, s] of Object.entries(scenarios)) writeFileSync(path.join(dir, `${who}.json`), JSON.stringify(s));
  const log = path.join(LOGS, `${path.basename(repo)}.jsonl`);
  mkdirSync(LOGS, { recursive: true });
  const input = {
    ...runInput(repo, path.join(dir, 'parent.json'), { maxIterations: 6, ...knobs, agentCommand: [WRAPPER, SCRIPTED_AGENT, dir] }),
    tasks,
  };
  return { repo, input, log };
}

const callsOf = (log: string): Call[] =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Call)
    : [];
const task = (id: string, dependsOn: string[] = []): TaskList[number] => ({
  id,
  title: `task ${id}`,
  items: [{ id: 'REQ-1', title: `${id}.txt exists`, priority: 'high', verify: '' }],
  dependsOn,
});

/** The most agent processes of different streams that ran at one moment. */
function peakOverlap(calls: readonly Call[]): number {
  const edges = calls
    .flatMap((c) => [
      { at: c.start, d: 1 },
      { at: c.end, d: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let peak = 0;
  for (const e of edges) peak = Math.max(peak, (now += e.d));
  return peak;
}

describe('parallel streams', () => {
  it(
    'three independent tasks with parallelStreams=3 run at once in three worktrees, are merged, judged on the merged tree and ' +
      'delivered as one commit',
    async () => {
      const { repo, input, log } = streamsRun(
        {
          a: builder({ 'a.txt': 'A\n' }, 2000),
          b: builder({ 'b.txt': 'B\n' }, 2000),
          c: builder({ 'c.txt': 'C\n' }, 2000),
          parent: builder({}),
        },
        [task('a'), task('b'), task('c')],
        { parallelStreams: 3 },
      );
      const head = git(repo, 'rev-parse', 'HEAD');
      const id = uniqueId('streams');
      const started = Date.now();
      const handle = await startRun(shared.env, shared.taskQueue, input, id);
      const outcome = await handle.result();
      const wallMs = Date.now() - started;
      expect(outcome.status).toBe('council_approved');
      const s = await status(handle);
      expect(s.streams?.map((t) => [t.task, t.state, t.merged, t.childId, t.branch])).toEqual(
        ['a', 'b', 'c'].map((t) => [t, 'done', true, `${id}--${t}`, `vigil/${id}--${t}`]),
      );

      // The streams' agents ran at the same time, each in its own worktree.
      const calls = callsOf(log);
      const streamCalls = calls.filter((c) => c.who !== 'parent' && c.role === 'iteration');
      expect(new Set(streamCalls.map((c) => c.who))).toEqual(new Set(['a', 'b', 'c']));
      const firsts = ['a', 'b', 'c'].map((w) => streamCalls.find((c) => c.who === w && c.iteration === '1') as Call);
      const overlap = Math.min(...firsts.map((c) => c.end)) - Math.max(...firsts.map((c) => c.start));
      const peak = peakOverlap(streamCalls);
      const busyMs = ['a', 'b', 'c']
        .map((w) => calls.filter((c) => c.who === w))
        .map((cs) => Math.max(...cs.map((c) => c.end)) - Math.min(...cs.map((c) => c.start)));
      console.log(
        `streams: first iterations overlap ${overlap} ms, peak ${peak} agents at once; streams busy ${busyMs.join('/')} ms (sum ` +
          `${busyMs.reduce((x, y) => x + y, 0)} ms), run wall time ${wallMs} ms`,
      );
      expect(overlap).toBeGreaterThan(0);
      expect(peak).toBe(3);
      // The run's own completion check judged the merged tree: its council sat in the run's repository, on all three files.
      expect(
        calls.some((c) => c.who === 'parent' && c.role === 'council' && ['a.txt', 'b.txt', 'c.txt'].every((f) => c.seen.includes(f))),
      ).toBe(true);

      // Delivered on its run branch as one commit on the person's HEAD, with all three tasks' work; worktrees gone.
      const branch = `vigil/${id}`;
      expect(git(repo, 'rev-list', '--count', `${head}..${branch}`)).toBe('1');
      expect(git(repo, 'rev-parse', `${branch}^`)).toBe(head);
      expect(['a.txt', 'b.txt', 'c.txt'].map((f) => git(repo, 'show', `${branch}:${f}`))).toEqual(['A', 'B', 'C']);
      expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
      expect(
        git(repo, 'worktree', 'list', '--porcelain')
          .split('\n')
          .filter((l) => l.startsWith('worktree ')),
      ).toEqual([`worktree ${repo}`]);
    },
  );

  it('two tasks that change the same lines: the merge conflicts, and the run’s merge iteration resolves it', async () => {
    const { repo, input, log } = streamsRun(
      {
        x: builder({ 'shared.txt': 'x says hello\n' }),
        y: builder({ 'shared.txt': 'y says goodbye\n' }),
        parent: builder({ 'shared.txt': 'x says hello\ny says goodbye\n' }),
      },
      [task('x'), task('y')],
      { parallelStreams: 2 },
    );
    const id = uniqueId('streams-conflict');
    const outcome = await (await startRun(shared.env, shared.taskQueue, input, id)).result();
    expect(outcome.status).toBe('council_approved');
    // The integration line carries the conflict as git left it (whichever stream was done first was merged first); both sides were written out for the agent.
    const line = `refs/vigil/streams/${id}`;
    const marked = git(repo, 'show', `${line}:shared.txt`);
    expect(
      [
        /^<<<<<<< [0-9a-f]+\nx says hello\n=======\ny says goodbye\n>>>>>>> [0-9a-f]+$/,
        /^<<<<<<< [0-9a-f]+\ny says goodbye\n=======\nx says hello\n>>>>>>> [0-9a-f]+$/,
      ].some((r) => r.test(marked)),
    ).toBe(true);
    const sidesFiles = readdirSync(path.join(repo, '.vigil/runs', id)).filter((f) => /^merge-[xy]\.md$/.test(f));
    expect(sidesFiles).toHaveLength(1);
    const sides = readFileSync(path.join(repo, '.vigil/runs', id, sidesFiles[0] ?? ''), 'utf8');
    expect(sides).toContain('x says hello');
    expect(sides).toContain('y says goodbye');
    // The run's first iteration saw the markers in its tree and left them resolved; that tree was delivered.
    const first = callsOf(log).find((c) => c.who === 'parent' && c.role === 'iteration');
    expect(first?.seen).toContain('shared.txt');
    const prompt = readFileSync(path.join(repo, '.vigil/runs', id, 'iteration-0001.prompt.md'), 'utf8');
    expect(prompt).toContain('Merge iteration: merging the parallel streams into this tree collided.');
    expect(prompt).toContain('y says goodbye');
    expect(git(repo, 'show', `vigil/${id}:shared.txt`)).toBe('x says hello\ny says goodbye');
  });

  it('with mergeConflicts=person in supervised mode, a merge that collides pauses the run with both sides shown', async () => {
    const { input } = streamsRun(
      {
        x: builder({ 'shared.txt': 'x says hello\n' }),
        y: builder({ 'shared.txt': 'y says goodbye\n' }),
        parent: builder({ 'shared.txt': 'x says hello\ny says goodbye\n' }),
      },
      [task('x'), task('y')],
      { parallelStreams: 2, mergeConflicts: 'person' },
    );
    const id = uniqueId('streams-person');
    const handle = await startRun(shared.env, shared.taskQueue, input, id);
    const s = await waitForStatus(handle, (x) => x.paused && (x.streams ?? []).every((t) => t.merged), 180_000);
    expect(s.pause?.by).toBe('vigil');
    expect(s.pause?.reason).toMatch(
      /^Merging the streams left conflict markers in the run's tree:\n- task [xy]: shared\.txt \(both sides: .*merge-[xy]\.md\)\n/,
    );
    expect(s.pause?.reason).toContain('x says hello');
    expect(s.pause?.reason).toContain('y says goodbye');
    expect(s.iteration).toBe(0);
    await handle.executeUpdate(stopUpdate, { args: [{ reason: 'seen', by: 'tester' }] });
    expect((await handle.result()).status).toBe('stopped');
  });

  it('a task starts after the task it depends on is merged; a task whose stream fails is retried once, then dead-lettered, and the others finish', async () => {
    const failing: ScenarioInput = { version: 1, iterations: [], default: { exitCode: 3, stderr: 'cannot\n' }, roles: ROLES };
    const { repo, input, log } = streamsRun(
      { a: builder({ 'a.txt': 'A\n' }), b: builder({ 'b.txt': 'B\n' }), f: failing, parent: builder({}) },
      [task('a'), task('b', ['a']), task('f')],
      { parallelStreams: 3, maxRetries: 2 },
    );
    const id = uniqueId('streams-deps');
    const handle = await startRun(shared.env, shared.taskQueue, input, id);
    const outcome = await handle.result();
    expect(outcome.status).toBe('council_approved');
    const s = await status(handle);
    expect(s.streams?.map((t) => [t.task, t.state, t.attempts, t.merged])).toEqual([
      ['a', 'done', 1, true],
      ['b', 'done', 1, true],
      ['f', 'dead_letter', 2, false],
    ]);
    expect(s.streams?.[2]?.deadLetter).toMatch(/^its stream ended failed after 2 attempt\(s\)/);
    const calls = callsOf(log);
    const aEnd = Math.max(...calls.filter((c) => c.who === 'a').map((c) => c.end));
    const bFirst = calls.find((c) => c.who === 'b' && c.role === 'iteration');
    // b started after a was done, from a tree that has a's work merged.
    expect(bFirst?.start).toBeGreaterThan(aEnd);
    expect(bFirst?.seen).toContain('a.txt');
    expect(git(repo, 'show', `vigil/${id}:a.txt`)).toBe('A');
    expect(git(repo, 'show', `vigil/${id}:b.txt`)).toBe('B');
  });

  it('without a task list, one planner call groups the checklist into tasks with a dependency; a refused plan falls back to one task per item', async () => {
    const items = ['REQ-1', 'REQ-2', 'REQ-3'].map((id, i) => ({ id, title: `part ${i + 1} exists`, priority: 'high', verify: 'read it' }));
    const verifier = { default: { output: `${items.map((i) => `ITEM ${i.id}: PASS - there`).join('\n')}\n` } };
    const planned = (plan: unknown): ScenarioInput => ({
      ...builder({}),
      roles: {
        ...ROLES,
        checklist: { default: { output: `${JSON.stringify(items)}\n` } },
        'checklist-verifier': verifier,
        planner: { default: { output: `Grouped by the files they touch.\n\`\`\`json\n${JSON.stringify(plan)}\n\`\`\`\n` } },
      },
    });
    const stream = (files: Record<string, string>): ScenarioInput => ({
      ...builder(files),
      roles: { ...ROLES, 'checklist-verifier': verifier },
    });

    // The plan: REQ-1 and REQ-2 in one task, REQ-3 after it.
    const plan = [
      { id: 'core', title: 'the core parts', items: ['REQ-1', 'REQ-2'], dependsOn: [] },
      { id: 'docs', title: 'the documentation', items: ['REQ-3'], dependsOn: ['core'] },
    ];
    const one = streamsRun({ core: stream({ 'core.txt': 'core\n' }), docs: stream({ 'docs.txt': 'docs\n' }), parent: planned(plan) }, [], {
      parallelStreams: 2,
    });
    delete (one.input as { tasks?: unknown }).tasks;
    const id = uniqueId('streams-planner');
    const handle = await startRun(shared.env, shared.taskQueue, one.input, id);
    expect((await handle.result()).status).toBe('council_approved');
    const s = await status(handle);
    expect(s.tasks).toEqual({ source: 'planner', count: 2, note: null });
    expect(s.streams?.map((t) => [t.task, t.title, t.state, t.merged, t.dependsOn])).toEqual([
      ['core', 'the core parts', 'done', true, []],
      ['docs', 'the documentation', 'done', true, ['core']],
    ]);
    const calls = callsOf(one.log);
    expect(calls.filter((c) => c.role === 'planner').map((c) => c.who)).toEqual(['parent']);
    const coreEnd = Math.max(...calls.filter((c) => c.who === 'core').map((c) => c.end));
    const docsFirst = calls.find((c) => c.who === 'docs' && c.role === 'iteration');
    expect(docsFirst?.start).toBeGreaterThan(coreEnd);
    expect(docsFirst?.seen).toContain('core.txt');
    // Each stream's checklist is its task's items.
    const child = async (t: string): Promise<string[]> =>
      ((await status(shared.env.client.workflow.getHandle(`${id}--${t}`))).quality?.checklist ?? []).map((i) => i.id);
    expect(await child('core')).toEqual(['REQ-1', 'REQ-2']);
    expect(await child('docs')).toEqual(['REQ-3']);

    // A plan that leaves REQ-3 out is refused: each checklist item is a task of its own, and status says why.
    const bad = streamsRun(
      {
        'REQ-1': stream({ 'r1.txt': '1\n' }),
        'REQ-2': stream({ 'r2.txt': '2\n' }),
        'REQ-3': stream({ 'r3.txt': '3\n' }),
        parent: planned(plan.map((t) => (t.id === 'docs' ? { ...t, items: [] } : t))),
      },
      [],
      { parallelStreams: 3 },
    );
    delete (bad.input as { tasks?: unknown }).tasks;
    const badId = uniqueId('streams-planner-refused');
    const badHandle = await startRun(shared.env, shared.taskQueue, bad.input, badId);
    expect((await badHandle.result()).status).toBe('council_approved');
    const b = await status(badHandle);
    expect(b.tasks).toEqual({
      source: 'checklist',
      count: 3,
      note: 'the planner answer: checklist item REQ-3 is in no task; each checklist item is a task of its own',
    });
    expect(b.streams?.map((t) => [t.task, t.state, t.merged])).toEqual(['REQ-1', 'REQ-2', 'REQ-3'].map((t) => [t, 'done', true]));
    expect(git(bad.repo, 'show', `vigil/${badId}:r3.txt`)).toBe('3');
  });

  it(
    'a stream that waits for a person shows on the run and in its inbox; the run’s resume reaches it; a rewind of the run names ' +
      'the streams to rewind',
    async () => {
      const failing: ScenarioInput = { version: 1, iterations: [], default: { exitCode: 3, stderr: 'cannot\n' }, roles: ROLES };
      const slow: ScenarioInput = { version: 1, iterations: [], default: { appends: { 'slow.txt': '.\n' }, sleepMs: 1500 }, roles: ROLES };
      const { input } = streamsRun({ w: failing, s: slow, parent: builder({}) }, [task('w'), task('s')], {
        parallelStreams: 2,
        maxIterations: 50,
      });
      const id = uniqueId('streams-waits');
      const handle = await startRun(shared.env, shared.taskQueue, input, id);
      // The failing stream escalates (the same failure again and again: a dead letter) and pauses; the run is told.
      const st = await waitForStatus(handle, (x) => (x.streams ?? []).some((t) => t.waiting), 180_000);
      const w = st.streams?.find((t) => t.task === 'w');
      expect(w?.waiting?.reason).toMatch(/^escalation \(/);
      expect(st.paused).toBe(false);
      expect(waitingFor(st, new Date())).toMatchObject({
        kind: 'stream',
        why: expect.stringContaining(`stream w (${id}--w): escalation (`),
      });
      const child = shared.env.client.workflow.getHandle(`${id}--w`);
      expect((await status(child)).pause?.by).toBe('vigil');
      // A rewind of the run while its streams run says which runs to rewind instead.
      const rewind = await handle.executeUpdate(rewindUpdate, { args: [{ to: 1, by: 'tester' }] }).then(
        () => null,
        (err: unknown) => String((err as Error & { cause?: Error }).cause?.message ?? err),
      );
      expect(rewind).toContain(`rewind a stream instead (\`vigil rewind ${id}--<task> --to N\``);
      // The run is not paused, yet its resume reaches the stream that waits (and only it).
      const ack = await handle.executeUpdate(resumeUpdate, { args: [{ by: 'tester' }] });
      expect(ack).toMatchObject({ changed: true, message: 'resumed 1 stream(s) waiting for a person: w' });
      const resumedBy = async (h: typeof child): Promise<string[]> =>
        (await h.fetchHistory()).events
          ?.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'resume')
          .map((e) =>
            new TextDecoder().decode(e.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0]?.data ?? new Uint8Array()),
          ) ?? [];
      await expect.poll(() => resumedBy(child), { timeout: patient(30_000) }).toEqual(['{"by":"tester"}']);
      expect(await resumedBy(shared.env.client.workflow.getHandle(`${id}--s`))).toEqual([]);
      await handle.executeUpdate(stopUpdate, { args: [{ reason: 'seen', by: 'tester', now: true }] });
      expect((await handle.result()).status).toBe('stopped');
    },
  );

  it('a pause of the run pauses every stream, and stop --now stops them all', async () => {
    const slow: ScenarioInput = { version: 1, iterations: [], default: { appends: { 'slow.txt': '.\n' }, sleepMs: 1500 }, roles: ROLES };
    const { input } = streamsRun({ p: slow, q: slow, parent: builder({}) }, [task('p'), task('q')], {
      parallelStreams: 2,
      maxIterations: 50,
    });
    const id = uniqueId('streams-stop');
    const handle = await startRun(shared.env, shared.taskQueue, input, id);
    await waitForStatus(handle, (s) => (s.streams ?? []).filter((t) => t.state === 'in_progress').length === 2, 120_000);
    const child = (t: string) => shared.env.client.workflow.getHandle(`${id}--${t}`);
    await waitForStatus(child('p'), (s) => s.iteration >= 1, 60_000);
    await waitForStatus(child('q'), (s) => s.iteration >= 1, 60_000);
    await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'lunch', by: 'tester' }] });
    for (const t of ['p', 'q']) {
      const s = await waitForStatus(child(t), (x) => x.paused, 30_000);
      expect(s.pause?.reason).toBe('the run is paused: lunch');
    }
    const stopAt = Date.now();
    await handle.executeUpdate(stopUpdate, { args: [{ reason: 'enough', by: 'tester', now: true }] });
    const outcome = await handle.result();
    expect(outcome.status).toBe('stopped');
    for (const t of ['p', 'q']) {
      const o = await child(t).result();
      expect(o.status).toBe('stopped');
      expect(o.reason).toBe('stopped by tester: the run was stopped: enough (now)');
    }
    console.log(`streams: every stream stopped ${Date.now() - stopAt} ms after the run's stop --now`);
    const s = await status(handle);
    expect(s.streams?.map((t) => t.state)).toEqual(['dead_letter', 'dead_letter']);
  });
});
