/**
 * A perpetual run's requests for a person, listed in its outcome (rules/agent-requests.ts):
 * the ones that did not pause the run, newest five; a request a person answered in a pause, and
 * other escalations, are not listed.
 */
import { describe, expect, it } from 'vitest';
import type { EscalationRecord } from '../../schemas/run.js';
import { agentRequestNotes } from '../../rules/agent-requests.js';

const record = (over: Partial<EscalationRecord>): EscalationRecord => ({
  iteration: 2,
  reason: 'agent_request',
  detail: 'the agent asked for a human review: the PRD says 5, the test 4',
  proxies: null,
  handoffPath: '/h.json',
  handoffMarkdownPath: '/h.md',
  mode: 'perpetual',
  paused: false,
  notified: { delivered: 0, failed: 0 },
  at: '2026-01-01T00:00:00Z',
  questions: [],
  ...over,
});

describe('agentRequestNotes', () => {
  it('lists the requests that did not pause the run', () => {
    expect(agentRequestNotes([record({})])).toEqual([
      'the agent asked for a person at iteration 2, and the run went on (perpetual mode): the agent asked for a human review: the PRD says 5, the test 4',
    ]);
  });
  it('leaves out requests a pause answered and other escalations; keeps the newest five', () => {
    expect(agentRequestNotes([record({ paused: true }), record({ reason: 'uncertainty' })])).toEqual([]);
    const many = Array.from({ length: 7 }, (_, i) => record({ iteration: i + 1 }));
    expect(agentRequestNotes(many).map((n) => n.match(/iteration (\d+)/)?.[1])).toEqual(['3', '4', '5', '6', '7']);
  });
});
