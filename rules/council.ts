/**
 * The completion council's arithmetic (spec §2.2, §2.8): the effective threshold, member roles,
 * the severity/error-budget override, the tally with its exact-member-count rule, and the devil's
 * advocate override on unanimous approval.
 */
import { SEVERITIES, type Issue, type Severity } from './vote.js';

export const MEMBER_ROLES = ['requirements-verifier', 'test-auditor', 'devils-advocate-minded'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** Roles cycle by member index: 0 requirements verifier, 1 test auditor, 2 devil's-advocate-minded, 3 ... */
export function memberRole(index: number): MemberRole {
  return MEMBER_ROLES[((index % MEMBER_ROLES.length) + MEMBER_ROLES.length) % MEMBER_ROLES.length] as MemberRole;
}

/** `clamp(max(ceil(2n/3), configured), 1, n)`: a configured threshold can only tighten. */
export function effectiveThreshold(size: number, configured: number): number {
  const n = Math.max(1, Math.floor(size));
  const base = Math.ceil((2 * n) / 3);
  return Math.min(Math.max(Math.max(base, Math.floor(configured)), 1), n);
}

const rank = (s: Severity): number => SEVERITIES.indexOf(s);

/**
 * With a severity threshold above `low`, a REJECT that lists only issues below the threshold is
 * reconsidered: approve when the error budget is 0, else keep the REJECT while the share of
 * non-blocking issues exceeds the budget. Any issue at or above the threshold keeps the REJECT.
 */
export function applySeverityBudget(
  approves: boolean,
  issues: readonly Issue[],
  severityThreshold: Severity,
  errorBudget: number,
): { approves: boolean; overridden: boolean } {
  if (approves || severityThreshold === 'low' || issues.length === 0) return { approves, overridden: false };
  const blocking = issues.filter((i) => rank(i.severity) >= rank(severityThreshold)).length;
  if (blocking > 0) return { approves: false, overridden: false };
  if (errorBudget <= 0) return { approves: true, overridden: true };
  const share = (issues.length - blocking) / issues.length;
  return share > errorBudget ? { approves: false, overridden: false } : { approves: true, overridden: true };
}

export interface Tally {
  approve: number;
  reject: number;
  threshold: number;
  size: number;
  /** Every configured member answered (a missing or extra vote fails the round). */
  complete: boolean;
  verdict: 'COMPLETE' | 'CONTINUE';
}

export function tally(approvals: readonly boolean[], size: number, configuredThreshold: number): Tally {
  const threshold = effectiveThreshold(size, configuredThreshold);
  const approve = approvals.filter(Boolean).length;
  const complete = approvals.length === size;
  return {
    approve,
    reject: approvals.length - approve,
    threshold,
    size,
    complete,
    verdict: complete && approve >= threshold ? 'COMPLETE' : 'CONTINUE',
  };
}

/** The devil's advocate is consulted on a unanimous approval by a council of two or more. */
export function devilsAdvocateDue(t: Tally): boolean {
  return t.verdict === 'COMPLETE' && t.size >= 2 && t.approve === t.size;
}

/** Only a clean APPROVE confirms; anything else forces CONTINUE with approvals at threshold - 1. */
export function applyDevilsAdvocate(t: Tally, confirms: boolean): Tally & { flipped: boolean } {
  if (confirms) return { ...t, flipped: false };
  const approve = Math.max(0, t.threshold - 1);
  return { ...t, approve, reject: t.size - approve, verdict: 'CONTINUE', flipped: true };
}
