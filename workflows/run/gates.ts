/**
 * The quality gates (gates era): the tests on a tree, the tool gates and their failure ladder,
 * the code review, the PRD checklist (extracted once, verified on a tree).
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure, CancellationScope, log } from '@temporalio/workflow';
import { runReviewRound } from '../../rounds/review-round.js';
import type { AgentResult, RunAgentInput, RunGatesResult } from '../../schemas/activities.js';
import { type GateResult, MAX_CHECKLIST_ITEMS, type ReviewRecord } from '../../schemas/gates.js';
import type { Outcome, TestRunRecord } from '../../schemas/run.js';
import { chooseAgent } from '../decisions/agent-choice.js';
import { addOrchestrationUsage } from '../decisions/budget.js';
import { afterChecklistFailure, CHECKLIST_ATTEMPTS, type ChecklistRetry, checklistExtractionPrompt, checklistVerifierPrompt, selectHeldOut } from '../decisions/checklist.js';
import { checklistGateResult, gateLabel, gateLine, gatesDue, mergeLatest, reviewGateResult, stuckReason, trackGate } from '../decisions/gates.js';
import { gateEvent, reviewEvent } from '../decisions/journal.js';
import { providerOutcome } from '../decisions/provider-outcome.js';
import { noteSandbox, sandboxArgs } from '../decisions/sandbox.js';
import { runGatesPass, testRecord } from '../lean-iteration.js';
import { runToolGates } from '../quality-gates.js';
import { finish } from './ending.js';
import { escalateToPerson, notifyPeople } from './people.js';
import { type GateStreak, nowIso, nowMs, type Run } from './run.js';

/** The test command's verdict on `treeHash`, re-run only when the tree changed. */
export async function ensureTests(run: Run, treeHash: string): Promise<TestRunRecord | null> {
  const { state, knobs, input, info } = run;
  const { tests } = run.acts;
  if (!knobs.testCommand && !run.detectTests) return null;
  if (state.lastTests?.treeHash === treeHash) return state.lastTests.runner === 'none' ? null : state.lastTests;
  const t = await tests.runTests.executeWithOptions({ summary: `tests on the tree of iteration ${state.iteration}` }, [
    { runId: info.workflowId, repoPath: input.repoPath, command: knobs.testCommand, detect: run.detectTests, iteration: state.iteration, timeoutSeconds: knobs.testTimeoutSeconds, authorization: input.authorization ?? null, ...sandboxArgs(knobs) },
  ]);
  state.lastTests = testRecord(t, treeHash, state.iteration);
  state.sandbox = noteSandbox(state.sandbox, t.sandbox, { iteration: state.iteration, role: 'tests' });
  return t.runner === 'none' ? null : state.lastTests;
}

/** What the evidence gate and the council read of the tests: an inconclusive run verifies nothing. */
export function testEvidence(t: TestRunRecord | null): { passed: boolean; timedOut: boolean; logPath: string } | null {
  return t && t.verdict !== 'inconclusive' ? { passed: t.passed, timedOut: t.timedOut, logPath: t.logPath } : null;
}

export function testLine(run: Run, t: TestRunRecord): string {
  const { knobs } = run;
  const what = knobs.testCommand ? `\`${knobs.testCommand}\`` : `the detected ${t.runner ?? 'test'} runner`;
  const verdict = t.verdict === 'inconclusive' ? `INCONCLUSIVE (${t.reason})` : t.passed ? 'PASSED' : t.timedOut ? 'TIMED OUT' : `FAILED (exit ${t.exitCode})`;
  return `${what} on the current tree (iteration ${t.iteration}): ${verdict}; log: ${t.logPath}`;
}

/** What a council round and a code review both start from. */
export function roundBase(run: Run, round: number) {
  const { state, knobs, input, info } = run;
  return {
    runId: info.workflowId,
    repoPath: input.repoPath,
    prdPath: input.prdPath,
    round,
    iteration: state.iteration,
    knobs,
    authorization: input.authorization ?? null,
    runStart: state.runStart,
  };
}

/**
 * A gate result against its failure ladder: its track moves on at once; what the streak asks
 * for (the stuck-gate abort, or the pause and the escalation once per streak) is left to
 * `actOnGateStreak`, null when nothing. Not async: the SDK records a stack trace for every
 * promise a workflow creates (for the UI's stack trace), ~0.2 ms apiece here, and a pass of
 * every gate in every iteration asks for nothing.
 */
export function trackGateResult(run: Run, r: GateResult): GateStreak | null {
  const { state, knobs } = run;
  const t = trackGate(state.gates.tracks[r.gate], r, knobs);
  state.gates.tracks = { ...state.gates.tracks, [r.gate]: t.track };
  if (t.action === 'stuck' || t.action === 'escalate' || (t.action === 'pause' && !state.pause)) return { action: t.action, track: t.track };
  return null;
}

/** What a gate's failure streak asks for; the outcome when the run must end. */
export async function actOnGateStreak(run: Run, r: GateResult, streak: GateStreak): Promise<Outcome | null> {
  const { state, knobs, info } = run;
  const n = streak.track.consecutiveFailures;
  if (streak.action === 'stuck') return finish(run, 'gate_stuck', stuckReason(r.gate, streak.track));
  if (streak.action === 'pause' && run.holdGatePause) {
    run.heldGatePause = { r, streak };
    return null;
  }
  if (streak.action === 'pause') {
    state.pause = { reason: `the ${gateLabel(r.gate)} gate failed ${n} times in a row (${r.reason}); look at it, then \`vigil resume ${info.workflowId}\` or stop the run`.slice(0, 2000), by: 'vigil', at: nowIso() };
    await notifyPeople(run, 'escalation', `Quality gate ${gateLabel(r.gate)} keeps failing: the run is paused`, state.pause.reason, 'critical', { gate: r.gate, failures: n, iteration: state.iteration }, `${info.workflowId}:gate_pause:${r.gate}:${state.iteration}`);
  } else {
    await escalateToPerson(run, 'gate_failing', `the ${gateLabel(r.gate)} gate failed ${n} times in a row`, [gateLine(r), `${n} consecutive failures; the run pauses at ${knobs.gatePauseAfter}`], [], false, null);
  }
  return null;
}

/** Whether the tool gates are due on the current tree. */
export function gatesDueNow(run: Run, judging: boolean, iterationSucceeded: boolean): boolean {
  const { state, knobs } = run;
  const { gatesEra } = run.eras;
  return gatesEra && gatesDue({ judging, iterationSucceeded, treeHash: state.convergence.lastHash ?? '', lastTree: state.gates.lastTree }, knobs);
}

/** The tool gates on the current tree, when due; their results join the latest per gate. */
export async function qualityGates(run: Run, judging: boolean, iterationSucceeded: boolean, carried: RunGatesResult | null = null): Promise<Outcome | null> {
  const { state, knobs, input, info } = run;
  const { leanEra } = run.eras;
  const { gateActs } = run.acts;
  const tree = state.convergence.lastHash ?? '';
  if (!gatesDueNow(run, judging, iterationSucceeded)) return null;
  run.status = 'gating';
  run.publish();
  const out = leanEra
    ? await leanGates(run, tree, carried)
    : await runToolGates(gateActs, {
        runId: info.workflowId,
        repoPath: input.repoPath,
        iteration: state.iteration,
        knobs,
        treeHash: tree,
        runStartTree: state.runStart?.treeHash ?? null,
        tracks: state.gates.tracks,
        runTests: () => ensureTests(run, tree),
        interrupted: () => run.interrupted(),
      });
  run.status = run.stopRequest ? 'stopping' : 'running';
  state.gates.latest = mergeLatest(state.gates.latest, out.results);
  if (!out.interrupted) state.gates.lastTree = tree;
  log.info('quality gates', { iteration: state.iteration, results: out.results.map((r) => `${r.gate}:${r.verdict}`).join(' ') });
  for (const r of out.results) run.recordEvent(gateEvent(r));
  for (const r of out.results) {
    const streak = trackGateResult(run, r);
    const ended = streak ? await actOnGateStreak(run, r, streak) : null;
    if (ended) return ended;
  }
  run.publish();
  return null;
}

/** What a gate pass needs to know of the run now (the tree aside). */
export function gatesPassFacts(run: Run) {
  const { state, knobs, input, info } = run;
  const { leanPromptEra } = run.eras;
  return {
    runId: info.workflowId,
    repoPath: input.repoPath,
    iteration: state.iteration,
    knobs,
    runStartTree: state.runStart?.treeHash ?? null,
    tracks: state.gates.tracks,
    knownTests: state.lastTests,
    testsInput: knobs.testCommand || run.detectTests ? { runId: info.workflowId, repoPath: input.repoPath, command: knobs.testCommand, detect: run.detectTests, iteration: state.iteration, timeoutSeconds: knobs.testTimeoutSeconds, authorization: input.authorization ?? null, ...sandboxArgs(knobs) } : null,
    ...(leanPromptEra ? { compact: true } : {}),
  };
}

/** The tool gates of a lean run: one activity per pass, the test run remembered for the tree. */
export async function leanGates(run: Run, tree: string, carried: RunGatesResult | null): Promise<{ results: GateResult[]; interrupted: boolean }> {
  const { state } = run;
  const { gateActs } = run.acts;
  const out = await runGatesPass(gateActs, {
    ...gatesPassFacts(run),
    treeHash: tree,
    carried,
    run: async (call) => {
      const scope = new CancellationScope();
      run.gatesScope = scope;
      try {
        return await scope.run(call);
      } finally {
        run.gatesScope = null;
      }
    },
    interrupted: () => run.interrupted(),
  });
  if (out.tests) state.lastTests = out.tests;
  state.sandbox = noteSandbox(state.sandbox, out.sandbox?.tests, { iteration: state.iteration, role: 'tests' });
  state.sandbox = noteSandbox(state.sandbox, out.sandbox?.gates, { iteration: state.iteration, role: 'gates' });
  return out;
}

/** The code review of the current tree (a passing review of the same tree is not repeated). */
export async function codeReview(run: Run, tree: string): Promise<ReviewRecord> {
  const { state } = run;
  const { leanPromptEra, roundsEra } = run.eras;
  const { repo, members, rounds } = run.acts;
  const last = state.gates.reviews.at(-1);
  if (last && last.treeHash === tree && last.result === 'pass') return last;
  const round = state.gates.reviewRounds + 1;
  run.status = 'gating';
  run.publish();
  const t = state.lastTests?.treeHash === tree ? state.lastTests : null;
  const reviewInput = {
    ...roundBase(run, round),
    testSummary: t ? testLine(run, t) : 'No test results for this tree.',
    at: nowIso(),
    ...(leanPromptEra ? { leanPrompt: true } : {}),
  };
  const r = roundsEra
    ? await rounds.reviewRound.executeWithOptions({ summary: `code review ${round} (iteration ${state.iteration})` }, [reviewInput])
    : await runReviewRound({ repo, members: { runAgent: members.runAgent } }, reviewInput); // no `batch` in workflow code (see Run.councilDeps)
  run.status = run.stopRequest ? 'stopping' : 'running';
  for (const u of r.usages) state.spend = addOrchestrationUsage(state.spend, u);
  for (const c of r.sandbox ?? []) state.sandbox = noteSandbox(state.sandbox, c.report, { iteration: state.iteration, role: c.role });
  if (run.eras.leanRoundsEra) state.marks = { ...state.marks, review: r.record.result === 'pass' ? run.markHere(tree) : null };
  state.gates.reviewRounds = round;
  state.gates.reviews = [...state.gates.reviews, r.record].slice(-5);
  run.recordEvent(reviewEvent(r.record));
  const asGate = reviewGateResult(r.record);
  state.gates.latest = mergeLatest(state.gates.latest, [asGate]);
  log.info('code review', { round, result: r.record.result, reviewers: r.record.reviewers.length });
  return r.record;
}

/**
 * Asks the verifier about the checklist items (held-out ones included) on the current tree: all of
 * them, or only `only` (lean rounds: the others keep what the last verification found).
 */
export async function verifyChecklist(run: Run, tree: string, only?: readonly string[]): Promise<GateResult | null> {
  const { state } = run;
  const { members } = run.acts;
  const cl = state.gates.checklist;
  if (!cl) return null;
  const call = verifierCall(run, only);
  run.status = 'gating';
  run.publish();
  let answer: AgentResult | null = null;
  try {
    answer = await members.runAgent.executeWithOptions(
      { summary: `verify the PRD checklist (iteration ${state.iteration}${call.checklistIds.length < cl.items.length ? `, ${call.checklistIds.length} of ${cl.items.length} items whose files changed` : ''})` },
      [call],
    );
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
  }
  run.status = run.stopRequest ? 'stopping' : 'running';
  return applyVerification(run, tree, answer, true);
}

/** The checklist verifier's call on the current tree: every item, or only `only`. */
export function verifierCall(run: Run, only?: readonly string[]): RunAgentInput & { checklistIds: string[] } {
  const { state, knobs, input, info } = run;
  const items = state.gates.checklist?.items ?? [];
  const asked = only ? items.filter((i) => only.includes(i.id)) : items;
  return {
    runId: info.workflowId,
    repoPath: input.repoPath,
    ...chooseAgent(knobs, 'checklist-verifier', knobs.tier),
    authorization: input.authorization ?? null,
    prompt: checklistVerifierPrompt({ items: asked, prdPath: input.prdPath, diffPath: null, testSummary: state.lastTests ? testLine(run, state.lastTests) : 'No test results.' }),
    role: 'checklist-verifier',
    iteration: state.iteration,
    phase: 'VERIFY',
    tier: knobs.tier,
    timeoutSeconds: knobs.councilMemberTimeoutSeconds,
    completionPromise: '',
    parse: 'verification',
    checklistIds: asked.map((i) => i.id),
    rateLimitRpm: knobs.rateLimitRpm,
    ...sandboxArgs(knobs),
  };
}

/**
 * The verifier's answer (null: its call was lost) on the checklist's state: each item it answered
 * takes its status, the gate's result is recorded. `own`: the answer came from a call of its own,
 * whose cost and sandbox are counted here (a council round that carried the verifier counts them
 * with the round's).
 */
export function applyVerification(run: Run, tree: string, answer: AgentResult | null, own: boolean): GateResult | null {
  const { state } = run;
  const cl = state.gates.checklist;
  if (!cl) return null;
  run.lastVerifierAnswer = answer ? { exitCode: answer.exitCode, timedOut: answer.timedOut, answered: Object.keys(answer.verification ?? {}).length, logPath: answer.logPath } : null;
  if (own && answer?.usage) state.spend = addOrchestrationUsage(state.spend, answer.usage);
  if (own) state.sandbox = noteSandbox(state.sandbox, answer?.sandbox, { iteration: state.iteration, role: 'checklist-verifier' });
  const statuses = { ...cl.status };
  for (const [id, v] of Object.entries(answer?.verification ?? {})) statuses[id] = { status: v.status, evidence: v.evidence, iteration: state.iteration };
  state.gates.checklist = { ...cl, status: statuses };
  if (run.eras.leanRoundsEra) state.marks = { ...state.marks, checklist: answer ? run.markHere(tree) : null };
  const result = checklistGateResult(state.gates.checklist, tree, state.iteration);
  state.gates.latest = mergeLatest(state.gates.latest, [result]);
  run.recordEvent(gateEvent(result));
  return result;
}

/**
 * At run start, once: the PRD checklist from the person's file or extracted by an agent; held-out
 * items chosen. An extraction a provider's trouble spoiled is asked again at a later boundary
 * (`retryChecklist`): what comes next is returned (null when there is nothing to decide).
 */
export async function ensureChecklist(run: Run): Promise<ChecklistRetry | null> {
  const { state, knobs, input, info } = run;
  const { gatesEra } = run.eras;
  const { members } = run.acts;
  if (!gatesEra || !knobs.prdChecklist || state.gates.checklistTried) return null;
  state.gates.checklistTried = true;
  let items = input.checklist ?? null;
  const source = items ? 'file' : 'agent';
  let providerReason: string | null = null;
  let rateLimitWait: number | null = null;
  if (!items) {
    let r: AgentResult | null = null;
    try {
      r = await members.runAgent.executeWithOptions({ summary: 'extract the PRD checklist' }, [
        {
          runId: info.workflowId,
          repoPath: input.repoPath,
          ...chooseAgent(knobs, 'checklist', knobs.tier),
          authorization: input.authorization ?? null,
          prompt: checklistExtractionPrompt({ prdPath: input.prdPath, maxItems: MAX_CHECKLIST_ITEMS }),
          role: 'checklist',
          iteration: 1,
          phase: 'REASON',
          tier: knobs.tier,
          timeoutSeconds: knobs.councilMemberTimeoutSeconds,
          completionPromise: '',
          parse: 'checklist',
          rateLimitRpm: knobs.rateLimitRpm,
          ...sandboxArgs(knobs),
        },
      ]);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      providerReason = `the call failed: ${(err.cause?.message ?? err.message).slice(0, 200)}`;
      state.gates.checklistProblem = `the checklist could not be extracted: ${(err.cause?.message ?? err.message).slice(0, 300)}`;
    }
    if (r?.usage) state.spend = addOrchestrationUsage(state.spend, r.usage);
    state.sandbox = noteSandbox(state.sandbox, r?.sandbox, { iteration: state.iteration, role: 'checklist' });
    if (r?.checklist?.ok) items = r.checklist.items;
    else if (r) {
      state.gates.checklistProblem = `the checklist could not be extracted: ${r.checklist?.error ?? 'no answer'}`.slice(0, 500);
      const health = providerOutcome({ exitCode: r.exitCode, timedOut: r.timedOut, rateLimited: r.rateLimit !== null, authError: r.authError !== null, tail: r.tail, modelOutput: r.modelOutput });
      providerReason = health.outcome === 'failure' ? health.reason : null;
      rateLimitWait = r.rateLimit?.waitSeconds ?? null;
    }
  }
  if (!items || items.length === 0) {
    const attempt = (state.gates.checklistRetry?.attempt ?? 0) + 1;
    const next = afterChecklistFailure({ attempt, providerReason, rateLimitWaitSeconds: rateLimitWait, baseWaitSeconds: knobs.baseWaitSeconds });
    state.gates.checklistRetry = next.kind === 'retry' ? { attempt, atMs: nowMs() + next.waitSeconds * 1000, reason: next.reason.slice(0, 300) } : null;
    if (next.kind === 'retry') state.gates.checklistProblem = `${state.gates.checklistProblem ?? 'the checklist could not be extracted'} (${next.reason}; asked again in ${next.waitSeconds} s, attempt ${attempt} of ${CHECKLIST_ATTEMPTS})`.slice(0, 500);
    if (next.kind === 'give_up') state.gates.checklistProblem = `${state.gates.checklistProblem ?? 'the checklist could not be extracted'} (${next.reason}; gave up after ${attempt} attempts)`.slice(0, 500);
    log.warn('no PRD checklist for this run', { problem: state.gates.checklistProblem });
    return next;
  }
  state.gates.checklist = { items, heldOut: knobs.checklistHeldOut ? selectHeldOut(items) : [], source, status: {}, waivers: [] };
  state.gates.checklistRetry = null;
  state.gates.checklistProblem = null;
  log.info('PRD checklist ready', { items: items.length, source });
  return null;
}

/**
 * The extraction asked again, once the wait a provider's trouble called for is over (checklist-retry
 * era). When the provider kept failing, the run does not go on silently without its checklist:
 * supervised, it pauses and asks; perpetual, it goes on and says so.
 */
export async function retryChecklist(run: Run): Promise<void> {
  const { state, knobs, info } = run;
  state.gates.checklistTried = false;
  const next = await ensureChecklist(run);
  if (next?.kind !== 'give_up') return;
  const why = `No PRD checklist for this run: its extraction failed ${next.attempts} times for a provider reason (${next.reason}), so the checklist gate and the held-out items are off.`;
  const asks = knobs.autonomyMode === 'supervised';
  if (asks && !state.pause) state.pause = { reason: `${why} Resume to go on without a checklist, or stop and start again with --checklist FILE.`.slice(0, 2000), by: 'vigil', at: nowIso() };
  await notifyPeople(run, 'escalation', asks ? 'No PRD checklist: the run is paused' : 'No PRD checklist: the run goes on without one', why, asks ? 'critical' : 'warning', { attempts: next.attempts, reason: next.reason, iteration: state.iteration }, `${info.workflowId}:checklist:${next.attempts}`);
}
