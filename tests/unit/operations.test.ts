/**
 * Operations settings of the worker, server and up commands, mapped from flags and environment
 * to what the SDK gets: slots and cache, the metrics address, the log format (and its JSON
 * lines), tracing on or off, the worker identity; and the eventStore knob's default from the
 * machine, as `vigil config --explain` shows it.
 */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { DefaultLogger } from '@temporalio/worker';
import { explainKnobs, resolveKnobs } from '../../cli/config.js';
import { CliError, EXIT } from '../../cli/connection.js';
import { Command } from 'commander';
import { resolveOperations, workerOperationsOptions } from '../../cli/operations.js';
import { jsonLogLine, parseLogFormat } from '../../lib/logging.js';
import { IntendedWarningsLogger, parseMetricsBind, runtimeOptions } from '../../workers/runtime.js';
import { tracesUrl } from '../../workers/tracing.js';
import { DEFAULT_TUNING, resolveTuning, tuningWorkerOptions } from '../../workers/tuning.js';
import { workerIdentity } from '../../workers/worker.js';

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(EXIT.usage);
    return (err as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('worker slots', () => {
  it("the worker's --help gives the defaults it uses", () => {
    const help = workerOperationsOptions(new Command('worker')).helpInformation().replace(/\s+/g, ' ');
    expect(help).toContain(`workflow tasks at once (default ${DEFAULT_TUNING.workflowSlots})`);
    expect(help).toContain(`reviews (default ${DEFAULT_TUNING.activitySlots})`);
    expect(help).toContain(`event-store projection (default ${DEFAULT_TUNING.localActivitySlots})`);
    expect(help).toContain(`0 runs it at the worker's priority (default ${DEFAULT_TUNING.gitNiceness}); env VIGIL_GIT_NICENESS`);
  });

  it('default to 200 activity slots, 16 workflow-task slots, the SDK default for local activities and the cache, git at niceness 10', () => {
    expect(resolveTuning({}, {})).toEqual({
      activitySlots: 200,
      workflowSlots: 16,
      localActivitySlots: 100,
      maxCachedWorkflows: null,
      gitNiceness: 10,
    });
    expect(tuningWorkerOptions(DEFAULT_TUNING)).toEqual({
      maxConcurrentActivityTaskExecutions: 200,
      maxConcurrentWorkflowTaskExecutions: 16,
      maxConcurrentLocalActivityExecutions: 100,
    });
  });

  it('take flags over the environment, and map onto the SDK options', () => {
    const env = {
      VIGIL_ACTIVITY_SLOTS: '50',
      VIGIL_WORKFLOW_SLOTS: '12',
      VIGIL_LOCAL_ACTIVITY_SLOTS: '20',
      VIGIL_MAX_CACHED_WORKFLOWS: '500',
      VIGIL_GIT_NICENESS: '5',
    };
    expect(resolveTuning({}, env)).toEqual({
      activitySlots: 50,
      workflowSlots: 12,
      localActivitySlots: 20,
      maxCachedWorkflows: 500,
      gitNiceness: 5,
    });
    const t = resolveTuning({ activitySlots: '400', maxCachedWorkflows: '0', gitNiceness: '0' }, env);
    expect(t).toEqual({ activitySlots: 400, workflowSlots: 12, localActivitySlots: 20, maxCachedWorkflows: 0, gitNiceness: 0 });
    expect(tuningWorkerOptions(t)).toEqual({
      maxConcurrentActivityTaskExecutions: 400,
      maxConcurrentWorkflowTaskExecutions: 12,
      maxConcurrentLocalActivityExecutions: 20,
      maxCachedWorkflows: 0,
    });
  });

  it('refuse what the SDK would silently change, naming the flag or variable and the range', () => {
    const cases: [Record<string, string>, Record<string, string>, string][] = [
      [{ activitySlots: '0' }, {}, '--activity-slots must be an integer from 1 to 10000, got "0"'],
      [{ activitySlots: '2.5' }, {}, '--activity-slots must be an integer from 1 to 10000, got "2.5"'],
      [{}, { VIGIL_ACTIVITY_SLOTS: '-3' }, 'VIGIL_ACTIVITY_SLOTS must be an integer from 1 to 10000, got "-3"'],
      [{ workflowSlots: '1' }, {}, '--workflow-slots must be an integer from 2 to 10000, got "1"'],
      [{ localActivitySlots: 'lots' }, {}, '--local-activity-slots must be an integer from 1 to 10000, got "lots"'],
      [{ maxCachedWorkflows: '1' }, {}, '--max-cached-workflows must be 0 (no cache) or at least 2, got 1'],
      [{ maxCachedWorkflows: '10', workflowSlots: '20' }, {}, '--workflow-slots (20) cannot exceed --max-cached-workflows (10)'],
      [{ gitNiceness: '20' }, {}, '--git-niceness must be an integer from 0 to 19, got "20"'],
      [{}, { VIGIL_GIT_NICENESS: '-5' }, 'VIGIL_GIT_NICENESS must be an integer from 0 to 19, got "-5"'],
    ];
    for (const [flags, env, message] of cases) expect(usageError(() => resolveOperations(flags, env))).toContain(message);
  });
});

describe('--metrics-bind', () => {
  it('takes an IP and a port as the SDK core does; localhost means 127.0.0.1', () => {
    expect(parseMetricsBind('0.0.0.0:9464')).toBe('0.0.0.0:9464');
    expect(parseMetricsBind(' 127.0.0.1:9464 ')).toBe('127.0.0.1:9464');
    expect(parseMetricsBind('localhost:9000')).toBe('127.0.0.1:9000');
    expect(parseMetricsBind('[::]:9464')).toBe('[::]:9464');
    expect(parseMetricsBind('[::1]:1')).toBe('[::1]:1');
  });

  it('refuses anything else with an example', () => {
    for (const [raw, says] of [
      ['9464', 'is not HOST:PORT'],
      ['host:port', 'is not HOST:PORT'],
      [':9464', 'the host must be an IP address'],
      ['metrics.internal:9464', 'the host must be an IP address'],
      ['256.1.1.1:9464', 'the host must be an IP address'],
      ['127.0.0.1:0', 'the port must be from 1 to 65535'],
      ['127.0.0.1:65536', 'the port must be from 1 to 65535'],
      ['::1:9464', 'is not HOST:PORT'],
    ] as const) {
      expect(usageError(() => resolveOperations({ metricsBind: raw }, {}))).toMatch(
        new RegExp(`^--metrics-bind "${raw.replace(/[.[\]]/g, '\\$&')}".*${says}.*e\\.g\\. --metrics-bind 0\\.0\\.0\\.0:9464`),
      );
    }
    expect(usageError(() => resolveOperations({}, { VIGIL_METRICS_BIND: 'x' }))).toMatch(/^VIGIL_METRICS_BIND "x" is not HOST:PORT/);
  });

  it("becomes the runtime's Prometheus exporter; the flag beats VIGIL_METRICS_BIND", () => {
    const ops = resolveOperations({ metricsBind: '127.0.0.1:9100' }, { VIGIL_METRICS_BIND: '0.0.0.0:9464' });
    expect(ops.metricsBind).toBe('127.0.0.1:9100');
    expect(resolveOperations({}, { VIGIL_METRICS_BIND: '0.0.0.0:9464' }).metricsBind).toBe('0.0.0.0:9464');
    expect(resolveOperations({}, {}).metricsBind).toBeNull();
    const opts = runtimeOptions({ level: 'INFO', logFormat: 'text', metricsBind: '127.0.0.1:9100', handleSignals: true });
    expect(opts.telemetryOptions?.metrics).toEqual({ prometheus: { bindAddress: '127.0.0.1:9100' } });
    expect(opts.shutdownSignals).toBeUndefined();
    expect(runtimeOptions({ level: 'INFO', logFormat: 'text', metricsBind: null, handleSignals: false })).toMatchObject({
      shutdownSignals: [],
      telemetryOptions: {},
    });
  });
});

describe('--log-format', () => {
  it('text or json, flag over VIGIL_LOG_FORMAT; json forwards the core log to the same logger', () => {
    expect(resolveOperations({}, {}).logFormat).toBe('text');
    expect(resolveOperations({}, { VIGIL_LOG_FORMAT: 'JSON' }).logFormat).toBe('json');
    expect(resolveOperations({ logFormat: 'text' }, { VIGIL_LOG_FORMAT: 'json' }).logFormat).toBe('text');
    expect(usageError(() => resolveOperations({ logFormat: 'xml' }, {}))).toBe('--log-format must be text or json, got "xml"');
    expect(usageError(() => resolveOperations({}, { VIGIL_LOG_FORMAT: 'pretty' }))).toBe(
      'VIGIL_LOG_FORMAT must be text or json, got "pretty"',
    );
    expect(parseLogFormat(' Text ')).toBe('text');
    const json = runtimeOptions({ level: 'INFO', logFormat: 'json', metricsBind: null, handleSignals: true });
    expect(json.telemetryOptions?.logging).toEqual({ filter: { core: 'WARN', other: 'ERROR' }, forward: {} });
    expect(
      runtimeOptions({ level: 'INFO', logFormat: 'text', metricsBind: null, handleSignals: true }).telemetryOptions?.logging,
    ).toBeUndefined();
  });

  it("the SDK's warning about an activities-only worker (a host's queue) is lowered to DEBUG; other warnings stay", () => {
    const seen = (level: 'INFO' | 'DEBUG'): string[] => {
      const lines: string[] = [];
      const logger = new IntendedWarningsLogger(new DefaultLogger(level, (e) => lines.push(`${e.level} ${e.message}`)));
      logger.warn('No workflows registered, not polling for workflow tasks', { taskQueue: 'vigil@vm' });
      logger.log('WARN', 'No workflows registered, not polling for workflow tasks');
      logger.warn('Worker failed to poll');
      logger.error('No workflows registered, not polling for workflow tasks');
      return lines;
    };
    expect(seen('INFO')).toEqual(['WARN Worker failed to poll', 'ERROR No workflows registered, not polling for workflow tasks']);
    expect(seen('DEBUG').slice(0, 2)).toEqual([
      'DEBUG No workflows registered, not polling for workflow tasks',
      'DEBUG No workflows registered, not polling for workflow tasks',
    ]);
    expect(runtimeOptions({ level: 'INFO', logFormat: 'text', metricsBind: null, handleSignals: true }).logger).toBeInstanceOf(
      IntendedWarningsLogger,
    );
  });

  it('a JSON line: time, lower-case level, message, and meta that JSON can carry', () => {
    const err = new Error('boom');
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    const line = jsonLogLine(
      'WARN',
      'activity failed',
      { workflowId: 'w', attempt: 2n, error: err, at: new Date(0), nested: circular, skipped: undefined },
      Date.UTC(2026, 0, 2, 3, 4, 5),
    );
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      time: '2026-01-02T03:04:05.000Z',
      level: 'warn',
      message: 'activity failed',
      meta: {
        workflowId: 'w',
        attempt: '2',
        error: { name: 'Error', message: 'boom' },
        at: '1970-01-01T00:00:00.000Z',
        nested: { a: 1, self: '[circular]' },
      },
    });
    expect((parsed.meta as Record<string, unknown>).skipped).toBeUndefined();
    expect(line).not.toContain('\n');
    expect(JSON.parse(jsonLogLine('INFO', 'plain'))).not.toHaveProperty('meta');
  });
});

describe('tracing', () => {
  it('is off unless --otel or an OTLP endpoint variable says otherwise', () => {
    expect(resolveOperations({}, {}).otel).toBeNull();
    expect(resolveOperations({ otel: true }, {}).otel).toEqual({ endpoint: null });
    expect(resolveOperations({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otel).toEqual({ endpoint: null });
    expect(resolveOperations({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).otel).toEqual({
      endpoint: null,
    });
    expect(resolveOperations({ otel: 'https://otel.example.com:4318/' }, {}).otel).toEqual({ endpoint: 'https://otel.example.com:4318/' });
    expect(usageError(() => resolveOperations({ otel: 'collector:4318' }, {}))).toContain('OTLP/HTTP needs an http:// or https:// URL');
    expect(usageError(() => resolveOperations({ otel: 'not a url' }, {}))).toContain('--otel "not a url" is not a URL');
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
  });
});

describe('worker identity', () => {
  it('names the host and the process', () => {
    expect(workerIdentity('build-7', 4242)).toBe('vigil-worker:4242@build-7');
    expect(workerIdentity()).toBe(`vigil-worker:${process.pid}@${os.hostname()}`);
  });
});

describe('the eventStore default', () => {
  const resolve = (
    defaults?: Parameters<typeof resolveKnobs>[0]['defaults'],
    env: Record<string, string> = {},
    flags: Record<string, string> = {},
  ) => resolveKnobs({ flags, sets: [], env, cwd: os.tmpdir(), ...(defaults ? { defaults } : {}) });

  it('is on where a store is found, says why, and yields to the environment and --no-store', () => {
    expect(resolve().knobs.eventStore).toBe(false);
    const on = resolve({ eventStore: { value: true, detail: 'local store (/home/ana/.vigil/postgres/url)' } });
    expect(on.knobs.eventStore).toBe(true);
    expect(on.sources.eventStore).toEqual({ source: 'default', detail: 'local store (/home/ana/.vigil/postgres/url)' });
    const explained = explainKnobs(on, { width: 100 })
      .split('\n')
      .find((l) => l.startsWith('eventStore'));
    expect(explained).toMatch(/^eventStore +true +default: local store \(…[^ ]*postgres\/url\)$/);
    expect(explained?.length).toBeLessThanOrEqual(100);
    expect(resolve({ eventStore: { value: true, detail: 'DATABASE_URL is set' } }, { VIGIL_EVENT_STORE: '0' }).knobs.eventStore).toBe(
      false,
    );
    const off = resolve({ eventStore: { value: true, detail: 'DATABASE_URL is set' } }, {}, { eventStore: 'false' });
    expect(off.knobs.eventStore).toBe(false);
    expect(off.sources.eventStore).toEqual({ source: 'flag', detail: '--no-store' });
  });
});
