/**
 * Re-judging recorded runs (rules/rejudge.ts): which checks a journal shows, and each
 * check under today's rules from the evidence recorded then. Unchanged knobs flip nothing; a
 * stricter knob flips the approvals whose evidence it refuses (an approval every reviewing role
 * gave on a review with advisory findings, a 2-of-3 council) and leaves the honest control
 * approved; a run recorded before the integrity gates is judged by them from its tree; what needs
 * a new agent answer is said, never guessed.
 */
import { describe, expect, it } from 'vitest';
import type { EventEnvelope, RunEvent } from '../../schemas/events.js';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';
import { RecordedRunSchema, type RecordedRun, type RecordedTree } from '../../schemas/rejudge.js';
import { integrityOn, recordedChecks, recordedKnobs, rejudgeRun, waivedIds } from '../../rules/rejudge.js';

const iteration = (n: number, o: Partial<Extract<RunEvent, { kind: 'iteration' }>> = {}): RunEvent => ({
  kind: 'iteration',
  iteration: n,
  phase: null,
  tier: 'development',
  exitCode: 0,
  durationMs: 100,
  changed: true,
  filesChangedSinceStart: n,
  claimed: false,
  tests: 'pass',
  provider: 'claude',
  model: null,
  costUsd: null,
  attempts: 1,
  ...o,
});
const gate = (n: number, name: string, verdict = 'pass', reason = 'ok'): RunEvent => ({
  kind: 'gate',
  iteration: n,
  gate: name,
  verdict,
  reason,
  findings: verdict === 'pass' ? 0 : 1,
});
const TOOLS = ['static_analysis', 'secret_scan', 'build', 'tests', 'mock_integrity', 'test_mutation', 'test_gaming', 'doc_coverage'];
const allGates = (n: number, over: Record<string, string> = {}): RunEvent[] => TOOLS.map((g) => gate(n, g, over[g] ?? 'pass'));
const review = (n: number, mergeability = 100, o: Partial<Extract<RunEvent, { kind: 'review' }>> = {}): RunEvent => ({
  kind: 'review',
  round: 1,
  iteration: n,
  result: 'pass',
  mergeability,
  reviewers: [
    { reviewer: 'security', verdict: 'PASS', blocking: false },
    { reviewer: 'correctness', verdict: 'PASS', blocking: false },
    { reviewer: 'devils-advocate', verdict: 'PASS', blocking: false },
  ],
  ...o,
});
const council = (n: number, approvals: boolean[], result = 'APPROVED', round = 1): RunEvent => ({
  kind: 'council_round',
  round,
  iteration: n,
  trigger: 'claim',
  result,
  approve: approvals.filter(Boolean).length,
  reject: approvals.filter((a) => !a).length,
  threshold: 2,
  votes: approvals.map((a, i) => ({ member: i, recorded: a ? 'APPROVE' : 'REJECT', approves: a, reason: a ? 'done' : 'missing' })),
});
const outcome = (n: number, status = 'council_approved'): RunEvent => ({
  kind: 'outcome',
  status,
  exitCode: 0,
  reason: 'done',
  iteration: n,
});

function recorded(events: RunEvent[], o: Partial<RecordedRun> = {}): RecordedRun {
  const envelopes: EventEnvelope[] = events.map((event, i) => ({ seq: i + 1, runId: 'r1', at: '2026-11-30T08:00:00Z', event }));
  return RecordedRunSchema.parse({
    version: 1,
    workflowId: 'wf',
    knobs: { ...defaultKnobs() },
    events: envelopes,
    startTree: null,
    trees: [],
    ...o,
  });
}

/** An approval every role gave: gates green, review passing, checklist met, council 3 of 3. */
const approvedRun = (mergeability = 100, approvals = [true, true, true]): RunEvent[] => [
  iteration(1),
  iteration(2),
  iteration(3, { claimed: true }),
  ...allGates(3),
  review(3, mergeability),
  gate(3, 'checklist'),
  council(3, approvals),
  outcome(3),
];

const withKnobs = (k: Partial<Knobs>): Record<string, unknown> => ({ ...defaultKnobs(), ...k });

describe('recordedChecks', () => {
  it('finds the council rounds, a completion without a council, and a claim refused before the council', () => {
    const events = [
      iteration(1, { claimed: true }),
      ...allGates(1, { tests: 'fail' }),
      iteration(2),
      iteration(3, { claimed: true }),
      ...allGates(3),
      review(3),
      gate(3, 'checklist'),
      council(3, [true, false, false], 'REJECTED'),
      iteration(4, { claimed: true }),
      ...allGates(4),
      review(4),
      council(4, [true, true, true], 'APPROVED', 2),
      outcome(4),
    ];
    const checks = recordedChecks(events);
    expect(checks.map((c) => [c.iteration, c.recorded.verdict, c.recorded.by])).toEqual([
      [1, 'refused', 'tests'],
      [3, 'refused', 'council'],
      [4, 'approved', null],
    ]);
    expect(recordedChecks([iteration(1, { claimed: true }), outcome(1, 'completion_promise_fulfilled')])).toHaveLength(1);
  });

  it('does not take a claim with nothing refused on record for a check (before the council floor, say)', () => {
    expect(recordedChecks([iteration(1, { claimed: true }), ...allGates(1), iteration(2)])).toEqual([]);
  });
});

describe('rejudgeRun: unchanged rules flip nothing', () => {
  const runs: [string, RunEvent[], Partial<Knobs>][] = [
    ['approved 3 of 3', approvedRun(), {}],
    ['approved with advisory findings', approvedRun(90), {}],
    ['approved 2 of 3', approvedRun(100, [true, true, false]), {}],
    [
      'refused by the council, then approved',
      [
        iteration(3, { claimed: true }),
        ...allGates(3),
        review(3),
        council(3, [true, false, false], 'REJECTED'),
        iteration(4, { claimed: true }),
        ...allGates(4),
        review(4),
        council(4, [true, true, true], 'APPROVED', 2),
        outcome(4),
      ],
      {},
    ],
    ['refused by a failing gate before the council', [iteration(1, { claimed: true }), ...allGates(1, { static_analysis: 'fail' })], {}],
    [
      "the devil's advocate refused a unanimous approval",
      [iteration(3, { claimed: true }), ...allGates(3), review(3), council(3, [true, true, true], 'REJECTED')],
      {},
    ],
    [
      'without a council',
      [iteration(1, { claimed: true }), outcome(1, 'completion_promise_fulfilled')],
      { councilEnabled: false, qualityGates: false, codeReview: false, prdChecklist: false },
    ],
    [
      'a 5-member council, 4 approve',
      [iteration(3, { claimed: true }), ...allGates(3), review(3), council(3, [true, true, true, true, false]), outcome(3)],
      { councilSize: 5 },
    ],
  ];
  it.each(runs)('%s', (_, events, knobs) => {
    const r = rejudgeRun(recorded(events, { knobs: withKnobs(knobs) }));
    expect(r.checks.length).toBeGreaterThan(0);
    expect(r.checks.filter((c) => c.flipped || c.now.verdict === 'needs_new_judgement')).toEqual([]);
    expect(r.flips).toBe(0);
    expect(r.knobChanges).toEqual([]);
  });
  it('a run whose knobs are unknown (its history gone) keeps its council as its rounds show it', () => {
    const five = [
      iteration(3, { claimed: true }),
      ...allGates(3),
      review(3),
      gate(3, 'checklist'),
      council(3, [true, true, true, true, false]),
      outcome(3),
    ];
    const r = rejudgeRun(recorded(five, { knobs: null }));
    expect(r.checks[0]).toMatchObject({ now: { verdict: 'approved', reason: '4 of 5 approve, 4 needed' }, flipped: false });
    expect(r.knobChanges).toEqual([]);
  });
});

describe('rejudgeRun: a stricter knob flips what it should and nothing else', () => {
  it('reviewMergeabilityMin refuses an approval whose review had advisory findings (every role approved) and keeps the clean control', () => {
    const gamed = rejudgeRun(recorded(approvedRun(94)), { reviewMergeabilityMin: 95 });
    expect(gamed.flips).toBe(1);
    expect(gamed.checks[0]).toMatchObject({
      recorded: { verdict: 'approved' },
      now: { verdict: 'refused', by: 'code_review', reason: 'code review: mergeability 94 is below the minimum 95' },
      flipped: true,
    });
    expect(gamed.knobChanges).toEqual([{ knob: 'reviewMergeabilityMin', recorded: 0, now: 95 }]);
    const honest = rejudgeRun(recorded(approvedRun(100)), { reviewMergeabilityMin: 95 });
    expect(honest.flips).toBe(0);
    expect(honest.checks[0]?.now.verdict).toBe('approved');
  });

  it('councilThreshold 3 refuses a 2-of-3 approval and keeps a unanimous one', () => {
    expect(rejudgeRun(recorded(approvedRun(100, [true, true, false])), { councilThreshold: 3 }).checks[0]).toMatchObject({
      now: { verdict: 'refused', by: 'council', reason: '2 of 3 approve, 3 needed' },
      flipped: true,
    });
    expect(rejudgeRun(recorded(approvedRun()), { councilThreshold: 3 }).flips).toBe(0);
  });

  it('a looser knob flips a refusal back: councilThreshold cannot go under the 2-of-3 floor, reviewInconclusiveBlocks off can', () => {
    const inconclusive = [
      iteration(3, { claimed: true }),
      ...allGates(3),
      review(3, 0, {
        result: 'inconclusive',
        reviewers: [
          { reviewer: 'security', verdict: 'PASS', blocking: false },
          { reviewer: 'correctness', verdict: 'NO_VERDICT', blocking: false },
        ],
      }),
    ];
    expect(rejudgeRun(recorded(inconclusive)).checks).toHaveLength(1);
    expect(rejudgeRun(recorded(inconclusive)).flips).toBe(0);
    // Refused before the council: approving it now would need the council's votes.
    expect(rejudgeRun(recorded(inconclusive), { reviewInconclusiveBlocks: false }).checks[0]?.now).toMatchObject({
      verdict: 'needs_new_judgement',
      by: 'council',
    });
    const rejected = [
      iteration(3, { claimed: true }),
      ...allGates(3),
      review(3),
      gate(3, 'checklist'),
      council(3, [true, false, false], 'REJECTED'),
    ];
    expect(rejudgeRun(recorded(rejected), { councilThreshold: 0 }).checks[0]).toMatchObject({
      now: { verdict: 'refused' },
      flipped: false,
    });
  });

  it('a gate newly on that never ran, a bigger council, a council newly on: needs a new judgement, never a guess', () => {
    const noCoverage = rejudgeRun(recorded(approvedRun()), { gateCoverage: true });
    expect(noCoverage.checks[0]?.now).toMatchObject({ verdict: 'needs_new_judgement', by: 'coverage' });
    expect(noCoverage.flips).toBe(0);
    expect(noCoverage.needsNewJudgement).toBe(1);
    expect(rejudgeRun(recorded(approvedRun()), { councilSize: 5 }).checks[0]?.now.verdict).toBe('needs_new_judgement');
    const noCouncil = recorded([iteration(1, { claimed: true }), outcome(1, 'completion_promise_fulfilled')], {
      knobs: withKnobs({ councilEnabled: false, qualityGates: false, codeReview: false, prdChecklist: false }),
    });
    expect(rejudgeRun(noCouncil, { councilEnabled: true }).checks[0]?.now).toMatchObject({ verdict: 'needs_new_judgement', by: 'council' });
    expect(rejudgeRun(noCouncil, { prdChecklist: true }).checks[0]?.now).toMatchObject({ verdict: 'needs_new_judgement', by: 'checklist' });
  });

  it('a gate turned off no longer refuses: the failing claim needs the later rules, a note says what failed', () => {
    const events = [iteration(1, { claimed: true }), ...allGates(1, { doc_coverage: 'fail' })];
    const r = rejudgeRun(recorded(events), { gateDocCoverage: false });
    expect(r.checks[0]?.now.verdict).toBe('needs_new_judgement');
    expect(r.checks[0]?.notes).toContain('doc coverage failed then, and no longer blocks');
  });

  it('an empty diff is refused whatever the knobs', () => {
    const events = [iteration(1, { claimed: true, filesChangedSinceStart: 0 }), outcome(1, 'completion_promise_fulfilled')];
    const r = rejudgeRun(
      recorded(events, { knobs: withKnobs({ councilEnabled: false, qualityGates: false, codeReview: false, prdChecklist: false }) }),
    );
    expect(r.checks[0]).toMatchObject({ now: { verdict: 'refused', by: 'evidence' }, flipped: true });
  });
});

describe('rejudgeRun: a run recorded before the integrity gates', () => {
  const TEST_BEFORE =
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\ntest('adds', () => {\n  assert.equal(add(2, 3), 5);\n});\n";
  const gamedTree: RecordedTree = {
    iteration: 3,
    tree: 't3',
    incomplete: false,
    deltas: [
      { file: 'src/add.js', before: 'export const add = () => 0;\n', after: 'export const add = (a, b) => a + b;\n' },
      { file: 'test/add.test.js', before: TEST_BEFORE, after: TEST_BEFORE.replace("test('adds'", "test.skip('adds'") },
    ],
  };
  const honestTree: RecordedTree = {
    ...gamedTree,
    deltas: [
      gamedTree.deltas[0]!,
      { file: 'test/add.test.js', before: TEST_BEFORE, after: `${TEST_BEFORE}test('adds zero', () => assert.equal(add(0, 1), 1));\n` },
    ],
  };
  // Its release had neither gate: no knob for them, no result in the journal.
  const older = (): Record<string, unknown> => {
    const k: Record<string, unknown> = { ...defaultKnobs() };
    delete k.gateTestMutation;
    delete k.gateTestGaming;
    return k;
  };
  const events = (): RunEvent[] =>
    approvedRun().filter((e) => !(e.kind === 'gate' && (e.gate === 'test_mutation' || e.gate === 'test_gaming')));

  it('a skipped baseline test, approved then by every role, is refused by what test_mutation would have said', () => {
    const r = rejudgeRun(recorded(events(), { knobs: older(), startTree: 't0', trees: [gamedTree] }));
    expect(r.flips).toBe(1);
    expect(r.checks[0]?.now.by).toBe('test_mutation');
    expect(r.checks[0]?.now.reason).toMatch(
      /^test mutation \(the run was recorded without this gate; it would have said\): 1 finding\(s\): skip_added-[0-9a-f]{8}: /,
    );
    expect(r.knobChanges.map((c) => c.knob)).toEqual(['gateTestMutation', 'gateTestGaming']);
  });

  it('the honest control (a test added, none touched) stays approved, with a note of what the gates would have said', () => {
    const r = rejudgeRun(recorded(events(), { knobs: older(), startTree: 't0', trees: [honestTree] }));
    expect(r.flips).toBe(0);
    expect(r.checks[0]?.now.verdict).toBe('approved');
    expect(r.checks[0]?.notes).toEqual([
      'test mutation (not run then) would have passed: no finding in 2 changed file(s)',
      'test gaming (not run then) would have passed: no finding in 2 changed file(s)',
    ]);
  });

  it('a finding a person waived does not refuse; without the tree, it needs a new judgement', () => {
    const id = integrityOn(gamedTree, 'test_mutation', new Set())[0]?.split(':')[0] ?? '';
    const waiver: RunEvent = {
      kind: 'message',
      name: 'waive',
      by: 'ana',
      summary: `waived ${id}: the test is flaky upstream`,
      accepted: true,
    };
    expect(waivedIds([waiver])).toEqual(new Set([id]));
    const all = [...events().slice(0, -2), waiver, ...events().slice(-2)];
    expect(rejudgeRun(recorded(all, { knobs: older(), startTree: 't0', trees: [gamedTree] })).flips).toBe(0);
    const blind = rejudgeRun(recorded(events(), { knobs: older(), startTree: null, trees: [] }));
    expect(blind.checks[0]?.now).toMatchObject({ verdict: 'needs_new_judgement', by: 'test_mutation' });
  });

  it("a run recorded with the gate: today's rule reads its tree too (a recorded pass the rule now refuses flips)", () => {
    const r = rejudgeRun(recorded(approvedRun(), { startTree: 't0', trees: [gamedTree] }));
    expect(r.checks[0]?.now.reason).toMatch(/^test mutation \(today\): 1 finding/);
  });
});

describe('recordedKnobs', () => {
  it("takes what the run had, today's default for what it did not have or what is no longer valid", () => {
    const { knobs, missing } = recordedKnobs({ councilSize: 5, councilThreshold: 'many', unknownOld: 1 });
    expect(knobs.councilSize).toBe(5);
    expect(knobs.councilThreshold).toBe(defaultKnobs().councilThreshold);
    expect(missing).toContain('councilThreshold');
    expect(missing).toContain('gateTestMutation');
    expect(recordedKnobs(null).missing.length).toBeGreaterThan(50);
  });
});
