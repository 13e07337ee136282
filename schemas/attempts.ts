/**
 * Attempts from the start (`vigil start --attempts K`): the `vigilAttempts` workflow's input and
 * what its `attempts` query answers (docs/attempts.md).
 */
import { z } from 'zod';
import { PROVIDERS } from './provider-names.js';
import { RunAuthorizationSchema } from './authorization.js';
import { KnobsSchema } from './knobs.js';
import { RunInputSchema } from './run.js';

export const MAX_ATTEMPTS = 9;

export const AttemptsInputSchema = z.object({
  /** The run every attempt is a copy of (its budget is shared between them). */
  run: RunInputSchema,
  attempts: z.number().int().min(2).max(MAX_ATTEMPTS),
  /** Agent CLIs (the provider knob) cycled over the attempts; empty: the run's. */
  agents: z.array(z.enum(PROVIDERS)).max(MAX_ATTEMPTS).default([]),
  /** Models (the model knob) cycled over the attempts; empty: the run's. */
  models: z.array(z.string().min(1).max(200)).max(MAX_ATTEMPTS).default([]),
  /** Keep the attempts' branches (`vigil/<run>-attempt-<n>`) after the pick; their worktrees go either way. */
  keepAttempts: z.boolean().default(false),
  /**
   * Set by every start from the release that added it (`vigil start`, the console, MCP): the run
   * forwards pause, resume, stop, input and budget to its live attempts, delivers its winner as
   * `deliver` says (a pull request with `pr`), and removes the attempts' worktrees when it is
   * cancelled or stopped before delivering. Absent (never defaulted: the workflow parses its own
   * input) in runs started before, whose histories replay down the old path with no patch.
   */
  forwarding: z.literal(true).optional(),
  /**
   * The messages beyond those five that the run forwards to its live attempts the same way (every
   * start from the release that added them sets both): `forceReview` (`vigil review <run>`) and
   * `waive` (`vigil waive <run> <item>`). Absent in runs started before, which register no handler
   * for them and replay unchanged; no patch is asked.
   */
  forwardsAlso: z
    .array(z.enum(['forceReview', 'waive']))
    .max(8)
    .optional(),
  /**
   * Set when the client started the run with Vigil's search attributes (cli/attempts.ts, as a single
   * run's start sets them: status, iteration, repository, provider, release): the run then keeps
   * `VigilStatus` and `VigilIteration` as it goes, so `vigil list --status/--repo` find it. Absent
   * when the namespace lacks them (an upsert of an unknown attribute would fail every workflow task)
   * and in runs started before, which upsert nothing and replay unchanged; no patch is asked.
   */
  searchAttributes: z.literal(true).optional(),
});
export type AttemptsInput = z.input<typeof AttemptsInputSchema>;

export const AttemptRowSchema = z.object({
  n: z.number().int(),
  workflowId: z.string(),
  provider: z.string(),
  model: z.string(),
  budgetUsd: z.number(),
  state: z.enum(['running', 'ended']),
  status: z.string().nullable(),
  reason: z.string().nullable(),
  findings: z.number().int().nullable(),
  iterations: z.number().int().nullable(),
  spendUsd: z.number().nullable(),
  /** The evidence line its outcome carried first (runs that ended done), else null. */
  evidence: z.string().nullable().optional(),
});
export type AttemptRow = z.infer<typeof AttemptRowSchema>;

/** One member's pick in the comparison round (rules/comparison.ts). */
export const MemberPickSchema = z.object({
  member: z.number().int().min(0),
  role: z.string(),
  attempt: z.number().int().nullable(),
  reason: z.string().max(300).nullable(),
  logPath: z.string(),
});

/** The comparison round in the run's status. */
export const ComparisonStatusSchema = z.object({
  picks: z.array(MemberPickSchema),
  /** The comparison pack the members read (the attempts' diffs, evidence lines and findings). */
  packPath: z.string(),
  decidedBy: z.enum(['council', 'rule', 'person']),
  split: z.boolean(),
  /** While a supervised run whose council split waits for a person's pick (`vigil pick`): the attempts to pick from. */
  pickFrom: z.array(z.number().int()).optional(),
  /** Who picked, when a person did. */
  pickedBy: z.string().optional(),
});

/** The `pick` update of a run with attempts (`vigil pick <run> <attempt>`): a person's pick where the council split. */
export const PickPayloadSchema = z.object({
  attempt: z.number().int(),
  by: z.string().min(1).max(200).default('a person'),
});
export type PickPayload = z.input<typeof PickPayloadSchema>;

export const AttemptsStatusSchema = z.object({
  runId: z.string(),
  phase: z.enum(['starting', 'running', 'picking', 'comparing', 'waiting_for_pick', 'delivering', 'ended']),
  attempts: z.array(AttemptRowSchema),
  winner: z.number().int().nullable(),
  why: z.string().nullable(),
  branch: z.string().nullable(),
  outcome: z.object({ status: z.string(), reason: z.string(), exitCode: z.number().int() }).nullable(),
  /** The comparison round, when several attempts were approved and the council compared them. */
  comparison: ComparisonStatusSchema.nullable().optional(),
  /** Paused by a person (`vigil pause <run>`, forwarded to every live attempt); runs with `forwarding` only. */
  paused: z.object({ by: z.string(), reason: z.string() }).nullable().optional(),
  /** Stopping (`vigil stop <run>`): no winner is delivered. */
  stopping: z.object({ by: z.string(), reason: z.string(), now: z.boolean() }).nullable().optional(),
  /** The run's budget as last set by `vigil budget <run>` (it covers all the attempts). */
  budgetUsd: z.number().optional(),
  /** deliver=pr: the winner's pull request, or why there is none. */
  pullRequest: z.object({ url: z.string().nullable(), note: z.string() }).nullable().optional(),
});
export type AttemptsStatus = z.infer<typeof AttemptsStatusSchema>;

/** The comparison round's activity input (activities/comparison.ts): references only, no diff. */
export const CompareAttemptsInputSchema = z.object({
  runId: z.string(),
  repoPath: z.string(),
  prdPath: z.string(),
  /** The commit every attempt started from: each diff is taken from it. */
  base: z.string(),
  knobs: KnobsSchema,
  /** The run's signature, handed to every member call (workers that require signed runs check it). */
  authorization: RunAuthorizationSchema.nullable().default(null),
  /** The approved attempts: number, run id and evidence line. */
  attempts: z
    .array(z.object({ n: z.number().int().min(1), workflowId: z.string(), evidence: z.string().max(2000).nullable() }))
    .min(2)
    .max(MAX_ATTEMPTS),
});
export type CompareAttemptsInput = z.input<typeof CompareAttemptsInputSchema>;

export const CompareAttemptsResultSchema = z.object({
  picks: z.array(MemberPickSchema),
  packPath: z.string(),
  /** What the members' calls cost (unpriced calls count nothing). */
  spendUsd: z.number().min(0),
});
export type CompareAttemptsResult = z.infer<typeof CompareAttemptsResultSchema>;
