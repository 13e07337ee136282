/**
 * `vigil worker`: connects to Temporal (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE) and serves the run
 * workflow and its activities on VIGIL_TASK_QUEUE until SIGINT/SIGTERM.
 */
import { NativeConnection } from '@temporalio/worker';
import { createVigilWorker } from './worker.js';

export interface WorkerProcessOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  log?: (line: string) => void;
}

export async function runWorkerProcess(opts: WorkerProcessOptions): Promise<void> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const connection = await NativeConnection.connect({ address: opts.address });
  try {
    const worker = await createVigilWorker({ connection, namespace: opts.namespace, taskQueue: opts.taskQueue });
    log(`vigil worker: polling task queue "${opts.taskQueue}" in namespace "${opts.namespace}" at ${opts.address} (Ctrl+C to stop)`);
    await worker.run();
    log('vigil worker: stopped');
  } finally {
    await connection.close();
  }
}
