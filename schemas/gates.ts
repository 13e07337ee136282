/**
 * Quality gates: what a gate reports (findings and a verdict), what the run remembers of it
 * (consecutive failures, the last reason), and the reviews and checklist that guard completion.
 * Gate activities return facts; `rules/gates.ts` decides what they mean.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';
import { SandboxModeSchema } from './sandbox.js';

/**
 * The gates, in the order they run after an iteration that changed the tree (spec §5.1).
 * `code_review` and `checklist` guard completion: they run when completion is about to be judged.
 */
export const GATE_NAMES = [
  'static_analysis',
  'secret_scan',
  'build',
  'tests',
  'mock_integrity',
  'test_mutation',
  'test_gaming',
  'doc_coverage',
  'coverage',
  'app_check',
  'e2e',
  'perf',
  'code_review',
  'checklist',
] as const;
export const GateNameSchema = shared('schemas/gates:GateNameSchema', () => z.enum(GATE_NAMES));
export type GateName = z.infer<typeof GateNameSchema>;

/** Gates that run as tools after an iteration (each one activity call). */
export const TOOL_GATES = [
  'static_analysis',
  'secret_scan',
  'build',
  'tests',
  'mock_integrity',
  'test_mutation',
  'test_gaming',
  'doc_coverage',
  'coverage',
  'app_check',
  'e2e',
  'perf',
] as const satisfies readonly GateName[];
export type ToolGate = (typeof TOOL_GATES)[number];

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export const SeveritySchema = shared('schemas/gates:SeveritySchema', () => z.enum(SEVERITIES));
export type Severity = z.infer<typeof SeveritySchema>;

/** Severity rank: lower is worse (critical 0 ... info 4). */
export const severityRank = (s: Severity): number => SEVERITIES.indexOf(s);

/** One thing a gate found. `file` is relative to the repository; never a secret's value. */
export const FindingSchema = shared('schemas/gates:FindingSchema', () =>
  z.object({
    gate: GateNameSchema,
    severity: SeveritySchema,
    file: z.string().max(500).nullable().default(null),
    line: z.number().int().min(0).nullable().default(null),
    message: z.string().max(500),
    /** A finding a person may waive names itself by this id (`vigil waive <run> <id>`); absent: not waivable by id. */
    id: z.string().max(300).optional(),
  }),
);
export type Finding = z.infer<typeof FindingSchema>;
export type FindingInput = z.input<typeof FindingSchema>;

export const GATE_VERDICTS = ['pass', 'fail', 'inconclusive'] as const;
export const GateVerdictSchema = shared('schemas/gates:GateVerdictSchema', () => z.enum(GATE_VERDICTS));
export type GateVerdict = z.infer<typeof GateVerdictSchema>;

/** Findings kept in a gate result (the full list is in the report file). */
export const MAX_FINDINGS = 20;

/**
 * One gate's result on one tree. `reason` is one stable line (the stuck-gate rule compares it
 * between runs of the gate); `reportPath` is the full report under the run folder.
 */
export const GateResultSchema = shared('schemas/gates:GateResultSchema', () =>
  z.object({
    gate: GateNameSchema,
    verdict: GateVerdictSchema,
    reason: z.string().max(500),
    findings: z.array(FindingSchema).max(MAX_FINDINGS).default([]),
    /** Findings found in all (the list above is capped). */
    findingCount: z.number().int().min(0).default(0),
    /** Tools the gate wanted and could not run (`shellcheck: not installed`): reported, never a pass. */
    missingTools: z.array(z.string().max(200)).max(20).default([]),
    durationMs: z.number().int().min(0).default(0),
    reportPath: z.string().max(4096).nullable().default(null),
    /** The tree the gate looked at. */
    treeHash: z.string().max(100).default(''),
    iteration: z.number().int().min(0).default(0),
  }),
);
export type GateResult = z.infer<typeof GateResultSchema>;
export type GateResultInput = z.input<typeof GateResultSchema>;

/** What the run remembers per gate (carried across continue-as-new). */
export const GateTrackSchema = shared('schemas/gates:GateTrackSchema', () =>
  z.object({
    consecutiveFailures: z.number().int().min(0).default(0),
    /** The last failure's reason and how many failures in a row gave exactly that reason. */
    lastReason: z.string().max(500).nullable().default(null),
    sameReason: z.number().int().min(0).default(0),
    /** The failure count at which a person was last told (escalate once per streak). */
    escalatedAt: z.number().int().min(0).default(0),
    pausedAt: z.number().int().min(0).default(0),
    /** The tree this gate last passed on: it looks at the files changed since (null: since the run start). */
    passTree: z.string().max(100).nullable().default(null),
  }),
);
export type GateTrack = z.infer<typeof GateTrackSchema>;

/**
 * The tree a judgement (a council round, a passing review, a checklist verification) was made on,
 * and what changed since (rules/lean-rounds.ts). Carried across continue-as-new.
 */
export const ChangeMarkSchema = shared('schemas/gates:ChangeMarkSchema', () =>
  z.object({
    tree: z.string().max(100),
    iteration: z.number().int().min(0),
    /** The run's changed files (vs its start) on that tree; null when the inspection listed only some. */
    files: z.array(z.string().max(4096)).max(50).nullable(),
    /** Paths changed since, along an unbroken chain of inspected trees; null: not known in full. */
    since: z.array(z.string().max(4096)).max(100).nullable(),
    /** The last tree the chain reached. */
    head: z.string().max(100),
  }),
);
export type ChangeMark = z.infer<typeof ChangeMarkSchema>;

export const ChangeMarksSchema = shared('schemas/gates:ChangeMarksSchema', () =>
  z.object({
    round: ChangeMarkSchema.nullable().default(null),
    review: ChangeMarkSchema.nullable().default(null),
    checklist: ChangeMarkSchema.nullable().default(null),
  }),
);
export type ChangeMarks = z.infer<typeof ChangeMarksSchema>;

// ---------------------------------------------------------------------------------------------
// Blind code review
// ---------------------------------------------------------------------------------------------

export const REVIEW_VERDICTS = ['PASS', 'FAIL', 'NO_VERDICT', 'NO_OUTPUT'] as const;
export const ReviewVerdictSchema = shared('schemas/gates:ReviewVerdictSchema', () => z.enum(REVIEW_VERDICTS));

export const ReviewerRecordSchema = shared('schemas/gates:ReviewerRecordSchema', () =>
  z.object({
    reviewer: z.string().max(100),
    verdict: ReviewVerdictSchema,
    blocking: z.boolean(),
    counts: z.object({ critical: z.number().int(), high: z.number().int(), medium: z.number().int(), low: z.number().int() }),
    /** The first few blocking or notable finding lines (capped). */
    findings: z.array(z.string().max(300)).max(5).default([]),
    logPath: z.string().max(4096).default(''),
  }),
);
export type ReviewerRecord = z.infer<typeof ReviewerRecordSchema>;

/**
 * How a round's members were asked when the provider could batch them (claude `--agents`): in one
 * call (`batched`), or one call each after the batched call failed (`batched: false`, and why).
 * Absent: one call per member, as every provider that cannot batch.
 */
export const RoundBatchSchema = shared('schemas/gates:RoundBatchSchema', () =>
  z.object({
    batched: z.boolean(),
    /** How many members the one call answered for. */
    members: z.number().int().min(0),
    /** One line: what happened (the fallback's reason). */
    note: z.string().max(300),
    /** The batched call's log. */
    logPath: z.string().max(4096),
  }),
);
export type RoundBatch = z.infer<typeof RoundBatchSchema>;

export const ReviewRecordSchema = shared('schemas/gates:ReviewRecordSchema', () =>
  z.object({
    round: z.number().int().min(1),
    iteration: z.number().int().min(0),
    treeHash: z.string().max(100),
    reviewers: z.array(ReviewerRecordSchema).max(12),
    devilsAdvocate: ReviewerRecordSchema.nullable().default(null),
    /** pass: no blocking finding and every reviewer gave a verdict. */
    result: z.enum(['pass', 'blocked', 'inconclusive', 'refused']),
    reason: z.string().max(500),
    mergeability: z.number().int().min(0).max(100),
    /** One automatic re-run happened (the first attempt was inconclusive). */
    rerun: z.boolean().default(false),
    /** The reviewers went out as one call (or tried to); absent when each had its own. */
    batch: RoundBatchSchema.optional(),
    /** A delta review: the passing review whose tree the diff was taken from (absent: the diff since the run's start). */
    since: z.object({ round: z.number().int().min(1), iteration: z.number().int().min(0) }).optional(),
    at: z.string(),
  }),
);
export type ReviewRecord = z.infer<typeof ReviewRecordSchema>;

// ---------------------------------------------------------------------------------------------
// PRD checklist
// ---------------------------------------------------------------------------------------------

export const ChecklistPrioritySchema = shared('schemas/gates:ChecklistPrioritySchema', () => z.enum(['critical', 'high', 'medium', 'low']));

export const ChecklistItemSchema = shared('schemas/gates:ChecklistItemSchema', () =>
  z.object({
    id: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'ids are letters, digits, _, . and - (e.g. REQ-1)'),
    title: z.string().min(1).max(300),
    priority: ChecklistPrioritySchema.default('medium'),
    verify: z.string().max(500).default(''),
  }),
);
export type ChecklistItem = z.infer<typeof ChecklistItemSchema>;

export const MAX_CHECKLIST_ITEMS = 60;

export const ChecklistSchema = z
  .array(ChecklistItemSchema)
  .min(1)
  .max(MAX_CHECKLIST_ITEMS)
  .refine((items) => new Set(items.map((i) => i.id)).size === items.length, { message: 'checklist ids must be unique' });

/** What a checklist extraction call gave (the agent activity's `checklist`, parse: checklist). */
export const ChecklistExtractionSchema = shared('schemas/gates:ChecklistExtractionSchema', () =>
  z.object({
    ok: z.boolean(),
    items: z.array(ChecklistItemSchema).max(MAX_CHECKLIST_ITEMS),
    dropped: z.number().int().min(0),
    error: z.string().max(500).nullable(),
    /** API descriptions the PRD names that could not be read as one (activities/api-specs.ts), a line each. */
    apiProblems: z.array(z.string().max(400)).max(20).default([]),
  }),
);

export const ItemStatusSchema = shared('schemas/gates:ItemStatusSchema', () => z.enum(['unverified', 'passing', 'failing']));

export const ChecklistStateSchema = shared('schemas/gates:ChecklistStateSchema', () =>
  z.object({
    items: z.array(ChecklistItemSchema).max(MAX_CHECKLIST_ITEMS),
    /** Ids of the held-out items (never shown to the builder). */
    heldOut: z.array(z.string()).max(5),
    source: z.enum(['agent', 'file']),
    status: z
      .record(z.string(), z.object({ status: ItemStatusSchema, evidence: z.string().max(300), iteration: z.number().int().min(0) }))
      .default({}),
    /** Waived item ids, with who waived them and why. */
    waivers: z
      .array(z.object({ item: z.string(), by: z.string().max(200), reason: z.string().max(500), at: z.string() }))
      .max(MAX_CHECKLIST_ITEMS)
      .default([]),
  }),
);
export type ChecklistState = z.infer<typeof ChecklistStateSchema>;

// ---------------------------------------------------------------------------------------------
// Activity inputs
// ---------------------------------------------------------------------------------------------

export const RunGateInputSchema = shared('schemas/gates:RunGateInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    gate: z.enum(TOOL_GATES).exclude(['tests']),
    iteration: z.number().int().min(0),
    /** The gate looks at the files changed since this tree (where it last passed, else the run start). */
    sinceTree: z.string().nullable(),
    /** The tree the run started with: the integrity gates compare with it, whatever the gate last passed on. */
    runStartTree: z.string().nullable().optional(),
    timeoutSeconds: z.number().int().min(1),
    coverageThreshold: z.number().min(0).max(100).default(80),
    /** The run's sandbox knob for the gate's tools (absent: the worker's setting). */
    sandbox: SandboxModeSchema.optional(),
    /** The build gate's command (the knob buildCommand; absent or empty: detected from the repository). */
    buildCommand: z.string().max(4096).optional(),
    /** The app check's command (the knob appCheck; absent or empty: `.vigil/app-check.*` of the start tree, when it has one). */
    appCheck: z.string().max(4096).optional(),
    /** The end-to-end gate's command (the knob e2eCommand). */
    e2eCommand: z.string().max(4096).optional(),
    /** The performance check's command (the knob perfCommand). */
    perfCommand: z.string().max(4096).optional(),
  }),
);
export type RunGateInput = z.input<typeof RunGateInputSchema>;

export const PrepareReviewInputSchema = shared('schemas/gates:PrepareReviewInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    round: z.number().int().min(1),
    runStartSha: z.string().nullable(),
    runStartTree: z.string().nullable(),
    /** Largest diff reviewers get; bigger is refused (the review blocks, fail-closed). */
    maxDiffBytes: z.number().int().min(1),
  }),
);
export type PrepareReviewInput = z.input<typeof PrepareReviewInputSchema>;

export const PreparedReviewSchema = shared('schemas/gates:PreparedReviewSchema', () =>
  z.object({
    diffPath: z.string(),
    diffBytes: z.number().int().min(0),
    /** Changed files in the review's scope (capped). */
    files: z.array(z.string()).max(200),
    fileCount: z.number().int().min(0),
    /** The reviewer-selection keywords present in the diff and the file names (the diff itself stays out of history). */
    keywords: z.array(z.string().max(40)).max(100),
    treeHash: z.string(),
    /** Why the diff cannot be reviewed (too big, empty); null when it can. */
    refused: z.string().max(500).nullable(),
  }),
);
export type PreparedReview = z.infer<typeof PreparedReviewSchema>;

export const WriteReviewReportInputSchema = shared('schemas/gates:WriteReviewReportInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    record: ReviewRecordSchema,
  }),
);
export type WriteReviewReportInput = z.input<typeof WriteReviewReportInputSchema>;
