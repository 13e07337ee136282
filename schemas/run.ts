/**
 * Contracts of one run: the workflow input, the state carried across continue-as-new, and the
 * terminal outcome. Every array here is bounded so a run of 10,000 iterations stays as small as a
 * run of 10.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';
import { KnobsSchema } from './knobs.js';
import { DeadLetterStateSchema } from './dead-letter.js';
import { RunAuthorizationSchema } from './authorization.js';
import { JournalStateSchema } from './events.js';
import { RunMemorySchema, emptyMemory } from './memory.js';
import { HostNameSchema } from './hosts.js';
import { PullRequestStateSchema } from './pr-event.js';
import {
  ChangeMarksSchema,
  ChecklistSchema,
  ChecklistStateSchema,
  GATE_NAMES,
  GateNameSchema,
  GateResultSchema,
  GateTrackSchema,
  ReviewRecordSchema,
  RoundBatchSchema,
} from './gates.js';
import { CONVENE_TRIGGERS } from './rounds.js';
import { TaskListSchema, TaskQueueSchema } from './tasks.js';
import { ForkOfSchema, ForkStateSchema } from './fork.js';
import { SandboxDenialSchema, SandboxStateSchema } from './sandbox.js';
import { AcceptanceStateSchema } from './acceptance.js';
import { DiscoveryStateSchema } from './prepare-run.js';
import { ComplexityRecordSchema, LadderStateSchema } from './effort.js';
export { LEVELS, LadderStateSchema } from './effort.js';
import { TestSelectionSchema } from './test-report.js';

export const PHASES = ['REASON', 'ACT', 'REFLECT', 'VERIFY'] as const;
export const PhaseSchema = shared('schemas/run:PhaseSchema', () => z.enum(PHASES));
export type Phase = z.infer<typeof PhaseSchema>;

export const TIERS = ['planning', 'development', 'fast'] as const;
export const TierSchema = shared('schemas/run:TierSchema', () => z.enum(TIERS));
export type Tier = z.infer<typeof TierSchema>;

/** Bounds of the carried state. */
export const LIMITS = {
  directiveBytes: 1024 * 1024,
  /** All pending directives together: they travel in one activity input (payload limit 2 MiB). */
  pendingDirectiveBytes: 1024 * 1024,
  pendingDirectives: 50,
  recentIterations: 20,
  invalidMessages: 20,
  findingChars: 2000,
  tailChars: 2000,
} as const;

export const ActorSchema = shared('schemas/run:ActorSchema', () => z.string().trim().min(1).max(200));

// The pause and its deadlines: schemas/pause.ts.
import { PauseInfoSchema } from './pause.js';

export { PauseDeadlinesSchema, PauseInfoSchema, type PauseDeadlines, type PauseInfo } from './pause.js';

/** How many directive ids a run remembers: a resend comes within minutes, long before 200 more directives. */
export const DIRECTIVE_IDS_KEPT = 200;

export const DirectiveSchema = shared('schemas/run:DirectiveSchema', () =>
  z.object({
    text: z.string(),
    by: z.string().max(200),
    at: z.string(),
    /** The id its sender gave it (`vigil input` makes one): a resend with the same id is not queued again. */
    id: z.string().max(100).optional(),
  }),
);
export type Directive = z.infer<typeof DirectiveSchema>;

export const ConvergenceStateSchema = shared('schemas/run:ConvergenceStateSchema', () =>
  z.object({
    /** Tree hash seen after the previous iteration; null before the first. */
    lastHash: z.string().nullable(),
    consecutiveNoChange: z.number().int().min(0),
    /** Most recent hashes, oldest first, at most `CONVERGENCE_RING_SIZE` (rules/convergence.ts). */
    recentHashes: z.array(z.string()).max(100),
    /** Consecutive iterations with a done signal (a completion claim or a done-phrase). */
    doneSignals: z.number().int().min(0).default(0),
    totalDoneSignals: z.number().int().min(0).default(0),
  }),
);
export type ConvergenceState = z.infer<typeof ConvergenceStateSchema>;

export const CompletionVerdictSchema = shared('schemas/run:CompletionVerdictSchema', () =>
  z.object({
    iteration: z.number().int(),
    accepted: z.boolean(),
    /** `accepted`, or why the claim was refused. */
    reason: z.enum(['accepted', 'empty_diff', 'tests_red']),
    testsConfigured: z.boolean(),
    testsPassed: z.boolean().nullable(),
    filesChangedSinceStart: z.number().int().min(0),
    testLogPath: z.string().nullable(),
  }),
);
export type CompletionVerdict = z.infer<typeof CompletionVerdictSchema>;

export const VoteRecordSchema = shared('schemas/run:VoteRecordSchema', () =>
  z.object({
    member: z.number().int().min(0),
    role: z.string(),
    /** How the call ended: the parsed vote, or why it counts as REJECT. */
    recorded: z.enum(['APPROVE', 'REJECT', 'CANNOT_VALIDATE', 'UNPARSEABLE', 'EMPTY', 'TIMEOUT', 'PROVIDER_FAILURE']),
    approves: z.boolean(),
    /** True when the severity/error-budget rule turned this REJECT into an approval. */
    overridden: z.boolean(),
    reason: z.string().max(300),
    issues: z.number().int().min(0),
    logPath: z.string(),
  }),
);
export type VoteRecord = z.infer<typeof VoteRecordSchema>;

export const EvidenceRecordSchema = shared('schemas/run:EvidenceRecordSchema', () =>
  z.object({
    iteration: z.number().int().min(0),
    pass: z.boolean(),
    reason: z.string().nullable(),
    failures: z.array(z.string()).max(5),
    inconclusive: z.array(z.string()).max(10),
    filesChanged: z.number().int().min(0),
    testsPassed: z.boolean().nullable(),
  }),
);
export type EvidenceRecord = z.infer<typeof EvidenceRecordSchema>;

export const VerdictSchema = shared('schemas/run:VerdictSchema', () =>
  z.object({
    round: z.number().int().min(1),
    iteration: z.number().int().min(0),
    trigger: z.enum(['forced', 'circuit_breaker', 'claim', 'interval', 'tests_green']),
    result: z.enum(['APPROVED', 'REJECTED', 'BLOCKED_BY_GATE']),
    approve: z.number().int().min(0),
    reject: z.number().int().min(0),
    threshold: z.number().int().min(0),
    size: z.number().int().min(1),
    votes: z.array(VoteRecordSchema).max(9),
    devilsAdvocate: z
      .object({ triggered: z.boolean(), flipped: z.boolean(), recorded: VoteRecordSchema.shape.recorded, reason: z.string().max(300) })
      .nullable(),
    evidence: EvidenceRecordSchema,
    transcriptPath: z.string(),
    /** The members went out as one call (or tried to); absent when each had its own. */
    batch: RoundBatchSchema.optional(),
    at: z.string(),
  }),
);
export type Verdict = z.infer<typeof VerdictSchema>;

export const CouncilStateSchema = shared('schemas/run:CouncilStateSchema', () =>
  z.object({
    rounds: z.number().int().min(0),
    /** The most recent rounds, oldest first (bounded). */
    verdicts: z.array(VerdictSchema).max(20),
    forceReview: z.object({ by: z.string().max(200), reason: z.string().max(2000), at: z.string() }).nullable(),
    /** A council trigger whose check a pause, stop, rollover or rewind interrupted: judged at the next boundary. */
    heldClaim: z
      .object({ trigger: z.enum(['circuit_breaker', 'claim', 'interval', 'tests_green']), iteration: z.number().int().min(0) })
      .nullable()
      .default(null),
  }),
);
export type CouncilState = z.infer<typeof CouncilStateSchema>;

export const TestRunRecordSchema = shared('schemas/run:TestRunRecordSchema', () =>
  z.object({
    treeHash: z.string(),
    iteration: z.number().int().min(0),
    passed: z.boolean(),
    timedOut: z.boolean(),
    exitCode: z.number().int(),
    logPath: z.string(),
    /** Failing tests counted from the output (null: unknown). */
    failures: z.number().int().min(0).nullable().default(null),
    /** The runner that ran (null: the configured command of a run from before detection). */
    runner: z.string().max(100).nullable().default(null),
    /** pass, fail, or inconclusive (nothing runnable, zero tests): only a pass is green. */
    verdict: z.enum(['pass', 'fail', 'inconclusive']).nullable().default(null),
    reason: z.string().max(500).default(''),
    /** Of the tests the suite had when the run started, how many there were and how many passed in this run (null: no baseline report). */
    baselineTotal: z.number().int().min(0).nullable().default(null),
    baselinePassed: z.number().int().min(0).nullable().default(null),
    /** The command that ran (null: a record from before it was kept). */
    command: z.string().max(300).nullable().default(null),
    /** A partial run: the test files it ran, of how many (null: the full suite). Never a completion check's evidence. */
    selected: TestSelectionSchema.nullable().optional(),
  }),
);
export type TestRunRecord = z.infer<typeof TestRunRecordSchema>;

/** The tests as the run found them: its first test run, on the tree it started with (patch vigil-done-means-done-v1). */
export const TestBaselineRecordSchema = shared('schemas/run:TestBaselineRecordSchema', () =>
  z.object({
    treeHash: z.string(),
    runner: z.string().max(100).nullable(),
    /** Tests the runner reported, and how many passed (null: the runner gave no per-test report). */
    total: z.number().int().min(0).nullable(),
    passed: z.number().int().min(0).nullable(),
  }),
);
export type TestBaselineRecord = z.infer<typeof TestBaselineRecordSchema>;

const ProxiesSchema = shared('schemas/run:ProxiesSchema', () => z.object({ p1: z.boolean(), p2: z.boolean(), p3: z.boolean() }));

/** Uncertainty-gated escalation (spec §4.1): co-occurrence streak, episode latch, hash ring. */
export const UncertaintyStateSchema = shared('schemas/run:UncertaintyStateSchema', () =>
  z.object({
    consecutiveCoOccur: z.number().int().min(0),
    escalatedEpisode: z.boolean(),
    escalatedAtIteration: z.number().int(),
    ring: z.array(z.string()).max(6),
    lastRoundIteration: z.number().int(),
    lastProxies: ProxiesSchema,
  }),
);

export const EscalationRecordSchema = shared('schemas/run:EscalationRecordSchema', () =>
  z.object({
    iteration: z.number().int().min(0),
    reason: z.enum(['uncertainty', 'tier_exhausted', 'agent_request', 'dead_letter', 'gate_failing']),
    detail: z.string().max(1000),
    proxies: ProxiesSchema.nullable(),
    handoffPath: z.string(),
    handoffMarkdownPath: z.string(),
    mode: z.enum(['supervised', 'perpetual']),
    /** Whether the run paused for it (supervised, or a blocking agent request). */
    paused: z.boolean(),
    notified: z.object({ delivered: z.number().int().min(0), failed: z.number().int().min(0) }),
    at: z.string(),
    /** The questions the agent left for a person (HUMAN_REVIEW_NEEDED), shown in status and the UI. */
    questions: z.array(z.string().max(300)).max(5).default([]),
  }),
);
export type EscalationRecord = z.infer<typeof EscalationRecordSchema>;

export const NotificationStatusSchema = shared('schemas/run:NotificationStatusSchema', () =>
  z.object({
    sent: z.number().int().min(0),
    failed: z.number().int().min(0),
    recentFailures: z.array(z.object({ event: z.string(), channel: z.string(), error: z.string().max(500), at: z.string() })).max(10),
  }),
);
export type NotificationStatus = z.infer<typeof NotificationStatusSchema>;

export const IterationRecordSchema = shared('schemas/run:IterationRecordSchema', () =>
  z.object({
    iteration: z.number().int().min(1),
    phase: PhaseSchema,
    tier: TierSchema,
    exitCode: z.number().int(),
    durationMs: z.number().int().min(0),
    logPath: z.string(),
    attempts: z.number().int().min(1),
    claimed: z.boolean(),
    changed: z.boolean(),
    filesChangedSinceStart: z.number().int().min(0),
    treeHash: z.string().nullable(),
    /** ISO time the iteration finished (workflow time). */
    at: z.string(),
    /** Which provider and model ran it (absent in runs from before providers). */
    provider: z.string().max(20).optional(),
    model: z.string().max(200).nullable().optional(),
    /** What the repository's model-override file did to the call (its tier is then the one it ran at), or why it was ignored. */
    override: z.string().max(200).optional(),
    /** USD the call cost, when known. */
    costUsd: z.number().min(0).nullable().optional(),
    /** The checkpoint commit of the tree this iteration left (null: no change, or checkpoints off). */
    checkpoint: z.string().max(64).nullable().optional(),
    /** Why the call's prompt or log could not be written (`disk full: cannot write …`); absent when they were. */
    ioError: z.string().max(1000).optional(),
    /** The escape attempts the sandbox refused the builder's call (and the test run on its tree); absent: none. */
    denied: z.array(SandboxDenialSchema).max(10).optional(),
    /** Why a sandbox limit ended the builder's call (docs/security.md, Limits inside the sandbox); absent: none did. */
    limitHit: z.string().max(300).optional(),
    /** Why the silence watchdog ended the builder's call as hung (`no output for 15 min: ended`); absent: it did not. */
    hung: z.string().max(200).optional(),
    /** How many times the builder's context was compacted in the call (a CLI that says so); absent: none, or not said. */
    compactions: z.number().int().min(1).optional(),
  }),
);
export type IterationRecord = z.infer<typeof IterationRecordSchema>;

export const InvalidMessageSchema = shared('schemas/run:InvalidMessageSchema', () =>
  z.object({
    name: z.string(),
    kind: z.enum(['signal', 'update']),
    error: z.string().max(1000),
    at: z.string(),
  }),
);
export type InvalidMessage = z.infer<typeof InvalidMessageSchema>;

/** What the run remembers of its quality gates, code reviews and PRD checklist. */
export const GatesStateSchema = shared('schemas/run:GatesStateSchema', () =>
  z.object({
    /** Per gate: consecutive failures and the last failure reason (the ladder and the stuck rule). */
    tracks: z.partialRecord(GateNameSchema, GateTrackSchema).default({}),
    /** The latest result of every gate that ran (one per gate). */
    latest: z.array(GateResultSchema).max(GATE_NAMES.length).default([]),
    /** The tree the tool gates last ran on (they run again only when it changes). */
    lastTree: z.string().nullable().default(null),
    reviews: z.array(ReviewRecordSchema).max(5).default([]),
    reviewRounds: z.number().int().min(0).default(0),
    /** The PRD checklist (held-out ids inside); null until extracted or when unavailable. */
    checklist: ChecklistStateSchema.nullable().default(null),
    /** Why there is no checklist (extraction failed, turned off), or what one lacks (an unreadable API description), for status. */
    checklistProblem: z.string().max(500).nullable().default(null),
    /** The checklist was extracted or loaded (tried once per run). */
    checklistTried: z.boolean().default(false),
    /** A checklist extraction a provider's trouble spoiled: asked again at the first boundary after `atMs` (patch vigil-checklist-retry-v1). */
    checklistRetry: z
      .object({ attempt: z.number().int().min(1), atMs: z.number(), reason: z.string().max(300) })
      .nullable()
      .default(null),
    /** Integrity and gaming findings a person waived by id (`vigil waive <run> <id>`; patch vigil-done-means-done-v1). */
    findingWaivers: z
      .array(z.object({ id: z.string().max(64), by: z.string().max(200), reason: z.string().max(500), at: z.string() }))
      .max(100)
      .default([]),
    /** The latest completion refused before the council was asked: which gates, why. */
    lastRefusal: z
      .object({ iteration: z.number().int(), gates: z.array(GateNameSchema), reason: z.string().max(500) })
      .nullable()
      .default(null),
  }),
);
export type GatesState = z.infer<typeof GatesStateSchema>;
export function emptyGatesState(): GatesState {
  return {
    tracks: {},
    latest: [],
    lastTree: null,
    reviews: [],
    reviewRounds: 0,
    checklist: null,
    checklistProblem: null,
    checklistTried: false,
    checklistRetry: null,
    findingWaivers: [],
    lastRefusal: null,
  };
}

/**
 * What a rewind restores of the state after an iteration: the counters and small records only.
 * The run's bounded lists (council verdicts, escalations, tier changes, iteration records, gate
 * results, reviews) carry their iteration and are cut back to it instead; what was spent, sent or
 * asked for (spend, budget, journal, notifications, checklist waivers, pending directives, a
 * person's pause) is kept. Bounded: about 2 KiB per checkpoint.
 */
export const RewindSnapshotSchema = shared('schemas/run:RewindSnapshotSchema', () =>
  z.object({
    iteration: z.number().int().min(0),
    consecutiveFailures: z.number().int().min(0),
    convergence: ConvergenceStateSchema,
    councilRounds: z.number().int().min(0),
    uncertainty: UncertaintyStateSchema,
    ladder: LadderStateSchema.omit({ changes: true }).nullable(),
    gateTracks: z.partialRecord(GateNameSchema, GateTrackSchema),
    gatesLastTree: z.string().nullable(),
    reviewRounds: z.number().int().min(0),
    lastTests: TestRunRecordSchema.nullable(),
    lastEvidence: EvidenceRecordSchema.nullable(),
    lastCompletion: CompletionVerdictSchema.nullable(),
    driftReports: z.number().int().min(0),
  }),
);
export type RewindSnapshot = z.infer<typeof RewindSnapshotSchema>;

/** One checkpoint: a commit of the tree an iteration left, under `ref`, and what is known of it. */
export const CheckpointRecordSchema = shared('schemas/run:CheckpointRecordSchema', () =>
  z.object({
    iteration: z.number().int().min(1),
    commit: z.string().max(64),
    tree: z.string().max(64),
    ref: z.string().max(400),
    /** ISO time it was taken (workflow time). */
    at: z.string(),
    /** Files this iteration changed, and the files that differ from the run start. */
    filesChanged: z.number().int().min(0),
    filesSinceStart: z.number().int().min(0),
    exitCode: z.number().int(),
    /** The tests on this tree, and the council round held on it, once the iteration is over. */
    tests: z.enum(['pass', 'fail', 'inconclusive']).nullable().default(null),
    verdict: z.enum(['APPROVED', 'REJECTED', 'BLOCKED_BY_GATE']).nullable().default(null),
    /** The state after the iteration, sealed when the next iteration starts (null until then). */
    snapshot: RewindSnapshotSchema.nullable().default(null),
  }),
);
export type CheckpointRecord = z.infer<typeof CheckpointRecordSchema>;

/** A rewind that happened: who, from where to where, why, and where the abandoned tree is kept. */
export const RewindRecordSchema = shared('schemas/run:RewindRecordSchema', () =>
  z.object({
    from: z.number().int().min(0),
    to: z.number().int().min(1),
    by: z.string().max(200),
    reason: z.string().max(2000),
    /** The directive it put into the next prompt (its first 300 characters). */
    directive: z.string().max(300).nullable(),
    /** The checkpoint the tree was restored to. */
    checkpoint: z.string().max(64),
    /** The tree as it was before the rewind (agent work and, with force, a person's changes), kept under `savedRef`. */
    savedRef: z.string().max(400),
    savedCommit: z.string().max(64),
    /** Whether the rewind cancelled a running agent call. */
    interruptedAgent: z.boolean(),
    at: z.string(),
  }),
);
export type RewindRecord = z.infer<typeof RewindRecordSchema>;

/** Checkpoints and rewinds of the run (checkpoints era). */
export const CheckpointsStateSchema = shared('schemas/run:CheckpointsStateSchema', () =>
  z.object({
    /** Oldest first; at most the `checkpointsKept` knob (200). */
    list: z.array(CheckpointRecordSchema).max(200).default([]),
    /** The most recent rewinds, oldest first. */
    rewinds: z.array(RewindRecordSchema).max(20).default([]),
    /** Rewinds ever (names the saved refs). */
    rewindCount: z.number().int().min(0).default(0),
  }),
);
export type CheckpointsState = z.infer<typeof CheckpointsStateSchema>;

/** What refused (or approved) a completion check: the evidence gate, a tool gate, the code review, the checklist, the
 * council, or an agent's answer in the wrong format. */
export const CHECK_CAUSES = ['evidence', 'quality_gates', 'code_review', 'checklist', 'council', 'contract', 'acceptance'] as const;
export const CheckCauseSchema = shared('schemas/run:CheckCauseSchema', () => z.enum(CHECK_CAUSES));
export type CheckCause = z.infer<typeof CheckCauseSchema>;

/** One completion check (a claim, the breaker's forced check, an early or interval check, a person's review) and what it came to. */
export const CompletionCheckSchema = shared('schemas/run:CompletionCheckSchema', () =>
  z.object({
    iteration: z.number().int().min(0),
    trigger: z.enum(CONVENE_TRIGGERS),
    approved: z.boolean(),
    /** What refused it (null when approved). */
    cause: CheckCauseSchema.nullable(),
    reason: z.string().max(500),
  }),
);
export type CompletionCheck = z.infer<typeof CompletionCheckSchema>;

/** Every completion check of the run, counted: approve or not, whatever said no. */
export const CompletionChecksSchema = shared('schemas/run:CompletionChecksSchema', () =>
  z.object({
    total: z.number().int().min(0),
    refused: z.number().int().min(0),
    /** Refusals by what refused them. */
    byCause: z.partialRecord(CheckCauseSchema, z.number().int().min(0)),
    last: CompletionCheckSchema.nullable(),
  }),
);
export type CompletionChecks = z.infer<typeof CompletionChecksSchema>;
export const emptyCompletionChecks = (): CompletionChecks => ({ total: 0, refused: 0, byCause: {}, last: null });

/** An answer of a reviewing role that lacked the line its role must give (see the agent contract). */
export const ContractBreachSchema = shared('schemas/run:ContractBreachSchema', () =>
  z.object({
    role: z.enum(['council', 'devils-advocate', 'reviewer', 'checklist', 'checklist-verifier']),
    /** The reviewer or member that answered (e.g. `security-sentinel`, `member 2`). */
    who: z.string().max(100),
    /** The answer the role must give (VIGIL_ANSWER). */
    answer: z.enum(['vote', 'verdict', 'checklist', 'items']),
    iteration: z.number().int().min(0),
    logPath: z.string().max(4096),
  }),
);
export type ContractBreach = z.infer<typeof ContractBreachSchema>;

/** Agent answers in the wrong format, in a row (a check whose answers all parse resets it). */
export const ContractStateSchema = shared('schemas/run:ContractStateSchema', () =>
  z.object({
    consecutive: z.number().int().min(0),
    total: z.number().int().min(0),
    last: ContractBreachSchema.nullable(),
  }),
);
export type ContractState = z.infer<typeof ContractStateSchema>;

/** Everything the run must remember; carried whole across continue-as-new. */
export const RunStateSchema = shared('schemas/run:RunStateSchema', () =>
  z.object({
    iteration: z.number().int().min(0), // iterations started so far (incremented before an iteration runs)
    /** The one-time grace at the iteration cap (rules/grace.ts): granted at this iteration; absent: not (yet). */
    iterationGrace: z.object({ at: z.number().int().min(0) }).optional(),
    consecutiveFailures: z.number().int().min(0), // failed iterations in a row; a good one resets it
    startedAtMs: z.number().int(), // epoch ms of the run start (workflow time), the wall-clock cap reference
    /** HEAD when the run started; null when the repository had no commits. Captured once per run. */
    runStart: z.object({ sha: z.string().nullable(), treeHash: z.string(), capturedAt: z.string() }).nullable(),
    convergence: ConvergenceStateSchema,
    pendingDirectives: z.array(DirectiveSchema).max(50),
    /** The ids of the latest directives received (queued or delivered), so that a resend is taken once (patch vigil-directive-ids-v1). */
    directiveIds: z.array(z.string().max(100)).max(DIRECTIVE_IDS_KEPT).default([]),
    pause: PauseInfoSchema.nullable(),
    /** Pauses whose deadline lifted them with nobody's answer ("nobody answered in 72 h: continued ..."), listed in the outcome's notes. */
    deadlineNotes: z.array(z.string().max(500)).max(10).optional(),
    /** The pull request the run follows after delivering it (knob followPr; schemas/pr-event.ts); absent until then. */
    pullRequest: PullRequestStateSchema.optional(),
    lastCompletion: CompletionVerdictSchema.nullable(),
    /** Findings of the previous iteration fed into the next prompt (bounded text). */
    lastFindings: z
      .string()
      .max(LIMITS.findingChars * 4)
      .nullable(),
    recentIterations: z.array(IterationRecordSchema).max(LIMITS.recentIterations),
    invalidMessages: z.array(InvalidMessageSchema).max(LIMITS.invalidMessages),
    invalidMessageCount: z.number().int().min(0),
    generations: z.number().int().min(0), // how many times this run continued as new
    council: CouncilStateSchema.default({ rounds: 0, verdicts: [], forceReview: null, heldClaim: null }),
    /** The latest test-command run, with the tree it ran on (re-run only when the tree changes). */
    lastTests: TestRunRecordSchema.nullable().default(null),
    /** The tests the run started with, recorded once before the first iteration (null: not recorded, or a run from before it). */
    testBaseline: TestBaselineRecordSchema.nullable().default(null),
    /** The sealed acceptance tests' digests and their latest verdict (null: no acceptanceTests knob, or a run from before it). */
    acceptance: AcceptanceStateSchema.nullable().default(null),
    /** A run started from a goal: when its discovery call wrote the PRD (null: not yet, or a run with a PRD). */
    discovery: DiscoveryStateSchema.nullable().default(null),
    lastEvidence: EvidenceRecordSchema.nullable().default(null),
    uncertainty: UncertaintyStateSchema.default({
      consecutiveCoOccur: 0,
      escalatedEpisode: false,
      escalatedAtIteration: -1,
      ring: [],
      lastRoundIteration: -1,
      lastProxies: { p1: false, p2: false, p3: false },
    }),
    /** The model-tier ladder; null until the first iteration of a run that uses it. */
    ladder: LadderStateSchema.nullable().default(null),
    /** The task's complexity and what it set, decided at the start; null: knob off, or a run from before it (no measure). */
    complexity: ComplexityRecordSchema.nullable().default(null),
    escalations: z.array(EscalationRecordSchema).max(20).default([]),
    notifications: NotificationStatusSchema.default({ sent: 0, failed: 0, recentFailures: [] }),
    /** DRIFT_DETECTED reports from the agent in this run. */
    driftReports: z.number().int().min(0).default(0),
    /** The next agent call starts a fresh session with this handoff summary injected. */
    contextClear: z
      .object({ reason: z.string().max(300), summary: z.string().max(4000) })
      .nullable()
      .default(null),
    /** What the agent calls cost so far (reported usage). */
    spend: z
      .object({
        usd: z.number().min(0),
        inputTokens: z.number().int().min(0),
        outputTokens: z.number().int().min(0),
        cacheReadTokens: z.number().int().min(0).optional(),
        cacheWriteTokens: z.number().int().min(0).optional(),
        calls: z.number().int().min(0),
        /** Calls whose CLI reported no usage: their cost is unknown (not in `usd`). */
        unpricedCalls: z.number().int().min(0).optional(),
        /** The part of it orchestration cost: every reported call but the builder's (decisions/budget.ts). */
        orchestration: z.object({ calls: z.number().int().min(0), usd: z.number().min(0) }).optional(),
      })
      .default({ usd: 0, inputTokens: 0, outputTokens: 0, calls: 0 }),
    /** Iteration failures by fingerprint, and the ones that repeated too often (dead letters). */
    deadLetter: DeadLetterStateSchema.default({ tracked: [], entries: [] }),
    /** The run's own provider is rate-limited until then (workflow ms): failover providers take iterations. */
    providerBlockedUntilMs: z.number().nullable().default(null),
    /** The 80 % budget warning was sent (once per budget value). */
    budgetWarnedAt: z.number().min(0).nullable().default(null),
    /** A budget raised by a person (`budget` message) replaces the knob. */
    budgetUsd: z.number().min(0).nullable().default(null),
    /** The next prompt carries the latest handoff's summary (after an escalation). */
    handoffContextPending: z.boolean().default(false),
    /** The latest handoff, summarised for the prompt after an escalation pause or a restart. */
    latestHandoff: z
      .object({ iteration: z.number().int(), path: z.string(), summary: z.string().max(2000) })
      .nullable()
      .default(null),
    /** Quality gates, code reviews and the PRD checklist (gates era). */
    gates: GatesStateSchema.default(emptyGatesState()),
    /** Run events waiting for the event store, and what it confirmed (journal era). */
    journal: JournalStateSchema.default({ nextSeq: 1, pending: [], dropped: 0, stored: 0, problem: null }),
    /** Per-iteration checkpoints and the rewinds (checkpoints era). */
    checkpoints: CheckpointsStateSchema.default({ list: [], rewinds: [], rewindCount: 0 }),
    /** The run memory rendered into every prompt (memory era; not the event journal above). */
    memory: RunMemorySchema.default(emptyMemory()),
    /** Every completion check and what refused it (completion-rule era). */
    checks: CompletionChecksSchema.default(emptyCompletionChecks()),
    /** Reviewing agents' answers that lacked their role's required line (completion-rule era). */
    contract: ContractStateSchema.default({ consecutive: 0, total: 0, last: null }),
    /** Where the run's last council round, passing review and checklist verification were made, and what changed since (patch vigil-lean-rounds-v1). */
    marks: ChangeMarksSchema.default({ round: null, review: null, checklist: null }),
    /** How the run's calls were isolated, and the escape attempts the sandbox refused them (docs/security.md). */
    sandbox: SandboxStateSchema.default({ last: null, denied: [], deniedTotal: 0, unsandboxedCalls: 0 }),
    /** The task queue of a run split into parallel streams (patch vigil-streams-v1); null: no streams. */
    tasks: TaskQueueSchema.nullable().default(null),
    fork: ForkStateSchema.optional(), // onStuck=fork: the run's fork (schemas/fork.ts); absent until it forks, and in older runs
  }),
);
export type RunState = z.infer<typeof RunStateSchema>;

export const RunInputSchema = shared('schemas/run:RunInputSchema', () =>
  z.object({
    /** Absolute path of the PRD file (read by the agent; Vigil passes the path, not the text). */
    prdPath: z.string().min(1),
    /** First heading of the PRD, for the UI. */
    prdTitle: z.string().max(200),
    /** Absolute path of the git repository the agent works in. */
    repoPath: z.string().min(1),
    knobs: KnobsSchema,
    /** The knobs the person set (flag, --set, environment, config file; absent: every knob): the task's complexity leaves them be. */
    knobsGiven: z.array(z.string().max(60)).max(1000).optional(),
    /** The operator's signature on what the run may execute (workers that require signed runs check it). */
    authorization: RunAuthorizationSchema.optional(),
    /** A checklist a person supplied (`--checklist FILE`) instead of the one extracted from the PRD. */
    checklist: ChecklistSchema.optional(),
    /** False when the run started in a namespace without Vigil's search attributes: the workflow sets none (an upsert of an */
    /** unknown attribute fails the workflow task). Absent, as in every run started before it existed: the attributes are there. */
    searchAttributes: z.boolean().optional(),
    /** The machine holding the repository (`vigil start --host`, normalised): the run's repository-bound activities go to its */
    /** task queue. Absent, as in every run started before hosts: everything runs on the workflow's own task queue. */
    host: HostNameSchema.optional(),
    /** Tasks a person gave (`vigil start --tasks FILE`): with parallelStreams above 1, each runs as a stream of its own. */
    tasks: TaskListSchema.optional(),
    /** A run from a goal (`vigil start --goal`): its PRD is written at `prdPath` first. Absent in older runs (no patch). */
    goal: z.string().min(1).max(4000).optional(),
    /** 1: the loop's small rules of 0.6.0 apply (the grace at the cap, rules/grace.ts); absent in runs started before (no patch). */
    loopRules: z.literal(1).optional(),
    /** The notification triggers (rules/notify-triggers.ts) and the session-end handoff: set for new runs, absent in older ones (no patch). */
    notifyTriggers: z.boolean().optional(),
    /** Present in a stream's run (a child of a run split into tasks): the run that started it, its task, and what its first prompt says of it. */
    stream: z.object({ parentId: z.string().max(300), task: z.string().max(40), directive: z.string().max(4000) }).optional(),
    forkOf: ForkOfSchema.optional(), // a fork's own run (onStuck=fork): the run it forks; absent in every other run (no patch)
    /** Present only when continuing as new (runs from before the packed carry). */
    state: RunStateSchema.optional(),
    /** Present only when continuing as new: the run state packed (workflows/carried-state.ts), its repeated strings and */
    /** records written once. Validated as RunState once unpacked. */
    packedState: z
      .object({
        format: z.literal(1),
        table: z.array(z.unknown()).max(1_000_000),
        value: z.unknown(),
      })
      .optional(),
  }),
);
export type RunInput = z.infer<typeof RunInputSchema>;

export * from './outcome.js';
