/**
 * An agent that cannot run as configured is said by the library (lib/providers/call.ts) and ends
 * the agent activity for good (activities/agent-failure.ts): a retry would fail the same way.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { notRunnableFailure } from '../../activities/agent-failure.js';
import { AgentNotRunnable, prepareCall, type CallRequest } from '../../lib/providers/call.js';
import { FAILURE_TYPES } from '../../schemas/activities.js';

const request = (over: Partial<CallRequest>): CallRequest => ({
  provider: 'command',
  argv: [],
  prompt: 'p',
  promptPath: '/tmp/p',
  role: 'iteration',
  tier: 'development',
  model: null,
  effort: null,
  fallbackModel: null,
  remainingBudgetUsd: null,
  resumeSession: null,
  fresh: false,
  ...over,
});

describe('an agent that cannot run as configured', () => {
  it('is said by the library without Temporal, and says what to set', async () => {
    const err = await prepareCall(request({ argv: [] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentNotRunnable);
    expect((err as Error).message).toMatch(/no agent command configured \(knob agentCommand/);
  });

  it('ends the activity for good, with its own failure type', async () => {
    const failure = await prepareCall(request({ argv: [] }))
      .catch(notRunnableFailure)
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(FAILURE_TYPES.agentNotRunnable);
    expect((failure as ApplicationFailure).nonRetryable).toBe(true);
  });

  it('leaves any other error as it is (a retry may help)', () => {
    const other = new Error('disk full');
    expect(() => notRunnableFailure(other)).toThrow(other);
  });

  it('a configured command prepares as it is', async () => {
    const call = await prepareCall(request({ argv: ['./agent.sh', '--flag'] }));
    expect(call.argv).toEqual(['./agent.sh', '--flag']);
    expect(call.stdin).toBe('p');
  });
});
