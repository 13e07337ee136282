/**
 * When activities heartbeat (activities/heartbeat.ts): the first beat one send interval in (at
 * most a third of the heartbeat timeout), then every second; an activity shorter than that sends
 * none. The SDK sends a first beat to the server at once, so a beat at the start was a server
 * write for every activity.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { Context } from '@temporalio/activity';
import { firstBeatMs, heartbeating, HEARTBEAT_SEND_MS, setHeartbeatSendMs } from '../../activities/heartbeat.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `ms` of work under heartbeating() in a mocked activity; the times of its beats, from its start. */
async function beatsOf(ms: number, info: { taskQueue: string; heartbeatTimeoutMs?: number }): Promise<number[]> {
  const mock = new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') });
  const at: number[] = [];
  const t0 = Date.now();
  mock.on('heartbeat', () => at.push(Date.now() - t0));
  await mock.run(heartbeating(() => sleep(ms)));
  return at;
}

describe('activity heartbeats', () => {
  it('an activity shorter than one send interval sends none', async () => {
    setHeartbeatSendMs('hb-short', 400);
    expect(await beatsOf(150, { taskQueue: 'hb-short' })).toEqual([]);
  });

  it('a longer one beats first after one send interval, then every second, and not after it ends', async () => {
    setHeartbeatSendMs('hb-long', 300);
    const at = await beatsOf(1_500, { taskQueue: 'hb-long' });
    expect(at).toHaveLength(2);
    expect(at[0]).toBeGreaterThanOrEqual(290);
    expect(at[0]).toBeLessThan(900);
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(990);
    const count = at.length;
    await sleep(1_200);
    expect(at).toHaveLength(count);
  });

  it("the first beat: the worker's send interval, the usual one for a queue no worker set, at most a third of the heartbeat timeout", async () => {
    setHeartbeatSendMs('hb-own', 1_234);
    const first = (info: { taskQueue: string; heartbeatTimeoutMs?: number }) =>
      new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') }).run(async () => firstBeatMs(Context.current()));
    expect(await first({ taskQueue: 'hb-own' })).toBe(1_234);
    expect(await first({ taskQueue: 'hb-nobody-set' })).toBe(HEARTBEAT_SEND_MS);
    expect(await first({ taskQueue: 'hb-nobody-set', heartbeatTimeoutMs: 3_000 })).toBe(1_000);
    expect(await first({ taskQueue: 'hb-own', heartbeatTimeoutMs: 60_000 })).toBe(1_234);
    // A dead worker is still noticed within the timeout: the first beat comes well before it.
    expect(await first({ taskQueue: 'hb-nobody-set', heartbeatTimeoutMs: 2_000 })).toBeLessThan(1_000);
  });
});
