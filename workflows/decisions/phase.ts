/**
 * Phase and tier of an iteration (spec §1.4). The phase rotates REASON, ACT, REFLECT, VERIFY by
 * `iteration mod 4`; since the counter is incremented before use, iteration 1 is ACT. The tier is
 * pinned for the run unless legacy rotation is on; no call runs above the maxTier ceiling.
 */
import { PHASES, type Phase, type Tier } from '../../schemas/run.js';

const LEGACY_TIERS: readonly Tier[] = ['planning', 'development', 'development', 'fast'];

const TIER_RANK: Record<Tier, number> = { fast: 0, development: 1, planning: 2 };

/** The tier a call runs at under the ceiling `max` (knob maxTier; the original's `LOKI_MAX_TIER` clamp, spec §1.5). */
export function ceilingTier(tier: Tier, max: Tier): Tier {
  return TIER_RANK[tier] > TIER_RANK[max] ? max : tier;
}

export function phaseFor(iteration: number): Phase {
  return PHASES[((iteration % 4) + 4) % 4] as Phase;
}

export function tierFor(iteration: number, knobs: { tier: Tier; legacyTierRotation: boolean }): Tier {
  if (!knobs.legacyTierRotation) return knobs.tier;
  return LEGACY_TIERS[((iteration % 4) + 4) % 4] as Tier;
}
