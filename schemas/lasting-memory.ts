/**
 * The memory that outlives a run (docs/memory.md): episodes (one per iteration), the patterns and
 * anti-patterns consolidated from them (linked by the original's eight relations),
 * procedural skills, and what retrieval puts into a prompt. Kept in the event store (Postgres),
 * never in workflow history beyond the layer budgets an agent call carries.
 *
 * Not the run memory (schemas/memory.ts), which is the run so far inside one run.
 *
 * Sandbox-safe: imported by the workflow bundle (the budgets travel with an agent call).
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const EPISODE_OUTCOMES = ['success', 'failure', 'partial'] as const;
export type EpisodeOutcome = (typeof EPISODE_OUTCOMES)[number];

export const PATTERN_KINDS = ['pattern', 'anti_pattern'] as const;
export type PatternKind = (typeof PATTERN_KINDS)[number];

/** The original's eight relations (rules/memory-links.ts says when each is drawn). */
export const LINK_RELATIONS = [
  'derived_from',
  'related_to',
  'contradicts',
  'elaborates',
  'example_of',
  'supersedes',
  'superseded_by',
  'supports',
] as const;
export type LinkRelation = (typeof LINK_RELATIONS)[number];

/** Bounds of what one episode keeps (texts are redacted before they are stored). */
export const EPISODE_LIMITS = {
  files: 20,
  fileChars: 300,
  errors: 5,
  errorChars: 300,
  findings: 10,
  findingChars: 300,
  reasons: 5,
  reasonChars: 300,
  summaryChars: 300,
  retrieved: 40,
  filesRead: 50,
} as const;

/** Failures of one signature, in one scope, that make an anti-pattern. */
export const ANTI_PATTERN_MIN_FAILURES = 3;

/** An item of memory as a retrieval names it (what the episode records as retrieved). */
export const MemoryRefSchema = shared('schemas/lasting-memory:MemoryRefSchema', () =>
  z.object({
    kind: z.enum(['pattern', 'skill', 'episode']),
    id: z.number().int().min(1),
  }),
);
export type MemoryRef = z.infer<typeof MemoryRefSchema>;

/** One iteration as memory keeps it. */
export const EpisodeSchema = shared('schemas/lasting-memory:EpisodeSchema', () =>
  z.object({
    workflowId: z.string().max(300),
    iteration: z.number().int().min(0),
    repo: z.string().max(4096),
    at: z.string().nullable(),
    phase: z.string().max(20).nullable(),
    tier: z.string().max(20).nullable(),
    provider: z.string().max(40).nullable(),
    outcome: z.enum(EPISODE_OUTCOMES),
    files: z.array(z.string().max(EPISODE_LIMITS.fileChars)).max(EPISODE_LIMITS.files),
    errors: z.array(z.string().max(EPISODE_LIMITS.errorChars)).max(EPISODE_LIMITS.errors),
    findings: z.array(z.string().max(EPISODE_LIMITS.findingChars)).max(EPISODE_LIMITS.findings),
    councilReasons: z.array(z.string().max(EPISODE_LIMITS.reasonChars)).max(EPISODE_LIMITS.reasons),
    /** Failure signatures (`tests:<test>:<reason>`, `gate:<gate>:<reason>`, `exit:<code>:<line>`). */
    signatures: z.array(z.string().max(600)).max(20),
    /** Gates and tests that passed on this iteration's tree (a fix is a pass after a failure). */
    passed: z.array(z.string().max(200)).max(20),
    summary: z.string().max(EPISODE_LIMITS.summaryChars).nullable(),
    retrieved: z.array(MemoryRefSchema).max(EPISODE_LIMITS.retrieved),
    importance: z.number().min(0).max(1),
    /** Files the agent read during the call, where its transcript or its FILES_READ signal says so (absent in files exported before it). */
    filesRead: z.array(z.string().max(EPISODE_LIMITS.fileChars)).max(EPISODE_LIMITS.filesRead).default([]),
  }),
);
export type Episode = z.infer<typeof EpisodeSchema>;

/** A consolidated pattern or anti-pattern. `repo` null: across the repositories of this installation. */
export const PatternSchema = shared('schemas/lasting-memory:PatternSchema', () =>
  z.object({
    repo: z.string().max(4096).nullable(),
    kind: z.enum(PATTERN_KINDS),
    signature: z.string().max(600),
    /** What it is about (`tests`, a gate's name, `agent`, `council`): the index layer counts by topic. */
    topic: z.string().max(60),
    title: z.string().max(300),
    body: z.string().max(2000),
    keywords: z.array(z.string().max(60)).max(40),
    evidence: z.number().int().min(1),
    runs: z.number().int().min(1),
    firstSeen: z.string().nullable(),
    lastSeen: z.string().nullable(),
    importance: z.number().min(0).max(1),
    /** Episodes it was derived from, as (workflow id, iteration). */
    from: z.array(z.object({ workflowId: z.string().max(300), iteration: z.number().int().min(0) })).max(200),
  }),
);
export type Pattern = z.infer<typeof PatternSchema>;

/** A procedural skill: the steps that worked for a kind of task in a repository. */
export const SkillSchema = shared('schemas/lasting-memory:SkillSchema', () =>
  z.object({
    repo: z.string().max(4096).nullable(),
    taskKind: z.string().max(200),
    title: z.string().max(300),
    steps: z.array(z.string().max(300)).max(12),
    keywords: z.array(z.string().max(60)).max(40),
    evidence: z.number().int().min(1),
    importance: z.number().min(0).max(1),
    from: z.array(z.string().max(300)).max(50),
  }),
);
export type Skill = z.infer<typeof SkillSchema>;

/**
 * A link between two consolidated items, by signature within their scope; a `supports` link ends
 * at a skill, named by its task kind.
 */
export const PatternLinkSchema = shared('schemas/lasting-memory:PatternLinkSchema', () =>
  z.object({
    relation: z.enum(LINK_RELATIONS),
    from: z.object({ repo: z.string().nullable(), kind: z.enum(PATTERN_KINDS), signature: z.string() }),
    to: z.object({ repo: z.string().nullable(), kind: z.enum([...PATTERN_KINDS, 'skill']), signature: z.string() }),
  }),
);
export type PatternLink = z.infer<typeof PatternLinkSchema>;

/**
 * The token budget of each retrieval layer an iteration's prompt carries (knobs memoryIndexTokens,
 * memoryTimelineTokens, memoryEntriesTokens); 0 leaves a layer out. A token is counted as four
 * characters.
 */
export const MemoryLayersSchema = shared('schemas/lasting-memory:MemoryLayersSchema', () =>
  z.object({
    indexTokens: z.number().int().min(0).max(20_000),
    timelineTokens: z.number().int().min(0).max(20_000),
    entriesTokens: z.number().int().min(0).max(20_000),
  }),
);
export type MemoryLayers = z.infer<typeof MemoryLayersSchema>;

/** The prompt's "memory from earlier runs" section, at most (all three layers at their maximum). */
export const MAX_EARLIER_RUNS_CHARS = 3 * 20_000 * 4 + 400;

/** A repository's memory as a file (`vigil memory export` / `import`). */
export const MemoryExportSchema = shared('schemas/lasting-memory:MemoryExportSchema', () =>
  z.object({
    vigilMemory: z.literal(1),
    repo: z.string().nullable(),
    exportedAt: z.string(),
    episodes: z.array(EpisodeSchema).max(100_000),
    patterns: z.array(PatternSchema).max(10_000),
    skills: z.array(SkillSchema).max(10_000),
    links: z.array(PatternLinkSchema).max(50_000),
  }),
);
export type MemoryExport = z.infer<typeof MemoryExportSchema>;

/**
 * The memory judge's answer (role `memory`, docs/agent-contract.md): a one-line lesson per item
 * it was shown, and groups of near-duplicates merged into the item kept. Ids are the items'
 * ids in the prompt; an answer naming any other id changes nothing.
 */
export const MemoryJudgeAnswerSchema = shared('schemas/lasting-memory:MemoryJudgeAnswerSchema', () =>
  z
    .object({
      lessons: z
        .array(z.object({ id: z.number().int().positive(), lesson: z.string().trim().min(1).max(300) }).strict())
        .max(50)
        .default([]),
      merges: z
        .array(
          z
            .object({
              keep: z.number().int().positive(),
              merge: z.array(z.number().int().positive()).min(1).max(20),
              reason: z.string().max(300).optional(),
            })
            .strict(),
        )
        .max(20)
        .default([]),
    })
    .strict(),
);
export type MemoryJudgeAnswer = z.infer<typeof MemoryJudgeAnswerSchema>;

/** What judging a run's memory did (the activity `judgeMemory`'s result; small: counts, the cost, a problem). */
export const MemoryJudgementSchema = shared('schemas/lasting-memory:MemoryJudgementSchema', () =>
  z.object({
    /** Whether the agent was called (no call: nothing the run made or changed to judge, or no store). */
    called: z.boolean(),
    items: z.number().int().min(0),
    lessons: z.number().int().min(0),
    merges: z.number().int().min(0),
    costUsd: z.number().min(0),
    /** Why nothing was applied (a malformed answer, a failed call, the store down); null: applied, or nothing to do. */
    problem: z.string().max(1000).nullable(),
  }),
);
export type MemoryJudgement = z.infer<typeof MemoryJudgementSchema>;

/** An item of a memory snapshot (what `vigil_memory_search` searches inside a sandboxed run). */
export const SnapshotItemSchema = shared('schemas/lasting-memory:SnapshotItemSchema', () =>
  z.object({
    ref: MemoryRefSchema,
    repo: z.string().max(4096).nullable(),
    kind: z.string().max(20),
    topic: z.string().max(200),
    title: z.string().max(300),
    body: z.string().max(2400),
    keywords: z.array(z.string().max(60)).max(60),
    evidence: z.number().int().min(0),
    importance: z.number().min(0).max(1),
  }),
);

/** Items a snapshot holds at most, and its file's size at most. */
export const SNAPSHOT_LIMITS = { items: 200, bytes: 512 * 1024 } as const;

/**
 * The memory a worker hands an iteration's agent call (docs/memory.md, Memory inside a sandboxed
 * run): the repository's and the installation's patterns, anti-patterns and skills, redacted and
 * bounded, in a file the call's sandbox may read (`VIGIL_MEMORY_SNAPSHOT`).
 */
export const MemorySnapshotSchema = shared('schemas/lasting-memory:MemorySnapshotSchema', () =>
  z.object({
    vigilMemorySnapshot: z.literal(1),
    runId: z.string().max(300),
    repo: z.string().max(4096),
    takenAt: z.string(),
    items: z.array(SnapshotItemSchema).max(SNAPSHOT_LIMITS.items),
  }),
);
export type MemorySnapshot = z.infer<typeof MemorySnapshotSchema>;
