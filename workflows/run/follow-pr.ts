/**
 * After delivery, the run follows its pull request (knob followPr, FOLLOW_PR_PATCH): a done run
 * with deliver=pr delivers on its run branch, pushes it and opens (or finds) its pull request, then
 * waits, with one durable timer for the idle time and no activity, for the pull request's events
 * (the `prEvent` signal: schemas/pr-event.ts, `vigil hooks`, `vigil pr-event`). Merged: the run
 * ends `merged`; closed: `pr_closed`; nothing for followPrDays: it ends with its done outcome. Red
 * checks or a comment addressed to the run: the event becomes a person's directive (its author
 * named) and the loop goes on with a normal iteration, judged as any (gates, review, council,
 * budget); once approved again, the work is delivered on top of the same branch and pushed, and the
 * run waits again. The base moved: the branch is rebased (or the base merged in) and judged again
 * before it is pushed (workflows/run/pr-update.ts). Pause, stop and a rewind apply while it waits.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure } from '@temporalio/common';
import { LIMITS, type Outcome, type OutcomeStatus } from '../../schemas/run.js';
import type { PrEvent, PullRequestState } from '../../schemas/pr-event.js';
import { PrEventSchema } from '../../schemas/pr-event.js';
import {
  followsPullRequest,
  newPullRequestState,
  nextPrStep,
  prEndReason,
  prEventDirective,
  prEventSummary,
  receivePrEvent,
} from '../../rules/follow-pr.js';
import { beforePrUpdate } from './before-pr-update.js';
import { deliver, finish, pullRequest, runEvidence, stopOutcome } from './ending.js';
import { markFollowPr, prUpdateEra } from './eras.js';
import { pauseHasDeadlines, waitForPerson } from './pause-wait.js';
import { replyOnPullRequest, updateOnBaseMoved } from './pr-update.js';
import { type Run } from './run.js';

/** A run that ended done: it follows its pull request (deliver=pr, followPr), else it ends as before. Null: an event asks for an iteration. */
export async function endDone(run: Run, s: OutcomeStatus, reason: string, notes: string[]): Promise<Outcome | null> {
  if (!followsPullRequest(s, run.knobs)) return finish(run, s, reason, notes);
  markFollowPr();
  return await deliverAndFollow(run, s, reason, notes);
}

async function deliverAndFollow(run: Run, s: OutcomeStatus, reason: string, notes: string[]): Promise<Outcome | null> {
  const { state } = run;
  const following = state.pullRequest;
  const evidence = runEvidence(run);
  // The first delivery opens the pull request; each later one goes on top of the same branch (a fast-forward push).
  const d = await deliver(run, s, reason, [evidence, ...notes], following !== undefined);
  // A later delivery with nothing to push (the work is HEAD's): the run says so on the pull request and waits again (keyed runs).
  if (!d.branch && following && d.unchanged && run.eras.prFollowUps) return await nothingToPush(run, s, reason, notes, following, d.note);
  if (!d.branch) return finish(run, s, reason, notes, [d.note]);
  // After a rebase the push replaces what the remote holds, only if it still holds what was rebased (its lease).
  const pr = await pullRequest(run, s, reason, [evidence, ...notes], d.branch, following?.lease);
  if (!pr.url && !following) return finish(run, s, reason, notes, [d.note, pr.note]);
  if (pr.url && following?.lease) delete following.lease;
  // A review or comment the delivered work answers: the run replies on the pull request (only runs that took it in the pr-update era).
  if (following?.answering) await replyOnPullRequest(run, following, reason, d.commit ?? null, pr.url !== null);
  const delivered = following ? [d.note, pr.url ? `pushed to the pull request ${pr.url}` : pr.note] : [d.note, pr.note];
  state.pullRequest = following ?? newPullRequestState(pr.url, d.branch, run.nowIso());
  if (pr.base && !state.pullRequest.base) state.pullRequest.base = pr.base;
  if (d.commit) state.pullRequest.head = d.commit;
  state.pullRequest.waiting = true;
  run.status = 'running';
  run.recordEvent({ kind: 'message', name: 'prEvent', by: 'vigil', summary: `following ${pr.url ?? d.branch}`, accepted: true });
  run.sdk.log.info('following the pull request', { url: pr.url, branch: d.branch });
  run.publish();
  return prUpdateEra() ? await followPullRequest(run, s, reason, notes, delivered) : await beforePrUpdate(run, s, reason, notes, delivered);
}

/** After an iteration on an event, nothing to push: the run replies that nothing changed and why, and follows the pull request again. */
async function nothingToPush(
  run: Run,
  s: OutcomeStatus,
  reason: string,
  notes: string[],
  pr: PullRequestState,
  note: string,
): Promise<Outcome | null> {
  const last = pr.taken.at(-1);
  const why =
    `the work the run judged after it is the same as the repository's HEAD, so there was no commit to add to ${pr.branch}` +
    ` (${note.replace(/^not delivered: /, '')})`;
  const checks =
    !pr.answering && last?.kind === 'checks-failed'
      ? { about: `the red checks (${last.summary.replace(/^checks failed: /, '')})`, id: last.id }
      : {};
  await replyOnPullRequest(run, pr, reason, pr.head ?? null, true, { why, ...checks });
  pr.waiting = true;
  run.status = 'running';
  run.recordEvent({
    kind: 'message',
    name: 'prEvent',
    by: 'vigil',
    summary: `nothing to push: following ${pr.url ?? pr.branch}`,
    accepted: true,
  });
  run.publish();
  return await followPullRequest(run, s, reason, notes, [note]);
}

/** Waits for the pull request's next event (pause, stop and a rewind apply), and answers it. */
async function followPullRequest(
  run: Run,
  s: OutcomeStatus,
  reason: string,
  notes: string[],
  delivered: string[],
): Promise<Outcome | null> {
  const { state, knobs } = run;
  const pr = state.pullRequest as PullRequestState;
  // The poller (knob prPollEvery), in runs keyed for it (run.eras.prFollowUps): one gh call per interval while the run waits.
  const pollMs = run.eras.prFollowUps && knobs.prPollEvery > 0 && pr.url ? knobs.prPollEvery * 1000 : null;
  let pollAt = run.nowMs() + (pollMs ?? 0);
  for (;;) {
    if (run.stopRequest) return stopOutcome(run, [...notes, ...delivered]);
    if (run.rewindPending()) {
      // The loop's boundary rewinds; the run iterates from there and delivers on the same branch again.
      pr.waiting = false;
      run.status = 'running';
      run.publish();
      return null;
    }
    const step = nextPrStep(pr, knobs, run.nowMs());
    if (step.kind === 'idle')
      return finish(run, s, `${reason}; the pull request saw no event for ${step.days} d`, notes, [
        ...delivered,
        `delivered: the pull request ${pr.url ?? pr.branch} saw no event for ${step.days} d`,
      ]);
    // A pause that waits for a person (the branch conflicts with its moved base) keeps its reminder, re-route and deadline
    // as any such pause (workflows/run/pause-wait.ts); in runs keyed by prFollowUps, as older ones waited without them.
    if (run.eras.prFollowUps && state.pause !== null && !run.pauseOver() && pauseHasDeadlines(run)) {
      await waitForPerson(run);
      continue;
    }
    if (step.kind === 'take' && state.pause === null) {
      pr.queue = step.rest;
      const taken = await takeEvent(run, s, reason, notes, delivered, step.event);
      if (taken !== 'wait') return taken;
      continue;
    }
    if (pollMs !== null && state.pause === null && run.nowMs() >= pollAt) {
      await pollOnce(run, pr);
      pollAt = run.nowMs() + pollMs;
      continue;
    }
    const idleMs = step.kind === 'wait' ? step.untilMs : run.nowMs() + knobs.followPrDays * 86_400_000;
    const paused = state.pause !== null;
    const untilMs = pollMs !== null && !paused ? Math.min(idleMs, pollAt) : idleMs;
    await run.sdk.until(
      () =>
        run.stopRequest !== null ||
        run.rewindPending() ||
        (state.pause === null && pr.queue.length > 0) ||
        // A resume goes back to polling (the poller rests while the run is paused).
        (pollMs !== null && paused && state.pause === null),
      Math.max(untilMs - run.nowMs(), 1),
    );
  }
}

/**
 * One poll of the pull request (activities/pr-poll.ts): each event it saw is received as the `prEvent` signal's are, so
 * an id already received (the same red checks, review or comment seen again) is taken once. A failed poll is logged; the
 * next interval polls again.
 */
async function pollOnce(run: Run, pr: PullRequestState): Promise<void> {
  let polled: { events: PrEvent[]; note: string };
  try {
    polled = await run.acts.repo.pollPullRequest.executeWithOptions({ summary: `poll the pull request ${pr.url ?? pr.branch}` }, [
      { repoPath: run.input.repoPath, runId: run.info.workflowId, url: pr.url ?? '', since: pr.since },
    ]);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    polled = { events: [], note: `poll failed: ${(err.cause?.message ?? err.message).slice(0, 300)}` };
  }
  let fresh = 0;
  for (const e of polled.events) {
    const got = receivePrEvent(pr, e);
    if (!got.ok) continue;
    pr.queue = got.state.queue;
    pr.ids = got.state.ids;
    fresh += 1;
  }
  pr.polled = { at: run.nowIso(), note: polled.note.slice(0, 300), fresh };
  run.sdk.log.info('pull request polled', { note: polled.note, events: polled.events.length, fresh });
  if (fresh > 0) run.publish();
}

async function takeEvent(
  run: Run,
  s: OutcomeStatus,
  reason: string,
  notes: string[],
  delivered: string[],
  e: PrEvent,
): Promise<Outcome | null | 'wait'> {
  const { state } = run;
  const pr = state.pullRequest as PullRequestState;
  const summary = prEventSummary(e);
  pr.taken = [...pr.taken, { id: e.id, kind: e.kind, at: run.nowIso(), summary }].slice(-50);
  run.recordEvent({ kind: 'message', name: 'prEvent', by: 'vigil', summary: `taken: ${summary}`, accepted: true });
  run.sdk.log.info('pull request event', { id: e.id, kind: e.kind });
  if (e.kind === 'merged' || e.kind === 'closed') {
    pr.waiting = false;
    return finish(run, e.kind === 'merged' ? 'merged' : 'pr_closed', prEndReason(e, pr, reason), notes, delivered);
  }
  if (e.kind === 'base-moved') return updateOnBaseMoved(run);
  const directive = prEventDirective(e, pr.url);
  if (directive === null || state.pendingDirectives.length >= LIMITS.pendingDirectives) {
    run.sdk.log.warn('pull request event not acted on', { id: e.id, kind: e.kind });
    run.publish();
    return 'wait';
  }
  state.pendingDirectives.push({ text: directive.text, by: directive.by, at: run.nowIso(), id: `pr-${e.id}`.slice(0, 100) });
  if (e.kind === 'comment') pr.answering = { id: e.id, author: e.author, review: e.commentKind === 'review', from: pr.head ?? null };
  pr.waiting = false;
  run.status = 'running';
  run.publish();
  return null;
}

/** The `prEvent` signal: validated, taken once by its id (a redelivery is `duplicate`), queued for the waiting run. */
export function receivePrEventSignal(run: Run, payload: unknown): { ok: true } | { ok: false; why: string; duplicate?: boolean } {
  const r = PrEventSchema.safeParse(payload);
  if (!r.success)
    return { ok: false, why: `prEvent: ${r.error.issues.map((i) => `${i.path.join('.') || 'payload'}: ${i.message}`).join('; ')}` };
  const pr = run.state.pullRequest;
  if (!pr) return { ok: false, why: 'prEvent: this run follows no pull request (yet)' };
  const got = receivePrEvent(pr, r.data);
  if (!got.ok) return { ok: false, why: `prEvent: ${got.why}`, duplicate: got.duplicate };
  // In place: the waiting loop holds this object.
  pr.queue = got.state.queue;
  pr.ids = got.state.ids;
  run.publish();
  return { ok: true };
}
