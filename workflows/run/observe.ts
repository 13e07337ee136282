/**
 * What an iteration changed: the inspection of the repository (made with the call), the
 * convergence, its record and checkpoint, its events, the run memory, then the agent's signal
 * files, the tier ladder and the uncertainty decision, and the escalation they ask for.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { AgentResult, AgentSignals, RepoSnapshot } from '../../schemas/activities.js';
import { type IterationRecord, LIMITS } from '../../schemas/run.js';
import { trackDoneSignal } from '../../rules/breaker.js';
import { costOf } from '../../rules/budget.js';
import { addCheckpoint } from '../../rules/checkpoints.js';
import { CONVERGENCE_RING_SIZE, trackConvergence } from '../../rules/convergence.js';
import { iterationEvent } from '../../rules/journal.js';
import { advanceMark, stepPaths } from '../../rules/lean-rounds.js';
import { contextClearMemory, iterationMemory } from '../../rules/memory.js';
import { keepContinuity } from '../../rules/prompt-memory.js';
import { compactionsNotice, contextNotice, sensitiveFileNotice, stuckNotice } from '../../rules/notify-triggers.js';
import { overrideNote } from '../../rules/model-override.js';
import { mergedDenials, noteSandbox } from '../../rules/sandbox.js';
import { initialLadder, observeLadder } from '../../rules/tier-ladder.js';
import { describeProxies, evaluateUncertainty, type Proxies } from '../../rules/uncertainty.js';
import type { AgentCall } from './call-agent.js';
import { escalateToPerson, type EscalationArgs, tellPeople } from './people.js';
import { type Run } from './run.js';

/**
 * What an inspection that asked for the signal files answers without them (never expected: the
 * call asks for them): nothing read, and the run's log says so.
 */
const UNREAD_SIGNALS: AgentSignals = {
  humanReview: null,
  driftReports: 0,
  contextClearRequested: false,
  problems: ['the inspection returned no signal files'],
  summary: null,
  continuity: null,
  continuityRef: null,
};

/** What the iteration changed: the inspection, convergence, its record and checkpoint, its events, the signal files and what they escalate. */
export async function observeIteration(run: Run, call: AgentCall): Promise<RepoSnapshot> {
  const { state, knobs, input, info } = run;
  const { repo } = run.acts;
  const { result, inspect } = call;
  const treeBefore = state.convergence.lastHash;
  // 5. What did the iteration change? The call's inspection, or the activity's when the call could not make it.
  const made = result.inspection && 'snapshot' in result.inspection ? result.inspection : null;
  const got =
    made ??
    (await repo.inspectIteration.executeWithOptions({ summary: `inspect repository after iteration ${state.iteration}` }, [
      { runId: info.workflowId, repoPath: input.repoPath, iteration: state.iteration, inspect },
    ]));
  const snap = got.snapshot;
  followMarks(run, treeBefore, snap);
  const conv = trackConvergence(state.convergence, snap.treeHash, CONVERGENCE_RING_SIZE);
  state.convergence = trackDoneSignal(conv.state, result.claimed || result.donePhrase !== null);

  const record: IterationRecord = {
    iteration: state.iteration,
    phase: call.phase,
    tier: result.modelOverride && 'tier' in result.modelOverride ? result.modelOverride.tier : call.tier,
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    logPath: result.logPath,
    attempts: result.attempt,
    claimed: result.claimed,
    changed: conv.changed,
    filesChangedSinceStart: snap.changedCount,
    treeHash: snap.treeHash,
    at: run.nowIso(),
    provider: result.provider,
    model: result.model,
    costUsd: result.usage ? costOf(result.usage) : null,
    checkpoint: snap.checkpoint?.commit ?? null,
    ...(result.modelOverride ? { override: overrideNote(result.modelOverride) } : {}),
    // A full disk says so where a person looks (status, watch), not only in the next prompt.
    ...(result.ioError ? { ioError: result.ioError.slice(0, 1000) } : {}),
    // An escape attempt the sandbox refused is a finding a person should see.
    ...(result.sandbox?.denied.length ? { denied: mergedDenials([result.sandbox]) } : {}),
    // So is a call a sandbox limit ended (its exit code alone says only that it was killed).
    ...(result.sandbox?.limitHit ? { limitHit: result.sandbox.limitHit.slice(0, 300) } : {}),
    // And a call the silence watchdog ended as hung (its exit code says only that it timed out).
    ...(result.hung ? { hung: result.hung.slice(0, 200) } : {}),
    ...(result.context?.compactions ? { compactions: result.context.compactions } : {}),
  };
  state.sandbox = noteSandbox(state.sandbox, result.sandbox, { iteration: state.iteration, role: 'builder' });
  if (snap.checkpoint) {
    const c = {
      iteration: state.iteration,
      commit: snap.checkpoint.commit,
      tree: snap.treeHash,
      ref: snap.checkpoint.ref,
      at: run.nowIso(),
      filesChanged: snap.sinceLast?.files ?? 0,
      filesSinceStart: snap.changedCount,
      exitCode: result.exitCode,
      tests: null,
      verdict: null,
      snapshot: null,
    };
    state.checkpoints.list = addCheckpoint(state.checkpoints.list, c, knobs.checkpointsKept);
  }
  state.recentIterations = [...state.recentIterations, record].slice(-LIMITS.recentIterations);
  run.recordEvent(iterationEvent(record, state.lastTests));
  if (result.usage || state.spend.calls > 0) run.recordSpend();
  // The notification triggers of an iteration: 3 iterations without a change, a sensitive file changed, the context
  // 90 % full, the third compaction within an hour (each compaction at its call's end; a CLI that does not say: never).
  const compacted = state.recentIterations.flatMap((r) => Array<number>(r.compactions ?? 0).fill(Date.parse(r.at)));
  await tellPeople(run, [
    stuckNotice(info.workflowId, state.iteration, state.convergence.consecutiveNoChange),
    sensitiveFileNotice(info.workflowId, state.iteration, snap.sinceLast?.sensitive ?? []),
    contextNotice(info.workflowId, state.iteration, result.context?.usedTokens ?? null, result.context?.windowTokens ?? null),
    result.context?.compactions
      ? compactionsNotice(info.workflowId, state.iteration, compacted, run.nowMs(), result.context.compactions)
      : null,
  ]);
  const trouble = watchForTrouble(run, result, snap, got.signals ?? UNREAD_SIGNALS);
  if (trouble) await escalateToPerson(run, ...trouble);
  return snap;
}

/** What this inspection changed joins what changed since each judgement's tree (decisions/lean-rounds.ts). */
export function followMarks(run: Run, treeBefore: string | null, snap: RepoSnapshot): void {
  const { state } = run;
  const step = { from: treeBefore, to: snap.treeHash, paths: stepPaths(snap.sinceLast) };
  const m = state.marks;
  state.marks = { round: advanceMark(m.round, step), review: advanceMark(m.review, step), checklist: advanceMark(m.checklist, step) };
  run.judging.lastFiles = { tree: snap.treeHash, files: snap.changedCount <= snap.changedFiles.length ? snap.changedFiles : null };
}

/** Drift reports (DRIFT_DETECTED) in a run after which the agent gets a fresh session. */
const DRIFT_CONTEXT_CLEAR = 3;

/** The iteration just inspected, with the agent's SUMMARY, joins the run memory; its CONTINUITY.md is kept. */
export function rememberIteration(run: Run, result: AgentResult, snap: RepoSnapshot, signals: AgentSignals): void {
  const { state } = run;
  const record = state.recentIterations.at(-1);
  const tests =
    state.lastTests && state.lastTests.treeHash === snap.treeHash
      ? (state.lastTests.verdict ?? (state.lastTests.passed ? 'pass' : 'fail'))
      : null;
  run.remember(
    iterationMemory({
      iteration: state.iteration,
      phase: record?.phase ?? null,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      changed: record?.changed ?? false,
      paths: snap.sinceLast?.paths ?? null,
      lines: snap.sinceLast?.lines ?? null,
      filesChangedSinceStart: snap.changedCount,
      insertions: snap.insertions,
      deletions: snap.deletions,
      tests,
      claimed: result.claimed,
      provider: result.provider,
      summary: signals.summary,
    }),
  );
  state.memory = keepContinuity(state.memory, signals);
}

/**
 * After tracking: agent signal files, the tier ladder, the uncertainty decision; the one
 * escalation they ask for, if any (the caller makes it: deciding needs no promise).
 */
export function watchForTrouble(run: Run, result: AgentResult, snap: RepoSnapshot, signals: AgentSignals): EscalationArgs | null {
  const { state, knobs } = run;
  rememberIteration(run, result, snap, signals);
  for (const p of signals.problems) run.sdk.log.warn('unreadable agent signal file', { problem: p });
  const driftBefore = state.driftReports;
  state.driftReports += signals.driftReports;
  if (signals.contextClearRequested || (driftBefore < DRIFT_CONTEXT_CLEAR && state.driftReports >= DRIFT_CONTEXT_CLEAR)) {
    const why = signals.contextClearRequested ? 'the agent asked for a context clear' : `${state.driftReports} drift reports`;
    state.contextClear = { reason: why, summary: (state.latestHandoff?.summary ?? describeRunSoFar(run)).slice(0, 4000) };
    run.remember(contextClearMemory(state.iteration, why));
  }

  let tierExhausted: string | null = null;
  // A rate limit says nothing about the task's difficulty: it does not move the ladder.
  if (knobs.tierLadder && result.rateLimit === null && result.authError === null) {
    state.ladder ??= initialLadder(knobs.tier, null);
    const since = snap.sinceLast;
    const r = observeLadder(
      state.ladder,
      {
        iteration: state.iteration,
        failed: result.exitCode !== 0,
        filesModified: since?.files ?? 0,
        linesChanged: since?.lines ?? 0,
        dependencyManifestChanged: since?.manifestChanged ?? false,
        ...(since?.structural ? { structural: since.structural } : {}),
        // The latest test run, if it is at most one iteration old (tests run when the tree changes).
        testFailures: state.lastTests && state.lastTests.iteration >= state.iteration - 1 ? state.lastTests.failures : null,
        // An idle iteration is no success: it never steps the run down.
        changed: state.recentIterations.at(-1)?.changed ?? true,
      },
      knobs,
    );
    state.ladder = r.state;
    if (r.change) {
      run.sdk.log.info('tier changed', { ...r.change });
      run.recordEvent({
        kind: 'tier_change',
        iteration: r.change.iteration,
        from: r.change.from,
        to: r.change.to,
        trigger: r.change.trigger.slice(0, 300),
      });
    }
    if (r.escalateHuman) tierExhausted = `the agent failed ${r.state.failuresAtLevel} times in a row at the HIGH tier`;
  }

  let uncertain: { proxies: Proxies; lines: string[] } | null = null;
  if (knobs.uncertaintyEscalation) {
    const obs = {
      iteration: state.iteration,
      consecutiveNoChange: state.convergence.consecutiveNoChange,
      treeHash: snap.treeHash,
      verdicts: state.council.verdicts,
    };
    const r = evaluateUncertainty(state.uncertainty, obs, knobs);
    state.uncertainty = r.state;
    if (r.escalate) uncertain = { proxies: r.proxies, lines: describeProxies(r.proxies, obs, knobs) };
  }

  const hr = signals.humanReview;
  if (hr)
    return [
      'agent_request',
      `the agent asked for a human review: ${hr.reason}`,
      [`the agent wrote HUMAN_REVIEW_NEEDED${hr.blocking ? ' (blocking)' : ''}: ${hr.reason}`, ...(uncertain?.lines ?? [])],
      hr.questions,
      // A perpetual run never waits: it notifies, and its outcome lists the request.
      knobs.autonomyMode === 'supervised',
      uncertain?.proxies ?? null,
      hr.defaultAnswer,
    ];
  if (tierExhausted)
    return [
      'tier_exhausted',
      'the highest model tier keeps failing',
      [tierExhausted, ...(uncertain?.lines ?? [])],
      [],
      knobs.autonomyMode === 'supervised',
      uncertain?.proxies ?? null,
    ];
  if (uncertain) return ['uncertainty', 'the run looks stuck', uncertain.lines, [], knobs.autonomyMode === 'supervised', uncertain.proxies];
  return null;
}

export function describeRunSoFar(run: Run): string {
  const { state } = run;
  return (
    `Iteration ${state.iteration}; ${state.recentIterations.at(-1)?.filesChangedSinceStart ?? 0} file(s) changed since the run started; ` +
    `${state.council.rounds} council round(s)${state.council.verdicts.at(-1) ? `, the last ${state.council.verdicts.at(-1)?.result}` : ''}.`
  );
}
