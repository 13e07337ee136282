/**
 * The knobs of delivery: where the work of a run that ends done goes (its run branch, a pull
 * request, nowhere), and how a run follows its pull request afterwards. Part of `KNOBS`
 * (schemas/knobs.ts), in this order.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { boolKnob, durationKnob, enumKnob, intKnob } from './knob-kinds.js';

export const DELIVERY_KNOBS = {
  deliver: enumKnob(
    'VIGIL_DELIVER',
    ['branch', 'pr', 'none'] as const,
    'branch',
    'branch: a run that ends done commits its work on the branch vigil/<run id> (the current branch, index and working tree ' +
      "untouched); pr: the same, then the branch is pushed and a pull request opened with gh (its body the run's report) where " +
      'gh is installed and logged in; none: the work stays uncommitted.',
  ),
  followPr: boolKnob(
    'VIGIL_FOLLOW_PR',
    true,
    'With deliver=pr, the run follows its pull request: red checks and comments addressed to it are iterations, a merge ends ' +
      'it merged, a close pr_closed (vigil hooks, vigil pr-event); false: it ends at delivery.',
  ),
  followPrDays: intKnob(
    'VIGIL_FOLLOW_PR_DAYS',
    1,
    365,
    14,
    'A followed pull request with no event for this many days ends the run as delivered.',
  ),
  prPollEvery: durationKnob(
    'VIGIL_PR_POLL_EVERY',
    86_400,
    600,
    'Without a webhook, a followed pull request is polled this often with gh (one gh api call per interval per open pull ' +
      'request: its checks, reviews, comments, state and mergeability); 0: never (set 0 where vigil hooks receives its webhooks).',
  ),
  prUpdate: enumKnob(
    'VIGIL_PR_UPDATE',
    ['rebase', 'merge'] as const,
    'rebase',
    "When a followed pull request's base branch moves: rebase the run branch onto it (pushed with --force-with-lease) or merge " +
      'the base into it (a plain push); the evidence is judged again on the new tree before the push.',
  ),
  deliverToCurrent: boolKnob(
    'VIGIL_DELIVER_TO_CURRENT',
    false,
    'Deliver on the current branch instead of vigil/<run id>: the work is committed there and the index set to it (vigil start --deliver-to-current).',
  ),
} as const;
