/**
 * Delivery of a done run (knob `deliver`): whether its work is committed on its run branch, and
 * the commit message that says what the run did. Pure functions: no I/O, imported by the workflow.
 */
import type { OutcomeStatus } from '../../schemas/run.js';

/** Only a run that ended done delivers; a force-stopped, capped or stopped run leaves its work as it is. */
export function delivers(status: OutcomeStatus, deliver: 'branch' | 'pr' | 'none'): boolean {
  return deliver !== 'none' && (status === 'council_approved' || status === 'completion_promise_fulfilled');
}

/** A pull request is asked for only with `deliver=pr`, and only once the work is on a branch. */
export function opensPullRequest(deliver: 'branch' | 'pr' | 'none', deliveredBranch: string | null): boolean {
  return deliver === 'pr' && deliveredBranch !== null;
}

/** The pull request's title: the PRD's title, on one line (GitHub shows about 256 characters). */
export function pullRequestTitle(prdTitle: string): string {
  return (prdTitle.trim() || 'Vigil run').replace(/\s+/g, ' ').slice(0, 200);
}

export interface DeliveryFacts {
  prdTitle: string;
  workflowId: string;
  status: OutcomeStatus;
  reason: string;
  iterations: number;
  spendUsd: number;
  calls: number;
  notes: readonly string[];
}

/** The run branch's commit message: a subject from the PRD's title, then what the run did and how it was judged. */
export function deliveryMessage(f: DeliveryFacts): string {
  const subject = (f.prdTitle.trim() || 'Vigil run').replace(/\s+/g, ' ').slice(0, 72);
  const body = [
    `Delivered by Vigil run ${f.workflowId}: ${f.status} after ${f.iterations} iteration(s).`,
    '',
    f.reason,
    ...(f.notes.length ? ['', ...f.notes.map((n) => `- ${n}`)] : []),
    '',
    `Spend: $${f.spendUsd.toFixed(2)} over ${f.calls} priced agent call(s).`,
    `Report: vigil report ${f.workflowId}`,
  ];
  return `${subject}\n\n${body.join('\n').slice(0, 19_000)}\n`;
}
