/**
 * How one member's call becomes a recorded vote (rounds/council-round.ts `voteRecord`): the
 * severity/error-budget rule reconsiders only a member that answered REJECT or CANNOT_VALIDATE,
 * never a call that failed, timed out or gave no vote.
 */
import { describe, expect, it } from 'vitest';
import { defaultKnobs } from '../../schemas/knobs.js';
import { blankAgentResult, type AgentResult } from '../../schemas/activities.js';
import { voteRecord } from '../../rounds/council-round.js';

const knobs = { ...defaultKnobs(), councilSeverityThreshold: 'medium' as const, councilErrorBudget: 0 };
const lowIssue = [{ severity: 'low' as const, description: 'README typo' }];

function result(over: Partial<AgentResult>): AgentResult {
  return blankAgentResult({
    exitCode: 0,
    attempt: 1,
    durationMs: 10,
    logPath: '/tmp/council.log',
    promptPath: '/tmp/council.prompt.md',
    outputBytes: 100,
    ...over,
  });
}

describe('voteRecord', () => {
  it('reconsiders a REJECT whose issues are all below the severity threshold', () => {
    const v = voteRecord(1, 'test-auditor', result({ vote: { vote: 'REJECT', reason: 'typo', issues: lowIssue } }), knobs);
    expect(v).toMatchObject({ recorded: 'REJECT', approves: true, overridden: true, issues: 1 });
  });

  it('keeps a REJECT with an issue at the threshold', () => {
    const v = voteRecord(
      1,
      'test-auditor',
      result({ vote: { vote: 'REJECT', reason: 'bug', issues: [{ severity: 'medium', description: 'crash' }] } }),
      knobs,
    );
    expect(v).toMatchObject({ recorded: 'REJECT', approves: false, overridden: false });
  });

  it('never turns a failed, timed-out or unparseable call into an approval', () => {
    const cases: [AgentResult | null, string][] = [
      [result({ timedOut: true, exitCode: 124, vote: { vote: null, reason: null, issues: lowIssue } }), 'TIMEOUT'],
      [result({ vote: { vote: null, reason: null, issues: lowIssue } }), 'UNPARSEABLE'],
      [result({ exitCode: 2, vote: { vote: null, reason: null, issues: lowIssue } }), 'PROVIDER_FAILURE'],
      [null, 'PROVIDER_FAILURE'],
    ];
    for (const [r, recorded] of cases) {
      expect(voteRecord(2, 'devils-advocate-minded', r, knobs)).toMatchObject({ recorded, approves: false, overridden: false });
    }
  });
});
