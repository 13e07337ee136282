/**
 * A pause that waits for a person, with deadlines (rules/pause-deadlines.ts): the
 * wait is a durable timer to the next thing due (the reminder, the re-route, the deadline), cut
 * short by any answer (a resume, a directive, a stop) or anything else that ends a pause. What was
 * sent is recorded on the pause, which continue-as-new carries, so a restart or a fresh history
 * sends nothing twice and keeps every time.
 *
 * Workflow code: deterministic, no I/O.
 */
import { LIMITS } from '../../schemas/run.js';
import { duePauseStep, type PauseStep, waitsForPerson } from '../../rules/pause-deadlines.js';
import { deadlineChannels, recordNotification, rerouteChannelsOf, sendNotification } from '../escalation.js';
import { notifyPeople } from './people.js';
import { type Run } from './run.js';

/** The paused run has a reminder, a re-route or a deadline still to keep: it waits with a timer (PAUSE_DEADLINES_PATCH). */
export function pauseHasDeadlines(run: Run): boolean {
  return duePauseStep(run.state.pause, run.knobs, deadlineChannels(run.knobs), run.nowMs()).nextAtMs !== null;
}

/** Waits until the pause is over, keeping its reminder, re-route and deadline on the way. */
export async function waitForPerson(run: Run): Promise<void> {
  const { state, knobs } = run;
  for (;;) {
    if (run.pauseOver()) return;
    const { due, nextAtMs } = duePauseStep(state.pause, knobs, deadlineChannels(run.knobs), run.nowMs());
    if (due) {
      await takeStep(run, due);
      run.publish();
      continue;
    }
    if (nextAtMs === null) {
      await run.sdk.until(() => run.pauseOver());
      return;
    }
    // An answer that keeps the run paused (a directive) cancels the timers too: the wait ends, the next pass finds none.
    const answered = state.pause?.answered;
    await run.sdk.until(() => run.pauseOver() || state.pause?.answered !== answered, Math.max(nextAtMs - run.nowMs(), 1));
  }
}

async function takeStep(run: Run, step: PauseStep): Promise<void> {
  const { state, knobs, info, input } = run;
  const pause = state.pause;
  if (!waitsForPerson(pause)) return;
  const how = `Answer with \`vigil resume ${info.workflowId}\`, \`vigil input ${info.workflowId} "…"\` or \`vigil stop ${info.workflowId}\`.`;
  const details = { iteration: state.iteration, pausedAt: pause.at };
  if (step.kind === 'remind') {
    pause.reminded = run.nowIso();
    run.sdk.log.info('pause reminder', { pausedAt: pause.at });
    await notifyPeople(
      run,
      'pause_reminder',
      `Still waiting for a person: ${pause.reason.split('\n')[0] ?? ''}`.slice(0, 200),
      `The run has been paused since ${pause.at} and nobody has answered.\n${pause.reason}\n${how}`,
      'warning',
      details,
      `${info.workflowId}:pause_reminder:${pause.at}`,
    );
    return;
  }
  if (step.kind === 'reroute') {
    pause.rerouted = run.nowIso();
    run.sdk.log.info('pause re-routed', { pausedAt: pause.at });
    const at = run.nowIso();
    const title = `Nobody answered this run's question: ${pause.reason.split('\n')[0] ?? ''}`.slice(0, 200);
    const r = await sendNotification(run.acts.people, {
      runId: info.workflowId,
      repoPath: input.repoPath,
      knobs,
      channels: rerouteChannelsOf(knobs),
      event: 'pause_rerouted',
      title,
      message: `The run has been paused since ${pause.at}, waiting for a person; you are its second contact.\n${pause.reason}\n${how}`,
      severity: 'critical',
      details,
      dedupeKey: `${info.workflowId}:pause_rerouted:${pause.at}`,
      at,
    });
    state.notifications = recordNotification(state.notifications, r, 'pause_rerouted', at, r === null);
    if (r)
      run.recordEvent({
        kind: 'notification',
        event: 'pause_rerouted',
        delivered: r.delivered,
        failed: r.failed,
        title,
        severity: 'critical',
      });
    return;
  }
  // The deadline: what onDeadline says, recorded in the journal and told on the run's channels.
  run.sdk.log.warn('pause deadline', { action: step.action, note: step.note });
  run.recordEvent({ kind: 'message', name: 'deadline', by: 'vigil', summary: step.note.slice(0, 300), accepted: true });
  if (step.action === 'stop') {
    // The outcome's reason says it: "stopped by vigil: nobody answered in 72 h: stopped".
    run.stopRequest ??= { reason: step.note, by: 'vigil', now: false };
    run.status = 'stopping';
  } else {
    if (step.action === 'default-answer' && pause.defaultAnswer && state.pendingDirectives.length < LIMITS.pendingDirectives) {
      state.pendingDirectives.push({
        text: `Nobody answered your question in time; go on with your default answer: ${pause.defaultAnswer}`,
        by: 'vigil (default answer)',
        at: run.nowIso(),
      });
    }
    state.deadlineNotes = [...(state.deadlineNotes ?? []), step.note.slice(0, 500)].slice(-10);
    state.pause = null;
    run.status = 'running';
  }
  await notifyPeople(
    run,
    'pause_deadline',
    `No answer in time: ${step.note}`.slice(0, 200),
    `The run was paused since ${pause.at}: ${pause.reason}\n${step.note}.`,
    'critical',
    { ...details, action: step.action },
    `${info.workflowId}:pause_deadline:${pause.at}`,
  );
}
