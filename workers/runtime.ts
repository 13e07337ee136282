/**
 * The process-wide Temporal SDK runtime of a long-running Vigil process: its logger (text or JSON,
 * lib/logging.ts), and Prometheus metrics (`--metrics-bind HOST:PORT`, VIGIL_METRICS_BIND):
 * the SDK's own worker, poller, slot, workflow-task and activity metrics, served at
 * http://HOST:PORT/metrics. Installed once, before any connection.
 */
import {
  DefaultLogger,
  Runtime,
  type LogEntry,
  type Logger,
  type LogLevel,
  type LogMetadata,
  type RuntimeOptions,
} from '@temporalio/worker';
import { jsonLogLine, type LogFormat } from '../lib/logging.js';
import { MetricsBindError } from './metrics-bind.js';

export { MetricsBindError, parseMetricsBind } from './metrics-bind.js';

export interface RuntimeSettings {
  level: LogLevel;
  logFormat: LogFormat;
  /** `IP:PORT` for the Prometheus endpoint (validated by parseMetricsBind); null: no metrics. */
  metricsBind: string | null;
  /** false: the caller handles SIGINT/SIGTERM itself (the demo). */
  handleSignals: boolean;
}

const writeJsonEntry = (entry: LogEntry): void => {
  process.stdout.write(`${jsonLogLine(entry.level, entry.message, entry.meta, Number(entry.timestampNanos / 1_000_000n))}\n`);
};

/**
 * SDK warnings about what Vigil does on purpose, logged at DEBUG instead: the worker of a host's
 * task queue runs activities only (workers/worker.ts), and the SDK warns about every such worker.
 */
const INTENDED = new Set(['No workflows registered, not polling for workflow tasks']);

/** `inner`, with the warnings in INTENDED lowered to DEBUG. */
export class IntendedWarningsLogger implements Logger {
  constructor(private readonly inner: Logger) {}
  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    this.inner.log(level === 'WARN' && INTENDED.has(message) ? 'DEBUG' : level, message, meta);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/** The SDK runtime's logger: the SDK's default (stderr) for text, JSON lines on stdout for json. */
export function runtimeLogger(level: LogLevel, format: LogFormat): Logger {
  return new IntendedWarningsLogger(format === 'json' ? new DefaultLogger(level, writeJsonEntry) : new DefaultLogger(level));
}

/** The runtime options for these settings (pure; tested). */
export function runtimeOptions(s: RuntimeSettings): RuntimeOptions {
  return {
    logger: runtimeLogger(s.level, s.logFormat),
    ...(s.handleSignals ? {} : { shutdownSignals: [] }),
    telemetryOptions: {
      // JSON: the core's own log goes through the same logger, so every line is one object.
      ...(s.logFormat === 'json' ? { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } } : {}),
      ...(s.metricsBind ? { metrics: { prometheus: { bindAddress: s.metricsBind } } } : {}),
    },
  };
}

const SHUTDOWN_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGUSR2'];
const SIGNAL_NUMBERS: Record<string, number> = { SIGINT: 2, SIGQUIT: 3, SIGTERM: 15, SIGUSR2: 12 };

/**
 * The SDK's handler starts a graceful shutdown on the first signal and then removes itself. A
 * signal-exit hook (execa registers one while it runs a child: git, the dev server) that finds
 * itself the last listener at that moment re-raises the signal and kills the process mid-shutdown.
 * This listener stays, so that never happens; a second signal ends the process at once.
 */
function guardShutdownSignals(): void {
  let seen = 0;
  for (const sig of SHUTDOWN_SIGNALS) {
    process.on(sig, () => {
      seen += 1;
      if (seen > 1) process.exit(128 + (SIGNAL_NUMBERS[sig] ?? 1));
    });
  }
}

/** Installs the runtime. A metrics endpoint that cannot listen throws MetricsBindError. */
export function installRuntime(s: RuntimeSettings): void {
  try {
    Runtime.install(runtimeOptions(s));
    if (s.handleSignals) guardShutdownSignals();
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (s.metricsBind && /prometheus|socket|address/i.test(msg)) {
      throw new MetricsBindError(`cannot serve metrics at ${s.metricsBind}: ${msg}; choose another --metrics-bind (or VIGIL_METRICS_BIND)`);
    }
    throw err;
  }
}
