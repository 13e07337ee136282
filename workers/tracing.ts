/**
 * Optional OpenTelemetry tracing of a worker (`--otel [URL]`, or OTEL_EXPORTER_OTLP_ENDPOINT /
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set): Temporal's OpenTelemetry interceptors on workflows
 * (`RunWorkflow:vigilRun`, `StartActivity:...`, signals, updates, queries) and activities
 * (`RunActivity:runAgent`, ...), the workflow spans leaving the sandbox through the SDK's sink,
 * everything exported over OTLP/HTTP (JSON) by a batch processor; the trace context travels in
 * Temporal headers, so an activity's span is the child of the workflow's.
 *
 * Loaded only when tracing is on (a dynamic import by workers/worker.ts): a worker without it never
 * loads OpenTelemetry. The workflow half of the interceptors must be inside the workflow bundle,
 * so a traced worker bundles its workflows at start (the prebuilt bundle has no interceptors).
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';
import type { SpanHooks } from './activity-observer.js';

export interface TracingSettings {
  /** The OTLP/HTTP base URL given with --otel (`/v1/traces` is appended); null: the OTEL_EXPORTER_OTLP_* variables, else http://localhost:4318. */
  endpoint: string | null;
  /** The worker's identity, as `service.instance.id`. */
  identity: string;
}

export interface Tracing {
  interceptors: NonNullable<WorkerOptions['interceptors']>;
  sinks: NonNullable<WorkerOptions['sinks']>;
  /** Modules to bundle as workflow interceptors. */
  workflowInterceptorModules: string[];
  /** Vigil's attributes on the activity spans and a span per in-process agent call (workers/activity-observer.ts). */
  spans: SpanHooks;
  /** Where spans go, for the banner. */
  target: string;
  /** Flushes what is buffered and stops exporting (at worker shutdown). */
  shutdown(): Promise<void>;
}

/** The traces URL for an OTLP/HTTP base URL (`http://collector:4318` → `http://collector:4318/v1/traces`). */
export function tracesUrl(base: string): string {
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

function envTarget(env: NodeJS.ProcessEnv): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return tracesUrl(base || 'http://localhost:4318');
}

export function startTracing(s: TracingSettings, env: NodeJS.ProcessEnv = process.env): Tracing {
  const url = s.endpoint ? tracesUrl(s.endpoint) : null;
  const exporter = new OTLPTraceExporter(url ? { url } : {});
  const resource = new Resource({
    'service.name': env.OTEL_SERVICE_NAME?.trim() || 'vigil-worker',
    'service.instance.id': s.identity,
    'host.name': os.hostname(),
  });
  const processor = new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  // Global: the activity interceptors take their tracer, the W3C trace-context propagator (which
  // reads the workflow's span from the activity's headers) and the active context from it.
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  const require = createRequire(import.meta.url);
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(processor, resource) },
    spans: vigilSpans(),
    workflowInterceptorModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
    target: url ?? envTarget(env),
    async shutdown() {
      await provider.shutdown().catch(() => undefined);
    },
  };
}

/** Attributes on the active span, and child spans of it, through the global tracer provider registered above. */
function vigilSpans(): SpanHooks {
  const tracer = trace.getTracer('vigil-worker');
  return {
    annotate(attrs) {
      trace.getActiveSpan()?.setAttributes(attrs);
    },
    child(name, attrs, fn) {
      return tracer.startActiveSpan(name, { attributes: attrs }, async (span) => {
        try {
          return await fn();
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
          throw err;
        } finally {
          span.end();
        }
      });
    },
  };
}
