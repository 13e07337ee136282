/**
 * The few Temporal WorkflowService messages the CLI's light client sends and reads, encoded and
 * decoded by hand. Every field number is Temporal's (temporal/api/.../*.proto as shipped with
 * @temporalio/proto 1.24); tests/unit/wire.test.ts checks each request against @temporalio/proto's
 * own classes and decodes real answers of the dev server, so a wrong number fails there.
 *
 * Payloads are the SDK's default JSON payload converter's: metadata `encoding: json/plain` and the
 * value as JSON bytes, `binary/null` for undefined. Runs whose payloads are encrypted (a codec key
 * configured) never come here: the CLI uses the full client for them (cli/open-run-api.ts).
 */
import { fields, int32, int64, mapEntry, ProtoWriter, str, type ProtoField } from './protobuf.js';

const ENCODING = 'encoding';
const JSON_PLAIN = 'json/plain';
const BINARY_NULL = 'binary/null';

/** temporal.api.enums.v1.WorkflowExecutionStatus, named as the TypeScript SDK names them (CANCELED is CANCELLED there). */
const STATUS_NAMES = [
  'UNSPECIFIED',
  'RUNNING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TERMINATED',
  'CONTINUED_AS_NEW',
  'TIMED_OUT',
  'PAUSED',
] as const;
export const workflowStatusName = (code: number): string => STATUS_NAMES[code] ?? 'UNKNOWN';

/** UpdateWorkflowExecutionLifecycleStage.COMPLETED */
export const STAGE_COMPLETED = 3;
/** HistoryEventFilterType.CLOSE_EVENT */
const HISTORY_CLOSE_EVENT = 2;
/** QueryRejectCondition.NONE (the SDK client's default) */
const QUERY_REJECT_NONE = 1;
/** TaskQueueType.ACTIVITY */
export const TASK_QUEUE_ACTIVITY = 2;

export interface Payload {
  metadata: Record<string, Buffer>;
  data: Buffer;
}

export class PayloadError extends Error {
  override name = 'PayloadError';
}

/** A value as the SDK's default payload converter writes it. */
export function toPayload(value: unknown): Payload {
  if (value === undefined) return { metadata: { [ENCODING]: Buffer.from(BINARY_NULL) }, data: Buffer.alloc(0) };
  return { metadata: { [ENCODING]: Buffer.from(JSON_PLAIN) }, data: Buffer.from(JSON.stringify(value), 'utf8') };
}

/** A payload's value; only the JSON and null encodings (what Vigil's runs write without a codec). */
export function fromPayload(p: Payload): unknown {
  const encoding = p.metadata[ENCODING]?.toString('utf8');
  if (encoding === BINARY_NULL) return undefined;
  if (encoding === JSON_PLAIN) return JSON.parse(p.data.toString('utf8')) as unknown;
  throw new PayloadError(
    `a payload in encoding "${encoding ?? '(none)'}", which the light client does not read (only ${JSON_PLAIN}, ${BINARY_NULL})`,
  );
}

function writePayload(w: ProtoWriter, p: Payload): void {
  // temporal.api.common.v1.Payload: metadata = 1 (map<string, bytes>), data = 2
  w.bytesMap(1, p.metadata).bytes(2, p.data);
}

function writePayloads(w: ProtoWriter, values: readonly unknown[]): void {
  // temporal.api.common.v1.Payloads: payloads = 1
  for (const v of values) w.message(1, (pw) => writePayload(pw, toPayload(v)));
}

function readPayload(buf: Buffer): Payload {
  const p: Payload = { metadata: {}, data: Buffer.alloc(0) };
  for (const f of fields(buf)) {
    if (f.field === 1) {
      const [k, v] = mapEntry(f);
      p.metadata[k] = v;
    } else if (f.field === 2) p.data = f.bytes;
  }
  return p;
}

function readPayloads(buf: Buffer): Payload[] {
  const out: Payload[] = [];
  for (const f of fields(buf)) if (f.field === 1) out.push(readPayload(f.bytes));
  return out;
}

/** temporal.api.common.v1.WorkflowExecution: workflow_id = 1, run_id = 2 */
function writeExecution(w: ProtoWriter, workflowId: string, runId?: string): void {
  w.string(1, workflowId).string(2, runId);
}

/** An empty temporal.api.common.v1.Header (fields = 1): no interceptors add any, as with the SDK's client. */
const emptyHeader = (_w: ProtoWriter): void => {};

/** temporal.api.failure.v1.Failure: message = 1 */
function failureMessage(buf: Buffer): string {
  for (const f of fields(buf)) if (f.field === 1) return str(f);
  return '';
}

const first = (buf: Buffer, field: number): ProtoField | undefined => {
  for (const f of fields(buf)) if (f.field === field) return f;
  return undefined;
};

// ---- DescribeWorkflowExecution

export function describeWorkflowRequest(namespace: string, workflowId: string): Buffer {
  // DescribeWorkflowExecutionRequest: namespace = 1, execution = 2
  return new ProtoWriter()
    .string(1, namespace)
    .message(2, (w) => writeExecution(w, workflowId))
    .finish();
}

export interface WorkflowDescription {
  /** As the SDK names it: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, CONTINUED_AS_NEW, TIMED_OUT. */
  status: string;
  runId: string;
  /** The run's search attributes, each as its JSON value and its `type` metadata (Int, Keyword, ...). */
  searchAttributes: Record<string, { type: string | null; value: unknown }>;
  /** The pending workflow task's attempt (0 when none is pending). */
  pendingWorkflowTaskAttempt: number;
  /** The pending activities: type and the last heartbeat's details (undefined when none, or not readable here). */
  pendingActivities: { type: string; heartbeat: unknown }[];
}

export function describeWorkflowResponse(buf: Buffer): WorkflowDescription {
  const d: WorkflowDescription = {
    status: 'UNSPECIFIED',
    runId: '',
    searchAttributes: {},
    pendingWorkflowTaskAttempt: 0,
    pendingActivities: [],
  };
  for (const f of fields(buf)) {
    if (f.field === 2) {
      // workflow_execution_info (WorkflowExecutionInfo): execution = 1, status = 5, search_attributes = 11
      for (const i of fields(f.bytes)) {
        if (i.field === 1) {
          const r = first(i.bytes, 2);
          d.runId = r ? str(r) : '';
        } else if (i.field === 5) d.status = workflowStatusName(int32(i));
        else if (i.field === 11) {
          // SearchAttributes: indexed_fields = 1 (map<string, Payload>)
          for (const e of fields(i.bytes)) {
            if (e.field !== 1) continue;
            const [name, raw] = mapEntry(e);
            const p = readPayload(raw);
            let value: unknown = null;
            try {
              value = fromPayload(p);
            } catch {
              value = null;
            }
            d.searchAttributes[name] = { type: p.metadata.type?.toString('utf8') ?? null, value };
          }
        }
      }
    } else if (f.field === 3) {
      // pending_activities (PendingActivityInfo): activity_type = 2 (ActivityType: name = 1), heartbeat_details = 4 (Payloads)
      const t = first(f.bytes, 2);
      const name = t ? first(t.bytes, 1) : undefined;
      const details = first(f.bytes, 4);
      let heartbeat: unknown;
      try {
        const p = details ? readPayloads(details.bytes)[0] : undefined;
        heartbeat = p ? fromPayload(p) : undefined;
      } catch {
        heartbeat = undefined;
      }
      d.pendingActivities.push({ type: name ? str(name) : '', heartbeat });
    } else if (f.field === 5) {
      // pending_workflow_task (PendingWorkflowTaskInfo): attempt = 5
      const a = first(f.bytes, 5);
      d.pendingWorkflowTaskAttempt = a ? int32(a) : 0;
    }
  }
  return d;
}

// ---- QueryWorkflow

export function queryWorkflowRequest(namespace: string, workflowId: string, queryType: string, args: readonly unknown[] = []): Buffer {
  // QueryWorkflowRequest: namespace = 1, execution = 2, query = 3, query_reject_condition = 4
  // WorkflowQuery: query_type = 1, query_args = 2, header = 3
  return new ProtoWriter()
    .string(1, namespace)
    .message(2, (w) => writeExecution(w, workflowId))
    .message(3, (q) =>
      q
        .string(1, queryType)
        .message(2, (p) => writePayloads(p, args))
        .message(3, emptyHeader),
    )
    .int(4, QUERY_REJECT_NONE)
    .finish();
}

export type QueryAnswer = { ok: true; value: unknown } | { ok: false; rejectedStatus: string };

export function queryWorkflowResponse(buf: Buffer): QueryAnswer {
  // QueryWorkflowResponse: query_result = 1, query_rejected = 2 (QueryRejected: status = 1)
  let result: Payload[] | null = null;
  for (const f of fields(buf)) {
    if (f.field === 1) result = readPayloads(f.bytes);
    else if (f.field === 2) {
      const s = first(f.bytes, 1);
      return { ok: false, rejectedStatus: workflowStatusName(s ? int32(s) : 0) };
    }
  }
  if (!result) throw new PayloadError('Invalid response from server: a query answer without a result');
  const p = result[0];
  return { ok: true, value: p ? fromPayload(p) : undefined };
}

// ---- UpdateWorkflowExecution

export interface UpdateRequest {
  namespace: string;
  workflowId: string;
  updateId: string;
  identity: string;
  name: string;
  args: readonly unknown[];
}

export function updateWorkflowRequest(u: UpdateRequest): Buffer {
  // UpdateWorkflowExecutionRequest: namespace = 1, workflow_execution = 2, first_execution_run_id = 3,
  // wait_policy = 4 (WaitPolicy: lifecycle_stage = 1), request = 5
  // update.v1.Request: meta = 1 (Meta: update_id = 1, identity = 2), input = 2 (Input: header = 1, name = 2, args = 3)
  return new ProtoWriter()
    .string(1, u.namespace)
    .message(2, (w) => writeExecution(w, u.workflowId))
    .message(4, (w) => w.int(1, STAGE_COMPLETED))
    .message(5, (r) =>
      r
        .message(1, (m) => m.string(1, u.updateId).string(2, u.identity))
        .message(2, (i) =>
          i
            .message(1, emptyHeader)
            .string(2, u.name)
            .message(3, (p) => writePayloads(p, u.args)),
        ),
    )
    .finish();
}

export type UpdateAnswer = { stage: number; outcome: { ok: true; value: unknown } | { ok: false; message: string } | null };

export function updateWorkflowResponse(buf: Buffer): UpdateAnswer {
  // UpdateWorkflowExecutionResponse: update_ref = 1, outcome = 2, stage = 3
  // update.v1.Outcome: success = 1 (Payloads), failure = 2 (Failure)
  const a: UpdateAnswer = { stage: 0, outcome: null };
  for (const f of fields(buf)) {
    if (f.field === 3) a.stage = int32(f);
    else if (f.field === 2) {
      for (const o of fields(f.bytes)) {
        if (o.field === 1) {
          const p = readPayloads(o.bytes)[0];
          a.outcome = { ok: true, value: p ? fromPayload(p) : undefined };
        } else if (o.field === 2) a.outcome = { ok: false, message: failureMessage(o.bytes) };
      }
    }
  }
  return a;
}

// ---- SignalWorkflowExecution

export interface SignalRequest {
  namespace: string;
  workflowId: string;
  name: string;
  args: readonly unknown[];
  identity: string;
  requestId: string;
}

export function signalWorkflowRequest(s: SignalRequest): Buffer {
  // SignalWorkflowExecutionRequest: namespace = 1, workflow_execution = 2, signal_name = 3, input = 4,
  // identity = 5, request_id = 6, header = 8
  return new ProtoWriter()
    .string(1, s.namespace)
    .message(2, (w) => writeExecution(w, s.workflowId))
    .string(3, s.name)
    .message(4, (p) => writePayloads(p, s.args))
    .string(5, s.identity)
    .string(6, s.requestId)
    .message(8, emptyHeader)
    .finish();
}

// ---- GetWorkflowExecutionHistory (the close event: a finished run's result)

export function closeEventRequest(namespace: string, workflowId: string, runId?: string, nextPageToken?: Buffer): Buffer {
  // GetWorkflowExecutionHistoryRequest: namespace = 1, execution = 2, next_page_token = 4,
  // wait_new_event = 5, history_event_filter_type = 6, skip_archival = 7 (as the SDK's handle.result() asks)
  return new ProtoWriter()
    .string(1, namespace)
    .message(2, (w) => writeExecution(w, workflowId, runId))
    .bytes(4, nextPageToken)
    .int(5, true)
    .int(6, HISTORY_CLOSE_EVENT)
    .int(7, true)
    .finish();
}

export type CloseEvent =
  | { kind: 'none'; nextPageToken: Buffer }
  | { kind: 'completed'; value: unknown; newRunId: string }
  | { kind: 'continuedAsNew'; newRunId: string }
  | { kind: 'other' };

export function closeEventResponse(buf: Buffer): CloseEvent {
  // GetWorkflowExecutionHistoryResponse: history = 1 (History: events = 1), next_page_token = 3
  let token: Buffer = Buffer.alloc(0);
  let event: CloseEvent | null = null;
  for (const f of fields(buf)) {
    if (f.field === 3) token = f.bytes;
    else if (f.field === 1) {
      for (const e of fields(f.bytes)) {
        if (e.field !== 1) continue;
        event = { kind: 'other' };
        // HistoryEvent: workflow_execution_completed_event_attributes = 7 (result = 1, new_execution_run_id = 3),
        // workflow_execution_continued_as_new_event_attributes = 33 (new_execution_run_id = 1)
        for (const a of fields(e.bytes)) {
          if (a.field === 7) {
            let value: unknown;
            let newRunId = '';
            for (const c of fields(a.bytes)) {
              if (c.field === 1) {
                const p = readPayloads(c.bytes)[0];
                value = p ? fromPayload(p) : undefined;
              } else if (c.field === 3) newRunId = str(c);
            }
            event = { kind: 'completed', value, newRunId };
          } else if (a.field === 33) {
            const r = first(a.bytes, 1);
            event = { kind: 'continuedAsNew', newRunId: r ? str(r) : '' };
          }
        }
      }
    }
  }
  return event ?? { kind: 'none', nextPageToken: token };
}

// ---- GetWorkflowExecutionHistoryReverse (the last WorkflowTaskFailed event)

export function reverseHistoryRequest(namespace: string, workflowId: string, pageSize: number): Buffer {
  // GetWorkflowExecutionHistoryReverseRequest: namespace = 1, execution = 2, maximum_page_size = 3
  return new ProtoWriter()
    .string(1, namespace)
    .message(2, (w) => writeExecution(w, workflowId))
    .int(3, pageSize)
    .finish();
}

/** The failure message of the newest WorkflowTaskFailed event on the page; null when there is none. */
export function lastWorkflowTaskFailure(buf: Buffer): string | null {
  // GetWorkflowExecutionHistoryReverseResponse: history = 1 (events = 1)
  // HistoryEvent: workflow_task_failed_event_attributes = 14 (failure = 4)
  for (const f of fields(buf)) {
    if (f.field !== 1) continue;
    for (const e of fields(f.bytes)) {
      if (e.field !== 1) continue;
      const attrs = first(e.bytes, 14);
      if (!attrs) continue;
      const failure = first(attrs.bytes, 4);
      return failure ? failureMessage(failure.bytes) : '';
    }
  }
  return null;
}

// ---- DescribeTaskQueue (who polls a host's activity queue)

export function describeTaskQueueRequest(namespace: string, taskQueue: string, type: number): Buffer {
  // DescribeTaskQueueRequest: namespace = 1, task_queue = 2 (TaskQueue: name = 1), task_queue_type = 3
  return new ProtoWriter()
    .string(1, namespace)
    .message(2, (w) => w.string(1, taskQueue))
    .int(3, type)
    .finish();
}

export interface Poller {
  identity: string;
  /** Milliseconds since the epoch; null when the server did not say. */
  lastAccessMs: number | null;
}

export function describeTaskQueueResponse(buf: Buffer): Poller[] {
  // DescribeTaskQueueResponse: pollers = 1; PollerInfo: last_access_time = 1 (Timestamp: seconds = 1, nanos = 2), identity = 2
  const out: Poller[] = [];
  for (const f of fields(buf)) {
    if (f.field !== 1) continue;
    const p: Poller = { identity: '', lastAccessMs: null };
    for (const i of fields(f.bytes)) {
      if (i.field === 2) p.identity = str(i);
      else if (i.field === 1) {
        let seconds = 0;
        let nanos = 0;
        for (const t of fields(i.bytes)) {
          if (t.field === 1) seconds = int64(t);
          else if (t.field === 2) nanos = int32(t);
        }
        p.lastAccessMs = seconds * 1000 + Math.floor(nanos / 1e6);
      }
    }
    out.push(p);
  }
  return out;
}
