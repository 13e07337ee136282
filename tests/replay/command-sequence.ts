/**
 * A history's command sequence: one line per event that a workflow command (or a protocol message
 * the workflow answered) produced, in history order, with only what the workflow code decided.
 * Workflow-task events, activity starts and results, signals, the SDK's TemporalChangeVersion
 * upsert after each patch marker, and everything that depends on timing (event ids and times,
 * timer durations, attempts, heartbeats, task queues, run ids, temporary paths) are left out,
 * so two recordings of a scenario whose messages arrive while the workflow waits give the same
 * lines. Accepts a history as the SDK fetches it (bytes) or as the official CLI exports it
 * (base64 JSON).
 */

type Bytes = Uint8Array | string | null | undefined;
interface Payload {
  metadata?: Record<string, Bytes> | null;
  data?: Bytes;
}
type Payloads = { payloads?: Payload[] | null } | null | undefined;
type Attributes = Record<string, unknown>;
/** A history: of each event only its `...EventAttributes` field is read. */
export interface HistoryLike {
  events?: readonly object[] | null;
}

const bytes = (b: Bytes): Buffer => (b == null ? Buffer.alloc(0) : typeof b === 'string' ? Buffer.from(b, 'base64') : Buffer.from(b));

/** A JSON payload's value (json/plain), else undefined. */
function payloadValue(p: Payload | undefined): unknown {
  if (!p) return undefined;
  const encoding = bytes(p.metadata?.encoding).toString('utf8');
  if (encoding !== 'json/plain') return undefined;
  try {
    return JSON.parse(bytes(p.data).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

const firstPayload = (ps: Payloads): Payload | undefined => ps?.payloads?.[0];

/** A search attribute's value when it reads as a fixed word or number (a status, an iteration), else only its key. */
function searchAttribute(key: string, p: Payload): string {
  const v = payloadValue(p);
  const value = Array.isArray(v) && v.length === 1 ? (v[0] as unknown) : v;
  if (typeof value === 'number' || (typeof value === 'string' && /^[a-z_]{1,40}$/.test(value))) return `${key}=${String(value)}`;
  return key;
}

function marker(a: Attributes): string {
  const name = String(a.markerName ?? '');
  const details = (a.details ?? {}) as Record<string, Payloads>;
  if (name === 'core_patch') {
    const patch = payloadValue(firstPayload(details['patch-data'])) as { id?: string; deprecated?: boolean } | undefined;
    return `MarkerRecorded patch ${patch?.id ?? '?'}${patch?.deprecated ? ' (deprecated)' : ''}`;
  }
  if (name === 'core_local_activity') {
    const data = payloadValue(firstPayload(details.data)) as { activity_type?: string } | undefined;
    return `MarkerRecorded local activity ${data?.activity_type ?? '?'}`;
  }
  return `MarkerRecorded ${name}`;
}

/** How each command event reads (null: left out); events not listed here are not in the sequence. */
const COMMAND_EVENTS: Record<string, (a: Attributes) => string | null> = {
  activityTaskScheduledEventAttributes: (a) => `ActivityTaskScheduled ${(a.activityType as { name?: string } | undefined)?.name ?? '?'}`,
  activityTaskCancelRequestedEventAttributes: () => 'ActivityTaskCancelRequested',
  timerStartedEventAttributes: () => 'TimerStarted',
  timerCanceledEventAttributes: () => 'TimerCanceled',
  markerRecordedEventAttributes: marker,
  upsertWorkflowSearchAttributesEventAttributes: (a) => {
    const fields = ((a.searchAttributes as { indexedFields?: Record<string, Payload> } | undefined)?.indexedFields ?? {}) as Record<
      string,
      Payload
    >;
    // The SDK's own echo of each patch marker (TemporalChangeVersion) is the marker's line already.
    const keys = Object.keys(fields).filter((k) => k !== 'TemporalChangeVersion');
    if (keys.length === 0) return null;
    return `UpsertWorkflowSearchAttributes ${keys
      .sort()
      .map((k) => searchAttribute(k, fields[k] as Payload))
      .join(' ')}`;
  },
  workflowPropertiesModifiedEventAttributes: (a) => {
    const fields = ((a.upsertedMemo as { fields?: Record<string, unknown> } | undefined)?.fields ?? {}) as Record<string, unknown>;
    return `WorkflowPropertiesModified ${Object.keys(fields).sort().join(' ')}`;
  },
  signalExternalWorkflowExecutionInitiatedEventAttributes: (a) => `SignalExternalWorkflowExecutionInitiated ${String(a.signalName ?? '?')}`,
  requestCancelExternalWorkflowExecutionInitiatedEventAttributes: () => 'RequestCancelExternalWorkflowExecutionInitiated',
  startChildWorkflowExecutionInitiatedEventAttributes: (a) =>
    `StartChildWorkflowExecutionInitiated ${(a.workflowType as { name?: string } | undefined)?.name ?? '?'}`,
  workflowExecutionUpdateAcceptedEventAttributes: (a) =>
    `WorkflowExecutionUpdateAccepted ${(a.acceptedRequest as { input?: { name?: string } } | undefined)?.input?.name ?? '?'}`,
  workflowExecutionUpdateCompletedEventAttributes: (a) =>
    `WorkflowExecutionUpdateCompleted ${(a.outcome as { failure?: unknown } | undefined)?.failure ? 'failure' : 'success'}`,
  workflowExecutionContinuedAsNewEventAttributes: () => 'WorkflowExecutionContinuedAsNew',
  workflowExecutionCompletedEventAttributes: (a) => {
    const outcome = payloadValue(firstPayload(a.result as Payloads)) as { status?: string } | undefined;
    return `WorkflowExecutionCompleted${outcome?.status ? ` ${outcome.status}` : ''}`;
  },
  workflowExecutionFailedEventAttributes: () => 'WorkflowExecutionFailed',
  workflowExecutionCanceledEventAttributes: () => 'WorkflowExecutionCanceled',
  nexusOperationScheduledEventAttributes: (a) => `NexusOperationScheduled ${String(a.service ?? '?')}/${String(a.operation ?? '?')}`,
  nexusOperationCancelRequestedEventAttributes: () => 'NexusOperationCancelRequested',
};

/** The history's command sequence (see the file comment). */
export function commandSequence(history: HistoryLike): string[] {
  const lines: string[] = [];
  for (const event of history.events ?? []) {
    for (const [field, read] of Object.entries(COMMAND_EVENTS)) {
      const attributes = (event as Record<string, unknown>)[field];
      const line = attributes ? read(attributes as Attributes) : null;
      if (line !== null) lines.push(line);
    }
  }
  return lines;
}

/** The patch ids a history's markers record, in order. */
export function patchIds(history: HistoryLike): string[] {
  return commandSequence(history)
    .filter((l) => l.startsWith('MarkerRecorded patch '))
    .map((l) => l.slice('MarkerRecorded patch '.length).replace(/ \(deprecated\)$/, ''));
}
