/**
 * The contract of what the CLI's fast path (cli/steer.ts: status, pause, resume, stop, input, ...)
 * asks of Temporal about one run, as one small interface with two implementations:
 *
 * - the light client (cli/wire/client.ts): hand-encoded protobuf over node:http2, a few
 *   milliseconds to load, used whenever payloads are plain JSON (plaintext, TLS, API key, profiles);
 * - the SDK's client (cli/sdk-run-api.ts), used when a payload codec key is configured
 *   (VIGIL_CODEC_KEY_FILE / VIGIL_CODEC_KEY): the light client does not encrypt or decrypt, so
 *   runs with encrypted payloads keep going through the full client and its codec; and by the
 *   commands that hold an SDK client already (watch, wait, logs, checkpoints).
 *
 * Which of them a command gets is cli/open-run-api.ts's choice; both import only this contract.
 * No dependencies at load time (cli/errors.ts has none).
 */
import { matchesErrorName } from './errors.js';

/** The names of Vigil's search attributes the CLI reads (schemas/search-attributes.ts; a unit test keeps them equal). */
export const SA_ITERATION_NAME = 'VigilIteration';
export const SA_STATUS_NAME = 'VigilStatus';

/** What a describe says of a run. */
export interface RunDescription {
  /** As the SDK names it: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, CONTINUED_AS_NEW, TIMED_OUT. */
  status: string;
  /** The VigilIteration search attribute (Int), when set. */
  iteration: number | null;
  /** The VigilStatus search attribute (Keyword), when set. */
  searchStatus: string | null;
  /** The attempt of the pending workflow task (0 when none is pending). */
  pendingWorkflowTaskAttempt: number;
  /** The gates a pending activity's gate pass runs now (its last heartbeat, schemas/call-step.ts); null when none runs. */
  gatesRunning: string[] | null;
}

/** A worker polling a task queue. */
export interface PollerSeen {
  identity: string;
  /** When it last polled, in ms since the epoch; null when the server did not say. */
  lastAccessMs: number | null;
}

/** The workflow's update handler or validator refused the update; `message` is its failure's. */
export class UpdateRejectedError extends Error {
  /** By name, as CliError (cli/errors.ts): the SDK's client path throws it from another copy of this module. */
  static override [Symbol.hasInstance](err: unknown): boolean {
    return matchesErrorName(err, 'UpdateRejectedError');
  }

  override name = 'UpdateRejectedError';
}

export interface RunApi {
  readonly namespace: string;
  /** Rejects with a not-found error (gRPC NOT_FOUND or the SDK's WorkflowNotFoundError) when there is no such run. */
  describe(workflowId: string): Promise<RunDescription>;
  /** A query's answer, within `timeoutMs` (gRPC DEADLINE_EXCEEDED after). */
  query(workflowId: string, name: string, timeoutMs: number): Promise<unknown>;
  /** Sends an update and waits until it completed, within `timeoutMs`; its result, or UpdateRejectedError. */
  update(workflowId: string, name: string, arg: unknown, timeoutMs: number): Promise<unknown>;
  signal(workflowId: string, name: string, arg: unknown): Promise<void>;
  /** The result of a run that completed (follows its continuations); rejects for any other close. */
  result(workflowId: string): Promise<unknown>;
  /** The failure message of the last WorkflowTaskFailed event among the newest 50; null when the server does not answer. */
  lastWorkflowTaskFailure(workflowId: string): Promise<string | null>;
  /** The workers that polled `taskQueue` for activities lately, within 5 s. */
  activityPollers(taskQueue: string): Promise<PollerSeen[]>;
  close(): Promise<void>;
}
