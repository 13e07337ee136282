/**
 * The light Temporal client of the CLI's fast path: the RunApi (cli/run-api.ts) over one HTTP/2
 * connection, with hand-encoded messages (cli/wire/temporal.ts). It loads in milliseconds where
 * the SDK's client takes most of a second (its generated protobuf classes alone take ~0.4 s).
 * Plain JSON payloads only: with a payload codec key configured the CLI uses the SDK's client.
 *
 * A connection that cannot be made (refused, TLS handshake, timeout) or that the server refuses
 * (UNAVAILABLE, UNAUTHENTICATED) is the CLI's "cannot reach Temporal" (exit 4), as when the SDK's
 * `Connection.connect` fails.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { unreachable, type Endpoint } from '../endpoint.js';
import type { PollerSeen, RunApi, RunDescription } from '../run-api.js';
import { SA_ITERATION_NAME, SA_STATUS_NAME, UpdateRejectedError } from '../run-api.js';
import { gatesRunning } from '../../schemas/call-step.js';
import { GRPC, GrpcChannel, GrpcError } from './grpc.js';
import * as m from './temporal.js';

const SERVICE = '/temporal.api.workflowservice.v1.WorkflowService/';

/**
 * The codes the SDK's client retries (@temporalio/client grpc-retry: UNKNOWN, RESOURCE_EXHAUSTED, ABORTED, OUT_OF_RANGE,
 * UNAVAILABLE, DATA_LOSS), as many times.
 */
const RETRYABLE = new Set([2, 8, 10, 11, 14, 15]);
const MAX_ATTEMPTS = 10;
/** Its backoff: 100 ms (1 s on RESOURCE_EXHAUSTED) times 1.7 per attempt, at most 5 s, ±20 % jitter. */
const backoffMs = (code: number, attempt: number): number =>
  Math.min(1.7 ** (attempt - 1) * (code === 8 ? 1000 : 100), 5000) * (0.8 + Math.random() * 0.4);

/** The identity the SDK's client sends by default. */
const identity = (): string => `${process.pid}@${os.hostname()}`;

export function lightRunApi(ep: Endpoint): RunApi {
  const channel = new GrpcChannel({
    address: ep.address,
    ...(ep.tls !== undefined ? { tls: ep.tls } : {}),
    ...(ep.apiKey ? { apiKey: ep.apiKey } : {}),
    // As the SDK's client: the endpoint's headers, and the namespace of the call as
    // `temporal-namespace` (Temporal Cloud routes API-key calls by it).
    metadata: { ...ep.metadata, 'temporal-namespace': ep.namespace },
  });
  const ns = ep.namespace;

  const call = async (method: string, request: Buffer, deadlineMs?: number): Promise<Buffer> => {
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      const left = deadlineMs === undefined ? undefined : deadlineMs - (Date.now() - started);
      try {
        return await channel.unary(SERVICE + method, request, left);
      } catch (err) {
        // As the SDK's client retries: an answer of the server that says "try again" (not a
        // connection that cannot be made: that is said at once), with backoff, within the deadline.
        if (err instanceof GrpcError && !err.transport && RETRYABLE.has(err.code) && attempt < MAX_ATTEMPTS) {
          const wait = backoffMs(err.code, attempt);
          if (left === undefined || left - (Date.now() - started) > wait) {
            await new Promise((r) => setTimeout(r, wait));
            continue;
          }
        }
        if (err instanceof GrpcError && (err.transport || err.code === GRPC.UNAVAILABLE || err.code === GRPC.UNAUTHENTICATED))
          throw unreachable(ep, err);
        throw err;
      }
    }
  };

  const api: RunApi = {
    namespace: ns,

    async describe(workflowId: string): Promise<RunDescription> {
      const d = m.describeWorkflowResponse(await call('DescribeWorkflowExecution', m.describeWorkflowRequest(ns, workflowId)));
      const iteration = d.searchAttributes[SA_ITERATION_NAME];
      const status = d.searchAttributes[SA_STATUS_NAME];
      return {
        status: d.status,
        iteration: iteration?.type === 'Int' && typeof one(iteration.value) === 'number' ? (one(iteration.value) as number) : null,
        searchStatus: status?.type === 'Keyword' && typeof one(status.value) === 'string' ? (one(status.value) as string) : null,
        pendingWorkflowTaskAttempt: d.pendingWorkflowTaskAttempt,
        gatesRunning: d.pendingActivities.map((a) => gatesRunning(a.heartbeat)).find((g) => g !== null) ?? null,
      };
    },

    async query(workflowId: string, name: string, timeoutMs: number): Promise<unknown> {
      const a = m.queryWorkflowResponse(await call('QueryWorkflow', m.queryWorkflowRequest(ns, workflowId, name), timeoutMs));
      if (!a.ok) throw new Error(`Query rejected: workflow status ${a.rejectedStatus}`);
      return a.value;
    },

    async update(workflowId: string, name: string, arg: unknown, timeoutMs: number): Promise<unknown> {
      const deadline = Date.now() + timeoutMs;
      const request = m.updateWorkflowRequest({
        namespace: ns,
        workflowId,
        updateId: randomUUID(),
        identity: identity(),
        name,
        args: [arg],
      });
      // As the SDK: the same request (the same update id) again until the update has an outcome;
      // the server answers a repeated id with the state of the update it already has.
      for (;;) {
        const a = m.updateWorkflowResponse(await call('UpdateWorkflowExecution', request, deadline - Date.now()));
        if (a.outcome) {
          if (!a.outcome.ok) throw new UpdateRejectedError(a.outcome.message);
          return a.outcome.value;
        }
        if (Date.now() >= deadline) throw new GrpcError(GRPC.DEADLINE_EXCEEDED, 'Deadline exceeded waiting for the update to complete');
      }
    },

    async signal(workflowId: string, name: string, arg: unknown): Promise<void> {
      await call(
        'SignalWorkflowExecution',
        m.signalWorkflowRequest({ namespace: ns, workflowId, name, args: [arg], identity: identity(), requestId: randomUUID() }),
      );
    },

    async result(workflowId: string): Promise<unknown> {
      let runId: string | undefined;
      let token: Buffer | undefined;
      for (let hops = 0; hops < 1000; hops++) {
        const e = m.closeEventResponse(await call('GetWorkflowExecutionHistory', m.closeEventRequest(ns, workflowId, runId, token)));
        if (e.kind === 'none') {
          token = e.nextPageToken;
          continue;
        }
        token = undefined;
        if (e.kind === 'completed' && !e.newRunId) return e.value;
        if ((e.kind === 'completed' || e.kind === 'continuedAsNew') && e.newRunId) {
          runId = e.newRunId;
          continue;
        }
        throw new Error('the run did not complete');
      }
      throw new Error('the run did not close');
    },

    async lastWorkflowTaskFailure(workflowId: string): Promise<string | null> {
      try {
        const page = await call('GetWorkflowExecutionHistoryReverse', m.reverseHistoryRequest(ns, workflowId, 50));
        return m.lastWorkflowTaskFailure(page);
      } catch {
        return null;
      }
    },

    async activityPollers(taskQueue: string): Promise<PollerSeen[]> {
      return m.describeTaskQueueResponse(
        await call('DescribeTaskQueue', m.describeTaskQueueRequest(ns, taskQueue, m.TASK_QUEUE_ACTIVITY), 5000),
      );
    },

    close(): Promise<void> {
      channel.close();
      return Promise.resolve();
    },
  };
  return api;
}

/** A search attribute's value as the SDK reads it: a one-element list (the older encoding) is its element. */
const one = (v: unknown): unknown => (Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v);
