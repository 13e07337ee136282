/**
 * The run's messages: one implementation per message (pause, resume, stop, input, forceReview,
 * budget, waive), reached by its update (validated before it enters history, answered with an
 * acknowledgement) and by its signal (for tools that cannot send updates: an invalid one is logged
 * and listed in status); the rewind step's update and signal (workflows/rewind.ts); the status and
 * call-cancel queries. Installed before the first `await`, so a message that came with the start
 * is handled by them.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ApplicationFailure, log, setHandler, workflowInfo } from '@temporalio/workflow';
import type { SignalDefinition, UpdateDefinition } from '@temporalio/common';
import { parseMessage, type MessageName } from '../../schemas/messages.js';
import { DIRECTIVE_IDS_KEPT, LIMITS, type InvalidMessage } from '../../schemas/run.js';
import type { RunEvent } from '../../schemas/events.js';
import { budgetExceeded } from '../../rules/budget.js';
import { checklistGateResult, mergeLatest } from '../../rules/gates.js';
import { waive as waiveItem } from '../../rules/checklist/state.js';
import { FINDING_ID, liftLatest, WAIVABLE_GATES } from '../../rules/finding-waivers.js';
import { directiveRefusal } from '../../rules/directives.js';
import { messageEvent } from '../../rules/journal.js';
import { taskWaiting, waitingTasks } from '../../rules/tasks.js';
import { StreamWaitingSchema } from '../../schemas/tasks.js';
import {
  budgetSignal,
  waiveSignal,
  waiveUpdate,
  budgetUpdate,
  forceReviewSignal,
  forceReviewUpdate,
  inputSignal,
  inputUpdate,
  pauseSignal,
  pauseUpdate,
  resumeSignal,
  resumeUpdate,
  callCancelQuery,
  statusQuery,
  stopSignal,
  stopUpdate,
  streamWaitingSignal,
  prEventSignal,
  type MessageAck,
} from '../messages.js';
import { installRewind } from '../rewind.js';
import { receivePrEventSignal } from './follow-pr.js';
import { type Run } from './run.js';

/** History size past which a run rolls over at once, even mid agent call (Temporal's hard limit is 50 MB). */
const EMERGENCY_HISTORY_BYTES = 20 * 1024 * 1024;

/** Registers every message handler and query of the run. Call before the first `await`. */
export function installHandlers(run: Run): void {
  const { state, knobs, input, info } = run;
  const publish = (): void => run.publish();
  const recordEvent = (event: RunEvent): void => run.recordEvent(event);
  const ack = (changed: boolean, message: string): MessageAck => run.ack(changed, message);
  const cancelAgentCall = (): void => run.cancelAgentCall();

  // ---- message handling: one implementation per message, reached by update and by signal ----
  const apply = {
    pause: (p: { reason?: string; by?: string }, defaultBy: string): MessageAck => {
      if (state.pause) return ack(false, `already paused by ${state.pause.by}`);
      state.pause = { reason: p.reason ?? '', by: p.by ?? defaultBy, at: run.nowIso() };
      run.call.cancelGates();
      if (run.call.carriesGates) cancelAgentCall();
      log.info('run paused', { by: state.pause.by, reason: state.pause.reason });
      publish();
      return ack(true, 'paused; no new iteration starts until resumed (a running agent call finishes first)');
    },
    resume: (p: { by?: string }, defaultBy: string): MessageAck => {
      if (!state.pause) {
        // A run whose streams wait for a person: its resume reaches them (the fan-out loop sends it).
        const waiting = run.streams.fanningOut && state.tasks ? waitingTasks(state.tasks) : [];
        if (!waiting.length) return ack(false, 'not paused');
        run.streams.resumeWaiting(p.by ?? defaultBy);
        log.info('streams resumed', { by: p.by ?? defaultBy, tasks: waiting.map((t) => t.id) });
        return ack(true, `resumed ${waiting.length} stream(s) waiting for a person: ${waiting.map((t) => t.id).join(', ')}`);
      }
      log.info('run resumed', { by: p.by ?? defaultBy, pausedBy: state.pause.by });
      state.pause = null;
      publish();
      return ack(true, 'resumed');
    },
    stop: (p: { reason?: string; by?: string; now?: boolean }, defaultBy: string): MessageAck => {
      const now = p.now === true;
      if (run.stopRequest && !(now && !run.stopRequest.now)) return ack(false, 'already stopping');
      run.stopRequest = { reason: p.reason ?? '', by: p.by ?? defaultBy, now };
      run.status = 'stopping';
      run.call.cancelGates();
      if (now || run.call.carriesGates) cancelAgentCall();
      publish();
      return ack(
        true,
        now && run.call.running() ? 'stopping now; the running agent call is being cancelled' : 'stopping at the next boundary',
      );
    },
    input: (p: { directive: string; by?: string; id?: string }, defaultBy: string): MessageAck => {
      // A resend of a directive the run already has (its update went unanswered, then --signal): taken once.
      const id = p.id;
      if (id !== undefined && state.directiveIds.includes(id))
        return ack(false, `directive ${id} was already received; it is not queued again`);
      const refused = directiveRefusal(state.pendingDirectives, p.directive);
      if (refused) throw ApplicationFailure.create({ message: `input: ${refused}`, nonRetryable: true });
      state.pendingDirectives.push({ text: p.directive, by: p.by ?? defaultBy, at: run.nowIso(), ...(id !== undefined ? { id } : {}) });
      if (id !== undefined) state.directiveIds = [...state.directiveIds, id].slice(-DIRECTIVE_IDS_KEPT);
      // A directive to a run that waits for a person is an answer: its reminder, re-route and deadline are off.
      if (state.pause && state.pause.by === 'vigil' && !state.pause.answered)
        state.pause.answered = { by: p.by ?? defaultBy, at: run.nowIso() };
      publish();
      return ack(true, id !== undefined ? `directive queued for the next prompt (id ${id})` : 'directive queued for the next prompt');
    },
  };

  const applyForceReview = (p: { reason?: string; by?: string }, defaultBy: string): MessageAck => {
    if (!knobs.councilEnabled) {
      throw ApplicationFailure.create({
        message: 'forceReview: the completion council is disabled for this run (knob councilEnabled)',
        nonRetryable: true,
      });
    }
    if (state.council.forceReview) return ack(false, `a council review is already requested by ${state.council.forceReview.by}`);
    state.council.forceReview = { by: p.by ?? defaultBy, reason: p.reason ?? '', at: run.nowIso() };
    publish();
    return ack(
      true,
      state.pause ? 'the council convenes now; the run stays paused' : 'the council convenes at the next iteration boundary',
    );
  };

  const applyBudget = (p: { usd: number; by?: string }, defaultBy: string): MessageAck => {
    state.budgetUsd = p.usd;
    log.info('budget set', { usd: p.usd, by: p.by ?? defaultBy });
    const over = budgetExceeded(state.spend.usd, p.usd);
    publish();
    return ack(
      true,
      `budget set to $${p.usd.toFixed(2)} (spent ` +
        `$${state.spend.usd.toFixed(2)})${over ? '; still exceeded: the run stays paused' : p.usd === 0 ? '; no budget' : ''}`,
    );
  };

  /** A finding of the integrity gates, waived by its id: the gate's verdict is re-read at once. */
  const applyFindingWaiver = (p: { item: string; reason?: string; by?: string }, defaultBy: string): MessageAck => {
    const known = state.gates.latest.some((g) => WAIVABLE_GATES.has(g.gate) && g.findings.some((f) => f.id === p.item));
    if (!known)
      throw ApplicationFailure.create({
        message: `waive: no integrity or gaming finding "${p.item}" in the latest results`,
        nonRetryable: true,
      });
    if (state.gates.findingWaivers.some((w) => w.id === p.item)) return ack(false, `${p.item} was already waived`);
    const by = p.by ?? defaultBy;
    state.gates.findingWaivers = [...state.gates.findingWaivers, { id: p.item, by, reason: p.reason ?? '', at: run.nowIso() }].slice(-100);
    state.gates.latest = liftLatest(state.gates.latest, state.gates.findingWaivers, state.gates.checklist);
    log.info('finding waived', { id: p.item, by });
    publish();
    return ack(true, `${p.item} waived: it no longer blocks completion`);
  };

  const applyWaive = (p: { item: string; reason?: string; by?: string }, defaultBy: string): MessageAck => {
    if (FINDING_ID.test(p.item)) return applyFindingWaiver(p, defaultBy);
    const cl = state.gates.checklist;
    if (!cl) {
      throw ApplicationFailure.create({
        message: `waive: this run has no PRD checklist${state.gates.checklistProblem ? ` (${state.gates.checklistProblem})` : ''}`,
        nonRetryable: true,
      });
    }
    const r = waiveItem(cl, p.item, p.by ?? defaultBy, p.reason ?? '', run.nowIso());
    if (!r.ok) throw ApplicationFailure.create({ message: `waive: ${r.error}`, nonRetryable: true });
    const changed = r.state.waivers.length !== cl.waivers.length;
    state.gates.checklist = r.state;
    if (changed) {
      // The checklist gate's verdict is re-read at once: a waiver may lift its block.
      const last = state.gates.latest.find((g) => g.gate === 'checklist');
      if (last) state.gates.latest = mergeLatest(state.gates.latest, [checklistGateResult(r.state, last.treeHash, last.iteration)]);
      log.info('checklist item waived', { by: p.by ?? defaultBy });
    }
    publish();
    return ack(changed, changed ? `${p.item} waived: its failure no longer blocks completion` : `${p.item} was already waived`);
  };

  const finishedGuard = (name: MessageName): void => {
    if (run.outcome) throw new Error(`${name}: the run has finished (${run.outcome.status})`);
    if (run.stopRequest && name !== 'stop') throw new Error(`${name}: the run is stopping`);
  };

  /** Messages can grow history while an agent call runs for hours: past the emergency size, interrupt it and roll over. */
  const watchHistorySize = (): void => {
    if (run.rolloverNow || run.outcome) return;
    if (workflowInfo().historySize < EMERGENCY_HISTORY_BYTES) return;
    run.rolloverNow = true;
    log.warn('history near its size limit: rolling over now', { historySize: workflowInfo().historySize });
    cancelAgentCall();
    run.call.cancelGates();
  };

  const recordInvalid = (name: string, kind: 'signal' | 'update', error: string): void => {
    const entry: InvalidMessage = { name, kind, error: error.slice(0, 1000), at: run.nowIso() };
    state.invalidMessages = [...state.invalidMessages, entry].slice(-LIMITS.invalidMessages);
    state.invalidMessageCount += 1;
    log.warn('ignored invalid message', { name, error });
  };

  function wire<N extends MessageName, A extends unknown[]>(
    name: N,
    update: UpdateDefinition<MessageAck, A>,
    signal: SignalDefinition<[unknown?]>,
    handle: (payload: never, defaultBy: string) => MessageAck,
  ): void {
    setHandler(
      update,
      (...args: A) => {
        watchHistorySize();
        const r = parseMessage(name, args[0]);
        if (!r.ok) throw new Error(r.error); // unreachable: the validator ran first
        const answer = handle(r.value as never, 'unknown');
        const p = r.value as Record<string, unknown>;
        recordEvent(messageEvent(name, p, typeof p.by === 'string' ? p.by : 'unknown', true));
        return answer;
      },
      {
        validator: (...args: A) => {
          const r = parseMessage(name, args[0]);
          if (!r.ok) throw new Error(r.error);
          finishedGuard(name);
          // Rejected here, an oversized directive never enters history.
          if (name === 'input') {
            const refused = directiveRefusal(state.pendingDirectives, (r.value as { directive: string }).directive);
            if (refused) throw new Error(`input: ${refused}`);
          }
        },
        description: `${name} the run (validated; answers with an acknowledgement)`,
      },
    );
    setHandler(
      signal,
      (payload?: unknown) => {
        watchHistorySize();
        const r = parseMessage(name, payload);
        if (!r.ok) {
          recordEvent(messageEvent(name, null, 'signal', false, r.error));
          return recordInvalid(name, 'signal', r.error);
        }
        if (run.outcome) return recordInvalid(name, 'signal', `${name}: the run has finished`);
        const p = r.value as Record<string, unknown>;
        const by = typeof p.by === 'string' ? p.by : 'signal';
        try {
          handle(r.value as never, 'signal');
          recordEvent(messageEvent(name, p, by, true));
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          recordEvent(messageEvent(name, p, by, false, why));
          recordInvalid(name, 'signal', why);
        }
      },
      { description: `${name} the run (signal form for tools that cannot send updates)` },
    );
  }

  wire('pause', pauseUpdate, pauseSignal, apply.pause);
  wire('resume', resumeUpdate, resumeSignal, apply.resume);
  wire('stop', stopUpdate, stopSignal, apply.stop);
  wire('input', inputUpdate, inputSignal, apply.input);
  wire('forceReview', forceReviewUpdate, forceReviewSignal, applyForceReview);
  wire('budget', budgetUpdate, budgetSignal, applyBudget);
  wire('waive', waiveUpdate, waiveSignal, applyWaive);
  run.rewinder = installRewind({
    workflowId: info.workflowId,
    repoPath: input.repoPath,
    knobs,
    state,
    acts: run.acts.repo,
    nowIso: () => run.nowIso(),
    closed: () =>
      run.outcome
        ? `the run has finished (${run.outcome.status}); start a new run from a checkpoint with \`vigil rewind ${info.workflowId} --to N --fork\``
        : run.stopRequest
          ? 'the run is stopping'
          : run.streams.fanningOut
            ? `the run's parallel streams are running and its own checkpoints start once they are merged; rewind a stream ` +
              `instead (\`vigil rewind ${info.workflowId}--<task> --to N\`; \`vigil status ${info.workflowId}\` lists them)`
            : null,
    agentRunning: () => run.call.running(),
    cancelAgent: () => cancelAgentCall(),
    ack,
    recordEvent: (e) => recordEvent(e),
    recordInvalid: (name, error) => recordInvalid(name, 'signal', error),
    publish: () => publish(),
  });
  // A stream of this run tells it when it starts or stops waiting for a person (workflows/run/streams.ts).
  setHandler(
    streamWaitingSignal,
    (payload?: unknown) => {
      const r = StreamWaitingSchema.safeParse(payload);
      if (!r.success) return recordInvalid('streamWaiting', 'signal', `streamWaiting: ${r.error.issues[0]?.message ?? 'invalid'}`);
      if (!state.tasks) return recordInvalid('streamWaiting', 'signal', 'streamWaiting: this run has no streams');
      state.tasks = taskWaiting(state.tasks, r.data.task, r.data.waiting);
      publish();
    },
    { description: 'From a stream of this run: it waits for a person now, or no longer' },
  );
  // An event of the pull request the run follows (workflows/run/follow-pr.ts): a redelivered one is taken once.
  setHandler(
    prEventSignal,
    (payload?: unknown) => {
      const r = receivePrEventSignal(run, payload);
      const id = typeof payload === 'object' && payload && 'id' in payload ? String((payload as { id: unknown }).id).slice(0, 100) : '?';
      recordEvent({
        kind: 'message',
        name: 'prEvent',
        by: 'signal',
        summary: r.ok ? `received ${id}` : r.why.slice(0, 300),
        accepted: r.ok,
      });
      if (!r.ok && !r.duplicate) recordInvalid('prEvent', 'signal', r.why);
      if (!r.ok && r.duplicate) log.info('pull request event redelivered: taken once', { id });
    },
    { description: 'An event of the pull request the run follows: red checks, a comment, the base moved, merged, closed' },
  );
  setHandler(statusQuery, () => run.snapshot(), { description: 'The run snapshot (status, iteration, pause, outcome, ...)' });
  // Asked by an agent call that carries a gate pass when it is cancelled (activities/iteration.ts).
  setHandler(callCancelQuery, () => run.callCancelMeant(), {
    description: 'What cancelling the running agent call means: kill the agent, or only skip the gate pass it carries',
  });
}
