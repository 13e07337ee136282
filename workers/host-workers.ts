/**
 * A Vigil worker process on a host: two Temporal workers on one connection, run together and shut
 * down together. One polls the shared task queue (the workflows and every activity: runs started
 * without a host, and runs from before hosts, work as they always did); the other polls the host's
 * own queue, `<task queue>@<host>` (activities only: the repository-bound work of the runs whose
 * repository lives on this machine).
 */
import type { Worker } from '@temporalio/worker';
import { hostTaskQueue } from '../schemas/hosts.js';
import { createVigilWorker, workerIdentity, type VigilWorkerOptions } from './worker.js';

export interface HostWorkersOptions extends Omit<VigilWorkerOptions, 'workflows'> {
  /** The host this process serves (a normalised host name); null: the shared queue only. */
  host: string | null;
}

export interface PolledQueue {
  name: string;
  serves: 'workflows and activities' | 'activities';
}

export interface HostWorkers {
  /** The shared queue first, then the host's queue (when there is a host). */
  readonly queues: readonly PolledQueue[];
  readonly identity: string | undefined;
  readonly workers: readonly Worker[];
  /** Runs every worker until all have stopped; when one stops (or fails), the others are shut down. */
  run(): Promise<void>;
  /** Starts a graceful shutdown of every worker still running. */
  shutdown(): void;
}

/** The worker identity Temporal records on every task it starts (ActivityTaskStarted): the host's name in it (workerIdentity). */
export function hostIdentity(host: string, pid: number = process.pid): string {
  return workerIdentity(host, pid);
}

export async function createHostWorkers(opts: HostWorkersOptions): Promise<HostWorkers> {
  const { host, ...base } = opts;
  const identity = opts.identity ?? (host ? hostIdentity(host) : undefined);
  const common = { ...base, ...(identity ? { identity } : {}) };
  const shared = await createVigilWorker(common);
  const workers: Worker[] = [shared];
  const queues: PolledQueue[] = [{ name: opts.taskQueue, serves: 'workflows and activities' }];
  if (host) {
    const queue = hostTaskQueue(opts.taskQueue, host);
    workers.push(await createVigilWorker({ ...common, taskQueue: queue, workflows: false }));
    queues.push({ name: queue, serves: 'activities' });
  }
  const shutdown = (): void => {
    for (const w of workers) {
      if (w.getState() !== 'RUNNING') continue;
      try {
        w.shutdown();
      } catch {
        /* already stopping */
      }
    }
  };
  return {
    queues,
    identity,
    workers,
    shutdown,
    async run() {
      const results = await Promise.allSettled(workers.map((w) => w.run().finally(shutdown)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

/** `"vigil@alpha" (the activities of runs on host "alpha")`: the host's queue a worker process polls besides the shared one. */
export function hostQueueLine(queues: readonly PolledQueue[], host: string): string {
  const q = queues.find((x) => x.serves === 'activities');
  return q ? `"${q.name}" (the activities of runs on host "${host}")` : 'no host queue';
}
