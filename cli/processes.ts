/**
 * Long-running commands: `vigil server` (embedded dev server with a persistent database under
 * VIGIL_HOME, and the embedded event store), `vigil worker`, and `vigil up` (both in one process,
 * reusing a server that is already answering at the configured address). Server flags (`--port`)
 * beat TEMPORAL_ADDRESS and the profile: they name a local dev server, never another one that
 * happens to answer. Operations settings (log format, metrics, tracing, slots) come resolved from
 * cli/operations.ts.
 */
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection, type LogLevel } from '@temporalio/worker';
import { wrapInProcessAgentCalls } from '../lib/call-observers.js';
import { activityObserver } from '../workers/activity-observer.js';
import { isListening, startDevServer, type DevServer } from '../workers/dev-server.js';
import type { MetricsEndpoint } from '../workers/metrics-server.js';
import { logLine, setLogFormat } from '../lib/logging.js';
import { vigilHome } from '../lib/paths.js';
import { installRuntime as installSdkRuntime, MetricsBindError } from '../workers/runtime.js';
import { resolveTemporalCli } from '../workers/temporal-cli.js';
import { DEFAULT_TUNING, describeTuning } from '../workers/tuning.js';
import { createHostWorkers, hostQueueLine } from '../workers/host-workers.js';
import { workerIdentity } from '../workers/worker.js';
import {
  CliError,
  connectionOptions,
  describeEndpoint,
  EXIT,
  joinHostPort,
  localEndpoint,
  sayWarnings,
  splitHostPort,
  unreachable,
  type Endpoint,
} from './connection.js';
import type { Operations } from './operations.js';
import { openRunsReport, windowLine } from './release-window.js';
import { configureWorkerStore, startProcessStore, type StoreFlags } from './store.js';

export interface ServerFlags {
  port?: number;
  uiPort?: number;
  headless?: boolean;
  db?: string;
  ip?: string;
}

const say = (line: string, meta?: Record<string, unknown>): void => logLine('INFO', line, meta);
const warn = (line: string): void => logLine('WARN', `vigil: warning: ${line}`);

/** Settings of a process without operations flags (the demo). */
export const DEFAULT_OPERATIONS: Operations = {
  logFormat: 'text',
  metricsBind: null,
  otel: null,
  tuning: DEFAULT_TUNING,
};

/**
 * The worker's metrics endpoint (workers/metrics-server.ts: Vigil's metrics and the SDK's,
 * /healthz, /readyz) at --metrics-bind, listening before the runtime is installed (the SDK then
 * serves its own on the loopback port the endpoint names); an address it cannot use is exit 2.
 */
async function openMetrics(ops: Pick<Operations, 'metricsBind'>): Promise<MetricsEndpoint | null> {
  if (!ops.metricsBind) return null;
  const { serveMetrics } = await import('../workers/metrics-server.js');
  try {
    return await serveMetrics(ops.metricsBind);
  } catch (err) {
    if (err instanceof MetricsBindError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
}

/** The SDK runtime for this process (log format, metrics); a metrics address that cannot listen is exit 2. */
export function installRuntime(
  level: LogLevel,
  ops: Pick<Operations, 'logFormat' | 'metricsBind'> = DEFAULT_OPERATIONS,
  handleSignals = true,
): void {
  setLogFormat(ops.logFormat);
  try {
    installSdkRuntime({ level, logFormat: ops.logFormat, metricsBind: ops.metricsBind, handleSignals });
  } catch (err) {
    if (err instanceof MetricsBindError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
}

export function dbFileFor(flags: ServerFlags): string {
  return path.resolve(flags.db ?? path.join(vigilHome(), 'temporal.db'));
}

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '0.0.0.0', '::1', '::']);

/**
 * Where the dev server of `vigil server`, `up` and `demo` listens: `--ip` and `--port` first, then
 * the configured address. With a flag, the server is a local one (127.0.0.1 unless the configured
 * host is local already), whatever TEMPORAL_ADDRESS or the profile point at.
 */
export function devServerTarget(ep: Endpoint, flags: ServerFlags): { host: string; port: number; address: string; explicit: boolean } {
  const [host, port] = splitHostPort(ep.address);
  const explicit = flags.port !== undefined || flags.ip !== undefined;
  const h = flags.ip ?? (explicit && !LOCAL_HOSTS.has(host) ? '127.0.0.1' : host);
  const p = flags.port ?? port;
  return { host: h, port: p, address: joinHostPort(h, p), explicit };
}

export async function startServer(ep: Endpoint, flags: ServerFlags): Promise<DevServer> {
  const target = devServerTarget(ep, flags);
  const cli = await resolveTemporalCli({ log: say });
  const dbFile = dbFileFor(flags);
  const server = await startDevServer({
    cliPath: cli.path,
    dbFile,
    ip: target.host,
    port: target.port,
    ...(flags.uiPort !== undefined ? { uiPort: flags.uiPort } : {}),
    headless: flags.headless ?? false,
    namespace: ep.namespace,
    onWarning: warn,
  });
  say(`Temporal dev server (${cli.version.split('\n')[0]}) is up`);
  say(`  gRPC address : ${server.address}   (TEMPORAL_ADDRESS)`);
  say(`  namespace    : ${server.namespace}`);
  say(`  Web UI       : ${server.uiUrl ?? 'off (--headless)'}`);
  say(`  database     : ${dbFile}   (runs survive restarts)`);
  say(`  server log   : ${server.logFile}`);
  return server;
}

/** The event store of this process (cli/store.ts), with its banner line. */
async function startStore(flags: StoreFlags) {
  const store = await startProcessStore(process.env, flags, warn, say);
  say(`  event store  : ${store.line}`);
  return store;
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (sig: NodeJS.Signals): void => resolve(sig);
    process.once('SIGINT', on);
    process.once('SIGTERM', on);
  });
}

export async function serverCommand(
  ep: Endpoint,
  flags: ServerFlags & StoreFlags,
  ops: Pick<Operations, 'logFormat'> = DEFAULT_OPERATIONS,
): Promise<number> {
  setLogFormat(ops.logFormat);
  const server = await startServer(ep, flags);
  const store = await startStore(flags);
  say('Press Ctrl+C to stop the server.');
  const result = await Promise.race([untilSignal().then(() => 'signal' as const), server.exited.then(() => 'exited' as const)]);
  await store.stop();
  if (result === 'exited') {
    logLine('ERROR', `the Temporal server exited unexpectedly; see ${server.logFile}`);
    return 1;
  }
  await server.stop();
  say(`server stopped; the database keeps every run${store.url ? ', the event store every event' : ''}`);
  return 0;
}

/** The worker's connection: the same options as every client connection (address, TLS, API key, headers). */
export async function connectWorker(ep: Endpoint): Promise<NativeConnection> {
  sayWarnings(ep);
  try {
    return await NativeConnection.connect(connectionOptions(ep));
  } catch (err) {
    throw unreachable(ep, err);
  }
}

/** `host`: this machine's name for runs (`--host`, VIGIL_HOST); its queue is polled next to the shared one. */
export async function workerCommand(
  ep: Endpoint,
  host: string,
  ops: Operations = DEFAULT_OPERATIONS,
  flags: StoreFlags = {},
): Promise<number> {
  const metrics = await openMetrics(ops);
  try {
    installRuntime('INFO', { ...ops, metricsBind: metrics?.sdkBind ?? null });
    return await runWorker(ep, host, ops, flags, true, metrics);
  } finally {
    await metrics?.close();
  }
}

/** The workers of this process (the runtime installed), until SIGINT/SIGTERM. */
async function runWorker(
  ep: Endpoint,
  host: string,
  ops: Operations,
  flags: StoreFlags,
  announceStore: boolean,
  metrics: MetricsEndpoint | null,
): Promise<number> {
  const store = configureWorkerStore(process.env, flags);
  const identity = workerIdentity(host);
  // OpenTelemetry is loaded only when tracing is on.
  const tracing = ops.otel ? (await import('../workers/tracing.js')).startTracing({ endpoint: ops.otel.endpoint, identity }) : null;
  if (tracing) say(`tracing: spans to ${tracing.target}; bundling the workflows with the tracing interceptors`);
  // Each agent call's metrics, log line and span attributes (workers/activity-observer.ts).
  const observer = activityObserver({
    sink: metrics?.metrics ?? null,
    spans: tracing?.spans ?? null,
    onTask: () => metrics?.readiness.taskTaken(),
  });
  const unwrap = wrapInProcessAgentCalls(observer.inProcess);
  const connection = await connectWorker(ep);
  try {
    const workers = await createHostWorkers({
      connection,
      namespace: ep.namespace,
      taskQueue: ep.taskQueue,
      host,
      identity,
      tuning: ops.tuning,
      tracing,
      activityInterceptors: [observer.interceptors],
    });
    metrics?.attach(workers.workers, connection, ep.namespace);
    say(
      `vigil worker polling task queue "${ep.taskQueue}" (namespace "${ep.namespace}", ${describeEndpoint(ep)}) and ` +
        `${hostQueueLine(workers.queues, host)}; Ctrl+C to stop`,
      {
        taskQueue: ep.taskQueue,
        namespace: ep.namespace,
        queues: workers.queues.map((q) => q.name),
        identity,
      },
    );
    say(`  identity     : ${identity}`);
    say(`  slots        : ${describeTuning(ops.tuning)} (per queue)`, { ...ops.tuning });
    if (metrics) say(`  metrics      : http://${ops.metricsBind}/metrics (also /healthz, /readyz)`);
    if (announceStore) say(`  event store  : ${store}`);
    // One line on the open runs against the release window, once the listing answers (the worker does not wait for it).
    void announceOpenRuns(connection, ep.namespace);
    await workers.run();
    say('vigil worker stopped');
    return 0;
  } finally {
    unwrap();
    await tracing?.shutdown();
    await connection.close();
  }
}

/** Says which open runs started before this release's window (docs/operations.md, Upgrading Vigil under open runs); never fails the worker. */
async function announceOpenRuns(connection: NativeConnection, namespace: string): Promise<void> {
  const r = await connection
    .withDeadline(Date.now() + 30_000, () => openRunsReport(new Client({ connection, namespace })))
    .catch((err: unknown) => ({ problem: err instanceof Error ? err.message : String(err) }));
  if ('problem' in r) say(`  open runs    : not listed (${r.problem.split('\n')[0] ?? ''})`);
  else if (r.outside.some((o) => o.certain)) warn(windowLine(r));
  else say(`  ${windowLine(r)}`);
}

/**
 * The server `vigil up` and `vigil demo` work with: the one answering at the target (flags first),
 * else a dev server started there. A server named by flags or started here is a plain local one;
 * without flags, the configured server is used as configured (TLS, API key).
 */
export async function localServer(ep: Endpoint, flags: ServerFlags): Promise<{ server: DevServer | null; endpoint: Endpoint }> {
  const target = devServerTarget(ep, flags);
  const endpoint = target.explicit ? localEndpoint(ep, target.address) : ep;
  if (await isListening(target.host, target.port)) {
    say(`using the Temporal server already answering at ${describeEndpoint(endpoint)}`);
    return { server: null, endpoint };
  }
  if (!target.explicit && (ep.tls || ep.apiKey)) {
    throw new CliError(
      `nothing answers at ${describeEndpoint(ep)}, a server configured with TLS or an API key, so not one to start here.\n` +
        'Check TEMPORAL_ADDRESS or the profile, or pass --port to start a local dev server.',
      EXIT.unreachable,
    );
  }
  const server = await startServer(ep, flags);
  return { server, endpoint: localEndpoint(ep, server.address, server.uiUrl) };
}

export async function upCommand(
  ep: Endpoint,
  flags: ServerFlags & StoreFlags,
  host: string,
  ops: Operations = DEFAULT_OPERATIONS,
): Promise<number> {
  // First: a bad metrics address must fail before a server starts.
  const metrics = await openMetrics(ops);
  let server: DevServer | null = null;
  let store: Awaited<ReturnType<typeof startStore>> | null = null;
  let stopConsole: (() => Promise<void>) | null = null;
  try {
    installRuntime('INFO', { ...ops, metricsBind: metrics?.sdkBind ?? null });
    const local = await localServer(ep, flags);
    server = local.server;
    const endpoint = local.endpoint;
    store = await startStore(flags);
    // The operator console beside the worker (cli/console/command.ts; VIGIL_CONSOLE=0 turns it off).
    stopConsole = await (await import('./console/command.js')).sideConsole(endpoint, say, warn);
    return await runWorker(endpoint, host, ops, flags, false, metrics);
  } finally {
    // The worker has stopped (its last projections done): then the console, the store, the server.
    await stopConsole?.();
    await store?.stop();
    await server?.stop();
    await metrics?.close();
  }
}
