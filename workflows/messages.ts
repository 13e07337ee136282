/**
 * Message definitions shared by the workflow, the `vigil` CLI and any SDK client: updates (with
 * validated payloads and an acknowledgement), signals of the same names for tools that can only
 * signal (`temporal workflow signal --name pause --input '{"reason":"lunch"}'`), and the `status`
 * query.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import {
  CALL_CANCEL_QUERY,
  type BudgetPayload,
  type CallCancel,
  type ForceReviewPayload,
  type InputPayload,
  type PausePayload,
  type ResumePayload,
  type RewindPayload,
  type StopPayload,
  type WaivePayload,
} from '../schemas/messages.js';
import type { RunStatus, StatusSnapshot } from '../schemas/status.js';

/** What every update answers: whether it changed anything, and the run's state after it. */
export interface MessageAck {
  changed: boolean;
  message: string;
  status: RunStatus;
  iteration: number;
  paused: boolean;
}

export const pauseUpdate = defineUpdate<MessageAck, [PausePayload]>('pause');
export const resumeUpdate = defineUpdate<MessageAck, [ResumePayload]>('resume');
export const stopUpdate = defineUpdate<MessageAck, [StopPayload]>('stop');
export const inputUpdate = defineUpdate<MessageAck, [InputPayload]>('input');
/** Convene the completion council at the next boundary, whatever the cadence. */
export const forceReviewUpdate = defineUpdate<MessageAck, [ForceReviewPayload]>('forceReview');
/** Set the run's spend limit (USD); a run paused on its budget continues once resumed under it. */
export const budgetUpdate = defineUpdate<MessageAck, [BudgetPayload]>('budget');
/** Waive a PRD checklist item: its failure no longer blocks completion. */
export const waiveUpdate = defineUpdate<MessageAck, [WaivePayload]>('waive');
/**
 * Take the run back to just after an iteration with a checkpoint: answered once done (a running
 * agent call is cancelled first), or rejected with the reason, changing nothing.
 */
export const rewindUpdate = defineUpdate<MessageAck, [RewindPayload]>('rewind');

// Signals take `unknown`: whatever a tool sends is validated in the workflow, and an invalid
// payload is ignored and reported in status instead of failing the run.
export const pauseSignal = defineSignal<[unknown?]>('pause');
export const resumeSignal = defineSignal<[unknown?]>('resume');
export const stopSignal = defineSignal<[unknown?]>('stop');
export const inputSignal = defineSignal<[unknown?]>('input');
export const forceReviewSignal = defineSignal<[unknown?]>('forceReview');
export const budgetSignal = defineSignal<[unknown?]>('budget');
export const waiveSignal = defineSignal<[unknown?]>('waive');
export const rewindSignal = defineSignal<[unknown?]>('rewind');
/** From a stream (a child run of a run split into tasks) to its run: it waits for a person now, or no longer (schemas/tasks.ts StreamWaiting). */
export const streamWaitingSignal = defineSignal<[unknown?]>('streamWaiting');
/** An event of the pull request the run follows (schemas/pr-event.ts): from `vigil hooks` or `vigil pr-event`. */
export const prEventSignal = defineSignal<[unknown?]>('prEvent');

export const statusQuery = defineQuery<StatusSnapshot>('status');

/** What a cancellation of the running agent call means (schemas/messages.ts `CallCancel`, with the query's name). */
export type { CallCancel };
export const callCancelQuery = defineQuery<CallCancel>(CALL_CANCEL_QUERY);

export const WORKFLOW_TYPE = 'vigilRun';
