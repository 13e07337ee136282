/**
 * Operating a worker, as an operator would: `vigil worker` processes against the suite's dev
 * server with Prometheus metrics (scraped after a real run: the SDK's activity and workflow-task
 * metrics, labelled with the task queue), its identity with the host name, JSON logs (every line
 * parses), OpenTelemetry spans received by a plain OTLP/HTTP endpoint in the test, and bad
 * operations flags refused with exit 2 before anything starts.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveHost } from '../../cli/hosts.js';
import { freePort } from '../../workers/dev-server.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  NAMESPACE,
  loopInput,
  startRun,
  temporalAddress,
  uniqueId,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { runVigil, show, startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';

let env: TestEnv;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});

afterAll(async () => {
  for (const w of workers) await w.stop();
  await env?.close();
});

function workerEnv(taskQueue: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_NAMESPACE: NAMESPACE,
    VIGIL_TASK_QUEUE: taskQueue,
    // No local event store from the machine's own VIGIL_HOME.
    VIGIL_HOME: mkdtempSync(path.join(os.tmpdir(), 'vigil-home-')),
    ...extra,
  };
}

/** A short run (one iteration that claims completion) on `taskQueue`, to its end. */
async function shortRun(taskQueue: string): Promise<string> {
  const repo = makeRepo();
  const scenario = writeScenario(repo, { version: 1, iterations: [{ appends: { 'work.txt': 'done\n' }, claim: 'file' }] });
  const workflowId = uniqueId('ops');
  const handle = await startRun(env, taskQueue, loopInput(repo, scenario), workflowId);
  const outcome = (await handle.result()) as { status: string };
  expect(outcome.status).toBe('completion_promise_fulfilled');
  return workflowId;
}

/** The metric lines named `name` (with a suffix such as `_bucket`) carrying every label in `labels`. */
function metricLines(text: string, name: string, labels: Record<string, string>): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .filter((l) => Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
}

describe('vigil worker --metrics-bind', () => {
  it("serves the SDK's metrics for the worker's task queue, and the worker's identity names the host", async () => {
    const taskQueue = uniqueId('metrics');
    const port = await freePort();
    const worker = await startWorkerProcess(workerEnv(taskQueue), 90_000, ['--metrics-bind', `127.0.0.1:${port}`]);
    workers.push(worker);
    await waitUntil('the banner', () => worker.output().includes('metrics      :'), 10_000);
    expect(worker.output()).toContain(`metrics      : http://127.0.0.1:${port}/metrics`);
    expect(worker.output()).toContain('slots        : 200 activity slots');

    await shortRun(taskQueue);
    const text = await waitUntil(
      'the run to show in the metrics',
      async () => {
        const t = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return metricLines(t, 'temporal_activity_execution_latency', { activity_type: 'runAgent', task_queue: taskQueue }).length
          ? t
          : null;
      },
      30_000,
      500,
    );
    expect(
      metricLines(text, 'temporal_activity_execution_latency', {
        activity_type: 'runAgent',
        task_queue: taskQueue,
        workflow_type: 'vigilRun',
      }).length,
    ).toBeGreaterThan(0);
    expect(
      metricLines(text, 'temporal_workflow_task_execution_latency', { task_queue: taskQueue, workflow_type: 'vigilRun' }).length,
    ).toBeGreaterThan(0);
    expect(metricLines(text, 'temporal_workflow_completed', { task_queue: taskQueue, workflow_type: 'vigilRun' }).length).toBeGreaterThan(
      0,
    );
    // The slot gauges show the 200 activity slots.
    const slots = metricLines(text, 'temporal_worker_task_slots_available', { task_queue: taskQueue, worker_type: 'ActivityWorker' });
    expect(slots.length, text.slice(0, 2000)).toBeGreaterThan(0);
    expect(Number(slots[0]?.split(' ').at(-1))).toBe(200);

    const described = await env.client.workflowService.describeTaskQueue({
      namespace: NAMESPACE,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    });
    const identities = (described.pollers ?? []).map((p) => p.identity);
    // The host the worker serves (no --host, no VIGIL_HOST: this machine's name).
    expect(identities).toContain(`vigil-worker:${worker.pid}@${resolveHost(undefined, {})}`);
  });
});

describe('vigil worker --log-format json', () => {
  it('writes only JSON lines: its own, the SDK worker log, and workflow logs with their run ids', async () => {
    const taskQueue = uniqueId('jsonlog');
    const worker = await startWorkerProcess(workerEnv(taskQueue, { VIGIL_LOG_FORMAT: 'json' }));
    workers.push(worker);
    const workflowId = await shortRun(taskQueue);
    await waitUntil('the run-finished log line', () => worker.stdout().includes('run finished'), 15_000);
    await worker.stop();

    expect(worker.stderr()).toBe('');
    const lines = worker
      .stdout()
      .split('\n')
      .filter((l) => l.trim() !== '');
    const records = lines.map((l) => {
      try {
        return JSON.parse(l) as { time: string; level: string; message: string; meta?: Record<string, unknown> };
      } catch {
        throw new Error(`not a JSON line: ${l}`);
      }
    });
    for (const r of records) {
      expect(Number.isNaN(Date.parse(r.time)), JSON.stringify(r)).toBe(false);
      expect(['trace', 'debug', 'info', 'warn', 'error']).toContain(r.level);
      expect(typeof r.message).toBe('string');
    }
    expect(records.find((r) => r.message.includes('polling task queue'))?.meta).toMatchObject({ taskQueue, namespace: NAMESPACE });
    expect(records.find((r) => r.meta?.sdkComponent === 'worker' && r.meta.state === 'RUNNING')?.meta).toMatchObject({ taskQueue });
    expect(records.find((r) => r.message === 'run finished')?.meta).toMatchObject({
      workflowId,
      taskQueue,
      workflowType: 'vigilRun',
      status: 'completion_promise_fulfilled',
    });
    expect(records.at(-1)?.message).toBe('vigil worker stopped');
  });
});

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
}

/** A plain OTLP/HTTP (JSON) endpoint: every span posted to /v1/traces. */
async function otlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; resources: Record<string, unknown>[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const resources: Record<string, unknown>[] = [];
  const read = async (req: IncomingMessage): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    return req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const data = JSON.parse(body.toString('utf8')) as {
          resourceSpans?: {
            resource?: { attributes?: { key: string; value: Record<string, unknown> }[] };
            scopeSpans?: { spans?: OtlpSpan[] }[];
          }[];
        };
        for (const rs of data.resourceSpans ?? []) {
          resources.push(Object.fromEntries((rs.resource?.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]])));
          for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, resources, close: () => new Promise((r) => server.close(() => r())) };
}

describe('tracing with OpenTelemetry', () => {
  it('exports the workflow and its activities as one trace over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    const receiver = await otlpReceiver();
    try {
      const taskQueue = uniqueId('otel');
      // The traced worker bundles its workflows (with the interceptors) at start: allow for it.
      const worker = await startWorkerProcess(
        workerEnv(taskQueue, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '200' }),
        240_000,
      );
      workers.push(worker);
      expect(worker.output()).toContain(`tracing: spans to ${receiver.url}/v1/traces`);
      await shortRun(taskQueue);
      await waitUntil(
        'the workflow and agent spans',
        () =>
          receiver.spans.some((s) => s.name === 'RunWorkflow:vigilRun') && receiver.spans.some((s) => s.name === 'RunActivity:runAgent'),
        60_000,
        250,
      );
      const workflow = receiver.spans.find((s) => s.name === 'RunWorkflow:vigilRun') as OtlpSpan;
      const agent = receiver.spans.find((s) => s.name === 'RunActivity:runAgent') as OtlpSpan;
      const scheduled = receiver.spans.find((s) => s.name === 'StartActivity:runAgent') as OtlpSpan;
      expect(scheduled).toBeDefined();
      // One trace: the activity's span is the child of the workflow's StartActivity span.
      const all = receiver.spans.map((s) => `${s.name} ${s.traceId} ${s.spanId} <- ${s.parentSpanId ?? ''}`).join('\n');
      expect(agent.traceId, all).toBe(workflow.traceId);
      expect(agent.parentSpanId).toBe(scheduled.spanId);
      expect(
        receiver.resources.some(
          (r) =>
            r['service.name'] === 'vigil-worker' && r['service.instance.id'] === `vigil-worker:${worker.pid}@${resolveHost(undefined, {})}`,
        ),
      ).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});

describe('bad operations flags', () => {
  it('exit 2 with what to pass instead, before anything starts', async () => {
    const base = workerEnv(uniqueId('bad'));
    const cases: { args: string[]; env?: Record<string, string>; says: string | RegExp }[] = [
      {
        args: ['worker', '--metrics-bind', 'nonsense'],
        says: '--metrics-bind "nonsense" is not HOST:PORT; e.g. --metrics-bind 0.0.0.0:9464',
      },
      { args: ['worker', '--metrics-bind', 'metrics.example.com:9464'], says: 'the host must be an IP address' },
      { args: ['up', '--metrics-bind', '127.0.0.1:70000'], says: 'the port must be from 1 to 65535' },
      { args: ['worker'], env: { VIGIL_METRICS_BIND: ':x' }, says: 'VIGIL_METRICS_BIND ":x" is not HOST:PORT' },
      { args: ['worker', '--activity-slots', '0'], says: '--activity-slots must be an integer from 1 to 10000, got "0"' },
      {
        args: ['worker'],
        env: { VIGIL_WORKFLOW_SLOTS: 'many' },
        says: 'VIGIL_WORKFLOW_SLOTS must be an integer from 2 to 10000, got "many"',
      },
      {
        args: ['worker', '--max-cached-workflows', '10', '--workflow-slots', '20'],
        says: '--workflow-slots (20) cannot exceed --max-cached-workflows (10)',
      },
      { args: ['server', '--log-format', 'xml'], says: '--log-format must be text or json, got "xml"' },
      { args: ['worker', '--otel', 'collector:4318'], says: 'OTLP/HTTP needs an http:// or https:// URL' },
    ];
    for (const c of cases) {
      const r = await runVigil(c.args, { ...base, ...c.env });
      expect(r.code, `${c.args.join(' ')}\n${show(r)}`).toBe(2);
      expect(r.stderr).toContain(typeof c.says === 'string' ? c.says : '');
      if (c.says instanceof RegExp) expect(r.stderr).toMatch(c.says);
    }

    // A port already taken: the SDK cannot listen, and says which.
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const r = await runVigil(['worker', '--metrics-bind', `127.0.0.1:${port}`], base);
      expect(r.code, show(r)).toBe(2);
      expect(r.stderr).toMatch(
        new RegExp(`cannot serve metrics at 127\\.0\\.0\\.1:${port}: .*Address already in use.*choose another --metrics-bind`),
      );
    } finally {
      taken.close();
    }
  });
});
