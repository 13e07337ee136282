/**
 * A run's pause (who, why, since when, and what a person was told) and its deadlines as status
 * shows them. Re-exported by schemas/run.ts; the shared keys keep their original names.
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const PauseInfoSchema = shared('schemas/run:PauseInfoSchema', () =>
  z.object({
    reason: z.string().max(2000),
    by: z.string().max(200),
    /** ISO time, from workflow time: when the pause began (every deadline of a pause that waits for a person counts from it). */
    at: z.string(),
    /** A pause that waits for a person: when its reminder went out (rules/pause-deadlines.ts). */
    reminded: z.string().optional(),
    /** When the second list of channels was told. */
    rerouted: z.string().optional(),
    /** A person answered (a directive while paused): no reminder, re-route or deadline any more. */
    answered: z.object({ by: z.string().max(200), at: z.string() }).optional(),
    /** The agent's default answer to its question (HUMAN_REVIEW_NEEDED `defaultAnswer`), taken at the deadline with onDeadline=default-answer. */
    defaultAnswer: z.string().max(4000).optional(),
  }),
);
export type PauseInfo = z.infer<typeof PauseInfoSchema>;

/** A pause's deadlines as status shows them (ISO times; null where a timer does not apply). */
export const PauseDeadlinesSchema = shared('schemas/run:PauseDeadlinesSchema', () =>
  z.object({
    remindAt: z.string().nullable(),
    rerouteAt: z.string().nullable(),
    deadlineAt: z.string().nullable(),
    onDeadline: z.enum(['stop', 'continue', 'default-answer']),
    reminded: z.string().nullable(),
    rerouted: z.string().nullable(),
    answered: z.object({ by: z.string(), at: z.string() }).nullable(),
  }),
);
export type PauseDeadlines = z.infer<typeof PauseDeadlinesSchema>;
