/**
 * The provider circuit breaker (seed 001 "Circuit Breaker System"): whether the next call to an
 * agent provider may go out. Owns the CLOSED / OPEN / HALF_OPEN state machine and its defaults
 * (the schema of its carried state is schemas/provider-breaker-state.ts; one state per provider,
 * keying them is the caller's).
 *
 *   CLOSED    every call goes out. A failure is remembered; when `failureThreshold` (3) failures
 *             fall within `failureWindowMs` (60 s: the oldest of them at most 60 s before the
 *             newest) the breaker trips to OPEN. Successes do not clear remembered failures
 *             (the seed counts failures per window, not in a row).
 *   OPEN      every call is refused until `cooldownMs` (300 s) after the trip; the first ask at
 *             or after that instant finds the breaker HALF_OPEN.
 *   HALF_OPEN one probe at a time, probes at least `probeIntervalMs` (10 s) apart (measured
 *             between probe starts). `closeAfterSuccesses` (3) successful probes in a row close
 *             the breaker; any failed probe re-opens it for a new full cooldown.
 *
 * What counts as a failure is the caller's: provider-level failures — a rate limit (it counts: a
 * rate-limited provider is unavailable, and the wait it names is honoured by the caller on top of
 * the breaker), an auth error, a crash or empty output — not an agent whose tests fail.
 *
 * Every call let through must be reported once, with the `probe` flag its decision carried.
 * A report of a call that is not the probe (it went out before the trip) changes nothing while
 * OPEN or HALF_OPEN: it says nothing about recovery. Without the flag, a report in HALF_OPEN is
 * taken as the probe's. `breakerReset` is the manual override (back to CLOSED).
 *
 * Pure: time is a parameter; the input state is never mutated.
 */
import {
  MAX_FAILURE_TIMES,
  type BreakerConfig,
  type BreakerDecision,
  type ProviderBreakerState,
} from '../schemas/provider-breaker-state.js';

/** The carried state's schema and the config's shape are contracts (schemas/provider-breaker-state.ts); re-exported for the rules' callers. */
export {
  MAX_FAILURE_TIMES,
  ProviderBreakerStateSchema,
  type BreakerConfig,
  type BreakerDecision,
  type ProviderBreakerState,
} from '../schemas/provider-breaker-state.js';

/** Seed 001's numbers. */
export const DEFAULT_BREAKER_CONFIG: Readonly<BreakerConfig> = {
  failureThreshold: 3,
  failureWindowMs: 60_000,
  cooldownMs: 300_000,
  probeIntervalMs: 10_000,
  closeAfterSuccesses: 3,
};

/** `released`: the run let the allowed call go unmade (a stop, pause or rewind came first); it says nothing about the provider. */
export type BreakerOutcome = 'success' | 'failure' | 'released';

export function initialBreaker(): ProviderBreakerState {
  return {
    phase: 'CLOSED',
    failureTimesMs: [],
    openUntilMs: null,
    probeInFlight: false,
    lastProbeAtMs: null,
    probeSuccesses: 0,
    lastChangeAtMs: null,
    trips: 0,
  };
}

/** Whole, at least `min`; a value that is not a finite number takes the seed's default. */
function setting(cfg: BreakerConfig, key: keyof BreakerConfig, min: number): number {
  const v = cfg[key];
  return Math.max(min, Math.floor(Number.isFinite(v) ? v : DEFAULT_BREAKER_CONFIG[key]));
}

function normalised(cfg: BreakerConfig): BreakerConfig {
  return {
    failureThreshold: Math.min(setting(cfg, 'failureThreshold', 1), MAX_FAILURE_TIMES),
    failureWindowMs: setting(cfg, 'failureWindowMs', 0),
    cooldownMs: setting(cfg, 'cooldownMs', 0),
    probeIntervalMs: setting(cfg, 'probeIntervalMs', 0),
    closeAfterSuccesses: setting(cfg, 'closeAfterSuccesses', 1),
  };
}

function closed(state: ProviderBreakerState, nowMs: number): ProviderBreakerState {
  return { ...initialBreaker(), lastChangeAtMs: nowMs, trips: state.trips };
}

function opened(state: ProviderBreakerState, nowMs: number, cfg: BreakerConfig): ProviderBreakerState {
  return { ...initialBreaker(), phase: 'OPEN', openUntilMs: nowMs + cfg.cooldownMs, lastChangeAtMs: nowMs, trips: state.trips + 1 };
}

/** OPEN whose cooldown has ended is HALF_OPEN (since the cooldown's end), with no probe out yet. */
function advanced(state: ProviderBreakerState, nowMs: number): ProviderBreakerState {
  if (state.phase !== 'OPEN' || state.openUntilMs === null || nowMs < state.openUntilMs) return state;
  return { ...initialBreaker(), phase: 'HALF_OPEN', lastChangeAtMs: state.openUntilMs, trips: state.trips };
}

function askHalfOpen(
  state: ProviderBreakerState,
  nowMs: number,
  cfg: BreakerConfig,
): { state: ProviderBreakerState; decision: BreakerDecision } {
  if (state.probeInFlight) return { state, decision: { allow: false, retryAtMs: nowMs + cfg.probeIntervalMs, reason: 'probe_in_flight' } };
  const nextProbeAtMs = state.lastProbeAtMs === null ? nowMs : state.lastProbeAtMs + cfg.probeIntervalMs;
  if (nowMs < nextProbeAtMs) return { state, decision: { allow: false, retryAtMs: nextProbeAtMs, reason: 'probe_interval' } };
  return { state: { ...state, probeInFlight: true, lastProbeAtMs: nowMs }, decision: { allow: true, probe: true } };
}

/** May a call go out now? A probe let out is recorded as in flight in the returned state. */
export function breakerAsk(
  state: ProviderBreakerState,
  nowMs: number,
  cfg: BreakerConfig = DEFAULT_BREAKER_CONFIG,
): { state: ProviderBreakerState; decision: BreakerDecision } {
  const c = normalised(cfg);
  const s = advanced(state, nowMs);
  switch (s.phase) {
    case 'CLOSED':
      return { state: s, decision: { allow: true, probe: false } };
    case 'OPEN':
      return { state: s, decision: { allow: false, retryAtMs: s.openUntilMs ?? nowMs, reason: 'open' } };
    case 'HALF_OPEN':
      return askHalfOpen(s, nowMs, c);
  }
}

function reportClosed(state: ProviderBreakerState, outcome: BreakerOutcome, nowMs: number, cfg: BreakerConfig): ProviderBreakerState {
  if (outcome !== 'failure') return state;
  const recent = [...state.failureTimesMs.filter((t) => nowMs - t <= cfg.failureWindowMs), nowMs].slice(-cfg.failureThreshold);
  if (recent.length >= cfg.failureThreshold) return opened(state, nowMs, cfg);
  return { ...state, failureTimesMs: recent };
}

function reportProbe(state: ProviderBreakerState, outcome: BreakerOutcome, nowMs: number, cfg: BreakerConfig): ProviderBreakerState {
  if (outcome === 'failure') return opened(state, nowMs, cfg);
  // An unmade probe frees the probe slot: nothing is counted (the probe interval still applies).
  if (outcome === 'released') return { ...state, probeInFlight: false };
  const probeSuccesses = state.probeSuccesses + 1;
  if (probeSuccesses >= cfg.closeAfterSuccesses) return closed(state, nowMs);
  return { ...state, probeInFlight: false, probeSuccesses };
}

/**
 * The outcome of a call that was let through.
 * @param call the `probe` flag of the decision that let the call out (see the header)
 */
export function breakerReport(
  state: ProviderBreakerState,
  outcome: BreakerOutcome,
  nowMs: number,
  cfg: BreakerConfig = DEFAULT_BREAKER_CONFIG,
  call?: { probe: boolean },
): ProviderBreakerState {
  const c = normalised(cfg);
  const s = advanced(state, nowMs);
  switch (s.phase) {
    case 'CLOSED':
      return reportClosed(s, outcome, nowMs, c);
    case 'OPEN':
      return s;
    case 'HALF_OPEN':
      return s.probeInFlight && (call?.probe ?? true) ? reportProbe(s, outcome, nowMs, c) : s;
  }
}

/** Manual override: CLOSED, nothing remembered but the trip count. */
export function breakerReset(state: ProviderBreakerState, nowMs: number): ProviderBreakerState {
  return closed(state, nowMs);
}
