/**
 * Which provider, model and effort an agent call uses (spec §1.5): the builder uses `provider`
 * with the tier's model — `model` pins one for every tier, else `modelPlanning` /
 * `modelDevelopment` / `modelFast`, else the provider's own default for the tier (null here: the
 * preset knows it). Council members and the devil's advocate may use another provider and model
 * (`councilProvider`, `councilModel`), since a reviewer on a different model is a stronger check;
 * code reviewers may have their own (`reviewProvider`, `reviewModel`). The checklist extractor and
 * verifier are reviewers too: they run on the council's provider and model.
 */
import type { Knobs, ProviderKnob } from '../schemas/knobs.js';
import type { Tier } from '../schemas/run.js';
import type { AgentRole } from '../schemas/activities.js';

export interface AgentChoice {
  provider: ProviderKnob;
  /** null: the provider's default for the tier (or, for `command`, none). */
  model: string | null;
  effort: string | null;
  fallbackModel: string | null;
  /** The argv (`command`) or the binary override (other providers). */
  argv: string[];
}

type ChoiceKnobs = Pick<
  Knobs,
  | 'provider'
  | 'agentCommand'
  | 'model'
  | 'modelPlanning'
  | 'modelDevelopment'
  | 'modelFast'
  | 'effort'
  | 'fallbackModel'
  | 'councilProvider'
  | 'councilModel'
  | 'devilsAdvocateProvider'
  | 'devilsAdvocateModel'
  | 'reviewProvider'
  | 'reviewModel'
>;

const orNull = (s: string): string | null => (s.trim() === '' ? null : s.trim());

function tierModel(k: ChoiceKnobs, tier: Tier): string | null {
  const perTier = { planning: k.modelPlanning, development: k.modelDevelopment, fast: k.modelFast }[tier];
  return orNull(k.model) ?? orNull(perTier);
}

export function chooseAgent(k: ChoiceKnobs, role: AgentRole, tier: Tier): AgentChoice {
  const reviewing = role !== 'iteration';
  const devil = role === 'devils-advocate';
  const codeReviewer = role === 'reviewer';
  const councilProvider: ProviderKnob = k.councilProvider !== '' ? k.councilProvider : k.provider;
  const provider: ProviderKnob = !reviewing
    ? k.provider
    : devil && k.devilsAdvocateProvider !== ''
      ? k.devilsAdvocateProvider
      : codeReviewer && k.reviewProvider !== ''
        ? k.reviewProvider
        : councilProvider;
  // A reviewer on another provider has no use for the builder's argv or model names.
  const sameProvider = provider === k.provider;
  const reviewerModel =
    (devil ? orNull(k.devilsAdvocateModel) : null) ??
    (codeReviewer ? orNull(k.reviewModel) : null) ??
    (provider === councilProvider ? orNull(k.councilModel) : null);
  const model = reviewing ? (reviewerModel ?? (sameProvider ? tierModel(k, tier) : null)) : tierModel(k, tier);
  return {
    provider,
    model,
    effort: sameProvider ? orNull(k.effort) : null,
    fallbackModel: sameProvider ? orNull(k.fallbackModel) : null,
    argv: sameProvider ? k.agentCommand : [],
  };
}

/**
 * How long an agent call of any role may go without output and without a change in the
 * repository before its supervisor ends it as hung (knob agentSilenceMinutes, 0: never;
 * lib/call-silence.ts), in seconds to the millisecond.
 */
export function silenceSeconds(k: Pick<Knobs, 'agentSilenceMinutes'>): number {
  return Math.round(k.agentSilenceMinutes * 60_000) / 1000;
}
