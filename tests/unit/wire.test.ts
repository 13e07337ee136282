/**
 * The CLI's light Temporal client (cli/wire/): every request it encodes is decoded here by
 * @temporalio/proto's own classes, every answer it reads is encoded by them (or is a real answer of
 * the dev server), so a wrong field number fails; its payloads are byte for byte the SDK's default
 * converter's. Against the suite's real dev server: describe (status, search attributes, the
 * pending workflow task), not found, signal (read back through the SDK), an update and a query no
 * worker answers (deadline), the pollers of a task queue, the result of a finished run. Over TLS:
 * a node HTTP/2 server with a CA of its own checks the bearer key, the gRPC headers, the deadline
 * and the server name, and answers trailers-only errors. A server that cancels a call at its
 * deadline (as Temporal's does) is a deadline, not a lost connection, through this client and
 * through the SDK's (cli/sdk-run-api.ts, used with a codec key).
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter, defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CliError, EXIT } from '../../cli/errors.js';
import { SA_ITERATION_NAME, SA_STATUS_NAME, UpdateRejectedError } from '../../cli/run-api.js';
import { sdkRunApi } from '../../cli/sdk-run-api.js';
import { lightRunApi } from '../../cli/wire/client.js';
import { GRPC, GrpcChannel, GrpcError } from '../../cli/wire/grpc.js';
import { fields, ProtoWriter } from '../../cli/wire/protobuf.js';
import * as m from '../../cli/wire/temporal.js';
import type { MessageKind } from '../../cli/steer.js';
import { gatesRunning, GATES_STEP } from '../../schemas/call-step.js';
import { SA_ITERATION, SA_STATUS } from '../../schemas/search-attributes.js';
import * as messages from '../../workflows/messages.js';
import { makeCertificates } from '../support/certificates.js';

const { temporal } = proto;
const ws = temporal.api.workflowservice.v1;
const buf = (u: Uint8Array): Buffer => Buffer.from(u);
const sdkPayload = (v: unknown): { metadata: Record<string, Buffer>; data: Buffer } => {
  const p = defaultPayloadConverter.toPayload(v);
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, x]) => [k, Buffer.from(x)])),
    data: Buffer.from(p.data ?? new Uint8Array()),
  };
};

describe('protobuf writer and reader', () => {
  it('round-trips varints up to 64 bits, strings, bytes and nested messages', () => {
    const w = new ProtoWriter()
      .int(1, 300)
      .int(2, 2n ** 62n)
      .int(3, -1)
      .string(4, 'héllo')
      .bytes(5, Buffer.from([0, 1, 2]))
      .message(6, (x) => x.int(1, 7));
    const got = [...fields(w.finish())];
    expect(got.map((f) => f.field)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(got[0]?.int).toBe(300n);
    expect(got[1]?.int).toBe(2n ** 62n);
    expect(got[2]?.int).toBe(2n ** 64n - 1n); // -1 as int64 on the wire
    expect(got[3]?.bytes.toString('utf8')).toBe('héllo');
    expect([...(got[4]?.bytes ?? [])]).toEqual([0, 1, 2]);
    expect([...fields(got[5]?.bytes ?? Buffer.alloc(0))][0]?.int).toBe(7n);
  });

  it('refuses truncated input', () => {
    expect(() => [...fields(Buffer.from([0x0a, 0x05, 0x01]))]).toThrow(/truncated/);
    expect(() => [...fields(Buffer.from([0x08, 0x80]))]).toThrow(/truncated varint/);
  });
});

describe("payloads are the SDK default converter's", () => {
  it('JSON values and undefined, byte for byte', () => {
    for (const v of [{ reason: 'lunch', by: 'alice' }, 'x', 42, null, [1, 'two'], { directive: 'ünïcode ✓' }, undefined]) {
      expect(m.toPayload(v)).toEqual(sdkPayload(v));
      expect(m.fromPayload(sdkPayload(v))).toEqual(v);
    }
  });

  it('an encoding it does not read is an error that says so', () => {
    expect(() => m.fromPayload({ metadata: { encoding: Buffer.from('binary/encrypted') }, data: Buffer.alloc(1) })).toThrow(
      /binary\/encrypted/,
    );
  });

  it('reads the search attributes the schemas define', () => {
    expect(SA_ITERATION_NAME).toBe(SA_ITERATION.name);
    expect(SA_STATUS_NAME).toBe(SA_STATUS.name);
  });
});

describe('requests, decoded by @temporalio/proto', () => {
  it('DescribeWorkflowExecution', () => {
    const r = ws.DescribeWorkflowExecutionRequest.decode(m.describeWorkflowRequest('ns', 'wf-1'));
    expect(r.namespace).toBe('ns');
    expect(r.execution?.workflowId).toBe('wf-1');
    expect(r.execution?.runId).toBe('');
  });

  it('QueryWorkflow: the query type, no arguments, an empty header, reject condition NONE', () => {
    const r = ws.QueryWorkflowRequest.decode(m.queryWorkflowRequest('ns', 'wf-1', 'status'));
    expect(r.namespace).toBe('ns');
    expect(r.execution?.workflowId).toBe('wf-1');
    expect(r.query?.queryType).toBe('status');
    expect(r.query?.queryArgs?.payloads).toEqual([]);
    expect(r.query?.header?.fields).toEqual({});
    expect(r.queryRejectCondition).toBe(temporal.api.enums.v1.QueryRejectCondition.QUERY_REJECT_CONDITION_NONE);
  });

  it('UpdateWorkflowExecution: wait for COMPLETED, update id and identity, name and one JSON argument', () => {
    const arg = { reason: 'lunch', by: 'alice' };
    const r = ws.UpdateWorkflowExecutionRequest.decode(
      m.updateWorkflowRequest({ namespace: 'ns', workflowId: 'wf-1', updateId: 'u-1', identity: '1@host', name: 'pause', args: [arg] }),
    );
    expect(r.namespace).toBe('ns');
    expect(r.workflowExecution?.workflowId).toBe('wf-1');
    expect(r.firstExecutionRunId).toBe('');
    expect(r.waitPolicy?.lifecycleStage).toBe(
      temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED,
    );
    expect(r.request?.meta?.updateId).toBe('u-1');
    expect(r.request?.meta?.identity).toBe('1@host');
    expect(r.request?.input?.name).toBe('pause');
    expect(r.request?.input?.header?.fields).toEqual({});
    const payloads = r.request?.input?.args?.payloads ?? [];
    expect(payloads).toHaveLength(1);
    expect(defaultPayloadConverter.fromPayload(payloads[0] as proto.temporal.api.common.v1.IPayload)).toEqual(arg);
  });

  it('SignalWorkflowExecution', () => {
    const r = ws.SignalWorkflowExecutionRequest.decode(
      m.signalWorkflowRequest({
        namespace: 'ns',
        workflowId: 'wf-1',
        name: 'stop',
        args: [{ now: true }],
        identity: '1@host',
        requestId: 'req-1',
      }),
    );
    expect(r.namespace).toBe('ns');
    expect(r.workflowExecution?.workflowId).toBe('wf-1');
    expect(r.signalName).toBe('stop');
    expect(r.identity).toBe('1@host');
    expect(r.requestId).toBe('req-1');
    expect(r.header?.fields).toEqual({});
    expect(defaultPayloadConverter.fromPayload(r.input?.payloads?.[0] as proto.temporal.api.common.v1.IPayload)).toEqual({ now: true });
  });

  it("GetWorkflowExecutionHistory: the close event, waiting, as the SDK's handle.result() asks", () => {
    const r = ws.GetWorkflowExecutionHistoryRequest.decode(m.closeEventRequest('ns', 'wf-1', 'run-2', Buffer.from('tok')));
    expect(r.namespace).toBe('ns');
    expect(r.execution?.workflowId).toBe('wf-1');
    expect(r.execution?.runId).toBe('run-2');
    expect(Buffer.from(r.nextPageToken).toString()).toBe('tok');
    expect(r.waitNewEvent).toBe(true);
    expect(r.skipArchival).toBe(true);
    expect(r.historyEventFilterType).toBe(temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT);
  });

  it('GetWorkflowExecutionHistoryReverse and DescribeTaskQueue', () => {
    const r = ws.GetWorkflowExecutionHistoryReverseRequest.decode(m.reverseHistoryRequest('ns', 'wf-1', 50));
    expect([r.namespace, r.execution?.workflowId, r.maximumPageSize]).toEqual(['ns', 'wf-1', 50]);
    const q = ws.DescribeTaskQueueRequest.decode(m.describeTaskQueueRequest('ns', 'vigil@alpha', m.TASK_QUEUE_ACTIVITY));
    expect([q.namespace, q.taskQueue?.name, q.taskQueueType]).toEqual([
      'ns',
      'vigil@alpha',
      temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    ]);
  });
});

describe('answers, encoded by @temporalio/proto', () => {
  const E = temporal.api.enums.v1;

  it('DescribeWorkflowExecution: status, search attributes, the pending workflow task attempt', () => {
    const sa = (v: unknown, type: string) => ({
      ...defaultPayloadConverter.toPayload(v),
      metadata: { ...defaultPayloadConverter.toPayload(v).metadata, type: Buffer.from(type) },
    });
    const b = ws.DescribeWorkflowExecutionResponse.encode({
      workflowExecutionInfo: {
        execution: { workflowId: 'wf-1', runId: 'run-1' },
        status: E.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED,
        searchAttributes: { indexedFields: { VigilIteration: sa(7, 'Int'), VigilStatus: sa(['paused'], 'Keyword') } },
      },
      pendingWorkflowTask: { attempt: 3, state: E.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED },
      pendingActivities: [
        {
          activityId: '7',
          activityType: { name: 'runAgent' },
          heartbeatDetails: {
            payloads: [defaultPayloadConverter.toPayload({ step: GATES_STEP, gates: ['static_analysis', 'secret_scan'], pid: 42 })],
          },
        },
        { activityId: '8', activityType: { name: 'notify' } },
        {
          activityId: '9',
          activityType: { name: 'runTests' },
          heartbeatDetails: { payloads: [{ metadata: { encoding: Buffer.from('binary/encrypted') }, data: Buffer.from('x') }] },
        },
      ],
    }).finish();
    const d = m.describeWorkflowResponse(buf(b));
    expect(d).toEqual({
      status: 'CANCELLED',
      runId: 'run-1',
      pendingWorkflowTaskAttempt: 3,
      searchAttributes: { VigilIteration: { type: 'Int', value: 7 }, VigilStatus: { type: 'Keyword', value: ['paused'] } },
      // An encoding the light client does not read is no heartbeat, not an error.
      pendingActivities: [
        { type: 'runAgent', heartbeat: { step: GATES_STEP, gates: ['static_analysis', 'secret_scan'], pid: 42 } },
        { type: 'notify', heartbeat: undefined },
        { type: 'runTests', heartbeat: undefined },
      ],
    });
    expect(d.pendingActivities.map((a) => gatesRunning(a.heartbeat))).toEqual([['static_analysis', 'secret_scan'], null, null]);
  });

  it('QueryWorkflow: the result, or the rejection', () => {
    const ok = ws.QueryWorkflowResponse.encode({
      queryResult: { payloads: [defaultPayloadConverter.toPayload({ iteration: 4 })] },
    }).finish();
    expect(m.queryWorkflowResponse(buf(ok))).toEqual({ ok: true, value: { iteration: 4 } });
    const rejected = ws.QueryWorkflowResponse.encode({
      queryRejected: { status: E.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED },
    }).finish();
    expect(m.queryWorkflowResponse(buf(rejected))).toEqual({ ok: false, rejectedStatus: 'FAILED' });
  });

  it('UpdateWorkflowExecution: the stage, a success payload or a failure message', () => {
    const ok = ws.UpdateWorkflowExecutionResponse.encode({
      updateRef: { workflowExecution: { workflowId: 'wf-1', runId: 'r' }, updateId: 'u' },
      outcome: { success: { payloads: [defaultPayloadConverter.toPayload({ message: 'paused' })] } },
      stage: E.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED,
    }).finish();
    expect(m.updateWorkflowResponse(buf(ok))).toEqual({ stage: 3, outcome: { ok: true, value: { message: 'paused' } } });
    const failed = ws.UpdateWorkflowExecutionResponse.encode({
      outcome: { failure: { message: 'waive: no such item', source: 'TypeScriptSDK' } },
      stage: 3,
    }).finish();
    expect(m.updateWorkflowResponse(buf(failed))).toEqual({ stage: 3, outcome: { ok: false, message: 'waive: no such item' } });
    const accepted = ws.UpdateWorkflowExecutionResponse.encode({
      stage: E.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED,
    }).finish();
    expect(m.updateWorkflowResponse(buf(accepted))).toEqual({ stage: 2, outcome: null });
  });

  it('history: the close event (completed, continued as new, other), the last workflow task failure', () => {
    const H = temporal.api.history.v1;
    const page = (events: proto.temporal.api.history.v1.IHistoryEvent[]) =>
      buf(ws.GetWorkflowExecutionHistoryResponse.encode({ history: { events } }).finish());
    expect(
      m.closeEventResponse(
        page([
          {
            eventType: E.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
            workflowExecutionCompletedEventAttributes: { result: { payloads: [defaultPayloadConverter.toPayload({ exitCode: 0 })] } },
          },
        ]),
      ),
    ).toEqual({ kind: 'completed', value: { exitCode: 0 }, newRunId: '' });
    expect(m.closeEventResponse(page([{ workflowExecutionContinuedAsNewEventAttributes: { newExecutionRunId: 'next' } }]))).toEqual({
      kind: 'continuedAsNew',
      newRunId: 'next',
    });
    expect(m.closeEventResponse(page([{ workflowExecutionTerminatedEventAttributes: { reason: 'x' } }]))).toEqual({ kind: 'other' });
    const empty = ws.GetWorkflowExecutionHistoryResponse.encode({ nextPageToken: Buffer.from('more') }).finish();
    expect(m.closeEventResponse(buf(empty))).toEqual({ kind: 'none', nextPageToken: Buffer.from('more') });
    const reverse = ws.GetWorkflowExecutionHistoryReverseResponse.encode({
      history: H.History.create({
        events: [
          { workflowTaskScheduledEventAttributes: {} },
          { workflowTaskFailedEventAttributes: { failure: { message: 'no such workflow type' } } },
          { workflowTaskFailedEventAttributes: { failure: { message: 'older' } } },
        ],
      }),
    }).finish();
    expect(m.lastWorkflowTaskFailure(buf(reverse))).toBe('no such workflow type');
    expect(
      m.lastWorkflowTaskFailure(buf(ws.GetWorkflowExecutionHistoryReverseResponse.encode({ history: { events: [] } }).finish())),
    ).toBeNull();
  });

  it('DescribeTaskQueue: pollers, their identity and last access time', () => {
    const b = ws.DescribeTaskQueueResponse.encode({
      pollers: [
        { identity: 'w1', lastAccessTime: { seconds: 1_700_000_000, nanos: 250_000_000 } as unknown as proto.google.protobuf.ITimestamp },
        { identity: 'w2' },
      ],
    }).finish();
    expect(m.describeTaskQueueResponse(buf(b))).toEqual([
      { identity: 'w1', lastAccessMs: 1_700_000_000_250 },
      { identity: 'w2', lastAccessMs: null },
    ]);
  });
});

describe('against the real dev server', () => {
  const address = inject('temporalAddress');
  const ep = { address, namespace: 'default', taskQueue: 'vigil', uiUrl: '' };
  let connection: Connection;
  let client: Client;
  const ids: string[] = [];

  beforeAll(async () => {
    connection = await Connection.connect({ address });
    client = new Client({ connection });
  });
  afterAll(async () => {
    await Promise.all(
      ids.map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('test over')
          .catch(() => undefined),
      ),
    );
    await connection?.close();
  });

  /** A run on a queue nobody polls: it stays RUNNING with its workflow task pending. */
  const orphan = async (): Promise<string> => {
    const id = `wire-${randomUUID()}`;
    ids.push(id);
    await client.workflow.start('vigilRun', {
      taskQueue: `nobody-${randomUUID()}`,
      workflowId: id,
      typedSearchAttributes: [
        { key: SA_ITERATION, value: 3 },
        { key: SA_STATUS, value: 'paused' },
      ],
    });
    return id;
  };

  it('describe: status, search attributes and the pending workflow task, as the SDK reads them', async () => {
    const id = await orphan();
    const api = lightRunApi(ep);
    try {
      const d = await api.describe(id);
      const sdk = await client.workflow.getHandle(id).describe();
      expect(d).toEqual({
        status: sdk.status.name,
        iteration: sdk.typedSearchAttributes.get(SA_ITERATION),
        searchStatus: sdk.typedSearchAttributes.get(SA_STATUS),
        pendingWorkflowTaskAttempt: sdk.raw.pendingWorkflowTask?.attempt ?? 0,
        gatesRunning: null,
      });
      expect(d).toMatchObject({ status: 'RUNNING', iteration: 3, searchStatus: 'paused' });
      expect(d.pendingWorkflowTaskAttempt).toBeGreaterThanOrEqual(1);
    } finally {
      await api.close();
    }
  });

  it('a run that does not exist is NOT_FOUND', async () => {
    const api = lightRunApi(ep);
    try {
      const err = await api.describe(`wire-none-${randomUUID()}`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GrpcError);
      expect((err as GrpcError).code).toBe(GRPC.NOT_FOUND);
    } finally {
      await api.close();
    }
  });

  it('a signal arrives with its payload; an update and a query nobody answers end at their deadline', async () => {
    const id = await orphan();
    const api = lightRunApi(ep);
    try {
      await api.signal(id, 'pause', { reason: 'wire', by: 'test' });
      const history = await client.workflow.getHandle(id).fetchHistory();
      const signaled = history.events?.find((e) => e.workflowExecutionSignaledEventAttributes)?.workflowExecutionSignaledEventAttributes;
      expect(signaled?.signalName).toBe('pause');
      expect(defaultPayloadConverter.fromPayload(signaled?.input?.payloads?.[0] as proto.temporal.api.common.v1.IPayload)).toEqual({
        reason: 'wire',
        by: 'test',
      });

      const t0 = Date.now();
      const [u, q] = await Promise.all([
        api.update(id, 'pause', { by: 'test' }, 1500).catch((e: unknown) => e),
        api.query(id, 'status', 1500).catch((e: unknown) => e),
      ]);
      expect((u as GrpcError).code, String(u)).toBe(GRPC.DEADLINE_EXCEEDED);
      expect((q as GrpcError).code, String(q)).toBe(GRPC.DEADLINE_EXCEEDED);
      expect(Date.now() - t0).toBeLessThan(20_000);
    } finally {
      await api.close();
    }
  });

  it('pollers of a queue nobody polls: none; the result of a terminated run: an error, not a value', async () => {
    const id = await orphan();
    await client.workflow.getHandle(id).terminate('over');
    const api = lightRunApi(ep);
    try {
      expect(await api.activityPollers(`nobody-${randomUUID()}`)).toEqual([]);
      expect((await api.describe(id)).status).toBe('TERMINATED');
      await expect(api.result(id)).rejects.toThrow(/did not complete/);
      expect(await api.lastWorkflowTaskFailure(id)).toBeNull();
    } finally {
      await api.close();
    }
  });

  it('no server: "cannot reach Temporal" (exit 4), as the CLI says it', async () => {
    const api = lightRunApi({ ...ep, address: '127.0.0.1:1' });
    const err = await api.describe('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(EXIT.unreachable);
    expect((err as CliError).message).toContain('cannot reach Temporal at 127.0.0.1:1 (14 UNAVAILABLE: connect ECONNREFUSED');
    await api.close();
  });

  it('exports UpdateRejectedError for a refused update (see tests/e2e/cli.test.ts for the real one)', () => {
    expect(new UpdateRejectedError('x')).toBeInstanceOf(Error);
  });
});

describe('over TLS, with an API key and gRPC headers', () => {
  const certs = makeCertificates();
  const seen: http2.IncomingHttpHeaders[] = [];
  const failures = new Map<string, number>();
  let server: http2.Http2SecureServer;
  let address: string;

  beforeAll(async () => {
    server = http2.createSecureServer({ key: readFileSync(certs.serverKey), cert: readFileSync(certs.serverCert) });
    server.on('stream', (stream, headers) => {
      seen.push(headers);
      const trailersOnly = (code: number, message: string): void => {
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), 'grpc-message': encodeURIComponent(message) },
          { endStream: true },
        );
      };
      stream.on('data', () => undefined);
      stream.on('end', () => {
        // x-fail-key: the first two calls carrying it are answered UNAVAILABLE (the server says "try again").
        const failKey = headers['x-fail-key'];
        if (typeof failKey === 'string') {
          const n = (failures.get(failKey) ?? 0) + 1;
          failures.set(failKey, n);
          if (n <= 2) return trailersOnly(GRPC.UNAVAILABLE, 'shard moving, try again');
        }
        if (headers.authorization !== 'Bearer good-key') return trailersOnly(GRPC.UNAUTHENTICATED, 'bad API key: naïve 100% wrong');
        if (headers[':path'] !== '/temporal.api.workflowservice.v1.WorkflowService/DescribeWorkflowExecution')
          return trailersOnly(GRPC.UNIMPLEMENTED, 'unknown method');
        const body = ws.DescribeWorkflowExecutionResponse.encode({ workflowExecutionInfo: { status: 2 } }).finish();
        const frame = Buffer.alloc(5);
        frame.writeUInt32BE(body.length, 1);
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(Buffer.concat([frame, Buffer.from(body)]));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const tls = () => ({ serverRootCACertificate: readFileSync(certs.ca), serverNameOverride: 'vigil-test.local' });

  it('sends the key as a bearer token, the headers, the deadline, the server name as authority', async () => {
    const ch = new GrpcChannel({ address, tls: tls(), apiKey: 'good-key', metadata: { 'X-Tenant': 'acme' } });
    try {
      const answer = await ch.unary(
        '/temporal.api.workflowservice.v1.WorkflowService/DescribeWorkflowExecution',
        m.describeWorkflowRequest('ns', 'wf'),
        5000,
      );
      expect(m.describeWorkflowResponse(answer).status).toBe('COMPLETED');
      const h = seen.at(-1) ?? {};
      expect(h.authorization).toBe('Bearer good-key');
      expect(h['x-tenant']).toBe('acme');
      expect(h['content-type']).toBe('application/grpc');
      expect(h.te).toBe('trailers');
      expect(h['grpc-timeout']).toMatch(/^\d+m$/);
      expect(h[':authority']).toBe('vigil-test.local');
      // The client's name and version, as the SDK's client sends them.
      expect([h['client-name'], h['client-version']]).toEqual([
        'temporal-typescript',
        (createRequire(import.meta.url)('@temporalio/client/package.json') as { version: string }).version,
      ]);
    } finally {
      ch.close();
    }
  });

  it('through the client: the namespace as `temporal-namespace`, as the SDK sends it', async () => {
    const api = lightRunApi({
      address,
      namespace: 'team-ns',
      taskQueue: 'q',
      uiUrl: '',
      tls: tls(),
      apiKey: 'good-key',
      metadata: { 'x-tenant': 'acme' },
    });
    try {
      expect((await api.describe('wf')).status).toBe('COMPLETED');
    } finally {
      await api.close();
    }
    const h = seen.at(-1) ?? {};
    expect([h['temporal-namespace'], h['x-tenant'], h.authorization]).toEqual(['team-ns', 'acme', 'Bearer good-key']);
    expect(h['grpc-timeout']).toBeUndefined(); // describe has no deadline, as with the SDK
  });

  it('an answer that says "try again" (UNAVAILABLE) is retried with backoff, as by the SDK', async () => {
    const api = lightRunApi({
      address,
      namespace: 'ns',
      taskQueue: 'q',
      uiUrl: '',
      tls: tls(),
      apiKey: 'good-key',
      metadata: { 'x-fail-key': 'retry-1' },
    });
    try {
      expect((await api.describe('wf')).status).toBe('COMPLETED');
    } finally {
      await api.close();
    }
    expect(failures.get('retry-1')).toBe(3);
  });

  it('a trailers-only error: its code and its percent-decoded message; through the client, "cannot reach" (exit 4)', async () => {
    const ch = new GrpcChannel({ address, tls: tls(), apiKey: 'bad-key' });
    const err = await ch
      .unary('/temporal.api.workflowservice.v1.WorkflowService/DescribeWorkflowExecution', m.describeWorkflowRequest('ns', 'wf'))
      .catch((e: unknown) => e);
    ch.close();
    expect(err).toBeInstanceOf(GrpcError);
    expect((err as GrpcError).code).toBe(GRPC.UNAUTHENTICATED);
    expect((err as GrpcError).details).toBe('bad API key: naïve 100% wrong');

    const api = lightRunApi({ address, namespace: 'ns', taskQueue: 'q', uiUrl: '', tls: tls(), apiKey: 'bad-key' });
    const viaApi = await api.describe('wf').catch((e: unknown) => e);
    await api.close();
    expect((viaApi as CliError).exitCode).toBe(EXIT.unreachable);
    expect((viaApi as CliError).message).toContain(`cannot reach Temporal at ${address} (TLS, API key) (16 UNAUTHENTICATED: bad API key`);
  });

  it('without the server name the certificate holds, or without its CA, the TLS handshake fails', async () => {
    for (const t of [{ serverRootCACertificate: readFileSync(certs.ca) }, { serverNameOverride: 'vigil-test.local' }]) {
      const ch = new GrpcChannel({ address, tls: t, apiKey: 'good-key' });
      const err = await ch
        .unary('/temporal.api.workflowservice.v1.WorkflowService/DescribeWorkflowExecution', m.describeWorkflowRequest('ns', 'wf'))
        .catch((e: unknown) => e);
      ch.close();
      expect(err).toBeInstanceOf(GrpcError);
      expect((err as GrpcError).transport).toBe(true);
    }
  });
});

describe('a call the server cancels', () => {
  // As Temporal's frontend does at a call's deadline: RST_STREAM CANCEL, no gRPC status. Here the
  // cancel comes a few milliseconds before the client's own timer, as it can on a loaded machine.
  let server: http2.Http2Server;
  let address: string;
  beforeAll(async () => {
    server = http2.createServer();
    server.on('stream', (stream, headers) => {
      stream.on('data', () => undefined);
      const timeout = /^(\d+)m$/.exec(String(headers['grpc-timeout'] ?? ''));
      const early = { 'at-deadline': 10, 'near-deadline': 30 }[String(headers['x-cancel'])];
      const at = early !== undefined && timeout ? Number(timeout[1]) - early : 20;
      setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), at);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const path = '/temporal.api.workflowservice.v1.WorkflowService/QueryWorkflow';

  it('at its deadline: DEADLINE_EXCEEDED, and through the client not "cannot reach"', async () => {
    const ch = new GrpcChannel({ address, metadata: { 'x-cancel': 'at-deadline' } });
    const err = await ch.unary(path, m.describeWorkflowRequest('ns', 'wf'), 400).catch((e: unknown) => e);
    ch.close();
    expect((err as GrpcError).code, String(err)).toBe(GRPC.DEADLINE_EXCEEDED);
    expect((err as GrpcError).transport).toBe(false);

    const api = lightRunApi({ address, namespace: 'ns', taskQueue: 'q', uiUrl: '', metadata: { 'x-cancel': 'at-deadline' } });
    const viaApi = await api.query('wf', 'status', 400).catch((e: unknown) => e);
    await api.close();
    expect(viaApi).toBeInstanceOf(GrpcError);
    expect((viaApi as GrpcError).code).toBe(GRPC.DEADLINE_EXCEEDED);
  });

  it('at its deadline through the SDK client (a codec key): a deadline too, for an update and a query', async () => {
    // grpc-js reports the server's cancel as CANCELLED when it comes before its own timer; the
    // SDK's update wraps that as WorkflowUpdateRPCTimeoutOrCancelledError("Call cancelled").
    // 30 ms early (within the slack) so the cancel comes first however long the call took to leave.
    const connection = Connection.lazy({ address, metadata: { 'x-cancel': 'near-deadline' } });
    const api = sdkRunApi(new Client({ connection }));
    const codeOf = (e: unknown): unknown => (e as { code?: unknown }).code ?? (e as { cause?: { code?: unknown } }).cause?.code;
    try {
      for (const call of [() => api.update('wf', 'pause', {}, 400), () => api.query('wf', 'status', 400)]) {
        const err = await call().catch((e: unknown) => e);
        expect(codeOf(err), String(err)).toBe(GRPC.DEADLINE_EXCEEDED);
      }
    } finally {
      await connection.close();
    }
  });

  it("long before its deadline through the SDK client: still the SDK's own error", async () => {
    const connection = Connection.lazy({ address });
    const api = sdkRunApi(new Client({ connection }));
    try {
      const update = await api.update('wf', 'pause', {}, 5000).catch((e: unknown) => e);
      expect(update).not.toBeInstanceOf(GrpcError);
      expect((update as { cause?: { code?: unknown } }).cause?.code, String(update)).toBe(GRPC.CANCELLED);
    } finally {
      await connection.close();
    }
  });

  it('long before its deadline: CANCELLED, a broken call', async () => {
    const ch = new GrpcChannel({ address });
    const err = await ch.unary(path, m.describeWorkflowRequest('ns', 'wf'), 5000).catch((e: unknown) => e);
    ch.close();
    expect((err as GrpcError).code, String(err)).toBe(GRPC.CANCELLED);
    expect((err as GrpcError).transport).toBe(true);
  });
});

// The proto module's enums, used above, keep their values (a renumbering would show here first).
it("the enum values the light client writes are the protos'", () => {
  const E = temporal.api.enums.v1;
  expect(m.STAGE_COMPLETED).toBe(E.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED);
  expect(m.TASK_QUEUE_ACTIVITY).toBe(E.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY);
  for (const [name, code] of Object.entries(E.WorkflowExecutionStatus)) {
    if (typeof code !== 'number') continue;
    expect(m.workflowStatusName(code)).toBe(name.replace('WORKFLOW_EXECUTION_STATUS_', '').replace(/^CANCELED$/, 'CANCELLED'));
  }
  expect(SearchAttributeType.INT).toBe(SA_ITERATION.type);
  expect(defineSearchAttributeKey(SA_STATUS_NAME, SearchAttributeType.KEYWORD)).toEqual(SA_STATUS);
});

it("the message kinds the CLI sends by name are the run's update and signal names, and `status` its query's", () => {
  const kinds: Record<MessageKind, [{ name: string }, { name: string }]> = {
    pause: [messages.pauseUpdate, messages.pauseSignal],
    resume: [messages.resumeUpdate, messages.resumeSignal],
    stop: [messages.stopUpdate, messages.stopSignal],
    input: [messages.inputUpdate, messages.inputSignal],
    forceReview: [messages.forceReviewUpdate, messages.forceReviewSignal],
    budget: [messages.budgetUpdate, messages.budgetSignal],
    waive: [messages.waiveUpdate, messages.waiveSignal],
  };
  for (const [kind, [update, signal]] of Object.entries(kinds)) expect([update.name, signal.name]).toEqual([kind, kind]);
  expect(messages.statusQuery.name).toBe('status');
});
