/**
 * The report's "Pull request" section (`vigil report <id>`, `vigil history <id> --format md`): the
 * life of the pull request a run followed after delivering it (knob followPr), from the events the
 * run journalled (workflows/run/follow-pr.ts, pr-update.ts, handlers.ts): `following …` when it
 * was delivered and the run began (or went back) to wait, `taken: …` for each red checks event and
 * comment it took (with its author), `base moved: …` for each update onto the moved base with its
 * outcome, `replied to …` for its replies, a redelivered event refused as taken once, and the
 * outcome (merged, pr_closed). Pure: the rows come in.
 */
import type { z } from 'zod';
import type { PullRequestReportSchema } from '../schemas/cli-output-reports.js';
import type { RunEvent } from '../schemas/events.js';
import { PR_STATE_LABELS, prNumber, type PrState } from '../rules/pr-life.js';

export type PullRequestReport = z.infer<typeof PullRequestReportSchema>;
type Entry = PullRequestReport['entries'][number];

/** What a journalled `prEvent` message of the run says happened, or null for one that is not part of the life (a receipt). */
function entryOf(e: Extract<RunEvent, { kind: 'message' }>, at: string | null, first: boolean): Entry | null {
  const s = e.summary;
  if (e.by === 'signal')
    return !e.accepted && /already received/.test(s) ? { at, kind: 'redelivered', text: s.replace(/^prEvent: /, '') } : null;
  if (s.startsWith('following ')) return { at, kind: 'delivered', text: first ? s : `pushed again; ${s}` };
  if (s.startsWith('taken: ')) {
    const what = s.slice('taken: '.length);
    const kind = /^checks failed/.test(what) ? 'checks' : / by /.test(what) ? 'comment' : /^(merged|closed)/.test(what) ? 'end' : 'event';
    // A base-moved event shows as its update, which follows it with the outcome.
    return what === 'the base branch moved' ? null : { at, kind, text: what };
  }
  if (s.startsWith('base moved: ')) return { at, kind: 'update', text: s };
  if (/^(replied|did not reply) to /.test(s)) return { at, kind: 'reply', text: s };
  return null;
}

/** Where the pull request stands, as its events say it. */
function stateOf(entries: readonly Entry[], outcome: string | null): PrState {
  if (outcome) return outcome === 'merged' ? 'merged' : outcome === 'pr_closed' ? 'closed' : 'ended';
  const last = [...entries].reverse().find((x) => x.kind !== 'redelivered' && x.kind !== 'reply');
  if (!last || last.kind === 'delivered') return 'waiting';
  if (last.kind === 'checks') return 'checks_red';
  if (last.kind === 'comment') return 'fixing';
  if (last.kind === 'update')
    return /conflict/.test(last.text) ? 'needs_person' : /up to date|failed/.test(last.text) ? 'waiting' : 'rebasing';
  return 'waiting';
}

/** The section from a run's events in order (`at` as ISO text); null when the run followed no pull request. */
export function pullRequestReport(rows: readonly { at: string | null; event: RunEvent }[]): PullRequestReport | null {
  const entries: Entry[] = [];
  let url: string | null | undefined;
  let outcome: string | null = null;
  for (const { at, event } of rows) {
    if (event.kind === 'outcome') {
      outcome = event.status;
      if (url !== undefined && (event.status === 'merged' || event.status === 'pr_closed'))
        entries.push({ at, kind: 'end', text: `${event.status}: ${event.reason}`.slice(0, 400) });
      continue;
    }
    if (event.kind !== 'message' || event.name !== 'prEvent') continue;
    const entry = entryOf(event, at, url === undefined);
    if (!entry) continue;
    if (entry.kind === 'delivered' && url === undefined) {
      const target = event.summary.slice('following '.length);
      url = /^https?:\/\//.test(target) ? target : null;
    }
    // The outcome says the end with its reason; the taken event would say it twice.
    if (entry.kind !== 'end') entries.push(entry);
  }
  if (url === undefined) return null;
  const state = stateOf(entries, outcome);
  const count = (kind: string): number => entries.filter((x) => x.kind === kind).length;
  return {
    url,
    number: prNumber(url),
    state,
    stateText: PR_STATE_LABELS[state],
    checksTaken: count('checks'),
    commentsTaken: count('comment'),
    updates: count('update'),
    replies: count('reply'),
    redelivered: count('redelivered'),
    entries,
  };
}

/** The section as lines: the pull request and where it stands, the counts, then each entry. */
export function pullRequestLines(p: PullRequestReport): string[] {
  const counts = [
    `${p.checksTaken} red check event(s) taken`,
    `${p.commentsTaken} comment(s) taken`,
    `${p.updates} update(s) onto its base`,
    `${p.replies} repl${p.replies === 1 ? 'y' : 'ies'}`,
    ...(p.redelivered ? [`${p.redelivered} redelivered event(s) taken once`] : []),
  ].join(' · ');
  return [
    `${p.number !== null ? `#${p.number} ` : ''}${p.url ?? '(no address)'}: ${p.stateText}`,
    counts,
    ...p.entries.map((x) => `${x.at ?? '?'} ${x.text}`),
  ];
}
