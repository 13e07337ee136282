/**
 * Reading a file on a run's host from any machine (`vigil logs`, `vigil handoff`), without a
 * workflow: each read is one standalone activity (`client.activity.execute`, Temporal Server 1.32
 * and the temporal CLI 1.9 dev server take them with no setting) started directly on the host's
 * task queue, where only workers on the machine holding the repository poll. Why this and not the
 * alternatives:
 * - a workflow per read (`vigilReadLog`, what Vigil did before) is a workflow start, a workflow
 *   task and an activity per read — several billable actions on Temporal Cloud, and one more entry
 *   in the namespace's workflow list each time (a `logs -f` made 18 in 45 s);
 * - an Update on the run would read through the same host queue but write the request, an
 *   activity and its result (the log text) into the run's own history on every read, and a
 *   finished run takes no Update;
 * - the event store holds no agent output; a worker-side endpoint needs a port every reader can
 *   reach and a second way to authenticate.
 * Measured on the dev server (a warm worker, 256 KiB reads or less): about 80 ms per read, no
 * workflow created, nothing added to the run's history. A following read waits on the host for
 * the log to grow (up to 10 s), so an idle `logs -f` makes one read per 10 s.
 * A server without standalone activities (gRPC UNIMPLEMENTED, or the feature turned off) gets the
 * old way for logs — one short `vigilReadLog` workflow per read — and a clear error for
 * `vigil handoff`, which needs them.
 */
import { randomBytes } from 'node:crypto';
import { ActivityExecutionFailedError, type Client } from '@temporalio/client';
import { TimeoutFailure } from '@temporalio/common';
import { CliError, EXIT } from './errors.js';

export interface HostRead {
  /** The activity's name: `readRunLog` or `readRunHandoff`. */
  activity: 'readRunLog' | 'readRunHandoff';
  input: unknown;
  /** The host's queue (or the run's own queue for a run without a host). */
  taskQueue: string;
  /** How long a worker on that queue has to pick the read up. */
  answerSeconds: number;
  /** How long the activity may wait on the host for the file to grow. */
  waitMs: number;
  /** For the activity id and summary: which run the read is for. */
  runId: string;
}

export type HostReadAnswer<R> =
  | { kind: 'result'; result: R }
  /** No worker polling the queue picked the read up within `answerSeconds`. */
  | { kind: 'no_worker' }
  /** The server takes no standalone activities: the caller falls back or explains. */
  | { kind: 'unsupported'; message: string };

function grpcCode(err: unknown): { code: number; message: string } | null {
  let cur: unknown = err;
  for (let depth = 0; depth < 5 && cur instanceof Error; depth += 1) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'number') return { code, message: cur.message };
    cur = cur.cause;
  }
  return null;
}

/** The server answered that it has no standalone activities (an older server, or the feature turned off). */
export function isUnsupported(err: unknown): boolean {
  const g = grpcCode(err);
  if (!g) return false;
  // 12 UNIMPLEMENTED: an older server; 9 FAILED_PRECONDITION / 7 PERMISSION_DENIED: turned off for the namespace.
  return g.code === 12 || ((g.code === 9 || g.code === 7) && /standalone|not (enabled|supported)|disabled/i.test(g.message));
}

export async function readOnHost<R>(client: Client, read: HostRead): Promise<HostReadAnswer<R>> {
  const id = `vigil-read/${read.runId}/${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  try {
    const result = await client.activity.execute<R>(read.activity, {
      id,
      taskQueue: read.taskQueue,
      args: [read.input],
      // Nobody polls the host's queue when no worker picks the read up this fast (not retried).
      scheduleToStartTimeout: read.answerSeconds * 1000,
      // Reading 256 KiB takes milliseconds; a following read waits for the log first.
      startToCloseTimeout: read.waitMs + 30_000,
      // The read heartbeats while it waits: a worker that dies mid-read is noticed in 10 s.
      heartbeatTimeout: 10_000,
      // The whole read, its one retry included, is bounded: an abandoned read never lingers.
      scheduleToCloseTimeout: read.answerSeconds * 1000 + 2 * (read.waitMs + 30_000),
      retry: { maximumAttempts: 2, initialInterval: '1s' },
      summary: `vigil ${read.activity === 'readRunLog' ? 'logs' : 'handoff'} ${read.runId}`,
    });
    return { kind: 'result', result };
  } catch (err) {
    if (isUnsupported(err)) return { kind: 'unsupported', message: err instanceof Error ? err.message : String(err) };
    if (err instanceof ActivityExecutionFailedError) {
      if (err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START') return { kind: 'no_worker' };
      throw new CliError(`reading on the run's host failed: ${(err.cause?.message ?? err.message).slice(0, 2000)}`, EXIT.unreachable);
    }
    throw err;
  }
}
