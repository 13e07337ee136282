/**
 * Where a run's repository-bound activities run. A run whose input names a host sends them to that
 * host's task queue (`<workflow queue>@<host>`, polled only by workers on the machine holding the
 * repository); everything else — the workflow itself, the provider breaker (which starts its own
 * workflow on the activity's queue, so it must stay on the shared one) and the event-store
 * projection (a local activity) — stays on the workflow's own queue.
 *
 * Workflow code: deterministic, no I/O.
 */
import { deprecatePatch, workflowInfo } from '@temporalio/workflow';
import { hostTaskQueue } from '../schemas/hosts.js';
import type { RunInput } from '../schemas/run.js';

/**
 * Host task queues. Runs that name a host record this marker; runs without one never ask it.
 * Deprecated by 0.5.0 (every run that names a host took this path since 0.4.0); 0.6.0 deletes the call.
 */
export const HOSTS_PATCH = 'vigil-hosts-v1';

/**
 * Activity options putting a proxy on the run's host queue (`{}`: the workflow's own queue). Call
 * once per execution, before the first command, and spread into every repository-bound proxy.
 */
export function onRunHost(input: Pick<RunInput, 'host'>): { taskQueue?: string } {
  if (!input.host) return {};
  deprecatePatch(HOSTS_PATCH);
  return { taskQueue: hostTaskQueue(workflowInfo().taskQueue, input.host) };
}
