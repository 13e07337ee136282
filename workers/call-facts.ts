/**
 * What the worker reads of the activities it runs, for its metrics, its per-call log line and its
 * spans (workers/activity-observer.ts): the facts of an agent call from its input and result, and
 * the results of gates, reviews and council rounds, parsed from the activities' wire form with
 * small zod schemas of the fields read here (compact results leave their null fields out). A
 * result that lacks them (an activity of another version) is skipped, never a failed activity.
 * No prom-client here: a worker without a metrics endpoint still logs each call.
 */
import { z } from 'zod';
import { AGENT_ROLES, type AgentRole } from '../schemas/activities.js';
import { GATE_VERDICTS, REVIEW_VERDICTS } from '../schemas/gates.js';

/** How an iteration's agent call ended, as `vigil_iterations_total{outcome}` counts it. */
export const ITERATION_OUTCOMES = [
  'succeeded',
  'failed',
  'timed_out',
  'rate_limited',
  'auth_error',
  'io_error',
  'cancelled',
  'error',
] as const;
export type CallOutcome = (typeof ITERATION_OUTCOMES)[number];

/** What one agent call reported, whoever made it (a runAgent activity, or a member of a round). */
export interface AgentCallFacts {
  runId: string;
  workflowId: string | null;
  iteration: number;
  /** The council or review round a member call belongs to (its VIGIL_COUNCIL_ROUND / VIGIL_REVIEW_ROUND); null for other calls. */
  round: number | null;
  role: AgentRole;
  /** The tier the call ran at (a model-override file's, when it set one); null: not said (another version's activity). */
  tier: string | null;
  provider: string;
  model: string | null;
  /** null: the call threw (no result). */
  exitCode: number | null;
  outcome: CallOutcome;
  durationMs: number;
  costUsd: number | null;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number } | null;
  attempt: number | null;
}

// ---------------------------------------------------------------------------------------------
// The wire forms read here (only the fields used; compact results leave null fields out).

const UsageWire = z.object({
  costUsd: z.number().nullable(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number().optional(),
  cacheWriteTokens: z.number().optional(),
});

const GateWire = z.object({ gate: z.string().max(100), verdict: z.enum(GATE_VERDICTS) });
const TestsWire = z.object({ verdict: z.enum(GATE_VERDICTS).default('pass') });
export const GatesPassWire = z.object({ results: z.array(GateWire), tests: TestsWire.nullable().optional() });

export const AgentInputWire = z.object({
  runId: z.string(),
  role: z.enum(AGENT_ROLES),
  iteration: z.number().int(),
  provider: z.string().max(40).default('command'),
  tier: z.string().max(20).optional(),
  extraEnv: z.record(z.string(), z.string()).optional(),
});
export type AgentInputFacts = z.infer<typeof AgentInputWire>;

export const AgentResultWire = z.object({
  exitCode: z.number().int(),
  timedOut: z.boolean(),
  durationMs: z.number().min(0),
  attempt: z.number().int().optional(),
  provider: z.string().max(40).optional(),
  model: z.string().nullable().optional(),
  usage: UsageWire.nullable().optional(),
  authError: z.string().nullable().optional(),
  rateLimit: z.unknown().optional(),
  ioError: z.string().nullable().optional(),
  gates: GatesPassWire.nullable().optional(),
  modelOverride: z
    .object({ tier: z.string().max(20) })
    .nullable()
    .optional()
    .catch(null),
});
export type AgentResultFacts = z.infer<typeof AgentResultWire>;

/** How a call that returned ended. */
export function callOutcome(r: AgentResultFacts): CallOutcome {
  if (r.timedOut) return 'timed_out';
  if (r.authError) return 'auth_error';
  if (r.rateLimit !== undefined && r.rateLimit !== null) return 'rate_limited';
  if (r.exitCode !== 0) return 'failed';
  if (r.ioError) return 'io_error';
  return 'succeeded';
}

/** The round of a council member's, reviewer's or devil's advocate's call, from the variables it was given; null for other calls. */
export function roundOf(extraEnv: Record<string, string> | undefined): number | null {
  const n = Number(extraEnv?.VIGIL_COUNCIL_ROUND ?? extraEnv?.VIGIL_REVIEW_ROUND);
  return Number.isInteger(n) && n > 0 ? n : null;
}

/** The facts of one call from its input and its result (null: it threw; `cancelled` says whether by a cancellation). */
export function agentCallFacts(
  input: AgentInputFacts,
  result: AgentResultFacts | null,
  wallMs: number,
  workflowId: string | null,
  cancelled = false,
): AgentCallFacts {
  const usage = result?.usage ?? null;
  return {
    runId: input.runId,
    workflowId,
    iteration: input.iteration,
    round: roundOf(input.extraEnv),
    role: input.role,
    tier: result?.modelOverride?.tier ?? input.tier ?? null,
    provider: result?.provider ?? input.provider,
    model: result?.model ?? null,
    exitCode: result ? result.exitCode : null,
    outcome: result ? callOutcome(result) : cancelled ? 'cancelled' : 'error',
    durationMs: result ? result.durationMs : Math.max(0, Math.round(wallMs)),
    costUsd: usage ? usage.costUsd : null,
    tokens: usage
      ? {
          input: usage.inputTokens,
          output: usage.outputTokens,
          cacheRead: usage.cacheReadTokens ?? 0,
          cacheWrite: usage.cacheWriteTokens ?? 0,
        }
      : null,
    attempt: result?.attempt ?? null,
  };
}

/** A council round's result (activities/rounds.ts, councilRound): its verdict and what convened it. */
export const CouncilRoundWire = z.object({
  verdict: z.object({ result: z.enum(['APPROVED', 'REJECTED', 'BLOCKED_BY_GATE']), trigger: z.string().max(40) }),
});

/** A code review's result (reviewRound): the round's result and each reviewer's verdict. */
const ReviewerWire = z.object({ verdict: z.enum(REVIEW_VERDICTS) });
export const ReviewRoundWire = z.object({
  record: z.object({
    result: z.enum(['pass', 'blocked', 'inconclusive', 'refused']),
    reviewers: z.array(ReviewerWire),
    devilsAdvocate: ReviewerWire.nullable().optional(),
  }),
});

export const GateResultWire = GateWire;
export const TestResultWire = z.object({ verdict: z.enum(GATE_VERDICTS).default('pass') });

/** A gate result as counted: `vigil_gate_results_total{gate, verdict}`. */
export interface GateFact {
  gate: string;
  verdict: string;
}

/** The gate results in a gate pass (runGates, or the pass an iteration's call made after the agent). */
export function gatePassFacts(pass: z.infer<typeof GatesPassWire>): GateFact[] {
  const out: GateFact[] = pass.results.map((r) => ({ gate: r.gate, verdict: r.verdict }));
  if (pass.tests) out.push({ gate: 'tests', verdict: pass.tests.verdict });
  return out;
}
