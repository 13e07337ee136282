/**
 * Tasks of a run split into parallel streams: what a person (`vigil start --tasks FILE`), the PRD
 * checklist or a planning agent gives (`TaskSpec`: an id, a title, its checklist items, the tasks
 * it depends on), and the task queue the run carries (`TaskQueue`: each task's state — pending,
 * in_progress, done, failed, dead_letter — its stream, its attempts and its dead letter).
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { ChecklistItemSchema, MAX_CHECKLIST_ITEMS } from './gates.js';
import { shared } from './shared.js';

/** At most this many tasks in a run (each a child run, a worktree and a branch). */
export const MAX_TASKS = 20;

/** A task id: part of its stream's workflow id and branch, so letters, digits, `_`, `.` and `-`. */
export const TaskIdSchema = shared('schemas/tasks:TaskIdSchema', () =>
  z
    .string()
    .min(1)
    .max(40)
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'task ids are letters, digits, _, . and - (e.g. api, T1)')
    .refine(
      (id) => !id.includes('..') && !id.endsWith('.lock') && !id.endsWith('.'),
      'a task id cannot contain "..", or end with "." or ".lock"',
    ),
);

export const TaskSpecSchema = shared('schemas/tasks:TaskSpecSchema', () =>
  z.object({
    id: TaskIdSchema,
    title: z.string().trim().min(1).max(300),
    /** The checklist items this task must meet (its stream's checklist); none: the title is its one item. */
    items: z.array(ChecklistItemSchema).max(MAX_CHECKLIST_ITEMS).default([]),
    /** Tasks that must be done and merged before this one starts. */
    dependsOn: z.array(TaskIdSchema).max(MAX_TASKS).default([]),
  }),
);
export type TaskSpec = z.infer<typeof TaskSpecSchema>;

/** Unique ids, known dependencies, none on itself, no cycle. */
function checkTaskList(tasks: readonly { id: string; dependsOn: readonly string[] }[], ctx: z.RefinementCtx): void {
  const ids = new Set<string>();
  tasks.forEach((t, i) => {
    if (ids.has(t.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `task id "${t.id}" is used twice` });
    ids.add(t.id);
  });
  tasks.forEach((t, i) => {
    for (const d of t.dependsOn) {
      if (d === t.id) ctx.addIssue({ code: 'custom', path: [i, 'dependsOn'], message: `task "${t.id}" depends on itself` });
      else if (!ids.has(d))
        ctx.addIssue({
          code: 'custom',
          path: [i, 'dependsOn'],
          message: `task "${t.id}" depends on "${d}", which is not a task of the list`,
        });
    }
  });
  // Kahn: whatever cannot be ordered sits on a cycle.
  const pending = new Map(tasks.map((t) => [t.id, new Set(t.dependsOn.filter((d) => d !== t.id && ids.has(d)))]));
  for (let progress = true; progress;) {
    progress = false;
    for (const [id, deps] of pending) {
      if ([...deps].every((d) => !pending.has(d))) {
        pending.delete(id);
        progress = true;
      }
    }
  }
  if (pending.size)
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: `the dependencies of ${[...pending.keys()].map((id) => `"${id}"`).join(', ')} form a cycle`,
    });
}

/**
 * A planning agent's task (role `planner`, docs/agent-contract.md): the run's checklist items it
 * covers named by their ids, resolved against the run's checklist by the workflow.
 */
export const PlannedTaskSchema = shared('schemas/tasks:PlannedTaskSchema', () =>
  z.object({
    id: TaskIdSchema,
    title: z.string().trim().min(1).max(300),
    items: z.array(z.string().min(1).max(64)).max(MAX_CHECKLIST_ITEMS).default([]),
    dependsOn: z.array(TaskIdSchema).max(MAX_TASKS).default([]),
  }),
);
export type PlannedTask = z.infer<typeof PlannedTaskSchema>;

export const PlanSchema = shared('schemas/tasks:PlanSchema', () =>
  z.array(PlannedTaskSchema).min(1).max(MAX_TASKS).superRefine(checkTaskList),
);

export const TaskListSchema = shared('schemas/tasks:TaskListSchema', () =>
  z.array(TaskSpecSchema).min(1).max(MAX_TASKS).superRefine(checkTaskList),
);
export type TaskList = z.infer<typeof TaskListSchema>;

/** The original's task states: pending, in progress, done, failed (retried), dead letter (given up on). */
export const TASK_STATES = ['pending', 'in_progress', 'done', 'failed', 'dead_letter'] as const;
export const TaskStateSchema = shared('schemas/tasks:TaskStateSchema', () => z.enum(TASK_STATES));
export type TaskState = z.infer<typeof TaskStateSchema>;

export const TaskRecordSchema = shared('schemas/tasks:TaskRecordSchema', () =>
  TaskSpecSchema.extend({
    state: TaskStateSchema,
    /** Streams started for it so far. */
    attempts: z.number().int().min(0),
    /** The child run of its latest stream (`<run>--<task>`), and the branch its work is delivered on. */
    childId: z.string().max(300).nullable(),
    branch: z.string().max(400).nullable(),
    /** How its latest stream ended. */
    outcome: z.object({ status: z.string().max(60), reason: z.string().max(500) }).nullable(),
    /** Its branch is merged into the run's tree. */
    merged: z.boolean(),
    /** What its streams spent (their reports, summed into the run's spend). */
    spendUsd: z.number().min(0),
    /** Why it was given up on (dead_letter), or why its merge stopped. */
    deadLetter: z.string().max(500).nullable(),
    /** Its stream waits for a person (paused by Vigil: an escalation, a gate, its budget), as the stream told the run; null: it does not. */
    waiting: z
      .object({ reason: z.string().max(600), at: z.string().max(40) })
      .nullable()
      .default(null),
  }),
);
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** What a stream tells its run when it starts or stops waiting for a person (signal `streamWaiting`). */
export const StreamWaitingSchema = shared('schemas/tasks:StreamWaitingSchema', () =>
  z.object({
    task: TaskIdSchema,
    waiting: z.object({ reason: z.string().max(600), at: z.string().max(40) }).nullable(),
  }),
);
export type StreamWaiting = z.infer<typeof StreamWaitingSchema>;

export const TaskQueueSchema = shared('schemas/tasks:TaskQueueSchema', () =>
  z.object({
    source: z.enum(['file', 'checklist', 'planner']),
    tasks: z.array(TaskRecordSchema).max(MAX_TASKS),
    /** The commit the streams started from and their merges build on (the run's integration line). */
    base: z.string().max(64).nullable(),
    /** The integration line's latest commit: the base with every merged task. */
    merged: z.string().max(64).nullable(),
    /** Merges that collided: committed with their conflict markers, resolved by the run's merge iteration (or a person). */
    conflicts: z
      .array(
        z.object({
          task: z.string().max(40),
          files: z.array(z.string().max(500)).max(50),
          sidesPath: z.string().max(4096),
          summary: z.string().max(2000),
        }),
      )
      .max(MAX_TASKS)
      .default([]),
    /** The merged tree was written into the run's working tree: the streams are over. */
    applied: z.boolean().default(false),
    /** How the tasks came to be, when it is worth saying (a planner's answer refused, so the checklist's items are the tasks). */
    note: z.string().max(600).nullable().default(null),
  }),
);
export type TaskQueue = z.infer<typeof TaskQueueSchema>;
