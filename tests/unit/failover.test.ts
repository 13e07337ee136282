/** Provider failover (rules/failover.ts): the chain, when a rate limit fails over, and the knobs a taking-over provider runs with. */
import { describe, expect, it } from 'vitest';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';
import { failoverChain, failOverOnRateLimit, knobsFor } from '../../rules/failover.js';

const k = (over: Partial<Knobs>): Knobs => ({ ...defaultKnobs(), ...over });

describe('failover', () => {
  it("orders the chain, without the run's own provider, command, duplicates or unknown names", () => {
    expect(failoverChain(k({ provider: 'claude', providerFailover: 'claude, codex ,gemini,codex,command' }))).toEqual(['codex', 'gemini']);
    expect(failoverChain(k({ provider: 'claude', providerFailover: '' }))).toEqual([]);
  });

  it('fails over on a rate-limit wait longer than failoverAfterSeconds, only with a chain', () => {
    const knobs = k({ provider: 'claude', providerFailover: 'codex', failoverAfterSeconds: 300 });
    expect(failOverOnRateLimit(301, knobs)).toBe(true);
    expect(failOverOnRateLimit(300, knobs)).toBe(false);
    expect(failOverOnRateLimit(9999, { ...knobs, providerFailover: '' })).toBe(false);
  });

  it("runs a taking-over provider with its own defaults, not the run provider's argv or models", () => {
    const knobs = k({
      provider: 'claude',
      agentCommand: ['/opt/claude'],
      model: 'opus',
      modelFast: 'haiku',
      effort: 'high',
      providerFailover: 'codex',
    });
    expect(knobsFor('claude', knobs)).toBe(knobs);
    expect(knobsFor('codex', knobs)).toMatchObject({ provider: 'codex', agentCommand: [], model: '', modelFast: '', effort: '' });
  });
});
