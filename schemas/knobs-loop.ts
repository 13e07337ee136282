/**
 * The knobs of uncertainty-gated escalation and of the loop's small rules (spec §1.6, §1.8,
 * §1.11, §4): spread into `KNOBS` (schemas/knobs.ts) where they stand in its order.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { boolKnob, intKnob } from './knob-kinds.js';
import { shared } from './shared.js';

export const LOOP_KNOBS = shared(
  'schemas/knobs-loop:LOOP_KNOBS',
  () =>
    ({
      uncertaintyEscalation: boolKnob(
        'VIGIL_UNCERTAINTY_ESCALATION',
        true,
        'Escalate to a person when at least 2 of 3 stuck signals (no change, oscillation, council split) co-occur.',
      ),
      uncertaintyRounds: intKnob(
        'VIGIL_UNCERTAINTY_ROUNDS',
        1,
        100,
        2,
        'Consecutive iterations the signals must co-occur before escalating.',
      ),
      uncertaintyNoChangeMin: intKnob(
        'VIGIL_UNCERTAINTY_NOCHANGE_MIN',
        0,
        10_000,
        0,
        'No-change streak that counts as a stuck signal; 0 means stagnationLimit - 1 (at least 1).',
      ),
      uncertaintySplitRounds: intKnob(
        'VIGIL_UNCERTAINTY_SPLIT_ROUNDS',
        1,
        100,
        2,
        'Trailing council rounds rejected with at least one approval that count as a split.',
      ),
      selfHeal: boolKnob(
        'VIGIL_SELF_HEAL',
        true,
        "A failed iteration leaves LAST_ERROR.json (its error class) in the run's folder; the next prompt starts with what failed " +
          'and what to do about it.',
      ),
      iterationGrace: boolKnob(
        'VIGIL_ITERATION_GRACE',
        true,
        'At the iteration cap, a completion claim not yet judged (and no gate failing) gets one more iteration, once per run.',
      ),
    }) as const,
);
