/**
 * The one-machine stack `vigil demo` and `vigil try` run a run on: the Temporal dev server (or the
 * one already answering), the event store (embedded Postgres under VIGIL_HOME unless DATABASE_URL
 * or --no-store), and a worker in this process polling the shared queue and this host's. Ctrl+C
 * stops the worker (the run lives on in Temporal); `shutdown` stops everything this started.
 */
import type { Client, Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { createHostWorkers } from '../workers/host-workers.js';
import { connect, type Endpoint } from './connection.js';
import { resolveHost } from './hosts.js';
import { connectWorker, DEFAULT_OPERATIONS, installRuntime, localServer, type ServerFlags } from './processes.js';
import { configureWorkerStore, startProcessStore, type StoreFlags } from './store.js';

export interface LocalStack {
  endpoint: Endpoint;
  /** The host the run names, whose queue the worker polls (as `vigil up` and `vigil start` on one machine). */
  host: string;
  client: Client;
  connection: Connection;
  /** The dev server this started, or null when one already answered. */
  server: Awaited<ReturnType<typeof localServer>>['server'];
  /** The event store's address, or null when there is none. */
  storeUrl: string | null;
  /** Settles when the worker stops (after Ctrl+C, or `shutdown`). */
  workerDone: Promise<void>;
  /** Stops the worker, then the store and the server this started; idempotent. */
  shutdown(): Promise<void>;
}

/**
 * Starts the stack. `say` prints a line; `onInterrupt` is told once on SIGINT/SIGTERM, after which
 * the worker shuts down (and `workerDone` settles).
 */
export async function startLocalStack(
  ep: Endpoint,
  opts: ServerFlags & StoreFlags,
  say: (line: string) => void,
  onInterrupt: () => void,
): Promise<LocalStack> {
  installRuntime('WARN', DEFAULT_OPERATIONS, false);
  const host = resolveHost(undefined);
  const { server, endpoint } = await localServer(ep, opts);
  const store = await startProcessStore(process.env, opts, (l) => process.stderr.write(`vigil: warning: ${l}\n`));
  say(`  event store  : ${store.line}`);
  configureWorkerStore(process.env, opts);

  const { client, connection } = await connect(endpoint);
  const native: NativeConnection = await connectWorker(endpoint);
  const worker = await createHostWorkers({ connection: native, namespace: endpoint.namespace, taskQueue: endpoint.taskQueue, host });
  const workerDone = worker.run();

  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) return;
    interrupted = true;
    onInterrupt();
    worker.shutdown();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let stopped: Promise<void> | null = null;
  const shutdown = (): Promise<void> =>
    (stopped ??= (async () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      worker.shutdown();
      await workerDone.catch(() => undefined);
      await native.close();
      await connection.close();
      await store.stop();
      if (server) await server.stop();
    })());

  return { endpoint, host, client, connection, server, storeUrl: store.url, workerDone, shutdown };
}
