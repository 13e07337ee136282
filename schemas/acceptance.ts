/**
 * The Wall: acceptance tests a person wrote from the PRD, which the builder never sees (knob
 * `acceptanceTests`). The contracts of the two activities that handle them — `sealAcceptance`
 * (the folder copied into the worker's private folder at the start, each file's digest recorded)
 * and `runAcceptance` (the sealed files laid over a scratch export of a tree and run there,
 * sandboxed) — and what the run state keeps of them: digests, counts and failing test names,
 * never the tests' source.
 */
import { z } from 'zod';
import { RunAuthorizationSchema } from './authorization.js';
import { SandboxModeSchema, SandboxReportSchema } from './sandbox.js';
import { shared } from './shared.js';

/** At most this many acceptance files (a folder of a person's tests, not a suite). */
export const MAX_ACCEPTANCE_FILES = 200;
/** At most this many failing test names are kept and shown to the builder. */
export const MAX_FAILING_NAMES = 20;

/** One sealed file: its path inside the folder (POSIX, relative) and the sha256 of its bytes. */
export const AcceptanceFileSchema = shared('schemas/acceptance:AcceptanceFileSchema', () =>
  z.object({
    path: z.string().min(1).max(500),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);
export type AcceptanceFile = z.infer<typeof AcceptanceFileSchema>;

export const SealAcceptanceInputSchema = shared('schemas/acceptance:SealAcceptanceInputSchema', () =>
  z.object({
    runId: z.string(),
    /** The folder the person named (the knob's value); ignored when `drafted`. */
    sourceDir: z.string().max(4096),
    /** The folder the acceptance role wrote (knob acceptanceFromPrd): the run's draft folder on the worker. */
    drafted: z.boolean().optional(),
    repoPath: z.string(),
    authorization: RunAuthorizationSchema.nullable().default(null),
  }),
);
export type SealAcceptanceInput = z.input<typeof SealAcceptanceInputSchema>;

/** The seal: the files and their digests (ok), or why the folder cannot be used (nothing sealed). */
export const SealAcceptanceResultSchema = shared('schemas/acceptance:SealAcceptanceResultSchema', () =>
  z.object({
    ok: z.boolean(),
    reason: z.string().max(1000),
    files: z.array(AcceptanceFileSchema).max(MAX_ACCEPTANCE_FILES),
    /** Where the sealed copy is, on the worker (for a person to read: the acceptance role's tests are shown once). */
    dir: z.string().max(4096).optional(),
  }),
);
export type SealAcceptanceResult = z.infer<typeof SealAcceptanceResultSchema>;

export const RunAcceptanceInputSchema = shared('schemas/acceptance:RunAcceptanceInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    /** The tree the run inspected (the candidate), exported from the repository's object store. */
    treeHash: z.string().regex(/^[0-9a-f]{40,64}$/),
    /** The digests recorded at the seal: a sealed file that no longer has its digest is refused, not run. */
    files: z.array(AcceptanceFileSchema).min(1).max(MAX_ACCEPTANCE_FILES),
    /** The acceptanceCommand knob; empty: the runner detected in the exported tree. */
    command: z.string().max(4096),
    iteration: z.number().int().min(0),
    timeoutSeconds: z.number().int().min(1),
    authorization: RunAuthorizationSchema.nullable().default(null),
    sandbox: SandboxModeSchema.optional(),
    sandboxRegistries: z.boolean().optional(),
  }),
);
export type RunAcceptanceInput = z.input<typeof RunAcceptanceInputSchema>;

/**
 * pass: the runner's report is complete and every acceptance test passed; fail: one did not (or
 * the process ended before its report); refused: a sealed file changed, nothing ran; inconclusive:
 * no runner could be found or it reported no test.
 */
export const AcceptanceVerdictSchema = shared('schemas/acceptance:AcceptanceVerdictSchema', () =>
  z.enum(['pass', 'fail', 'refused', 'inconclusive']),
);
export type AcceptanceVerdict = z.infer<typeof AcceptanceVerdictSchema>;

export const AcceptanceResultSchema = shared('schemas/acceptance:AcceptanceResultSchema', () =>
  z.object({
    verdict: AcceptanceVerdictSchema,
    /** One line, with counts and names only (never a test's source or its output). */
    reason: z.string().max(500),
    passed: z.number().int().min(0).nullable(),
    failed: z.number().int().min(0).nullable(),
    /** The failing tests' names (their last part: `test_negative`, `negative`), never their source. */
    failing: z.array(z.string().max(200)).max(MAX_FAILING_NAMES),
    runner: z.string().max(100),
    command: z.string().max(4096),
    durationMs: z.number().int().min(0),
    /** Export, links and the files laid over: before the runner started. */
    setupMs: z.number().int().min(0),
    /** The runner's log, in the worker's private folder (not the repository: it holds the tests' output). */
    logPath: z.string(),
    sandbox: SandboxReportSchema.nullable().optional(),
  }),
);
export type AcceptanceResult = z.infer<typeof AcceptanceResultSchema>;

/** What the run state keeps: the seal's digests and the latest verdict (patch vigil-done-means-done-v1). */
export const AcceptanceStateSchema = shared('schemas/acceptance:AcceptanceStateSchema', () =>
  z.object({
    files: z.array(AcceptanceFileSchema).max(MAX_ACCEPTANCE_FILES),
    sealedAt: z.string(),
    /**
     * Tests the acceptance role wrote (knob acceptanceFromPrd, patch vigil-acceptance-from-prd-v1):
     * the sealed folder on the worker, whether a person was shown them, which of the role's calls
     * wrote them, and why the run does not rest on them when it does not (every one of them passed
     * on the tree the run started with, in each call). Absent: a person's folder.
     */
    drafted: z
      .object({
        dir: z.string().max(4096),
        shown: z.boolean(),
        attempt: z.number().int().min(1).optional(),
        dropped: z.string().max(2000).nullable().optional(),
      })
      .nullable()
      .optional(),
    last: z
      .object({
        treeHash: z.string(),
        iteration: z.number().int().min(0),
        verdict: AcceptanceVerdictSchema,
        reason: z.string().max(500),
        passed: z.number().int().min(0).nullable(),
        failed: z.number().int().min(0).nullable(),
        failing: z.array(z.string().max(200)).max(MAX_FAILING_NAMES),
      })
      .nullable(),
  }),
);
export type AcceptanceState = z.infer<typeof AcceptanceStateSchema>;
