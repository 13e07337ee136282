/**
 * The run memory: what a run has learned so far, kept in the run state (carried across
 * continue-as-new) and rendered into every iteration prompt as "the run so far", so an agent that
 * starts fresh (after a context clear, a provider switch, a crash) starts with it. Per iteration a
 * few lines (files changed, exit, tests, claim, the agent's own SUMMARY), plus the decisions
 * around it (council rounds, gate findings, code reviews, directives, escalations, context clears),
 * the agent's `.vigil/CONTINUITY.md` notes and the repository's `.vigil/learnings.md`.
 *
 * Not the event journal (schemas/events.ts), which feeds the Postgres event store. Every part is
 * bounded, so a run of 10,000 iterations carries as much memory as a run of 60.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const MEMORY_LIMITS = {
  /** Entries kept (oldest dropped first). */
  entries: 80,
  /** One entry's text. */
  entryChars: 400,
  /** The agent's `.vigil/signals/SUMMARY`, as kept per iteration. */
  summaryChars: 300,
  /** `.vigil/CONTINUITY.md`, as carried into the next prompt (its beginning). */
  continuityChars: 4000,
  /** `.vigil/learnings.md`, as read at run start (its end: the newest lessons). */
  learningsChars: 3000,
  /** Files named per iteration. */
  filesNamed: 5,
} as const;

export const SHA256 = shared('schemas/memory:SHA256', () => z.string().regex(/^[0-9a-f]{64}$/));

/**
 * A note of the agent's (`.vigil/CONTINUITY.md`, `.vigil/learnings.md`) as the workflow keeps it
 * from `vigil-lean-prompt-v1` on: the activity that read it stored the bounded text under the run
 * folder (`prompt-parts/<sha256>.md`); the workflow keeps what it decides with.
 */
export const NoteRefSchema = shared('schemas/memory:NoteRefSchema', () =>
  z.object({
    sha256: SHA256,
    /** Characters of the bounded text (status shows the memory's size). */
    chars: z.number().int().min(0),
  }),
);
export type NoteRef = z.infer<typeof NoteRefSchema>;

export const MEMORY_KINDS = [
  'iteration',
  'gates',
  'review',
  'council',
  'refusal',
  'directive',
  'escalation',
  'context',
  'tier',
  'note',
] as const;
export const MemoryKindSchema = shared('schemas/memory:MemoryKindSchema', () => z.enum(MEMORY_KINDS));
export type MemoryKind = z.infer<typeof MemoryKindSchema>;

export const MemoryEntrySchema = shared('schemas/memory:MemoryEntrySchema', () =>
  z.object({
    iteration: z.number().int().min(0),
    kind: MemoryKindSchema,
    text: z.string().max(MEMORY_LIMITS.entryChars),
  }),
);
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

export const RunMemorySchema = shared('schemas/memory:RunMemorySchema', () =>
  z.object({
    /** Oldest first; at most `MEMORY_LIMITS.entries`. */
    entries: z.array(MemoryEntrySchema).max(MEMORY_LIMITS.entries).default([]),
    /** Entries dropped from the front so far (the prompt says how much older history there was). */
    dropped: z.number().int().min(0).default(0),
    /** The latest `.vigil/CONTINUITY.md` the agent kept (null: none). */
    continuity: z.string().max(MEMORY_LIMITS.continuityChars).nullable().default(null),
    /** `.vigil/learnings.md` of the repository, read at run start (null: none). */
    learnings: z.string().max(MEMORY_LIMITS.learningsChars).nullable().default(null),
    /** Runs from `vigil-lean-prompt-v1` on: the notes by reference (the text stays with the activity), instead of `continuity`. */
    continuityRef: NoteRefSchema.nullable().default(null),
    /** Runs from `vigil-lean-prompt-v1` on: the learnings by reference, instead of `learnings`. */
    learningsRef: NoteRefSchema.nullable().default(null),
  }),
);
export type RunMemory = z.infer<typeof RunMemorySchema>;

export function emptyMemory(): RunMemory {
  return { entries: [], dropped: 0, continuity: null, learnings: null, continuityRef: null, learningsRef: null };
}

/** What an iteration prompt carries of the memory: rendered text, each part bounded. */
export const PromptMemorySchema = shared('schemas/memory:PromptMemorySchema', () =>
  z.object({
    /** "The run so far", newest first, within the `memoryBudgetChars` knob. */
    runSoFar: z.string().max(100_000),
    continuity: z.string().max(MEMORY_LIMITS.continuityChars).nullable(),
    learnings: z.string().max(MEMORY_LIMITS.learningsChars).nullable(),
  }),
);
export type PromptMemory = z.infer<typeof PromptMemorySchema>;

/** The entries "the run so far" is rendered from: the fewest newest entries that render the same text. */
export const MemoryWindowSchema = shared('schemas/memory:MemoryWindowSchema', () =>
  z.object({
    entries: z.array(MemoryEntrySchema).max(MEMORY_LIMITS.entries),
    /** Entries older than the window (the prompt says how many are not shown). */
    dropped: z.number().int().min(0),
  }),
);
export type MemoryWindow = z.infer<typeof MemoryWindowSchema>;

/**
 * The run so far as an iteration call carries it from `vigil-lean-prompt-v1` on: the entries added
 * since the window the previous call of this execution sent (`base`, stored by the activity), or
 * the whole window (`base` null). The activity rebuilds the window, checks it against `sha256` and
 * renders it with `budgetChars`, as the workflow would have.
 */
export const MemoryDeltaSchema = shared('schemas/memory:MemoryDeltaSchema', () =>
  z.object({
    sha256: SHA256,
    base: SHA256.nullable(),
    /** Entries of the base window left out at its start, then how many of it are kept. */
    skip: z.number().int().min(0),
    keep: z.number().int().min(0),
    add: z.array(MemoryEntrySchema).max(MEMORY_LIMITS.entries),
    dropped: z.number().int().min(0),
  }),
);
export type MemoryDelta = z.infer<typeof MemoryDeltaSchema>;

/** The run memory's part of an iteration call by reference (the activity renders the PromptMemory). */
export const PromptMemoryRefSchema = shared('schemas/memory:PromptMemoryRefSchema', () =>
  z.object({
    window: MemoryDeltaSchema,
    budgetChars: z.number().int().min(0),
    continuity: NoteRefSchema.nullable(),
    learnings: NoteRefSchema.nullable(),
  }),
);
export type PromptMemoryRef = z.infer<typeof PromptMemoryRefSchema>;
