/**
 * The provider circuit breaker entity's messages (update `ask`, signal `report`, update `reset`,
 * query `breakerState`) and two small read-only views of a breaker state that the UI details and
 * the CLI share. Its contracts (ids, payload and input schemas, the activity's input) are
 * schemas/provider-breaker.ts, re-exported here for the workflow, the CLI and the tests.
 *
 * Sandbox-safe: Temporal definitions and the contracts only (it is bundled into the workflow sandbox).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import {
  BREAKER_MESSAGE_NAMES,
  type AskAnswer,
  type AskPayload,
  type BreakerPhase,
  type BreakerView,
  type ReportPayload,
  type ResetPayload,
} from '../schemas/provider-breaker.js';
import type { BreakerConfig, ProviderBreakerState } from '../schemas/provider-breaker-state.js';

export * from '../schemas/provider-breaker.js';

// ---- message definitions ----

/** May a call to the provider go out now? Validated; a probe let out is recorded as in flight. */
export const askUpdate = defineUpdate<AskAnswer, [AskPayload]>(BREAKER_MESSAGE_NAMES.ask);
/**
 * The outcome of a call that was let through. A signal (runs send it from workflow code with
 * `getExternalWorkflowHandle(breakerWorkflowId(p)).signal(reportSignal, payload)`); an invalid
 * payload is ignored and counted in `breakerState`, never a failed workflow task.
 */
export const reportSignal = defineSignal<[ReportPayload]>(BREAKER_MESSAGE_NAMES.report);
/** Operator override: back to CLOSED ({by?, reason?}; a tool may send no payload). Answers with the new state. */
export const resetUpdate = defineUpdate<ProviderBreakerState, [ResetPayload]>(BREAKER_MESSAGE_NAMES.reset);
export const breakerStateQuery = defineQuery<BreakerView>(BREAKER_MESSAGE_NAMES.state);

// ---- read-only views (UI details, CLI) ----

/** The phase at `nowMs`: OPEN past its cooldown is HALF_OPEN (the next ask is the probe). */
export function effectivePhase(state: ProviderBreakerState, nowMs: number): BreakerPhase {
  return state.phase === 'OPEN' && state.openUntilMs !== null && nowMs >= state.openUntilMs ? 'HALF_OPEN' : state.phase;
}

/** Remembered failures (CLOSED) that still fall within the window at `nowMs`. */
export function failuresInWindow(state: ProviderBreakerState, nowMs: number, cfg: BreakerConfig): number {
  return state.failureTimesMs.filter((t) => nowMs - t <= cfg.failureWindowMs).length;
}
