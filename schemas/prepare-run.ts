/**
 * The input and result of `prepareRun` (activities/repo.ts): what a run captures as it starts.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { RepoMeasureSchema } from './effort.js';
import { MEMORY_LIMITS, NoteRefSchema } from './memory.js';
import { shared } from './shared.js';

export const PrepareRunInputSchema = shared('schemas/activities:PrepareRunInputSchema', () =>
  z.object({
    repoPath: z.string(),
    runId: z.string(),
    /** When given, the PRD is checked against the always-HIGH tier patterns. */
    prdPath: z.string().optional(),
    /** Also read the repository's `.vigil/learnings.md` for the run memory. */
    learnings: z.boolean().optional(),
    /** Keep the learnings with the activity (the run's prompt-parts store) and return a reference, not the text. */
    learningsByRef: z.boolean().optional(),
    /** Also measure the task (activities/repo-measure.ts): the repository's files, languages and services, the PRD's size and kinds of requirement. */
    measure: z.boolean().optional(),
  }),
);
export type PrepareRunInput = z.infer<typeof PrepareRunInputSchema>;

export const PrepareRunResultSchema = shared('schemas/activities:PrepareRunResultSchema', () =>
  z.object({
    /** HEAD at run start; null when the repository has no commits yet. */
    sha: z.string().nullable(),
    /** Tree hash of the working tree at run start (see inspectRepo). */
    treeHash: z.string(),
    artifactDir: z.string(),
    /** The always-HIGH category the PRD matches (security, architecture, ...), or null. */
    alwaysHigh: z.string().nullable().default(null),
    /** `.vigil/learnings.md`, bounded, when asked for (null: none). */
    learnings: z.string().max(MEMORY_LIMITS.learningsChars).nullable().default(null),
    /** The learnings by reference, when asked for with `learningsByRef` (null: none). */
    learningsRef: NoteRefSchema.nullable().default(null),
    /** What the task measures, when asked for with `measure` (null: not asked). */
    measure: RepoMeasureSchema.nullable().default(null),
  }),
);
export type PrepareRunResult = z.infer<typeof PrepareRunResultSchema>;

/** A run started from a goal (`vigil start --goal`): when its discovery call wrote the PRD, and its size (workflows/run/discovery.ts). */
/** The PRD a discovery call wrote (the agent result's `discovered`), or why there is none. */
export const DiscoveredPrdSchema = shared('schemas/prepare-run:DiscoveredPrdSchema', () =>
  z.object({
    ok: z.boolean(),
    path: z.string().max(4096),
    title: z.string().max(200),
    bytes: z.number().int().min(0),
    problem: z.string().max(500).nullable(),
  }),
);

export const DiscoveryStateSchema = shared('schemas/prepare-run:DiscoveryStateSchema', () =>
  z.object({ at: z.string().max(40), bytes: z.number().int().min(0) }),
);
