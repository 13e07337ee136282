/**
 * How the long-running processes (`vigil worker`, `up`, `server`, `demo`) log: `text` (Vigil's
 * lines on stdout as they always were, the SDK's log on stderr) or `json` (`--log-format json`,
 * VIGIL_LOG_FORMAT=json): every line on stdout is one JSON object
 * `{"time","level","message","meta"?}` — Vigil's own lines, the SDK's log (worker, activity and
 * workflow loggers, with the workflowId, runId, activityType, taskQueue ... it attaches as meta),
 * and the SDK core's log, forwarded to the same logger (workers/runtime.ts).
 *
 * No runtime dependency: every command may print through it without loading the SDK.
 */
/** The SDK's log levels, spelled here so that lib/ needs nothing of Temporal (its `LogLevel` is the same union). */
export type LogLevel = 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

let format: LogFormat = 'text';

export function setLogFormat(f: LogFormat): void {
  format = f;
}

export function logFormat(): LogFormat {
  return format;
}

/** `text` or `json` (case-insensitive), else null. */
export function parseLogFormat(raw: string): LogFormat | null {
  const v = raw.trim().toLowerCase();
  return (LOG_FORMATS as readonly string[]).includes(v) ? (v as LogFormat) : null;
}

/** A value JSON can carry: errors as name/message/stack, bigints as strings, cycles cut. */
function plain(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) {
    return {
      name: value.name,
      message: value.message,
      ...(value.stack ? { stack: value.stack } : {}),
      ...(value.cause !== undefined ? { cause: plain(value.cause, seen) } : {}),
    };
  }
  if (value instanceof Date) return value.toISOString();
  if (value === null || typeof value !== 'object') return typeof value === 'function' || typeof value === 'symbol' ? String(value) : value;
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => plain(v, seen));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = plain(v, seen);
  return out;
}

/** One JSON log line (without the newline). `timeMs` defaults to now. */
export function jsonLogLine(level: LogLevel, message: string, meta?: Record<string, unknown>, timeMs: number = Date.now()): string {
  const m = meta && Object.keys(meta).length ? (plain(meta, new WeakSet()) as Record<string, unknown>) : undefined;
  return JSON.stringify({
    time: new Date(timeMs).toISOString(),
    level: level.toLowerCase(),
    message,
    ...(m && Object.keys(m).length ? { meta: m } : {}),
  });
}

/**
 * One of Vigil's own lines. Text: info on stdout, warnings and errors on stderr, as printed
 * before; json: a JSON object on stdout.
 */
export function logLine(level: LogLevel, message: string, meta?: Record<string, unknown>): void {
  if (format === 'json') {
    // Text alignment (a banner's indented lines) means nothing in a JSON field.
    process.stdout.write(`${jsonLogLine(level, message.trim(), meta)}\n`);
    return;
  }
  const stream = level === 'WARN' || level === 'ERROR' ? process.stderr : process.stdout;
  stream.write(`${message}\n`);
}
