/**
 * Parallel streams (knob `parallelStreams` above 1): a run split into
 * tasks starts each ready task as a child `vigilRun` (`<run>--<task>`) in a git worktree of its
 * own, at most N at once and after its dependencies are merged; each stream is a full run (gates,
 * review, checklist and council on its task's items) that delivers its work on its own branch.
 * Done streams are merged into the run's integration line in dependency order; a failed one (or
 * one a person stopped on its own) is tried once more, then dead-lettered with the tasks that wait
 * for it, while the others go on. A stream whose worktree was deleted makes it again as it resumes
 * (stream-recovery.ts).
 * The run's pause, resume, stop and budget reach every running stream. When every stream is
 * over, the merged tree is written into the run's working tree and the run goes on as any run:
 * its agent (told of any merge conflict, with both sides) and its own completion check judge the
 * merged tree, then it delivers as usual.
 *
 * A stream's own run gets the task as a directive in its first prompt.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure } from '@temporalio/common';
import type { Outcome, RunInput } from '../../schemas/run.js';
import type { AgentResult } from '../../schemas/activities.js';
import type { SearchAttributePair } from '@temporalio/common';
import type { ChecklistItem } from '../../schemas/gates.js';
import { SA_RELEASE } from '../../schemas/search-attributes.js';
import { MAX_TASKS, type TaskQueue, type TaskRecord } from '../../schemas/tasks.js';
import { chooseAgent, silenceSeconds } from '../../rules/agent-choice.js';
import { addOrchestrationUsage, addUnpricedOrchestration } from '../../rules/budget.js';
import { noteSandbox, sandboxArgs } from '../../rules/sandbox.js';
import {
  attemptLeft,
  newTaskQueue,
  nextMerge,
  plannerPrompt,
  readyTasks,
  streamBudget,
  streamId,
  streamsSettled,
  taskChecklist,
  taskDirective,
  taskEnded,
  taskMerged,
  tasksFromChecklist,
  tasksFromPlan,
  taskStarted,
  streamWaitingOf,
  waitingTasks,
} from '../../rules/tasks.js';
import { budgetSignal, pauseSignal, resumeSignal, stopSignal, streamWaitingSignal } from '../messages.js';
import { stopOutcome } from './ending.js';
import { seedForkDirective } from './fork.js';
import { markStreamRecovery } from './eras.js';
import { end, type End, GO, type Go, type Run } from './run.js';
import type { StreamHandle } from './port.js';

const STREAM_DIRECTIVE_ID = 'vigil-stream-task';

/** A stream's run: its task goes into its first prompt, once. */
function seedStreamDirective(run: Run): void {
  const { state, input } = run;
  if (!input.stream || run.continued || state.iteration > 0 || state.directiveIds.includes(STREAM_DIRECTIVE_ID)) return;
  state.pendingDirectives.push({ text: input.stream.directive, by: 'vigil', at: run.nowIso(), id: STREAM_DIRECTIVE_ID });
  state.directiveIds = [...state.directiveIds, STREAM_DIRECTIVE_ID];
}

type Initial = { tasks: NonNullable<RunInput['tasks']>; source: TaskQueue['source'] };

/** The PRD checklist's items a run's streams share out (held-out ones stay with the run's own check). */
function shownItems(run: Run): ChecklistItem[] {
  const cl = run.state.gates.checklist;
  return cl ? cl.items.filter((i) => !cl.heldOut.includes(i.id)) : [];
}

/** The tasks this run is split into without asking anyone: a person's list, else the PRD checklist's items. */
function initialTasks(run: Run): Initial | null {
  const { input } = run;
  if (input.tasks?.length) return { tasks: input.tasks, source: 'file' };
  const items = shownItems(run);
  return items.length > 1 ? { tasks: tasksFromChecklist(items), source: 'checklist' } : null;
}

/** A planner call is due: taskPlanner=agent, no person's list, and not a checklist of one item (nothing to split). */
function plannerDue(run: Run): boolean {
  return run.knobs.taskPlanner === 'agent' && !run.input.tasks?.length && shownItems(run).length !== 1;
}

/**
 * With taskPlanner=agent and no person's list: one planner call groups the checklist's items
 * into tasks with dependencies (docs/agent-contract.md, role `planner`). An answer that is
 * refused (not JSON, an item in no task or in two, a dependency cycle), or a call that failed,
 * falls back to the checklist's items, and the queue says why. A plan of one task is no split:
 * the run goes on as one run.
 */
async function plannedTasks(run: Run): Promise<{ tasks: Initial | null; note: string | null }> {
  const { input, knobs, state, info } = run;
  const fallback = initialTasks(run);
  if (!plannerDue(run)) return { tasks: fallback, note: null };
  const items = shownItems(run);
  let r: AgentResult | null = null;
  let failure: string | null = null;
  try {
    r = await run.acts.members.runAgent.executeWithOptions({ summary: 'plan the tasks of the parallel streams' }, [
      {
        runId: info.workflowId,
        repoPath: input.repoPath,
        ...chooseAgent(knobs, 'planner', knobs.tier),
        authorization: input.authorization ?? null,
        prompt: plannerPrompt({ prdPath: input.prdPath, items, parallelStreams: knobs.parallelStreams, maxTasks: MAX_TASKS }),
        role: 'planner',
        iteration: 1,
        phase: 'REASON',
        tier: knobs.tier,
        timeoutSeconds: knobs.councilMemberTimeoutSeconds,
        silenceSeconds: silenceSeconds(knobs),
        completionPromise: '',
        parse: 'tasks',
        checklistIds: items.map((i) => i.id),
        rateLimitRpm: knobs.rateLimitRpm,
        ...sandboxArgs(knobs),
      },
    ]);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    failure = `the planner call failed: ${(err.cause?.message ?? err.message).slice(0, 300)}`;
  }
  if (r?.usage) state.spend = addOrchestrationUsage(state.spend, r.usage);
  else if (r) state.spend = addUnpricedOrchestration(state.spend, 1);
  state.sandbox = noteSandbox(state.sandbox, r?.sandbox, { iteration: state.iteration, role: 'planner' });
  const plan = r?.plan ?? null;
  if (plan?.ok) {
    if (plan.tasks.length < 2)
      return {
        tasks: null,
        note: `the planner kept the work as one task ("${plan.tasks[0]?.title ?? ''}"): no parallel streams`.slice(0, 600),
      };
    return { tasks: { tasks: tasksFromPlan(plan.tasks, items), source: 'planner' }, note: null };
  }
  const why = failure ?? plan?.error ?? `the planner answered nothing usable (exit ${r?.exitCode ?? '?'})`;
  run.sdk.log.warn('the planner’s tasks were refused', { why });
  const note = fallback
    ? `${why}; each checklist item is a task of its own`
    : `${why}; without a checklist to fall back on, no parallel streams`;
  return { tasks: fallback, note: note.slice(0, 600) };
}

/** What a stream's run is given: the run's input, on its worktree, with its task's checklist and a share of the budget. */
function streamInput(run: Run, t: TaskRecord, worktree: string, q: TaskQueue): RunInput {
  const { input, knobs, state, info } = run;
  const budget = streamBudget(state.budgetUsd ?? knobs.budgetUsd, state.spend.usd, q);
  return {
    prdPath: input.prdPath,
    prdTitle: `${input.prdTitle} — ${t.title}`.slice(0, 200),
    repoPath: worktree,
    knobs: { ...knobs, parallelStreams: 1, budgetUsd: budget, deliver: 'branch', deliverToCurrent: false },
    checklist: taskChecklist(t),
    stream: { parentId: info.workflowId, task: t.id, directive: taskDirective(t, info.workflowId) },
    // A signed run's streams carry its signature: each is admitted as the run's child (activities/run-authorization.ts).
    ...(input.authorization ? { authorization: input.authorization } : {}),
    ...(input.host ? { host: input.host } : {}),
    ...(input.notifyTriggers ? { notifyTriggers: true } : {}),
    ...(input.searchAttributes !== undefined ? { searchAttributes: input.searchAttributes } : {}),
    ...(input.loopRules !== undefined ? { loopRules: input.loopRules } : {}),
  };
}

/**
 * A stream tells its run each time it starts or stops waiting for a person (a pause Vigil made:
 * an escalation, a gate, its budget), so the run shows it and a resume of the run reaches it.
 * Runs beside the stream's loop for the rest of the execution.
 */
function watchStreamWaits(run: Run, stream: NonNullable<RunInput['stream']>): void {
  if (!run.streams.startWatch()) return;
  const keyOf = (w: ReturnType<typeof streamWaitingOf>): string => (w ? `${w.at} ${w.reason}` : '');
  let told = '';
  void (async () => {
    for (;;) {
      await run.sdk.until(() => run.outcome !== null || keyOf(streamWaitingOf(run.state.pause)) !== told);
      if (run.outcome) return;
      const waiting = streamWaitingOf(run.state.pause);
      told = keyOf(waiting);
      await run.sdk
        .signal(stream.parentId, streamWaitingSignal, { task: stream.task, waiting })
        .catch((err: unknown) => run.sdk.log.warn('the run could not be told that this stream waits', { error: String(err) }));
    }
  })();
}

/**
 * A stream carries the release stamp of its run (schemas/search-attributes.ts, `VigilRelease`):
 * started by this run's code, it is as old as the run. Nothing when the run has none. Not a
 * command of its own (a start's attributes are not compared on replay).
 */
function streamRelease(run: Run): { typedSearchAttributes?: SearchAttributePair[] } {
  const release = run.sdk.info().typedSearchAttributes.get(SA_RELEASE);
  return release ? { typedSearchAttributes: [{ key: SA_RELEASE, value: release }] } : {};
}

type Ended = { status: string; reason: string; spendUsd: number };

function endedOf(outcome: Outcome): Ended {
  return { status: outcome.status, reason: outcome.reason, spendUsd: outcome.spendUsd ?? 0 };
}

/**
 * The streams of a run split into tasks, before its own loop: null when there are none (one
 * stream, no tasks, or all of them over) or once they are merged into its working tree; the
 * run's end when it was stopped meanwhile.
 */
export async function runStreams(run: Run): Promise<End | Go<undefined>> {
  return (await streamsFirst(run)) ?? GO;
}

async function streamsFirst(run: Run): Promise<End | null> {
  const { state, knobs, input, info } = run;
  // A fork's own run (input `forkOf`, which no other run has: no patch): what got stuck goes into its first prompt.
  if (input.forkOf) seedForkDirective(run);
  if (input.stream) {
    seedStreamDirective(run);
    watchStreamWaits(run, input.stream);
    return null;
  }
  if (knobs.parallelStreams <= 1 || state.tasks?.applied) return null;
  if (!state.tasks && !initialTasks(run) && !plannerDue(run)) return null;
  const acts = run.acts.streams;
  if (!state.tasks) {
    if (!state.runStart) return null;
    const first = await plannedTasks(run);
    if (!first.tasks) {
      // Nothing to split: the run goes on as one run, and never asks again (continued-as-new too).
      state.tasks = { ...newTaskQueue([], 'planner', null), applied: true, note: first.note };
      run.publish();
      return null;
    }
    const base = await acts.streamBase.executeWithOptions({ summary: 'the commit the streams start from' }, [
      { repoPath: input.repoPath, runId: info.workflowId, tree: state.runStart.treeHash, parent: state.runStart.sha },
    ]);
    state.tasks = { ...newTaskQueue(first.tasks.tasks, first.tasks.source, base.commit), note: first.note };
    run.publish();
  }
  run.streams.fanningOut = true;
  try {
    return await fanOut(run);
  } finally {
    run.streams.fanningOut = false;
  }
}

/**
 * Starts, tells, merges and waits for the streams until every one is over, then writes the merged tree into the run's
 * (null), or ends the run when it was stopped.
 */
async function fanOut(run: Run): Promise<End | null> {
  const { state, knobs, input, info } = run;
  const acts = run.acts.streams;
  const handles = new Map<string, StreamHandle>();
  const excerpts: string[] = [];
  const results = new Map<string, Ended>();
  let toldPaused = false;
  let toldBudget = state.budgetUsd ?? knobs.budgetUsd;
  const q = (): TaskQueue => state.tasks as TaskQueue;
  const tell = async (send: (id: string) => Promise<void>): Promise<void> => {
    await Promise.all(
      [...handles.keys()].map(async (task) =>
        send(streamId(info.workflowId, task)).catch((err: unknown) =>
          run.sdk.log.warn('a stream could not be told', { task, error: String(err) }),
        ),
      ),
    );
  };

  for (;;) {
    // Streams that ended: their task moves on, a stream that did not end done leaves its worktree.
    for (const [task, ended] of [...results]) {
      results.delete(task);
      handles.delete(task);
      // A stream stopped on its own (not by the run's stop) is tried once more, as any that did not end done.
      const retryStopped = ended.status === 'stopped' && attemptLeft(q(), task) && markStreamRecovery();
      state.tasks = taskEnded(q(), task, ended, undefined, retryStopped);
      state.spend = { ...state.spend, usd: state.spend.usd + ended.spendUsd };
      if (q().tasks.find((t) => t.id === task)?.state !== 'done')
        await acts.removeWorktree.executeWithOptions({ summary: `remove the worktree of task ${task}` }, [
          { repoPath: input.repoPath, runId: info.workflowId, task },
        ]);
    }
    // Done streams merged, in dependency order.
    for (let t = nextMerge(q()); t; t = nextMerge(q())) {
      const m = await acts.mergeStream.executeWithOptions({ summary: `merge task ${t.id}` }, [
        {
          repoPath: input.repoPath,
          runId: info.workflowId,
          task: t.id,
          childId: t.childId ?? streamId(info.workflowId, t.id),
          into: q().merged ?? '',
        },
      ]);
      state.tasks = taskMerged(q(), t.id, m.commit);
      if (m.conflict) excerpts.push(m.conflict.excerpt);
      if (m.conflict)
        state.tasks = {
          ...q(),
          conflicts: [
            ...q().conflicts,
            { task: t.id, files: m.conflict.files, sidesPath: m.conflict.sidesPath, summary: m.conflict.summary },
          ].slice(-20),
        };
      await acts.removeWorktree.executeWithOptions({ summary: `remove the worktree of task ${t.id}` }, [
        { repoPath: input.repoPath, runId: info.workflowId, task: t.id },
      ]);
    }
    run.publish();
    if (handles.size === 0 && streamsSettled(q())) break;
    // The run's messages reach every stream.
    if (run.stopRequest) {
      const req = run.stopRequest;
      await tell((id) =>
        run.sdk.signal(id, stopSignal, {
          reason: `the run was stopped: ${req.reason}`.slice(0, 2000),
          by: req.by,
          now: req.now,
        }),
      );
      await run.sdk.until(() => results.size === handles.size);
      for (const [task, ended] of results) {
        state.tasks = taskEnded(q(), task, ended, 0);
        state.spend = { ...state.spend, usd: state.spend.usd + ended.spendUsd };
      }
      return end(await stopOutcome(run));
    }
    if ((state.pause !== null) !== toldPaused) {
      toldPaused = state.pause !== null;
      const pause = state.pause;
      await tell((id) =>
        pause
          ? run.sdk.signal(id, pauseSignal, { reason: `the run is paused: ${pause.reason}`.slice(0, 2000), by: pause.by })
          : run.sdk.signal(id, resumeSignal, { by: 'vigil' }),
      );
    }
    // A person's resume of the run (not paused itself) reaches the streams that wait for a person.
    const resume = run.streams.takeResume();
    if (resume) {
      const { by } = resume;
      const waiting = new Set(waitingTasks(q()).map((t) => t.id));
      await Promise.all(
        [...handles.keys()]
          .filter((t) => waiting.has(t))
          .map(async (t) =>
            run.sdk
              .signal(streamId(info.workflowId, t), resumeSignal, { by })
              .catch((err: unknown) => run.sdk.log.warn('a stream could not be resumed', { task: t, error: String(err) })),
          ),
      );
    }
    const budget = state.budgetUsd ?? knobs.budgetUsd;
    if (budget !== toldBudget) {
      toldBudget = budget;
      await tell((id) => run.sdk.signal(id, budgetSignal, { usd: streamBudget(budget, state.spend.usd, q()), by: 'vigil' }));
    }
    // Ready tasks start, at most N at once, none while the run is paused.
    if (!state.pause) {
      for (const t of readyTasks(q(), knobs.parallelStreams)) {
        const wt = await acts.addWorktree.executeWithOptions({ summary: `the worktree of task ${t.id}` }, [
          { repoPath: input.repoPath, runId: info.workflowId, task: t.id, base: q().merged ?? q().base ?? '' },
        ]);
        const childId = streamId(info.workflowId, t.id);
        state.tasks = taskStarted(q(), t.id, childId, `vigil/${childId}`);
        const handle = await run.sdk.startStream({
          workflowId: childId,
          args: [streamInput(run, t, wt.path, q())],
          staticSummary: `stream ${t.id} of ${info.workflowId}`.slice(0, 200),
          ...streamRelease(run),
        });
        handles.set(t.id, handle);
        handle.result().then(
          (o) => results.set(t.id, endedOf(o)),
          (err: unknown) =>
            results.set(t.id, {
              status: run.sdk.isCancellation(err) ? 'stopped' : 'failed',
              reason: (err instanceof Error ? err.message : String(err)).slice(0, 500),
              spendUsd: 0,
            }),
        );
      }
      run.publish();
    }
    await run.sdk.until(
      () =>
        results.size > 0 ||
        run.stopRequest !== null ||
        (state.pause !== null) !== toldPaused ||
        (state.budgetUsd ?? knobs.budgetUsd) !== toldBudget ||
        run.streams.resumePending(),
    );
  }
  // Every stream is over: the merged tree into the run's working tree, conflicts to the agent or a person.
  const merged = q().merged;
  if (merged && merged !== q().base)
    await acts.applyStreams.executeWithOptions({ summary: 'the merged streams into the working tree' }, [
      { repoPath: input.repoPath, runId: info.workflowId, commit: merged },
    ]);
  state.tasks = { ...q(), applied: true };
  handConflicts(run, excerpts);
  run.publish();
  return null;
}

/**
 * Merge conflicts: a merge iteration for the run's agent (both sides in its prompt), or, with mergeConflicts=person in
 * supervised mode, a pause showing both sides.
 */
function handConflicts(run: Run, excerpts: readonly string[]): void {
  const { state, knobs } = run;
  const conflicts = state.tasks?.conflicts ?? [];
  if (!conflicts.length) return;
  const lines = conflicts.map((c) => `- task ${c.task}: ${c.files.join(', ')} (both sides: ${c.sidesPath})`);
  if (knobs.mergeConflicts === 'person' && knobs.autonomyMode === 'supervised') {
    const head = `Merging the streams left conflict markers in the run's tree:\n${lines.join('\n')}\nResolve them (or leave them to the agent) and resume.`;
    state.pause = { reason: `${head}\n\n${excerpts.join('\n')}`.slice(0, 2000), by: 'vigil', at: run.nowIso() };
    return;
  }
  const text = [
    'Merge iteration: merging the parallel streams into this tree collided. The files below carry git conflict markers ' +
      '(<<<<<<< ours, ======= , >>>>>>> theirs).',
    'Resolve every conflict so that both tasks’ work is kept, remove the markers, and make the tests pass.',
    ...lines,
    '',
    ...excerpts,
  ]
    .join('\n')
    .slice(0, 60_000);
  state.pendingDirectives.push({ text, by: 'vigil', at: run.nowIso(), id: 'vigil-merge-conflicts' });
}
