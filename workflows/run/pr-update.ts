/**
 * A followed pull request's base branch moved (knob prUpdate, PR_UPDATE_PATCH): the run branch is
 * rebased onto the new base (or the base merged into it) and the new tree written into the run's
 * working tree (activities/pr-branch.ts). Nothing is pushed yet: the work is judged again on the
 * new tree as a claim is (the gates, the acceptance tests, the review, the checklist and the
 * council, at the loop's next boundary), and only an approval delivers it and pushes, forced with a
 * lease after a rebase; a refusal is an ordinary iteration's findings. A rebase that conflicts is
 * not guessed at: nothing moves, and the run pauses for a person (an escalation), who rebases the
 * branch or closes the pull request, then resumes it.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure } from '@temporalio/common';
import type { PrBranchUpdate } from '../../activities/pr-branch.js';
import type { PullRequestState } from '../../schemas/pr-event.js';
import { notifyPeople } from './people.js';
import { type Run } from './run.js';

/** Null: the new tree is judged by the loop (a held claim); 'wait': the run waits for the next event. */
export async function updateOnBaseMoved(run: Run): Promise<null | 'wait'> {
  const { state, knobs, input, info } = run;
  const pr = state.pullRequest as PullRequestState;
  const mode = knobs.prUpdate;
  let r: PrBranchUpdate;
  try {
    r = await run.acts.repo.updatePrBranch.executeWithOptions({ summary: `${mode} ${pr.branch} onto its moved base` }, [
      { repoPath: input.repoPath, runId: info.workflowId, branch: pr.branch, mode, ...(pr.base ? { base: pr.base } : {}) },
    ]);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const why = (err.cause?.message ?? err.message).slice(0, 300);
    r = { result: 'failed', base: '', previous: null, commit: null, tree: null, files: [], note: `${mode} failed: ${why}` };
  }
  const at = run.nowIso();
  pr.updates = [...(pr.updates ?? []), { at, result: r.result, mode, base: r.base, commit: r.commit, note: r.note.slice(0, 500) }].slice(
    -20,
  );
  // The base the update found, kept when the run had none (state only, no command): the next push to it is mapped to the run.
  if (!pr.base && r.base) pr.base = r.base;
  run.recordEvent({ kind: 'message', name: 'prEvent', by: 'vigil', summary: `base moved: ${r.note}`.slice(0, 300), accepted: true });
  run.sdk.log.info('pull request branch update', { result: r.result, mode, base: r.base, commit: r.commit });
  if (r.result === 'updated' && r.tree) {
    // What the remote holds until the rebased branch is pushed (kept from the first unpushed rebase).
    if (mode === 'rebase' && r.previous) pr.lease ??= r.previous;
    state.convergence.lastHash = r.tree;
    state.council.heldClaim = { trigger: 'claim', iteration: state.iteration };
    pr.waiting = false;
    run.status = 'running';
    run.publish();
    return null;
  }
  if (r.result === 'conflict') {
    const reason =
      `the base branch moved and ${pr.branch} no longer applies cleanly (${r.note}); rebase it onto ${r.base} yourself and push, ` +
      `or close the pull request; then resume the run`;
    state.pause = { reason: reason.slice(0, 2000), by: 'vigil', at };
    await notifyPeople(
      run,
      'escalation',
      `Vigil needs a person: the pull request's branch conflicts with ${r.base}`,
      `${reason}.\nPull request: ${pr.url ?? pr.branch}`,
      'critical',
      { branch: pr.branch, base: r.base, files: r.files, iteration: state.iteration },
      `${info.workflowId}:pr-conflict:${r.previous ?? ''}:${at}`,
    );
  }
  run.publish();
  return 'wait';
}

/**
 * After the answer to a review or a comment is delivered: the run replies on the pull request with
 * what it changed since the commit the comment saw, or why nothing changed. A reply gh refuses is
 * noted, never fails the run.
 */
export async function replyOnPullRequest(
  run: Run,
  pr: PullRequestState,
  judged: string,
  to: string | null,
  pushed: boolean,
  unchanged?: { why: string; about?: string; id?: string },
): Promise<void> {
  // An iteration on red checks that changed nothing is answered too (runs keyed by prFollowUps only call with `unchanged`).
  const asked =
    pr.answering ??
    (unchanged?.about && unchanged.id ? { id: unchanged.id, author: 'checks', review: false, from: pr.head ?? null } : undefined);
  if (!asked) return;
  const aboutChecks = unchanged?.about !== undefined && asked !== pr.answering;
  delete pr.answering;
  let note: string;
  let posted = false;
  if (!pr.url) note = 'no pull request address to reply on';
  else {
    try {
      const r = await run.acts.repo.replyOnPullRequest.executeWithOptions({ summary: `reply on the pull request to ${asked.author}` }, [
        {
          repoPath: run.input.repoPath,
          runId: run.info.workflowId,
          url: pr.url,
          branch: pr.branch,
          eventId: asked.id,
          author: asked.author,
          review: asked.review,
          from: asked.from,
          to,
          pushed,
          judged: judged.slice(0, 2000),
          ...(unchanged ? { unchanged: unchanged.why.slice(0, 1000) } : {}),
          ...(aboutChecks && unchanged?.about ? { about: unchanged.about.slice(0, 300) } : {}),
        },
      ]);
      posted = r.posted;
      note = r.note;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      note = `reply failed: ${(err.cause?.message ?? err.message).slice(0, 300)}`;
    }
  }
  pr.replies = [...(pr.replies ?? []), { at: run.nowIso(), to: asked.author, posted, note: note.slice(0, 500) }].slice(-20);
  run.sdk.log.info('pull request reply', { to: asked.author, posted, note });
  // Journalled for the report's pull request section. No new command and no patch: its caller records the
  // delivery's `following` event right after, in the same stretch, so the journal's next flush happens as before.
  const said = `${posted ? 'replied' : 'did not reply'} to ${asked.author}: ${note}`;
  run.recordEvent({ kind: 'message', name: 'prEvent', by: 'vigil', summary: said.slice(0, 300), accepted: true });
}
