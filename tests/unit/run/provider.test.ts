/**
 * The provider choice without a server (tests/unit/run/support.ts): the breaker's answer, its
 * wait, a message during the wait, the failover chain, and a call released when a message came
 * while the provider was asked. The breaker entity and the health check are activities here,
 * answered by the test.
 */
import { describe, expect, it } from 'vitest';
import { breakerWorkflowId } from '../../../schemas/provider-breaker.js';
import { chooseProvider } from '../../../workflows/run/provider.js';
import { INTERRUPTED } from '../../../workflows/run/run.js';
import { START_MS, testRun } from './support.js';

const allow = { allow: true, probe: false, retryAtMs: 0, reason: 'closed' };
const open = (retryAtMs: number) => ({ allow: false, probe: false, retryAtMs, reason: 'open' });

describe('the provider choice, server-less', () => {
  it("takes the run's own provider at once when no breaker applies", async () => {
    const { run, seen } = testRun({ knobs: { provider: 'claude', providerBreaker: false } });
    expect(await chooseProvider(run)).toEqual({ step: 'go', go: { provider: 'claude', gate: null } });
    expect(seen.activities).toEqual([]);
  });

  it("asks the provider's breaker and carries its lease", async () => {
    const { run, seen } = testRun({ knobs: { provider: 'claude' }, activities: { 'breakers.askProviderBreaker': () => allow } });
    const pick = await chooseProvider(run);
    expect(pick).toEqual({ step: 'go', go: { provider: 'claude', gate: { probe: false, askId: 'vigil-test/run-1/1/1' } } });
    expect(seen.activities.map((a) => a.name)).toEqual(['breakers.askProviderBreaker']);
  });

  it('waits on a timer while the breaker is open, then goes when it lets the call out', async () => {
    const answers = [open(START_MS + 30_000), allow];
    const { run, seen, clock } = testRun({
      knobs: { provider: 'claude' },
      activities: { 'breakers.askProviderBreaker': () => answers.shift() },
    });
    const pick = await chooseProvider(run);
    expect(pick.step).toBe('go');
    expect(seen.waits).toEqual([
      { timeoutMs: 30_000, summary: expect.stringContaining('provider claude unavailable (breaker open)') as string, ended: 'timer' },
    ]);
    expect(clock.ms).toBe(START_MS + 30_000);
    expect(run.provider.wait).toBeNull();
    expect(run.status).toBe('running');
    // The second ask is a new ask of the same iteration.
    expect(seen.activities.map((a) => (a.args[0] as { askId: string }).askId)).toEqual(['vigil-test/run-1/1/1', 'vigil-test/run-1/1/2']);
  });

  it('a pause during the wait interrupts it: nothing more is asked', async () => {
    const { run, seen } = testRun({
      knobs: { provider: 'claude' },
      activities: { 'breakers.askProviderBreaker': () => open(START_MS + 600_000) },
      duringWait: (r) => void (r.state.pause = { reason: 'wait', by: 'bob', at: '2026-01-01T00:00:00.000Z' }),
    });
    expect(await chooseProvider(run)).toBe(INTERRUPTED);
    expect(seen.activities).toHaveLength(1);
    expect(seen.waits[0]?.ended).toBe('condition');
    expect(run.provider.wait).toBeNull();
  });

  it('a rate-limited run hands the call to a healthy failover provider', async () => {
    const { run, seen } = testRun({
      knobs: { provider: 'claude', providerFailover: 'codex' },
      state: (s) => void (s.providerBlockedUntilMs = START_MS + 3_600_000),
      activities: { 'checks.providerHealth': () => ({ ok: true }), 'breakers.askProviderBreaker': () => allow },
    });
    const pick = await chooseProvider(run);
    expect(pick.step === 'go' && pick.go.provider).toBe('codex');
    expect(seen.activities.map((a) => a.name)).toEqual(['checks.providerHealth', 'breakers.askProviderBreaker']);
    expect(seen.waits).toEqual([]);
  });

  it('a stop that came while the breaker was asked releases the call it let out', async () => {
    let stopNow = (): void => undefined;
    const { run, seen } = testRun({
      knobs: { provider: 'claude' },
      activities: {
        'breakers.askProviderBreaker': () => {
          stopNow();
          return allow;
        },
      },
    });
    stopNow = () => void (run.stopRequest = { reason: 'enough', by: 'carol', now: false });
    expect(await chooseProvider(run)).toBe(INTERRUPTED);
    expect(seen.signals).toEqual([
      {
        workflowId: breakerWorkflowId('claude'),
        signal: expect.any(String) as string,
        args: [expect.objectContaining({ outcome: 'released' })],
      },
    ]);
  });
});
