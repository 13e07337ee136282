/**
 * The life of the pull request a run follows (knob followPr), as a person reads it wherever they
 * look (`vigil status`, the Temporal UI's card, the console's run page and inbox): its number and
 * address, where it stands (waiting, checks red, fixing, rebasing, waits for a person, merged,
 * closed), and what happened to it: the red checks and the comments taken (with their authors),
 * the updates onto its moved base with their outcome, and the run's replies. Made from the status
 * snapshot's `pullRequest` part alone (workflows/run/follow-pr.ts publishes it), with its outcome
 * and pause.
 *
 * Pure: the text only; no clock.
 */
import type { StatusSnapshot } from '../schemas/status.js';

type Snapshot = Pick<StatusSnapshot, 'pullRequest' | 'outcome' | 'pause'>;
export type FollowedPullRequest = NonNullable<StatusSnapshot['pullRequest']>;

/** Where a followed pull request stands. */
export const PR_STATES = ['waiting', 'queued', 'checks_red', 'fixing', 'rebasing', 'needs_person', 'merged', 'closed', 'ended'] as const;
export type PrState = (typeof PR_STATES)[number];

export const PR_STATE_LABELS: Record<PrState, string> = {
  waiting: 'waiting for its next event',
  queued: 'an event waits to be taken',
  checks_red: 'checks red: fixing them',
  fixing: 'fixing what a comment asked',
  rebasing: 'updating onto its moved base (judged again before the push)',
  needs_person: 'waits for a person',
  merged: 'merged',
  closed: 'closed without merge',
  ended: 'no longer followed',
};

/** One thing that happened to the pull request, newest last. */
export interface PrLifeEntry {
  at: string;
  kind: 'checks' | 'comment' | 'update' | 'reply' | 'end' | 'event';
  text: string;
}

export interface PrLife {
  /** The pull request's number, read from its address (`…/pull/7`); null when it has no address. */
  number: number | null;
  url: string | null;
  branch: string;
  base: string | null;
  since: string;
  state: PrState;
  /** The state in words, with who is answered or what a person is asked. */
  stateText: string;
  checksTaken: number;
  commentsTaken: number;
  updates: number;
  replies: number;
  queued: number;
  entries: PrLifeEntry[];
}

/** The number of a pull request from its address (GitHub's `/pull/N`, GitLab's `/merge_requests/N`). */
export function prNumber(url: string | null | undefined): number | null {
  const m = url ? /\/(?:pull|pulls|merge_requests)\/(\d+)(?:[/?#]|$)/.exec(url) : null;
  return m ? Number(m[1]) : null;
}

/** Where the pull request stands, from the snapshot: its end, a pause that waits for a person, the event it answers, or waiting. */
export function prState(s: Snapshot): PrState {
  const pr = s.pullRequest;
  if (!pr) return 'ended';
  if (s.outcome) return s.outcome.status === 'merged' ? 'merged' : s.outcome.status === 'pr_closed' ? 'closed' : 'ended';
  if (s.pause && s.pause.by === 'vigil') return 'needs_person';
  if (pr.waiting) return pr.queued > 0 ? 'queued' : 'waiting';
  const last = pr.taken.at(-1);
  if (last?.kind === 'checks-failed') return 'checks_red';
  if (last?.kind === 'comment') return 'fixing';
  if (last?.kind === 'base-moved') return 'rebasing';
  return 'waiting';
}

const ENTRY_KIND: Record<string, PrLifeEntry['kind']> = {
  'checks-failed': 'checks',
  comment: 'comment',
  merged: 'end',
  closed: 'end',
  // A base-moved event shows as its update (below), with its outcome.
};

/** The pull request's life from the snapshot; null for a run that follows none. */
export function prLife(s: Snapshot): PrLife | null {
  const pr = s.pullRequest;
  if (!pr) return null;
  const state = prState(s);
  const updates = pr.updates ?? [];
  const replies = pr.replies ?? [];
  const entries: PrLifeEntry[] = [
    ...pr.taken
      .filter((t) => t.kind !== 'base-moved')
      .map((t) => ({ at: t.at, kind: ENTRY_KIND[t.kind] ?? ('event' as const), text: t.summary })),
    ...updates.map((u) => ({ at: u.at, kind: 'update' as const, text: updateText(u) })),
    ...replies.map((r) => ({
      at: r.at,
      kind: 'reply' as const,
      text: `${r.posted ? 'replied' : 'did not reply'} to ${r.to}: ${r.note}`,
    })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  return {
    number: prNumber(pr.url),
    url: pr.url,
    branch: pr.branch,
    base: pr.base ?? null,
    since: pr.since,
    state,
    stateText: stateText(state, pr, s),
    checksTaken: pr.taken.filter((t) => t.kind === 'checks-failed').length,
    commentsTaken: pr.taken.filter((t) => t.kind === 'comment').length,
    updates: updates.length,
    replies: replies.length,
    queued: pr.queued,
    entries,
  };
}

function updateText(u: NonNullable<FollowedPullRequest['updates']>[number]): string {
  const onto = u.base ? ` onto ${u.base}` : '';
  const what = {
    updated: `${u.mode === 'rebase' ? 'rebased' : 'merged the base'}${onto}${u.commit ? ` (${u.commit.slice(0, 12)})` : ''}`,
    current: `base moved: already up to date${onto}`,
    conflict: `base moved: ${u.mode} conflicts${onto}; a person is asked`,
    failed: `base moved: ${u.mode} failed${onto}`,
  }[u.result];
  return u.note && u.result !== 'updated' ? `${what}: ${u.note}` : what;
}

function stateText(state: PrState, pr: FollowedPullRequest, s: Snapshot): string {
  const label = PR_STATE_LABELS[state];
  if (state === 'fixing' && pr.answering)
    return `${pr.answering.review ? 'fixing what a review asked' : 'answering a comment'}, from ${pr.answering.author}`;
  if (state === 'needs_person' && s.pause) return `${label}: ${s.pause.reason.split('\n')[0] ?? ''}`.slice(0, 400);
  if (state === 'waiting' || state === 'queued') return `${label} since ${pr.taken.at(-1)?.at ?? pr.since}`;
  return label;
}

/** `#7 https://…/pull/7 (vigil/r → main)`: the pull request in one line. */
export function prTitle(life: Pick<PrLife, 'number' | 'url' | 'branch' | 'base'>): string {
  const name = life.number !== null ? `#${life.number} ` : '';
  return `${name}${life.url ?? '(no address)'} (${life.branch}${life.base ? ` → ${life.base}` : ''})`;
}

/** The counts in one line: `2 red check run(s) taken · 1 comment(s) taken · 1 update(s) onto the base · 1 reply`. */
export function prCountsLine(life: PrLife): string {
  return [
    `${life.checksTaken} red check event(s) taken`,
    `${life.commentsTaken} comment(s) taken`,
    `${life.updates} update(s) onto its base`,
    `${life.replies} repl${life.replies === 1 ? 'y' : 'ies'}`,
    ...(life.queued ? [`${life.queued} queued`] : []),
  ].join(' · ');
}

/** The life as text lines (status, the card): the pull request, where it stands, the counts, then the latest `max` entries. */
export function prLifeLines(life: PrLife, max = 10): string[] {
  const shown = life.entries.slice(-max);
  const more = life.entries.length - shown.length;
  return [
    `${prTitle(life)}: ${life.stateText}`,
    prCountsLine(life),
    ...(more > 0 ? [`… ${more} earlier`] : []),
    ...shown.map((e) => `${e.at} ${e.text}`),
  ];
}
