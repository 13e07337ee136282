/** providerOutcome (rules/provider-outcome.ts): what the circuit breaker hears about a call. */
import { describe, expect, it } from 'vitest';
import { HUNG_STREAM_REASON, providerOutcome } from '../../rules/provider-outcome.js';

const base = { exitCode: 1, timedOut: false, rateLimited: false, authError: false, tail: '' };

describe('providerOutcome', () => {
  it('counts rate limits, auth errors and API or network failures as the provider failing', () => {
    expect(providerOutcome({ ...base, rateLimited: true }).outcome).toBe('failure');
    expect(providerOutcome({ ...base, authError: true }).outcome).toBe('failure');
    expect(providerOutcome({ ...base, tail: 'working...\nAPI Error: 529 {"type":"overloaded_error"}\n' })).toEqual({
      outcome: 'failure',
      reason: 'API failure: API Error: 529 {"type":"overloaded_error"}',
    });
    expect(providerOutcome({ ...base, tail: 'Error: connect ECONNREFUSED 1.2.3.4:443\n' }).outcome).toBe('failure');
  });

  it('counts anything else as a success: the agent ran, whatever it concluded', () => {
    expect(providerOutcome({ ...base, exitCode: 0 }).outcome).toBe('success');
    expect(providerOutcome({ ...base, tail: 'npm ERR! Test failed.\n' }).outcome).toBe('success');
    expect(providerOutcome({ ...base, timedOut: true, exitCode: 124, tail: 'API Error: 500' }).outcome).toBe('success');
  });

  it('never blames the provider for a call a sandbox limit ended, whatever its last lines say as its tree dies', () => {
    const limitHit = 'the agent started 4096 processes: pid limit (sandboxPids=4096, threads count)';
    // The adversary: a fork bomb whose dying tree prints network errors (its proxy's connections cut).
    const dying = 'sh: fork: Resource temporarily unavailable\nError: read ECONNRESET\nfetch failed\n';
    expect(providerOutcome({ ...base, exitCode: 137, tail: dying, limitHit })).toEqual({ outcome: 'success', reason: null });
    expect(
      providerOutcome({ ...base, exitCode: 137, tail: 'API Error: 529 overloaded', limitHit: 'the agent used 4.0 GiB: memory limit' })
        .outcome,
    ).toBe('success');
    // The control: the same output without a limit hit is the provider's failure, as before.
    expect(providerOutcome({ ...base, exitCode: 137, tail: dying }).outcome).toBe('failure');
    expect(providerOutcome({ ...base, exitCode: 137, tail: dying, limitHit: null }).outcome).toBe('failure');
  });

  it('counts a call that timed out without a word from the model (a hung stream) as the provider failing', () => {
    expect(providerOutcome({ ...base, timedOut: true, exitCode: 124, modelOutput: false })).toEqual({
      outcome: 'failure',
      reason: HUNG_STREAM_REASON,
    });
    // The CLI's own start-up records are no answer: the preset says so with modelOutput false,
    // whatever the tail holds.
    expect(
      providerOutcome({
        ...base,
        timedOut: true,
        exitCode: 124,
        modelOutput: false,
        tail: '[claude session abc · model sonnet]\n[no result record: the output ended early]',
      }).outcome,
    ).toBe('failure');
  });

  it('does not blame the provider for a timeout after the model answered, or where the output cannot tell', () => {
    // The model answered, then a tool (a test run) took the rest of the time: the agent's business.
    expect(providerOutcome({ ...base, timedOut: true, exitCode: 124, modelOutput: true }).outcome).toBe('success');
    // The command provider and CLIs that print only at the end cannot tell: not the provider's failure.
    expect(providerOutcome({ ...base, timedOut: true, exitCode: 124, modelOutput: null }).outcome).toBe('success');
    expect(providerOutcome({ ...base, timedOut: true, exitCode: 124 }).outcome).toBe('success');
    // A call that finished is judged by its exit and tail, whatever modelOutput says.
    expect(providerOutcome({ ...base, exitCode: 0, modelOutput: false }).outcome).toBe('success');
  });

  it('counts a call the silence watchdog ended as a hung call, whatever the preset can tell of its output', () => {
    const hung = 'no output for 15 min: ended';
    for (const modelOutput of [true, false, null]) {
      expect(providerOutcome({ ...base, timedOut: true, exitCode: 124, modelOutput, hung })).toEqual({
        outcome: 'failure',
        reason: 'no output for 15 min: ended (a hung call)',
      });
    }
    // The control: the same timeout without the watchdog, after the model answered, stays the agent's business.
    expect(providerOutcome({ ...base, timedOut: true, exitCode: 124, modelOutput: true, hung: null }).outcome).toBe('success');
    // A sandbox limit that ended the call is never the provider's, hung or not.
    expect(
      providerOutcome({ ...base, timedOut: true, exitCode: 124, hung, limitHit: 'the agent used 4.0 GiB: memory limit' }).outcome,
    ).toBe('success');
  });

  it('does not blame the provider for a failing test that mentions a 503', () => {
    expect(
      providerOutcome({ ...base, tail: ' FAIL  test/api.test.ts > returns 503 service unavailable when the db is down\n' }).outcome,
    ).toBe('success');
  });
});
