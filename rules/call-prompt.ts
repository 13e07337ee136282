/**
 * A reviewing call's prompt from its parts (`promptSpec`, runs from `vigil-lean-prompt-v1` on):
 * the workflow sends the parts, the agent activity renders the text with the functions that
 * rendered it in the workflow before, so the prompt is the same. Pure.
 */
import type { PromptSpec } from '../schemas/activities.js';
import { councilPrompt, devilsAdvocatePrompt } from './council-prompt.js';
import { devilsAdvocateReviewPrompt, reviewerPrompt } from './review.js';

export function renderPromptSpec(spec: PromptSpec): string {
  switch (spec.kind) {
    case 'reviewer':
      return reviewerPrompt(spec);
    case 'review-devils-advocate':
      return devilsAdvocateReviewPrompt(spec);
    case 'council':
      return councilPrompt(spec);
    case 'council-devils-advocate':
      return devilsAdvocatePrompt(spec);
  }
}
