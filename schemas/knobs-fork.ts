/**
 * The knobs of attempts from a stuck point (docs/attempts.md, Attempts from a stuck point): what a
 * run does where the stagnation or done-signal valve would force-stop it, spread into `KNOBS`
 * (schemas/knobs.ts) beside the valves' own knobs. Also the grammar of `forkWith`, which the
 * knob's schema checks and rules/fork.ts reads.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { enumKnob, intKnob, type KnobSpecBase } from './knob-kinds.js';
import { PROVIDERS } from './provider-names.js';
import { shared } from './shared.js';

const TIERS = ['planning', 'development', 'fast'] as const;

/** One fork's variation: any of its agent, model and tier (what it leaves out is the run's). */
export interface ForkVariation {
  provider?: (typeof PROVIDERS)[number];
  model?: string;
  tier?: (typeof TIERS)[number];
}

/**
 * `forkWith` read: a comma-separated list, each entry one or more of `agent:<provider>`,
 * `model:<name>`, `tier:<planning|development|fast>` joined by `+` (`agent:codex+model:gpt-5`).
 * An empty list is no variation. The error says which entry is wrong and what it may be.
 */
export function parseForkWith(raw: string): { ok: true; variations: ForkVariation[] } | { ok: false; error: string } {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const variations: ForkVariation[] = [];
  for (const entry of entries) {
    const v: ForkVariation = {};
    for (const part of entry.split('+').map((p) => p.trim())) {
      const m = /^(agent|model|tier):(.+)$/.exec(part);
      const key = m?.[1];
      const value = (m?.[2] ?? '').trim();
      if (!m || !value) return { ok: false, error: `"${part}" in "${entry}" is not agent:<name>, model:<name> or tier:<name>` };
      if (key === 'agent') {
        if (!(PROVIDERS as readonly string[]).includes(value))
          return { ok: false, error: `agent "${value}" is not one of ${PROVIDERS.join(', ')}` };
        v.provider = value as ForkVariation['provider'];
      } else if (key === 'tier') {
        if (!(TIERS as readonly string[]).includes(value)) return { ok: false, error: `tier "${value}" is not one of ${TIERS.join(', ')}` };
        v.tier = value as ForkVariation['tier'];
      } else {
        if (value.length > 200) return { ok: false, error: `model "${value.slice(0, 40)}…" is longer than 200 characters` };
        v.model = value;
      }
    }
    variations.push(v);
  }
  return { ok: true, variations };
}

export const FORK_KNOBS = shared(
  'schemas/knobs-fork:FORK_KNOBS',
  () =>
    ({
      onStuck: enumKnob(
        'VIGIL_ON_STUCK',
        ['stop', 'fork'] as const,
        'stop',
        'Where the stagnation or done-signal valve would force-stop the run: stop (force_stopped); fork: forkAttempts attempts ' +
          'from its last good checkpoint, each with its forkWith entry, the first approved one delivered as the run.',
      ),
      forkAttempts: intKnob('VIGIL_FORK_ATTEMPTS', 1, 9, 2, 'How many attempts onStuck=fork starts from the stuck point, at once.'),
      forkWith: {
        schema: z
          .string()
          .max(1000)
          .refine((v) => parseForkWith(v).ok, {
            message: 'must be a comma-separated list of agent:<provider>, model:<name>, tier:<tier> (joined by + in one entry)',
          }),
        default: 'tier:planning',
        env: 'VIGIL_FORK_WITH',
        doc:
          'What each fork of onStuck=fork runs with, cycled over the forks: entries of agent:<provider>, model:<name>, ' +
          'tier:<tier>, joined by + (e.g. "model:opus,agent:codex+tier:planning"); empty: the run\'s own.',
        allowed: 'a comma-separated list of agent:<provider>, model:<name> and tier:<planning, development or fast>, joined by +, or empty',
        fromString: (raw: string) => raw.trim(),
      } satisfies KnobSpecBase<string>,
    }) as const,
);
