/**
 * Owns the unit tests of the completion council's pure decisions (spec §2.2–§2.11):
 * vote parsing and recording (rules/vote.ts), the council arithmetic
 * (council.ts: threshold, roles, severity budget, tally, devil's advocate), when the council
 * convenes (convene.ts), done signals, the circuit breaker and the safety valves (breaker.ts),
 * and what a member and the devil's advocate are asked (council-prompt.ts).
 */
import { describe, expect, it } from 'vitest';
import { defaultKnobs } from '../../schemas/knobs.js';
import type { ConvergenceState } from '../../schemas/run.js';
import { breakerTrip, CONSECUTIVE_DONE_SIGNALS_TRIP, safetyValve, trackDoneSignal, type BreakerTrip } from '../../rules/breaker.js';
import { shouldConvene, type ConveneFacts, type ConveneKnobs, type ConveneTrigger } from '../../rules/convene.js';
import { councilPrompt, devilsAdvocatePrompt, type CouncilPromptInput } from '../../rules/council-prompt.js';
import {
  applyDevilsAdvocate,
  applySeverityBudget,
  devilsAdvocateDue,
  effectiveThreshold,
  MEMBER_ROLES,
  memberRole,
  tally,
  type MemberRole,
  type Tally,
} from '../../rules/council.js';
import {
  parseVote,
  recordVote,
  type Issue,
  type MemberCallFacts,
  type ParsedVote,
  type RecordedVote,
  type Severity,
  type Vote,
} from '../../rules/vote.js';

// ---------------------------------------------------------------------------------------------
// parseVote (spec §2.6)
// ---------------------------------------------------------------------------------------------

describe('parseVote: the vote', () => {
  it.each<[string, Vote]>([
    ['VOTE: APPROVE', 'APPROVE'],
    ['VOTE: REJECT', 'REJECT'],
    ['VOTE: CANNOT_VALIDATE', 'CANNOT_VALIDATE'],
    ['VOTE:APPROVE', 'APPROVE'],
    ['VOTE:REJECT', 'REJECT'],
    ['VOTE : REJECT', 'REJECT'],
    ['VOTE:\tAPPROVE', 'APPROVE'],
    ['VOTE:   CANNOT_VALIDATE   ', 'CANNOT_VALIDATE'],
    ['**VOTE:** APPROVE', 'APPROVE'],
    ['**VOTE**: REJECT', 'REJECT'],
    ['**VOTE: APPROVE**', 'APPROVE'],
    ['> VOTE: REJECT', 'REJECT'],
    ['>> **VOTE:** CANNOT_VALIDATE', 'CANNOT_VALIDATE'],
    ['_VOTE_: APPROVE', 'APPROVE'],
    ['__VOTE__: REJECT', 'REJECT'],
    ['*VOTE*: *APPROVE*', 'APPROVE'],
    ['- VOTE: APPROVE', 'APPROVE'],
    ['  VOTE: REJECT', 'REJECT'],
    ['VOTE: APPROVE.', 'APPROVE'],
    ['VOTE: REJECT, the tests fail', 'REJECT'],
    ['(VOTE: APPROVE)', 'APPROVE'],
    ['My final answer. VOTE: REJECT', 'REJECT'],
    ['Summary:\nVOTE: APPROVE\nREASON: done', 'APPROVE'],
    ['VOTE: APPROVE\r\nREASON: done', 'APPROVE'],
  ])('%j parses as %s', (text, vote) => {
    expect(parseVote(text).vote).toBe(vote);
  });

  it.each<[string, string]>([
    ['VOTE: APPROVED', 'past tense is not the token'],
    ['VOTE: APPROVE_WITH_CONCERNS', 'a longer identifier is not the token'],
    ['VOTE: APPROVE1', 'a trailing digit is not a word boundary'],
    ['VOTE: REJECTED', 'past tense'],
    ['VOTE: REJECTS', 'plural'],
    ['VOTE: CANNOT_VALIDATE_YET', 'longer identifier'],
    ['VOTE: CANNOT VALIDATE', 'space instead of underscore'],
    ['vote: approve', 'lowercase'],
    ['Vote: Approve', 'title case'],
    ['VOTE: approve', 'lowercase value'],
    ['vote: APPROVE', 'lowercase label'],
    ['REVOTE: APPROVE', 'label inside a longer word'],
    ['PREVOTE: REJECT', 'label inside a longer word'],
    ['MY_VOTE: APPROVE', 'label after an underscore-joined word'],
    ['VOTES: APPROVE', 'plural label'],
    ['VOTE APPROVE', 'no colon'],
    ['VOTE= APPROVE', 'equals instead of colon'],
    ['VOTE: MAYBE', 'unknown value'],
    ['VERDICT: APPROVE', 'the code-review keyword is not the council keyword'],
    ['I APPROVE of this work', 'no VOTE label'],
    ['', 'empty'],
    ['   \n\n  ', 'blank'],
  ])('%j does not parse (%s)', (text) => {
    expect(parseVote(text).vote).toBeNull();
  });

  it.each<[string, Vote]>([
    ['VOTE: REJECT\nREASON: x\nVOTE: APPROVE', 'REJECT'],
    ['VOTE: APPROVE\nlater I changed my mind\nVOTE: REJECT', 'APPROVE'],
    ['VOTE: APPROVED\nVOTE: REJECT', 'REJECT'],
    ['REVOTE: APPROVE\nVOTE: CANNOT_VALIDATE', 'CANNOT_VALIDATE'],
    ['vote: approve\n**VOTE:** REJECT', 'REJECT'],
    ['VOTE: APPROVE_WITH_CONCERNS then VOTE: APPROVE', 'APPROVE'],
  ])('the first well-formed vote wins: %j -> %s', (text, vote) => {
    expect(parseVote(text).vote).toBe(vote);
  });

  it('reads a vote on the first of many lines', () => {
    const text = ['VOTE: REJECT', ...Array.from({ length: 500 }, (_, i) => `analysis line ${i}`)].join('\n');
    expect(parseVote(text).vote).toBe('REJECT');
  });

  it('reads a vote deep inside a long answer (no truncation to the tail)', () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `analysis line ${i}`);
    lines[10] = 'VOTE: CANNOT_VALIDATE';
    expect(parseVote(lines.join('\n')).vote).toBe('CANNOT_VALIDATE');
  });

  it('reads a vote on the last line without a trailing newline', () => {
    expect(parseVote('line one\nline two\nVOTE: APPROVE').vote).toBe('APPROVE');
  });
});

describe('parseVote: reason', () => {
  it.each<[string, string | null]>([
    ['VOTE: APPROVE\nREASON: every requirement is implemented', 'every requirement is implemented'],
    ['REASON: tests pass\nVOTE: APPROVE', 'tests pass'],
    ['**REASON:** the login page is missing', 'the login page is missing'],
    ['> REASON: quoted reason', 'quoted reason'],
    ['- REASON: bullet reason', 'bullet reason'],
    ['REASON:no space', 'no space'],
    ['REASON: **all** `green`', 'all green'],
    ['REASON:   lots   of\t\tspace   ', 'lots of space'],
    ['VOTE: APPROVE\nREASON: first\nREASON: second', 'first'],
    ['VOTE: APPROVE', null],
    ['VOTE: APPROVE\nREASON:', null],
    ['VOTE: APPROVE\nREASON: ***', null],
    ['no reason label at all', null],
  ])('%j -> %j', (text, reason) => {
    expect(parseVote(text).reason).toBe(reason);
  });

  it('truncates a long reason to 300 characters ending with an ellipsis', () => {
    const reason = parseVote(`REASON: ${'a'.repeat(1000)}`).reason;
    expect(reason).not.toBeNull();
    expect(reason).toHaveLength(300);
    expect(reason?.endsWith('…')).toBe(true);
    expect(reason?.slice(0, 299)).toBe('a'.repeat(299));
  });

  it('keeps a reason of exactly 300 characters intact', () => {
    expect(parseVote(`REASON: ${'b'.repeat(300)}`).reason).toBe('b'.repeat(300));
  });
});

describe('parseVote: issues', () => {
  it('collects every ISSUES line with its severity, in order', () => {
    const text = [
      'VOTE: REJECT',
      'REASON: not done',
      'ISSUES: CRITICAL: the API returns 500 on login',
      'ISSUES: HIGH: no input validation',
      'ISSUES: MEDIUM: missing docs',
      'ISSUES: LOW: a typo in the README',
    ].join('\n');
    expect(parseVote(text)).toEqual<ParsedVote>({
      vote: 'REJECT',
      reason: 'not done',
      issues: [
        { severity: 'critical', description: 'the API returns 500 on login' },
        { severity: 'high', description: 'no input validation' },
        { severity: 'medium', description: 'missing docs' },
        { severity: 'low', description: 'a typo in the README' },
      ],
    });
  });

  it.each<[string, Issue[]]>([
    ['ISSUES: HIGH:no space after colon', [{ severity: 'high', description: 'no space after colon' }]],
    ['ISSUE: LOW: singular label', [{ severity: 'low', description: 'singular label' }]],
    ['- ISSUES: MEDIUM: bulleted', [{ severity: 'medium', description: 'bulleted' }]],
    ['**ISSUES:** CRITICAL: bold label', [{ severity: 'critical', description: 'bold label' }]],
    ['ISSUES: high: lowercase severity', [{ severity: 'high', description: 'lowercase severity' }]],
    ['ISSUES: Critical: title case severity', [{ severity: 'critical', description: 'title case severity' }]],
    ['ISSUES: none', []],
    ['ISSUES: BLOCKER: unknown severity', []],
    ['ISSUES: HIGH', []],
    ['the word ISSUES: HIGH: mid-line does not count', []],
    ['', []],
  ])('%j -> %j', (text, issues) => {
    expect(parseVote(text).issues).toEqual(issues);
  });

  it('keeps at most 50 issues', () => {
    const text = Array.from({ length: 80 }, (_, i) => `ISSUES: LOW: issue ${i}`).join('\n');
    const issues = parseVote(text).issues;
    expect(issues).toHaveLength(50);
    expect(issues[0]).toEqual({ severity: 'low', description: 'issue 0' });
    expect(issues[49]).toEqual({ severity: 'low', description: 'issue 49' });
  });

  it('truncates a long issue description to 300 characters', () => {
    const issues = parseVote(`ISSUES: HIGH: ${'z'.repeat(500)}`).issues;
    expect(issues).toHaveLength(1);
    expect(issues[0]?.description).toHaveLength(300);
    expect(issues[0]?.description.endsWith('…')).toBe(true);
  });

  it('parses issues even when there is no vote', () => {
    const parsed = parseVote('ISSUES: MEDIUM: something');
    expect(parsed.vote).toBeNull();
    expect(parsed.issues).toEqual([{ severity: 'medium', description: 'something' }]);
  });
});

// ---------------------------------------------------------------------------------------------
// recordVote
// ---------------------------------------------------------------------------------------------

describe('recordVote', () => {
  const parsed = (vote: Vote | null, reason: string | null = null): ParsedVote => ({ vote, reason, issues: [] });
  const facts = (over: Partial<MemberCallFacts>): MemberCallFacts => ({
    exitCode: 0,
    timedOut: false,
    lost: false,
    outputBytes: 100,
    parsed: parsed(null),
    ...over,
  });

  it.each<[string, Partial<MemberCallFacts>, RecordedVote, boolean]>([
    ['a clean APPROVE', { parsed: parsed('APPROVE') }, 'APPROVE', true],
    ['a REJECT', { parsed: parsed('REJECT') }, 'REJECT', false],
    ['CANNOT_VALIDATE is recorded but does not approve', { parsed: parsed('CANNOT_VALIDATE') }, 'CANNOT_VALIDATE', false],
    ['a lost call', { lost: true }, 'PROVIDER_FAILURE', false],
    ['a lost call wins over a parsed APPROVE', { lost: true, parsed: parsed('APPROVE') }, 'PROVIDER_FAILURE', false],
    ['a lost call wins over a timeout', { lost: true, timedOut: true }, 'PROVIDER_FAILURE', false],
    ['a timeout', { timedOut: true }, 'TIMEOUT', false],
    ['a timeout wins over a parsed APPROVE', { timedOut: true, parsed: parsed('APPROVE') }, 'TIMEOUT', false],
    ['a timeout with a non-zero exit', { timedOut: true, exitCode: 137 }, 'TIMEOUT', false],
    ['no vote and a non-zero exit', { exitCode: 1 }, 'PROVIDER_FAILURE', false],
    ['no vote, a non-zero exit and no output', { exitCode: 2, outputBytes: 0 }, 'PROVIDER_FAILURE', false],
    ['no vote and a negative exit code', { exitCode: -1 }, 'PROVIDER_FAILURE', false],
    ['no vote and empty output', { outputBytes: 0 }, 'EMPTY', false],
    ['no vote in a non-empty answer', { outputBytes: 42 }, 'UNPARSEABLE', false],
    ['a parsed APPROVE despite a non-zero exit still counts', { exitCode: 1, parsed: parsed('APPROVE') }, 'APPROVE', true],
  ])('%s -> %s', (_label, over, recorded, approves) => {
    const r = recordVote(facts(over));
    expect(r.recorded).toBe(recorded);
    expect(r.approves).toBe(approves);
  });

  it('carries the parsed reason on a vote, and an empty reason when there is none', () => {
    expect(recordVote(facts({ parsed: parsed('REJECT', 'tests are red') })).reason).toBe('tests are red');
    expect(recordVote(facts({ parsed: parsed('APPROVE') })).reason).toBe('');
  });

  it('explains failures', () => {
    expect(recordVote(facts({ exitCode: 3 })).reason).toContain('3');
    expect(recordVote(facts({ timedOut: true })).reason).toMatch(/timeout/);
    expect(recordVote(facts({ outputBytes: 0 })).reason).toMatch(/empty/);
    expect(recordVote(facts({})).reason).toMatch(/VOTE/);
    expect(recordVote(facts({ lost: true })).reason).toMatch(/attempt/);
  });

  it('only an APPROVE ever approves (exhaustive over the fact combinations)', () => {
    for (const vote of [null, 'APPROVE', 'REJECT', 'CANNOT_VALIDATE'] as const) {
      for (const lost of [false, true]) {
        for (const timedOut of [false, true]) {
          for (const exitCode of [0, 1]) {
            for (const outputBytes of [0, 10]) {
              const r = recordVote({ exitCode, timedOut, lost, outputBytes, parsed: parsed(vote) });
              expect(r.approves).toBe(r.recorded === 'APPROVE');
              expect(r.approves).toBe(vote === 'APPROVE' && !lost && !timedOut);
            }
          }
        }
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// effectiveThreshold (spec §2.2)
// ---------------------------------------------------------------------------------------------

describe('effectiveThreshold', () => {
  // size -> [configured, expected]; floor ceil(2n/3): 1->1, 2->2, 3->2, 4->3, 5->4, 6->4, 7->5.
  const TABLE: Record<number, [number, number][]> = {
    1: [
      [-1, 1],
      [0, 1],
      [1, 1],
      [2, 1],
      [9, 1],
    ],
    2: [
      [-1, 2],
      [0, 2],
      [1, 2],
      [2, 2],
      [3, 2],
      [9, 2],
    ],
    3: [
      [-1, 2],
      [0, 2],
      [1, 2],
      [2, 2],
      [3, 3],
      [4, 3],
      [5, 3],
      [9, 3],
    ],
    4: [
      [-1, 3],
      [0, 3],
      [1, 3],
      [2, 3],
      [3, 3],
      [4, 4],
      [5, 4],
      [9, 4],
    ],
    5: [
      [-1, 4],
      [0, 4],
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
      [5, 5],
      [6, 5],
      [9, 5],
    ],
    6: [
      [-1, 4],
      [0, 4],
      [1, 4],
      [3, 4],
      [4, 4],
      [5, 5],
      [6, 6],
      [7, 6],
      [9, 6],
    ],
    7: [
      [-1, 5],
      [0, 5],
      [1, 5],
      [4, 5],
      [5, 5],
      [6, 6],
      [7, 7],
      [8, 7],
      [9, 7],
    ],
  };
  const rows = Object.entries(TABLE).flatMap(([size, cases]) =>
    cases.map(([configured, expected]) => [Number(size), configured, expected] as const),
  );

  it.each(rows)('size %i, configured %i -> %i', (size, configured, expected) => {
    expect(effectiveThreshold(size, configured)).toBe(expected);
  });

  it.each<[number, number]>([
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [5, 4],
    [6, 4],
    [7, 5],
    [8, 6],
    [9, 6],
  ])('size %i with the default configured threshold 2 -> %i', (size, expected) => {
    expect(effectiveThreshold(size, defaultKnobs().councilThreshold)).toBe(expected);
  });

  it('matches the spec formula clamp(max(floor((2n+2)/3), op), 1, n) over a wide range', () => {
    for (let n = 1; n <= 40; n++) {
      for (let op = -2; op <= 45; op++) {
        const spec = Math.min(Math.max(Math.max(Math.floor((2 * n + 2) / 3), op), 1), n);
        expect(effectiveThreshold(n, op), `n=${n} op=${op}`).toBe(spec);
      }
    }
  });

  it('a configured threshold can only tighten, never loosen, and never exceeds the size', () => {
    for (let n = 1; n <= 12; n++) {
      const floor = effectiveThreshold(n, 0);
      for (let op = 0; op <= 15; op++) {
        const t = effectiveThreshold(n, op);
        expect(t).toBeGreaterThanOrEqual(floor);
        expect(t).toBeLessThanOrEqual(n);
        expect(t).toBeGreaterThanOrEqual(1);
      }
    }
  });

  it('treats a size below 1 as a council of one', () => {
    expect(effectiveThreshold(0, 0)).toBe(1);
    expect(effectiveThreshold(-3, 5)).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// memberRole
// ---------------------------------------------------------------------------------------------

describe('memberRole', () => {
  it.each<[number, MemberRole]>([
    [0, 'requirements-verifier'],
    [1, 'test-auditor'],
    [2, 'devils-advocate-minded'],
    [3, 'requirements-verifier'],
    [4, 'test-auditor'],
    [5, 'devils-advocate-minded'],
    [6, 'requirements-verifier'],
    [8, 'devils-advocate-minded'],
    [-1, 'devils-advocate-minded'],
    [-3, 'requirements-verifier'],
  ])('member %i is %s', (index, role) => {
    expect(memberRole(index)).toBe(role);
  });

  it('a council of three has each role exactly once', () => {
    expect(new Set([0, 1, 2].map(memberRole))).toEqual(new Set(MEMBER_ROLES));
  });
});

// ---------------------------------------------------------------------------------------------
// applySeverityBudget (spec §2.8)
// ---------------------------------------------------------------------------------------------

describe('applySeverityBudget', () => {
  const issues = (...severities: Severity[]): Issue[] => severities.map((severity, i) => ({ severity, description: `issue ${i}` }));

  it.each<[string, boolean, Issue[], Severity, number, boolean, boolean]>([
    // [label, approves, issues, threshold, budget, expected approves, expected overridden]
    ['an APPROVE is never touched', true, issues('critical'), 'medium', 0, true, false],
    ['an APPROVE without issues is never touched', true, [], 'high', 0.5, true, false],
    ['threshold low: a REJECT with only low issues stays REJECT', false, issues('low', 'low'), 'low', 0, false, false],
    ['threshold low: a REJECT with issues stays REJECT even with a full budget', false, issues('low'), 'low', 1, false, false],
    ['a REJECT without issues stays REJECT', false, [], 'medium', 0, false, false],
    ['a REJECT without issues stays REJECT (critical threshold)', false, [], 'critical', 1, false, false],
    ['threshold medium: a medium issue blocks', false, issues('medium'), 'medium', 0, false, false],
    ['threshold medium: a high issue blocks', false, issues('low', 'high'), 'medium', 0, false, false],
    ['threshold medium: a critical issue blocks', false, issues('critical'), 'medium', 1, false, false],
    ['threshold medium: only low issues, budget 0 -> APPROVE', false, issues('low', 'low', 'low'), 'medium', 0, true, true],
    ['threshold high: low and medium issues, budget 0 -> APPROVE', false, issues('low', 'medium'), 'high', 0, true, true],
    ['threshold high: one high issue among low ones blocks', false, issues('low', 'low', 'high'), 'high', 0, false, false],
    [
      'threshold critical: high issues do not block, budget 0 -> APPROVE',
      false,
      issues('high', 'high', 'medium'),
      'critical',
      0,
      true,
      true,
    ],
    ['threshold critical: a critical issue blocks', false, issues('high', 'critical'), 'critical', 0, false, false],
    // With no blocking issue, non_blocking/total is 1: any budget below 1 keeps the REJECT.
    [
      'threshold medium: only low issues, budget 0.5 -> share 1 > 0.5 keeps REJECT',
      false,
      issues('low', 'low'),
      'medium',
      0.5,
      false,
      false,
    ],
    ['threshold medium: only low issues, budget 0.99 keeps REJECT', false, issues('low'), 'medium', 0.99, false, false],
    [
      'threshold medium: only low issues, budget 1 -> share 1 is not above 1 -> APPROVE',
      false,
      issues('low', 'low'),
      'medium',
      1,
      true,
      true,
    ],
    ['threshold high: medium issues, budget 1 -> APPROVE', false, issues('medium'), 'high', 1, true, true],
    ['a negative budget counts as 0', false, issues('low'), 'medium', -0.1, true, true],
  ])('%s', (_label, approves, list, threshold, budget, expApproves, expOverridden) => {
    expect(applySeverityBudget(approves, list, threshold, budget)).toEqual({ approves: expApproves, overridden: expOverridden });
  });

  it('overrides only ever turn a REJECT into an APPROVE, never the reverse', () => {
    const severities: Severity[] = ['low', 'medium', 'high', 'critical'];
    for (const threshold of severities) {
      for (const a of severities) {
        for (const b of severities) {
          for (const budget of [0, 0.25, 1]) {
            const r = applySeverityBudget(true, issues(a, b), threshold, budget);
            expect(r).toEqual({ approves: true, overridden: false });
            const rej = applySeverityBudget(false, issues(a, b), threshold, budget);
            expect(rej.overridden).toBe(rej.approves);
            const blocking =
              threshold === 'low' ||
              severities.indexOf(a) >= severities.indexOf(threshold) ||
              severities.indexOf(b) >= severities.indexOf(threshold);
            if (blocking) expect(rej.approves).toBe(false);
          }
        }
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// tally, devil's advocate (spec §2.4 step 7, §2.8)
// ---------------------------------------------------------------------------------------------

describe('tally', () => {
  const T = true;
  const F = false;

  it.each<[string, boolean[], number, number, Pick<Tally, 'approve' | 'reject' | 'threshold' | 'complete' | 'verdict'>]>([
    ['3 of 3', [T, T, T], 3, 2, { approve: 3, reject: 0, threshold: 2, complete: true, verdict: 'COMPLETE' }],
    ['2 of 3 meets the threshold 2', [T, F, T], 3, 2, { approve: 2, reject: 1, threshold: 2, complete: true, verdict: 'COMPLETE' }],
    ['1 of 3', [T, F, F], 3, 2, { approve: 1, reject: 2, threshold: 2, complete: true, verdict: 'CONTINUE' }],
    ['0 of 3', [F, F, F], 3, 2, { approve: 0, reject: 3, threshold: 2, complete: true, verdict: 'CONTINUE' }],
    ['2 of 3 with a configured threshold 3', [T, T, F], 3, 3, { approve: 2, reject: 1, threshold: 3, complete: true, verdict: 'CONTINUE' }],
    [
      '2 of 3 with a configured threshold 1 (cannot loosen)',
      [T, F, F],
      3,
      1,
      { approve: 1, reject: 2, threshold: 2, complete: true, verdict: 'CONTINUE' },
    ],
    [
      'too few votes: 2 approvals of a council of 3',
      [T, T],
      3,
      2,
      { approve: 2, reject: 0, threshold: 2, complete: false, verdict: 'CONTINUE' },
    ],
    [
      'too many votes: 4 approvals for a council of 3',
      [T, T, T, T],
      3,
      2,
      { approve: 4, reject: 0, threshold: 2, complete: false, verdict: 'CONTINUE' },
    ],
    ['no votes at all', [], 3, 2, { approve: 0, reject: 0, threshold: 2, complete: false, verdict: 'CONTINUE' }],
    [
      'size 5: 3 approvals are not enough',
      [T, T, T, F, F],
      5,
      2,
      { approve: 3, reject: 2, threshold: 4, complete: true, verdict: 'CONTINUE' },
    ],
    ['size 5: 4 approvals are enough', [T, T, F, T, T], 5, 2, { approve: 4, reject: 1, threshold: 4, complete: true, verdict: 'COMPLETE' }],
    [
      'size 5: 4 approvals but threshold 5',
      [T, T, F, T, T],
      5,
      5,
      { approve: 4, reject: 1, threshold: 5, complete: true, verdict: 'CONTINUE' },
    ],
    ['size 1: approve', [T], 1, 2, { approve: 1, reject: 0, threshold: 1, complete: true, verdict: 'COMPLETE' }],
    ['size 1: reject', [F], 1, 2, { approve: 0, reject: 1, threshold: 1, complete: true, verdict: 'CONTINUE' }],
    ['size 1: an extra vote fails the round', [T, T], 1, 0, { approve: 2, reject: 0, threshold: 1, complete: false, verdict: 'CONTINUE' }],
    ['size 2: both must approve', [T, F], 2, 0, { approve: 1, reject: 1, threshold: 2, complete: true, verdict: 'CONTINUE' }],
    ['size 2: unanimous', [T, T], 2, 0, { approve: 2, reject: 0, threshold: 2, complete: true, verdict: 'COMPLETE' }],
    ['size 7: 5 approvals', [T, T, T, T, T, F, F], 7, 2, { approve: 5, reject: 2, threshold: 5, complete: true, verdict: 'COMPLETE' }],
    ['size 7: 4 approvals', [T, T, T, T, F, F, F], 7, 2, { approve: 4, reject: 3, threshold: 5, complete: true, verdict: 'CONTINUE' }],
  ])('%s', (_label, approvals, size, configured, expected) => {
    expect(tally(approvals, size, configured)).toEqual({ ...expected, size });
  });

  it('never completes with a missing or extra vote, however many approvals', () => {
    for (let size = 1; size <= 7; size++) {
      for (const n of [size - 1, size + 1, size + 3]) {
        if (n < 0) continue;
        expect(
          tally(
            Array.from({ length: n }, () => true),
            size,
            0,
          ).verdict,
        ).toBe('CONTINUE');
      }
      expect(
        tally(
          Array.from({ length: size }, () => true),
          size,
          0,
        ).verdict,
      ).toBe('COMPLETE');
    }
  });
});

describe("devil's advocate", () => {
  it.each<[string, boolean[], number, number, boolean]>([
    ['unanimous council of 3', [true, true, true], 3, 2, true],
    ['unanimous council of 2', [true, true], 2, 2, true],
    ['unanimous council of 5', [true, true, true, true, true], 5, 2, true],
    ['unanimous council of 1 (too small)', [true], 1, 2, false],
    ['2 of 3 (complete, not unanimous)', [true, true, false], 3, 2, false],
    ['4 of 5 (complete, not unanimous)', [true, true, true, true, false], 5, 2, false],
    ['rejected round', [false, false, false], 3, 2, false],
    ['an over-full round of approvals is not COMPLETE', [true, true, true, true], 3, 2, false],
    ['an under-full round of approvals is not COMPLETE', [true, true], 3, 2, false],
  ])('due for %s: %s', (_label, approvals, size, configured, due) => {
    expect(devilsAdvocateDue(tally(approvals, size, configured))).toBe(due);
  });

  it('a confirmation leaves the tally untouched', () => {
    const t = tally([true, true, true], 3, 2);
    expect(applyDevilsAdvocate(t, true)).toEqual({ ...t, flipped: false });
  });

  it.each<[number, number, number, number]>([
    // [size, configured, expected approve, expected reject]
    [2, 2, 1, 1],
    [3, 2, 1, 2],
    [3, 3, 2, 1],
    [4, 2, 2, 2],
    [5, 2, 3, 2],
    [5, 5, 4, 1],
    [6, 0, 3, 3],
    [7, 2, 4, 3],
    [1, 0, 0, 1],
  ])('a refusal by size %i (configured %i) sets approve %i, reject %i and forces CONTINUE', (size, configured, approve, reject) => {
    const t = tally(
      Array.from({ length: size }, () => true),
      size,
      configured,
    );
    const r = applyDevilsAdvocate(t, false);
    expect(r).toEqual({ ...t, approve, reject, verdict: 'CONTINUE', flipped: true });
    expect(r.approve).toBe(Math.max(0, t.threshold - 1));
    expect(r.approve + r.reject).toBe(size);
    // the flipped counts would not pass the threshold again (a plain -1 would for size >= 3)
    expect(r.approve).toBeLessThan(r.threshold);
  });
});

// ---------------------------------------------------------------------------------------------
// shouldConvene (spec §2.3)
// ---------------------------------------------------------------------------------------------

describe('shouldConvene', () => {
  const knobs = (over: Partial<ConveneKnobs> = {}): ConveneKnobs => ({
    councilEnabled: true,
    councilMinIterations: 3,
    councilCheckInterval: 5,
    councilEarlyCheck: true,
    ...over,
  });
  const facts = (over: Partial<ConveneFacts> = {}): ConveneFacts => ({
    iteration: 4,
    forced: false,
    circuitTripped: false,
    claimed: false,
    testsGreen: null,
    ...over,
  });

  it.each<[string, Partial<ConveneFacts>, Partial<ConveneKnobs>, ConveneTrigger | null]>([
    [
      'disabled: nothing convenes',
      { forced: true, circuitTripped: true, claimed: true, iteration: 10, testsGreen: true },
      { councilEnabled: false },
      null,
    ],
    ['forced', { forced: true }, {}, 'forced'],
    ['forced below the floor', { forced: true, iteration: 1 }, {}, 'forced'],
    ['forced at iteration 0', { forced: true, iteration: 0 }, {}, 'forced'],
    ['forced wins over everything', { forced: true, circuitTripped: true, claimed: true, iteration: 5, testsGreen: true }, {}, 'forced'],
    ['below the floor with a claim', { claimed: true, iteration: 2 }, {}, null],
    ['below the floor with a tripped breaker', { circuitTripped: true, iteration: 2 }, {}, null],
    ['below the floor with green tests', { testsGreen: true, iteration: 2 }, {}, null],
    ['below the floor on an interval iteration', { iteration: 5 }, { councilMinIterations: 6 }, null],
    ['at the floor with a claim', { claimed: true, iteration: 3 }, {}, 'claim'],
    ['circuit breaker', { circuitTripped: true }, {}, 'circuit_breaker'],
    ['circuit breaker wins over a claim', { circuitTripped: true, claimed: true }, {}, 'circuit_breaker'],
    ['circuit breaker wins over the interval', { circuitTripped: true, iteration: 10 }, {}, 'circuit_breaker'],
    ['claim', { claimed: true }, {}, 'claim'],
    ['claim wins over the interval', { claimed: true, iteration: 5 }, {}, 'claim'],
    ['claim wins over green tests', { claimed: true, testsGreen: true }, {}, 'claim'],
    ['interval', { iteration: 5 }, {}, 'interval'],
    ['interval (multiple)', { iteration: 15 }, {}, 'interval'],
    ['interval wins over green tests', { iteration: 10, testsGreen: true }, {}, 'interval'],
    ['not an interval iteration', { iteration: 6 }, {}, null],
    ['interval 1 convenes every iteration past the floor', { iteration: 7 }, { councilCheckInterval: 1 }, 'interval'],
    ['interval 3 at iteration 3', { iteration: 3 }, { councilCheckInterval: 3 }, 'interval'],
    ['interval 3 at iteration 4', { iteration: 4 }, { councilCheckInterval: 3 }, null],
    ['green tests with the early check', { testsGreen: true }, {}, 'tests_green'],
    ['green tests without the early check', { testsGreen: true }, { councilEarlyCheck: false }, null],
    ['red tests with the early check', { testsGreen: false }, {}, null],
    ['no test result with the early check', { testsGreen: null }, {}, null],
    ['green tests at the floor', { testsGreen: true, iteration: 3 }, {}, 'tests_green'],
    ['nothing to do', {}, {}, null],
  ])('%s', (_label, f, k, expected) => {
    expect(shouldConvene(facts(f), knobs(k))).toBe(expected);
  });

  it('with the default knobs convenes on iterations 5, 10, 15 only (no other trigger)', () => {
    const k = defaultKnobs();
    const got = Array.from({ length: 16 }, (_, i) => i + 1).filter((iteration) => shouldConvene(facts({ iteration }), k) !== null);
    expect(got).toEqual([5, 10, 15]);
  });

  it('a claim convenes from the floor on, never before it', () => {
    const got = Array.from({ length: 6 }, (_, i) => i + 1).map((iteration) => shouldConvene(facts({ iteration, claimed: true }), knobs()));
    expect(got).toEqual([null, null, 'claim', 'claim', 'claim', 'claim']);
  });
});

// ---------------------------------------------------------------------------------------------
// Done signals, breaker, safety valves (spec §2.10, §2.11)
// ---------------------------------------------------------------------------------------------

const conv = (over: Partial<ConvergenceState> = {}): ConvergenceState => ({
  lastHash: 'abc',
  consecutiveNoChange: 0,
  recentHashes: ['abc'],
  doneSignals: 0,
  totalDoneSignals: 0,
  ...over,
});

describe('trackDoneSignal', () => {
  it('counts consecutive and total done signals over a sequence', () => {
    const seq = [true, true, false, true, false, false, true, true, true];
    const expected: [number, number][] = [
      [1, 1],
      [2, 2],
      [0, 2],
      [1, 3],
      [0, 3],
      [0, 3],
      [1, 4],
      [2, 5],
      [3, 6],
    ];
    let s = conv();
    seq.forEach((signal, i) => {
      s = trackDoneSignal(s, signal);
      expect([s.doneSignals, s.totalDoneSignals], `step ${i}`).toEqual(expected[i]);
    });
  });

  it('keeps the other convergence fields and does not mutate its input', () => {
    const before = conv({ consecutiveNoChange: 4, doneSignals: 1, totalDoneSignals: 7, recentHashes: ['a', 'b'] });
    const copy = structuredClone(before);
    const after = trackDoneSignal(before, true);
    expect(before).toEqual(copy);
    expect(after).toEqual({ ...copy, doneSignals: 2, totalDoneSignals: 8 });
    expect(trackDoneSignal(before, false)).toEqual({ ...copy, doneSignals: 0, totalDoneSignals: 7 });
  });
});

describe('breakerTrip', () => {
  it('trips on two consecutive done signals', () => {
    expect(CONSECUTIVE_DONE_SIGNALS_TRIP).toBe(2);
  });

  it.each<[Partial<ConvergenceState>, number, BreakerTrip]>([
    [{ consecutiveNoChange: 0 }, 5, null],
    [{ consecutiveNoChange: 4 }, 5, null],
    [{ consecutiveNoChange: 5 }, 5, 'stagnation'],
    [{ consecutiveNoChange: 12 }, 5, 'stagnation'],
    [{ consecutiveNoChange: 1 }, 1, 'stagnation'],
    [{ consecutiveNoChange: 2 }, 3, null],
    [{ doneSignals: 1 }, 5, null],
    [{ doneSignals: 2 }, 5, 'done_signals'],
    [{ doneSignals: 9 }, 5, 'done_signals'],
    [{ doneSignals: 1, totalDoneSignals: 50 }, 5, null],
    [{ consecutiveNoChange: 5, doneSignals: 3 }, 5, 'stagnation'],
    [{ consecutiveNoChange: 4, doneSignals: 2 }, 5, 'done_signals'],
  ])('%j with stagnation limit %i -> %s', (over, limit, expected) => {
    expect(breakerTrip(conv(over), limit)).toBe(expected);
  });
});

describe('safetyValve', () => {
  const knobs = { stagnationLimit: 5, doneSignalLimit: 10 };

  it.each<
    [
      string,
      Partial<ConvergenceState>,
      BreakerTrip,
      { stagnationLimit: number; doneSignalLimit: number },
      'stagnation' | 'done_signal_flood' | null,
    ]
  >([
    ['stagnation exactly at 2 x limit with the breaker tripped', { consecutiveNoChange: 10 }, 'stagnation', knobs, 'stagnation'],
    ['stagnation above 2 x limit', { consecutiveNoChange: 17 }, 'stagnation', knobs, 'stagnation'],
    ['stagnation at 2 x limit - 1 does not fire', { consecutiveNoChange: 9 }, 'stagnation', knobs, null],
    ['stagnation at the limit does not fire', { consecutiveNoChange: 5 }, 'stagnation', knobs, null],
    ['stagnation at 2 x limit without a trip does not fire', { consecutiveNoChange: 10 }, null, knobs, null],
    ['any trip counts for the stagnation valve', { consecutiveNoChange: 10 }, 'done_signals', knobs, 'stagnation'],
    ['limit 3: 6 fires', { consecutiveNoChange: 6 }, 'stagnation', { stagnationLimit: 3, doneSignalLimit: 10 }, 'stagnation'],
    ['limit 3: 5 does not', { consecutiveNoChange: 5 }, 'stagnation', { stagnationLimit: 3, doneSignalLimit: 10 }, null],
    ['done-signal flood exactly at the limit', { totalDoneSignals: 10 }, null, knobs, 'done_signal_flood'],
    ['done-signal flood above the limit', { totalDoneSignals: 14 }, 'done_signals', knobs, 'done_signal_flood'],
    ['one below the done-signal limit does not fire', { totalDoneSignals: 9 }, 'done_signals', knobs, null],
    ['done-signal limit 3: 3 fires', { totalDoneSignals: 3 }, null, { stagnationLimit: 5, doneSignalLimit: 3 }, 'done_signal_flood'],
    ['done-signal limit 3: 2 does not', { totalDoneSignals: 2 }, null, { stagnationLimit: 5, doneSignalLimit: 3 }, null],
    ['consecutive done signals alone do not flood', { doneSignals: 9, totalDoneSignals: 9 }, 'done_signals', knobs, null],
    ['both valves due: stagnation is reported', { consecutiveNoChange: 10, totalDoneSignals: 10 }, 'stagnation', knobs, 'stagnation'],
    ['no trip, but a done-signal flood still fires', { consecutiveNoChange: 10, totalDoneSignals: 10 }, null, knobs, 'done_signal_flood'],
    ['a fresh state', {}, null, knobs, null],
  ])('%s', (_label, over, trip, k, expected) => {
    const v = safetyValve(conv(over), trip, k);
    if (expected === null) {
      expect(v).toEqual({ fire: false });
    } else {
      expect(v.fire).toBe(true);
      if (v.fire) {
        expect(v.valve).toBe(expected);
        expect(v.reason).toMatch(/^stopped without approval/);
      }
    }
  });

  it('names the counts and limits in its reasons', () => {
    const stag = safetyValve(conv({ consecutiveNoChange: 12 }), 'stagnation', knobs);
    expect(stag.fire && stag.reason).toContain('12');
    expect(stag.fire && stag.reason).toContain('stagnationLimit 5');
    const flood = safetyValve(conv({ totalDoneSignals: 11 }), null, knobs);
    expect(flood.fire && flood.reason).toContain('11 completion claims without approval');
    expect(flood.fire && flood.reason).toContain('doneSignalLimit 10');
  });

  it('names both causes when both hold, and what refused the last check', () => {
    const v = safetyValve(
      conv({ consecutiveNoChange: 10, totalDoneSignals: 10 }),
      'stagnation',
      knobs,
      'the evidence gate: no file changed since the run started',
    );
    expect(v.fire && v.reason).toBe(
      'stopped without approval: no change for 10 iterations in a row (2 x stagnationLimit 5) and 10 completion claims without ' +
        'approval (doneSignalLimit 10); the last completion check was refused by the evidence gate: no file changed since the ' +
        'run started',
    );
    const council = safetyValve(conv({ totalDoneSignals: 10 }), null, knobs);
    expect(council.fire && council.reason).toMatch(/and the council did not approve$/);
  });

  it('a stagnating run (no change every iteration) trips at the limit and the valve fires at twice it', () => {
    const k = { stagnationLimit: 5, doneSignalLimit: 10 };
    const trips: BreakerTrip[] = [];
    const fires: boolean[] = [];
    for (let noChange = 1; noChange <= 10; noChange++) {
      const s = conv({ consecutiveNoChange: noChange });
      const trip = breakerTrip(s, k.stagnationLimit);
      trips.push(trip);
      fires.push(safetyValve(s, trip, k).fire);
    }
    expect(trips).toEqual([null, null, null, null, 'stagnation', 'stagnation', 'stagnation', 'stagnation', 'stagnation', 'stagnation']);
    expect(fires).toEqual([false, false, false, false, false, false, false, false, false, true]);
  });

  it('an agent that keeps claiming done trips the breaker at the second claim and floods at the limit', () => {
    const k = { stagnationLimit: 5, doneSignalLimit: 4 };
    let s = conv();
    const log: [BreakerTrip, boolean][] = [];
    for (let i = 0; i < 4; i++) {
      s = trackDoneSignal(s, true);
      const trip = breakerTrip(s, k.stagnationLimit);
      log.push([trip, safetyValve(s, trip, k).fire]);
    }
    expect(log).toEqual([
      [null, false],
      ['done_signals', false],
      ['done_signals', false],
      ['done_signals', true],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// councilPrompt / devilsAdvocatePrompt (spec §2.6, §2.8 A)
// ---------------------------------------------------------------------------------------------

describe('councilPrompt', () => {
  const input = (over: Partial<CouncilPromptInput> = {}): CouncilPromptInput => ({
    role: 'requirements-verifier',
    member: 0,
    size: 3,
    iteration: 7,
    prdPath: '/repo/docs/PRD.md',
    evidencePath: '/runs/r1/council/round-2/evidence.md',
    severityThreshold: 'low',
    ...over,
  });

  const CONTRACT_LINES = [
    'VOTE: <APPROVE|REJECT|CANNOT_VALIDATE>   (exactly one line)',
    'REASON: <one line>',
    'ISSUES: <CRITICAL|HIGH|MEDIUM|LOW>:<description>   (zero or more lines)',
  ];

  it.each<[MemberRole, RegExp, RegExp]>([
    ['requirements-verifier', /REQUIREMENTS VERIFIER/, /every requirement in the PRD is implemented/],
    ['test-auditor', /TEST AUDITOR/, /A project without passing tests is not complete/],
    ['devils-advocate-minded', /DEVIL'S ADVOCATE/, /reasons the work is NOT complete/],
  ])('role %s gets its own instruction', (role, title, body) => {
    const p = councilPrompt(input({ role }));
    expect(p).toMatch(title);
    expect(p).toMatch(body);
    for (const other of MEMBER_ROLES.filter((r) => r !== role)) {
      const otherTitle = councilPrompt(input({ role: other })).split('\n')[1];
      expect(otherTitle).toBeDefined();
      expect(p).not.toContain(otherTitle as string);
    }
  });

  it('names the PRD and the evidence pack, the member, the council size and the iteration', () => {
    const p = councilPrompt(input({ member: 1, size: 5, iteration: 12 }));
    expect(p).toContain('Requirements (PRD): /repo/docs/PRD.md');
    expect(p).toContain('Evidence pack: /runs/r1/council/round-2/evidence.md');
    expect(p).toContain('member 2 of 5');
    expect(p).toContain('iteration 12');
    expect(p).toMatch(/do not modify anything/);
  });

  it('ends with the output contract, one line each', () => {
    const lines = councilPrompt(input()).split('\n');
    expect(lines.slice(-4)).toEqual(['Answer in this exact format:', ...CONTRACT_LINES]);
  });

  it.each<[Severity, string | null]>([
    ['low', null],
    ['medium', 'Issues below MEDIUM severity do not block completion'],
    ['high', 'Issues below HIGH severity do not block completion'],
    ['critical', 'Issues below CRITICAL severity do not block completion'],
  ])('severity threshold %s', (severityThreshold, budgetLine) => {
    const p = councilPrompt(input({ severityThreshold }));
    expect(p).toMatch(/list every issue you find with its severity/i);
    if (budgetLine) expect(p).toContain(budgetLine);
    else expect(p).not.toMatch(/do not block/);
  });

  it('an answer written to the contract parses back', () => {
    const answer = 'VOTE: REJECT\nREASON: the export endpoint is missing\nISSUES: HIGH: no /export route\nISSUES: LOW: README typo';
    expect(parseVote(answer)).toEqual<ParsedVote>({
      vote: 'REJECT',
      reason: 'the export endpoint is missing',
      issues: [
        { severity: 'high', description: 'no /export route' },
        { severity: 'low', description: 'README typo' },
      ],
    });
  });
});

describe('devilsAdvocatePrompt', () => {
  const p = devilsAdvocatePrompt({ size: 3, iteration: 9, prdPath: 'PRD.md', evidencePath: '/tmp/evidence.md', severityThreshold: 'low' });

  it('says the vote was unanimous, with the council size', () => {
    expect(p).toContain('UNANIMOUSLY (3 of 3)');
    expect(p).toContain('iteration 9');
  });

  it('asks for reasons to refuse and to APPROVE only if nothing is found', () => {
    expect(p).toMatch(/refute/);
    expect(p).toMatch(/any reason to refuse completion/);
    expect(p).toContain('Approve only if you find nothing at all.');
  });

  it('names the PRD and the evidence pack and ends with the output contract', () => {
    expect(p).toContain('Requirements (PRD): PRD.md');
    expect(p).toContain('Evidence pack: /tmp/evidence.md');
    const lines = p.split('\n');
    expect(lines.slice(-4)).toEqual([
      'Answer in this exact format:',
      'VOTE: <APPROVE|REJECT|CANNOT_VALIDATE>   (exactly one line)',
      'REASON: <one line>',
      'ISSUES: <CRITICAL|HIGH|MEDIUM|LOW>:<description>   (zero or more lines)',
    ]);
  });

  it('scales with the council size', () => {
    expect(devilsAdvocatePrompt({ size: 5, iteration: 1, prdPath: 'a', evidencePath: 'b', severityThreshold: 'high' })).toContain(
      'UNANIMOUSLY (5 of 5)',
    );
  });
});

describe('prompts echoed back by a provider', () => {
  it('do not parse as a vote', () => {
    const base = { size: 3, iteration: 4, prdPath: 'PRD.md', evidencePath: '/tmp/evidence.md', severityThreshold: 'low' as const };
    expect(parseVote(councilPrompt({ ...base, role: 'test-auditor', member: 1 })).vote).toBeNull();
    expect(parseVote(devilsAdvocatePrompt(base)).vote).toBeNull();
  });
});

describe('parseVote keeps underscores inside words', () => {
  it('strips emphasis but not identifiers', () => {
    const p = parseVote('VOTE: REJECT\nREASON: **parse_config** ignores `CANNOT_VALIDATE`\nISSUES: LOW: rename _private_helper');
    expect(p.reason).toBe('parse_config ignores CANNOT_VALIDATE');
    expect(p.issues[0]?.description).toBe('rename _private_helper');
  });
});
