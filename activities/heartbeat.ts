/**
 * Heartbeats for activities that do not run a child process of their own (git inspection,
 * evidence, signal files, handoffs): a beat every second while they work, so that a worker that
 * dies mid-activity is noticed within the heartbeat timeout instead of the 10-minute bound.
 */
import { Context } from '@temporalio/activity';

export function heartbeating<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    const ctx = Context.current();
    ctx.heartbeat();
    const beat = setInterval(() => ctx.heartbeat(), 1000);
    try {
      return await fn(...args);
    } finally {
      clearInterval(beat);
    }
  };
}
