/**
 * The provider circuit breaker (rules/provider-breaker.ts, seed 001) with the seed's
 * numbers: 3 failures within 60 s open it for 300 s, HALF_OPEN lets one probe out per 10 s, 3
 * successful probes close it, a failed probe re-opens it; straggler reports, the manual reset,
 * the schema, and a fast-check property over arbitrary ask/report sequences.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BREAKER_CONFIG,
  MAX_FAILURE_TIMES,
  ProviderBreakerStateSchema,
  breakerAsk,
  breakerReport,
  breakerReset,
  initialBreaker,
  type BreakerOutcome,
  type ProviderBreakerState,
} from '../../rules/provider-breaker.js';

const S = 1000;
const T0 = 1_700_000_000_000;

function fail(state: ProviderBreakerState, ...atMs: number[]): ProviderBreakerState {
  return atMs.reduce((s, t) => breakerReport(s, 'failure', t), state);
}

/** Tripped at T0 + 20 s: open until T0 + 320 s. */
const tripped = (): ProviderBreakerState => fail(initialBreaker(), T0, T0 + 10 * S, T0 + 20 * S);
const OPEN_UNTIL = T0 + 320 * S;

/** HALF_OPEN with its first probe out, at OPEN_UNTIL. */
function probing(): ProviderBreakerState {
  const r = breakerAsk(tripped(), OPEN_UNTIL);
  expect(r.decision).toEqual({ allow: true, probe: true });
  return r.state;
}

describe('released: a call let out but not made', () => {
  it('frees the probe slot without counting anything; the probe interval still applies', () => {
    const s = breakerReport(probing(), 'released', OPEN_UNTIL + S);
    expect(s).toMatchObject({ phase: 'HALF_OPEN', probeInFlight: false, probeSuccesses: 0, trips: 1 });
    expect(breakerAsk(s, OPEN_UNTIL + 2 * S).decision).toMatchObject({ allow: false, reason: 'probe_interval' });
    expect(breakerAsk(s, OPEN_UNTIL + 10 * S).decision).toEqual({ allow: true, probe: true });
  });

  it('counts as nothing in CLOSED', () => {
    const s = fail(initialBreaker(), T0, T0 + S);
    expect(breakerReport(s, 'released', T0 + 2 * S)).toEqual(s);
  });
});

describe('CLOSED', () => {
  it('lets every call out and stays closed under the threshold', () => {
    expect(DEFAULT_BREAKER_CONFIG).toEqual({
      failureThreshold: 3,
      failureWindowMs: 60_000,
      cooldownMs: 300_000,
      probeIntervalMs: 10_000,
      closeAfterSuccesses: 3,
    });
    const s = fail(initialBreaker(), T0, T0 + S);
    expect(s.phase).toBe('CLOSED');
    expect(breakerAsk(s, T0 + 2 * S)).toEqual({ state: s, decision: { allow: true, probe: false } });
  });

  it('opens on the 3rd failure within 60 s (inclusive), for 300 s', () => {
    const s = fail(initialBreaker(), T0, T0 + 30 * S, T0 + 60 * S);
    expect(s).toMatchObject({ phase: 'OPEN', openUntilMs: T0 + 360 * S, lastChangeAtMs: T0 + 60 * S, trips: 1, failureTimesMs: [] });
  });

  it('forgets failures older than the window', () => {
    const s = fail(initialBreaker(), T0, T0 + 30 * S, T0 + 60 * S + 1);
    expect(s).toMatchObject({ phase: 'CLOSED', failureTimesMs: [T0 + 30 * S, T0 + 60 * S + 1] });
    expect(fail(s, T0 + 61 * S).phase).toBe('OPEN');
  });

  it('does not clear remembered failures on a success', () => {
    let s = fail(initialBreaker(), T0, T0 + S);
    s = breakerReport(s, 'success', T0 + 2 * S);
    expect(fail(s, T0 + 3 * S).phase).toBe('OPEN');
  });
});

describe('OPEN', () => {
  it('refuses calls until the cooldown ends, naming when to ask again', () => {
    expect(breakerAsk(tripped(), T0 + 21 * S).decision).toEqual({ allow: false, retryAtMs: OPEN_UNTIL, reason: 'open' });
    expect(breakerAsk(tripped(), OPEN_UNTIL - 1).decision).toEqual({ allow: false, retryAtMs: OPEN_UNTIL, reason: 'open' });
  });

  it('turns HALF_OPEN at the end of the cooldown and lets one probe out', () => {
    const s = probing();
    expect(s).toMatchObject({
      phase: 'HALF_OPEN',
      probeInFlight: true,
      lastProbeAtMs: OPEN_UNTIL,
      lastChangeAtMs: OPEN_UNTIL,
      probeSuccesses: 0,
      trips: 1,
    });
    // Asked late: the probe goes out when asked.
    expect(breakerAsk(tripped(), OPEN_UNTIL + 99 * S).state).toMatchObject({
      phase: 'HALF_OPEN',
      lastProbeAtMs: OPEN_UNTIL + 99 * S,
      lastChangeAtMs: OPEN_UNTIL,
    });
  });

  it('ignores reports of calls that went out before the trip', () => {
    const s = tripped();
    expect(breakerReport(s, 'failure', T0 + 30 * S)).toEqual(s);
    expect(breakerReport(s, 'success', T0 + 30 * S)).toEqual(s);
  });
});

describe('HALF_OPEN', () => {
  it('says wait while the probe is out', () => {
    const s = probing();
    expect(breakerAsk(s, OPEN_UNTIL + S)).toEqual({
      state: s,
      decision: { allow: false, retryAtMs: OPEN_UNTIL + 11 * S, reason: 'probe_in_flight' },
    });
    expect(breakerAsk(s, OPEN_UNTIL + 60 * S).decision).toMatchObject({ allow: false, reason: 'probe_in_flight' });
  });

  it('lets the next probe out 10 s after the last one started, not before', () => {
    const s = breakerReport(probing(), 'success', OPEN_UNTIL + 2 * S);
    expect(s).toMatchObject({ phase: 'HALF_OPEN', probeInFlight: false, probeSuccesses: 1 });
    expect(breakerAsk(s, OPEN_UNTIL + 9_999).decision).toEqual({ allow: false, retryAtMs: OPEN_UNTIL + 10 * S, reason: 'probe_interval' });
    expect(breakerAsk(s, OPEN_UNTIL + 10 * S).decision).toEqual({ allow: true, probe: true });
  });

  it('closes after 3 successful probes in a row', () => {
    let s = probing();
    for (let i = 1; i <= 3; i++) {
      const at = OPEN_UNTIL + i * 10 * S;
      s = breakerReport(s, 'success', at - 5 * S);
      if (i < 3) {
        expect(s.phase).toBe('HALF_OPEN');
        s = breakerAsk(s, at).state;
      }
    }
    expect(s).toEqual({ ...initialBreaker(), lastChangeAtMs: OPEN_UNTIL + 25 * S, trips: 1 });
    expect(breakerAsk(s, OPEN_UNTIL + 26 * S).decision).toEqual({ allow: true, probe: false });
  });

  it('re-opens for a new 300 s on any failed probe, even after successes', () => {
    let s = breakerReport(probing(), 'success', OPEN_UNTIL + S);
    s = breakerAsk(s, OPEN_UNTIL + 10 * S).state;
    s = breakerReport(s, 'success', OPEN_UNTIL + 11 * S);
    s = breakerAsk(s, OPEN_UNTIL + 20 * S).state;
    s = breakerReport(s, 'failure', OPEN_UNTIL + 21 * S);
    expect(s).toMatchObject({ phase: 'OPEN', openUntilMs: OPEN_UNTIL + 321 * S, trips: 2, probeSuccesses: 0, probeInFlight: false });
    expect(breakerAsk(s, OPEN_UNTIL + 320 * S).decision).toMatchObject({ allow: false, reason: 'open' });
    expect(breakerAsk(s, OPEN_UNTIL + 321 * S).decision).toEqual({ allow: true, probe: true });
  });

  it("ignores a report that is not the probe's", () => {
    const s = probing();
    expect(breakerReport(s, 'failure', OPEN_UNTIL + S, DEFAULT_BREAKER_CONFIG, { probe: false })).toEqual(s);
    // No probe out: nothing to attribute the report to.
    const waiting = breakerReport(s, 'success', OPEN_UNTIL + S);
    expect(breakerReport(waiting, 'failure', OPEN_UNTIL + 2 * S)).toEqual(waiting);
    // A report arriving after the cooldown without an ask finds HALF_OPEN with no probe out.
    expect(breakerReport(tripped(), 'failure', OPEN_UNTIL + S)).toMatchObject({ phase: 'HALF_OPEN', probeInFlight: false, trips: 1 });
  });
});

describe('breakerReset, config and schema', () => {
  it('resets to CLOSED from any phase, keeping the trip count', () => {
    for (const s of [tripped(), probing(), fail(initialBreaker(), T0)]) {
      const r = breakerReset(s, T0 + 999 * S);
      expect(r).toEqual({ ...initialBreaker(), lastChangeAtMs: T0 + 999 * S, trips: s.trips });
      expect(breakerAsk(r, T0 + 999 * S).decision).toEqual({ allow: true, probe: false });
    }
  });

  it('takes another configuration, normalising nonsense values', () => {
    const cfg = { failureThreshold: 1, failureWindowMs: 1000, cooldownMs: 5000, probeIntervalMs: 0, closeAfterSuccesses: 1 };
    const s = breakerReport(initialBreaker(), 'failure', T0, cfg);
    expect(s).toMatchObject({ phase: 'OPEN', openUntilMs: T0 + 5000 });
    const probe = breakerAsk(s, T0 + 5000, cfg);
    expect(breakerReport(probe.state, 'success', T0 + 5001, cfg).phase).toBe('CLOSED');
    // Threshold capped at MAX_FAILURE_TIMES; not-a-number settings take the seed's default (60 s window).
    const silly = {
      failureThreshold: 10_000,
      failureWindowMs: Number.POSITIVE_INFINITY,
      cooldownMs: -5,
      probeIntervalMs: Number.NaN,
      closeAfterSuccesses: 0,
    };
    let big = initialBreaker();
    for (let i = 0; i < MAX_FAILURE_TIMES - 1; i++) big = breakerReport(big, 'failure', T0 + i, silly);
    expect(big.failureTimesMs).toHaveLength(MAX_FAILURE_TIMES - 1);
    expect(breakerReport(big, 'failure', T0 + 100, silly)).toMatchObject({ phase: 'OPEN', openUntilMs: T0 + 100 });
    expect(breakerReport(big, 'failure', T0 + 61_000, silly)).toMatchObject({ phase: 'CLOSED' });
  });

  it('never mutates its input', () => {
    const s = Object.freeze({ ...probing(), failureTimesMs: Object.freeze([]) as unknown as number[] });
    expect(() => breakerAsk(s, OPEN_UNTIL + 30 * S)).not.toThrow();
    expect(() => breakerReport(s, 'success', OPEN_UNTIL + 30 * S)).not.toThrow();
    const c = Object.freeze({ ...fail(initialBreaker(), T0), failureTimesMs: Object.freeze([T0]) as unknown as number[] });
    expect(breakerReport(c, 'failure', T0 + 1).failureTimesMs).toEqual([T0, T0 + 1]);
  });

  it('parses its states and rejects inconsistent or unbounded ones', () => {
    for (const s of [initialBreaker(), tripped(), probing()]) expect(ProviderBreakerStateSchema.parse(s)).toEqual(s);
    expect(ProviderBreakerStateSchema.safeParse({ ...tripped(), openUntilMs: null }).success).toBe(false);
    expect(ProviderBreakerStateSchema.safeParse({ ...initialBreaker(), probeInFlight: true }).success).toBe(false);
    expect(
      ProviderBreakerStateSchema.safeParse({ ...initialBreaker(), failureTimesMs: Array.from({ length: MAX_FAILURE_TIMES + 1 }, () => T0) })
        .success,
    ).toBe(false);
    expect(ProviderBreakerStateSchema.safeParse({ ...tripped(), failureTimesMs: [T0] }).success).toBe(false);
  });
});

describe('property: arbitrary asks and reports', () => {
  type Step =
    | { kind: 'ask'; dtMs: number }
    | { kind: 'report'; dtMs: number; pick: number; outcome: BreakerOutcome }
    | { kind: 'reset'; dtMs: number };
  const dt = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 15_000 }), fc.integer({ min: 0, max: 400_000 }));
  const step = (withReset: boolean): fc.Arbitrary<Step> =>
    fc.oneof(
      dt.map((dtMs): Step => ({ kind: 'ask', dtMs })),
      fc.record({
        kind: fc.constant('report' as const),
        dtMs: dt,
        pick: fc.nat(),
        outcome: fc.constantFrom<BreakerOutcome>('success', 'failure'),
      }),
      ...(withReset ? [dt.map((dtMs): Step => ({ kind: 'reset', dtMs }))] : []),
    );

  it('never has more than one probe out, probes start 10 s apart, and the state always parses', () => {
    fc.assert(
      fc.property(fc.array(step(false), { maxLength: 120 }), (steps) => {
        let state = initialBreaker();
        let now = T0;
        const outstanding: { probe: boolean }[] = [];
        let lastProbeStart: number | null = null;
        for (const st of steps) {
          now += st.dtMs;
          if (st.kind === 'ask') {
            const r = breakerAsk(state, now);
            state = r.state;
            if (r.decision.allow) {
              outstanding.push({ probe: r.decision.probe });
              if (r.decision.probe) {
                if (lastProbeStart !== null) expect(now - lastProbeStart).toBeGreaterThanOrEqual(10_000);
                lastProbeStart = now;
              }
            } else {
              expect(r.decision.retryAtMs).toBeGreaterThan(now);
            }
          } else if (st.kind === 'report' && outstanding.length > 0) {
            const [call] = outstanding.splice(st.pick % outstanding.length, 1);
            state = breakerReport(state, st.outcome, now, DEFAULT_BREAKER_CONFIG, call);
          }
          const probesOut = outstanding.filter((c) => c.probe).length;
          expect(probesOut).toBeLessThanOrEqual(1);
          expect(probesOut).toBe(state.phase === 'HALF_OPEN' && state.probeInFlight ? 1 : 0);
          expect(ProviderBreakerStateSchema.safeParse(state).success).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('every state reached (with resets, unflagged reports, any config) parses', () => {
    const cfg = fc.record({
      failureThreshold: fc.integer({ min: -2, max: 200 }),
      failureWindowMs: fc.integer({ min: -10, max: 120_000 }),
      cooldownMs: fc.integer({ min: -10, max: 600_000 }),
      probeIntervalMs: fc.integer({ min: -10, max: 20_000 }),
      closeAfterSuccesses: fc.integer({ min: -1, max: 5 }),
    });
    fc.assert(
      fc.property(cfg, fc.array(step(true), { maxLength: 120 }), (c, steps) => {
        let state = initialBreaker();
        let now = T0;
        for (const st of steps) {
          now += st.dtMs;
          if (st.kind === 'ask') state = breakerAsk(state, now, c).state;
          else if (st.kind === 'report') state = breakerReport(state, st.outcome, now, c);
          else state = breakerReset(state, now);
          expect(ProviderBreakerStateSchema.safeParse(state).success).toBe(true);
          if (state.phase === 'HALF_OPEN' && state.probeInFlight) expect(breakerAsk(state, now, c).decision.allow).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});
