/**
 * Phase and tier of an iteration (spec §1.4). The phase rotates REASON, ACT, REFLECT, VERIFY by
 * `iteration mod 4`; since the counter is incremented before use, iteration 1 is ACT. The tier is
 * pinned for the run unless legacy rotation is on.
 */
import { PHASES, type Phase, type Tier } from '../../schemas/run.js';

const LEGACY_TIERS: readonly Tier[] = ['planning', 'development', 'development', 'fast'];

export function phaseFor(iteration: number): Phase {
  return PHASES[((iteration % 4) + 4) % 4] as Phase;
}

export function tierFor(iteration: number, knobs: { tier: Tier; legacyTierRotation: boolean }): Tier {
  if (!knobs.legacyTierRotation) return knobs.tier;
  return LEGACY_TIERS[((iteration % 4) + 4) % 4] as Tier;
}
