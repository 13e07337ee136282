/**
 * The RunApi (cli/run-api.ts) through the SDK's client: for a CLI with a payload codec key (the
 * client's codec encrypts and decrypts), and for the commands that hold a client already (watch,
 * wait, logs, checkpoints, start). Nothing loaded at import time: the caller brings the client.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { defineSearchAttributeKey } from '@temporalio/common';
import type { PollerSeen, RunApi, RunDescription } from './run-api.js';
import { SA_ITERATION_NAME, SA_STATUS_NAME, UpdateRejectedError } from './run-api.js';
import { gatesRunning } from '../schemas/call-step.js';
import { DEADLINE_SLACK_MS, GRPC, GrpcError } from './wire/grpc.js';

/** TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY (the enum's value; the protos stay unloaded here). */
const TASK_QUEUE_TYPE_ACTIVITY = 2 as temporal.api.enums.v1.TaskQueueType;

// schemas/search-attributes.ts's keys, rebuilt: that module loads @temporalio/common, which `vigil status` does not need.
const SA_ITERATION: ReturnType<typeof defineSearchAttributeKey<'INT'>> = { name: SA_ITERATION_NAME, type: 'INT' };
const SA_STATUS: ReturnType<typeof defineSearchAttributeKey<'KEYWORD'>> = { name: SA_STATUS_NAME, type: 'KEYWORD' };

const tsMs = (ts: { seconds?: unknown; nanos?: number | null } | null | undefined): number | null =>
  ts ? Number(String(ts.seconds ?? 0)) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6) : null;

/** The gates a pending activity's gate pass runs now, from its last heartbeat (decoded as the client decodes, codec included). */
async function gatesOfPending(client: Client, pending: readonly temporal.api.workflow.v1.IPendingActivityInfo[]): Promise<string[] | null> {
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  for (const a of pending) {
    let payloads = a.heartbeatDetails?.payloads;
    if (!payloads?.length) continue;
    let details: unknown;
    try {
      // Codecs decode in the reverse order they encode (as the SDK's own decoding does).
      for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads);
      details = payloads[0] ? payloadConverter.fromPayload(payloads[0]) : undefined;
    } catch {
      continue; // not readable with this client's key: no gate pass to report
    }
    const gates = gatesRunning(details);
    if (gates) return gates;
  }
  return null;
}

/** The gRPC status code of a client error, its own or its cause's (the SDK wraps service errors). */
function grpcCodeOf(err: unknown): unknown {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  return e?.code ?? e?.cause?.code;
}

/**
 * A call bounded by `timeoutMs`. Temporal's frontend ends a call at the deadline it was sent with
 * RST_STREAM CANCEL and no gRPC status, and on a loaded machine that can reach the client before
 * its own timer fires: grpc-js then reports CANCELLED (the SDK's update says
 * "WorkflowUpdateRPCTimeoutOrCancelledError: Call cancelled"), which the CLI would take for a
 * broken call. Nothing here cancels a call, so a CANCELLED at the deadline is the deadline.
 */
async function withinDeadline<T>(client: Client, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  try {
    return await client.withDeadline(deadline, call);
  } catch (err) {
    if (grpcCodeOf(err) === GRPC.CANCELLED && Date.now() >= deadline - DEADLINE_SLACK_MS) {
      throw new GrpcError(
        GRPC.DEADLINE_EXCEEDED,
        `Deadline exceeded after ${(timeoutMs / 1000).toFixed(3)}s (the server cancelled the call at its deadline)`,
      );
    }
    throw err;
  }
}

export function sdkRunApi(client: Client, close: () => Promise<void> = () => Promise.resolve()): RunApi {
  const namespace = client.options.namespace;
  return {
    namespace,

    async describe(workflowId: string): Promise<RunDescription> {
      const desc = await client.workflow.getHandle(workflowId).describe();
      const sa = desc.typedSearchAttributes;
      const iteration = sa.get(SA_ITERATION);
      const status = sa.get(SA_STATUS);
      return {
        status: desc.status.name,
        iteration: iteration ?? null,
        searchStatus: status ?? null,
        pendingWorkflowTaskAttempt: desc.raw.pendingWorkflowTask?.attempt ?? 0,
        gatesRunning: await gatesOfPending(client, desc.raw.pendingActivities ?? []),
      };
    },

    query(workflowId: string, name: string, timeoutMs: number): Promise<unknown> {
      return withinDeadline(client, timeoutMs, () => client.workflow.getHandle(workflowId).query<unknown>(name));
    },

    async update(workflowId: string, name: string, arg: unknown, timeoutMs: number): Promise<unknown> {
      try {
        return await withinDeadline(client, timeoutMs, () =>
          client.workflow.getHandle(workflowId).executeUpdate<unknown, [unknown]>(name, { args: [arg] }),
        );
      } catch (err) {
        // By name: the error classes stay in the client library.
        if (err instanceof Error && err.name === 'WorkflowUpdateFailedError')
          throw new UpdateRejectedError(err.cause instanceof Error ? err.cause.message : err.message);
        throw err;
      }
    },

    async signal(workflowId: string, name: string, arg: unknown): Promise<void> {
      await client.workflow.getHandle(workflowId).signal(name, arg);
    },

    result(workflowId: string): Promise<unknown> {
      return client.workflow.getHandle(workflowId).result();
    },

    async lastWorkflowTaskFailure(workflowId: string): Promise<string | null> {
      const page = await client.workflowService
        .getWorkflowExecutionHistoryReverse({ namespace, execution: { workflowId }, maximumPageSize: 50 })
        .catch(() => null);
      if (!page) return null;
      return (
        page.history?.events?.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes?.failure?.message ?? null
      );
    },

    async activityPollers(taskQueue: string): Promise<PollerSeen[]> {
      const r = await client.connection.withDeadline(Date.now() + 5000, () =>
        client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType: TASK_QUEUE_TYPE_ACTIVITY }),
      );
      return (r.pollers ?? []).map((p) => ({ identity: p.identity ?? '', lastAccessMs: tsMs(p.lastAccessTime) }));
    },

    close,
  };
}
