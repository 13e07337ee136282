/**
 * The agent activity's failures that end the call for good (non-retryable): the library says what
 * is wrong (lib/providers/call.ts), the activity says it in Temporal's terms.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../schemas/activities.js';
import { AgentNotRunnable } from '../lib/providers/call.js';

/** An agent that cannot run as configured fails for good: retrying the activity changes nothing. */
export function notRunnableFailure(err: unknown): never {
  if (err instanceof AgentNotRunnable)
    throw ApplicationFailure.create({ type: FAILURE_TYPES.agentNotRunnable, nonRetryable: true, message: err.message });
  throw err;
}
