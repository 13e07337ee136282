/**
 * The provider circuit breaker's carried state and config, as contracts: the state's schema (one
 * state per provider), the config's fields, and a decision's shape. The rules that move the state
 * are rules/provider-breaker.ts.
 */
import { z } from 'zod';
import { shared } from './shared.js';

export interface BreakerConfig {
  failureThreshold: number;
  failureWindowMs: number;
  cooldownMs: number;
  probeIntervalMs: number;
  closeAfterSuccesses: number;
}

/** Bound of the remembered failure times (and so of `failureThreshold`). */
export const MAX_FAILURE_TIMES = 100;

const instant = shared('rules/provider-breaker:instant', () => z.number().min(0));

export const ProviderBreakerStateSchema = shared('rules/provider-breaker:ProviderBreakerStateSchema', () =>
  z
    .object({
      phase: z.enum(['CLOSED', 'OPEN', 'HALF_OPEN']),
      /** CLOSED: the most recent failures (at most `failureThreshold` are kept). */
      failureTimesMs: z.array(instant).max(MAX_FAILURE_TIMES),
      /** OPEN: when the cooldown ends. */
      openUntilMs: instant.nullable(),
      /** HALF_OPEN: a probe is out and not yet reported. */
      probeInFlight: z.boolean(),
      /** HALF_OPEN: when the last probe went out. */
      lastProbeAtMs: instant.nullable(),
      /** HALF_OPEN: successful probes in a row. */
      probeSuccesses: z.number().int().min(0),
      lastChangeAtMs: instant.nullable(),
      /** How many times the breaker has opened (trips and re-opens). */
      trips: z.number().int().min(0),
    })
    .refine((s) => (s.phase === 'OPEN') === (s.openUntilMs !== null), { message: 'openUntilMs is set exactly when OPEN' })
    .refine((s) => s.phase === 'HALF_OPEN' || (!s.probeInFlight && s.probeSuccesses === 0 && s.lastProbeAtMs === null), {
      message: 'probe fields are only set in HALF_OPEN',
    })
    .refine((s) => s.phase === 'CLOSED' || s.failureTimesMs.length === 0, { message: 'failure times are only kept in CLOSED' }),
);
export type ProviderBreakerState = z.infer<typeof ProviderBreakerStateSchema>;

export type BreakerDecision =
  { allow: true; probe: boolean } | { allow: false; retryAtMs: number; reason: 'open' | 'probe_in_flight' | 'probe_interval' };
