/**
 * What the `vigil` commands that read the event store, the knobs and the provider breakers print
 * with `--json` (the others are in schemas/cli-output.ts): `report`, `report <id>`, `history`
 * (JSON lines), `config --json`, `providers --json` and `providers --reset P --json`. The CLI's
 * report types are inferred from these (cli/report.ts); tests/store/report.test.ts and
 * tests/e2e/json-output.test.ts parse real output with them.
 * Not bundled into the workflow sandbox: no workflow code imports this module.
 */
import { z } from 'zod';
import { RunEventSchema } from './events.js';
import { KNOB_NAMES, KnobsSchema } from './knobs.js';
import { BreakerEventSchema } from './provider-breaker.js';
import { ProviderBreakerStateSchema } from './provider-breaker-state.js';

/** What both reports count for a run. */
export const RunCountsSchema = z.object({
  iterations: z.number().int(),
  failedIterations: z.number().int(),
  councilRounds: z.number().int(),
  approvedRounds: z.number().int(),
  escalations: z.number().int(),
  tierClimbs: z.number().int(),
  spendUsd: z.number(),
  waitingMs: z.number(),
  pauses: z.number().int(),
  pausedNow: z.boolean(),
});

/** One run in `vigil report --json`. */
export const RunSummarySchema = RunCountsSchema.extend({
  workflowId: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  prdTitle: z.string().nullable(),
  repo: z.string().nullable(),
  provider: z.string().nullable(),
  outcome: z.string().nullable(),
  exitCode: z.number().int().nullable(),
  /** Agent calls that reported no cost (a `command` agent's): not in `spendUsd`. */
  unpricedCalls: z.number().int(),
});

/** `vigil report [--since D] [--repo R] --json`: across the runs in the store. */
/** The model tiers across runs (lib/report-tiers.ts). */
export const TierMetricsSchema = z.object({
  /** Per tier the runs recorded, cheapest first: iterations, failed ones, what they cost. */
  byTier: z.array(
    z.object({
      tier: z.string(),
      iterations: z.number().int(),
      failed: z.number().int(),
      successRate: z.number().nullable(),
      costUsd: z.number(),
      /** Over the iterations whose cost is known; null: none was priced. */
      perIterationUsd: z.number().nullable(),
    }),
  ),
  /** Ladder climbs per iteration. */
  escalationRate: z.number().nullable(),
  /** Done runs that finished at the tier they started with (no climb). */
  firstTierSuccess: z.object({ doneRuns: z.number().int(), withoutClimb: z.number().int(), rate: z.number().nullable() }),
});

export const AcrossRunsReportSchema = z.object({
  since: z.string().nullable(),
  repo: z.string().nullable(),
  runs: z.number().int(),
  /** Runs by outcome; `running` for a run without one yet. */
  outcomes: z.array(z.object({ status: z.string(), exitCode: z.number().int().nullable(), runs: z.number().int() })),
  exitCodes: z.array(z.object({ exitCode: z.number().int().nullable(), runs: z.number().int() })),
  iterationsToDone: z.object({
    runs: z.number().int(),
    mean: z.number().nullable(),
    median: z.number().nullable(),
    min: z.number().nullable(),
    max: z.number().nullable(),
  }),
  council: z.object({
    rounds: z.number().int(),
    approved: z.number().int(),
    rejected: z.number().int(),
    blocked: z.number().int(),
    approvalRate: z.number().nullable(),
    votes: z.number().int(),
    approveVotes: z.number().int(),
    voteApprovalRate: z.number().nullable(),
  }),
  escalations: z.object({
    total: z.number().int(),
    perRun: z.number().nullable(),
    byReason: z.array(z.object({ reason: z.string(), count: z.number().int() })),
    runs: z.array(z.object({ workflowId: z.string(), count: z.number().int(), reasons: z.array(z.string()) })),
  }),
  tierClimbs: z.object({
    total: z.number().int(),
    runs: z.number().int(),
    byChange: z.array(z.object({ from: z.string(), to: z.string(), count: z.number().int() })),
  }),
  tiers: TierMetricsSchema,
  cost: z.object({
    totalUsd: z.number(),
    perRunUsd: z.number().nullable(),
    doneRuns: z.number().int(),
    perDoneRunUsd: z.number().nullable(),
    allSpendPerDoneRunUsd: z.number().nullable(),
    unpricedCalls: z.number().int(),
  }),
  waitingForPeople: z.object({
    totalMs: z.number(),
    pauses: z.number().int(),
    perRunMs: z.number().nullable(),
    pausedNow: z.array(z.string()),
  }),
  perRun: z.array(RunSummarySchema),
});

/** A decision or notice in a run's timeline. */
export const TimelineEntrySchema = z.object({
  seq: z.number().int(),
  at: z.string().nullable(),
  kind: z.string(),
  iteration: z.number().int().nullable(),
  text: z.string(),
  /** Lines under it: a council round's votes, each member's with its reason. */
  details: z.array(z.string()).optional(),
});

/** One iteration of a run's timeline, with what was decided about it. */
export const TimelineIterationSchema = z.object({
  iteration: z.number().int(),
  seq: z.number().int(),
  at: z.string().nullable(),
  phase: z.string().nullable(),
  tier: z.string().nullable(),
  exitCode: z.number().int(),
  tests: z.string().nullable(),
  changed: z.boolean(),
  claimed: z.boolean(),
  durationMs: z.number(),
  costUsd: z.number().nullable(),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  failed: z.boolean(),
  /** The iteration in one line. */
  text: z.string(),
  /** What was decided about this iteration: gates, reviews, council rounds, escalations, tier changes. */
  decisions: z.array(TimelineEntrySchema),
});

/** The life of the pull request a run followed (knob followPr), from its journalled events (lib/report-pr.ts). */
export const PullRequestReportSchema = z.object({
  /** Its address, as the run said it began to follow it (null: a branch without one). */
  url: z.string().nullable(),
  number: z.number().int().nullable(),
  /** Where it stands, as the events say it (the state names of rules/pr-life.ts). */
  state: z.string(),
  stateText: z.string(),
  checksTaken: z.number().int(),
  commentsTaken: z.number().int(),
  updates: z.number().int(),
  replies: z.number().int(),
  /** A redelivered event, taken once. */
  redelivered: z.number().int(),
  /** What happened to it, oldest first: red checks and comments taken (with their authors), updates onto its base, replies, its end. */
  entries: z.array(z.object({ at: z.string().nullable(), kind: z.string(), text: z.string() })),
});

/** `vigil report <id> --json`: one run's summary and timeline. */
export const RunReportSchema = RunCountsSchema.extend({
  workflowId: z.string(),
  runIds: z.array(z.string()),
  prdTitle: z.string().nullable(),
  prdPath: z.string().nullable(),
  repo: z.string().nullable(),
  provider: z.string().nullable(),
  autonomyMode: z.string().nullable(),
  maxIterations: z.number().int().nullable(),
  budgetUsd: z.number().nullable(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  outcome: z
    .object({
      status: z.string(),
      exitCode: z.number().int(),
      reason: z.string(),
      iteration: z.number().int(),
      /** What done rested on (the outcome event's evidence line); absent for a run that did not end done, or journalled before it. */
      evidence: z.string().optional(),
    })
    .nullable(),
  /** The agent calls the last spend event counts (null before any was recorded), and of them those that reported no cost (not in `spendUsd`). */
  calls: z.number().int().nullable(),
  unpricedCalls: z.number().int(),
  /** What orchestration (reviewers, checklist roles, council members) cost of the spend, as the last spend event says; null before any was recorded. */
  orchestration: z.object({ calls: z.number().int(), usd: z.number() }).nullable(),
  /** The memory judge's call as the run ended (docs/memory.md, Judgement), apart from the run's spend; absent when it was not asked. */
  memoryJudgement: z
    .object({
      calls: z.number().int(),
      usd: z.number(),
      lessons: z.number().int(),
      merges: z.number().int(),
      problem: z.string().nullable(),
    })
    .optional(),
  /** The pull request the run followed after delivering it (knob followPr); absent for a run that followed none. */
  pullRequest: PullRequestReportSchema.optional(),
  timeline: z.array(TimelineIterationSchema),
  /** Events not about one iteration: the start, messages, notifications, the outcome, anything else. */
  notices: z.array(TimelineEntrySchema),
});

/**
 * A line of `vigil history <id>` (`--format jsonl`, the default): an event envelope in seq order;
 * an event the store holds but this version cannot read comes as it was stored, with why.
 */
export const HistoryLineSchema = z.union([
  z.object({ seq: z.number().int().min(1), runId: z.string(), at: z.string(), event: RunEventSchema }).strict(),
  z.object({ seq: z.number().int().min(1), runId: z.string(), at: z.string(), event: z.unknown(), invalid: z.string() }).strict(),
]);

/** `vigil config --json`: every knob, its value (one its schema accepts), where the value came from, its section. */
export const ConfigJsonSchema = z.array(
  z
    .object({
      name: z.enum(KNOB_NAMES),
      value: z.unknown(),
      source: z.enum(['flag', 'env', 'file', 'profile', 'default']),
      detail: z.string(),
      env: z.string(),
      allowed: z.string(),
      doc: z.string(),
      /** Its section (schemas/knob-sections.ts) and whether `config --explain` shows it without `--all`. */
      section: z.string(),
      firstClass: z.boolean(),
    })
    .superRefine((row, ctx) => {
      const checked = KnobsSchema.shape[row.name].safeParse(row.value);
      if (!checked.success)
        ctx.addIssue({ code: 'custom', path: ['value'], message: `not a value of knob ${row.name}: ${checked.error.message}` });
    }),
);

const BreakerPhaseSchema = z.enum(['CLOSED', 'OPEN', 'HALF_OPEN']);

/** One provider circuit breaker in `vigil providers --json`; without a worker's answer the fields after it are null. */
export const ProviderRowSchema = z.object({
  provider: z.string(),
  workflowId: z.string(),
  workerAnswered: z.boolean(),
  phase: BreakerPhaseSchema.nullable(),
  failuresInWindow: z.number().int().nullable(),
  failureThreshold: z.number().int().nullable(),
  openUntil: z.string().nullable(),
  lastTransition: BreakerEventSchema.nullable(),
  runsWaiting: z.number().int().nullable(),
  invalidReportCount: z.number().int().nullable(),
  /** The breaker's whole `breakerState` answer. */
  view: z
    .looseObject({ provider: z.string(), workflowId: z.string(), state: ProviderBreakerStateSchema, effectivePhase: BreakerPhaseSchema })
    .nullable(),
  error: z.string().nullable(),
});
export const ProvidersJsonSchema = z.array(ProviderRowSchema);

/** `vigil providers --reset P --json`: the breaker closed, and its state now. */
export const ProviderResetJsonSchema = z.object({
  provider: z.string(),
  workflowId: z.string(),
  reset: z.literal(true),
  by: z.string(),
  state: ProviderBreakerStateSchema,
});

/** `vigil notifications --json`: the newest first, within --limit; the counts are of all of them in scope. */
export const NotificationsListSchema = z.object({
  total: z.number().int(),
  unacknowledged: z.number().int(),
  notifications: z.array(
    z.object({
      workflowId: z.string(),
      at: z.string(),
      event: z.string(),
      /** Null for notifications recorded before titles were journaled. */
      title: z.string().nullable(),
      severity: z.string().nullable(),
      delivered: z.number().int(),
      failed: z.number().int(),
      acknowledged: z.boolean(),
      acknowledgedBy: z.string().nullable(),
    }),
  ),
});
export type NotificationsList = z.infer<typeof NotificationsListSchema>;
