/**
 * The boundary: what the run does before its first iteration and between two iterations. Messages
 * first (stop, rewind, rollover, a review while paused, a pause), then the budget, a forced review,
 * a held claim, the caps, and a fresh history for a long run. Every step answers a `Step`: AGAIN
 * (the loop goes round), `end(outcome)`, `refused(outcome)` (before the loop), or GO (the next
 * iteration may start).
 *
 * Workflow code: deterministic, no I/O.
 */
import { SA_PROVIDER, SA_REPO } from '../../schemas/search-attributes.js';
import { budgetExceeded } from '../../rules/budget.js';
import { checkCaps } from '../../rules/caps.js';
import { graceAtCap, iterationCap } from '../../rules/grace.js';
import { keepLearnings } from '../../rules/prompt-memory.js';
import { initialLadder } from '../../rules/tier-ladder.js';
import { acceptanceOnBase, sealAcceptanceTests } from './acceptance.js';
import { draftAcceptanceTests, refuseDraftThatAlreadyPasses, showDraftedAcceptance } from './acceptance-author.js';
import { answerHeldClaim, councilRound } from './council.js';
import { finish, rollOver, stopOutcome } from './ending.js';
import { markPauseDeadlines } from './eras.js';
import { fitEffort } from './effort.js';
import { pauseHasDeadlines, waitForPerson } from './pause-wait.js';
import { recordTestBaseline } from './gates.js';
import { ensureChecklist, retryChecklist } from './prd-checklist.js';
import { notifyPeople } from './people.js';
import { AGAIN, end, type End, GO, type Go, refused as refusedRun, type Refused, type Run, type Step } from './run.js';
import { recoverStreamWorktree } from './stream-recovery.js';

/** Before the loop: the search attributes a run starts with, and a run that has no agent to call ends at once. */
export async function begin(run: Run): Promise<Refused | Go<undefined>> {
  const { knobs, input } = run;
  const { upsertsSearchAttributes } = run.eras;
  if (!run.continued && upsertsSearchAttributes) {
    run.sdk.upsertSearchAttributes([
      { key: SA_REPO, value: input.repoPath.slice(-255) },
      { key: SA_PROVIDER, value: knobs.provider },
    ]);
  }
  run.publish();

  if (knobs.provider === 'command' && knobs.agentCommand.length === 0) {
    return refusedRun(await finish(run, 'agent_not_runnable', 'no agent command configured (knob agentCommand; or choose a --provider)'));
  }
  // A signed run is admitted once, at its start (activities/run-authorization.ts): a worker that
  // requires signed runs refuses an expired signature, another PRD or knobs, or a nonce another run used.
  if (input.authorization && !run.continued) {
    const { refused } = await run.acts.admission.admitRun.executeWithOptions({ summary: 'admit the signed run' }, [
      {
        runId: run.info.workflowId,
        repoPath: input.repoPath,
        prdPath: input.prdPath,
        knobs: input.knobs,
        authorization: input.authorization,
        ...(input.tasks?.length ? { tasks: input.tasks } : {}),
        ...(input.knobsGiven ? { knobsGiven: input.knobsGiven } : {}),
        parent: run.info.parent ? { workflowId: run.info.parent.workflowId } : null,
      },
    ]);
    if (refused !== null) return refusedRun(await finish(run, 'agent_not_runnable', `this worker does not run it: ${refused}`));
  }
  return GO;
}

/**
 * Before preparing: a run that a failed preparation paused (a repository gone, a committed
 * `.vigil` link; ending.ts `handleRepositoryTrouble`) waits for a person here, as at the boundary,
 * instead of preparing again at once. A resume prepares again; a stop ends the run; a history
 * filled by messages rolls over, still paused.
 */
export async function holdPreparation(run: Run): Promise<End | Go<undefined>> {
  const { state } = run;
  const unprepared = !state.runStart || (run.knobs.prdChecklist && !state.gates.checklistTried);
  if (state.pause === null || !unprepared) return GO;
  run.publish();
  // Not `pauseOver()`: a rewind or a review has nothing to act on before the first iteration.
  await run.sdk.until(() => state.pause === null || run.stopRequest !== null || run.rolloverNow);
  if (run.stopRequest) return end(await stopOutcome(run));
  if (run.rolloverNow) {
    // Messages filled the history while it waited: a fresh one, pause and all.
    await run.sdk.until(() => run.handlersDone());
    if (!run.stopRequest) return await rollOver(run);
    return end(await stopOutcome(run));
  }
  // A stream whose worktree was deleted gets it back as it resumes.
  return (await recoverStreamWorktree(run)) ?? GO;
}

/**
 * Once per execution, and again after repository trouble: the run-start commit, the run-started
 * event, the PRD checklist, the tests' baseline, the acceptance tests (written by the acceptance
 * role first, with acceptanceFromPrd) sealed and run on the tree the run started with, and, when the
 * acceptance role wrote them, shown to the person once. The outcome when the run ends here
 * (acceptance tests already passing, or a folder that could not be written or sealed), else null.
 */
export async function prepareExecution(run: Run): Promise<End | Go<undefined>> {
  const { state, knobs, input, info } = run;
  const { repo } = run.acts;
  // Run-start commit and tree, captured once per run and carried across continue-as-new.
  if (!state.runStart) {
    const start = await repo.prepareRun.executeWithOptions({ summary: 'capture run-start commit' }, [
      {
        repoPath: input.repoPath,
        runId: info.workflowId,
        prdPath: input.prdPath,
        learnings: true,
        learningsByRef: true,
        measure: knobs.complexity !== 'off',
      },
    ]);
    state.memory = keepLearnings(state.memory, start);
    state.runStart = { sha: start.sha, treeHash: start.treeHash, capturedAt: run.nowIso() };
    if (knobs.tierLadder) state.ladder = initialLadder(knobs.tier, start.alwaysHigh ?? null);
    // The task's complexity, once per run: what it sets holds for every later execution (Run's knobs).
    // No patch: a run from before it has no measure in its recorded prepareRun result, and no
    // knobsGiven in its input (every knob counts as set), so it sets nothing and adds no command.
    if (knobs.complexity !== 'off') run.fitEffort(fitEffort(run, start.measure ?? null));
    state.convergence = { ...state.convergence, lastHash: start.treeHash };
    run.status = 'running';
    run.publish();
  }
  if (!run.continued && state.iteration === 0 && state.journal.nextSeq === 1) {
    run.recordEvent({
      kind: 'run_started',
      prdPath: input.prdPath.slice(0, 4096),
      prdTitle: input.prdTitle,
      repoPath: input.repoPath.slice(0, 4096),
      provider: knobs.provider,
      maxIterations: knobs.maxIterations,
      budgetUsd: knobs.budgetUsd,
      autonomyMode: knobs.autonomyMode,
    });
  }
  if (knobs.prdChecklist && !state.gates.checklistTried) {
    await ensureChecklist(run);
    run.publish();
  }
  await recordTestBaseline(run);
  const ended =
    (await draftAcceptanceTests(run)) ??
    (await sealAcceptanceTests(run)) ??
    (await acceptanceOnBase(run)) ??
    (await refuseDraftThatAlreadyPasses(run)) ??
    (await showDraftedAcceptance(run));
  return ended ? end(ended) : GO;
}

/**
 * The boundary between two iterations: the journal flushed, then messages (stop, rewind, rollover,
 * a review while paused, a pause), the budget, a forced review, a held claim, the caps and the
 * rollover of a long history. `GO` when the next iteration may start.
 */
export async function atBoundary(run: Run): Promise<Step> {
  const { state, knobs, info } = run;
  // The events of the last iteration go to the store, batched, at the boundary.
  if (run.journalPending()) await run.flushJournal();
  // 1. Human messages first.
  if (run.stopRequest) return end(await stopOutcome(run));
  if (run.rewindPending()) {
    await run.rewinder?.perform();
    state.council.heldClaim = null; // the claimed tree is gone
    run.publish();
    return AGAIN;
  }
  if (run.rolloverNow) {
    // Messages filled the history (even while paused): a fresh one now, pause and all.
    await run.sdk.until(() => run.handlersDone());
    if (!run.stopRequest && !run.rewindPending()) return await rollOver(run);
    return AGAIN;
  }
  if (run.reviewDueWhilePaused()) {
    run.judging.reviewWhilePaused = true;
    try {
      const ended = await councilRound(run, 'forced');
      if (ended) return end(ended);
    } finally {
      run.judging.reviewWhilePaused = false;
    }
    run.publish();
    return AGAIN;
  }
  if (state.pause) {
    run.publish();
    if (state.pause.by !== 'vigil') {
      // A person's or a tool's pause (an escalation already notified for its own).
      const p = state.pause;
      await notifyPeople(
        run,
        'paused',
        `Run paused by ${p.by}`,
        p.reason || 'no reason given',
        'info',
        { by: p.by, iteration: state.iteration },
        `${info.workflowId}:paused:${p.at}`,
      );
    }
    // A question with deadlines waits with a timer to each (reminder, re-route, deadline); else for the person alone.
    if (pauseHasDeadlines(run)) {
      markPauseDeadlines();
      await waitForPerson(run);
    } else await run.sdk.until(() => run.pauseOver());
    run.status = run.stopRequest ? 'stopping' : 'running';
    // A stream whose worktree was deleted gets it back as it resumes.
    const ended = await recoverStreamWorktree(run);
    return ended ?? AGAIN;
  }

  // Budget: reaching it pauses the run in every mode, until a person raises it.
  const budget = state.budgetUsd ?? knobs.budgetUsd;
  if (budgetExceeded(state.spend.usd, budget)) {
    const spent = `$${state.spend.usd.toFixed(2)} of $${budget.toFixed(2)}`;
    state.pause = {
      reason: `budget exceeded: ${spent}; raise it with \`vigil budget ${info.workflowId} --usd N\` and resume, or stop the run`,
      by: 'vigil',
      at: run.nowIso(),
    };
    await notifyPeople(
      run,
      'budget_exceeded',
      `Budget exceeded: ${spent}`,
      `The run is paused at iteration ${state.iteration}. ${state.pause.reason}.`,
      'critical',
      { spentUsd: state.spend.usd, budgetUsd: budget, iteration: state.iteration },
      `${info.workflowId}:budget_exceeded:${state.iteration}:${budget}`,
    );
    run.publish();
    return AGAIN;
  }

  // A person asked for a council review: it happens now, at this boundary.
  if (state.council.forceReview && state.iteration >= 1) {
    const ended = await councilRound(run, 'forced');
    if (ended) return end(ended);
    run.publish();
    return AGAIN;
  }

  // A claim whose check a message interrupted is judged before anything else happens.
  if (state.council.heldClaim) {
    const ended = await answerHeldClaim(run);
    if (ended) return end(ended);
    run.publish();
    return AGAIN;
  }

  // 2. Caps: consecutive failures, iteration count (one more once a pending claim was granted its grace), wall clock.
  graceAtTheCap(run);
  const cap = checkCaps(
    { iteration: state.iteration, consecutiveFailures: state.consecutiveFailures, startedAtMs: state.startedAtMs, nowMs: run.nowMs() },
    { ...knobs, maxIterations: iterationCap(knobs.maxIterations, state.iterationGrace !== undefined) },
  );
  if (cap.kind !== 'continue') return end(await finish(run, cap.kind, cap.reason));

  // 3. Long runs: a fresh history at an iteration boundary, carrying the whole state.
  if (run.iterationsThisExecution >= knobs.continueAsNewEvery || run.sdk.info().continueAsNewSuggested || run.rolloverNow) {
    await run.sdk.until(() => run.handlersDone());
    if (run.stopRequest || state.pause || run.rewindPending()) return AGAIN; // a message arrived meanwhile: honour it first
    return await rollOver(run);
  }

  // 4. A PRD checklist a provider's trouble kept from being extracted: asked again once the wait is over.
  const retry = state.gates.checklistRetry;
  if (retry && run.nowMs() >= retry.atMs) {
    await retryChecklist(run);
    run.publish();
    return AGAIN;
  }
  return GO;
}

/**
 * The one-time grace at the cap (rules/grace.ts). Keyed on the input's `loopRules`, absent in
 * runs started before it: their histories replay the old path, no patch.
 */
function graceAtTheCap(run: Run): void {
  const { state, knobs, input } = run;
  if (input.loopRules === undefined) return;
  const last = state.recentIterations.at(-1);
  const grace = graceAtCap({
    enabled: knobs.iterationGrace,
    used: state.iterationGrace !== undefined,
    iteration: state.iteration,
    maxIterations: knobs.maxIterations,
    last: last ? { iteration: last.iteration, claimed: last.claimed, exitCode: last.exitCode } : null,
    councilEnabled: knobs.councilEnabled,
    lastVerdictIteration: state.council.verdicts.at(-1)?.iteration ?? null,
    lastRefusalIteration: state.gates.lastRefusal?.iteration ?? null,
    failingGates: state.gates.latest.filter((g) => g.verdict === 'fail').map((g) => g.gate),
  });
  if (!grace.grant) return;
  state.iterationGrace = { at: state.iteration };
  state.lastFindings = state.lastFindings ? `${grace.findings}\n\n${state.lastFindings}` : grace.findings;
  run.sdk.log.info('one more iteration: a completion claim is pending at the iteration cap', { iteration: state.iteration });
}
