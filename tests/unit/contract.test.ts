/**
 * The agent contract (rules/contract.ts): the answer each call owes, what counts as
 * an answer in the wrong format, when the run stops spending, and the page that tells people.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ANSWERS,
  answerOf,
  contractFindings,
  CONTRACT_ERRORS_TO_STOP,
  councilBreaches,
  describeBreach,
  REQUIRED_ANSWER,
  reviewBreaches,
  trackContract,
  verifierBreach,
} from '../../rules/contract.js';
import { AGENT_ROLES } from '../../schemas/activities.js';
import type { ReviewRecord, ReviewerRecord } from '../../schemas/gates.js';
import type { ContractState, Verdict, VoteRecord } from '../../schemas/run.js';
import { ROOT } from '../support/harness.js';

const reviewer = (name: string, verdict: ReviewerRecord['verdict'], findings: string[] = []): ReviewerRecord => ({
  reviewer: name,
  verdict,
  blocking: false,
  counts: { critical: 0, high: 0, medium: 0, low: 0 },
  findings,
  logPath: `/logs/${name}.log`,
});
const review = (reviewers: ReviewerRecord[], devilsAdvocate: ReviewerRecord | null = null): ReviewRecord => ({
  round: 1,
  iteration: 4,
  treeHash: 't',
  reviewers,
  devilsAdvocate,
  result: 'inconclusive',
  reason: '',
  mergeability: 0,
  rerun: true,
  at: '2026-11-26T00:00:00.000Z',
});
const vote = (member: number, recorded: VoteRecord['recorded']): VoteRecord => ({
  member,
  role: 'requirements_verifier',
  recorded,
  approves: recorded === 'APPROVE',
  overridden: false,
  reason: '',
  issues: 0,
  logPath: `/logs/m${member}.log`,
});
const verdict = (votes: VoteRecord[], da: Verdict['devilsAdvocate'] = null): Verdict => ({
  round: 1,
  iteration: 5,
  trigger: 'claim',
  result: 'REJECTED',
  approve: 0,
  reject: votes.length,
  threshold: 2,
  size: votes.length,
  votes,
  devilsAdvocate: da,
  evidence: { iteration: 5, pass: true, reason: null, failures: [], inconclusive: [], filesChanged: 1, testsPassed: true },
  transcriptPath: '',
  at: '',
});

describe('answerOf: the answer every call owes (VIGIL_ANSWER)', () => {
  it("reads it from what the caller parses, so the devil's advocate votes in a council round and gives a verdict in a review", () => {
    expect(answerOf({ role: 'iteration', parse: null, parseVote: false })).toBe('work');
    expect(answerOf({ role: 'council', parse: null, parseVote: true })).toBe('vote');
    expect(answerOf({ role: 'devils-advocate', parse: null, parseVote: true })).toBe('vote');
    expect(answerOf({ role: 'devils-advocate', parse: 'review', parseVote: false })).toBe('verdict');
    expect(answerOf({ role: 'reviewer', parse: 'review', parseVote: false })).toBe('verdict');
    expect(answerOf({ role: 'checklist', parse: 'checklist', parseVote: false })).toBe('checklist');
    expect(answerOf({ role: 'checklist-verifier', parse: 'verification', parseVote: false })).toBe('items');
  });
});

describe('breaches', () => {
  it('a reviewer that answered without a verdict line is one; a silent, failed or tree-changing one is not', () => {
    const r = review([
      reviewer('a', 'NO_VERDICT'),
      reviewer('b', 'NO_OUTPUT'),
      reviewer('c', 'NO_VERDICT', ['review void: the reviewer changed the working tree (x.txt)']),
      reviewer('d', 'PASS'),
    ]);
    expect(reviewBreaches(r)).toEqual([{ role: 'reviewer', who: 'a', answer: 'verdict', iteration: 4, logPath: '/logs/a.log' }]);
    expect(reviewBreaches(review([reviewer('d', 'PASS')], reviewer('devils-advocate', 'NO_VERDICT')))).toEqual([
      { role: 'devils-advocate', who: 'devils-advocate', answer: 'verdict', iteration: 4, logPath: '/logs/devils-advocate.log' },
    ]);
  });

  it('a council member without a VOTE line is one; an empty answer, a timeout or a provider failure is not', () => {
    const v = verdict([vote(0, 'UNPARSEABLE'), vote(1, 'EMPTY'), vote(2, 'TIMEOUT'), vote(3, 'PROVIDER_FAILURE'), vote(4, 'REJECT')]);
    expect(councilBreaches(v)).toEqual([
      { role: 'council', who: 'member 0 (requirements_verifier)', answer: 'vote', iteration: 5, logPath: '/logs/m0.log' },
    ]);
    const da = verdict([vote(0, 'APPROVE')], { triggered: true, flipped: true, recorded: 'UNPARSEABLE', reason: '' });
    expect(councilBreaches(da).map((b) => b.role)).toEqual(['devils-advocate']);
  });

  it('a verifier that answered but named no item is one', () => {
    expect(verifierBreach({ exitCode: 0, timedOut: false, answered: 0 }, 3, '/l')).toMatchObject({
      role: 'checklist-verifier',
      answer: 'items',
    });
    expect(verifierBreach({ exitCode: 0, timedOut: false, answered: 2 }, 3, '/l')).toBeNull();
    expect(verifierBreach({ exitCode: 1, timedOut: false, answered: 0 }, 3, '/l')).toBeNull();
    expect(verifierBreach({ exitCode: 0, timedOut: true, answered: 0 }, 3, '/l')).toBeNull();
    expect(verifierBreach(null, 3, '/l')).toBeNull();
  });
});

describe('trackContract: the second check in a row stops the spending', () => {
  const none: ContractState = { consecutive: 0, total: 0, last: null };
  const b = { role: 'reviewer' as const, who: 'a', answer: 'verdict' as const, iteration: 3, logPath: '' };
  it('counts in a row, resets on a clean check', () => {
    const one = trackContract(none, [b]);
    expect(one).toEqual({ state: { consecutive: 1, total: 1, last: b }, stop: false });
    const clean = trackContract(one.state, []);
    expect(clean).toEqual({ state: { consecutive: 0, total: 1, last: b }, stop: false });
    const again = trackContract(trackContract(clean.state, [b]).state, [{ ...b, iteration: 5 }]);
    expect(again.stop).toBe(true);
    expect(again.state.consecutive).toBe(CONTRACT_ERRORS_TO_STOP);
  });
});

describe('what people and the builder read', () => {
  it('names the role, the missing line and the fix', () => {
    const text = describeBreach({ role: 'reviewer', who: 'security-sentinel', answer: 'verdict', iteration: 4, logPath: '/r/log' });
    expect(text).toContain('code reviewer security-sentinel');
    expect(text).toContain('`VERDICT: PASS` or `VERDICT: FAIL`');
    expect(text).toContain('VIGIL_ROLE=reviewer, VIGIL_ANSWER=verdict');
    expect(text).toContain('vigil doctor --agent-command CMD');
    expect(text).toContain('docs/agent-contract.md');
    expect(text).toContain('/r/log');
  });

  it('tells the builder its work is not at fault', () => {
    expect(contractFindings({ role: 'council', who: 'member 1', answer: 'vote', iteration: 6, logPath: '' }, 6)).toMatch(
      /not about your work/,
    );
  });
});

describe('docs/agent-contract.md matches the code', () => {
  const page = readFileSync(path.join(ROOT, 'docs/agent-contract.md'), 'utf8');
  it('lists every role and every answer', () => {
    for (const role of AGENT_ROLES) expect(page, role).toContain(`\`${role}\``);
    for (const answer of ANSWERS) expect(page, answer).toContain(`VIGIL_ANSWER=${answer}`);
  });
  it('documents every variable a call gets', () => {
    const agent = readFileSync(path.join(ROOT, 'activities/agent.ts'), 'utf8');
    const vars = new Set([...agent.matchAll(/\b(VIGIL_[A-Z_]+):/g)].map((m) => m[1] as string));
    for (const round of ['rounds/review-round.ts', 'rounds/council-round.ts']) {
      for (const m of readFileSync(path.join(ROOT, round), 'utf8').matchAll(/\b(VIGIL_[A-Z_]+):/g)) vars.add(m[1] as string);
    }
    expect(vars.size).toBeGreaterThan(8);
    for (const v of vars) expect(page, v).toContain(v);
  });
  it('shows each required line as the parsers read it', () => {
    for (const text of Object.values(REQUIRED_ANSWER)) {
      for (const code of text.matchAll(/`([^`]+)`/g)) expect(page).toContain(code[1] as string);
    }
  });
});
