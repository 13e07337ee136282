/**
 * One rule for every completion check (spec §2.3, §2.4, §2.11): a claim, the circuit breaker's
 * forced check, the interval and early checks, and a person's review all come to the same thing —
 * approve, or not. Whatever says "not" (the evidence gate, a blocking tool gate, the code review,
 * the PRD checklist, the council, or a reviewing agent's answer in the wrong format) is one
 * rejected evaluation, counted alike by the safety valves and the run's record of checks. The
 * original does the same: its evidence and checklist gates are steps of `council_evaluate`, and
 * its valves sit after every evaluation that does not approve.
 *
 * The cheapest refusal comes first: a tree that differs in nothing from the run start is the
 * evidence gate's to refuse, before a tool gate, a reviewer or a gate's failure streak is spent on
 * it.
 *
 * Pure: no clocks, randomness, environment or I/O.
 */
import type { CheckCause, CompletionCheck, CompletionChecks, ConvergenceState } from '../schemas/run.js';
import type { ConveneTrigger } from './convene.js';
import { breakerTrip, safetyValve } from './breaker.js';

/** The evidence gate's refusal of an empty diff, before anything else is asked (null: there is work to judge). */
export function emptyDiffRefusal(filesChangedSinceStart: number): string | null {
  return filesChangedSinceStart > 0 ? null : 'no file changed since the run started';
}

/** How a cause reads in a sentence ("refused by the code review"). */
export function causeLabel(cause: CheckCause): string {
  switch (cause) {
    case 'evidence':
      return 'the evidence gate';
    case 'quality_gates':
      return 'the quality gates';
    case 'code_review':
      return 'the code review';
    case 'checklist':
      return 'the PRD checklist';
    case 'council':
      return 'the council';
    case 'contract':
      return "a reviewing agent's answer format";
    case 'acceptance':
      return 'the acceptance tests';
  }
}

/** The record with one more check. */
export function recordCheck(checks: CompletionChecks, check: CompletionCheck): CompletionChecks {
  const byCause = { ...checks.byCause };
  if (!check.approved && check.cause !== null) byCause[check.cause] = (byCause[check.cause] ?? 0) + 1;
  return {
    total: checks.total + 1,
    refused: checks.refused + (check.approved ? 0 : 1),
    byCause,
    last: { ...check, reason: check.reason.slice(0, 500) },
  };
}

export interface RefusedCheck {
  iteration: number;
  trigger: ConveneTrigger;
  cause: CheckCause;
  reason: string;
}

export type AfterRefusal = { end: false; check: CompletionCheck } | { end: true; check: CompletionCheck; reason: string };

/**
 * A check that did not approve: what it records, and whether a safety valve stops the run now
 * (`force_stopped`, exit 20). The valve's reason names the real cause (no change, or claims
 * without approval) and then what refused this last check.
 */
export function afterRefusal(
  convergence: ConvergenceState,
  refused: RefusedCheck,
  knobs: { stagnationLimit: number; doneSignalLimit: number },
): AfterRefusal {
  const check: CompletionCheck = {
    iteration: refused.iteration,
    trigger: refused.trigger,
    approved: false,
    cause: refused.cause,
    reason: refused.reason.slice(0, 500),
  };
  const valve = safetyValve(
    convergence,
    breakerTrip(convergence, knobs.stagnationLimit),
    knobs,
    `${causeLabel(refused.cause)}: ${refused.reason}`,
  );
  return valve.fire ? { end: true, check, reason: valve.reason } : { end: false, check };
}

/** One line for status: the checks so far and the last one. */
export function checksLine(checks: CompletionChecks): string | null {
  const last = checks.last;
  if (!last) return null;
  const what = last.approved ? 'approved' : `refused by ${last.cause ? causeLabel(last.cause) : 'an unknown check'}: ${last.reason}`;
  return (
    `completion checks: ${checks.total} (${checks.refused} refused); the last, at iteration ` +
    `${last.iteration} (${last.trigger.replace(/_/g, ' ')}), ${what}`
  ).slice(0, 600);
}
