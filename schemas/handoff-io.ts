/**
 * The inputs and outputs of the activities that write a council round's transcript and a handoff
 * (activities/handoff.ts): paths and one paragraph back, never the documents themselves. Re-exported
 * by schemas/activities.ts, whose names they keep.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const WriteTranscriptInputSchema = shared('schemas/activities:WriteTranscriptInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    round: z.number().int().min(1),
    /** The round's record, written as JSON; small by construction (bounded reasons). */
    transcript: z.record(z.string(), z.unknown()),
  }),
);
export type WriteTranscriptInput = z.infer<typeof WriteTranscriptInputSchema>;

export const WriteHandoffInputSchema = shared('schemas/activities:WriteHandoffInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    runStartSha: z.string().nullable(),
    iteration: z.number().int().min(0),
    /** Why: an escalation's reason, or `session_end` (the run ended: also written as the run folder's HANDOFF.md). */
    reason: z.enum(['uncertainty', 'tier_exhausted', 'agent_request', 'dead_letter', 'gate_failing', 'session_end']),
    /** One line saying why, for the title and the notification. */
    headline: z.string().max(500),
    /** Why Vigil believes the run is stuck (one line per signal). */
    signals: z.array(z.string().max(500)).max(20),
    mode: z.enum(['supervised', 'perpetual']),
    paused: z.boolean(),
    lastCouncil: z.string().max(2000).nullable(),
    lastTests: z.string().max(1000).nullable(),
    openQuestions: z.array(z.string().max(1000)).max(20),
    /** What was tried: one line per recent iteration (rules/handoff-lines.ts); absent in older calls. */
    attempts: z.array(z.string().max(500)).max(20).optional(),
  }),
);
export type WriteHandoffInput = z.infer<typeof WriteHandoffInputSchema>;

export const HandoffResultSchema = shared('schemas/activities:HandoffResultSchema', () =>
  z.object({
    jsonPath: z.string(),
    markdownPath: z.string(),
    /** One paragraph for the next prompt and for notifications. */
    summary: z.string().max(2000),
  }),
);
export type HandoffResult = z.infer<typeof HandoffResultSchema>;
