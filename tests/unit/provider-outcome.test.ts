/** providerOutcome (workflows/decisions/provider-outcome.ts): what the circuit breaker hears about a call. */
import { describe, expect, it } from 'vitest';
import { providerOutcome } from '../../workflows/decisions/provider-outcome.js';

const base = { exitCode: 1, timedOut: false, rateLimited: false, authError: false, tail: '' };

describe('providerOutcome', () => {
  it('counts rate limits, auth errors and API or network failures as the provider failing', () => {
    expect(providerOutcome({ ...base, rateLimited: true }).outcome).toBe('failure');
    expect(providerOutcome({ ...base, authError: true }).outcome).toBe('failure');
    expect(providerOutcome({ ...base, tail: 'working...\nAPI Error: 529 {"type":"overloaded_error"}\n' })).toEqual({ outcome: 'failure', reason: 'API failure: API Error: 529 {"type":"overloaded_error"}' });
    expect(providerOutcome({ ...base, tail: 'Error: connect ECONNREFUSED 1.2.3.4:443\n' }).outcome).toBe('failure');
  });

  it('counts anything else as a success: the agent ran, whatever it concluded', () => {
    expect(providerOutcome({ ...base, exitCode: 0 }).outcome).toBe('success');
    expect(providerOutcome({ ...base, tail: 'npm ERR! Test failed.\n' }).outcome).toBe('success');
    expect(providerOutcome({ ...base, timedOut: true, exitCode: 124, tail: 'API Error: 500' }).outcome).toBe('success');
  });

  it('does not blame the provider for a failing test that mentions a 503', () => {
    expect(providerOutcome({ ...base, tail: ' FAIL  test/api.test.ts > returns 503 service unavailable when the db is down\n' }).outcome).toBe('success');
  });
});
