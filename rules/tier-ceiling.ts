/**
 * The maxTier ceiling (the original's `LOKI_MAX_TIER` clamp, spec §1.5): no call runs above it.
 * Type imports only: the CLI's quick path (status) loads it through complexity.ts.
 *
 * Pure: no clocks, randomness, environment or I/O.
 */
import type { Tier } from '../schemas/run.js';

const TIER_RANK: Record<Tier, number> = { fast: 0, development: 1, planning: 2 };

/** The tier a call runs at under the ceiling `max`. */
export function ceilingTier(tier: Tier, max: Tier): Tier {
  return TIER_RANK[tier] > TIER_RANK[max] ? max : tier;
}
