/**
 * When Vigil's activities heartbeat. A heartbeat proves the worker alive (a worker that dies
 * mid-activity is noticed within the heartbeat timeout instead of the activity's whole bound) and
 * brings back a cancellation; its details are what the UI's pending activity shows.
 *
 * The worker sends a running activity's heartbeats to Temporal at most once per send interval
 * (HEARTBEAT_SEND_MS, the SDK's throttle), but the SDK sends the *first* one at once, and the
 * server writes every heartbeat to the run's state. An activity that beat at its start therefore
 * cost the server one more write however short it was, and a 5 s agent call two (at 0 and 5 s):
 * at 200 busy runs, heartbeats were over half the worker's requests to the server. So the first
 * beat waits one send interval (at most a third of the activity's heartbeat timeout, so a dead
 * worker is still noticed in time); after it, beats follow every second and the SDK sends the
 * latest once per interval, as before. An inspection, a quick agent's whole call or a short gate
 * sends none; a call shows its details in the UI after the first interval.
 */
import { Context } from '@temporalio/activity';

/** How often a worker sends a running activity's heartbeats to Temporal, unless it says otherwise. */
export const HEARTBEAT_SEND_MS = 5000;
/** After the first beat, how often an activity records one (the SDK sends the latest once per send interval). */
export const BEAT_EVERY_MS = 1000;

const sendMsByQueue = new Map<string, number>();

/** A worker's send interval, for the activities it runs from `taskQueue` (workers/worker.ts). */
export function setHeartbeatSendMs(taskQueue: string, ms: number): void {
  sendMsByQueue.set(taskQueue, ms);
}

/** When the running activity records its first heartbeat: one send interval in, at most a third of its heartbeat timeout. */
export function firstBeatMs(ctx: Context = Context.current()): number {
  const send = sendMsByQueue.get(ctx.info.taskQueue) ?? HEARTBEAT_SEND_MS;
  const timeout = ctx.info.heartbeatTimeoutMs;
  return Math.max(100, Math.min(send, timeout ? timeout / 3 : send));
}

/** Calls `beat` from `firstBeatMs` on, every `everyMs`; returns what stops it. */
export function beatWhileRunning(beat: () => void, ctx: Context = Context.current(), everyMs: number = BEAT_EVERY_MS): () => void {
  let every: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    beat();
    every = setInterval(beat, everyMs);
  }, firstBeatMs(ctx));
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}

/** `fn`, heartbeating while it works (for activities that run no child process of their own). */
export function heartbeating<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    const ctx = Context.current();
    const stop = beatWhileRunning(() => ctx.heartbeat(), ctx);
    try {
      return await fn(...args);
    } finally {
      stop();
    }
  };
}
