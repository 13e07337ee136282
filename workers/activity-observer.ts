/**
 * What a `vigil worker` observes of the activities it runs, without touching them: an activity
 * inbound interceptor (the SDK's ActivityInboundCallsInterceptor, around every activity this
 * worker executes) and a wrapper of the agent calls a round activity makes in process
 * (lib/call-observers.ts). From the activities' inputs and results (workers/call-facts.ts)
 * it
 *
 * - counts and times agent calls, spend, iterations, gates, reviews and council rounds in the
 *   worker's metrics (workers/metrics.ts), when the worker serves them;
 * - logs one structured line per agent call: `agent call {"runId",...}` in text, a JSON object
 *   with message `agent call` and those fields as meta with `--log-format json`;
 * - puts the run id, iteration (the run's, for every role; a member's round beside it), role,
 *   provider and exit code on the activity's span
 *   (`RunActivity:runAgent`) when the worker traces, and gives each in-process member call a
 *   child span of its own (`AgentCall:<role>`);
 * - notes the time of the worker's last task for its /readyz.
 *
 * An observation that fails to parse is skipped: observing never fails an activity.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { AgentResult, RunAgentInput } from '../schemas/activities.js';
import type { AgentCallWrapper } from '../lib/call-observers.js';
import {
  AgentInputWire,
  AgentResultWire,
  agentCallFacts,
  CouncilRoundWire,
  gatePassFacts,
  GateResultWire,
  GatesPassWire,
  ReviewRoundWire,
  roundOf,
  TestResultWire,
  type AgentCallFacts,
  type GateFact,
} from './call-facts.js';
import { logFormat, logLine } from '../lib/logging.js';

/** Where observations go (VigilMetrics implements it; absent: no metrics endpoint). */
export interface ObservationSink {
  agentCall(c: AgentCallFacts): void;
  gateResult(gate: string, verdict: string): void;
  reviewRound(result: string, reviewerVerdicts: readonly string[]): void;
  councilRound(result: string, trigger: string): void;
}

export type SpanAttributes = Record<string, string | number | boolean>;

/** The tracing half (workers/tracing.ts), when the worker traces. */
export interface SpanHooks {
  /** Sets attributes on the active span (the activity's `RunActivity:<name>`, or a child made by `child`). */
  annotate(attrs: SpanAttributes): void;
  /** Runs `fn` inside a new child span of the active one. */
  child<T>(name: string, attrs: SpanAttributes, fn: () => Promise<T>): Promise<T>;
}

export interface ObserverOptions {
  sink?: ObservationSink | null;
  spans?: SpanHooks | null;
  /** Write the per-call log line (default true). */
  log?: boolean;
  /** Called when an activity starts (the readiness tracker's last task). */
  onTask?: () => void;
}

export interface ActivityObserver {
  interceptors: ActivityInterceptorsFactory;
  /** For wrapInProcessAgentCalls (lib/call-observers.ts). */
  inProcess: AgentCallWrapper;
}

/** The span attributes of a call: Vigil's own names under `vigil.`. */
export function callSpanAttributes(
  c: Partial<AgentCallFacts> & Pick<AgentCallFacts, 'runId' | 'iteration' | 'role' | 'provider'>,
): SpanAttributes {
  // The run's iteration for every role; a member call's round beside it, never in its place.
  const a: SpanAttributes = { 'vigil.run_id': c.runId, 'vigil.iteration': c.iteration, 'vigil.role': c.role, 'vigil.provider': c.provider };
  if (c.round !== undefined && c.round !== null) a['vigil.round'] = c.round;
  if (c.exitCode !== undefined && c.exitCode !== null) a['vigil.exit_code'] = c.exitCode;
  if (c.outcome) a['vigil.outcome'] = c.outcome;
  if (c.model) a['vigil.model'] = c.model;
  if (c.costUsd !== undefined && c.costUsd !== null) a['vigil.cost_usd'] = c.costUsd;
  if (c.durationMs !== undefined) a['vigil.duration_ms'] = c.durationMs;
  return a;
}

/** The per-call log line's fields, in a stable order. */
export function callLogFields(c: AgentCallFacts): Record<string, unknown> {
  return {
    runId: c.runId,
    workflowId: c.workflowId,
    iteration: c.iteration,
    role: c.role,
    provider: c.provider,
    model: c.model,
    exitCode: c.exitCode,
    outcome: c.outcome,
    durationMs: c.durationMs,
    costUsd: c.costUsd,
    attempt: c.attempt,
  };
}

function writeCallLine(c: AgentCallFacts): void {
  const fields = callLogFields(c);
  if (logFormat() === 'json') logLine('INFO', 'agent call', fields);
  else logLine('INFO', `agent call ${JSON.stringify(fields)}`);
}

/** The gate, review and council facts of a finished activity's result. */
function recordResult(sink: ObservationSink, activityType: string, result: unknown): void {
  const gates = (facts: GateFact[]): void => {
    for (const g of facts) sink.gateResult(g.gate, g.verdict);
  };
  switch (activityType) {
    case 'runGate': {
      const r = GateResultWire.safeParse(result);
      if (r.success) sink.gateResult(r.data.gate, r.data.verdict);
      return;
    }
    case 'runGates': {
      const r = GatesPassWire.safeParse(result);
      if (r.success) gates(gatePassFacts(r.data));
      return;
    }
    case 'runTests': {
      const r = TestResultWire.safeParse(result);
      if (r.success) sink.gateResult('tests', r.data.verdict);
      return;
    }
    case 'reviewRound': {
      const r = ReviewRoundWire.safeParse(result);
      if (!r.success) return;
      const rec = r.data.record;
      sink.reviewRound(
        rec.result,
        [...rec.reviewers, ...(rec.devilsAdvocate ? [rec.devilsAdvocate] : [])].map((x) => x.verdict),
      );
      return;
    }
    case 'councilRound': {
      const r = CouncilRoundWire.safeParse(result);
      if (r.success) sink.councilRound(r.data.verdict.result, r.data.verdict.trigger);
      return;
    }
    default:
      return;
  }
}

function isCancellation(err: unknown, aborted: boolean): boolean {
  if (aborted) return true;
  const e = err as { name?: unknown; type?: unknown } | null;
  return e?.name === 'CancelledFailure' || e?.type === 'CallKilledByRun';
}

export function activityObserver(opts: ObserverOptions = {}): ActivityObserver {
  const sink = opts.sink ?? null;
  const spans = opts.spans ?? null;
  const log = opts.log ?? true;

  /** Records one agent call that ended (result) or threw (null). */
  const finishCall = (
    input: unknown,
    result: unknown,
    wallMs: number,
    workflowId: string | null,
    aborted: boolean,
    err?: unknown,
  ): AgentCallFacts | null => {
    const i = AgentInputWire.safeParse(input);
    if (!i.success) return null;
    const r = result === null ? null : AgentResultWire.safeParse(result);
    if (r && !r.success) return null;
    const facts = agentCallFacts(i.data, r ? r.data : null, wallMs, workflowId, result === null && isCancellation(err, aborted));
    sink?.agentCall(facts);
    if (r?.success && r.data.gates && sink) for (const g of gatePassFacts(r.data.gates)) sink.gateResult(g.gate, g.verdict);
    if (log) writeCallLine(facts);
    spans?.annotate(callSpanAttributes(facts));
    return facts;
  };

  const interceptors: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      async execute(input, next) {
        opts.onTask?.();
        const type = ctx.info.activityType;
        const workflowId = ctx.info.workflowExecution?.workflowId ?? null;
        const arg = input.args[0];
        const isCall = type === 'runAgent';
        if (isCall && spans) {
          const i = AgentInputWire.safeParse(arg);
          if (i.success) spans.annotate(callSpanAttributes({ ...i.data, round: roundOf(i.data.extraEnv) }));
        }
        const started = performance.now();
        let result: unknown;
        try {
          result = await next(input);
        } catch (err) {
          if (isCall) safely(() => finishCall(arg, null, performance.now() - started, workflowId, ctx.cancellationSignal.aborted, err));
          throw err;
        }
        safely(() => {
          if (isCall) finishCall(arg, result, performance.now() - started, workflowId, false);
          else if (sink) recordResult(sink, type, result);
        });
        return result;
      },
    },
  });

  const inProcess: AgentCallWrapper = async (input: RunAgentInput, call: () => Promise<AgentResult>) => {
    const started = performance.now();
    const run = async (): Promise<AgentResult> => {
      let result: AgentResult;
      try {
        result = await call();
      } catch (err) {
        safely(() => finishCall(input, null, performance.now() - started, input.runId, false, err));
        throw err;
      }
      safely(() => finishCall(input, result, performance.now() - started, input.runId, false));
      return result;
    };
    const i = spans ? AgentInputWire.safeParse(input) : null;
    return spans && i?.success
      ? spans.child(`AgentCall:${i.data.role}`, callSpanAttributes({ ...i.data, round: roundOf(i.data.extraEnv) }), run)
      : run();
  };

  return { interceptors, inProcess };
}

/** Observing never fails an activity: an error of the observation itself is logged once per kind and dropped. */
const reported = new Set<string>();
function safely(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (reported.has(msg)) return;
    reported.add(msg);
    logLine('WARN', `vigil worker: could not record an activity's metrics: ${msg}`);
  }
}
