/**
 * Named knob profiles: a set of knob values taken as a whole (`vigil start --knob-profile strict`,
 * or `VIGIL_KNOB_PROFILE`). A profile sits just above the defaults: a knob set anywhere on purpose
 * (config file, environment, flag) beats it, and `vigil config --explain` names the profile as the
 * source of the values it gave.
 *
 * The flag is `--knob-profile`, not `--profile`: `--profile` is the temporal.toml profile the CLI
 * connects with, as for the temporal CLI (cli/endpoint.ts).
 *
 * Sandbox-safe: plain data, no Node APIs.
 */
import type { Knobs } from './knobs.js';

export const KNOB_PROFILE_NAMES = ['minimal', 'default', 'strict'] as const;
export type KnobProfileName = (typeof KNOB_PROFILE_NAMES)[number];

/** The environment variable that names a profile when no `--knob-profile` flag does. */
export const KNOB_PROFILE_ENV = 'VIGIL_KNOB_PROFILE';

export interface KnobProfile {
  /** What it is for, one sentence (docs/knobs.md, `vigil config --help`). */
  readonly doc: string;
  readonly knobs: Readonly<Partial<Knobs>>;
}

export const KNOB_PROFILES: Readonly<Record<KnobProfileName, KnobProfile>> = {
  minimal: {
    doc:
      'The cheapest honest run: no council, no quality gates, no code review, no PRD checklist, so no agent ' +
      "call but the builder's; a claim still completes only through the evidence gate (a diff since the start, " +
      'green tests, no secret in the changed files). For rehearsals, and for tests of the loop itself.',
    knobs: { councilEnabled: false, qualityGates: false, codeReview: false, prdChecklist: false },
  },
  default: {
    doc: "The product's defaults: every judge on (council of 3, quality gates, code review, the PRD checklist).",
    knobs: {},
  },
  strict: {
    doc:
      'The strictest judges: a council of 5 that must be unanimous, the complex review (4 specialists beside the ' +
      'mandatory reviewers) that also blocks below a mergeability score of 80, and the full test suite on every gate pass.',
    knobs: {
      councilSize: 5,
      councilThreshold: 5,
      reviewComplexity: 'complex',
      reviewMergeabilityMin: 80,
      affectedTestsFullEvery: 1,
    },
  },
};

export function isKnobProfileName(name: string): name is KnobProfileName {
  return (KNOB_PROFILE_NAMES as readonly string[]).includes(name);
}
