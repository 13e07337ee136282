/**
 * What the `vigil` commands print with `--json`: one schema per command, so a script can rely on
 * the shape (tests/e2e/json-output.test.ts runs every command and parses its output with these).
 * A command that prints one answer prints one JSON document; a command that streams (`watch`,
 * `start --wait`, `logs`, `logs -f`) prints JSON lines, one object per line, each with a `kind`.
 *
 * The CLI builds its output typed by these (`import type`: the schemas are not loaded to print).
 * Not bundled into the workflow sandbox: no workflow code imports this module.
 */
import { z } from 'zod';
import { GateResultSchema, ReviewRecordSchema } from './gates.js';
import { SENT_MESSAGES } from './message-verbs.js';
import {
  CheckpointRecordSchema,
  CompletionCheckSchema,
  CompletionVerdictSchema,
  EscalationRecordSchema,
  EvidenceRecordSchema,
  IterationRecordSchema,
  LadderStateSchema,
  OutcomeSchema,
  PauseInfoSchema,
  RewindRecordSchema,
  VerdictSchema,
} from './run.js';
import { SandboxModeSchema } from './sandbox.js';
import { RunStatusSchema, StatusSnapshotSchema } from './status.js';

/** What a finished run ended with, as the CLI shows it. */
export const CliOutcomeSchema = OutcomeSchema.pick({ status: true, reason: true, exitCode: true }).extend({
  notes: z.array(z.string()).optional(),
});

// ---------------------------------------------------------------------------------------------
// status, list

/** `vigil status --json`: the snapshot when a worker answered, else what Temporal itself knows. */
export const StatusJsonSchema = z.union([
  StatusSnapshotSchema.extend({
    workerAnswered: z.literal(true),
    temporalStatus: z.string(),
    gatesRunning: z.array(z.string()).nullable(),
    /** The live pollers of the run's host queue (only for a running run with a host). */
    hostPollers: z.array(z.string()).optional(),
  }),
  z.object({
    workflowId: z.string(),
    status: z.string(),
    iteration: z.number().int().nullable(),
    phase: z.null(),
    tier: z.null(),
    paused: z.boolean(),
    pause: z.null(),
    consecutiveNoChange: z.null(),
    outcome: CliOutcomeSchema.omit({ notes: true }).nullable(),
    invalidMessages: z.array(z.never()),
    workerAnswered: z.literal(false),
    workflowTaskFailing: z.string().nullable(),
    gatesRunning: z.null(),
    temporalStatus: z.string(),
  }),
]);
export type StatusJson = z.infer<typeof StatusJsonSchema>;

export const ListRowSchema = z.object({
  workflowId: z.string(),
  runId: z.string(),
  /** Temporal's own status (RUNNING, COMPLETED, TERMINATED, ...). */
  temporalStatus: z.string(),
  /** The VigilStatus search attribute: the run's status, or its outcome once finished; null without search attributes. */
  status: z.string().nullable(),
  iteration: z.number().int().nullable(),
  repo: z.string().nullable(),
  startTime: z.string(),
  closeTime: z.string().nullable(),
  /** A run with attempts (`vigil start --attempts K`): its phase, how many, the winner, and whether it waits for a person's pick. */
  attempts: z
    .object({ phase: z.string(), k: z.number().int(), winner: z.number().int().nullable(), waitingForPick: z.boolean() })
    .nullable()
    .optional(),
});
export type ListRow = z.infer<typeof ListRowSchema>;
/** `vigil list --json`: the runs, newest first. */
export const ListJsonSchema = z.array(ListRowSchema);

// ---------------------------------------------------------------------------------------------
// Following a run: watch, start --wait (JSON lines)

const line = { text: z.string() };

/**
 * One line of `vigil watch --json` (and of `vigil start --wait --json` after its `started` line):
 * what happened, with the record it came from, and `text`, the line `watch` prints for it.
 */
export const FollowEventSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('watching'), workflowId: z.string(), historyUrl: z.string(), ...line }),
  z.object({ kind: z.literal('iteration'), iteration: IterationRecordSchema, ...line }),
  z.object({ kind: z.literal('claim_refused'), completion: CompletionVerdictSchema, ...line }),
  z.object({
    kind: z.literal('checklist'),
    items: z.number().int().nullable(),
    heldOut: z.number().int().nullable(),
    problem: z.string().nullable(),
    ...line,
  }),
  z.object({ kind: z.literal('gates'), iteration: z.number().int(), gates: z.array(GateResultSchema), ...line }),
  z.object({ kind: z.literal('review'), review: ReviewRecordSchema, ...line }),
  z.object({
    kind: z.literal('refused_before_council'),
    iteration: z.number().int(),
    gates: z.array(z.string()),
    reason: z.string(),
    ...line,
  }),
  /** A council round; `votes` are the lines of each member's vote and reason (and the devil's advocate's). */
  z.object({ kind: z.literal('council'), verdict: VerdictSchema, votes: z.array(z.string()), ...line }),
  z.object({ kind: z.literal('escalation'), escalation: EscalationRecordSchema, ...line }),
  z.object({ kind: z.literal('tier_change'), change: LadderStateSchema.shape.changes.element, ...line }),
  z.object({ kind: z.literal('check'), check: CompletionCheckSchema, ...line }),
  z.object({ kind: z.literal('evidence'), evidence: EvidenceRecordSchema, ...line }),
  z.object({ kind: z.literal('status'), status: RunStatusSchema, paused: z.boolean(), ...line }),
  /** Temporal could not be reached; the command keeps waiting. */
  z.object({ kind: z.literal('unreachable'), ...line }),
  /** The run is there but no worker answers its status query yet. */
  z.object({ kind: z.literal('no_worker'), status: z.string().nullable(), iteration: z.number().int().nullable(), ...line }),
  z.object({
    kind: z.literal('finished'),
    outcome: CliOutcomeSchema.nullable(),
    temporalStatus: z.string(),
    exitCode: z.number().int(),
    ...line,
  }),
]);
export type FollowEvent = z.infer<typeof FollowEventSchema>;

/** The first line of `vigil start --json`: the run started (more lines follow with `--wait`, as `watch --json` prints them). */
export const StartedJsonSchema = z.object({
  kind: z.literal('started'),
  workflowId: z.string(),
  prd: z.object({ path: z.string(), title: z.string() }),
  repoPath: z.string(),
  host: z.string(),
  /** The task queue of the run's host (its agent, git and tests). */
  hostTaskQueue: z.string(),
  /** The PRD and repository are on another machine: not checked from here. */
  remote: z.boolean(),
  historyUrl: z.string(),
  /** Vigil's search attributes the namespace lacks (the run starts without them). */
  missingSearchAttributes: z.array(z.string()),
  /** No worker polls the host's queue: the run waits until one does (null: could not tell). */
  hostWorkerMissing: z.boolean().nullable(),
});
export type StartedJson = z.infer<typeof StartedJsonSchema>;

/** `vigil wait --json`: what was awaited and what came of it. */
export const WaitJsonSchema = z.object({
  workflowId: z.string(),
  for: z.enum(['terminal', 'paused']),
  /** The awaited state was reached (false: the run finished without pausing). */
  reached: z.boolean(),
  status: z.enum(['paused', 'finished']),
  pause: PauseInfoSchema.nullable(),
  outcome: CliOutcomeSchema.nullable(),
  exitCode: z.number().int(),
});
export type WaitJson = z.infer<typeof WaitJsonSchema>;

// ---------------------------------------------------------------------------------------------
// Messages: pause, resume, stop, input, review, budget, waive; rewind

export const MessageAckSchema = z.object({
  changed: z.boolean(),
  message: z.string(),
  status: RunStatusSchema,
  iteration: z.number().int(),
  paused: z.boolean(),
});

/** `vigil pause|resume|stop|input|review|budget|waive --json`: the run's acknowledgement, or (with --signal) that the signal was recorded. */
export const MessageJsonSchema = z.object({
  workflowId: z.string(),
  /** The message's name (`forceReview` for `vigil review`): a sent row of the message table (schemas/message-verbs.ts). */
  message: z.enum(SENT_MESSAGES),
  /** Who sent it (`--by`, else this machine's user). */
  by: z.string(),
  /** The run acknowledged it (an update); false for a signal, recorded but unacknowledged. */
  acknowledged: z.boolean(),
  ack: MessageAckSchema.nullable(),
  /** `vigil input`: the directive's id (resend it with `--id` to have it taken once). */
  directiveId: z.string().optional(),
});
export type MessageJson = z.infer<typeof MessageJsonSchema>;

/** `vigil rewind --json`: the running run taken back, or (`--fork`) the new run started from a checkpoint. */
export const RewindJsonSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('rewound'), workflowId: z.string(), to: z.number().int(), by: z.string(), ack: MessageAckSchema }),
  z.object({
    kind: z.literal('forked'),
    workflowId: z.string(),
    to: z.number().int(),
    by: z.string(),
    forkId: z.string(),
    commit: z.string(),
    restoredPaths: z.number().int(),
    savedRef: z.string(),
  }),
]);
export type RewindJson = z.infer<typeof RewindJsonSchema>;

/** `vigil checkpoints --json`. */
export const CheckpointsJsonSchema = z.object({
  workflowId: z.string(),
  iteration: z.number().int(),
  repoPath: z.string(),
  refPrefix: z.string(),
  kept: z.number().int(),
  list: z.array(CheckpointRecordSchema.omit({ snapshot: true })),
  rewinds: z.array(RewindRecordSchema),
  lastTree: z.string().nullable(),
});
export type CheckpointsJson = z.infer<typeof CheckpointsJsonSchema>;

// ---------------------------------------------------------------------------------------------
// logs (JSON lines)

/** One line of `vigil logs --json` (with or without -f): which iteration, its text as read (JSON keeps control characters escaped), notes, the end. */
export const LogEventSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('iteration'), workflowId: z.string(), iteration: z.number().int(), where: z.string(), path: z.string() }),
  z.object({ kind: z.literal('text'), iteration: z.number().int(), offset: z.number().int(), text: z.string() }),
  z.object({ kind: z.literal('note'), text: z.string() }),
  z.object({ kind: z.literal('finished'), workflowId: z.string(), outcome: CliOutcomeSchema.nullable(), temporalStatus: z.string() }),
]);
export type LogEvent = z.infer<typeof LogEventSchema>;

// ---------------------------------------------------------------------------------------------
// schedule

export const ScheduleRowSchema = z.object({
  name: z.string(),
  cron: z.string().nullable(),
  paused: z.boolean(),
  next: z.string().nullable(),
  last: z.string().nullable(),
  repo: z.string().nullable(),
});
export type ScheduleRow = z.infer<typeof ScheduleRowSchema>;
/** `vigil schedule list --json`. */
export const ScheduleListJsonSchema = z.array(ScheduleRowSchema);

/** `vigil schedule describe --json` (and `create --json`, which describes the schedule it made). */
export const ScheduleJsonSchema = z.object({
  name: z.string(),
  cron: z.string().nullable(),
  timezone: z.string(),
  prd: z.string().nullable(),
  repo: z.string().nullable(),
  workflowIdPrefix: z.string(),
  overlap: z.string(),
  paused: z.boolean(),
  note: z.string().nullable(),
  nextRuns: z.array(z.string()),
  running: z.array(z.string()),
  recent: z.array(z.object({ scheduledAt: z.string(), takenAt: z.string(), workflowId: z.string() })),
  runs: z.number().int(),
  skippedOverlap: z.number().int(),
});
export type ScheduleJson = z.infer<typeof ScheduleJsonSchema>;

/** `vigil schedule pause|unpause --json`. */
export const ScheduleStateJsonSchema = z.object({
  name: z.string(),
  paused: z.boolean(),
  changed: z.boolean(),
  note: z.string().nullable(),
});
export type ScheduleStateJson = z.infer<typeof ScheduleStateJsonSchema>;

/** `vigil schedule trigger --json`: started (its run id), skipped under the overlap policy (the runs still going), or not started yet. */
export const ScheduleTriggerJsonSchema = z.object({
  name: z.string(),
  result: z.enum(['started', 'skipped', 'pending']),
  workflowId: z.string().nullable(),
  running: z.array(z.string()),
});
export type ScheduleTriggerJson = z.infer<typeof ScheduleTriggerJsonSchema>;

/** `vigil schedule delete --json`: the runs it started that go on. */
export const ScheduleDeleteJsonSchema = z.object({ name: z.string(), deleted: z.literal(true), running: z.array(z.string()) });
export type ScheduleDeleteJson = z.infer<typeof ScheduleDeleteJsonSchema>;

// ---------------------------------------------------------------------------------------------
// doctor

export const DoctorCheckSchema = z.object({
  name: z.string(),
  ok: z.boolean(),
  /** Counts toward the exit code. */
  required: z.boolean(),
  detail: z.string(),
  /** What to do about it; null when ok. */
  fix: z.string().nullable(),
});
export type DoctorCheck = z.infer<typeof DoctorCheckSchema>;

/** `vigil doctor --json`. */
export const DoctorJsonSchema = z.object({
  ok: z.boolean(),
  /** The provider asked for, or null for all. */
  provider: z.string().nullable(),
  providers: z.array(
    z.object({
      provider: z.string(),
      binaryPath: z.string().nullable(),
      version: z.string().nullable(),
      helpOk: z.boolean(),
      advertised: z.array(z.string()),
      missing: z.array(z.string()),
      credentials: z.array(z.object({ name: z.string(), set: z.boolean() })),
      problem: z.string().nullable(),
      installHint: z.string().nullable(),
      ready: z.boolean(),
    }),
  ),
  temporal: z.union([
    z.object({
      ok: z.literal(true),
      address: z.string(),
      namespace: z.string(),
      pollers: z.number().int(),
      taskQueue: z.string().optional(),
      /** The open runs against the release window (rules/release-window.ts), or why they could not be listed. */
      runs: z
        .union([
          z.object({
            open: z.number().int(),
            outside: z.array(z.object({ workflowId: z.string(), release: z.string(), certain: z.boolean() })),
            finishBeforeNext: z.number().int(),
            unknown: z.array(z.object({ workflowId: z.string(), release: z.string() })),
          }),
          z.object({ problem: z.string() }),
        ])
        .optional(),
    }),
    z.object({ ok: z.literal(false), problem: z.string() }),
  ]),
  checks: z.array(DoctorCheckSchema),
  /** The isolation a worker on this machine would apply to agent calls. */
  sandbox: z.object({ mode: SandboxModeSchema, applies: z.boolean(), detail: z.string() }),
  /** Whether each provider's endpoint was sent a one-token request with its key (--deep). */
  deep: z.boolean(),
  /** What the doctor did not check, in words (offline: the endpoints and keys). */
  notChecked: z.array(z.string()).min(1),
});

/** `vigil doctor --agent-command CMD --json` (or `--provider P --contract --json`): each role's check; `ok` when every required role's is. */
export const DoctorContractJsonSchema = z.object({
  ok: z.boolean(),
  checks: z
    .array(
      z.object({
        role: z.string(),
        answer: z.string(),
        ok: z.boolean(),
        /** A wrong answer of a required role fails the check (exit 1); an optional role's is a warning. */
        required: z.boolean(),
        /** When an optional role is asked and what a wrong answer costs; null for a required role. */
        optional: z.string().nullable(),
        detail: z.string(),
        fix: z.string().nullable(),
      }),
    )
    .min(1),
});
