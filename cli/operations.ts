/**
 * Operations flags of the long-running commands, each with its environment variable (the flag
 * wins): `--log-format text|json` (VIGIL_LOG_FORMAT; worker, up, server), `--metrics-bind
 * HOST:PORT` (VIGIL_METRICS_BIND), `--otel [URL]` (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and the worker's slots (workers/tuning.ts; worker, up).
 * Resolved and validated before anything starts: a bad value is exit 2 naming the flag or variable.
 * Light (no SDK, no zod): cli/main.ts loads it at startup.
 */
import { Option, type Command } from 'commander';
import { parseLogFormat, type LogFormat } from '../lib/logging.js';
import { MetricsBindError, parseMetricsBind } from '../workers/metrics-bind.js';
import { DEFAULT_TUNING, resolveTuning, TuningError, TUNING_SPECS, type WorkerTuning } from '../workers/tuning.js';
import { CliError, EXIT } from './errors.js';

/** Raw values as commander hands them over. */
export interface OperationsFlags {
  logFormat?: string;
  metricsBind?: string;
  /** `--otel` alone is true; `--otel URL` the URL. */
  otel?: string | boolean;
  activitySlots?: string;
  workflowSlots?: string;
  localActivitySlots?: string;
  maxCachedWorkflows?: string;
  gitNiceness?: string;
}

export interface Operations {
  logFormat: LogFormat;
  /** Validated `IP:PORT`, or null: no metrics endpoint. */
  metricsBind: string | null;
  /** null: no tracing; `endpoint` null: from the OTEL_EXPORTER_OTLP_* variables. */
  otel: { endpoint: string | null } | null;
  tuning: WorkerTuning;
}

/** Validates the flags and the environment into settings. Throws CliError (exit 2). */
export function resolveOperations(flags: OperationsFlags, env: NodeJS.ProcessEnv): Operations {
  const rawFormat = flags.logFormat ?? env.VIGIL_LOG_FORMAT;
  let logFormat: LogFormat = 'text';
  if (rawFormat !== undefined && rawFormat.trim() !== '') {
    const f = parseLogFormat(rawFormat);
    if (!f)
      throw new CliError(
        `${flags.logFormat !== undefined ? '--log-format' : 'VIGIL_LOG_FORMAT'} must be text or json, got "${rawFormat}"`,
        EXIT.usage,
      );
    logFormat = f;
  }

  let metricsBind: string | null = null;
  const rawBind = flags.metricsBind ?? env.VIGIL_METRICS_BIND;
  if (rawBind !== undefined && rawBind.trim() !== '') {
    try {
      metricsBind = parseMetricsBind(rawBind, flags.metricsBind !== undefined ? '--metrics-bind' : 'VIGIL_METRICS_BIND');
    } catch (err) {
      if (err instanceof MetricsBindError) throw new CliError(err.message, EXIT.usage);
      throw err;
    }
  }

  let otel: Operations['otel'] = null;
  if (typeof flags.otel === 'string') {
    let u: URL;
    try {
      u = new URL(flags.otel);
    } catch {
      throw new CliError(
        `--otel "${flags.otel}" is not a URL; give the collector's OTLP/HTTP address, e.g. --otel http://localhost:4318`,
        EXIT.usage,
      );
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new CliError(`--otel "${flags.otel}": OTLP/HTTP needs an http:// or https:// URL, e.g. http://localhost:4318`, EXIT.usage);
    otel = { endpoint: flags.otel };
  } else if (flags.otel === true || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) {
    otel = { endpoint: null };
  }

  let tuning: WorkerTuning;
  try {
    tuning = resolveTuning(
      {
        activitySlots: flags.activitySlots,
        workflowSlots: flags.workflowSlots,
        localActivitySlots: flags.localActivitySlots,
        maxCachedWorkflows: flags.maxCachedWorkflows,
        gitNiceness: flags.gitNiceness,
      },
      env,
    );
  } catch (err) {
    if (err instanceof TuningError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
  return { logFormat, metricsBind, otel, tuning };
}

/** `--log-format` (worker, up, server). */
export function logFormatOption(cmd: Command): Command {
  return cmd.addOption(
    new Option(
      '--log-format <format>',
      'text, or json: one JSON object per line, the SDK log included (default: VIGIL_LOG_FORMAT, else text)',
    ),
  );
}

const TUNING_HELP: Record<keyof WorkerTuning, string> = {
  activitySlots: `activity executions at once: agent calls, git, tests, gates, council rounds and reviews (default ${DEFAULT_TUNING.activitySlots})`,
  workflowSlots: `workflow tasks at once (default ${DEFAULT_TUNING.workflowSlots})`,
  localActivitySlots: `local activities at once, e.g. the event-store projection (default ${DEFAULT_TUNING.localActivitySlots})`,
  maxCachedWorkflows: "workflows kept in the worker's cache; 0 turns it off (default: the SDK's, from the heap size)",
  gitNiceness:
    `CPU niceness of the git the worker runs to inspect and checkpoint repositories, 0-19; 0 runs it at the worker's priority ` +
    `(default ${DEFAULT_TUNING.gitNiceness})`,
};

/** The worker's operations flags (worker, up): log format, metrics, tracing, slots. */
export function workerOperationsOptions(cmd: Command): Command {
  logFormatOption(cmd)
    .option(
      '--metrics-bind <host:port>',
      'serve Prometheus metrics of the SDK at http://HOST:PORT/metrics (default: VIGIL_METRICS_BIND, else none)',
    )
    .option(
      '--otel [url]',
      'trace workflows and activities with OpenTelemetry, exported over OTLP/HTTP to URL (default: ' +
        'OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318); on when OTEL_EXPORTER_OTLP_ENDPOINT is set',
    );
  for (const spec of TUNING_SPECS) cmd.option(`${spec.flag} <n>`, `${TUNING_HELP[spec.key]}; env ${spec.env}`);
  return cmd;
}
