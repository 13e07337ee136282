/**
 * Parallel streams (knob `parallelStreams` above 1, patch vigil-streams-v1): a run split into
 * tasks starts each ready task as a child `vigilRun` (`<run>--<task>`) in a git worktree of its
 * own, at most N at once and after its dependencies are merged; each stream is a full run (gates,
 * review, checklist and council on its task's items) that delivers its work on its own branch.
 * Done streams are merged into the run's integration line in dependency order; a failed one is
 * tried once more, then dead-lettered with the tasks that wait for it, while the others go on.
 * The run's pause, resume, stop and budget reach every running stream. When every stream is
 * over, the merged tree is written into the run's working tree and the run goes on as any run:
 * its agent (told of any merge conflict, with both sides) and its own completion check judge the
 * merged tree, then it delivers as usual.
 *
 * A stream's own run gets the task as a directive in its first prompt.
 *
 * Workflow code: deterministic, no I/O.
 */
import { type ChildWorkflowHandle, condition, getExternalWorkflowHandle, isCancellation, log, ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { Outcome, RunInput } from '../../schemas/run.js';
import type { TaskQueue, TaskRecord } from '../../schemas/tasks.js';
import { newTaskQueue, nextMerge, readyTasks, streamBudget, streamId, streamsSettled, taskChecklist, taskDirective, taskEnded, taskMerged, tasksFromChecklist, taskStarted } from '../decisions/tasks.js';
import { budgetSignal, pauseSignal, resumeSignal, stopSignal } from '../messages.js';
import { stopOutcome } from './ending.js';
import { streamsEra } from './eras.js';
import { end, type End, nowIso, type Run, type VigilRun } from './run.js';

const STREAM_DIRECTIVE_ID = 'vigil-stream-task';

/** A stream's run: its task goes into its first prompt, once. */
function seedStreamDirective(run: Run): void {
  const { state, input } = run;
  if (!input.stream || run.continued || state.iteration > 0 || state.directiveIds.includes(STREAM_DIRECTIVE_ID)) return;
  state.pendingDirectives.push({ text: input.stream.directive, by: 'vigil', at: nowIso(), id: STREAM_DIRECTIVE_ID });
  state.directiveIds = [...state.directiveIds, STREAM_DIRECTIVE_ID];
}

/** The tasks this run is split into: a person's list, else the PRD checklist's items (held-out ones stay with the run's own check). */
function initialTasks(run: Run): { tasks: NonNullable<RunInput['tasks']>; source: TaskQueue['source'] } | null {
  const { input, state } = run;
  if (input.tasks?.length) return { tasks: input.tasks, source: 'file' };
  const cl = state.gates.checklist;
  const items = cl ? cl.items.filter((i) => !cl.heldOut.includes(i.id)) : [];
  return items.length > 1 ? { tasks: tasksFromChecklist(items), source: 'checklist' } : null;
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
    ...(input.host ? { host: input.host } : {}),
    ...(input.searchAttributes !== undefined ? { searchAttributes: input.searchAttributes } : {}),
  };
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
export async function runStreams(run: Run): Promise<End | null> {
  const { state, knobs, input, info } = run;
  if (input.stream) {
    seedStreamDirective(run);
    return null;
  }
  if (knobs.parallelStreams <= 1 || state.tasks?.applied) return null;
  if (!state.tasks && !initialTasks(run)) return null;
  if (!streamsEra()) return null;
  const acts = run.acts.streams;
  if (!state.tasks) {
    const first = initialTasks(run);
    if (!first || !state.runStart) return null;
    const base = await acts.streamBase.executeWithOptions({ summary: 'the commit the streams start from' }, [{ repoPath: input.repoPath, runId: info.workflowId, tree: state.runStart.treeHash, parent: state.runStart.sha }]);
    state.tasks = newTaskQueue(first.tasks, first.source, base.commit);
    run.publish();
  }
  const handles = new Map<string, ChildWorkflowHandle<VigilRun>>();
  const excerpts: string[] = [];
  const results = new Map<string, Ended>();
  let toldPaused = false;
  let toldBudget = state.budgetUsd ?? knobs.budgetUsd;
  const q = (): TaskQueue => state.tasks as TaskQueue;
  const tell = async (send: (id: string) => Promise<void>): Promise<void> => {
    await Promise.all([...handles.keys()].map(async (task) => send(streamId(info.workflowId, task)).catch((err: unknown) => log.warn('a stream could not be told', { task, error: String(err) }))));
  };

  for (;;) {
    // Streams that ended: their task moves on, a stream that did not end done leaves its worktree.
    for (const [task, ended] of [...results]) {
      results.delete(task);
      handles.delete(task);
      state.tasks = taskEnded(q(), task, ended);
      state.spend = { ...state.spend, usd: state.spend.usd + ended.spendUsd };
      if (q().tasks.find((t) => t.id === task)?.state !== 'done') await acts.removeWorktree.executeWithOptions({ summary: `remove the worktree of task ${task}` }, [{ repoPath: input.repoPath, runId: info.workflowId, task }]);
    }
    // Done streams merged, in dependency order.
    for (let t = nextMerge(q()); t; t = nextMerge(q())) {
      const m = await acts.mergeStream.executeWithOptions({ summary: `merge task ${t.id}` }, [{ repoPath: input.repoPath, runId: info.workflowId, task: t.id, childId: t.childId ?? streamId(info.workflowId, t.id), into: q().merged ?? '' }]);
      state.tasks = taskMerged(q(), t.id, m.commit);
      if (m.conflict) excerpts.push(m.conflict.excerpt);
      if (m.conflict) state.tasks = { ...q(), conflicts: [...q().conflicts, { task: t.id, files: m.conflict.files, sidesPath: m.conflict.sidesPath, summary: m.conflict.summary }].slice(-20) };
      await acts.removeWorktree.executeWithOptions({ summary: `remove the worktree of task ${t.id}` }, [{ repoPath: input.repoPath, runId: info.workflowId, task: t.id }]);
    }
    run.publish();
    if (handles.size === 0 && streamsSettled(q())) break;
    // The run's messages reach every stream.
    if (run.stopRequest) {
      const req = run.stopRequest;
      await tell((id) => getExternalWorkflowHandle(id).signal(stopSignal, { reason: `the run was stopped: ${req.reason}`.slice(0, 2000), by: req.by, now: req.now }));
      await condition(() => results.size === handles.size);
      for (const [task, ended] of results) {
        state.tasks = taskEnded(q(), task, ended, 0);
        state.spend = { ...state.spend, usd: state.spend.usd + ended.spendUsd };
      }
      return end(await stopOutcome(run));
    }
    if ((state.pause !== null) !== toldPaused) {
      toldPaused = state.pause !== null;
      const pause = state.pause;
      await tell((id) => (pause ? getExternalWorkflowHandle(id).signal(pauseSignal, { reason: `the run is paused: ${pause.reason}`.slice(0, 2000), by: pause.by }) : getExternalWorkflowHandle(id).signal(resumeSignal, { by: 'vigil' })));
    }
    const budget = state.budgetUsd ?? knobs.budgetUsd;
    if (budget !== toldBudget) {
      toldBudget = budget;
      await tell((id) => getExternalWorkflowHandle(id).signal(budgetSignal, { usd: streamBudget(budget, state.spend.usd, q()), by: 'vigil' }));
    }
    // Ready tasks start, at most N at once, none while the run is paused.
    if (!state.pause) {
      for (const t of readyTasks(q(), knobs.parallelStreams)) {
        const wt = await acts.addWorktree.executeWithOptions({ summary: `the worktree of task ${t.id}` }, [{ repoPath: input.repoPath, runId: info.workflowId, task: t.id, base: q().merged ?? q().base ?? '' }]);
        const childId = streamId(info.workflowId, t.id);
        state.tasks = taskStarted(q(), t.id, childId, `vigil/${childId}`);
        const handle = await startChild<VigilRun>('vigilRun', {
          workflowId: childId,
          args: [streamInput(run, t, wt.path, q())],
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          staticSummary: `stream ${t.id} of ${info.workflowId}`.slice(0, 200),
        });
        handles.set(t.id, handle);
        handle.result().then(
          (o) => results.set(t.id, endedOf(o)),
          (err: unknown) => results.set(t.id, { status: isCancellation(err) ? 'stopped' : 'failed', reason: (err instanceof Error ? err.message : String(err)).slice(0, 500), spendUsd: 0 }),
        );
      }
      run.publish();
    }
    await condition(() => results.size > 0 || run.stopRequest !== null || (state.pause !== null) !== toldPaused || (state.budgetUsd ?? knobs.budgetUsd) !== toldBudget);
  }
  // Every stream is over: the merged tree into the run's working tree, conflicts to the agent or a person.
  const merged = q().merged;
  if (merged && merged !== q().base) await acts.applyStreams.executeWithOptions({ summary: 'the merged streams into the working tree' }, [{ repoPath: input.repoPath, runId: info.workflowId, commit: merged }]);
  state.tasks = { ...q(), applied: true };
  handConflicts(run, excerpts);
  run.publish();
  return null;
}

/** Merge conflicts: a merge iteration for the run's agent (both sides in its prompt), or, with mergeConflicts=person in supervised mode, a pause showing both sides. */
function handConflicts(run: Run, excerpts: readonly string[]): void {
  const { state, knobs } = run;
  const conflicts = state.tasks?.conflicts ?? [];
  if (!conflicts.length) return;
  const lines = conflicts.map((c) => `- task ${c.task}: ${c.files.join(', ')} (both sides: ${c.sidesPath})`);
  if (knobs.mergeConflicts === 'person' && knobs.autonomyMode === 'supervised') {
    const head = `Merging the streams left conflict markers in the run's tree:\n${lines.join('\n')}\nResolve them (or leave them to the agent) and resume.`;
    state.pause = { reason: `${head}\n\n${excerpts.join('\n')}`.slice(0, 2000), by: 'vigil', at: nowIso() };
    return;
  }
  const text = [
    'Merge iteration: merging the parallel streams into this tree collided. The files below carry git conflict markers (<<<<<<< ours, ======= , >>>>>>> theirs).',
    'Resolve every conflict so that both tasks’ work is kept, remove the markers, and make the tests pass.',
    ...lines,
    '',
    ...excerpts,
  ].join('\n').slice(0, 60_000);
  state.pendingDirectives.push({ text, by: 'vigil', at: nowIso(), id: 'vigil-merge-conflicts' });
}
