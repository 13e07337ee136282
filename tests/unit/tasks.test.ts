/**
 * The task queue of parallel streams: task files (JSON and Markdown) and what they refuse, tasks
 * from the PRD checklist and from a planner's answer, which tasks are ready (dependencies done and
 * merged, at most N at once), how a stream's end moves its task (done, failed and retried, dead
 * letter, and its dependents with it), the merge order, the budget share and the stream's ids.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTasks } from '../../cli/prd.js';
import { TaskListSchema, type TaskList } from '../../schemas/tasks.js';
import {
  attemptLeft,
  nextMerge,
  newTaskQueue,
  parsePlannerAnswer,
  plannerPrompt,
  tasksFromPlan,
  parseTasksFile,
  readyTasks,
  streamBudget,
  streamId,
  streamsSettled,
  taskChecklist,
  taskDirective,
  taskEnded,
  taskMerged,
  tasksFromChecklist,
  taskStarted,
  taskWaiting,
  streamWaitingOf,
  waitingTasks,
} from '../../rules/tasks.js';

const list = (...specs: [string, string[]?][]): TaskList =>
  TaskListSchema.parse(specs.map(([id, deps]) => ({ id, title: `task ${id}`, dependsOn: deps ?? [] })));
const ids = (ts: readonly { id: string }[]): string[] => ts.map((t) => t.id);
const approved = { status: 'council_approved', reason: 'ok', spendUsd: 0.5 };
const failed = { status: 'max_iterations_reached', reason: 'cap', spendUsd: 0.25 };

describe('task files', () => {
  it('reads JSON: an array, or {"tasks": [...]}, items as in a checklist', () => {
    const json = JSON.stringify([
      { id: 'a', title: 'A', items: [{ id: 'REQ-1', title: 'one' }] },
      { id: 'b', title: 'B', dependsOn: ['a'] },
    ]);
    const r = parseTasksFile(json, 'tasks.json');
    expect(r).toEqual({
      ok: true,
      tasks: [
        { id: 'a', title: 'A', items: [{ id: 'REQ-1', title: 'one', priority: 'medium', verify: '' }], dependsOn: [] },
        { id: 'b', title: 'B', items: [], dependsOn: ['a'] },
      ],
    });
    expect(parseTasksFile(JSON.stringify({ tasks: [{ id: 'x', title: 'X' }] }), 't.json')).toMatchObject({
      ok: true,
      tasks: [{ id: 'x' }],
    });
  });

  it('reads Markdown: a heading per task, its dependencies, its checklist lines', () => {
    const md = [
      '# Tasks',
      '',
      '## api: Build the API',
      'Depends on: db, `auth`',
      '- [ ] REQ-1 (critical): GET /items answers — curl it',
      '- [ ] list is paged',
      '',
      '## db — The schema',
      '- [high] tables exist',
      '',
      '## auth: Login',
    ].join('\n');
    const r = parseTasksFile(md, 'TASKS.md');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.tasks.map((t) => [t.id, t.title, t.dependsOn, t.items.map((i) => `${i.id}:${i.priority}:${i.title}`)])).toEqual([
      ['api', 'Build the API', ['db', 'auth'], ['REQ-1:critical:GET /items answers', 'REQ-2:medium:list is paged']],
      ['db', 'The schema', [], ['REQ-1:high:tables exist']],
      ['auth', 'Login', [], []],
    ]);
  });

  it('refuses unknown dependencies, repeated ids, cycles, bad ids and empty files, naming the file', () => {
    expect(parseTasksFile(JSON.stringify([{ id: 'a', title: 'A', dependsOn: ['z'] }]), 'f.json')).toEqual({
      ok: false,
      error: 'f.json: task 0.dependsOn: task "a" depends on "z", which is not a task of the list',
    });
    expect(
      parseTasksFile(
        JSON.stringify([
          { id: 'a', title: 'A' },
          { id: 'a', title: 'B' },
        ]),
        'f.json',
      ),
    ).toEqual({ ok: false, error: 'f.json: task 1.id: task id "a" is used twice' });
    expect(
      parseTasksFile(
        JSON.stringify([
          { id: 'a', title: 'A', dependsOn: ['b'] },
          { id: 'b', title: 'B', dependsOn: ['a'] },
          { id: 'c', title: 'C' },
        ]),
        'f.json',
      ),
    ).toEqual({ ok: false, error: 'f.json: the dependencies of "a", "b" form a cycle' });
    expect(parseTasksFile(JSON.stringify([{ id: 'a', title: 'A', dependsOn: ['a'] }]), 'f.json')).toEqual({
      ok: false,
      error: 'f.json: task 0.dependsOn: task "a" depends on itself',
    });
    expect(parseTasksFile(JSON.stringify([{ id: 'a b', title: 'A' }]), 'f.json')).toMatchObject({
      ok: false,
      error: expect.stringContaining('task ids are letters'),
    });
    expect(parseTasksFile('just prose\n', 'T.md')).toEqual({
      ok: false,
      error: 'T.md: no task found (one "## <id>: <title>" heading per task)',
    });
    expect(parseTasksFile('## no title here\n', 'T.md')).toEqual({ ok: false, error: 'T.md:1: a task heading is "## <id>: <title>"' });
    expect(parseTasksFile('[', 'f.json')).toMatchObject({ ok: false, error: expect.stringMatching(/^f\.json: not valid JSON/) });
  });
});

describe('vigil start --tasks FILE', () => {
  it('reads a Markdown or JSON file, and names the file in what it refuses', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-tasks-'));
    writeFileSync(path.join(dir, 'TASKS.md'), '## a: A\n- [ ] one\n\n## b: B\nDepends on: a\n');
    expect(readTasks('TASKS.md', dir).map((t) => [t.id, t.dependsOn, t.items.length])).toEqual([
      ['a', [], 1],
      ['b', ['a'], 0],
    ]);
    writeFileSync(path.join(dir, 'bad.json'), '[{"id": "a", "title": "A", "dependsOn": ["a"]}]');
    expect(() => readTasks('bad.json', dir)).toThrow(`${path.join(dir, 'bad.json')}: task 0.dependsOn: task "a" depends on itself`);
    expect(() => readTasks('missing.md', dir)).toThrow(`tasks file not found: ${path.join(dir, 'missing.md')}`);
  });
});

describe('tasks from the checklist and from a planner', () => {
  it('makes each checklist item a task of its own', () => {
    const t = tasksFromChecklist([
      { id: 'REQ-1', title: 'one', priority: 'high', verify: 'v' },
      { id: 'REQ-2', title: 'two', priority: 'low', verify: '' },
    ]);
    expect(t).toEqual([
      { id: 'REQ-1', title: 'one', items: [{ id: 'REQ-1', title: 'one', priority: 'high', verify: 'v' }], dependsOn: [] },
      { id: 'REQ-2', title: 'two', items: [{ id: 'REQ-2', title: 'two', priority: 'low', verify: '' }], dependsOn: [] },
    ]);
  });

  it('reads the planner’s last JSON block, or its last array', () => {
    const fenced =
      'Plan:\n```json\n[{"id": "old", "title": "x"}]\n```\nbetter:\n```json\n[{"id": "a", "title": "A"}, {"id": "b", "title": "B", "dependsOn": ["a"]}]\n```\n';
    expect(parsePlannerAnswer(fenced, [])).toMatchObject({ ok: true, tasks: [{ id: 'a' }, { id: 'b', dependsOn: ['a'] }] });
    expect(parsePlannerAnswer('tasks: [{"id": "only", "title": "O"}] done', [])).toMatchObject({ ok: true, tasks: [{ id: 'only' }] });
    expect(parsePlannerAnswer('{"tasks": [{"id": "x", "title": "X"}]}', [])).toMatchObject({ ok: true, tasks: [{ id: 'x' }] });
    expect(parsePlannerAnswer('no idea', [])).toEqual({ ok: false, error: 'the planner answered no JSON task list' });
  });

  it('holds the planner to the checklist: every item in exactly one task, none made up', () => {
    const ids3 = ['REQ-1', 'REQ-2', 'REQ-3'];
    const good =
      '```json\n[{"id": "api", "title": "API", "items": ["REQ-1", "REQ-2"]}, {"id": "cli", "title": "CLI", "items": ["REQ-3"], "dependsOn": ["api"]}]\n```';
    expect(parsePlannerAnswer(good, ids3)).toEqual({
      ok: true,
      tasks: [
        { id: 'api', title: 'API', items: ['REQ-1', 'REQ-2'], dependsOn: [] },
        { id: 'cli', title: 'CLI', items: ['REQ-3'], dependsOn: ['api'] },
      ],
    });
    const miss = parsePlannerAnswer(
      '[{"id": "api", "title": "API", "items": ["REQ-1"]}, {"id": "b", "title": "B", "items": ["REQ-2"]}]',
      ids3,
    );
    expect(miss).toEqual({ ok: false, error: 'the planner answer: checklist item REQ-3 is in no task' });
    const twice = parsePlannerAnswer(
      '[{"id": "a", "title": "A", "items": ["REQ-1", "REQ-2"]}, {"id": "b", "title": "B", "items": ["REQ-2", "REQ-3"]}]',
      ids3,
    );
    expect(twice).toEqual({
      ok: false,
      error: 'the planner answer: checklist item "REQ-2" is in task "a" and in task "b" (each item belongs to one task)',
    });
    const madeUp = parsePlannerAnswer('[{"id": "a", "title": "A", "items": ["REQ-1", "REQ-2", "REQ-3", "REQ-9"]}]', ids3);
    expect(madeUp.ok ? '' : madeUp.error).toMatch(/names "REQ-9", which is not an item of the checklist/);
    const noChecklist = parsePlannerAnswer('[{"id": "a", "title": "A", "items": ["REQ-1"]}]', []);
    expect(noChecklist.ok ? '' : noChecklist.error).toMatch(/this run has no checklist/);
    const cycle = parsePlannerAnswer(
      '[{"id": "a", "title": "A", "items": ["REQ-1", "REQ-2"], "dependsOn": ["b"]}, {"id": "b", "title": "B", "items": ["REQ-3"], "dependsOn": ["a"]}]',
      ids3,
    );
    expect(cycle.ok ? '' : cycle.error).toMatch(/form a cycle/);
    expect(parsePlannerAnswer('[{"id": "../x", "title": "A"}]', []).ok).toBe(false);
  });

  it('resolves the planner’s item ids into the checklist’s items, and tells the planner what to answer', () => {
    const items = [
      { id: 'REQ-1', title: 'one', priority: 'high' as const, verify: 'v' },
      { id: 'REQ-2', title: 'two', priority: 'low' as const, verify: '' },
    ];
    expect(tasksFromPlan([{ id: 'p', title: 'P', items: ['REQ-2', 'REQ-1'], dependsOn: [] }], items)).toEqual([
      { id: 'p', title: 'P', items: [items[1], items[0]], dependsOn: [] },
    ]);
    const prompt = plannerPrompt({ prdPath: '/r/PRD.md', items, parallelStreams: 3 });
    expect(prompt).toContain('/r/PRD.md');
    expect(prompt).toContain('- REQ-1 (high): one');
    expect(prompt).toContain('Up to 3 tasks run at once');
    expect(prompt).toContain('"dependsOn"');
    expect(plannerPrompt({ prdPath: 'P.md', items: [], parallelStreams: 2 })).toContain('leave "items" empty');
  });
});

describe('the queue', () => {
  it('starts ready tasks up to N at once, dependencies done and merged first', () => {
    let q = newTaskQueue(list(['a'], ['b'], ['c', ['a']], ['d']), 'file', 'base0');
    expect(ids(readyTasks(q, 2))).toEqual(['a', 'b']);
    q = taskStarted(q, 'a', 'run--a', 'vigil/run--a');
    q = taskStarted(q, 'b', 'run--b', 'vigil/run--b');
    expect(q.tasks[0]).toMatchObject({ state: 'in_progress', attempts: 1, childId: 'run--a', branch: 'vigil/run--a' });
    expect(ids(readyTasks(q, 2))).toEqual([]);
    expect(ids(readyTasks(q, 3))).toEqual(['d']);
    q = taskEnded(q, 'a', approved);
    // a is done but not merged: c still waits.
    expect(ids(readyTasks(q, 3))).toEqual(['d']);
    expect(nextMerge(q)?.id).toBe('a');
    q = taskMerged(q, 'a', 'm1');
    expect(q.merged).toBe('m1');
    expect(ids(readyTasks(q, 3))).toEqual(['c', 'd']);
    expect(streamsSettled(q)).toBe(false);
  });

  it('retries a failed stream once, then dead-letters the task and every task that waits for it', () => {
    let q = newTaskQueue(list(['a'], ['b', ['a']], ['c', ['b']], ['d']), 'file', null);
    q = taskStarted(q, 'a', 'r--a', 'vigil/r--a');
    q = taskEnded(q, 'a', failed);
    expect(q.tasks[0]).toMatchObject({ state: 'failed', attempts: 1, spendUsd: 0.25, outcome: { status: 'max_iterations_reached' } });
    expect(ids(readyTasks(q, 4))).toEqual(['a', 'd']);
    q = taskStarted(q, 'a', 'r--a', 'vigil/r--a');
    q = taskEnded(q, 'a', failed);
    expect(q.tasks.map((t) => [t.id, t.state, t.deadLetter])).toEqual([
      ['a', 'dead_letter', 'its stream ended max_iterations_reached after 2 attempt(s): cap'],
      ['b', 'dead_letter', 'it depends on a, a dead letter'],
      ['c', 'dead_letter', 'it depends on b, a dead letter'],
      ['d', 'pending', null],
    ]);
    expect(q.tasks[0]?.spendUsd).toBe(0.5);
    // d still runs, and the run settles once it is done and merged.
    q = taskStarted(q, 'd', 'r--d', 'vigil/r--d');
    q = taskEnded(q, 'd', approved);
    expect(streamsSettled(q)).toBe(false);
    q = taskMerged(q, 'd', 'm');
    expect(streamsSettled(q)).toBe(true);
  });

  it('does not retry a stopped stream before the stream-recovery era, and ignores the end of a task that is not running', () => {
    let q = newTaskQueue(list(['a']), 'file', null);
    expect(taskEnded(q, 'a', approved)).toBe(q);
    q = taskStarted(q, 'a', 'r--a', 'b');
    expect(taskEnded(q, 'a', { status: 'stopped', reason: 'stopped by p', spendUsd: 0 }).tasks[0]?.state).toBe('dead_letter');
  });

  it('retries a stream stopped on its own once, as any that did not end done; a second stop and the run’s stop (no attempts) dead-letter it', () => {
    const stopped = { status: 'stopped', reason: 'stopped by p', spendUsd: 0.5 };
    let q = taskStarted(newTaskQueue(list(['a'], ['b', ['a']]), 'file', 'base'), 'a', 'r--a', 'vigil/r--a');
    expect(attemptLeft(q, 'a')).toBe(true);
    expect(attemptLeft(q, 'b')).toBe(false); // not running
    q = taskEnded(q, 'a', stopped, undefined, true);
    expect(q.tasks.map((t) => [t.id, t.state])).toEqual([
      ['a', 'failed'],
      ['b', 'pending'],
    ]);
    expect(readyTasks(q, 2).map((t) => t.id)).toEqual(['a']);
    q = taskStarted(q, 'a', 'r--a', 'vigil/r--a');
    expect(attemptLeft(q, 'a')).toBe(false);
    const again = taskEnded(q, 'a', stopped, undefined, true);
    expect(again.tasks.map((t) => [t.id, t.state])).toEqual([
      ['a', 'dead_letter'],
      ['b', 'dead_letter'],
    ]);
    expect(again.tasks[0]?.deadLetter).toBe('its stream ended stopped after 2 attempt(s): stopped by p');
    expect(again.tasks[0]?.spendUsd).toBe(1);
    // The run's own stop passes no attempts: its streams are not tried again.
    const first = taskStarted(newTaskQueue(list(['a']), 'file', 'base'), 'a', 'r--a', 'vigil/r--a');
    expect(taskEnded(first, 'a', stopped, 0, true).tasks[0]?.state).toBe('dead_letter');
  });

  it('merges in dependency order', () => {
    let q = newTaskQueue(list(['a', ['b']], ['b'], ['c']), 'file', 'base');
    for (const id of ['c', 'b']) q = taskEnded(taskStarted(q, id, `r--${id}`, `vigil/r--${id}`), id, approved);
    expect(nextMerge(q)?.id).toBe('b');
    q = taskMerged(q, 'b', 'm1');
    expect(nextMerge(q)?.id).toBe('c');
    q = taskMerged(q, 'c', 'm2');
    expect(nextMerge(q)).toBeNull();
    expect(ids(readyTasks(q, 3))).toEqual(['a']);
    expect(q.merged).toBe('m2');
  });

  it('names streams after the run and shares what is left of the budget', () => {
    expect(streamId('vigil-prd-1', 'api')).toBe('vigil-prd-1--api');
    const q = newTaskQueue(list(['a'], ['b'], ['c'], ['d']), 'file', null);
    expect(streamBudget(0, 0, q)).toBe(0);
    expect(streamBudget(10, 2, q)).toBe(2);
    const t = list(['a'])[0];
    if (!t) throw new Error('no task');
    expect(taskChecklist(t)).toEqual([{ id: 'a-1', title: 'task a', priority: 'high', verify: '' }]);
    expect(taskDirective(t, 'run')).toContain('Your task: a — task a');
  });
});

describe('streams that wait for a person', () => {
  it('records what a running stream says, and forgets it when the stream ends', () => {
    let q = taskStarted(newTaskQueue(list(['a'], ['b']), 'file', 'base0'), 'a', 'run--a', 'vigil/run--a');
    const w = { reason: 'escalation (dead letter): x', at: '2026-11-27T09:00:00Z' };
    expect(taskWaiting(q, 'b', w)).toBe(q);
    q = taskWaiting(q, 'a', w);
    expect(waitingTasks(q).map((t) => [t.id, t.waiting])).toEqual([['a', w]]);
    expect(waitingTasks(taskWaiting(q, 'a', null))).toEqual([]);
    q = taskEnded(q, 'a', { status: 'stopped', reason: 'x', spendUsd: 0 });
    expect(q.tasks[0]?.waiting).toBeNull();
    expect(taskWaiting(q, 'a', w)).toBe(q);
  });

  it('counts only a pause Vigil made as waiting for a person', () => {
    expect(streamWaitingOf(null)).toBeNull();
    expect(streamWaitingOf({ reason: 'the run is paused: lunch', by: 'alice', at: 't' })).toBeNull();
    expect(streamWaitingOf({ reason: 'escalation (dead letter): x', by: 'vigil', at: 't' })).toEqual({
      reason: 'escalation (dead letter): x',
      at: 't',
    });
  });
});
