/**
 * The task queue of a run split into parallel streams: where the tasks come from (a person's file,
 * the PRD checklist, a planning agent's answer), which are ready to start (their dependencies done
 * and merged, at most N streams at once), how a stream's end moves its task (done, failed and
 * retried, dead letter — and the tasks that depend on a dead letter with it), and in which order
 * done tasks are merged. Pure functions: no I/O, imported by the workflow and the CLI.
 */
import type { ChecklistItem } from '../schemas/gates.js';
import {
  MAX_TASKS,
  PlanSchema,
  type PlannedTask,
  TaskListSchema,
  type TaskList,
  type TaskQueue,
  type TaskRecord,
  type TaskSpec,
} from '../schemas/tasks.js';
import { parseChecklistFile } from './checklist/file.js';

/** Streams a task gets before it is a dead letter: one retry after a failed stream. */
export const TASK_ATTEMPTS = 2;

const DONE_STATUSES: readonly string[] = ['council_approved', 'completion_promise_fulfilled', 'already_satisfied'];

export type TasksParse = { ok: true; tasks: TaskList } | { ok: false; error: string };

const zodProblems = (issues: readonly { path: PropertyKey[]; message: string }[], fileName: string): string =>
  issues
    .slice(0, 5)
    .map((i) => `${fileName}: ${i.path.length ? `task ${i.path.map(String).join('.')}: ` : ''}${i.message}`)
    .join('; ');

/**
 * A task list a person wrote: JSON (an array of `{id, title, items?, dependsOn?}`, or
 * `{"tasks": [...]}`; items as in a checklist file) when the file starts with `[` or `{`, else
 * Markdown — one `## <id>: <title>` heading per task, an optional `Depends on: a, b` line, and the
 * task's checklist items as list lines (the checklist file's format: `- [ ] REQ-1 (critical):
 * title — how to verify`). Every problem names the file (and the line, for Markdown).
 */
export function parseTasksFile(text: string, fileName: string): TasksParse {
  const body = text.startsWith('\ufeff') ? text.slice(1) : text;
  const first = body.trimStart()[0];
  let raw: unknown;
  if (first === '[' || first === '{') {
    try {
      raw = JSON.parse(body);
    } catch (err) {
      return { ok: false, error: `${fileName}: not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (raw && typeof raw === 'object' && !Array.isArray(raw)) raw = (raw as { tasks?: unknown }).tasks;
  } else {
    const md = markdownTasks(body, fileName);
    if (!md.ok) return md;
    raw = md.tasks;
  }
  const parsed = TaskListSchema.safeParse(raw);
  return parsed.success ? { ok: true, tasks: parsed.data } : { ok: false, error: zodProblems(parsed.error.issues, fileName) };
}

function markdownTasks(text: string, fileName: string): { ok: true; tasks: unknown[] } | { ok: false; error: string } {
  const lines = text.split(/\r?\n/);
  const tasks: { id: string; title: string; dependsOn: string[]; itemLines: string[]; line: number }[] = [];
  for (const [i, line] of lines.entries()) {
    const heading = /^##\s+(.+?)\s*$/.exec(line);
    if (heading) {
      const m = /^`?([^\s:`]+)`?\s*[:—–-]\s*(.+)$/.exec(heading[1] as string);
      if (!m) return { ok: false, error: `${fileName}:${i + 1}: a task heading is "## <id>: <title>"` };
      tasks.push({ id: m[1] as string, title: (m[2] as string).trim(), dependsOn: [], itemLines: [], line: i + 1 });
      continue;
    }
    const task = tasks.at(-1);
    if (!task) continue;
    const deps = /^\s*(?:depends on|depends|after)\s*:\s*(.*)$/i.exec(line);
    if (deps) {
      task.dependsOn.push(
        ...(deps[1] as string)
          .split(/[,\s]+/)
          .map((d) => d.replace(/`/g, '').trim())
          .filter(Boolean),
      );
      continue;
    }
    task.itemLines.push(line);
  }
  if (!tasks.length) return { ok: false, error: `${fileName}: no task found (one "## <id>: <title>" heading per task)` };
  const out: unknown[] = [];
  for (const t of tasks) {
    let items: ChecklistItem[] = [];
    if (t.itemLines.some((l) => /^\s*[-*+]\s+/.test(l))) {
      const r = parseChecklistFile(t.itemLines.join('\n'), `${fileName} (task ${t.id}, from line ${t.line})`);
      if (!r.ok) return { ok: false, error: r.error };
      items = r.items;
    }
    out.push({ id: t.id, title: t.title, items, dependsOn: t.dependsOn });
  }
  return { ok: true, tasks: out };
}

/** Tasks derived from the PRD checklist: each item a task of its own, none depending on another. */
export function tasksFromChecklist(items: readonly ChecklistItem[]): TaskList {
  return items.slice(0, MAX_TASKS).map((i) => ({ id: i.id, title: i.title, items: [i], dependsOn: [] }));
}

export type PlanParse = { ok: true; tasks: PlannedTask[] } | { ok: false; error: string };

/**
 * A planning agent's answer (role `planner`, docs/agent-contract.md): the last fenced `json`
 * block, else the last top-level array, read as tasks whose `items` name the run's checklist
 * items by id. With a checklist (`checklistIds` not empty) every item must be in exactly one
 * task and no task may name an item the checklist does not have; without one, tasks carry no
 * items (each task's title is its one requirement).
 */
export function parsePlannerAnswer(text: string, checklistIds: readonly string[]): PlanParse {
  const fenced = [...text.matchAll(/```json\s*\n([\s\S]*?)```/g)].at(-1)?.[1];
  const candidate = fenced ?? lastTopLevelArray(text);
  if (candidate === undefined || candidate === null) return { ok: false, error: 'the planner answered no JSON task list' };
  let raw: unknown;
  try {
    raw = JSON.parse(candidate.trim());
  } catch (err) {
    return { ok: false, error: `the planner answer: not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) raw = (raw as { tasks?: unknown }).tasks;
  const parsed = PlanSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, error: zodProblems(parsed.error.issues, 'the planner answer') };
  const known = new Set(checklistIds);
  const owner = new Map<string, string>();
  for (const t of parsed.data) {
    for (const item of t.items) {
      if (!known.size)
        return {
          ok: false,
          error: `the planner answer: task "${t.id}" names checklist item "${item}", and this run has no checklist (leave "items" empty)`,
        };
      if (!known.has(item))
        return {
          ok: false,
          error: `the planner answer: task "${t.id}" names "${item}", which is not an item of the checklist (${[...known].slice(0, 12).join(', ')})`,
        };
      const other = owner.get(item);
      if (other !== undefined)
        return {
          ok: false,
          error: `the planner answer: checklist item "${item}" is in task "${other}" and in task "${t.id}" (each item belongs to one task)`,
        };
      owner.set(item, t.id);
    }
  }
  const missing = [...known].filter((id) => !owner.has(id));
  if (missing.length)
    return {
      ok: false,
      error:
        `the planner answer: checklist ` +
        `item${missing.length > 1 ? 's' : ''} ${missing.slice(0, 12).join(', ')} ${missing.length > 1 ? 'are' : 'is'} in no task`,
    };
  return { ok: true, tasks: parsed.data };
}

/** A planner's tasks with their checklist items resolved (parsePlannerAnswer checked every id). */
export function tasksFromPlan(plan: readonly PlannedTask[], items: readonly ChecklistItem[]): TaskList {
  const byItem = new Map(items.map((i) => [i.id, i]));
  return plan.map((t) => ({ id: t.id, title: t.title, items: t.items.flatMap((id) => byItem.get(id) ?? []), dependsOn: [...t.dependsOn] }));
}

/**
 * The planner's prompt: the PRD's path (it reads the PRD itself), the checklist items it splits
 * (held-out items are never shown), how many streams run at once, and the answer format.
 */
export function plannerPrompt(p: { prdPath: string; items: readonly ChecklistItem[]; parallelStreams: number; maxTasks?: number }): string {
  const max = p.maxTasks ?? MAX_TASKS;
  const itemLines = p.items.map((i) => `- ${i.id} (${i.priority}): ${i.title}`);
  return [
    'You are planning how a coding run is split into tasks that separate agents build in parallel, each ' +
      'in its own git worktree and branch, merged back in dependency order.',
    `Read the PRD at ${p.prdPath} and the repository. Do not change any file.`,
    '',
    p.items.length
      ? 'The requirements checklist (every item must go to exactly one task):'
      : 'This run has no requirements checklist: give each task a title that says what it must deliver, and leave "items" empty.',
    ...itemLines,
    '',
    `Up to ${p.parallelStreams} tasks run at once. Group items that touch the same files or depend on each other into one ` +
      `task, so that parallel tasks rarely edit the same lines; make a task depend on another (dependsOn) only when it needs ` +
      `that task's work merged first. At most ${max} tasks; fewer, larger tasks are better than many small ones.`,
    '',
    'Answer with a JSON array in a ```json block, last in your answer:',
    '```json',
    '[{"id": "api", "title": "the HTTP API", "items": ["REQ-1", "REQ-2"], "dependsOn": []}, {"id": ' +
      '"cli", "title": "the command line", "items": ["REQ-3"], "dependsOn": ["api"]}]',
    '```',
    'Task ids are short: letters, digits, _, . and - (they name branches).',
  ].join('\n');
}

function lastTopLevelArray(text: string): string | null {
  const end = text.lastIndexOf(']');
  if (end < 0) return null;
  for (let start = text.lastIndexOf('[', end); start >= 0; start = text.lastIndexOf('[', start - 1)) {
    const slice = text.slice(start, end + 1);
    try {
      if (Array.isArray(JSON.parse(slice))) return slice;
    } catch {
      // not yet the whole array: look further left
    }
  }
  return null;
}

/** The queue a run starts its streams with: every task pending, nothing merged yet. */
export function newTaskQueue(tasks: TaskList, source: TaskQueue['source'], base: string | null): TaskQueue {
  return {
    source,
    tasks: tasks.map((t) => ({
      ...t,
      state: 'pending',
      attempts: 0,
      childId: null,
      branch: null,
      outcome: null,
      merged: false,
      spendUsd: 0,
      deadLetter: null,
      waiting: null,
    })),
    base,
    merged: base,
    conflicts: [],
    applied: false,
    note: null,
  };
}

const byId = (q: TaskQueue): Map<string, TaskRecord> => new Map(q.tasks.map((t) => [t.id, t]));

/** Tasks that may start now: pending (or failed, with an attempt left), every dependency done and merged, in list order, up to `n` streams running at once. */
export function readyTasks(q: TaskQueue, n: number): TaskRecord[] {
  const tasks = byId(q);
  const running = q.tasks.filter((t) => t.state === 'in_progress').length;
  const room = Math.max(0, n - running);
  if (room === 0) return [];
  return q.tasks
    .filter(
      (t) =>
        (t.state === 'pending' || t.state === 'failed') &&
        t.dependsOn.every((d) => tasks.get(d)?.state === 'done' && tasks.get(d)?.merged === true),
    )
    .slice(0, room);
}

const update = (q: TaskQueue, id: string, f: (t: TaskRecord) => TaskRecord): TaskQueue => ({
  ...q,
  tasks: q.tasks.map((t) => (t.id === id ? f(t) : t)),
});

/** The stream of a task started: in progress, one attempt more. */
export function taskStarted(q: TaskQueue, id: string, childId: string, branch: string): TaskQueue {
  return update(q, id, (t) => ({ ...t, state: 'in_progress', attempts: t.attempts + 1, childId, branch, outcome: null }));
}

/**
 * A task's stream ended. Done when it ended done; otherwise failed, to be started again while it
 * has attempts left, else a dead letter — and so is every task that depends on it (directly or
 * not): they could never start. A stream stopped on its own is retried too with `retryStopped`
 * (the stream-recovery era; before it, a stopped stream was never retried); the run's own stop
 * passes no attempts, so its streams are dead letters.
 */
export function taskEnded(
  q: TaskQueue,
  id: string,
  outcome: { status: string; reason: string; spendUsd: number },
  attempts = TASK_ATTEMPTS,
  retryStopped = false,
): TaskQueue {
  const t = byId(q).get(id);
  if (!t || t.state !== 'in_progress') return q;
  const spend = {
    spendUsd: t.spendUsd + Math.max(0, outcome.spendUsd),
    outcome: { status: outcome.status.slice(0, 60), reason: outcome.reason.slice(0, 500) },
    waiting: null,
  };
  if (DONE_STATUSES.includes(outcome.status)) return update(q, id, (x) => ({ ...x, ...spend, state: 'done' }));
  if (t.attempts < attempts && (retryStopped || outcome.status !== 'stopped'))
    return update(q, id, (x) => ({ ...x, ...spend, state: 'failed' }));
  return deadLetter(
    update(q, id, (x) => ({ ...x, ...spend })),
    id,
    `its stream ended ${outcome.status} after ${t.attempts} attempt(s): ${outcome.reason}`.slice(0, 500),
  );
}

/**
 * A stream told its run it waits for a person, or no longer does: recorded on its task while the
 * task is in progress (a late word from a stream that already ended changes nothing).
 */
export function taskWaiting(q: TaskQueue, id: string, waiting: { reason: string; at: string } | null): TaskQueue {
  const t = byId(q).get(id);
  if (!t || t.state !== 'in_progress') return q;
  return update(q, id, (x) => ({ ...x, waiting: waiting ? { reason: waiting.reason.slice(0, 600), at: waiting.at } : null }));
}

/** The streams that wait for a person now: the run's resume reaches them. */
export function waitingTasks(q: TaskQueue): TaskRecord[] {
  return q.tasks.filter((t) => t.state === 'in_progress' && t.waiting !== null && t.childId !== null);
}

/**
 * What a stream tells its run about waiting for a person: a pause Vigil made (an escalation, a gate, its budget), or none
 * (a person's pause is theirs to know).
 */
export function streamWaitingOf(pause: { reason: string; by: string; at: string } | null): { reason: string; at: string } | null {
  return pause && pause.by === 'vigil' ? { reason: pause.reason.slice(0, 600), at: pause.at } : null;
}

/** A task given up on, and with it every task that waits for it. */
export function deadLetter(q: TaskQueue, id: string, why: string): TaskQueue {
  let next = update(q, id, (t) => ({ ...t, state: 'dead_letter', deadLetter: why.slice(0, 500) }));
  for (let changed = true; changed;) {
    changed = false;
    const dead = new Set(next.tasks.filter((t) => t.state === 'dead_letter').map((t) => t.id));
    for (const t of next.tasks) {
      const blocker = t.dependsOn.find((d) => dead.has(d));
      if ((t.state === 'pending' || t.state === 'failed') && blocker) {
        next = update(next, t.id, (x) => ({ ...x, state: 'dead_letter', deadLetter: `it depends on ${blocker}, a dead letter` }));
        changed = true;
      }
    }
  }
  return next;
}

/** The next done task to merge: done, not merged, its dependencies merged, in list order. */
export function nextMerge(q: TaskQueue): TaskRecord | null {
  const tasks = byId(q);
  return q.tasks.find((t) => t.state === 'done' && !t.merged && t.dependsOn.every((d) => tasks.get(d)?.merged === true)) ?? null;
}

/** A task's branch is merged: the integration line moves to `commit`. */
export function taskMerged(q: TaskQueue, id: string, commit: string): TaskQueue {
  return { ...update(q, id, (t) => ({ ...t, merged: true })), merged: commit };
}

/** Every stream is over: nothing pending or in progress, every done task merged. */
export function streamsSettled(q: TaskQueue): boolean {
  return q.tasks.every((t) => t.state === 'dead_letter' || (t.state === 'done' && t.merged));
}

/** What the streams spent, summed (the run's own spend adds it). */
export const streamsSpend = (q: TaskQueue): number => q.tasks.reduce((s, t) => s + t.spendUsd, 0);

/** The child run's id: the parent's, then `--`, then the task's (deterministic: a replay or a retried start names the same stream). */
export const streamId = (parentId: string, taskId: string): string => `${parentId}--${taskId}`;

/** A stream's share of the run's budget: what is left, split over the streams that may still run (0: no budget). */
export function streamBudget(budgetUsd: number, spentUsd: number, q: TaskQueue): number {
  if (budgetUsd <= 0) return 0;
  const open = q.tasks.filter((t) => t.state === 'pending' || t.state === 'in_progress').length;
  return Math.max(0.01, (budgetUsd - spentUsd) / Math.max(1, open));
}

/** A task's checklist for its stream: its items, or its title as its one item. */
export function taskChecklist(t: TaskSpec): ChecklistItem[] {
  return t.items.length ? t.items : [{ id: `${t.id}-1`.slice(0, 64), title: t.title, priority: 'high', verify: '' }];
}

/** The directive a stream's first prompt carries: which task of the PRD is its own. */
export function taskDirective(t: TaskSpec, parentId: string): string {
  const items = taskChecklist(t).map((i) => `- ${i.id}: ${i.title}`);
  return [
    `You work on one task of this PRD, in a stream of run ${parentId}; other streams do the other tasks at the same time, in their own worktrees.`,
    `Your task: ${t.id} — ${t.title}`,
    'Its checklist:',
    ...items,
    'Do only this task; leave the rest of the PRD to the other streams.',
  ].join('\n');
}

/** The task's stream, if it ended now without being done, would be started again (an attempt left). */
export function attemptLeft(q: TaskQueue, id: string, attempts = TASK_ATTEMPTS): boolean {
  const t = byId(q).get(id);
  return t !== undefined && t.state === 'in_progress' && t.attempts < attempts;
}
