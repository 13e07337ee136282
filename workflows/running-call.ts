/**
 * Telling the worker that hosts the run's agent call, at once, that the run has cancelled it.
 *
 * Temporal hands an activity its cancellation in the answer to the activity's next heartbeat, and
 * a call's heartbeats are throttled (workers/worker.ts) so that hundreds of running calls do not
 * flood the server. A STOP --now must not wait for that. So when the run cancels its call, it also
 * tells the worker that processes this workflow task, through a sink: no history, no command, not
 * called on replay. When that worker hosts the call (lib/running-calls.ts), the call hears
 * it at once: `kill` kills the agent, `skipGates` keeps the call from starting its gate pass.
 * Any other worker hears of the cancellation from Temporal, as before.
 */
import { ActivityFailure, ApplicationFailure, proxySinks, type Sinks } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../schemas/activities.js';
import type { CallCancel } from './messages.js';

export interface RunningCallSinks extends Sinks {
  vigilRunningCall: {
    /** The run has cancelled its running agent call; what the cancellation means. */
    cancelled(meant: CallCancel): void;
  };
}

const { vigilRunningCall } = proxySinks<RunningCallSinks>();

export function tellRunningCall(meant: CallCancel): void {
  vigilRunningCall.cancelled(meant);
}

/** The call failed because the run killed it that way, before Temporal's cancellation reached it: the call's cancellation. */
export function callKilledByRun(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FAILURE_TYPES.callKilledByRun;
}
