/**
 * The knobs of effort that fits the task: the model tier, the task's complexity and the legacy
 * rotation, spread into `KNOBS` (schemas/knobs.ts) where they stand in its order.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { boolKnob, enumKnob } from './knob-kinds.js';
import { shared } from './shared.js';

export const EFFORT_KNOBS = shared(
  'schemas/knobs-effort:EFFORT_KNOBS',
  () =>
    ({
      tier: enumKnob(
        'VIGIL_TIER',
        ['planning', 'development', 'fast'] as const,
        'development',
        'Model tier pinned for the run (passed to the agent as VIGIL_TIER).',
      ),
      maxTier: enumKnob(
        'VIGIL_MAX_TIER',
        ['planning', 'development', 'fast'] as const,
        'planning',
        'The highest model tier a call may use, a cost ceiling: the tier ladder, a pinned tier or the legacy rotation above it run at it instead.',
      ),
      complexity: enumKnob(
        'VIGIL_COMPLEXITY',
        ['auto', 'off', 'simple', 'standard', 'complex'] as const,
        'auto',
        "The task's complexity, detected at the start from the PRD and the repository (auto) or named; it sets the phases, the " +
          "council's size and floor and the review panel, each only where that knob is not set explicitly. off: knobs as given.",
      ),
      legacyTierRotation: boolKnob(
        'VIGIL_LEGACY_TIER_ROTATION',
        false,
        'Rotate the tier with the phase (REASON planning, ACT/REFLECT development, VERIFY fast).',
      ),
    }) as const,
);
