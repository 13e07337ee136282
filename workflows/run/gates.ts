/**
 * The quality gates: the tests on a tree, the tool gates (one pass per activity, or the pass the
 * agent call carried) and their failure ladder, and the code review (the PRD checklist is
 * prd-checklist.ts).
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES, type RunGatesResult, type TestResult } from '../../schemas/activities.js';
import { type GateResult, type GateTrack, type ReviewRecord } from '../../schemas/gates.js';
import type { Outcome, TestRunRecord } from '../../schemas/run.js';
import { addOrchestrationUsage, addUnpricedOrchestration } from '../../rules/budget.js';
import { freshTrack, gateLabel, gateLine, gatesDue, mergeLatest, reviewGateResult, stuckReason, trackGate } from '../../rules/gates.js';
import { gateEvent, reviewEvent } from '../../rules/journal.js';
import { noteSandbox, sandboxArgs } from '../../rules/sandbox.js';
import { liftLatest } from '../../rules/finding-waivers.js';
import { runGatesPass, testRecord } from '../gates-pass.js';
import { finish } from './ending.js';
import { escalateToPerson, notifyPeople, tellPeople } from './people.js';
import { gateFailedNotice } from '../../rules/notify-triggers.js';
import { type GateStreak, type Run } from './run.js';
import { markAffectedTests } from './eras.js';

/** The test command's verdict on `treeHash`, re-run only when the tree changed. */
export async function ensureTests(run: Run, treeHash: string): Promise<TestRunRecord | null> {
  const { state, knobs } = run;
  if (!knobs.testCommand && !run.detectTests) return null;
  // A partial run (affected tests) on the tree is never a completion check's evidence: the full suite runs.
  if (state.lastTests?.treeHash === treeHash && !state.lastTests.selected)
    return state.lastTests.runner === 'none' ? null : state.lastTests;
  const t = await runTestsOn(run, treeHash, `tests on the tree of iteration ${state.iteration}`, false);
  return t.runner === 'none' ? null : state.lastTests;
}

/**
 * Once, before the first iteration: the tests on the tree the run started with. The activity keeps
 * their per-test report as the baseline every later run is held to (a test deleted, skipped or
 * never reached afterwards is red); the state keeps its counts, and the builder's first prompt the
 * failures.
 */
export async function recordTestBaseline(run: Run): Promise<void> {
  const { state, knobs } = run;
  if (state.testBaseline || !state.runStart || state.iteration > 0) return;
  if (!knobs.testCommand && !run.detectTests) return;
  const tree = state.runStart.treeHash;
  try {
    const t = await runTestsOn(run, tree, 'tests on the tree the run started with (the baseline)', true);
    state.testBaseline = { treeHash: tree, runner: t.runner, total: t.report?.total ?? null, passed: t.report?.passed ?? null };
  } catch (err) {
    // A worker that does not run this run (unsigned, another installation's) refuses the test run
    // as it refuses the agent: no baseline, and the first agent call ends the run with the reason.
    if (!(err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FAILURE_TYPES.agentNotRunnable))
      throw err;
    state.testBaseline = { treeHash: tree, runner: null, total: null, passed: null };
  }
}

async function runTestsOn(run: Run, treeHash: string, summary: string, recordBaseline: boolean): Promise<TestResult> {
  const { state, knobs, input, info } = run;
  const t = await run.acts.tests.runTests.executeWithOptions({ summary }, [
    {
      runId: info.workflowId,
      repoPath: input.repoPath,
      command: knobs.testCommand,
      detect: run.detectTests,
      iteration: state.iteration,
      timeoutSeconds: knobs.testTimeoutSeconds,
      authorization: input.authorization ?? null,
      ...(recordBaseline ? { recordBaseline } : {}),
      ...sandboxArgs(knobs),
    },
  ]);
  state.lastTests = testRecord(t, treeHash, state.iteration);
  state.sandbox = noteSandbox(state.sandbox, t.sandbox, { iteration: state.iteration, role: 'tests' });
  return t;
}

/** What the evidence gate and the council read of the tests: an inconclusive run verifies nothing, nor does a partial one (`ensureTests` never gives one). */
export function testEvidence(t: TestRunRecord | null): { passed: boolean; timedOut: boolean; logPath: string } | null {
  return t && t.verdict !== 'inconclusive' && !t.selected ? { passed: t.passed, timedOut: t.timedOut, logPath: t.logPath } : null;
}

export function testLine(run: Run, t: TestRunRecord): string {
  const { knobs } = run;
  const what = knobs.testCommand ? `\`${knobs.testCommand}\`` : `the detected ${t.runner ?? 'test'} runner`;
  const verdict =
    t.verdict === 'inconclusive'
      ? `INCONCLUSIVE (${t.reason})`
      : t.passed
        ? 'PASSED'
        : t.timedOut
          ? 'TIMED OUT'
          : `FAILED (exit ${t.exitCode})`;
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
  if (t.action === 'stuck' || t.action === 'escalate' || (t.action === 'pause' && !state.pause))
    return { action: t.action, track: t.track };
  return null;
}

/** A gate's first failure in its streak, told (rules/notify-triggers.ts); `before`: its track before this result. */
export async function tellFirstFailure(run: Run, before: GateTrack | undefined, r: GateResult): Promise<void> {
  const { state, info } = run;
  await tellPeople(run, [
    gateFailedNotice(info.workflowId, state.iteration, before, state.gates.tracks[r.gate] ?? freshTrack(), r, gateLabel(r.gate)),
  ]);
}

/** What a gate's failure streak asks for; the outcome when the run must end. */
export async function actOnGateStreak(run: Run, r: GateResult, streak: GateStreak): Promise<Outcome | null> {
  const { state, knobs, info } = run;
  const n = streak.track.consecutiveFailures;
  if (streak.action === 'stuck') return finish(run, 'gate_stuck', stuckReason(r.gate, streak.track));
  if (streak.action === 'pause' && run.gateHolds.hold(r, streak)) return null;
  if (streak.action === 'pause') {
    state.pause = {
      reason:
        `the ${gateLabel(r.gate)} gate failed ${n} times in a row (${r.reason}); look at it, then \`vigil resume ${info.workflowId}\` or stop the run`.slice(
          0,
          2000,
        ),
      by: 'vigil',
      at: run.nowIso(),
    };
    await notifyPeople(
      run,
      'escalation',
      `Quality gate ${gateLabel(r.gate)} keeps failing: the run is paused`,
      state.pause.reason,
      'critical',
      { gate: r.gate, failures: n, iteration: state.iteration },
      `${info.workflowId}:gate_pause:${r.gate}:${state.iteration}`,
    );
  } else {
    await escalateToPerson(
      run,
      'gate_failing',
      `the ${gateLabel(r.gate)} gate failed ${n} times in a row`,
      [gateLine(r), `${n} consecutive failures; the run pauses at ${knobs.gatePauseAfter}`],
      [],
      false,
      null,
    );
  }
  return null;
}

/** Whether the tool gates are due on the current tree. */
export function gatesDueNow(run: Run, judging: boolean, iterationSucceeded: boolean): boolean {
  const { state, knobs } = run;
  const treeHash = state.convergence.lastHash ?? '';
  const partialTests = state.lastTests?.treeHash === treeHash && !!state.lastTests.selected;
  return gatesDue({ judging, iterationSucceeded, treeHash, lastTree: state.gates.lastTree, partialTests }, knobs);
}

/** The tool gates on the current tree, when due; their results join the latest per gate. */
export async function qualityGates(
  run: Run,
  judging: boolean,
  iterationSucceeded: boolean,
  carried: RunGatesResult | null = null,
): Promise<Outcome | null> {
  const { state } = run;
  const tree = state.convergence.lastHash ?? '';
  if (!gatesDueNow(run, judging, iterationSucceeded)) return null;
  run.status = 'gating';
  run.publish();
  const out = await gatesPass(run, tree, carried, judging);
  run.status = run.stopRequest ? 'stopping' : 'running';
  // Integrity and gaming findings a person waived, or a checklist item asked for, do not block.
  out.results = liftLatest(out.results, state.gates.findingWaivers, state.gates.checklist);
  state.gates.latest = mergeLatest(state.gates.latest, out.results);
  if (!out.interrupted) state.gates.lastTree = tree;
  run.sdk.log.info('quality gates', { iteration: state.iteration, results: out.results.map((r) => `${r.gate}:${r.verdict}`).join(' ') });
  for (const r of out.results) run.recordEvent(gateEvent(r));
  for (const r of out.results) {
    const before = state.gates.tracks[r.gate];
    const streak = trackGateResult(run, r);
    const ended = streak ? await actOnGateStreak(run, r, streak) : null;
    if (ended) return ended;
    await tellFirstFailure(run, before, r);
  }
  run.publish();
  return null;
}

/**
 * What a gate pass needs to know of the run now (the tree aside). The pass of an ordinary
 * iteration (not `judging`) runs only the affected tests (knob affectedTestsFullEvery above 1); a
 * completion check's runs the full suite.
 */
export function gatesPassFacts(run: Run, judging = false) {
  const { state, knobs, input, info } = run;
  const testsWanted = !!knobs.testCommand || run.detectTests;
  const affected = testsWanted && !judging && knobs.affectedTestsFullEvery > 1;
  if (affected) markAffectedTests();
  return {
    runId: info.workflowId,
    repoPath: input.repoPath,
    iteration: state.iteration,
    knobs,
    runStartTree: state.runStart?.treeHash ?? null,
    tracks: state.gates.tracks,
    knownTests: state.lastTests,
    testsInput: testsWanted
      ? {
          runId: info.workflowId,
          repoPath: input.repoPath,
          command: knobs.testCommand,
          detect: run.detectTests,
          iteration: state.iteration,
          timeoutSeconds: knobs.testTimeoutSeconds,
          authorization: input.authorization ?? null,
          ...sandboxArgs(knobs),
          ...(affected ? { scope: 'affected' as const, fullEvery: knobs.affectedTestsFullEvery } : {}),
        }
      : null,
  };
}

/** The tool gates: one activity per pass (or the pass the call carried), the test run remembered for the tree. */
export async function gatesPass(
  run: Run,
  tree: string,
  carried: RunGatesResult | null,
  judging = false,
): Promise<{ results: GateResult[]; interrupted: boolean }> {
  const { state } = run;
  const { gateActs } = run.acts;
  const out = await runGatesPass(gateActs, {
    ...gatesPassFacts(run, judging),
    treeHash: tree,
    carried,
    run: async (call) => {
      const scope = run.sdk.scope();
      run.call.gatesStarted(scope);
      try {
        return await scope.run(call);
      } finally {
        run.call.gatesEnded();
      }
    },
    interrupted: () => run.interrupted(),
  });
  if (out.tests) state.lastTests = out.tests;
  state.sandbox = noteSandbox(state.sandbox, out.sandbox?.tests, { iteration: state.iteration, role: 'tests' });
  state.sandbox = noteSandbox(state.sandbox, out.sandbox?.gates, { iteration: state.iteration, role: 'gates' });
  return out;
}

/**
 * The code review of the current tree (a passing review of the same tree is not repeated);
 * `since`: a delta review, of the diff from the tree that review passed on.
 */
export async function codeReview(
  run: Run,
  tree: string,
  since?: { tree: string; round: number; iteration: number },
): Promise<ReviewRecord> {
  const { state } = run;
  const { rounds } = run.acts;
  const last = state.gates.reviews.at(-1);
  if (last && last.treeHash === tree && last.result === 'pass') return last;
  const round = state.gates.reviewRounds + 1;
  run.status = 'gating';
  run.publish();
  const t = state.lastTests?.treeHash === tree ? state.lastTests : null;
  const reviewInput = {
    ...roundBase(run, round),
    testSummary: t ? testLine(run, t) : 'No test results for this tree.',
    at: run.nowIso(),
    leanPrompt: true,
    ...(since ? { since } : {}),
  };
  const what = since ? `code review ${round}, the delta since round ${since.round}` : `code review ${round}`;
  const r = await rounds.reviewRound.executeWithOptions({ summary: `${what} (iteration ${state.iteration})` }, [reviewInput]);
  run.status = run.stopRequest ? 'stopping' : 'running';
  for (const u of r.usages) state.spend = addOrchestrationUsage(state.spend, u);
  state.spend = addUnpricedOrchestration(state.spend, r.unpriced ?? 0);
  for (const c of r.sandbox ?? []) state.sandbox = noteSandbox(state.sandbox, c.report, { iteration: state.iteration, role: c.role });
  state.marks = { ...state.marks, review: r.record.result === 'pass' ? run.markHere(tree) : null };
  state.gates.reviewRounds = round;
  state.gates.reviews = [...state.gates.reviews, r.record].slice(-5);
  run.recordEvent(reviewEvent(r.record));
  const asGate = reviewGateResult(r.record);
  state.gates.latest = mergeLatest(state.gates.latest, [asGate]);
  run.sdk.log.info('code review', { round, result: r.record.result, reviewers: r.record.reviewers.length });
  return r.record;
}
