/**
 * The comparison round's rule (rules/comparison.ts): what a member's answer picks,
 * and which approved attempt the council's picks choose — the majority, the pick rule as the
 * tie-breaker and fallback, and a council that picks an attempt that was not approved.
 */
import { describe, expect, it } from 'vitest';
import type { AttemptFacts } from '../../rules/attempts.js';
import { comparisonPrompt, decideComparison, parsePick, pickRefusal, type MemberPick } from '../../rules/comparison.js';
import { attemptArg, pickFailure } from '../../cli/pick-command.js';

const a = (n: number, status: string, findings: number, iterations: number): AttemptFacts => ({
  n,
  status,
  findings,
  iterations,
  spendUsd: 0,
});
const pick = (member: number, attempt: number | null): MemberPick => ({ member, role: 'r', attempt, reason: null });

/** Attempt 1 failed its tests; 2 approved with a finding; 3 approved clean but one iteration later. */
const ATTEMPTS = [a(1, 'max_iterations_reached', 0, 5), a(2, 'council_approved', 1, 3), a(3, 'council_approved', 0, 4)];

describe('parsePick', () => {
  it('reads the last PICK line and the last REASON line, in plain text and in an escaped JSON stream', () => {
    expect(parsePick('I read the pack.\nPICK: 3\nREASON: no findings\n')).toEqual({ attempt: 3, reason: 'no findings' });
    expect(parsePick('PICK: 2\n...on second thought\n**PICK: 3**\n')).toEqual({ attempt: 3, reason: null });
    expect(parsePick('{"type":"result","result":"Done.\\nPICK: 2\\nREASON: smaller diff"}')).toMatchObject({ attempt: 2 });
  });

  it('an answer that does not name one attempt picks nothing', () => {
    expect(parsePick('PICK: 2 or 3\nREASON: both fine').attempt).toBeNull();
    expect(parsePick('PICK: two').attempt).toBeNull();
    expect(parsePick('I would pick attempt 3').attempt).toBeNull();
  });
});

describe('decideComparison', () => {
  it('honest: the majority of the members picks, even against the pick rule', () => {
    const clean = decideComparison(ATTEMPTS, [pick(0, 3), pick(1, 3), pick(2, 2)]);
    expect(clean).toMatchObject({ decidedBy: 'council', split: false, ignored: [] });
    expect(clean.winner?.n).toBe(3);
    expect(clean.why).toBe('the council picked attempt 3 (attempt 2: 1, attempt 3: 2 of 3 member(s))');
    // The council may prefer the attempt the rule would not (it read the diffs): the majority stands.
    expect(decideComparison(ATTEMPTS, [pick(0, 2), pick(1, 2), pick(2, 3)]).winner?.n).toBe(2);
  });

  it('adversarial: picks of an attempt that was not approved count for nothing, however many', () => {
    const d = decideComparison(ATTEMPTS, [pick(0, 1), pick(1, 1), pick(2, 1)]);
    expect(d).toMatchObject({ decidedBy: 'rule', split: false, ignored: [0, 1, 2] });
    expect(d.winner?.n).toBe(3);
    // Nor an attempt that does not exist, nor a lost call.
    const e = decideComparison(ATTEMPTS, [pick(0, 7), pick(1, null), pick(2, 2)]);
    expect(e).toMatchObject({ decidedBy: 'rule', split: false, ignored: [0, 1] });
    // One valid pick of three members is no majority: the rule decides among all approved ones.
    expect(e.winner?.n).toBe(3);
  });

  it('a split between approved attempts: the rule breaks the tie among the most-picked, and says split', () => {
    const four = [...ATTEMPTS, a(4, 'council_approved', 0, 2)];
    const d = decideComparison(four, [pick(0, 2), pick(1, 3), pick(2, 1)]);
    expect(d).toMatchObject({ decidedBy: 'rule', split: true, ignored: [2] });
    // Among 2 and 3 (attempt 4, picked by nobody, is out although the rule would prefer it).
    expect(d.winner?.n).toBe(3);
    expect(d.why).toMatch(/^the council split \(.*\); the pick rule broke the tie: attempt 3/);
  });

  it('a strict majority of the members asked, not of the picks that counted', () => {
    // Two of four members is no majority, even with the other two lost.
    const d = decideComparison(ATTEMPTS, [pick(0, 2), pick(1, 2), pick(2, null), pick(3, null)]);
    expect(d.decidedBy).toBe('rule');
    expect(d.split).toBe(false);
    // No disagreement to break: the rule decides among every approved attempt.
    expect(d.winner?.n).toBe(3);
  });
});

describe('comparisonPrompt', () => {
  it('names the pack, the attempts to choose from and the answer owed', () => {
    const p = comparisonPrompt({ member: 1, role: 'skeptic', prdPath: '/p/PRD.md', packPath: '/r/pack.md', approved: [2, 3] });
    expect(p).toContain('/r/pack.md');
    expect(p).toContain('`PICK: <n>`, n one of 2, 3');
  });
});

describe("a person's pick", () => {
  const waiting = { runId: 'r', waiting: true, k: 3, pickFrom: [2, 3] };
  it('is taken for an approved attempt while the run waits for one', () => {
    expect(pickRefusal(waiting, 3)).toBeNull();
  });

  it('adversarial: refused for an attempt that failed, one that does not exist, or a run not waiting', () => {
    expect(pickRefusal(waiting, 1)).toBe('attempt 1 of run r was not approved: pick one of 2, 3');
    expect(pickRefusal(waiting, 4)).toBe('4 is not an attempt of run r: pick one of 2, 3');
    expect(pickRefusal(waiting, 2.5)).toMatch(/^2.5 is not an attempt/);
    expect(pickRefusal({ ...waiting, waiting: false }, 2)).toMatch(/^run r is not waiting for a pick/);
  });

  it('the CLI refuses what is not a number before connecting, and says what a refusal means (exit 2; no such run 3)', () => {
    expect(attemptArg('2')).toBe(2);
    for (const bad of ['0', '-1', 'two', '1.5', '']) expect(() => attemptArg(bad)).toThrow(/whole number from 1/);
    const attempts = { type: 'vigilAttempts', running: true };
    expect(pickFailure('r', attempts, new Error('attempt 1 of run r was not approved: pick one of 2, 3'))).toMatchObject({
      exitCode: 2,
      message: 'pick refused: attempt 1 of run r was not approved: pick one of 2, 3',
    });
    expect(pickFailure('r', { ...attempts, running: false }, new Error('x')).message).toBe('run r has ended: it is not waiting for a pick');
    expect(pickFailure('r', { type: 'vigilRun', running: true }, new Error('x'))).toMatchObject({ exitCode: 2 });
    expect(pickFailure('r', null, new Error('x'))).toMatchObject({ exitCode: 3 });
  });
});
