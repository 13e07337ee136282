/**
 * Where a resolved knob's value came from, and the resolved set itself: shared by the resolution
 * (cli/config.ts) and its explanation (cli/knob-explain.ts).
 *
 * Client-only; never imported by workflow code.
 */
import type { KnobName, Knobs } from '../schemas/knobs.js';

/** Lowest to highest: default < profile < file < env < flag. */
export type KnobSource = 'flag' | 'env' | 'file' | 'profile' | 'default';

/** Where a knob's value came from: e.g. `flag` + `--set maxIterations=5`, `env` + `VIGIL_TIER`, `profile` + `strict (--knob-profile)`. */
export interface KnobOrigin {
  source: KnobSource;
  detail: string;
}

export interface ResolvedKnobs {
  knobs: Knobs;
  sources: Record<KnobName, KnobOrigin>;
  /** One line per loki-mode alias read or overridden (for stderr); see cli/loki-aliases.ts. */
  notes?: string[];
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** A value as the user would recognise it: strings quoted, everything else as JSON. */
export function showValue(value: unknown, max = 100): string {
  const text = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  return truncate(text, max);
}
