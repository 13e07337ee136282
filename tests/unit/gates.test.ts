import { describe, expect, it } from 'vitest';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';
import { GateResultSchema, type GateName, type GateResult, type GateResultInput, type ReviewRecord } from '../../schemas/gates.js';
import {
  blockingFailures,
  checklistGateResult,
  describeGateRefusal,
  freshTrack,
  gateDisposition,
  gateFindingsForPrompt,
  gateGroups,
  gatesDue,
  mergeLatest,
  reviewGateResult,
  stuckReason,
  trackGate,
} from '../../rules/gates.js';
import { carriedGates } from '../../workflows/gates-pass.js';

const k = (over: Partial<Knobs> = {}): Knobs => ({ ...defaultKnobs(), ...over });
const result = (over: Partial<GateResultInput> & { gate: GateName }): GateResult =>
  GateResultSchema.parse({ verdict: 'fail', reason: 'r', treeHash: 't1', iteration: 1, ...over });

describe('gate dispositions', () => {
  it('every default gate blocks; coverage is opt-in', () => {
    const d = k();
    for (const g of [
      'static_analysis',
      'secret_scan',
      'build',
      'tests',
      'mock_integrity',
      'test_mutation',
      'test_gaming',
      'doc_coverage',
      'code_review',
      'checklist',
    ] as const) {
      expect(gateDisposition(g, d)).toBe('blocking');
    }
    expect(gateDisposition('coverage', d)).toBe('off');
    expect(gateDisposition('coverage', k({ gateCoverage: true }))).toBe('blocking');
  });

  it('each gate has its own switch, and qualityGates turns every tool gate off (not review or checklist)', () => {
    expect(gateDisposition('static_analysis', k({ gateStaticAnalysis: false }))).toBe('off');
    expect(gateDisposition('secret_scan', k({ gateSecretScan: false }))).toBe('off');
    expect(gateDisposition('tests', k({ gateTests: false }))).toBe('off');
    expect(gateDisposition('mock_integrity', k({ gateMockIntegrity: false }))).toBe('off');
    expect(gateDisposition('test_mutation', k({ gateTestMutation: false }))).toBe('off');
    expect(gateDisposition('doc_coverage', k({ gateDocCoverage: false }))).toBe('off');
    expect(gateDisposition('code_review', k({ codeReview: false }))).toBe('off');
    expect(gateDisposition('checklist', k({ prdChecklist: false }))).toBe('off');
    const none = k({ qualityGates: false, gateCoverage: true });
    expect(gateGroups(none)).toEqual([]);
    expect(gateDisposition('code_review', none)).toBe('blocking');
    expect(gateDisposition('checklist', none)).toBe('blocking');
  });

  it('gates run in the spec order, grouped for parallelism; empty groups disappear', () => {
    expect(gateGroups(k())).toEqual([
      ['static_analysis', 'secret_scan', 'build'],
      ['tests'],
      ['mock_integrity', 'test_mutation', 'test_gaming', 'doc_coverage', 'app_check'],
    ]);
    expect(gateGroups(k({ gateCoverage: true, gateTests: false }))).toEqual([
      ['static_analysis', 'secret_scan', 'build'],
      ['mock_integrity', 'test_mutation', 'test_gaming', 'doc_coverage', 'coverage', 'app_check'],
    ]);
  });

  it('the app check is on (the start tree file, when it has one) unless appCheck says off; e2e and perf only when configured', () => {
    for (const off of ['off', 'none', ' OFF ']) expect(gateDisposition('app_check', k({ appCheck: off })), off).toBe('off');
    expect(gateDisposition('app_check', k({ appCheck: 'sh probe.sh' }))).toBe('blocking');
    expect(gateDisposition('e2e', k())).toBe('off');
    expect(gateDisposition('perf', k())).toBe('off');
    expect(gateDisposition('e2e', k({ e2eCommand: 'npx playwright test' }))).toBe('blocking');
    expect(gateDisposition('perf', k({ perfCommand: 'node bench.js' }))).toBe('blocking');
    expect(gateDisposition('perf', k({ perfCommand: 'node bench.js', qualityGates: false }))).toBe('off');
    // The product checks join the last group: the pass keeps its three groups (and its activity's timeout).
    const all = gateGroups(k({ e2eCommand: 'e2e', perfCommand: 'bench' }));
    expect(all.length).toBe(3);
    expect(all[2]?.slice(-3)).toEqual(['app_check', 'e2e', 'perf']);
  });

  it('the build gate is on unless buildCommand says off or none; the pass keeps its three groups', () => {
    for (const off of ['off', 'none', ' OFF ', 'None']) expect(gateDisposition('build', k({ buildCommand: off })), off).toBe('off');
    for (const on of ['', 'npm run build', 'offline-build.sh'])
      expect(gateDisposition('build', k({ buildCommand: on })), on).toBe('blocking');
    expect(gateDisposition('build', k({ qualityGates: false }))).toBe('off');
    expect(gateGroups(k({ buildCommand: 'off' }))[0]).toEqual(['static_analysis', 'secret_scan']);
    expect(gateGroups(k()).length).toBe(gateGroups(k({ buildCommand: 'off' })).length);
  });
});

describe('when the gates run', () => {
  const facts = { judging: false, iterationSucceeded: true, treeHash: 'b', lastTree: 'a' };
  it('after a good iteration that changed the tree (cadence changed)', () => {
    expect(gatesDue(facts, k())).toBe(true);
    expect(gatesDue({ ...facts, lastTree: 'b' }, k())).toBe(false);
    expect(gatesDue({ ...facts, iterationSucceeded: false }, k())).toBe(false);
  });
  it('again on a tree they saw when completion is judged and its tests were a partial run (affected tests), never otherwise', () => {
    const seen = { ...facts, lastTree: 'b' };
    expect(gatesDue({ ...seen, judging: true, partialTests: true }, k())).toBe(true);
    expect(gatesDue({ ...seen, judging: true, partialTests: false }, k())).toBe(false);
    expect(gatesDue({ ...seen, judging: false, partialTests: true }, k())).toBe(false);
  });
  it('only when completion is judged (cadence claim), on a tree they have not seen', () => {
    expect(gatesDue(facts, k({ gateCadence: 'claim' }))).toBe(false);
    expect(gatesDue({ ...facts, judging: true }, k({ gateCadence: 'claim' }))).toBe(true);
    expect(gatesDue({ ...facts, judging: true, lastTree: 'b' }, k({ gateCadence: 'claim' }))).toBe(false);
  });
  it('never when every tool gate is off', () => {
    expect(gatesDue({ ...facts, judging: true }, k({ qualityGates: false }))).toBe(false);
  });
});

describe('the failure ladder (spec §5.2) and the stuck-gate abort (§5.3)', () => {
  const walk = (gate: GateName, reasons: string[], over: Partial<Knobs> = {}) => {
    let track = freshTrack();
    return reasons.map((reason, i) => {
      const r = trackGate(track, result({ gate, reason, iteration: i + 1 }), k(over));
      track = r.track;
      return r.action;
    });
  };

  it('blocks, escalates once at 3, pauses once at 10 (different reasons each time)', () => {
    const actions = walk(
      'tests',
      Array.from({ length: 12 }, (_, i) => `reason ${i}`),
    );
    expect(actions).toEqual([
      'block',
      'block',
      'escalate',
      'block',
      'block',
      'block',
      'block',
      'block',
      'block',
      'pause',
      'block',
      'block',
    ]);
  });

  it('the same reason 3 times in a row ends a static, mock or mutation gate', () => {
    expect(walk('static_analysis', ['a', 'a', 'a'])).toEqual(['block', 'block', 'stuck']);
    expect(walk('mock_integrity', ['a', 'a', 'a'])).toEqual(['block', 'block', 'stuck']);
    expect(walk('test_mutation', ['a', 'a', 'a'])).toEqual(['block', 'block', 'stuck']);
    // A change of reason restarts the count; the streak of failures still escalates.
    expect(walk('static_analysis', ['a', 'b', 'a', 'a', 'a'])).toEqual(['block', 'block', 'escalate', 'block', 'stuck']);
  });

  it('other gates are never stuck, and the rule can be turned off', () => {
    expect(walk('tests', ['a', 'a', 'a', 'a'])).toEqual(['block', 'block', 'escalate', 'block']);
    expect(walk('static_analysis', ['a', 'a', 'a', 'a'], { gateStuckAfter: 0 })).toEqual(['block', 'block', 'escalate', 'block']);
  });

  it('a pass resets the streak and remembers its tree; inconclusive leaves the track as it was', () => {
    let t = trackGate(undefined, result({ gate: 'tests', reason: 'x' }), k()).track;
    t = trackGate(t, result({ gate: 'tests', reason: 'x' }), k()).track;
    expect(t.consecutiveFailures).toBe(2);
    const same = trackGate(t, result({ gate: 'tests', verdict: 'inconclusive' }), k());
    expect(same).toEqual({ track: t, action: 'none' });
    const passed = trackGate(t, result({ gate: 'tests', verdict: 'pass', treeHash: 'tree-9' }), k());
    expect(passed).toEqual({ track: { ...freshTrack(), passTree: 'tree-9' }, action: 'none' });
  });

  it('a failing gate never turns into a pass by repetition', () => {
    let track = freshTrack();
    for (let i = 0; i < 30; i++) {
      const r = trackGate(track, result({ gate: 'tests', reason: `r${i}` }), k());
      expect(r.action).not.toBe('none');
      track = r.track;
    }
    expect(blockingFailures([result({ gate: 'tests' })], k())).toHaveLength(1);
  });

  it('stuck reasons name the gate and the reason', () => {
    const t = { ...freshTrack(), consecutiveFailures: 3, sameReason: 3, lastReason: 'src/a.ts:3 TS2322' };
    expect(stuckReason('static_analysis', t)).toBe(
      'the static analysis gate failed 3 times in a row for the same reason: src/a.ts:3 TS2322',
    );
  });
});

describe('results, refusals and the prompt', () => {
  it('the latest result per gate replaces the earlier one', () => {
    const a = result({ gate: 'tests', reason: 'old' });
    const b = result({ gate: 'static_analysis', verdict: 'pass' });
    const c = result({ gate: 'tests', verdict: 'pass', reason: 'new' });
    expect(mergeLatest([a, b], [c]).map((r) => `${r.gate}:${r.reason}`)).toEqual(['tests:new', 'static_analysis:r']);
  });

  it('only blocking failures on the judged tree refuse completion', () => {
    const latest = [
      result({ gate: 'tests', treeHash: 't2' }),
      result({ gate: 'static_analysis', treeHash: 't1' }),
      result({ gate: 'doc_coverage', verdict: 'inconclusive', treeHash: 't2' }),
      result({ gate: 'coverage', treeHash: 't2' }), // off by default
    ];
    expect(blockingFailures(latest, k(), 't2').map((r) => r.gate)).toEqual(['tests']);
    expect(blockingFailures(latest, k({ gateCoverage: true }), 't2').map((r) => r.gate)).toEqual(['tests', 'coverage']);
  });

  it('the refusal names every failing gate', () => {
    const text = describeGateRefusal(
      [result({ gate: 'static_analysis', reason: '1 error in src/a.ts' }), result({ gate: 'secret_scan', reason: 'AWS key' })],
      7,
    );
    expect(text).toContain('Completion at iteration 7 was refused before the council was asked');
    expect(text).toContain('static analysis, secret scan failed');
    expect(text).toContain('static analysis: FAIL (1 error in src/a.ts)');
  });

  it('the prompt section: failures first with their worst findings, then advisory ones, capped', () => {
    const failing = result({
      gate: 'static_analysis',
      reason: '2 errors',
      findings: [
        { gate: 'static_analysis', severity: 'low', file: 'a.ts', line: 9, message: 'style' },
        {
          gate: 'static_analysis',
          severity: 'high',
          file: 'a.ts',
          line: 3,
          message: "TS2322: Type 'string' is not assignable to type 'number'.",
        },
      ],
      findingCount: 2,
    });
    const advisory = result({
      gate: 'doc_coverage',
      verdict: 'pass',
      findings: [{ gate: 'doc_coverage', severity: 'medium', file: 'b.ts', line: 1, message: 'exported foo has no doc comment' }],
    });
    const missing = result({ gate: 'tests', verdict: 'inconclusive', reason: 'no test runner found', missingTools: [] });
    const text = gateFindingsForPrompt([advisory, failing, missing], k()) ?? '';
    const lines = text.split('\n');
    expect(lines[0]).toBe('- static analysis FAILED (blocks completion): 2 errors');
    expect(lines[1]).toBe("  - [high] a.ts:3: TS2322: Type 'string' is not assignable to type 'number'.");
    expect(text.indexOf('[low] a.ts:9')).toBeGreaterThan(text.indexOf('[high] a.ts:3'));
    expect(text).toContain('- doc coverage (advisory findings)');
    expect(text).toContain('- tests (could not decide: no test runner found)');
    const capped = gateFindingsForPrompt([failing, advisory], k({ gateFindingsInPrompt: 1 })) ?? '';
    expect(capped.match(/ {2}- \[/g)).toHaveLength(1);
    expect(gateFindingsForPrompt([result({ gate: 'tests', verdict: 'pass' })], k())).toBeNull();
  });
});

describe('review and checklist as gates', () => {
  const reviewer = (name: string, verdict: 'PASS' | 'FAIL' | 'NO_VERDICT', blocking: boolean, findings: string[] = []) => ({
    reviewer: name,
    verdict,
    blocking,
    counts: { critical: 0, high: blocking ? 1 : 0, medium: 0, low: 0 },
    findings,
    logPath: '',
  });
  const record = (over: Partial<ReviewRecord>): ReviewRecord => ({
    round: 1,
    iteration: 4,
    treeHash: 'tree',
    reviewers: [],
    devilsAdvocate: null,
    result: 'pass',
    reason: 'passed',
    mergeability: 100,
    rerun: false,
    at: '2026-01-01T00:00:00Z',
    ...over,
  });

  it('a blocked, inconclusive or refused review fails; its blocking findings are high', () => {
    const blocked = reviewGateResult(
      record({
        result: 'blocked',
        reason: 'blocked by security-sentinel',
        reviewers: [reviewer('security-sentinel', 'FAIL', true, ['- [High] SQL injection (db.ts:4)'])],
      }),
    );
    expect(blocked).toMatchObject({ gate: 'code_review', verdict: 'fail', treeHash: 'tree', iteration: 4 });
    expect(blocked.findings[0]).toMatchObject({ severity: 'high', message: 'security-sentinel: - [High] SQL injection (db.ts:4)' });
    expect(reviewGateResult(record({ result: 'inconclusive' })).verdict).toBe('fail');
    expect(reviewGateResult(record({ result: 'refused' })).verdict).toBe('fail');
    expect(
      reviewGateResult(record({ result: 'pass', reviewers: [reviewer('maintainer-mergeability', 'PASS', false, ['- [Medium] naming'])] })),
    ).toMatchObject({
      verdict: 'pass',
      findings: [{ severity: 'medium' }],
    });
  });

  it('the checklist gate fails on a failing held-out item without naming it', () => {
    const state = {
      items: [
        { id: 'REQ-1', title: 'Users can log in', priority: 'critical' as const, verify: '' },
        { id: 'REQ-2', title: 'Secret held-out requirement text', priority: 'low' as const, verify: '' },
      ],
      heldOut: ['REQ-2'],
      source: 'agent' as const,
      status: {
        'REQ-1': { status: 'passing' as const, evidence: 'ok', iteration: 3 },
        'REQ-2': { status: 'failing' as const, evidence: 'not built', iteration: 3 },
      },
      waivers: [],
    };
    const r = checklistGateResult(state, 'tree', 3);
    expect(r.verdict).toBe('fail');
    expect(JSON.stringify(r)).not.toContain('Secret held-out requirement text');
    expect(JSON.stringify(r)).not.toContain('REQ-2');
    const waived = checklistGateResult({ ...state, waivers: [{ item: 'REQ-2', by: 'ana', reason: 'later', at: 'x' }] }, 'tree', 3);
    expect(waived.verdict).toBe('pass');
  });
});

describe('the pass an agent call carries (vigil-gates-with-call-v1)', () => {
  const facts = (over: Partial<Knobs> = {}, knownTree: string | null = null) => ({
    runId: 'r',
    repoPath: '/repo',
    iteration: 4,
    knobs: k(over),
    runStartTree: 'start',
    tracks: { secret_scan: { ...freshTrack('passed-here') } },
    knownTests: knownTree
      ? {
          treeHash: knownTree,
          iteration: 3,
          passed: true,
          timedOut: false,
          exitCode: 0,
          logPath: '/l',
          failures: null,
          runner: 'command',
          verdict: 'pass' as const,
          reason: 'ok',
          baselineTotal: null,
          baselinePassed: null,
          command: 'npm test',
        }
      : null,
    testsInput: {
      runId: 'r',
      repoPath: '/repo',
      command: 'npm test',
      detect: false,
      iteration: 4,
      timeoutSeconds: 60,
      authorization: null,
    },
  });

  it('is the same pass the gates activity would make, with the suite, the tree each gate looks since and the trees to skip', () => {
    const c = carriedGates(facts({}, 'tested-tree'), 'gated-tree');
    expect(c).not.toBeNull();
    expect(c?.pass.groups).toEqual(gateGroups(k()));
    expect(c?.pass.tests).toMatchObject({ command: 'npm test', iteration: 4 });
    expect(c?.pass).toMatchObject({ iteration: 4, compact: true, sinceDefault: 'start', sinceTrees: { secret_scan: 'passed-here' } });
    expect(c?.lastTree).toBe('gated-tree');
    expect(c?.knownTestsTree).toBe('tested-tree');
  });

  it('is not carried when the gates wait for a claim, or there are none', () => {
    expect(carriedGates(facts({ gateCadence: 'claim' }), null)).toBeNull();
    expect(carriedGates(facts({ qualityGates: false }), null)).toBeNull();
  });

  it('carries no suite when the run has none to run', () => {
    const c = carriedGates({ ...facts(), testsInput: null }, null);
    expect(c?.pass.tests).toBeNull();
  });
});
