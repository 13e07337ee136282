/**
 * The dead-letter list a run carries (see rules/dead-letter.ts): iteration failures
 * counted by fingerprint, and the ones that repeated too often. Bounded: at most 50 fingerprints
 * tracked, 20 entries, 10 iterations and 1000 characters of tail per entry.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const DEAD_LETTER_THRESHOLD = 5;
export const MAX_TRACKED_FINGERPRINTS = 50;
export const MAX_DEAD_LETTERS = 20;
export const MAX_ENTRY_ITERATIONS = 10;
export const MAX_TAIL_CHARS = 1000;
export const MAX_ERROR_CLASS_CHARS = 60;

const fingerprintSchema = shared('schemas/dead-letter:fingerprintSchema', () =>
  z
    .string()
    .min(1)
    .max(MAX_ERROR_CLASS_CHARS + 20),
);
const isoSchema = shared('schemas/dead-letter:isoSchema', () => z.string().max(64));
const iterationsSchema = shared('schemas/dead-letter:iterationsSchema', () => z.array(z.number().int().min(0)).max(MAX_ENTRY_ITERATIONS));

export const DeadLetterEntrySchema = shared('schemas/dead-letter:DeadLetterEntrySchema', () =>
  z.object({
    fingerprint: fingerprintSchema,
    errorClass: z.string().max(MAX_ERROR_CLASS_CHARS),
    attempts: z.number().int().min(1),
    firstAt: isoSchema,
    lastAt: isoSchema,
    iterations: iterationsSchema,
    tail: z.string().max(MAX_TAIL_CHARS),
  }),
);
export type DeadLetterEntry = z.infer<typeof DeadLetterEntrySchema>;

const TrackedFailureSchema = shared('schemas/dead-letter:TrackedFailureSchema', () =>
  z.object({
    fingerprint: fingerprintSchema,
    count: z.number().int().min(1),
    firstAt: isoSchema,
    iterations: iterationsSchema,
  }),
);

export type TrackedFailure = z.infer<typeof TrackedFailureSchema>;

export const DeadLetterStateSchema = shared('schemas/dead-letter:DeadLetterStateSchema', () =>
  z.object({
    /** Failure counts per fingerprint, least recently seen first. */
    tracked: z.array(TrackedFailureSchema).max(MAX_TRACKED_FINGERPRINTS),
    /** Dead-lettered failures, oldest first. */
    entries: z.array(DeadLetterEntrySchema).max(MAX_DEAD_LETTERS),
  }),
);
export type DeadLetterState = z.infer<typeof DeadLetterStateSchema>;
