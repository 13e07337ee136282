/**
 * The `askProviderBreaker` activity: asks the provider's circuit breaker entity
 * (`vigil-provider-<provider>`, workflows/provider-breaker-workflow.ts) whether a call may go out,
 * starting the entity on this activity's own task queue if it is not running (update-with-start,
 * conflict policy USE_EXISTING). Returns the breaker's decision (small: the decision and a state of
 * a few numbers).
 *
 * It uses the worker's client from the activity context (`Context.current().client`, bound to the
 * worker's namespace, connection, identity and data converter; in SDK 1.24 every worker created
 * with a connection provides it: see `Worker.client` in @temporalio/worker). Idempotent: the
 * update id is derived from the calling workflow, run and activity id, so a retried attempt gets
 * the answer of the first (and the entity recognises a retried probe ask across its own
 * continue-as-new by the same id).
 *
 * Reporting an outcome is not an activity: the run workflow signals the entity directly
 * (`reportSignal` in workflows/provider-breaker-messages.ts). The ask goes by its name (schemas/provider-breaker.ts).
 */
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  AskProviderBreakerInputSchema,
  BREAKER_MESSAGE_NAMES,
  BREAKER_WORKFLOW_TYPE,
  breakerWorkflowId,
  INVALID_BREAKER_ASK,
  parseBreakerPayload,
  type AskAnswer,
  type AskPayload,
  type AskProviderBreakerInput,
} from '../schemas/provider-breaker.js';
import type { vigilProviderBreaker } from '../workflows/provider-breaker-workflow.js';

export async function askProviderBreaker(raw: AskProviderBreakerInput): Promise<AskAnswer> {
  const parsed = parseBreakerPayload('askProviderBreaker', AskProviderBreakerInputSchema, raw);
  if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.error, INVALID_BREAKER_ASK);
  const input = parsed.value;
  const ctx = Context.current();
  const { taskQueue, workflowExecution, activityId } = ctx.info;
  const caller = workflowExecution ? `${workflowExecution.workflowId}/${workflowExecution.runId}` : 'standalone';
  const askId = input.askId ?? `${caller}/${activityId}`;
  const workflowId = breakerWorkflowId(input.provider);

  const start = new WithStartWorkflowOperation<typeof vigilProviderBreaker>(BREAKER_WORKFLOW_TYPE, {
    workflowId,
    // The entity is served by the same workers as the runs that ask it.
    taskQueue,
    args: [{ provider: input.provider, ...(input.config ? { config: input.config } : {}) }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: `Vigil provider circuit breaker · ${input.provider}`,
    staticDetails:
      `Shared by every Vigil run using \`${input.provider}\`. \`vigil providers\` lists it; \`vigil providers --reset ` +
      `${input.provider}\` closes it.`,
  });
  try {
    return await ctx.client.workflow.executeUpdateWithStart<typeof vigilProviderBreaker, AskAnswer, [AskPayload]>(
      BREAKER_MESSAGE_NAMES.ask,
      {
        args: [{ runId: input.runId, askId, ...(input.leaseMs !== undefined ? { leaseMs: input.leaseMs } : {}) }],
        // Deduplicated by the server within one execution of the entity: a retried attempt gets the first answer.
        updateId: `ask:${askId}`.slice(0, 1000),
        startWorkflowOperation: start,
      },
    );
  } catch (err) {
    // The breaker rejected the payload (its validator): retrying cannot help.
    if (err instanceof WorkflowUpdateFailedError) {
      const why = err.cause instanceof Error ? err.cause.message : err.message;
      throw ApplicationFailure.nonRetryable(`provider breaker ${workflowId} refused the ask: ${why}`, INVALID_BREAKER_ASK);
    }
    throw err;
  }
}
