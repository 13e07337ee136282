/**
 * Following a delivered pull request (knob `followPr`): whether a run follows it, how an event is
 * received (taken once by its id, queued while the run is busy), what the waiting run does next
 * (take the oldest event, or end idle after `followPrDays`), and what an event asks of the agent,
 * as a person's directive with its author.
 *
 * Pure: the time comes in as an argument.
 */
import type { Knobs } from '../schemas/knobs.js';
import type { OutcomeStatus } from '../schemas/run.js';
import { PR_EVENT_IDS_KEPT, PR_EVENTS_QUEUED, type PrEvent, type PullRequestState } from '../schemas/pr-event.js';

/** A run follows its pull request when it delivers one (deliver=pr) with followPr on, and ended done. */
export function followsPullRequest(status: OutcomeStatus, knobs: Pick<Knobs, 'deliver' | 'followPr'>): boolean {
  return knobs.deliver === 'pr' && knobs.followPr && (status === 'council_approved' || status === 'completion_promise_fulfilled');
}

export function newPullRequestState(url: string | null, branch: string, at: string): PullRequestState {
  return { url, branch, since: at, waiting: true, queue: [], ids: [], taken: [] };
}

/** A received event: queued once by its id (a redelivery is refused, with why), at most `PR_EVENTS_QUEUED` waiting. */
export function receivePrEvent(
  pr: PullRequestState,
  event: PrEvent,
): { ok: true; state: PullRequestState } | { ok: false; why: string; duplicate: boolean } {
  if (pr.ids.includes(event.id)) return { ok: false, duplicate: true, why: `event ${event.id} was already received; it is taken once` };
  if (pr.queue.length >= PR_EVENTS_QUEUED)
    return { ok: false, duplicate: false, why: `${PR_EVENTS_QUEUED} events already wait to be taken; send it again later` };
  return { ok: true, state: { ...pr, queue: [...pr.queue, event], ids: [...pr.ids, event.id].slice(-PR_EVENT_IDS_KEPT) } };
}

/** The end of a followed pull request (merged, closed) comes before any iteration still queued: nothing is left to fix. */
function pickEvent(queue: readonly PrEvent[]): number {
  const ending = queue.findIndex((e) => e.kind === 'merged' || e.kind === 'closed');
  return ending >= 0 ? ending : 0;
}

export type PrStep = { kind: 'take'; event: PrEvent; rest: PrEvent[] } | { kind: 'idle'; days: number } | { kind: 'wait'; untilMs: number };

/** What the waiting run does now: take an event, end idle, or wait until the idle time is up. */
export function nextPrStep(pr: PullRequestState, knobs: Pick<Knobs, 'followPrDays'>, nowMs: number): PrStep {
  if (pr.queue.length > 0) {
    const i = pickEvent(pr.queue);
    return { kind: 'take', event: pr.queue[i] as PrEvent, rest: pr.queue.filter((_, j) => j !== i) };
  }
  const last = Math.max(Date.parse(pr.since), ...pr.taken.map((t) => Date.parse(t.at)).filter(Number.isFinite));
  const untilMs = last + knobs.followPrDays * 86_400_000;
  return nowMs >= untilMs ? { kind: 'idle', days: knobs.followPrDays } : { kind: 'wait', untilMs };
}

/** One line for status and the report. */
export function prEventSummary(e: PrEvent): string {
  switch (e.kind) {
    case 'checks-failed':
      return `checks failed: ${e.checks.map((c) => c.name).join(', ')}`.slice(0, 300);
    case 'comment':
      return `${e.commentKind === 'review' ? 'changes requested' : 'comment'} by ${e.author}`.slice(0, 300);
    case 'base-moved':
      return 'the base branch moved';
    case 'merged':
      return `merged${e.mergeCommit ? ` (${e.mergeCommit.slice(0, 12)})` : ''}`;
    case 'closed':
      return 'closed without merge';
  }
}

/** What the event asks of the agent, as the next prompt's directive and who it is from; null for an event no iteration answers. */
export function prEventDirective(e: PrEvent, url: string | null): { text: string; by: string } | null {
  const pr = url ? `the pull request ${url}` : "the run's pull request";
  if (e.kind === 'checks-failed') {
    const checks = e.checks.map((c) => `### ${c.name}\n\n${c.logTail.trim() ? `\`\`\`\n${c.logTail.trim()}\n\`\`\`` : '(no log given)'}`);
    return {
      text: `The checks on ${pr} finished red. Fix what they report; the fix is pushed to the same branch.\n\n${checks.join('\n\n')}`,
      by: e.by ?? 'pull request checks',
    };
  }
  if (e.kind === 'comment') {
    const what = e.commentKind === 'review' ? 'A review requested changes' : 'A comment addressed to the run';
    return { text: `${what} on ${pr}, from ${e.author}, verbatim:\n\n${e.text}`, by: e.author };
  }
  return null;
}

/** The reason of the run's end by its pull request. */
export function prEndReason(e: PrEvent & { kind: 'merged' | 'closed' }, pr: PullRequestState, doneReason: string): string {
  const where = pr.url ?? `branch ${pr.branch}`;
  return e.kind === 'merged'
    ? `pull request merged: ${where}${e.mergeCommit ? ` (merge commit ${e.mergeCommit})` : ''}; ${doneReason}`
    : `pull request closed without merge: ${where}; ${doneReason}`;
}
