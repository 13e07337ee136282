/**
 * How a run ends: its outcome (the final notification, every update answered and the journal
 * flushed before it closes), a stop, continue-as-new carrying the whole state, and repository
 * trouble (a pause, or the end in perpetual mode).
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { evidenceLine } from '../../rules/evidence-line.js';
import { type Outcome, OUTCOME_EXIT_CODES, type OutcomeStatus, RunStateSchema } from '../../schemas/run.js';
import { type Json, packValue } from '../carried-state.js';
import {
  delivers,
  type DeliveryFacts,
  deliveryMessage,
  opensPullRequest,
  pullRequestTitle,
  runReportMarkdown,
} from '../../rules/delivery.js';
import { outcomeEvent } from '../../rules/journal.js';
import { onRepositoryTrouble, repositoryTrouble } from '../../rules/repository.js';
import { undeliveredNote } from '../../rules/undelivered-directives.js';
import { chooseAgent, silenceSeconds } from '../../rules/agent-choice.js';
import { remainingBudget } from '../../rules/budget.js';
import { sandboxArgs } from '../../rules/sandbox.js';
import { agentRequestNotes } from '../../rules/agent-requests.js';
import { markStopNow } from './eras.js';
import { notifyPeople, writeSessionHandoff } from './people.js';
import { type Run } from './run.js';

/** What done rested on: the winning fork's own line when a fork continued the run (onStuck=fork), else the run's. */
export function runEvidence(run: Run): string {
  const { state } = run;
  if (state.fork?.winner && state.fork.evidence) return state.fork.evidence;
  return evidenceLine(state.lastTests, state.gates.latest, state.convergence.lastHash, state.acceptance);
}

/**
 * The run ends with outcome `s`. `delivered`: the notes of a delivery already made (a followed pull
 * request, workflows/run/follow-pr.ts), which is then not made again.
 */
export async function finish(run: Run, s: OutcomeStatus, reason: string, notes: string[] = [], delivered?: string[]): Promise<Outcome> {
  const { state, info } = run;
  // What done rested on, first, wherever the outcome's notes go (status, report, the delivery).
  if (s === 'council_approved' || s === 'completion_promise_fulfilled' || s === 'merged' || s === 'pr_closed')
    notes = [runEvidence(run), ...notes];
  // A perpetual run's requests for a person that went unanswered (decisions/agent-requests.ts).
  notes = [...notes, ...agentRequestNotes(state.escalations)];
  // Pauses a deadline lifted with nobody's answer (workflows/run/pause-wait.ts).
  if (state.deadlineNotes?.length) notes = [...notes, ...state.deadlineNotes];
  if (state.pendingDirectives.length > 0) notes = [...notes, undeliveredNote(state.pendingDirectives)];
  let branch: string | null = null;
  if (delivered) notes = [...notes, ...delivered];
  else if (delivers(s, run.knobs.deliver)) {
    const d = await deliver(run, s, reason, notes);
    branch = d.branch;
    notes = [...notes, d.note];
  }
  run.outcome = {
    status: s,
    reason,
    exitCode: OUTCOME_EXIT_CODES[s],
    iteration: state.iteration,
    at: run.nowIso(),
    notes,
    ...(run.input.stream ? { spendUsd: state.spend.usd } : {}),
  };
  // The spend as it ends, the last round's reviewers and members included.
  if (state.spend.calls > 0) run.recordSpend();
  run.recordEvent(outcomeEvent(run.outcome));
  // deliver=pr: the pull request's body is the run's report, its outcome included (knobs no older run has: nothing to patch).
  if (opensPullRequest(run.knobs.deliver, branch)) {
    notes = [...notes, (await pullRequest(run, s, reason, notes, branch ?? '')).note];
    run.outcome = { ...run.outcome, notes };
  }
  // The session-end HANDOFF.md, unless a person asked for the run closed now.
  if (!(s === 'stopped' && run.stopRequest?.now === true)) await writeSessionHandoff(run, run.outcome);
  run.status = 'finished';
  run.backoffUntil = null;
  run.publish();
  run.sdk.log.info('run finished', { status: s, reason, iteration: state.iteration });
  const o = run.outcome;
  const notifyFinished = (): Promise<unknown> =>
    run.sdk.nonCancellable(() =>
      notifyPeople(
        run,
        'run_finished',
        `Run ${s === 'council_approved' || s === 'completion_promise_fulfilled' || s === 'already_satisfied' ? 'completed' : 'ended'}: ${s}`,
        `${reason}${notes.length ? `\n${notes.join('\n')}` : ''}`,
        o.exitCode === 0 ? 'info' : o.exitCode === 20 ? 'warning' : 'critical',
        { status: s, exitCode: o.exitCode, iteration: state.iteration },
        `${info.workflowId}:run_finished`,
      ),
    );
  // stop --now: the person wants the run closed now (closeNow), not after the steps of closeInTurn.
  if (s === 'stopped' && run.stopRequest?.now === true) {
    markStopNow();
    return closeNow(run, notifyFinished);
  }
  return closeInTurn(run, notifyFinished);
}

/**
 * How a run closes: its final notification, every update answered, its journal flushed (the last
 * events reach the store before it closes), the memory judge, then its run files removed.
 */
async function closeInTurn(run: Run, notifyFinished: () => Promise<unknown>): Promise<Outcome> {
  const outcome = run.outcome as Outcome;
  await notifyFinished();
  run.rewinder?.abandon(`the run finished (${outcome.status}) before the rewind could happen`);
  // Let in-flight update handlers answer before the run closes; this must also work after a
  // cancellation request, hence the non-cancellable scope.
  await run.sdk.nonCancellable(() => run.sdk.until(() => run.sdk.allHandlersFinished()));
  // The last events (the outcome, the final notification) reach the store before the run closes.
  await run.sdk.nonCancellable(() => run.flushJournal());
  // The memory judge, while the run's sandbox homes are still there for its call.
  if (run.journaling && run.knobs.memoryJudge) await run.sdk.nonCancellable(() => judgeMemory(run));
  await run.sdk.nonCancellable(() => releaseRunFiles(run));
  return outcome;
}

/**
 * How a run stopped with `stop --now` closes: the final notification and the removal of its run
 * files side by side, every update answered, its journal flushed, and no memory judge, whose agent
 * call would hold the close for as long as it takes. The journal's last
 * batch is committed before the run closes; what the store derives from it (the memory's
 * consolidation) follows it in the worker (lib/event-store.ts).
 */
async function closeNow(run: Run, notifyFinished: () => Promise<unknown>): Promise<Outcome> {
  const outcome = run.outcome as Outcome;
  await Promise.all([notifyFinished(), run.sdk.nonCancellable(() => releaseRunFiles(run))]);
  run.rewinder?.abandon(`the run finished (${outcome.status}) before the rewind could happen`);
  await run.sdk.nonCancellable(() => run.sdk.until(() => run.sdk.allHandlersFinished()));
  await run.sdk.nonCancellable(() => run.flushJournal());
  return outcome;
}

/** The memory judge on what the run made of the lasting memory (docs/memory.md, Judgement); a failure is logged, never the run's. */
async function judgeMemory(run: Run): Promise<void> {
  const { state, knobs, input, info } = run;
  try {
    const r = await run.acts.memory.judgeMemory.executeWithOptions({ summary: 'judge what the run left in the lasting memory' }, [
      {
        runId: info.workflowId,
        repoPath: input.repoPath,
        ...chooseAgent(knobs, 'memory', 'fast'),
        authorization: input.authorization ?? null,
        remainingBudgetUsd: remainingBudget(state.spend.usd, state.budgetUsd ?? knobs.budgetUsd),
        iteration: Math.max(1, state.iteration),
        timeoutSeconds: knobs.councilMemberTimeoutSeconds,
        silenceSeconds: silenceSeconds(knobs),
        rateLimitRpm: knobs.rateLimitRpm,
        ...sandboxArgs(knobs),
      },
    ]);
    if (r.problem) run.sdk.log.warn('memory judgement changed nothing', { problem: r.problem });
    else if (r.called) run.sdk.log.info('memory judged', { items: r.items, lessons: r.lessons, merges: r.merges, costUsd: r.costUsd });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    run.sdk.log.warn('memory judgement failed', { error: err.cause?.message ?? err.message });
  }
}

/** The sandbox's per-run files go (credentials copied into a sandbox home among them); a failure is logged, never the run's. */
async function releaseRunFiles(run: Run): Promise<void> {
  try {
    const r = await run.acts.repo.releaseRunFiles.executeWithOptions({ summary: "remove the run's sandbox homes" }, [
      { runId: run.info.workflowId },
    ]);
    if (r.problem) run.sdk.log.warn('run files left behind', { problem: r.problem });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    run.sdk.log.warn('run files left behind', { error: err.cause?.message ?? err.message });
  }
}

const deliveryFacts = (run: Run, s: OutcomeStatus, reason: string, notes: readonly string[]): DeliveryFacts => {
  const { state, input, info } = run;
  return {
    prdTitle: input.prdTitle,
    workflowId: info.workflowId,
    status: s,
    reason,
    iterations: state.iteration,
    spendUsd: state.spend.usd,
    calls: state.spend.calls,
    ...(state.spend.unpricedCalls ? { unpricedCalls: state.spend.unpricedCalls } : {}),
    notes,
  };
};

/**
 * The work of a run that ended done, committed on its run branch (or, opted in, the current one); the note says where (or why not). Never fails the run.
 * `onBranch`: on top of the branch's own tip (a followed pull request's next push, a fast-forward), not HEAD.
 */
export async function deliver(
  run: Run,
  s: OutcomeStatus,
  reason: string,
  notes: readonly string[],
  onBranch = false,
): Promise<{ note: string; branch: string | null; commit?: string | null; unchanged?: true }> {
  const { input, info } = run;
  const message = deliveryMessage(deliveryFacts(run, s, reason, notes));
  const toCurrent = run.knobs.deliverToCurrent;
  try {
    const d = await run.sdk.nonCancellable(() =>
      run.acts.repo.deliverRun.executeWithOptions(
        { summary: toCurrent ? 'deliver the work on the current branch' : `deliver the work on its run branch` },
        [
          {
            repoPath: input.repoPath,
            runId: info.workflowId,
            message,
            ...(toCurrent ? { toCurrent } : {}),
            ...(onBranch ? { onBranch } : {}),
          },
        ],
      ),
    );
    // deliverRun skips only a working tree that is HEAD's: nothing to commit or push.
    if (!d.branch)
      return {
        note: `not delivered: ${d.skipped ?? 'nothing to deliver'}`,
        branch: null,
        ...(d.skipped ? { unchanged: true as const } : {}),
      };
    const where = toCurrent
      ? 'the current branch moved to it and the index follows'
      : 'the current branch and the working tree are as the run left them';
    return {
      note: `delivered on branch ${d.branch} (commit ${(d.commit ?? '').slice(0, 12)}, ${d.files} file(s)); ${where}`,
      branch: d.branch,
      commit: d.commit,
    };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    run.sdk.log.warn('delivery failed', { error: err.cause?.message ?? err.message });
    return { note: `not delivered: ${(err.cause?.message ?? err.message).slice(0, 300)}`, branch: null };
  }
}

/**
 * deliver=pr: the delivered branch pushed (forced with `lease` after a rebase) and a pull request opened through gh (one
 * already open for it is reused); the note says where (or why there is none). Never fails the run.
 */
export async function pullRequest(
  run: Run,
  s: OutcomeStatus,
  reason: string,
  notes: readonly string[],
  branch: string,
  lease?: string,
): Promise<{ note: string; url: string | null; base?: string | null }> {
  const { state, input, info } = run;
  // The event store's report of the run includes its outcome once the journal is flushed.
  if (run.journaling) await run.sdk.nonCancellable(() => run.flushJournal());
  const last = state.council.verdicts.at(-1);
  const checklist = state.gates.checklist;
  const body = runReportMarkdown({
    ...deliveryFacts(run, s, reason, notes),
    council: last ? { result: last.result, approve: last.approve, reject: last.reject, size: last.size } : null,
    gates: state.gates.latest.map((g) => ({ gate: g.gate, verdict: g.verdict, reason: g.reason })),
    checklist: checklist
      ? checklist.items.map((i) => ({ id: i.id, title: i.title, status: checklist.status[i.id]?.status ?? 'unverified' }))
      : [],
  });
  try {
    const pr = await run.sdk.nonCancellable(() =>
      run.acts.repo.openPullRequest.executeWithOptions({ summary: 'open a pull request with gh' }, [
        {
          repoPath: input.repoPath,
          runId: info.workflowId,
          branch,
          title: pullRequestTitle(input.prdTitle),
          body,
          ...(run.journaling ? { reportFromStore: true } : {}),
          ...(lease ? { lease } : {}),
        },
      ]),
    );
    return pr.url
      ? { note: `pull request opened: ${pr.url}`, url: pr.url, base: pr.base ?? null }
      : { note: `no pull request: ${pr.skipped ?? 'gh gave no address'}; the branch ${branch} is delivered`, url: null };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    run.sdk.log.warn('pull request failed', { error: err.cause?.message ?? err.message });
    return { note: `no pull request: ${(err.cause?.message ?? err.message).slice(0, 300)}; the branch ${branch} is delivered`, url: null };
  }
}

export function stopOutcome(run: Run, notes: string[] = []): Promise<Outcome> {
  const req = run.stopRequest ?? { reason: '', by: 'unknown', now: false };
  return finish(run, 'stopped', `stopped by ${req.by}${req.reason ? `: ${req.reason}` : ''}${req.now ? ' (now)' : ''}`, notes);
}

/** Continue as new, carrying the whole validated state (packed: see workflows/carried-state.ts). */
export async function rollOver(run: Run): Promise<never> {
  const { state, input } = run;
  const carried = RunStateSchema.parse({ ...state, generations: state.generations + 1 });
  run.sdk.log.info('continuing as new', {
    iteration: state.iteration,
    generation: carried.generations,
    historySize: run.sdk.info().historySize,
  });
  const { state: _state, packedState: _packed, ...fresh } = input;
  return run.sdk.continueAsNew({ ...fresh, packedState: packValue(carried as Json) });
}

/**
 * A repository activity failed for good (repository deleted, `.git` damaged, `.vigil` a link):
 * pause and tell a person (supervised) or end with `repository_unavailable` (perpetual).
 * Anything else is rethrown unchanged.
 */
export async function handleRepositoryTrouble(run: Run, err: unknown): Promise<Outcome | null> {
  const { state, knobs, info } = run;
  if (!(err instanceof ActivityFailure) || run.sdk.isCancellation(err)) throw err;
  const cause = err.cause;
  const trouble = repositoryTrouble({
    activityType: err.activityType ?? null,
    failureType: cause instanceof ApplicationFailure ? (cause.type ?? null) : null,
    message: (cause?.message ?? err.message).slice(0, 1000),
  });
  if (trouble === null) throw err;
  run.sdk.log.warn('repository trouble', { ...trouble, iteration: state.iteration });
  const stream = run.input.stream
    ? { parentId: run.input.stream.parentId, task: run.input.stream.task, checkpoint: state.checkpoints.list.at(-1)?.iteration ?? null }
    : null;
  const action = onRepositoryTrouble(trouble, info.workflowId, knobs, stream);
  if (action.kind === 'end') return finish(run, 'repository_unavailable', action.reason);
  if (!state.pause) {
    state.pause = { reason: action.reason.slice(0, 2000), by: 'vigil', at: run.nowIso() };
    const title = trouble.kind === 'disk_full' ? 'Disk full: the run is paused' : 'Repository unavailable: the run is paused';
    await notifyPeople(
      run,
      'escalation',
      title,
      action.reason,
      'critical',
      { iteration: state.iteration, problem: trouble.problem },
      `${info.workflowId}:repository:${state.iteration}:${trouble.kind}`,
    );
  }
  run.status = 'running';
  run.publish();
  return null;
}
