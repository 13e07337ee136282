/**
 * The council round of a completion check (or, without a council, the evidence gate alone): the
 * orchestration cap first, then the completion guard, the checklist verifier a round carries, the
 * votes and what they mean for the run.
 *
 * Workflow code: deterministic, no I/O.
 */
import { checkEvidence, describeRejection, evidenceRecord } from '../../rounds/council-round.js';
import { LIMITS, type Outcome } from '../../schemas/run.js';
import { addOrchestrationUsage, addUnpricedOrchestration, orchestrationCapped } from '../../rules/budget.js';
import { emptyDiffRefusal, recordCheck } from '../../rules/completion-check.js';
import { councilBreaches } from '../../rules/contract.js';
import type { ConveneTrigger } from '../../rules/convene.js';
import { describeBlock } from '../../rules/evidence.js';
import { councilEvent } from '../../rules/journal.js';
import { noteSandbox } from '../../rules/sandbox.js';
import {
  checkRefused,
  completionGuard,
  evidenceInput,
  filesSinceStart,
  holdClaim,
  judgeChecklist,
  keepContract,
  notesOf,
  refuse,
  refuseEmptyDiff,
  refuseFalseClaim,
} from './completion.js';
import { endDone } from './follow-pr.js';
import { notifyPeople } from './people.js';
import { applyVerification } from './prd-checklist.js';
import { type Run } from './run.js';

/** The completion check just judged the current tree: the early check counts what changes from here (decisions/lean-rounds.ts). */
function markCheck(run: Run): void {
  run.state.marks = { ...run.state.marks, round: run.markHere(run.state.convergence.lastHash ?? '') };
}

/**
 * The orchestration cap (knob `orchestrationBudgetShare`, off by default): a completion check that
 * would take orchestration's spend past its share of the budget pauses the run first (the claim is
 * held and judged after the resume). True when the run paused (or was already paused) for it.
 */
async function pauseAtOrchestrationCap(run: Run): Promise<boolean> {
  const { state, knobs, info } = run;
  const budget = state.budgetUsd ?? knobs.budgetUsd;
  const spent = state.spend.orchestration?.usd ?? 0;
  const cap = orchestrationCapped(spent, state.checks.total, budget, knobs.orchestrationBudgetShare);
  if (!cap.capped) return false;
  if (!state.pause) {
    const share = `${Math.round(knobs.orchestrationBudgetShare * 100)} % of the $${budget.toFixed(2)} budget`;
    const why =
      `orchestration cap: reviewers, checklist roles and council members spent $${spent.toFixed(2)} of the ` +
      `$${cap.capUsd.toFixed(2)} they may (${share}), and a completion check costs about $${cap.nextUsd.toFixed(2)}`;
    state.pause = {
      reason: `${why}; raise the budget with \`vigil budget ${info.workflowId} --usd N\` and resume, or stop the run`,
      by: 'vigil',
      at: run.nowIso(),
    };
    await notifyPeople(
      run,
      'budget_exceeded',
      'Orchestration cap reached',
      `The run is paused at iteration ${state.iteration} before its next completion check: ${why}.`,
      'critical',
      { orchestrationUsd: spent, capUsd: cap.capUsd, budgetUsd: budget, iteration: state.iteration },
      `${info.workflowId}:orchestration_cap:${budget}`,
    );
  }
  run.sdk.log.info('completion check held at the orchestration cap', { iteration: state.iteration, spent, cap: cap.capUsd });
  return true;
}

/** A council round; returns the outcome when the run must end, else null (findings set). */
export async function councilRound(run: Run, trigger: ConveneTrigger): Promise<Outcome | null> {
  const { state, knobs } = run;
  const { rounds } = run.acts;
  const empty = refuseEmptyDiff(run, trigger) ?? refuseFalseClaim(run, trigger);
  if (empty) return empty;
  if (trigger !== 'forced' && (await pauseAtOrchestrationCap(run))) return holdClaim(run, trigger);
  run.judging.takeChecklist(); // a verification carried by an earlier check is not this round's
  const guard = await completionGuard(run, { councilRound: true });
  if (guard === 'interrupted') return holdClaim(run, trigger);
  if (guard === 'refused') {
    markCheck(run);
    return checkRefused(run, trigger, run.judging.refusedBy.cause, run.judging.refusedBy.reason);
  }
  if (guard !== null) {
    // A gate stuck for good ends the run; a person's request is answered by it.
    if (trigger === 'forced') state.council.forceReview = null;
    return guard;
  }
  const round = state.council.rounds + 1;
  run.status = 'reviewing';
  run.publish();
  const carried = run.judging.takeChecklist();
  const roundInput = { ...(await evidenceInput(run, round)), trigger, at: run.nowIso() };
  const what = carried
    ? `evidence, the PRD checklist verifier, then ${knobs.councilSize} members`
    : `evidence, ${knobs.councilSize} members`;
  const r = await rounds.councilRound.executeWithOptions(
    { summary: `council round ${round} (iteration ${state.iteration}, ${trigger}): ${what}` },
    [{ ...roundInput, authorization: roundInput.authorization ?? null, ...(carried ? { checklist: carried } : {}) }],
  );
  for (const u of r.usages) state.spend = addOrchestrationUsage(state.spend, u);
  state.spend = addUnpricedOrchestration(state.spend, r.unpriced ?? 0);
  for (const c of r.sandbox ?? []) state.sandbox = noteSandbox(state.sandbox, c.report, { iteration: state.iteration, role: c.role });
  run.status = run.stopRequest ? 'stopping' : 'running';
  if (carried && r.checklist !== undefined) {
    // The verifier the round carried: judged as a verification of its own would have been, before any vote.
    const judged = await judgeChecklist(run, applyVerification(run, state.convergence.lastHash ?? '', r.checklist, false), true);
    if (judged === 'refused' || (judged === null && r.verdict === null)) {
      if (judged === null) refuse(run, ['checklist'], 'the requirements checklist is not met');
      markCheck(run);
      return checkRefused(run, trigger, run.judging.refusedBy.cause, run.judging.refusedBy.reason);
    }
    if (judged !== null) return judged;
  }
  if (r.verdict === null) return null;
  state.council.rounds = round;
  state.council.verdicts = [...state.council.verdicts, r.verdict].slice(-20);
  markCheck(run);
  run.recordEvent(councilEvent(r.verdict));
  state.lastEvidence = r.verdict.evidence;
  if (trigger === 'forced') state.council.forceReview = null;
  run.sdk.log.info('council round', {
    round,
    trigger,
    result: r.verdict.result,
    approve: r.verdict.approve,
    threshold: r.verdict.threshold,
  });
  const ended = await keepContract(run, councilBreaches(r.verdict));
  if (ended) return ended;
  if (r.approved) {
    const v = r.verdict;
    state.checks = recordCheck(state.checks, {
      iteration: state.iteration,
      trigger,
      approved: true,
      cause: null,
      reason: `council approved, ${v.approve} of ${v.size}`,
    });
    return endDone(
      run,
      'council_approved',
      `council approved at iteration ${state.iteration} (round ${round}, ${v.approve} of ${v.size}, threshold ` +
        `${v.threshold}${v.devilsAdvocate ? ", devil's advocate confirmed" : ''}): ${v.evidence.filesChanged} file(s) changed ` +
        `since run start`,
      notesOf(r.evidence.inconclusive),
    );
  }
  state.lastFindings = describeRejection(r.verdict).slice(0, LIMITS.findingChars * 4);
  const v = r.verdict;
  return checkRefused(
    run,
    trigger,
    'council',
    `${v.approve} of ${v.size} approve, ${v.threshold} needed${v.devilsAdvocate?.flipped ? "; the devil's advocate refused" : ''}`,
  );
}

/** Without a council, a claim completes the run when the evidence gate passes. */
export async function claimWithoutCouncil(run: Run): Promise<Outcome | null> {
  const { state } = run;
  if (emptyDiffRefusal(filesSinceStart(run)) !== null) {
    // The evidence gate refuses an empty diff before any gate or reviewer is asked.
    const empty = emptyDiffRefusal(filesSinceStart(run)) ?? '';
    state.lastFindings =
      `Completion was refused at iteration ${state.iteration} by the evidence gate: nothing changed since the run started ` +
      `(${empty}), so there is nothing to judge yet. Make the changes the PRD asks for, then claim again.`;
    state.checks = recordCheck(state.checks, {
      iteration: state.iteration,
      trigger: 'claim',
      approved: false,
      cause: 'evidence',
      reason: empty,
    });
    return null;
  }
  const falseClaim = refuseFalseClaim(run, 'claim');
  if (falseClaim) return falseClaim;
  const guard = await completionGuard(run);
  if (guard === 'interrupted') return holdClaim(run, 'claim');
  if (guard === 'refused')
    state.checks = recordCheck(state.checks, {
      iteration: state.iteration,
      trigger: 'claim',
      approved: false,
      cause: run.judging.refusedBy.cause,
      reason: run.judging.refusedBy.reason,
    });
  if (guard !== null) return typeof guard === 'string' ? null : guard;
  const round = state.council.rounds + 1;
  // The evidence gate alone, as workflow code (its activity: collectEvidence).
  const { facts, verdict } = await checkEvidence(run.acts, await evidenceInput(run, round));
  state.lastEvidence = evidenceRecord(state.iteration, verdict, facts, state.lastTests?.passed ?? null);
  if (verdict.pass) {
    return endDone(
      run,
      'completion_promise_fulfilled',
      `completion claim accepted at iteration ${state.iteration}: ${facts.filesChanged} file(s) changed since run ` +
        `start${state.lastTests ? ', tests green' : ''}`,
      notesOf(verdict.inconclusive),
    );
  }
  state.lastFindings = describeBlock(verdict, state.iteration);
  return null;
}

/** The held claim, judged now: by the council, or by the evidence gate alone when the council is off. */
export async function answerHeldClaim(run: Run): Promise<Outcome | null> {
  const { state, knobs } = run;
  const held = state.council.heldClaim;
  if (!held) return null;
  state.council.heldClaim = null;
  return knobs.councilEnabled ? councilRound(run, held.trigger) : claimWithoutCouncil(run);
}
