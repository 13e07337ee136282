/**
 * What the steps of the run ask of the Temporal workflow SDK, as one port handed to `Run`
 * (`run.sdk`): waits, timers, cancellation scopes, the log, the clock, the execution's info, the
 * UI details, search attributes, child and external workflows. The steps import nothing from
 * `@temporalio/workflow`; the workflow gives them the SDK itself (workflows/sdk-port.ts), a unit
 * test gives them a port of its own (tests/unit/run/), so a step runs in milliseconds without a
 * server. Each member is the SDK function of the same name: the port changes no command.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { SearchAttributePair, SignalDefinition } from '@temporalio/common';
import type { ChildWorkflowHandle, ChildWorkflowOptions, TimerOptions, WorkflowInfo } from '@temporalio/workflow';
import type { Outcome, RunInput } from '../../schemas/run.js';

/** The `vigilRun` workflow function's type, for continue-as-new and its streams. */
export type VigilRun = (input: RunInput) => Promise<Outcome>;

/** A cancellation scope the steps open and cancel (the running agent call, the tool gates' pass). */
export interface Scope {
  run<T>(fn: () => Promise<T>): Promise<T>;
  cancel(): void;
}

/** The workflow log (replay-aware in a workflow). */
export interface PortLog {
  debug(message: string, attrs?: Record<string, unknown>): void;
  info(message: string, attrs?: Record<string, unknown>): void;
  warn(message: string, attrs?: Record<string, unknown>): void;
  error(message: string, attrs?: Record<string, unknown>): void;
}

export type { WorkflowInfo };

export type StreamHandle = ChildWorkflowHandle<VigilRun>;

export interface WorkflowPort {
  /** `condition(fn)`: waits until `fn` holds. */
  until(fn: () => boolean): Promise<void>;
  /** `condition(fn, timeout, options)`: true when `fn` held before the timer fired. */
  until(fn: () => boolean, timeoutMs: number, options?: TimerOptions): Promise<boolean>;
  /** Every update and signal handler has finished. */
  allHandlersFinished(): boolean;
  /** A new cancellation scope (`new CancellationScope()`). */
  scope(): Scope;
  /** `CancellationScope.nonCancellable(fn)`. */
  nonCancellable<T>(fn: () => Promise<T>): Promise<T>;
  /** The current scope is considered cancelled. */
  cancelRequested(): boolean;
  /** `isCancellation(err)`: a cancellation, or an activity or child a cancellation ended. */
  isCancellation(err: unknown): boolean;
  readonly log: PortLog;
  /** The workflow clock (deterministic in a workflow). */
  now(): number;
  /** The seeded workflow random. */
  random(): number;
  /** `workflowInfo()`, read now (its history size and suggestions change as the run goes). */
  info(): WorkflowInfo;
  setCurrentDetails(details: string): void;
  upsertSearchAttributes(updates: SearchAttributePair[]): void;
  /** Signals another workflow (a provider's breaker, a stream, the parent run). */
  signal<Args extends unknown[]>(workflowId: string, def: SignalDefinition<Args> | string, ...args: Args): Promise<void>;
  /** Starts a stream: a child `vigilRun`, cancelled when its run closes (parent close policy REQUEST_CANCEL). */
  startStream(options: Omit<ChildWorkflowOptions, 'parentClosePolicy'> & { args: [RunInput] }): Promise<StreamHandle>;
  /** Ends this execution and starts the next with `input` (never returns). */
  continueAsNew(input: RunInput): Promise<never>;
}
