/**
 * The one-time grace at the iteration cap (spec §1.11, LOKI_ITERATION_GRACE; rules/grace.ts):
 * one more iteration, once per run, for a completion claim not yet judged when no gate fails.
 */
import { describe, expect, it } from 'vitest';
import { claimPending, graceAtCap, iterationCap, type GraceFacts } from '../../rules/grace.js';

const facts = (over: Partial<GraceFacts> = {}): GraceFacts => ({
  enabled: true,
  used: false,
  iteration: 5,
  maxIterations: 5,
  last: { iteration: 5, claimed: true, exitCode: 1 },
  councilEnabled: true,
  lastVerdictIteration: 4,
  lastRefusalIteration: null,
  failingGates: [],
  ...over,
});

describe('the grace at the cap (seed: one-time grace, LOKI_ITERATION_GRACE)', () => {
  it('honest control: a claim whose call failed at the cap, no gate failing, gets one more iteration and is told why', () => {
    const v = graceAtCap(facts());
    expect(v.grant).toBe(true);
    expect(v.grant && v.findings).toMatch(/claim of iteration 5 was not judged before the iteration cap \(5\).*claim completion again/);
    expect(iterationCap(5, true)).toBe(6);
    expect(iterationCap(5, false)).toBe(5);
  });

  it('a claim the council could not convene on (before its floor) is pending too', () => {
    expect(graceAtCap(facts({ last: { iteration: 5, claimed: true, exitCode: 0 }, lastVerdictIteration: null })).grant).toBe(true);
  });

  it('adversarial: a builder that claims at every cap gets the grace once, never twice', () => {
    expect(graceAtCap(facts({ used: true, iteration: 6, last: { iteration: 6, claimed: true, exitCode: 1 } })).grant).toBe(false);
  });

  it('adversarial: a claim at the cap while a gate fails gets no grace', () => {
    expect(graceAtCap(facts({ failingGates: ['tests'] })).grant).toBe(false);
  });

  it('no grace for a judged claim, no claim, before the cap, or with the knob off', () => {
    // The council voted on it, or the check refused it before asking, or a run without a council judged it.
    expect(graceAtCap(facts({ last: { iteration: 5, claimed: true, exitCode: 0 }, lastVerdictIteration: 5 })).grant).toBe(false);
    expect(graceAtCap(facts({ last: { iteration: 5, claimed: true, exitCode: 0 }, lastRefusalIteration: 5 })).grant).toBe(false);
    expect(graceAtCap(facts({ last: { iteration: 5, claimed: true, exitCode: 0 }, councilEnabled: false })).grant).toBe(false);
    expect(graceAtCap(facts({ last: { iteration: 5, claimed: false, exitCode: 1 } })).grant).toBe(false);
    expect(graceAtCap(facts({ last: null })).grant).toBe(false);
    expect(graceAtCap(facts({ iteration: 4 })).grant).toBe(false);
    expect(graceAtCap(facts({ enabled: false })).grant).toBe(false);
  });

  it('a failed call’s claim is pending even without a council', () => {
    expect(
      claimPending({
        last: { iteration: 2, claimed: true, exitCode: 3 },
        councilEnabled: false,
        lastVerdictIteration: null,
        lastRefusalIteration: null,
      }),
    ).toBe(true);
  });
});
