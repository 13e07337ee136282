/**
 * Delivery of a done run (knob `deliver`): whether its work is committed on its run branch, and
 * the commit message that says what the run did. Pure functions: no I/O, imported by the workflow.
 */
import type { OutcomeStatus } from '../schemas/run.js';

/** Only a run that ended done delivers; a force-stopped, capped or stopped run leaves its work as it is. */
export function delivers(status: OutcomeStatus, deliver: 'branch' | 'pr' | 'none'): boolean {
  return deliver !== 'none' && (status === 'council_approved' || status === 'completion_promise_fulfilled');
}

/** `vigil/<run id>`, with anything git refuses in a ref name replaced. */
export function runBranch(runId: string): string {
  const safe = runId
    .replace(/[^A-Za-z0-9._/-]/g, '-')
    .replace(/\.\.+/g, '.')
    .replace(/\/+/g, '/')
    .replace(/^[./-]+|[./]+$/g, '')
    .replace(/\.lock$/, '-lock');
  return `vigil/${safe || 'run'}`;
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
  /** Of `calls`, those that reported no cost (a `command` agent's); absent: none. */
  unpricedCalls?: number;
  notes: readonly string[];
}

/** What the run spent, in a sentence: the priced calls' sum, and the calls no one priced apart (never a $0.00 for them). */
export function spendSentence(f: Pick<DeliveryFacts, 'spendUsd' | 'calls' | 'unpricedCalls'>): string {
  const unpriced = Math.min(f.unpricedCalls ?? 0, f.calls);
  if (f.calls > 0 && unpriced === f.calls) return `Spend: not known: none of the ${f.calls} agent call(s) reported its cost.`;
  return `Spend: $${f.spendUsd.toFixed(2)} over ${f.calls - unpriced} priced agent call(s)${unpriced ? `; ${unpriced} more reported no cost` : ''}.`;
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
    spendSentence(f),
    `Report: vigil report ${f.workflowId}`,
  ];
  return `${subject}\n\n${body.join('\n').slice(0, 19_000)}\n`;
}

export interface ReportFacts extends DeliveryFacts {
  /** The latest council round: its result and tally, or null when none was held. */
  council: { result: string; approve: number; reject: number; size: number } | null;
  /** Every gate's latest verdict. */
  gates: readonly { gate: string; verdict: string; reason: string }[];
  /** The PRD checklist: its items and each item's last known status. */
  checklist: readonly { id: string; title: string; status: string }[];
}

/**
 * The run's report as the workflow knows it, in Markdown: the pull request's body when the event
 * store has no report of the run (with the store, `vigil report <id>`'s Markdown is used instead).
 */
export function runReportMarkdown(f: ReportFacts): string {
  const line = (s: string): string => s.replace(/\s+/g, ' ').trim();
  const lines = [
    `# ${line(f.prdTitle) || 'Vigil run'}`,
    '',
    `Vigil run \`${f.workflowId}\`: **${f.status}** after ${f.iterations} iteration(s).`,
    '',
    line(f.reason).slice(0, 2000),
    '',
    '## Judgement',
    '',
    f.council
      ? `- council: ${f.council.result} (${f.council.approve} approve, ${f.council.reject} reject of ${f.council.size})`
      : '- council: no round held',
    ...(f.gates.length
      ? f.gates.map((g) => `- gate ${g.gate}: ${g.verdict}${g.reason ? ` — ${line(g.reason).slice(0, 200)}` : ''}`)
      : ['- quality gates: none ran']),
  ];
  if (f.checklist.length)
    lines.push(
      '',
      '## Checklist',
      '',
      ...f.checklist.slice(0, 60).map((i) => `- [${i.status === 'passing' ? 'x' : ' '}] ${i.id}: ${line(i.title)} (${i.status})`),
    );
  if (f.notes.length) lines.push('', '## Notes', '', ...f.notes.map((n) => `- ${line(n).slice(0, 500)}`));
  lines.push('', `${spendSentence(f)} The full report: \`vigil report ${f.workflowId}\`.`);
  return `${lines.join('\n').slice(0, 50_000)}\n`;
}
