/**
 * Inputs and outputs of activities. Outputs carry facts, paths and short tails only (a few KiB),
 * never transcripts: history stays small however long the run.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { ReportFactsSchema, TestSelectionSchema } from './test-report.js';
import { shared } from './shared.js';
import { RunAuthorizationSchema } from './authorization.js';
import { PROVIDERS } from './knobs.js';
import { CallContextSchema } from './call-context.js';
import { DirectiveSchema, PhaseSchema, TierSchema } from './run.js';
import { ChecklistExtractionSchema, GateResultSchema, MAX_CHECKLIST_ITEMS, ReviewerRecordSchema, TOOL_GATES } from './gates.js';
import { MEMORY_LIMITS, NoteRefSchema, PromptMemoryRefSchema, PromptMemorySchema } from './memory.js';
import { SandboxLimitsSchema, SandboxModeSchema, SandboxReportSchema } from './sandbox.js';
import { MAX_EARLIER_RUNS_CHARS, MemoryLayersSchema } from './lasting-memory.js';
import { MAX_TASKS, PlannedTaskSchema } from './tasks.js';

export const ParsedVoteSchema = shared('schemas/activities:ParsedVoteSchema', () =>
  z.object({
    vote: z.enum(['APPROVE', 'REJECT', 'CANNOT_VALIDATE']).nullable(),
    reason: z.string().nullable(),
    issues: z.array(z.object({ severity: z.enum(['low', 'medium', 'high', 'critical']), description: z.string() })).max(50),
  }),
);

export const AGENT_ROLES = [
  'iteration',
  'council',
  'devils-advocate',
  'reviewer',
  'checklist',
  'checklist-verifier',
  'planner',
  'memory',
  'acceptance',
  'discovery',
] as const;
export const AgentRoleSchema = shared('schemas/activities:AgentRoleSchema', () => z.enum(AGENT_ROLES));
export type AgentRole = z.infer<typeof AgentRoleSchema>;

export * from './prepare-run.js';
import { DiscoveredPrdSchema } from './prepare-run.js';

/** The parts of an iteration prompt; the agent activity renders them (rules/prompt.ts) into the prompt file, so the rendered text never enters history. */
export const PromptInputSchema = shared('schemas/activities:PromptInputSchema', () =>
  z.object({
    prdPath: z.string(),
    prdTitle: z.string(),
    iteration: z.number().int().min(1),
    maxIterations: z.number().int().min(1),
    phase: PhaseSchema,
    tier: TierSchema,
    /** Consecutive failures before this iteration (> 0 means this is a retry). */
    retry: z.number().int().min(0),
    directives: z.array(DirectiveSchema),
    findings: z.string().nullable(),
    completionPromise: z.string(),
    /** Summary of the latest handoff, after an escalation or when a fresh session starts. */
    handoffSummary: z.string().nullable().optional(),
    /** The agent starts a fresh session (context clear): say so. */
    freshSession: z.boolean().optional(),
    /** Failing quality gates and advisory findings, rendered under "Quality gate failures". */
    gateFindings: z.string().max(8000).nullable().optional(),
    /** The PRD checklist as the builder may see it (held-out items left out). */
    checklist: z.string().max(6000).nullable().optional(),
    /** The run memory (schemas/memory.ts): the run so far, the agent's continuity notes, the repository's learnings. */
    memory: PromptMemorySchema.nullable().optional(),
    /** A template file (knob promptTemplate) the activity renders the parts with; absent: the default template. */
    templatePath: z.string().max(4096).optional(),
    /** Memory from earlier runs (docs/memory.md), retrieved by the agent activity within the layer budgets. */
    earlierRuns: z.string().max(MAX_EARLIER_RUNS_CHARS).nullable().optional(),
  }),
);
export type PromptInput = z.infer<typeof PromptInputSchema>;

/** The long parts of a prompt, which may travel by reference. */
export const PROMPT_PART_NAMES = ['findings', 'gateFindings', 'checklist', 'handoffSummary'] as const;
export type PromptPartName = (typeof PROMPT_PART_NAMES)[number];
/** A part at least this long is stored by the agent activity and sent by reference afterwards. */
export const PROMPT_PART_MIN_CHARS = 512;
export const PromptRefsSchema = shared('schemas/activities:PromptRefsSchema', () =>
  z.partialRecord(z.enum(PROMPT_PART_NAMES), z.string().regex(/^[0-9a-f]{64}$/)),
);
export type PromptRefs = z.infer<typeof PromptRefsSchema>;
/** Failure type of an agent call whose prompt part was sent by reference but is not stored where the call runs. */
export const PROMPT_PART_MISSING = 'PromptPartMissing';

/**
 * What the iteration's agent activity also does once the agent has exited (one activity instead of
 * three): inspect the repository (as inspectRepo) and consume the agent's signal files (as
 * readAgentSignals). An object so later steps can join it.
 */
/** A checkpoint to take of the inspected tree: where, on top of which commit, and which old refs to drop. */
export const CheckpointRequestSchema = shared('schemas/activities:CheckpointRequestSchema', () =>
  z.object({
    ref: z.string().min(1).max(400),
    /** The previous checkpoint's commit (null: the first checkpoint of the run). */
    parent: z.string().max(64).nullable(),
    message: z.string().max(2000),
    /** Refs of checkpoints past the retention bound, deleted in the same transaction. */
    prune: z.array(z.string().max(400)).max(200).default([]),
  }),
);
export type CheckpointRequest = z.input<typeof CheckpointRequestSchema>;

export const IterationInspectionInputSchema = shared('schemas/activities:IterationInspectionInputSchema', () =>
  z.object({
    runStartSha: z.string().nullable(),
    /** Tree hash after the previous iteration: this iteration's own changes are measured against it. */
    previousTree: z.string().nullable(),
    /** Consume the agent's signal files. */
    signals: z.boolean().default(true),
    /** Also read the agent's notes (SUMMARY, CONTINUITY.md) for the run memory. */
    notes: z.boolean().default(false),
    /** CONTINUITY.md by reference (`continuityRef`): the text is kept in the run's prompt-parts store. */
    notesByRef: z.boolean().optional(),
    /** When given and the tree changed, the tree becomes a checkpoint commit (activities/checkpoints.ts). */
    checkpoint: CheckpointRequestSchema.optional(),
  }),
);
export type IterationInspectionInput = z.input<typeof IterationInspectionInputSchema>;

export const ProviderNameSchema = shared('schemas/activities:ProviderNameSchema', () => z.enum(PROVIDERS));

const reviewerSpec = shared('schemas/activities:reviewerSpec', () => ({
  reviewer: z.string().max(200),
  diffPath: z.string().max(4096),
  diffBytes: z.number().int().min(0),
  files: z.array(z.string().max(4096)).max(100_000),
  testSummary: z.string().max(4000),
  prdPath: z.string().max(4096).nullable(),
  round: z.number().int().min(0),
  iteration: z.number().int().min(0),
  /** A delta review: what the diff is taken from ("code review round 2, iteration 3"). */
  since: z.string().max(300).optional(),
}));
const councilSpec = shared('schemas/activities:councilSpec', () => ({
  size: z.number().int().min(1),
  iteration: z.number().int().min(0),
  prdPath: z.string().max(4096),
  evidencePath: z.string().max(4096),
  severityThreshold: z.enum(['low', 'medium', 'high', 'critical']),
}));
/**
 * A reviewing call's prompt as its parts (runs from `vigil-lean-prompt-v1` on): the activity
 * renders it with the same functions the workflow used (rules/call-prompt.ts).
 */
export const PromptSpecSchema = shared('schemas/activities:PromptSpecSchema', () =>
  z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('reviewer'), ...reviewerSpec }),
    z.object({ kind: z.literal('review-devils-advocate'), ...reviewerSpec }),
    z.object({
      kind: z.literal('council'),
      role: z.enum(['requirements-verifier', 'test-auditor', 'devils-advocate-minded']),
      member: z.number().int().min(0),
      ...councilSpec,
    }),
    z.object({ kind: z.literal('council-devils-advocate'), ...councilSpec }),
  ]),
);
export type PromptSpec = z.infer<typeof PromptSpecSchema>;

export const RunAgentInputSchema = shared('schemas/activities:RunAgentInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    /** `command`: the agent's argv. Other providers: an optional override of the CLI's binary and leading words. */
    argv: z.array(z.string()).default([]),
    /** Which CLI preset builds the call and reads its output (activities/providers/). */
    provider: ProviderNameSchema.default('command'),
    /** Model override; null: the provider's model for `tier`. */
    model: z.string().max(200).nullable().default(null),
    /** Reasoning effort override; null: by tier. */
    effort: z.string().max(20).nullable().default(null),
    fallbackModel: z.string().max(200).nullable().default(null),
    /** What is left of the run's budget (passed to CLIs with a budget flag); null: no budget. */
    remainingBudgetUsd: z.number().min(0).nullable().default(null),
    /** The run's signature (checked by workers that require signed runs). */
    authorization: RunAuthorizationSchema.nullable().default(null),
    /** The run's sandbox and sandboxRegistries knobs; absent: the worker's settings (VIGIL_SANDBOX, VIGIL_SANDBOX_REGISTRIES). */
    sandbox: SandboxModeSchema.optional(),
    sandboxRegistries: z.boolean().optional(),
    /** The run's sandboxPids, sandboxMemoryMb and sandboxCpuWeight knobs; absent (runs from before them): their defaults. */
    sandboxLimits: SandboxLimitsSchema.optional(),
    /** The silence watchdog (agentSilenceMinutes, lib/call-silence.ts): ended after this many quiet seconds; 0: never; absent: 900. */
    silenceSeconds: z.number().min(0).max(172_800).default(900),
    /** An iteration's prompt leads with the last failure's hint (knob selfHeal, activities/last-error.ts); absent: it does. */
    selfHeal: z.boolean().optional(),
    /** The prompt text (council and review calls, and iterations scheduled by older workers). */
    prompt: z.string().optional(),
    /** A reviewing call's prompt as its parts, rendered by the activity (instead of `prompt`). */
    promptSpec: PromptSpecSchema.optional(),
    /** The output's tail only when the call failed (the log holds it). */
    tailOnFailure: z.boolean().optional(),
    /** The result without the fields at their default null (the workflow parses it with AgentResultSchema). */
    compact: z.boolean().optional(),
    /** The prompt's parts, rendered by the activity (iterations). One of `prompt`, `promptSpec` and `promptInput` is required. */
    promptInput: PromptInputSchema.optional(),
    /** Long prompt parts sent by reference: the sha256 of a text an earlier call of this run stored (see activities/iteration.ts). */
    promptRefs: PromptRefsSchema.optional(),
    /** The run memory by reference (`promptInput.memory` is then rendered by the activity; see activities/prompt-memory.ts). */
    memoryRef: PromptMemoryRefSchema.optional(),
    /** The memory from earlier runs: each layer's token budget (absent: none is retrieved; docs/memory.md). */
    memoryLayers: MemoryLayersSchema.optional(),
    /** After the agent: inspect the repository and read the signal files in the same activity (iterations). */
    inspect: IterationInspectionInputSchema.nullable().optional(),
    /** After a good call that changed the tree (and its inspection): this gate pass, in the same activity (iterations). */
    gates: z
      .lazy(() => CarriedGatesSchema)
      .nullable()
      .optional(),
    role: AgentRoleSchema,
    iteration: z.number().int().min(1),
    phase: PhaseSchema,
    tier: TierSchema,
    /**
     * An iteration's ceiling (knob maxTier): with it, the repository's model-override file
     * (rules/model-override.ts) may set this call's tier and claude's model, never above it.
     */
    maxTier: TierSchema.optional(),
    timeoutSeconds: z.number().int().min(1),
    completionPromise: z.string(),
    /** Extra environment for the agent (e.g. VIGIL_MEMBER for council members). */
    extraEnv: z.record(z.string(), z.string()).default({}),
    /** Read a council vote from the output (council members and the devil's advocate). */
    parseVote: z.boolean().default(false),
    /** Read a code review (VERDICT line, severities), a checklist, checklist verifications, or a planner's task list from the answer. */
    parse: z.enum(['review', 'checklist', 'verification', 'tasks']).nullable().default(null),
    /**
     * With `parse: 'checklist'`: the PRD whose API descriptions (OpenAPI, Postman, GraphQL files it
     * names) add an item per operation to the extracted checklist (activities/api-specs.ts).
     */
    apiSpecsFrom: z.string().max(4096).optional(),
    /**
     * A reviewing call's tree before it, when the caller hashed the tree just before (a round's
     * evidence or diff, for the calls it makes first): the call does not hash it again.
     */
    treeBefore: z.string().optional(),
    /** The checklist ids a verifier answers for (parse: verification), or a planner splits into tasks (parse: tasks). */
    checklistIds: z.array(z.string().max(64)).max(MAX_CHECKLIST_ITEMS).default([]),
    /** Requests per minute assumed for the provider (rate-limit waits without a hint). */
    rateLimitRpm: z.number().int().min(1).default(50),
    /**
     * A batched round's call (claude only, activities/round-batch.ts): the sub-agents it declares
     * (`--agents` JSON) and the schema of its one answer (`--json-schema`).
     */
    subAgents: z.object({ agents: z.string().max(200_000), schema: z.string().max(50_000), members: z.number().int().min(1) }).optional(),
    /**
     * The call's prompt, log and state go to the run's private folder, not the repository's, as a
     * checklist role's do (a batched council round that carries the checklist verifier: its prompts
     * and answers name held-out items the builder must not read).
     */
    privateFiles: z.boolean().optional(),
  }),
);
/** What callers pass (defaults filled in by the activity). */
export type RunAgentInput = z.input<typeof RunAgentInputSchema>;

export const AgentResultSchema = shared('schemas/activities:AgentResultSchema', () =>
  z.object({
    exitCode: z.number().int(),
    /** True when the agent was killed for exceeding its timeout (exit code 124). */
    timedOut: z.boolean(),
    durationMs: z.number().int().min(0),
    logPath: z.string(),
    promptPath: z.string(),
    /** Last lines of the output, at most ~2 KiB, with credentials redacted. */
    tail: z.string(),
    outputBytes: z.number().int().min(0),
    /** The iteration log or another file of the call could not be written (e.g. disk full). */
    ioError: z.string().max(1000).nullable().default(null),
    /** Completion claimed by promise text in the output or by the signal file (consumed). */
    claimed: z.boolean(),
    claimSource: z.enum(['promise', 'signal-file']).nullable(),
    /**
     * The files a claim says it changed (rules/claimed-files.ts: the claim file's
     * summary and evidence, the output's tail), and those the diff since the run's start does not
     * hold (null: not checked). Null when the call claimed nothing, named no file or was not inspected.
     */
    claimedFiles: z
      .object({ named: z.array(z.string().max(300)).max(20), notInDiff: z.array(z.string().max(300)).max(20).nullable() })
      .nullable()
      .default(null),
    /** Which attempt of this activity produced the result (> 1 after a worker crash). */
    attempt: z.number().int().min(1),
    /** A done-phrase found in the last 200 lines of output ("all tests pass", ...), or null. */
    donePhrase: z.string().nullable().default(null),
    /** The vote read from the output, when asked for. */
    vote: ParsedVoteSchema.nullable().default(null),
    /** What the call cost, as the agent reported it in `.vigil/signals/USAGE` (consumed), or null. */
    usage: z
      .object({
        costUsd: z.number().min(0).nullable(),
        inputTokens: z.number().int().min(0),
        outputTokens: z.number().int().min(0),
        cacheReadTokens: z.number().int().min(0).default(0),
        cacheWriteTokens: z.number().int().min(0).default(0),
        model: z.string().max(200).nullable(),
      })
      .nullable()
      .default(null),
    /** Which provider ran the call, and the model it was asked for (null: the CLI's own default). */
    provider: ProviderNameSchema.default('command'),
    model: z.string().max(200).nullable().default(null),
    /** The CLI's session id (resumable where the CLI supports it), or null. */
    sessionId: z.string().max(200).nullable().default(null),
    /**
     * Whether the CLI's output shows anything from the model (a message, a tool call, a finished
     * turn); null: the provider's output cannot tell (the command provider, CLIs that print at the
     * end). A timed-out call with false never heard from the model: a hung stream.
     */
    modelOutput: z.boolean().nullable().default(null),
    /** An authentication failure (invalid key, expired login, 401/403): never fixed by retrying. */
    authError: z.string().max(500).nullable().default(null),
    /** Why the silence watchdog ended the call (`no output for 15 min: ended`; `timedOut` is then true), else null: a hung call. */
    hung: z.string().max(200).nullable().default(null),
    context: CallContextSchema.nullable().default(null),
    /** A reviewing call that changed the working tree: the paths (its vote is void), else null. */
    reviewChangedTree: z.array(z.string()).max(50).nullable().default(null),
    /** A code reviewer's answer, read (parse: review): verdict, severities, the first finding lines. */
    review: ReviewerRecordSchema.nullable().default(null),
    /** The extracted checklist (parse: checklist). */
    checklist: ChecklistExtractionSchema.nullable().default(null),
    /** A planner's task list, its checklist items by id (parse: tasks), or why it was refused. */
    plan: z
      .object({ ok: z.boolean(), tasks: z.array(PlannedTaskSchema).max(MAX_TASKS), error: z.string().max(500).nullable() })
      .nullable()
      .default(null),
    /** The PRD a discovery call wrote (role discovery), kept in the run folder, or why there is none. */
    discovered: DiscoveredPrdSchema.nullable().default(null),
    /** Verified checklist items (parse: verification). */
    verification: z
      .record(z.string(), z.object({ status: z.enum(['passing', 'failing']), evidence: z.string().max(300) }))
      .nullable()
      .default(null),
    /** A failed call that hit a provider rate limit, with how long to wait. */
    rateLimit: z
      .object({ waitSeconds: z.number().int().min(0), source: z.enum(['reset_time', 'retry_after', 'rpm']) })
      .nullable()
      .default(null),
    /** The inspection after the agent (when asked for): the snapshot and the signals, or why it could not be made. */
    inspection: z
      .lazy(() => IterationInspectionSchema)
      .nullable()
      .optional(),
    /** The gate pass the call made after the agent (`gates` in the input), when it made one. */
    gates: z
      .lazy(() => RunGatesResultSchema)
      .nullable()
      .optional(),
    /** How the call was isolated (docs/security.md, The agent's sandbox) and the escape attempts the sandbox refused. */
    sandbox: SandboxReportSchema.nullable().optional(),
    /** What the model-override file did to this call: the tier (and model) it ran at, or why the file was ignored. */
    modelOverride: z
      .union([
        z.object({ tier: TierSchema, model: z.string().max(40).nullable(), said: z.string().max(40), capped: z.boolean() }),
        z.object({ ignored: z.string().max(200) }),
      ])
      .nullable()
      .optional(),
  }),
);
export type AgentResult = z.infer<typeof AgentResultSchema>;

/** Result fields a compact agent result leaves out when null (their default). */
export const AGENT_RESULT_NULL_DEFAULTS = [
  'ioError',
  'claimedFiles',
  'donePhrase',
  'vote',
  'usage',
  'model',
  'sessionId',
  'authError',
  'reviewChangedTree',
  'review',
  'checklist',
  'plan',
  'verification',
  'rateLimit',
  'modelOutput',
  'hung',
] as const;

export const InspectRepoInputSchema = shared('schemas/activities:InspectRepoInputSchema', () =>
  z.object({
    repoPath: z.string(),
    runStartSha: z.string().nullable(),
    /** Tree hash after the previous iteration: when given, this iteration's own changes are measured. */
    previousTree: z.string().nullable().optional(),
    /** When given and the tree differs from `previousTree`, the tree becomes a checkpoint commit (activities/checkpoints.ts). */
    checkpoint: CheckpointRequestSchema.optional(),
  }),
);
export type InspectRepoInput = z.input<typeof InspectRepoInputSchema>;

export const RepoSnapshotSchema = shared('schemas/activities:RepoSnapshotSchema', () =>
  z.object({
    /** Git tree id of the working tree as `git add -A` would stage it (committed, staged, unstaged,
     * untracked-not-ignored), excluding `.vigil/`. Content-addressed: commits alone do not change it. */
    treeHash: z.string(),
    head: z.string().nullable(),
    /** Files that differ from the run-start commit (first 50), and the totals. */
    changedFiles: z.array(z.string()).max(50),
    changedCount: z.number().int().min(0),
    insertions: z.number().int().min(0),
    deletions: z.number().int().min(0),
    /** What this iteration changed (vs `previousTree`); null when no previous tree was given. */
    sinceLast: z
      .object({
        files: z.number().int().min(0),
        lines: z.number().int().min(0),
        manifestChanged: z.boolean(),
        paths: z.array(z.string()).max(50),
        /** Changed paths that look like secrets (rules/notify-triggers.ts), from all of them; absent when none, and in older results. */
        sensitive: z.array(z.string().max(1000)).max(20).optional(),
        /** What the changed paths say about the change's structure (rules/structural-change.ts); absent in older results. */
        structural: z
          .object({
            corePaths: z.array(z.string()).max(10),
            contracts: z.array(z.string()).max(10),
            services: z.array(z.string()).max(20),
          })
          .optional(),
      })
      .nullable()
      .default(null),
    /** The checkpoint taken of this tree (null: none asked for, or the tree did not change). */
    checkpoint: z.object({ commit: z.string(), ref: z.string() }).nullable().default(null),
  }),
);
export type RepoSnapshot = z.infer<typeof RepoSnapshotSchema>;

export const RewindRepoInputSchema = shared('schemas/activities:RewindRepoInputSchema', () =>
  z.object({
    repoPath: z.string(),
    /** The tree the run last inspected: a working tree that differs holds changes made since. */
    lastTree: z.string(),
    /** The checkpoint to restore, and its tree. */
    target: z.object({ commit: z.string(), tree: z.string() }),
    /** Latest checkpoint (parent of the saved tree); null when the run has none after the target. */
    latest: z.string().nullable(),
    /** Where the tree before the rewind is kept (always written). */
    savedRef: z.string().min(1).max(400),
    message: z.string().max(2000),
    /** Save changes made since the last inspection instead of refusing. */
    force: z.boolean(),
    /** Checkpoint refs after the target: the saved ref keeps their commits reachable; they are deleted. */
    drop: z.array(z.string().max(400)).max(200).default([]),
  }),
);
export type RewindRepoInput = z.input<typeof RewindRepoInputSchema>;

export const RewindRepoResultSchema = shared('schemas/activities:RewindRepoResultSchema', () =>
  z.discriminatedUnion('ok', [
    z.object({
      ok: z.literal(true),
      savedCommit: z.string(),
      savedTree: z.string(),
      restoredTree: z.string(),
      changedFiles: z.number().int().min(0),
    }),
    /** Refused, nothing changed: the tree has changes made since the last inspection (first 20 paths). */
    z.object({ ok: z.literal(false), files: z.array(z.string()).max(20), count: z.number().int().min(0) }),
  ]),
);
export type RewindRepoResult = z.infer<typeof RewindRepoResultSchema>;

export const RunTestsInputSchema = shared('schemas/activities:RunTestsInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    /** The configured test command; empty with `detect`: the runner is detected from the repository. */
    command: z.string(),
    detect: z.boolean().default(false),
    iteration: z.number().int().min(0),
    timeoutSeconds: z.number().int().min(1),
    /** The run's signature (checked by workers that require signed runs). */
    authorization: RunAuthorizationSchema.nullable().default(null),
    /** The run's sandbox and sandboxRegistries knobs; absent: the worker's settings. */
    sandbox: SandboxModeSchema.optional(),
    sandboxRegistries: z.boolean().optional(),
    /** The run's sandbox limits; absent (runs from before them): their defaults. */
    sandboxLimits: SandboxLimitsSchema.optional(),
    /**
     * This run is the run's baseline (the suite on the tree the run started with): its per-test
     * report is kept in the run's private folder, and every later run of the run is held against it.
     */
    recordBaseline: z.boolean().optional(),
    /**
     * `affected` (an ordinary iteration's gate pass, from `vigil-affected-tests-v1` on): only the
     * tests the change can affect run, unless the full suite is due
     * (rules/affected-tests.ts); absent or `full`: the whole suite (the baseline,
     * every completion check).
     */
    scope: z.enum(['full', 'affected']).optional(),
    /** The knob affectedTestsFullEvery, with `scope: 'affected'`. */
    fullEvery: z.number().int().min(1).optional(),
  }),
);
export type RunTestsInput = z.input<typeof RunTestsInputSchema>;

export const TestResultSchema = shared('schemas/activities:TestResultSchema', () =>
  z.object({
    passed: z.boolean(),
    exitCode: z.number().int(),
    timedOut: z.boolean(),
    durationMs: z.number().int().min(0),
    logPath: z.string(),
    tail: z.string(),
    /** Failing tests counted from the runner's summary; null when the output has none we know. */
    failures: z.number().int().min(0).nullable().default(null),
    /** The runner (detected, or named from the command), `none` when nothing runnable was found. */
    runner: z.string().max(100).nullable().default(null),
    /** The command that ran ('' when none). */
    command: z.string().max(4096).default(''),
    passedCount: z.number().int().min(0).nullable().default(null),
    /** Tests that ran, when the summary says (0: the runner ran nothing, which is never green). */
    ran: z.number().int().min(0).nullable().default(null),
    /** pass, fail, or inconclusive (nothing runnable, zero tests run). */
    verdict: z.enum(['pass', 'fail', 'inconclusive']).default('pass'),
    /** One line saying what happened. */
    reason: z.string().max(500).default(''),
    /** How the test run was isolated and what the sandbox refused. */
    sandbox: SandboxReportSchema.nullable().optional(),
    /** What the runner's per-test report said, against the run's baseline (absent: no report was read). */
    report: ReportFactsSchema.nullable().optional(),
    /** A partial run (scope `affected`): the test files it ran, of how many (absent or null: the full suite). */
    selection: TestSelectionSchema.nullable().optional(),
  }),
);
export type TestResult = z.infer<typeof TestResultSchema>;

/** One pass of the tool gates in one activity (lean runs; see activities/gates/index.ts). */
export const RunGatesInputSchema = shared('schemas/activities:RunGatesInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    iteration: z.number().int().min(0),
    /** The groups in order; the gates of a group run in parallel. */
    groups: z.array(z.array(z.enum(TOOL_GATES)).min(1)).max(TOOL_GATES.length),
    /** Per gate, the tree it last passed on (its files are looked at since then); absent or null: the run start tree. */
    sinceTrees: z.partialRecord(z.enum(TOOL_GATES), z.string().nullable()),
    timeoutSeconds: z.number().int().min(1),
    coverageThreshold: z.number().min(0).max(100),
    /** The test suite, when the tests gate is in a group and this tree has no test result yet; null: not run here. */
    tests: RunTestsInputSchema.nullable(),
    /** Results without the fields at their default or equal to the pass's tree and iteration (the workflow fills them in). */
    compact: z.boolean().optional(),
    /** The tree of every gate `sinceTrees` leaves out (absent: the run start tree). */
    sinceDefault: z.string().nullable().optional(),
    /** The run's sandbox knob for the gate tools (absent: the worker's setting); the tests take theirs from `tests`. */
    sandbox: SandboxModeSchema.optional(),
    /** The tree the run started with: the integrity gates (test_mutation, test_gaming) compare with it. */
    runStartTree: z.string().nullable().optional(),
    /** The build gate's command (the knob buildCommand; absent: detected from the repository). */
    buildCommand: z.string().max(4096).optional(),
    /** The app check's command (the knob appCheck; absent: `.vigil/app-check.*` of the start tree, when it has one). */
    appCheck: z.string().max(4096).optional(),
    /** The end-to-end gate's command (the knob e2eCommand). */
    e2eCommand: z.string().max(4096).optional(),
    /** The performance check's command (the knob perfCommand). */
    perfCommand: z.string().max(4096).optional(),
  }),
);
export type RunGatesInput = z.input<typeof RunGatesInputSchema>;

export const RunGatesResultSchema = shared('schemas/activities:RunGatesResultSchema', () =>
  z.object({
    /** The tree the gates looked at. */
    treeHash: z.string(),
    /** The tool gates' results (the tests gate excepted), in group order (compact: defaults left out). */
    results: z.array(
      z.custom<z.input<typeof GateResultSchema>>(
        (v) => typeof v === 'object' && v !== null && typeof (v as { gate?: unknown }).gate === 'string',
      ),
    ),
    /** The test run, when it ran here. */
    tests: TestResultSchema.nullable(),
    /** A cancellation (pause or stop) cut the pass short: the groups after the last finished one did not run. */
    interrupted: z.boolean(),
    /** Compact results: the folder of the gates' reports, `<gate>-<iteration, 4 digits>.json` (a result names its report only when it is elsewhere). */
    reportDir: z.string().optional(),
    /** Compact results from the one-report pass on: the pass's one report, which holds every gate's (a result names its report only when it is elsewhere). */
    reportFile: z.string().optional(),
    /** How the gate tools were isolated and what the sandbox refused them (absent: no tool ran). */
    sandbox: SandboxReportSchema.nullable().optional(),
  }),
);
export type RunGatesResult = z.infer<typeof RunGatesResultSchema>;

/**
 * The gate pass an iteration's agent call makes after the agent (runs from
 * `vigil-gates-with-call-v1` on): when the call succeeded and left a tree other than `lastTree`.
 * Its tests are left out on `knownTestsTree`, the tree the run has a test result for.
 */
export const CarriedGatesSchema = shared('schemas/activities:CarriedGatesSchema', () =>
  z.object({
    pass: RunGatesInputSchema,
    lastTree: z.string().nullable(),
    knownTestsTree: z.string().nullable(),
  }),
);
export type CarriedGates = z.input<typeof CarriedGatesSchema>;

/** Failure types thrown by activities as non-retryable ApplicationFailures. */
export const FAILURE_TYPES = {
  agentNotRunnable: 'AgentNotRunnable',
  notAGitRepository: 'NotAGitRepository',
  /** The repository is unusable for Vigil: `.vigil` (or a folder under it) is a link or not a folder. */
  unsafeRepository: 'UnsafeRepository',
  /**
   * The run killed its own agent call in the worker that hosts it (STOP --now, a rewind, a
   * rollover: workflows/running-call.ts) before Temporal's cancellation reached the call. The
   * workflow treats it as the call's cancellation.
   */
  callKilledByRun: 'CallKilledByRun',
} as const;

export const CollectEvidenceInputSchema = shared('schemas/activities:CollectEvidenceInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    prdPath: z.string(),
    round: z.number().int().min(1),
    iteration: z.number().int().min(0),
    runStartSha: z.string().nullable(),
    runStartTree: z.string().nullable(),
    secretScan: z.boolean(),
    /** Markdown lines about the latest test run (written into the pack as is). */
    testSummary: z.string().max(8000),
    /** Convergence data for the pack; null in blind mode. */
    convergenceSummary: z.string().max(4000).nullable(),
    /** The integrity and gaming findings a person or the checklist lifted, a Markdown line each, beside what lifted them; absent: none. */
    liftedFindings: z.string().max(16_000).optional(),
  }),
);
export type CollectEvidenceInput = z.infer<typeof CollectEvidenceInputSchema>;

export const EvidenceFactsResultSchema = shared('schemas/activities:EvidenceFactsResultSchema', () =>
  z.object({
    evidencePath: z.string(),
    baseline: z.enum(['run_start_commit', 'run_start_tree', 'base_unreachable']),
    filesChanged: z.number().int().min(0),
    changedFiles: z.array(z.string()).max(50),
    secrets: z
      .array(z.object({ file: z.string(), line: z.number().int(), kind: z.string() }))
      .max(20)
      .nullable(),
    /** The tree the evidence was gathered from (absent from older results). */
    treeHash: z.string().optional(),
  }),
);
export type EvidenceFactsResult = z.infer<typeof EvidenceFactsResultSchema>;

// The council's transcripts and the handoff: schemas/handoff-io.ts.
export * from './handoff-io.js';

export const ReadSignalsInputSchema = shared('schemas/activities:ReadSignalsInputSchema', () =>
  z.object({
    runId: z.string(),
    repoPath: z.string(),
    iteration: z.number().int().min(1),
    /** Also read the agent's notes for the run memory (SUMMARY, CONTINUITY.md). */
    notes: z.boolean().optional(),
    /** CONTINUITY.md by reference (see IterationInspectionInput). */
    notesByRef: z.boolean().optional(),
  }),
);
export type ReadSignalsInput = z.infer<typeof ReadSignalsInputSchema>;

export const AgentSignalsSchema = shared('schemas/activities:AgentSignalsSchema', () =>
  z.object({
    humanReview: z
      .object({
        reason: z.string().max(1000),
        blocking: z.boolean(),
        questions: z.array(z.string().max(1000)).max(20),
        /** What the agent would do if nobody answers (taken at the deadline with onDeadline=default-answer). */
        defaultAnswer: z.string().max(4000).nullable().default(null),
      })
      .nullable(),
    /** DRIFT_DETECTED entries consumed this iteration (JSON lines). */
    driftReports: z.number().int().min(0),
    contextClearRequested: z.boolean(),
    /** Signal files that could not be read (reported in status, never fatal). */
    problems: z.array(z.string().max(500)).max(10),
    /** `.vigil/signals/SUMMARY` (consumed), when notes were asked for and the agent wrote one. */
    summary: z.string().max(MEMORY_LIMITS.summaryChars).nullable().default(null),
    /** `.vigil/CONTINUITY.md` as carried into the next prompt, when notes were asked for. */
    continuity: z.string().max(MEMORY_LIMITS.continuityChars).nullable().default(null),
    /** CONTINUITY.md by reference, when asked for with `notesByRef` (`continuity` is then null). */
    continuityRef: NoteRefSchema.nullable().default(null),
  }),
);
export type AgentSignals = z.infer<typeof AgentSignalsSchema>;

export const IterationInspectionSchema = shared('schemas/activities:IterationInspectionSchema', () =>
  z.union([
    z.object({ snapshot: RepoSnapshotSchema, signals: AgentSignalsSchema.nullable() }),
    /** The inspection failed after the agent ran: the workflow inspects with its own activity (which reports the failure as such). */
    z.object({ problem: z.string().max(1000) }),
  ]),
);
export type IterationInspection = z.infer<typeof IterationInspectionSchema>;

/** An agent result with every field at its neutral value; callers set what they know. */
export function blankAgentResult(over: Partial<AgentResult> & Pick<AgentResult, 'exitCode' | 'attempt'>): AgentResult {
  return {
    timedOut: false,
    durationMs: 0,
    logPath: '',
    promptPath: '',
    tail: '',
    outputBytes: 0,
    ioError: null,
    claimed: false,
    claimSource: null,
    claimedFiles: null,
    donePhrase: null,
    vote: null,
    usage: null,
    rateLimit: null,
    provider: 'command',
    model: null,
    sessionId: null,
    modelOutput: null,
    authError: null,
    hung: null,
    context: null,
    reviewChangedTree: null,
    review: null,
    checklist: null,
    discovered: null,
    plan: null,
    verification: null,
    ...over,
  };
}
