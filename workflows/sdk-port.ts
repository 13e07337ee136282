/**
 * The run's port onto the Temporal workflow SDK (workflows/run/port.ts): each member is the SDK
 * function of the same name, called where the step calls it, so the commands are the SDK's own.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { SignalDefinition } from '@temporalio/common';
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  setCurrentDetails,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  type TimerOptions,
} from '@temporalio/workflow';
import type { RunInput } from '../schemas/run.js';
import type { VigilRun, WorkflowPort } from './run/port.js';

function until(fn: () => boolean): Promise<void>;
function until(fn: () => boolean, timeoutMs: number, options?: TimerOptions): Promise<boolean>;
function until(fn: () => boolean, timeoutMs?: number, options?: TimerOptions): Promise<boolean | void> {
  if (timeoutMs === undefined) return condition(fn);
  return options === undefined ? condition(fn, timeoutMs) : condition(fn, timeoutMs, options);
}

/** The SDK itself, as the run's port. */
export function temporalPort(): WorkflowPort {
  return {
    until,
    allHandlersFinished,
    scope: () => new CancellationScope(),
    nonCancellable: (fn) => CancellationScope.nonCancellable(fn),
    cancelRequested: () => CancellationScope.current().consideredCancelled,
    isCancellation,
    log,
    now: () => Date.now(), // deterministic: workflow clock
    random: () => Math.random(), // deterministic: seeded workflow random
    info: workflowInfo,
    setCurrentDetails,
    upsertSearchAttributes,
    signal: <Args extends unknown[]>(workflowId: string, def: SignalDefinition<Args> | string, ...args: Args) =>
      getExternalWorkflowHandle(workflowId).signal(def, ...args),
    startStream: (options) => startChild<VigilRun>('vigilRun', { ...options, parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL }),
    continueAsNew: (input: RunInput) => continueAsNew<VigilRun>(input),
  };
}
