/**
 * Where a run's repository-bound activities run. A run whose input names a host sends them to that
 * host's task queue (`<workflow queue>@<host>`, polled only by workers on the machine holding the
 * repository); everything else — the workflow itself, the provider breaker (which starts its own
 * workflow on the activity's queue, so it must stay on the shared one) and the event-store
 * projection (a local activity) — stays on the workflow's own queue.
 *
 * Workflow code: deterministic, no I/O.
 */
import { workflowInfo } from '@temporalio/workflow';
import { hostTaskQueue } from '../schemas/hosts.js';
import type { RunInput } from '../schemas/run.js';

/**
 * Activity options putting a proxy on the run's host queue (`{}`: the workflow's own queue). Call
 * once per execution, before the first command, and spread into every repository-bound proxy.
 */
export function onRunHost(input: Pick<RunInput, 'host'>): { taskQueue?: string } {
  if (!input.host) return {};
  return { taskQueue: hostTaskQueue(workflowInfo().taskQueue, input.host) };
}
