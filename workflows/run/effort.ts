/**
 * Effort that fits the task: the complexity a run detects (or is told) at its start, from what
 * `prepareRun` measured, and the knobs it sets where the person set none
 * (rules/complexity.ts).
 *
 * Workflow code: deterministic, no I/O.
 */
import type { ComplexityRecord, RepoMeasure } from '../../schemas/effort.js';
import { decideComplexity, knobsGiven } from '../../rules/complexity.js';
import type { Run } from './run.js';

/** The run's complexity from its measure and the complexity knob; null when nothing was decided. */
export function fitEffort(run: Run, measure: RepoMeasure | null): ComplexityRecord | null {
  const { input } = run;
  return decideComplexity(input.knobs.complexity, measure, input.knobs, knobsGiven(input.knobsGiven));
}
