/**
 * The id of an event of a followed pull request by what it is about, so that the same fact taken
 * from two sources is taken once: `vigil hooks` (a webhook, and GitHub's redelivery of it) and the
 * poller (activities/pr-poll.ts) name it alike, and the run takes an id once (schemas/pr-event.ts).
 *
 * | event | id |
 * |---|---|
 * | the head's checks finished red | `checks-<head sha>` (one answer per head: a later red suite on the same head waits for the next push) |
 * | a review that requested changes | `review-<review id>` |
 * | a comment addressed to the run | `comment-<comment id>` |
 * | the base moved | `base-<the base's new tip>` |
 * | merged | `merged-<merge commit>` |
 * | closed without merge | `closed` |
 *
 * A fact a sender cannot name (a payload without the field) has no id here: the sender uses its
 * own (the webhook's delivery id). Pure.
 */

export type PrEventFact =
  | { kind: 'checks-failed'; head: string }
  | { kind: 'review'; id: string | number }
  | { kind: 'comment'; id: string | number }
  | { kind: 'base-moved'; base: string }
  | { kind: 'merged'; commit: string }
  | { kind: 'closed' };

const SAFE = /^[A-Za-z0-9._:-]{1,80}$/;

/** The fact's id, or null when what names it is missing or not an id (a sender then uses its own). */
export function prEventId(f: PrEventFact): string | null {
  const named = (prefix: string, v: string | number): string | null => {
    const s = String(v);
    return SAFE.test(s) ? `${prefix}-${s}` : null;
  };
  switch (f.kind) {
    case 'checks-failed':
      return named('checks', f.head);
    case 'review':
      return named('review', f.id);
    case 'comment':
      return named('comment', f.id);
    case 'base-moved':
      return named('base', f.base);
    case 'merged':
      return named('merged', f.commit);
    case 'closed':
      return 'closed';
  }
}
