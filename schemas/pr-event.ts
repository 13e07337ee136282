/**
 * What happens to a run's pull request after delivery (knob `followPr`): the events `vigil hooks`
 * maps from GitHub's webhooks and `vigil pr-event` sends by hand or from any CI, as the payload of
 * the run's `prEvent` signal, and what the run keeps of the pull request it follows (carried across
 * continue-as-new). Every event has an id, made from what it is about where the sender can
 * (rules/pr-event-ids.ts), else GitHub's `X-GitHub-Delivery` or one the sender makes, so an event
 * redelivered, or seen by both a webhook and the poller, is taken once.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

/** How many taken event ids a run keeps (the oldest forgotten first): far more than a pull request's redeliveries. */
export const PR_EVENT_IDS_KEPT = 200;
/** How many events may wait to be taken at once; more are refused (the sender is told). */
export const PR_EVENTS_QUEUED = 20;

const Id = z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/, 'letters, digits, . _ : - only, at most 100');
const Who = z.string().min(1).max(200);

/** A failing check: its name, and the tail of its log (what the agent reads first). */
export const FailedCheckSchema = z.strictObject({
  name: z.string().min(1).max(200),
  logTail: z.string().max(8_000).default(''),
});
export type FailedCheck = z.infer<typeof FailedCheckSchema>;

export const PrEventSchema = shared('schemas/pr-event:PrEventSchema', () =>
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('checks-failed'), id: Id, checks: z.array(FailedCheckSchema).min(1).max(20), by: Who.optional() }),
    z.strictObject({
      kind: z.literal('comment'),
      id: Id,
      author: Who,
      text: z.string().min(1).max(20_000),
      /** review: a review that requested changes; comment: a comment addressed to the run (`/vigil …`). */
      commentKind: z.enum(['review', 'comment']).default('comment'),
    }),
    z.strictObject({ kind: z.literal('base-moved'), id: Id, by: Who.optional() }),
    z.strictObject({ kind: z.literal('merged'), id: Id, mergeCommit: z.string().max(64).optional(), by: Who.optional() }),
    z.strictObject({ kind: z.literal('closed'), id: Id, by: Who.optional() }),
  ]),
);
export type PrEvent = z.infer<typeof PrEventSchema>;
export type PrEventKind = PrEvent['kind'];

/** One event the run took, as status and the report list it. */
export const PrEventTakenSchema = z.object({ id: z.string(), kind: z.string(), at: z.string(), summary: z.string().max(300) });

/** One update of the followed branch to its moved base, as status and the report list it. */
export const PrBranchUpdateRecordSchema = z.object({
  at: z.string(),
  /** updated: rebased or merged onto the new base; current: already on it; conflict: a person is asked; failed: git or the remote refused. */
  result: z.enum(['updated', 'current', 'conflict', 'failed']),
  mode: z.enum(['rebase', 'merge']),
  base: z.string().max(400),
  /** The branch's new tip (updated) or its tip as it stands. */
  commit: z.string().max(64).nullable(),
  note: z.string().max(500),
});
export type PrBranchUpdateRecord = z.infer<typeof PrBranchUpdateRecordSchema>;

/** The pull request a run follows, carried across continue-as-new. */
export const PullRequestStateSchema = shared('schemas/pr-event:PullRequestStateSchema', () =>
  z.object({
    /** The pull request's address (null: gh gave none, the branch is followed all the same). */
    url: z.string().max(500).nullable(),
    /** The branch delivered and pushed (the pull request's head). */
    branch: z.string().max(400),
    /** The branch the pull request goes into, when known (a push to it is a base-moved event for `vigil hooks`). */
    base: z.string().max(400).nullable().optional(),
    /** When the run began to follow it (the idle time counts from the latest of this and the last event taken). */
    since: z.string(),
    /** The run is waiting for the pull request's next event (not iterating on one). */
    waiting: z.boolean(),
    /** Events received and not yet taken, oldest first. */
    queue: z.array(PrEventSchema).max(PR_EVENTS_QUEUED),
    /** The ids of the latest events received, so that a redelivered one is taken once. */
    ids: z.array(z.string().max(100)).max(PR_EVENT_IDS_KEPT),
    /** The latest events taken. */
    taken: z.array(PrEventTakenSchema).max(50),
    /**
     * The remote tip a rebase replaced (knob prUpdate=rebase), until the rebased branch is pushed:
     * the next push is forced, with this as its lease, so it never overwrites what someone else pushed.
     */
    lease: z.string().max(64).optional(),
    /** The commit last delivered on the branch (what a reply counts the changes from). */
    head: z.string().max(64).nullable().optional(),
    /** A review or comment the run iterates on: it replies on the pull request once the answer is delivered. */
    answering: z
      .object({ id: z.string().max(100), author: z.string().max(200), review: z.boolean(), from: z.string().max(64).nullable() })
      .optional(),
    /** The run's replies on the pull request, newest last. */
    replies: z
      .array(z.object({ at: z.string(), to: z.string().max(200), posted: z.boolean(), note: z.string().max(500) }))
      .max(20)
      .optional(),
    /** The poller's latest look at the pull request (knob prPollEvery): when, what gh said, how many new events it found. */
    polled: z.object({ at: z.string(), note: z.string().max(300), fresh: z.number().int().min(0) }).optional(),
    /** The latest updates of the branch to its moved base (rebased, merged, up to date, in conflict), newest last. */
    updates: z.array(PrBranchUpdateRecordSchema).max(20).optional(),
  }),
);
export type PullRequestState = z.infer<typeof PullRequestStateSchema>;
