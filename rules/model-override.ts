/**
 * The model-override file (the original's `.loki/state/model-override`, spec §1.4): a person (or
 * the agent) writes a model or tier name into `.vigil/model-override` in the repository, and each
 * iteration's call that reads it runs at that tier (and, for claude, that model), never above the
 * run's `maxTier`. It changes the call, not the run: the tier ladder, the rotation and the records
 * of the iterations before go on as they were; an empty file is no override; anything else is
 * ignored with a warning.
 *
 * Pure: no clocks, randomness, environment or I/O.
 */
import type { PROVIDERS } from '../schemas/provider-names.js';
import type { Tier } from '../schemas/run.js';
import { ceilingTier } from './tier-ceiling.js';

/** Where the file lives, relative to the repository. */
export const MODEL_OVERRIDE_PATH = '.vigil/model-override';

/** Each word the file may hold: the tier it asks for, and claude's model for it when it names one. */
const WORDS: Readonly<Record<string, { tier: Tier; names: 'model' | 'tier' }>> = {
  haiku: { tier: 'fast', names: 'model' },
  sonnet: { tier: 'development', names: 'model' },
  opus: { tier: 'planning', names: 'model' },
  // The original's `fable` resolved to opus.
  fable: { tier: 'planning', names: 'model' },
  fast: { tier: 'fast', names: 'tier' },
  development: { tier: 'development', names: 'tier' },
  planning: { tier: 'planning', names: 'tier' },
};

/** Claude's model for each tier, when the file named a model. */
const CLAUDE_MODEL: Readonly<Record<Tier, string>> = { fast: 'haiku', development: 'sonnet', planning: 'opus' };

export type ModelOverride =
  /** The call's tier (under the ceiling), claude's model when the file named one, and what the file said. */
  | { tier: Tier; model: string | null; said: string; capped: boolean }
  /** A file that says something else: the warning for the iteration's record. */
  | { ignored: string };

/** What the file's text asks of one call of `provider` under `maxTier`; null: no override (no file, or empty). */
export function decideModelOverride(text: string | null, provider: (typeof PROVIDERS)[number], maxTier: Tier): ModelOverride | null {
  if (text === null) return null;
  const said = text.trim().toLowerCase();
  if (said === '') return null;
  const word = Object.hasOwn(WORDS, said) ? WORDS[said] : undefined;
  if (!word)
    return {
      ignored: `${MODEL_OVERRIDE_PATH} says "${said.slice(0, 40)}", not one of ${Object.keys(WORDS).join(', ')}: ignored`,
    };
  const tier = ceilingTier(word.tier, maxTier);
  const model = provider === 'claude' && word.names === 'model' ? CLAUDE_MODEL[tier] : null;
  return { tier, model, said, capped: tier !== word.tier };
}

/** The iteration record's line for what the file did. */
export function overrideNote(o: ModelOverride): string {
  if ('ignored' in o) return o.ignored.slice(0, 200);
  const ran = o.model ? `${o.tier} (${o.model})` : o.tier;
  return `${MODEL_OVERRIDE_PATH} "${o.said}": ran at ${ran}${o.capped ? ', capped by maxTier' : ''}`.slice(0, 200);
}
