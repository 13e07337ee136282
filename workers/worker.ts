/**
 * Builds the Vigil worker: the `vigilRun` workflow plus every activity, with options for long,
 * cancellable agent calls.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import * as activities from '../activities/index.js';

export const DEFAULT_TASK_QUEUE = 'vigil';

/** The workflow entry point next to this file (`.ts` under vitest, `.js` in dist/). */
export function workflowsPath(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return path.resolve(here, '..', 'workflows', `index${ext}`);
}

export interface VigilWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** A prebuilt bundle (tests bundle once per file); default: bundle from `workflowsPath()`. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Agent calls this worker runs at once (council members run in parallel). */
  maxConcurrentActivities?: number;
  identity?: string;
}

export async function createVigilWorker(opts: VigilWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: workflowsPath() }),
    activities,
    identity: opts.identity ?? `vigil-worker@${process.pid}`,
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 8,
    // Cancellation (STOP --now) reaches an activity only with a heartbeat: keep them frequent so
    // the agent's process tree dies within seconds, whatever the heartbeat timeout.
    maxHeartbeatThrottleInterval: '2s',
    defaultHeartbeatThrottleInterval: '2s',
    // On SIGINT/SIGTERM, running agent calls are cancelled (their trees killed) and reported
    // before the process exits; Temporal re-runs the interrupted call on the next worker.
    shutdownGraceTime: '10s',
  });
}

