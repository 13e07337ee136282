/**
 * Provider failover (knob `providerFailover`, e.g. `claude,codex`): which providers may take an
 * iteration when the run's own is unavailable — its shared circuit breaker is open, or it is
 * rate-limited for longer than `failoverAfterSeconds` — in the chain's order. `command` never
 * takes over (its argv belongs to the run's own provider). Health (binary present, credentials
 * set) is a fact an activity checks; this only orders and filters.
 */
import { PROVIDERS, type Knobs, type ProviderKnob } from '../schemas/knobs.js';

export function failoverChain(k: Pick<Knobs, 'providerFailover' | 'provider'>): ProviderKnob[] {
  const known = new Set<string>(PROVIDERS);
  const out: ProviderKnob[] = [];
  for (const p of k.providerFailover.split(',').map((s) => s.trim().toLowerCase())) {
    if (!known.has(p) || p === 'command' || p === k.provider || out.includes(p as ProviderKnob)) continue;
    out.push(p as ProviderKnob);
  }
  return out;
}

/** A rate-limit wait long enough that the next iteration should go to another provider. */
export function failOverOnRateLimit(
  waitSeconds: number,
  k: Pick<Knobs, 'providerFailover' | 'provider' | 'failoverAfterSeconds'>,
): boolean {
  return failoverChain(k).length > 0 && waitSeconds > k.failoverAfterSeconds;
}

/** The knobs an iteration runs with on a failover provider: its own defaults, none of the run provider's argv or model names. */
export function knobsFor(provider: ProviderKnob, k: Knobs): Knobs {
  if (provider === k.provider) return k;
  return {
    ...k,
    provider,
    agentCommand: [],
    model: '',
    modelPlanning: '',
    modelDevelopment: '',
    modelFast: '',
    effort: '',
    fallbackModel: '',
  };
}
