/**
 * The `vigilReadLog` workflow: one chunk of a run's iteration log, read by a worker on the host that
 * holds the repository (`vigil logs`). A workflow of its own rather than an Update on the run:
 * a finished run takes no Update, and log text has no place in the run's own history (it would
 * grow with every read). Started on the shared queue; its one activity goes to the run's host queue.
 * It always completes: a host whose worker does not pick the read up within `answerSeconds` is an
 * answer (`no_worker`), not a failure.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, TimeoutFailure } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import { ReadLogWorkflowInputSchema, type ReadLogAnswer, type ReadLogWorkflowInput } from '../schemas/logs.js';

export async function vigilReadLog(raw: ReadLogWorkflowInput): Promise<ReadLogAnswer> {
  const parsed = ReadLogWorkflowInputSchema.safeParse(raw);
  if (!parsed.success) throw ApplicationFailure.nonRetryable(`invalid log request: ${parsed.error.message}`, 'InvalidLogRequest');
  const input = parsed.data;
  const { readRunLog } = proxyActivities<typeof activities>({
    ...(input.hostQueue ? { taskQueue: input.hostQueue } : {}),
    // Nobody polls the host's queue when no worker picks the read up this fast (not retried).
    scheduleToStartTimeout: input.answerSeconds * 1000,
    // Reading 256 KiB takes milliseconds; a following read waits for the log first.
    startToCloseTimeout: input.request.waitMs + 30_000,
    heartbeatTimeout: 10_000,
    retry: { maximumAttempts: 2, initialInterval: '1s' },
  });
  try {
    return { kind: 'chunk', chunk: await readRunLog(input.request) };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    if (err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START')
      return { kind: 'no_worker', queue: input.hostQueue };
    return { kind: 'failed', message: (err.cause?.message ?? err.message).slice(0, 2000) };
  }
}
