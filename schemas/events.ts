/**
 * Run events: everything Vigil knows about a run, as a journal the workflow keeps in its state
 * and projects into the event store (Postgres) at iteration boundaries. Each envelope has a
 * sequence number unique within the workflow id and the id of the execution that recorded it,
 * so a projection retried or replayed never writes a row twice (key: workflow id, run id, seq).
 *
 * Events carry facts and short texts, never transcripts or directive bodies (those stay in
 * files and history). Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

const short = shared('schemas/events:short', () => (n: number) => z.string().max(n));

export const RUN_EVENT_KINDS = [
  'run_started',
  'iteration',
  'council_round',
  'gate',
  'review',
  'escalation',
  'notification',
  'message',
  'tier_change',
  'spend',
  'outcome',
] as const;

export const RunEventSchema = shared('schemas/events:RunEventSchema', () =>
  z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('run_started'),
      prdPath: short(4096),
      prdTitle: short(200),
      repoPath: short(4096),
      provider: short(40),
      maxIterations: z.number().int(),
      budgetUsd: z.number(),
      autonomyMode: short(20),
    }),
    z.object({
      kind: z.literal('iteration'),
      iteration: z.number().int(),
      phase: short(20).nullable(),
      tier: short(20).nullable(),
      exitCode: z.number().int(),
      durationMs: z.number().int(),
      changed: z.boolean(),
      filesChangedSinceStart: z.number().int(),
      claimed: z.boolean(),
      /** The test verdict on this iteration's tree, when tests ran on it. */
      tests: z.enum(['pass', 'fail', 'inconclusive']).nullable(),
      provider: short(40).nullable(),
      model: short(200).nullable(),
      costUsd: z.number().nullable(),
      attempts: z.number().int(),
    }),
    z.object({
      kind: z.literal('council_round'),
      round: z.number().int(),
      iteration: z.number().int(),
      trigger: short(40),
      result: short(40),
      approve: z.number().int(),
      reject: z.number().int(),
      threshold: z.number().int(),
      votes: z.array(z.object({ member: z.number().int(), recorded: short(40), approves: z.boolean(), reason: short(300) })).max(20),
    }),
    z.object({
      kind: z.literal('gate'),
      iteration: z.number().int(),
      gate: short(40),
      verdict: short(20),
      reason: short(500),
      findings: z.number().int(),
    }),
    z.object({
      kind: z.literal('review'),
      round: z.number().int(),
      iteration: z.number().int(),
      result: short(20),
      mergeability: z.number().int(),
      reviewers: z.array(z.object({ reviewer: short(100), verdict: short(20), blocking: z.boolean() })).max(13),
    }),
    z.object({ kind: z.literal('escalation'), iteration: z.number().int(), reason: short(40), detail: short(1000), paused: z.boolean() }),
    /** A notification sent: its event, its title and severity (absent in runs recorded before them), and how delivery went. */
    z.object({
      kind: z.literal('notification'),
      event: short(40),
      delivered: z.number().int(),
      failed: z.number().int(),
      title: short(200).optional(),
      severity: short(20).optional(),
    }),
    /** A message a person or tool sent: who, what (the message name and a short summary, never a directive's text). */
    z.object({ kind: z.literal('message'), name: short(40), by: short(200), summary: short(300), accepted: z.boolean() }),
    z.object({ kind: z.literal('tier_change'), iteration: z.number().int(), from: short(20), to: short(20), trigger: short(300) }),
    z.object({
      kind: z.literal('spend'),
      iteration: z.number().int(),
      usd: z.number(),
      calls: z.number().int(),
      unpricedCalls: z.number().int(),
      budgetUsd: z.number(),
      orchestrationCalls: z.number().int().optional(),
      orchestrationUsd: z.number().optional(),
    }),
    z.object({
      kind: z.literal('outcome'),
      status: short(40),
      exitCode: z.number().int(),
      reason: short(1000),
      iteration: z.number().int(),
      /** What done rested on (rules/evidence-line.ts): a run that ended done; absent otherwise and in older journals. */
      evidence: short(600).optional(),
    }),
  ]),
);
export type RunEvent = z.infer<typeof RunEventSchema>;
export type RunEventKind = RunEvent['kind'];

export const EventEnvelopeSchema = shared('schemas/events:EventEnvelopeSchema', () =>
  z.object({
    /** 1, 2, 3, ... within the workflow id, across continue-as-new. */
    seq: z.number().int().min(1),
    /** The Temporal run id of the execution that recorded the event. */
    runId: z.string().max(100),
    /** Workflow time. */
    at: z.string(),
    event: RunEventSchema,
  }),
);
export type EventEnvelope = z.infer<typeof EventEnvelopeSchema>;

/** Events waiting for the store at most; past this the oldest are dropped (and counted). */
export const MAX_PENDING_EVENTS = 2000;

/** The journal in the run state. */
export const JournalStateSchema = shared('schemas/events:JournalStateSchema', () =>
  z.object({
    nextSeq: z.number().int().min(1).default(1),
    pending: z.array(EventEnvelopeSchema).max(MAX_PENDING_EVENTS).default([]),
    /** Events dropped because the store stayed unreachable too long. */
    dropped: z.number().int().min(0).default(0),
    /** Events the store confirmed. */
    stored: z.number().int().min(0).default(0),
    /** The last projection problem (store down, no DATABASE_URL on the worker), for status. */
    problem: z.string().max(500).nullable().default(null),
  }),
);
export type JournalState = z.infer<typeof JournalStateSchema>;

export const ProjectEventsInputSchema = shared('schemas/events:ProjectEventsInputSchema', () =>
  z.object({
    workflowId: z.string(),
    events: z.array(EventEnvelopeSchema).max(MAX_PENDING_EVENTS),
  }),
);
export type ProjectEventsInput = z.input<typeof ProjectEventsInputSchema>;

export const ProjectEventsResultSchema = shared('schemas/events:ProjectEventsResultSchema', () =>
  z.object({
    /**
     * The highest seq taken care of for this workflow: every event up to it is stored, or, for a run
     * that has ended, kept in the worker's spool until the store takes it (lib/event-journal.ts).
     */
    storedThrough: z.number().int().min(0),
    /** Rows written this time (0 when all were there already: a retry or a replay). */
    written: z.number().int().min(0),
    /** Why nothing was written (no store configured on this worker, store unreachable), else null. */
    problem: z.string().max(500).nullable(),
  }),
);
export type ProjectEventsResult = z.infer<typeof ProjectEventsResultSchema>;
