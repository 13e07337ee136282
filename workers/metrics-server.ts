/**
 * The worker's HTTP endpoint at `--metrics-bind HOST:PORT` (VIGIL_METRICS_BIND):
 *
 * - `/metrics`: Vigil's metrics (workers/metrics.ts) followed by the Temporal SDK's own. The SDK
 *   core serves its Prometheus text on a loopback port of its own (`sdkBind`, chosen here), which
 *   this server reads at each scrape, so one target carries both;
 * - `/healthz`: 200 while the process runs (it answers: the event loop is not stuck);
 * - `/readyz`: 200 while every worker of the process is running and polling its task queues, 503
 *   otherwise (starting, stopping, a poller failed), with a JSON body saying which and when the
 *   worker last took a task.
 *
 * Every request's `Host` must name the endpoint as no other site's page can (workers/metrics-bind.ts
 * `metricsHostAllowed`: loopback names, this machine's name, VIGIL_METRICS_HOSTS, the bind address
 * or, bound to every interface, any IP address); others get 403, so a web page that re-binds its
 * own name to this machine cannot read run ids and spend.
 *
 * Listening happens before the SDK runtime is installed, so an address that cannot be used is a
 * MetricsBindError (exit 2) before anything starts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { Client } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { codecFromEnv } from './codec.js';
import { freePort } from './dev-server.js';
import { MetricsBindError, metricsHostAllowed, parseMetricsHosts } from './metrics-bind.js';
import { VigilMetrics, type ReadinessSource } from './metrics.js';
import { runGaugeSource, type RunGaugeOptions } from './run-gauges.js';

/** The poll state of the workers of one process, and the time of their last task. */
export class WorkerReadiness implements ReadinessSource {
  private workers: readonly Worker[] = [];
  private last: number | null = null;
  private readonly unsubscribe: (() => void)[] = [];

  /** Follows these workers: a rise in their in-flight activations or activities is a task taken. */
  attach(workers: readonly Worker[]): void {
    this.workers = workers;
    for (const w of workers) {
      for (const counts of [w.numInFlightActivations$, w.numInFlightActivities$]) {
        let previous = 0;
        const sub = counts.subscribe((n) => {
          if (n > previous) this.taskTaken();
          previous = n;
        });
        this.unsubscribe.push(() => sub.unsubscribe());
      }
    }
  }

  taskTaken(at: number = Date.now()): void {
    this.last = at;
  }

  lastTaskAt(): number | null {
    return this.last;
  }

  ready(): { ready: boolean; why: string | null } {
    if (this.workers.length === 0) return { ready: false, why: 'starting: the workers are not polling yet' };
    for (const w of this.workers) {
      const s = w.getStatus();
      const queue = w.options.taskQueue;
      if (s.runState !== 'RUNNING') return { ready: false, why: `the worker of "${queue}" is ${s.runState.toLowerCase()}` };
      const pollers = [s.workflowPollerState, s.activityPollerState];
      if (pollers.includes('FAILED')) return { ready: false, why: `a poller of "${queue}" failed` };
      if (s.activityPollerState !== 'POLLING') return { ready: false, why: `"${queue}" is not polled for activities` };
    }
    return { ready: true, why: null };
  }

  /** The /readyz body. */
  report(now: number = Date.now()): Record<string, unknown> {
    const r = this.ready();
    return {
      ready: r.ready,
      ...(r.why ? { why: r.why } : {}),
      workers: this.workers.map((w) => {
        const s = w.getStatus();
        return {
          taskQueue: w.options.taskQueue,
          state: s.runState,
          workflowPoller: s.workflowPollerState,
          activityPoller: s.activityPollerState,
          activitiesInFlight: s.numInFlightActivities,
          activationsInFlight: s.numInFlightWorkflowActivations,
        };
      }),
      lastTaskAt: this.last === null ? null : new Date(this.last).toISOString(),
      lastTaskAgeSeconds: this.last === null ? null : Math.round((now - this.last) / 1000),
    };
  }

  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }
}

export interface MetricsEndpoint {
  /** `http://HOST:PORT` as bound. */
  readonly url: string;
  /** The loopback `IP:PORT` to give the SDK runtime for its own Prometheus text. */
  readonly sdkBind: string;
  readonly metrics: VigilMetrics;
  readonly readiness: WorkerReadiness;
  /** Starts the run-level gauges (through this connection and the payload codec of the environment) and readiness of these workers. */
  attach(workers: readonly Worker[], connection: NativeConnection, namespace: string, opts?: RunGaugeOptions): void;
  close(): Promise<void>;
}

/** `HOST:PORT` (validated by parseMetricsBind) as listen() takes it. */
function splitBind(bind: string): { host: string; port: number } {
  const i = bind.lastIndexOf(':');
  return { host: bind.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(bind.slice(i + 1)) };
}

const HOSTS_HINT = 'list the names Prometheus scrapes it by in VIGIL_METRICS_HOSTS (docs/operations.md#metrics)';

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * Listens at `bind` (throws MetricsBindError when it cannot, or when `hosts` — VIGIL_METRICS_HOSTS
 * by default — is not a list of host names) and serves /metrics, /healthz and /readyz.
 */
export async function serveMetrics(
  bind: string,
  metrics: VigilMetrics = new VigilMetrics(),
  hosts: string | undefined = process.env.VIGIL_METRICS_HOSTS,
): Promise<MetricsEndpoint> {
  const names = parseMetricsHosts(hosts);
  const machine = os.hostname();
  const bindHost = bind.slice(0, bind.lastIndexOf(':'));
  const answersTo = ['a loopback name', machine, ['0.0.0.0', '[::]'].includes(bindHost) ? 'an IP address' : bindHost, ...names].join(', ');
  const sdkBind = `127.0.0.1:${await freePort()}`;
  const readiness = new WorkerReadiness();
  metrics.setReadiness(readiness);
  const started = Date.now();

  const sdkText = async (): Promise<string> => {
    try {
      const res = await fetch(`http://${sdkBind}/metrics`, { signal: AbortSignal.timeout(5000) });
      return res.ok ? await res.text() : `# the Temporal SDK's metrics answered ${res.status}\n`;
    } catch (err) {
      return `# the Temporal SDK's metrics could not be read: ${err instanceof Error ? err.message : String(err)}\n`;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!metricsHostAllowed(req.headers.host, bind, names, machine)) {
      const shownHost = (req.headers.host ?? '').slice(0, 200);
      return send(
        res,
        403,
        'text/plain',
        `refused: Host "${shownHost}" is not a name this endpoint answers to (${answersTo}); ${HOSTS_HINT}\n`,
      );
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'GET only\n');
    switch (url.pathname) {
      case '/metrics': {
        const [own, sdk] = await Promise.all([metrics.text(), sdkText()]);
        return send(res, 200, metrics.registry.contentType, `${own}\n${sdk}`);
      }
      case '/healthz':
        return send(
          res,
          200,
          'application/json',
          `${JSON.stringify({ status: 'ok', pid: process.pid, uptimeSeconds: Math.round((Date.now() - started) / 1000) })}\n`,
        );
      case '/readyz': {
        const body = readiness.report();
        return send(res, body.ready ? 200 : 503, 'application/json', `${JSON.stringify(body)}\n`);
      }
      default:
        return send(res, 404, 'text/plain', 'not found: /metrics, /healthz, /readyz\n');
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', `${err instanceof Error ? err.message : String(err)}\n`);
      else res.destroy();
    });
  });
  const { host, port } = splitBind(bind);
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'Address already in use'
          : err.code === 'EADDRNOTAVAIL'
            ? 'Address not available on this machine'
            : err.message;
      reject(
        new MetricsBindError(
          `cannot serve metrics at ${bind}: ${why} (${err.code ?? 'error'}); choose another --metrics-bind (or VIGIL_METRICS_BIND)`,
        ),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let stopRuns: (() => void) | null = null;

  return {
    url: `http://${shown}:${address.port}`,
    sdkBind,
    metrics,
    readiness,
    attach(workers, connection, namespace, opts = {}) {
      readiness.attach(workers);
      const codec = codecFromEnv();
      const client = new Client({ connection, namespace, ...(codec ? { dataConverter: { payloadCodecs: [codec] } } : {}) });
      metrics.setRunsSource(runGaugeSource(client, opts));
      stopRuns = () => metrics.setRunsSource(() => Promise.resolve(null));
    },
    async close() {
      stopRuns?.();
      readiness.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
