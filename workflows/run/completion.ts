/**
 * Completion, before the council: a claim (or a forced review, a tripped breaker, an early check)
 * is judged by the evidence gate, the quality gates, the acceptance tests (acceptance.ts), the
 * code review and the checklist (the
 * council itself is council.ts); a check a message interrupted is held for the next boundary;
 * a refusal goes through the safety valves.
 *
 * Workflow code: deterministic, no I/O.
 */
import { type EvidenceInput } from '../../rounds/council-round.js';
import type { GateResult } from '../../schemas/gates.js';
import { type CheckCause, type ContractBreach, LIMITS, type Outcome } from '../../schemas/run.js';
import { afterRefusal, emptyDiffRefusal, recordCheck } from '../../rules/completion-check.js';
import { contractFindings, describeBreach, reviewBreaches, verifierBreach } from '../../rules/contract.js';
import type { ConveneTrigger } from '../../rules/convene.js';
import { blockingFailures, checklistGateResult, describeGateRefusal, gateLabel, isToolGate, mergeLatest } from '../../rules/gates.js';
import { itemsToRecheck, reviewDue } from '../../rules/lean-rounds.js';
import { refusalMemory } from '../../rules/memory.js';
import { reviewSummaryForPrompt } from '../../rules/review.js';
import { describeFalseClaim } from '../../rules/claimed-files.js';
import { liftedForCouncil } from '../../rules/finding-waivers.js';
import { judgeAcceptance } from './acceptance.js';
import { finish } from './ending.js';
import { forkFromStuck, forksNow } from './fork.js';
import {
  actOnGateStreak,
  codeReview,
  ensureTests,
  qualityGates,
  roundBase,
  testEvidence,
  testLine,
  tellFirstFailure,
  trackGateResult,
} from './gates.js';
import { verifierCall, verifyChecklist } from './prd-checklist.js';
import { checklistStop } from '../../rules/checklist/state.js';
import { keepContract, refuse } from './refusals.js';
import { type Run } from './run.js';

export { keepContract, refuse } from './refusals.js';

/** What the evidence gate and a council round read: the round's base, the tests on the current tree, the convergence so far. */
export async function evidenceInput(run: Run, round: number): Promise<EvidenceInput> {
  const { state } = run;
  const t = await ensureTests(run, state.convergence.lastHash ?? '');
  const c = state.convergence;
  // A test change a person or the checklist lifted, shown to the council beside what lifted it.
  const lifted = liftedForCouncil(state.gates.latest, state.gates.checklist);
  return {
    ...roundBase(run, round),
    tests: testEvidence(t),
    testSummary: t ? testLine(run, t) : 'No test command is configured for this run, and no test runner was found.',
    leanPrompt: true,
    convergenceSummary:
      `No-change streak ${c.consecutiveNoChange}; done signals ${c.doneSignals} in a row, ${c.totalDoneSignals} in total; recent ` +
      `tree hashes: ${c.recentHashes.map((h) => h.slice(0, 8)).join(', ')}`,
    ...(lifted ? { liftedFindings: lifted } : {}),
  };
}

export function notesOf(inconclusive: readonly string[]): string[] {
  return inconclusive.map((r) => `completion not independently verified: ${r.replace(/_/g, ' ')}`);
}

/**
 * Before completion is judged (the council, or the evidence gate alone): the tool gates on this
 * tree, then the acceptance tests, then the code review, then the PRD checklist. 'refused' (findings say what blocked and
 * why) or 'interrupted' (a pause or stop came first) keep the run going; null lets the
 * judgement go on; an outcome ends the run (a stuck gate).
 */
export async function completionGuard(
  run: Run,
  opts: { councilRound?: boolean } = {},
): Promise<Outcome | 'refused' | 'interrupted' | null> {
  const { state, knobs } = run;
  const ended = await qualityGates(run, true, true);
  if (ended) return ended;
  if (run.interrupted()) return 'interrupted';
  const tree = state.convergence.lastHash ?? '';
  const failing = blockingFailures(
    state.gates.latest.filter((r) => isToolGate(r.gate)),
    knobs,
    tree,
  );
  if (failing.length > 0) {
    state.lastFindings = describeGateRefusal(failing, state.iteration).slice(0, LIMITS.findingChars * 4);
    return refuse(
      run,
      failing.map((f) => f.gate),
      failing.map((f) => `${gateLabel(f.gate)}: ${f.reason}`).join('; '),
    );
  }
  // The acceptance tests (knob acceptanceTests), before anything that costs a reviewer.
  const unaccepted = await judgeAcceptance(run, tree);
  if (unaccepted !== null) return refuse(run, [], unaccepted, 'acceptance');
  if (run.interrupted()) return 'interrupted';
  if (knobs.codeReview) {
    const judged = await judgeReview(run, tree);
    if (judged !== null) return judged;
    if (run.interrupted()) return 'interrupted';
  }
  if (knobs.prdChecklist && state.gates.checklist) {
    // A tree whose checklist was verified is not verified again (waivers are read anew).
    let known = state.gates.latest.find((g) => g.gate === 'checklist' && g.treeHash === tree && g.iteration > 0);
    // A verification whose answer broke the agent contract judged nothing: asked again, so each check counts.
    if (known && verifierBreach(run.judging.lastVerifierAnswer, state.iteration, '') !== null) known = undefined;
    // Only the items whose files changed since the last verification are asked again.
    const recheck = !known ? itemsToRecheck(state.gates.checklist, state.marks.checklist, tree) : null;
    if (recheck && recheck.ids.length === 0) {
      run.sdk.log.info('checklist not verified again', { iteration: state.iteration, why: recheck.why });
      known = checklistGateResult(state.gates.checklist, tree, state.iteration);
      state.gates.latest = mergeLatest(state.gates.latest, [known]);
    }
    if (!known && opts.councilRound && state.gates.checklist) {
      // The council round carries the verifier (first, and in the members' batched call where it can):
      // only when nothing the verifier is not asked about blocks already.
      const call = verifierCall(run, recheck?.ids);
      const stop = checklistStop(state.gates.checklist, call.checklistIds);
      if (!stop.blockedAnyway) {
        run.judging.carryChecklist({ call, mustPass: stop.mustPass, mustNotFail: stop.mustNotFail });
        return null;
      }
    }
    const r =
      known && state.gates.checklist
        ? checklistGateResult(state.gates.checklist, tree, known.iteration)
        : await verifyChecklist(run, tree, recheck?.ids);
    return judgeChecklist(run, r, !known);
  }
  return null;
}

/**
 * The checklist's part of a completion check, once its gate result is known: a verification just
 * made (`fresh`) is held to the agent contract and counted on the gate's streak; a result that
 * does not pass refuses the claim. Null lets the check go on.
 */
export async function judgeChecklist(run: Run, r: GateResult | null, fresh: boolean): Promise<Outcome | 'refused' | null> {
  const { state } = run;
  if (fresh) {
    const breach = verifierBreach(run.judging.lastVerifierAnswer, state.iteration, run.judging.lastVerifierAnswer?.logPath ?? '');
    const ended = await keepContract(run, breach ? [breach] : []);
    if (ended) return ended;
    if (breach) {
      state.lastFindings = contractFindings(breach, state.iteration);
      return refuse(run, ['checklist'], `contract error: ${describeBreach(breach)}`, 'contract');
    }
  }
  if (r && fresh) {
    const before = state.gates.tracks[r.gate];
    const streak = trackGateResult(run, r);
    const ended3 = streak ? await actOnGateStreak(run, r, streak) : null;
    if (ended3) return ended3;
    await tellFirstFailure(run, before, r);
  }
  if (r && r.verdict !== 'pass') {
    state.lastFindings = (
      `Completion at iteration ${state.iteration} was refused before the council was asked: the requirements checklist is not ` +
      `met.\n${r.findings.map((f) => `- ${f.message}`).join('\n')}`
    ).slice(0, LIMITS.findingChars * 4);
    return refuse(run, ['checklist'], r.reason);
  }
  return null;
}

/**
 * The code review's part of a completion check: a passing review stands only for its own tree or
 * one whose changes since touch no product code; product code changed since is reviewed as a
 * delta (the diff from the reviewed tree), and a review whose answers broke the agent contract is
 * asked again, so every check counts on the contract's streak (decisions/lean-rounds.ts `reviewDue`). Answers without a verdict line are a contract error,
 * never a failing review. Null lets the check go on.
 */
export async function judgeReview(run: Run, tree: string): Promise<Outcome | 'refused' | null> {
  const { state } = run;
  const last = state.gates.reviews.at(-1);
  const due = reviewDue(last, state.marks.review, tree, last ? last.result === 'inconclusive' && reviewBreaches(last).length > 0 : false);
  if (last && (due.kind !== 'full' || last.treeHash !== tree))
    run.sdk.log.info('code review due', { iteration: state.iteration, due: due.kind, why: due.why });
  const reused = due.kind === 'stands' && last ? last : null;
  const since = due.kind === 'delta' && last ? { tree: last.treeHash, round: last.round, iteration: last.iteration } : undefined;
  const review = reused ?? (await codeReview(run, tree, since));
  const breaches = reviewBreaches(review);
  const contractOnly = review.result === 'inconclusive' && breaches.length > 0;
  if (!reused) {
    const ended = await keepContract(run, breaches);
    if (ended) return ended;
    if (contractOnly) {
      // Not a verdict on the work: the gate's streak and the builder's findings stay out of it.
      const asGate = state.gates.latest.find((g) => g.gate === 'code_review');
      if (asGate)
        state.gates.latest = mergeLatest(state.gates.latest, [
          {
            ...asGate,
            verdict: 'inconclusive',
            reason: `contract error: ${breaches.length} reviewer answer(s) without a VERDICT line`.slice(0, 500),
            findings: [],
            findingCount: 0,
          },
        ]);
    } else {
      const reviewed = state.gates.latest.find((g) => g.gate === 'code_review') as GateResult;
      const before = state.gates.tracks[reviewed.gate];
      const streak = trackGateResult(run, reviewed);
      const ended2 = streak ? await actOnGateStreak(run, reviewed, streak) : null;
      if (ended2) return ended2;
      await tellFirstFailure(run, before, reviewed);
    }
  }
  if (review.result === 'pass') return null;
  if (contractOnly) {
    const first = breaches[0] as ContractBreach;
    state.lastFindings = contractFindings(first, state.iteration);
    return refuse(run, ['code_review'], `contract error: ${describeBreach(first)}`, 'contract');
  }
  const what = review.since ? `the code review of what changed since review round ${review.since.round}` : 'the code review';
  state.lastFindings = (
    `Completion at iteration ${state.iteration} was refused before the council was asked: ${what} did not ` +
    `pass.\n${reviewSummaryForPrompt(review, LIMITS.findingChars * 3)}`
  ).slice(0, LIMITS.findingChars * 4);
  return refuse(
    run,
    ['code_review'],
    `code review ${review.result}${review.since ? ` (delta since round ${review.since.round})` : ''}: ${review.reason}`,
  );
}

/**
 * A pause, stop, rollover or rewind came while a claim was checked: the claim is held (a forced
 * review stays requested) and judged at the next boundary, after the message is honoured.
 */
export function holdClaim(run: Run, trigger: ConveneTrigger): null {
  const { state } = run;
  if (trigger !== 'forced') state.council.heldClaim = { trigger, iteration: state.iteration };
  run.sdk.log.info('completion check interrupted; the claim is held for the next boundary', { iteration: state.iteration, trigger });
  return null;
}

/** Files that differ from the run start, as the last inspection saw them. */
export function filesSinceStart(run: Run): number {
  const { state } = run;
  return state.recentIterations.at(-1)?.filesChangedSinceStart ?? 0;
}

/**
 * A completion check that did not approve: recorded, then the safety
 * valves, whatever refused it. The outcome when a valve stops the run, else null.
 */
export async function checkRefused(run: Run, trigger: ConveneTrigger, cause: CheckCause, reason: string): Promise<Outcome | null> {
  const { state, knobs } = run;
  if (trigger === 'forced') state.council.forceReview = null;
  const after = afterRefusal(state.convergence, { iteration: state.iteration, trigger, cause, reason }, knobs);
  state.checks = recordCheck(state.checks, after.check);
  run.sdk.log.info('completion check refused', { iteration: state.iteration, trigger, cause });
  if (!after.end) return null;
  // onStuck=fork: attempts from the last good checkpoint instead (workflows/run/fork.ts); keyed on that knob, which older runs
  // lack (their knobs parse to `stop`), so their histories replay down this same path unchanged: no patch.
  if (forksNow(run)) return forkFromStuck(run, after.reason);
  return finish(run, 'force_stopped', after.reason);
}

/** The evidence gate's refusal of a tree that differs in nothing from the run start, before anything is spent on it. */
export function refuseEmptyDiff(run: Run, trigger: ConveneTrigger): Promise<Outcome | null> | null {
  const { state } = run;
  const empty = emptyDiffRefusal(filesSinceStart(run));
  if (empty === null) return null;
  state.lastFindings =
    `Completion was refused at iteration ${state.iteration} by the evidence gate: nothing changed since the run started ` +
    `(${empty}), so there is nothing to judge yet. Make the changes the PRD asks for, then claim again.`;
  state.lastEvidence = {
    iteration: state.iteration,
    pass: false,
    reason: empty,
    failures: [empty],
    inconclusive: [],
    filesChanged: 0,
    testsPassed: state.lastTests?.passed ?? null,
  };
  run.remember(refusalMemory(state.iteration, `evidence gate: ${empty}`));
  return checkRefused(run, trigger, 'evidence', empty);
}

/**
 * The evidence gate's refusal of a claim that names files the diff since the run's start does not
 * hold ("claimed changes to X not in the diff"), before anything is spent on it
 * (decisions/claimed-files.ts says which words count as a claim).
 */
export function refuseFalseClaim(run: Run, trigger: ConveneTrigger): Promise<Outcome | null> | null {
  const { state } = run;
  const claim = run.judging.falseClaim;
  // Any check of the iteration that made the claim (a person's `vigil review` is the person's to judge).
  if (trigger === 'forced' || !claim || claim.iteration !== state.iteration) return null;
  const why = describeFalseClaim(claim.paths);
  state.lastFindings =
    `Completion was refused at iteration ${state.iteration} by the evidence gate: your claim ${why}. Claim only what the diff ` +
    `shows: change those files, or say what you really changed.`;
  state.lastEvidence = {
    iteration: state.iteration,
    pass: false,
    reason: why,
    failures: [why],
    inconclusive: [],
    filesChanged: filesSinceStart(run),
    testsPassed: state.lastTests?.passed ?? null,
  };
  run.remember(refusalMemory(state.iteration, `evidence gate: ${why}`));
  run.sdk.log.info('completion claim names files outside the diff', { iteration: state.iteration, paths: claim.paths.join(', ') });
  return checkRefused(run, trigger, 'evidence', why);
}
