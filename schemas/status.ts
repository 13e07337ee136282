/**
 * The run snapshot returned by the `status` query and printed by `vigil status --json`.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { ComplexityRecordSchema } from './effort.js';
import { PullRequestStateSchema } from './pr-event.js';
import { z } from 'zod';
import { ForkStateSchema } from './fork.js';
import { AcceptanceStateSchema } from './acceptance.js';
import { shared } from './shared.js';
import { DeadLetterEntrySchema } from './dead-letter.js';
import { SandboxModeSchema, SandboxStateSchema } from './sandbox.js';
import { GateResultSchema, ReviewRecordSchema } from './gates.js';
import { TaskStateSchema } from './tasks.js';
import {
  CompletionVerdictSchema,
  EscalationRecordSchema,
  LadderStateSchema,
  NotificationStatusSchema,
  UncertaintyStateSchema,
  EvidenceRecordSchema,
  TestRunRecordSchema,
  VerdictSchema,
  InvalidMessageSchema,
  IterationRecordSchema,
  OutcomeSchema,
  PauseDeadlinesSchema,
  PauseInfoSchema,
  PhaseSchema,
  TierSchema,
  CheckpointRecordSchema,
  RewindRecordSchema,
  CompletionChecksSchema,
  ContractStateSchema,
} from './run.js';

/** `pausing`: a pause was asked for while an agent call runs; the call finishes first (the query's word; the search attribute says `paused`). */
export const RUN_STATUSES = [
  'starting',
  'running',
  'gating',
  'reviewing',
  'paused',
  'pausing',
  'backing_off',
  'waiting_for_provider',
  'stopping',
  'finished',
] as const;
export const RunStatusSchema = shared('schemas/status:RunStatusSchema', () => z.enum(RUN_STATUSES));
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const StatusSnapshotSchema = shared('schemas/status:StatusSnapshotSchema', () =>
  z.object({
    workflowId: z.string(),
    runId: z.string(),
    status: RunStatusSchema,
    iteration: z.number().int(),
    maxIterations: z.number().int(),
    phase: PhaseSchema.nullable(),
    tier: TierSchema.nullable(),
    paused: z.boolean(),
    /** `deadlines`: while the pause waits for a person, its reminder, re-route and deadline (rules/pause-deadlines.ts). */
    pause: PauseInfoSchema.extend({ deadlines: PauseDeadlinesSchema.nullable().optional() }).nullable(),
    /** The pull request the run follows after delivering it (knob followPr): waiting for its next event, or iterating on one; absent before. */
    pullRequest: PullRequestStateSchema.pick({
      url: true,
      branch: true,
      base: true,
      since: true,
      waiting: true,
      taken: true,
      updates: true,
      replies: true,
      polled: true,
    })
      .extend({
        queued: z.number().int(),
        /** The review or comment the run is answering now: who wrote it (absent while it waits, and on older workers). */
        answering: z.object({ author: z.string(), review: z.boolean() }).optional(),
      })
      .optional(),
    consecutiveFailures: z.number().int(),
    consecutiveNoChange: z.number().int(),
    recentHashes: z.array(z.string()),
    runStartSha: z.string().nullable(),
    pendingDirectives: z.number().int(),
    /** Directives the running agent call's prompt carries (no longer waiting); absent on older workers. */
    directivesInCall: z.number().int().optional(),
    backoffUntil: z.string().nullable(),
    agentRunning: z.boolean(),
    lastIteration: IterationRecordSchema.nullable(),
    recentIterations: z.array(IterationRecordSchema),
    lastCompletion: CompletionVerdictSchema.nullable(),
    outcome: OutcomeSchema.pick({ status: true, reason: true, exitCode: true })
      .extend({ notes: z.array(z.string()).optional() })
      .nullable(),
    invalidMessages: z.array(InvalidMessageSchema),
    invalidMessageCount: z.number().int(),
    generations: z.number().int(),
    repoPath: z.string(),
    prdPath: z.string(),
    /** The host holding the repository (its activities' task queue is `<queue>@<host>`); null: any worker. Absent from older workers. */
    host: z.string().nullable().optional(),
    /** Consecutive and total done signals (completion claims and done-phrases). */
    doneSignals: z.number().int(),
    totalDoneSignals: z.number().int(),
    /** Why the circuit breaker is tripped right now, or null. */
    breaker: z.enum(['stagnation', 'done_signals']).nullable(),
    council: z.object({
      enabled: z.boolean(),
      rounds: z.number().int(),
      /** Most recent rounds, oldest first. */
      verdicts: z.array(VerdictSchema),
      forceReviewPending: z.boolean(),
      /** The iteration whose completion claim (or other trigger) was interrupted and waits for the next boundary. */
      heldClaimIteration: z.number().int().nullable().optional(),
      /** What the held check was: a claim, or a check the run made itself (breaker, interval, tests green). */
      heldClaimTrigger: z.string().nullable().optional(),
    }),
    lastEvidence: EvidenceRecordSchema.nullable(),
    lastTests: TestRunRecordSchema.nullable(),
    /** The sealed acceptance tests (knob acceptanceTests): how many files, and their latest verdict; absent without them. */
    acceptance: z
      .object({
        files: z.number().int().min(0),
        last: AcceptanceStateSchema.shape.last,
        /** Written by the acceptance role (knob acceptanceFromPrd): the sealed folder, and whether the person was shown it. */
        drafted: AcceptanceStateSchema.shape.drafted,
      })
      .nullable()
      .optional(),
    autonomyMode: z.enum(['supervised', 'perpetual']),
    /** Uncertainty-gated escalation: live proxies, co-occurrence streak, episode latch. */
    uncertainty: UncertaintyStateSchema.extend({ enabled: z.boolean(), noChangeMin: z.number().int() }),
    /** The model-tier ladder (null when off); `tier` above is what the agent gets. */
    ladder: LadderStateSchema.nullable(),
    /** The task's complexity and what it set (null: the complexity knob off, not decided yet, or a run from before it). */
    complexity: ComplexityRecordSchema.nullable().default(null),
    escalations: z.array(EscalationRecordSchema),
    notifications: NotificationStatusSchema,
    driftReports: z.number().int(),
    latestHandoff: z.object({ iteration: z.number().int(), path: z.string(), summary: z.string() }).nullable(),
    /** Failures that repeated DEAD_LETTER_THRESHOLD times (fingerprint, attempts, iterations, tail). */
    deadLetters: z.array(DeadLetterEntrySchema).optional(),
    /**
     * A run split into parallel streams: each task's state, its stream (child run) and branch, whether it is merged, its
     * dead letter; absent for a run without streams.
     */
    streams: z
      .array(
        z.object({
          task: z.string(),
          title: z.string(),
          state: TaskStateSchema,
          dependsOn: z.array(z.string()),
          attempts: z.number().int(),
          childId: z.string().nullable(),
          branch: z.string().nullable(),
          merged: z.boolean(),
          spendUsd: z.number(),
          outcome: z.string().nullable(),
          deadLetter: z.string().nullable(),
          waiting: z.object({ reason: z.string(), at: z.string() }).nullable().optional(),
        }),
      )
      .optional(),
    /**
     * Where a run's tasks came from (a person's file, the checklist, the planner), and why when it is worth saying (a
     * refused plan); absent for a run without tasks.
     */
    tasks: z.object({ source: z.enum(['file', 'checklist', 'planner']), count: z.number().int(), note: z.string().nullable() }).optional(),
    /** Waiting for the provider's circuit breaker: until when, its state, and why this run's last call to it failed (when it did). */
    providerWait: z
      .object({ provider: z.string(), until: z.string(), reason: z.string(), why: z.string().optional() })
      .nullable()
      .optional(),
    spend: z.object({
      usd: z.number(),
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
      cacheReadTokens: z.number().int().optional(),
      cacheWriteTokens: z.number().int().optional(),
      calls: z.number().int(),
      /** Calls whose cost is unknown (the CLI reported no usage). */
      unpricedCalls: z.number().int().optional(),
      /** What orchestration cost of it: every reported call but the builder's (reviewers, checklist roles, council). */
      orchestration: z.object({ calls: z.number().int(), usd: z.number() }).optional(),
    }),
    /** The effective budget in USD (0: none). */
    budgetUsd: z.number(),
    /** The event store journal: events stored, waiting, dropped, and the last problem (runs with eventStore). */
    eventStore: z
      .object({ stored: z.number().int(), pending: z.number().int(), dropped: z.number().int(), problem: z.string().nullable() })
      .optional(),
    /** The run memory (runs from the memory era on): entries kept and dropped, whether the agent's notes and the repository's learnings are carried. */
    memory: z
      .object({
        entries: z.number().int(),
        dropped: z.number().int(),
        chars: z.number().int(),
        continuity: z.boolean(),
        learnings: z.boolean(),
      })
      .optional(),
    /** Quality gates, code reviews and the PRD checklist (held-out items masked); absent on older runs. */
    quality: z
      .object({
        gates: z.array(GateResultSchema),
        /** Consecutive failures per gate (only gates that are failing). */
        failing: z.record(z.string(), z.number().int()),
        lastReview: ReviewRecordSchema.nullable(),
        reviewRounds: z.number().int(),
        checklist: z
          .array(
            z.object({
              id: z.string(),
              title: z.string(),
              priority: z.string(),
              status: z.string(),
              waived: z.boolean(),
              heldOut: z.boolean(),
            }),
          )
          .nullable(),
        checklistProblem: z.string().nullable(),
        /** The latest completion refused before the council was asked. */
        lastRefusal: z
          .object({ iteration: z.number().int(), gates: z.array(z.string()), reason: z.string() })
          .nullable()
          .optional(),
      })
      .optional(),
    /** Checkpoints (oldest first, without their state snapshots) and rewinds; absent on older runs or with checkpoints off. */
    checkpoints: z
      .object({
        kept: z.number().int(),
        list: z.array(CheckpointRecordSchema.omit({ snapshot: true })),
        rewinds: z.array(RewindRecordSchema),
        /** The tree the run last inspected (a working tree that differs holds changes made since). */
        lastTree: z.string().nullable(),
      })
      .optional(),
    /** Every completion check and what refused the last one; absent on runs from before the completion rule. */
    checks: CompletionChecksSchema.optional(),
    /** Reviewing answers in the wrong format (the agent contract); absent on runs from before the completion rule. */
    contract: ContractStateSchema.optional(),
    /** The run's sandbox knob, how its latest call was isolated and the escape attempts refused so far (docs/security.md). */
    sandbox: SandboxStateSchema.extend({ mode: SandboxModeSchema }).optional(),
    /** onStuck=fork: where the run got stuck, the checkpoint its forks started from, each fork and the winner; absent until it forks. */
    fork: ForkStateSchema.optional(),
  }),
);
export type StatusSnapshot = z.infer<typeof StatusSnapshotSchema>;
