/**
 * Frozen: the old path of the pr-update patch (PR_UPDATE_PATCH, workflows/run/eras.ts), kept for the
 * runs that began to follow their pull request before it: the wait answered only a stop or an event
 * (a rewind waited for the next event), and a base-moved event was logged and not acted on. Deleted
 * with the patch's call.
 *
 * Workflow code: deterministic, no I/O.
 */
import { LIMITS, type Outcome, type OutcomeStatus } from '../../schemas/run.js';
import type { PrEvent, PullRequestState } from '../../schemas/pr-event.js';
import { nextPrStep, prEndReason, prEventDirective, prEventSummary } from '../../rules/follow-pr.js';
import { finish, stopOutcome } from './ending.js';
import { type Run } from './run.js';

/** Waits for the pull request's next event (pause and stop apply), and answers it. */
export async function beforePrUpdate(
  run: Run,
  s: OutcomeStatus,
  reason: string,
  notes: string[],
  delivered: string[],
): Promise<Outcome | null> {
  const { state, knobs } = run;
  const pr = state.pullRequest as PullRequestState;
  for (;;) {
    if (run.stopRequest) return stopOutcome(run, [...notes, ...delivered]);
    const step = nextPrStep(pr, knobs, run.nowMs());
    if (step.kind === 'idle')
      return finish(run, s, `${reason}; the pull request saw no event for ${step.days} d`, notes, [
        ...delivered,
        `delivered: the pull request ${pr.url ?? pr.branch} saw no event for ${step.days} d`,
      ]);
    if (step.kind === 'take' && state.pause === null) {
      pr.queue = step.rest;
      const taken = await takeEvent(run, s, reason, notes, delivered, step.event);
      if (taken !== 'wait') return taken;
      continue;
    }
    const untilMs = step.kind === 'wait' ? step.untilMs : run.nowMs() + knobs.followPrDays * 86_400_000;
    await run.sdk.until(
      () => run.stopRequest !== null || (state.pause === null && pr.queue.length > 0),
      Math.max(untilMs - run.nowMs(), 1),
    );
  }
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
  const directive = prEventDirective(e, pr.url);
  if (directive === null || state.pendingDirectives.length >= LIMITS.pendingDirectives) {
    // The base moved: this version rebases nothing; the person is told in the run's notes.
    run.sdk.log.warn('pull request event not acted on', { id: e.id, kind: e.kind });
    run.publish();
    return 'wait';
  }
  state.pendingDirectives.push({ text: directive.text, by: directive.by, at: run.nowIso(), id: `pr-${e.id}`.slice(0, 100) });
  pr.waiting = false;
  run.status = 'running';
  run.publish();
  return null;
}
