/**
 * The protocol of the provider circuit breaker entity (`vigilProviderBreaker`, one long-lived
 * workflow per agent provider, shared by every run): its workflow id and type, the zod contracts of
 * its input (carried across continue-as-new), of every message payload and of the
 * `askProviderBreaker` activity, and the names of its messages. The message definitions and the
 * read-only views are workflows/provider-breaker-messages.ts.
 *
 * One contract for client, workflow and activity. Sandbox-safe: zod only.
 */
import { z } from 'zod';
import { shared } from './shared.js';
import { UNDECODABLE_PAYLOAD } from './messages.js';
import { ActorSchema } from './run.js';
import {
  MAX_FAILURE_TIMES,
  ProviderBreakerStateSchema,
  type BreakerConfig,
  type BreakerDecision,
  type ProviderBreakerState,
} from './provider-breaker-state.js';

export const BREAKER_WORKFLOW_TYPE = 'vigilProviderBreaker';

/** Workflow id prefix: `vigil-provider-<provider>`. */
export const BREAKER_WORKFLOW_ID_PREFIX = 'vigil-provider-';

/** Provider names Vigil ships presets for (the CLI probes these ids when visibility lags). */
export const KNOWN_PROVIDERS = ['claude', 'codex', 'gemini', 'aider', 'opencode', 'cline', 'command'] as const;

/** Bounds of what the entity carries across continue-as-new. */
export const BREAKER_LIMITS = {
  /** Transitions and resets kept for `breakerState`. */
  recentEvents: 50,
  /** Runs remembered as waiting on a refusal. */
  waitingRuns: 100,
  /** Invalid `report` signals kept (all are counted). */
  invalidReports: 10,
  /** A run told to wait that has not asked again this long after its retry time is forgotten. */
  waitingGraceMs: 10 * 60_000,
} as const;

/**
 * Accepted messages (updates and signals) after which one execution continues as new: ~3 history
 * events per update and 1 per signal keep a generation far below Temporal's 50 MB / 51,200-event
 * limits (the server's `continueAsNewSuggested` triggers a rollover earlier if it has to).
 */
export const DEFAULT_CONTINUE_AS_NEW_AFTER_MESSAGES = 1000;

/**
 * How long a probe may stay out unreported before it counts as failed (the breaker re-opens), when
 * the asker does not say (`leaseMs`). Bounds how long a probe lost with its run (terminated, its
 * report never sent) can wedge the breaker HALF_OPEN: the default agent timeout (2 h) plus slack.
 */
export const DEFAULT_PROBE_LEASE_MS = 3 * 3600_000;

const MAX_DURATION_MS = 7 * 24 * 3600_000;

export const ProviderNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'must be 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit');

/** The breaker's workflow id for `provider` (validated: it becomes part of a workflow id). */
export function breakerWorkflowId(provider: string): string {
  const r = ProviderNameSchema.safeParse(provider);
  if (!r.success) throw new Error(`provider "${provider}": ${r.error.issues[0]?.message ?? 'invalid'}`);
  return `${BREAKER_WORKFLOW_ID_PREFIX}${provider}`;
}

const durationMs = shared('workflows/provider-breaker-messages:durationMs', () => z.number().int().min(0).max(MAX_DURATION_MS));

/** Every field of the decision's `BreakerConfig`, validated (ms, whole numbers). */
export const BreakerConfigSchema = shared('workflows/provider-breaker-messages:BreakerConfigSchema', () =>
  z.strictObject({
    failureThreshold: z.number().int().min(1).max(MAX_FAILURE_TIMES),
    failureWindowMs: durationMs,
    cooldownMs: durationMs,
    probeIntervalMs: durationMs,
    closeAfterSuccesses: z.number().int().min(1).max(1000),
  }),
);
/** Overrides of `DEFAULT_BREAKER_CONFIG`; a missing field takes the seed's default. */
export const BreakerConfigOverridesSchema = BreakerConfigSchema.partial();
export type BreakerConfigOverrides = z.infer<typeof BreakerConfigOverridesSchema>;
// Compile-time check that the schema and the decision's config have exactly the same fields.
type SameFields<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _configMatches: SameFields<z.infer<typeof BreakerConfigSchema>, BreakerConfig> = true;
void _configMatches;

const PhaseSchema = shared('workflows/provider-breaker-messages:PhaseSchema', () => z.enum(['CLOSED', 'OPEN', 'HALF_OPEN']));
export type BreakerPhase = z.infer<typeof PhaseSchema>;
const instant = shared('workflows/provider-breaker-messages:instant', () => z.number().min(0));
const RunIdSchema = shared('workflows/provider-breaker-messages:RunIdSchema', () => z.string().trim().min(1).max(300));
const ReasonSchema = shared('workflows/provider-breaker-messages:ReasonSchema', () => z.string().max(2000));

/** A transition or an operator reset, with when, who and why. */
export const BreakerEventSchema = shared('workflows/provider-breaker-messages:BreakerEventSchema', () =>
  z.object({
    kind: z.enum(['transition', 'reset']),
    from: PhaseSchema,
    to: PhaseSchema,
    atMs: instant,
    /** ISO form of `atMs` (workflow time). */
    at: z.string(),
    /** The run that caused it, the operator who reset it, or `vigil` (a probe lease ran out). */
    by: z.string().max(300),
    why: z.string().max(500),
  }),
);
export type BreakerEvent = z.infer<typeof BreakerEventSchema>;

/** Who holds the HALF_OPEN probe, so a retried ask gets the same answer and a lost probe expires. */
export const ProbeHolderSchema = shared('workflows/provider-breaker-messages:ProbeHolderSchema', () =>
  z.object({
    runId: RunIdSchema,
    askId: z.string().max(500).nullable(),
    atMs: instant,
    leaseUntilMs: instant,
  }),
);
export type ProbeHolder = z.infer<typeof ProbeHolderSchema>;

/** A run last told to wait (and not yet let through). */
export const WaitingRunSchema = shared('workflows/provider-breaker-messages:WaitingRunSchema', () =>
  z.object({
    runId: RunIdSchema,
    sinceMs: instant,
    retryAtMs: instant,
    reason: z.enum(['open', 'probe_in_flight', 'probe_interval']),
  }),
);
export type WaitingRun = z.infer<typeof WaitingRunSchema>;

export const InvalidReportSchema = shared('workflows/provider-breaker-messages:InvalidReportSchema', () =>
  z.object({ atMs: instant, error: z.string().max(1000) }),
);
export type InvalidReport = z.infer<typeof InvalidReportSchema>;

/**
 * Input of `vigilProviderBreaker`. A first start gives `provider` (and maybe `config`); a
 * continue-as-new carries everything else.
 */
export const ProviderBreakerInputSchema = shared('workflows/provider-breaker-messages:ProviderBreakerInputSchema', () =>
  z.strictObject({
    provider: ProviderNameSchema,
    config: BreakerConfigOverridesSchema.optional(),
    state: ProviderBreakerStateSchema.optional(),
    events: z.array(BreakerEventSchema).max(BREAKER_LIMITS.recentEvents).optional(),
    probe: ProbeHolderSchema.nullable().optional(),
    waiting: z.array(WaitingRunSchema).max(BREAKER_LIMITS.waitingRuns).optional(),
    invalidReports: z.array(InvalidReportSchema).max(BREAKER_LIMITS.invalidReports).optional(),
    invalidReportCount: z.number().int().min(0).optional(),
    /** Accepted messages after which an execution continues as new (tests make it small). */
    continueAsNewAfterMessages: z.number().int().min(1).max(100_000).optional(),
    /** Probe lease when the asker gives none (default `DEFAULT_PROBE_LEASE_MS`). */
    probeLeaseMs: z.number().int().min(1).max(MAX_DURATION_MS).optional(),
    /** Executions before this one (continue-as-new count). */
    generation: z.number().int().min(0).optional(),
  }),
);
export type ProviderBreakerInput = z.input<typeof ProviderBreakerInputSchema>;

// ---- message payloads ----

export const AskPayloadSchema = shared('workflows/provider-breaker-messages:AskPayloadSchema', () =>
  z.strictObject({
    /** The asking run (its workflow id). */
    runId: RunIdSchema,
    /** Stable across retries of one ask (the activity uses its own workflow/run/activity id). */
    askId: z.string().trim().min(1).max(500).optional(),
    /** Longest the call this ask lets out can take before it is reported (probe lease). */
    leaseMs: z.number().int().min(1).max(MAX_DURATION_MS).optional(),
  }),
);
export type AskPayload = z.infer<typeof AskPayloadSchema>;

export const ReportPayloadSchema = shared('workflows/provider-breaker-messages:ReportPayloadSchema', () =>
  z.strictObject({
    runId: RunIdSchema,
    /** `released`: the call was let out but not made (the run was stopped, paused or rewound first). */
    outcome: z.enum(['success', 'failure', 'released']),
    /** The `probe` flag of the decision that let the call out. */
    probe: z.boolean(),
    /** Why it failed (rate limit, auth error, crash, ...): shown in the transition it causes. */
    reason: ReasonSchema.optional(),
    /** The `askId` of the ask that let the call out, when known. */
    askId: z.string().trim().min(1).max(500).optional(),
  }),
);
export type ReportPayload = z.infer<typeof ReportPayloadSchema>;

export const ResetPayloadSchema = shared('workflows/provider-breaker-messages:ResetPayloadSchema', () =>
  z.strictObject({ by: ActorSchema.optional(), reason: ReasonSchema.optional() }),
);
export type ResetPayload = z.infer<typeof ResetPayloadSchema>;

/** `ask`'s answer: the decision, plus the breaker state after it. */
export type AskAnswer = BreakerDecision & { state: ProviderBreakerState };

/** What `breakerState` answers. */
export interface BreakerView {
  provider: string;
  workflowId: string;
  state: ProviderBreakerState;
  /** The phase as of the query: an OPEN breaker whose cooldown has ended shows HALF_OPEN. */
  effectivePhase: BreakerPhase;
  config: BreakerConfig;
  /** Oldest first, at most `BREAKER_LIMITS.recentEvents`. */
  recentEvents: BreakerEvent[];
  /** Runs told to wait and not let through since (stale ones dropped). */
  runsWaiting: WaitingRun[];
  probe: ProbeHolder | null;
  invalidReportCount: number;
  invalidReports: InvalidReport[];
  /** Accepted messages in this execution, and the rollover threshold. */
  messagesThisRun: number;
  continueAsNewAfterMessages: number;
  generation: number;
  /** Workflow time of the answer. */
  atMs: number;
}

/** The names of the entity's messages (the ask activity sends `ask` by its name). */
export const BREAKER_MESSAGE_NAMES = { ask: 'ask', report: 'report', reset: 'reset', state: 'breakerState' } as const;

// ---- the activity's contract ----

export const AskProviderBreakerInputSchema = shared('workflows/provider-breaker-messages:AskProviderBreakerInputSchema', () =>
  z.strictObject({
    provider: ProviderNameSchema,
    runId: RunIdSchema,
    /** Used only when this ask starts the breaker; a running breaker keeps the config it started with. */
    config: BreakerConfigOverridesSchema.optional(),
    leaseMs: AskPayloadSchema.shape.leaseMs,
    /** Default: the activity's workflow id, run id and activity id (stable across its retries). */
    askId: AskPayloadSchema.shape.askId,
  }),
);
export type AskProviderBreakerInput = z.input<typeof AskProviderBreakerInputSchema>;

/** ApplicationFailure type of an ask the breaker (or the activity) refused as invalid: not retryable. */
export const INVALID_BREAKER_ASK = 'InvalidBreakerAsk';

// ---- validation ----

/**
 * Validates a payload; a missing one counts as `{}`. The error names the message and each bad
 * field, e.g. `report: field "outcome": Invalid option: expected one of "success"|"failure"`.
 */
export function parseBreakerPayload<S extends z.ZodType>(
  name: string,
  schema: S,
  payload: unknown,
): { ok: true; value: z.infer<S> } | { ok: false; error: string } {
  if (typeof payload === 'object' && payload !== null && UNDECODABLE_PAYLOAD in payload) {
    const why = (payload as Record<string, unknown>)[UNDECODABLE_PAYLOAD];
    return {
      ok: false,
      error: `${name}: the payload could not be decoded (${typeof why === 'string' ? why : 'unknown reason'}); send JSON`,
    };
  }
  const r = schema.safeParse(payload === undefined || payload === null ? {} : payload);
  if (r.success) return { ok: true, value: r.data };
  const parts = r.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    return `field "${issue.path.length ? issue.path.join('.') : '(payload)'}": ${issue.message}`;
  });
  return { ok: false, error: `${name}: ${parts.join('; ')}` };
}
