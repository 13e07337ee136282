/**
 * The memory that outlives a run, as rules (rules/lasting-memory.ts and
 * memory-retrieval.ts): a journal and its traces become one episode per iteration (outcome,
 * signatures, findings, council reasons, redacted texts); a test that failed three times for the
 * same reason becomes an anti-pattern naming it and the reason, its fix a pattern that supersedes
 * it; a signature in two repositories an installation-wide pattern; a run that ended done a skill;
 * forgotten items never come back; retrieval keeps each layer within its budget and ranks by the
 * task's keywords.
 */
import { describe, expect, it } from 'vitest';
import { EventEnvelopeSchema, type EventEnvelope, type RunEvent } from '../../schemas/events.js';
import {
  consolidate,
  episodesOf,
  errorLine,
  failingTest,
  forgetKey,
  normalizeReason,
  type IterationTrace,
  type RunEnd,
} from '../../rules/lasting-memory.js';
import { CHARS_PER_TOKEN, memoryTopics, retrieve, taskTypeOf, TASK_WEIGHTS, type StoredItem } from '../../rules/memory-retrieval.js';

const GH_TOKEN = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';

function journal(runId: string, t0: number, events: RunEvent[]): EventEnvelope[] {
  return events.map((event, i) => EventEnvelopeSchema.parse({ seq: i + 1, runId, at: new Date(t0 + i * 60_000).toISOString(), event }));
}

const it_ = (n: number, over: Partial<Extract<RunEvent, { kind: 'iteration' }>> = {}): RunEvent => ({
  kind: 'iteration',
  iteration: n,
  phase: 'ACT',
  tier: 'development',
  exitCode: 0,
  durationMs: 1000,
  changed: true,
  filesChangedSinceStart: n,
  claimed: false,
  tests: null,
  provider: 'command',
  model: null,
  costUsd: null,
  attempts: 1,
  ...over,
});
const testsFail = (n: number, name = 'adds two numbers'): RunEvent => ({
  kind: 'gate',
  iteration: n,
  gate: 'tests',
  verdict: 'fail',
  reason: `npm-test: 1 failed, 2 passed (exit 1); first: ${name}`,
  findings: 1,
});
const testsPass = (n: number): RunEvent => ({
  kind: 'gate',
  iteration: n,
  gate: 'tests',
  verdict: 'pass',
  reason: 'npm-test: 3 passed',
  findings: 0,
});
const trace = (n: number, over: Partial<IterationTrace> = {}): IterationTrace => ({
  iteration: n,
  files: ['src/add.js'],
  errors: [],
  testFailure: 'Expected values to be strictly equal: 3 !== 4 (12ms)',
  summary: null,
  retrieved: [],
  ...over,
});

/** Run 1 on /repo/a: the test fails in iterations 1-3 for the same reason, passes in 4; the run ends done. */
function runA(): { events: EventEnvelope[]; traces: IterationTrace[]; end: RunEnd } {
  const events = journal('r1', Date.parse('2026-03-01T10:00:00Z'), [
    {
      kind: 'run_started',
      prdPath: '/repo/a/PRD.md',
      prdTitle: 'Add numbers',
      repoPath: '/repo/a',
      provider: 'command',
      maxIterations: 10,
      budgetUsd: 0,
      autonomyMode: 'perpetual',
    },
    it_(1),
    testsFail(1),
    it_(2),
    testsFail(2),
    it_(3),
    testsFail(3),
    it_(4, { tests: 'pass', claimed: true }),
    testsPass(4),
    { kind: 'council_round', round: 1, iteration: 4, trigger: 'claim', result: 'APPROVED', approve: 3, reject: 0, threshold: 2, votes: [] },
    { kind: 'outcome', status: 'council_approved', exitCode: 0, reason: 'approved', iteration: 4 },
  ]);
  const traces = [
    trace(1, { summary: `Tried the loop; token ${GH_TOKEN}` }),
    trace(2),
    trace(3),
    trace(4, { testFailure: null, files: ['src/add.js', 'src/carry.js'], summary: 'Fixed the carry.' }),
  ];
  return { events, traces, end: { workflowId: 'wf-a', repo: '/repo/a', prdTitle: 'Add numbers', exitCode: 0, status: 'council_approved' } };
}

describe('episodes', () => {
  it('one per iteration, with its outcome, signatures, findings and redacted texts', () => {
    const a = runA();
    const eps = episodesOf({ workflowId: 'wf-a', repo: '/repo/a', events: a.events, traces: a.traces });
    expect(eps.map((e) => [e.iteration, e.outcome])).toEqual([
      [1, 'failure'],
      [2, 'failure'],
      [3, 'failure'],
      [4, 'success'],
    ]);
    expect(eps[0]?.signatures).toEqual(['tests:adds two numbers:Expected values to be strictly equal: N !== N']);
    expect(eps[0]?.findings[0]).toContain('tests: npm-test: 1 failed');
    expect(eps[3]?.passed).toContain('tests');
    expect(eps[3]?.files).toEqual(['src/add.js', 'src/carry.js']);
    expect(eps[0]?.summary).not.toContain(GH_TOKEN);
    expect(eps[0]?.summary).toContain('[REDACTED');
    // Surprise: the first success after failures weighs more than a plain success.
    expect(eps[3]?.importance).toBeGreaterThan(0.4);
  });

  it('an agent that exits non-zero and a council that refuses are signatures too; the latest record of an iteration wins', () => {
    const events = journal('r', 0, [
      {
        kind: 'run_started',
        prdPath: '/p',
        prdTitle: 't',
        repoPath: '/r',
        provider: 'command',
        maxIterations: 5,
        budgetUsd: 0,
        autonomyMode: 'perpetual',
      },
      it_(1, { exitCode: 2, changed: false }),
      it_(1, { exitCode: 0 }),
      it_(2),
      {
        kind: 'council_round',
        round: 1,
        iteration: 2,
        trigger: 'claim',
        result: 'REJECTED',
        approve: 1,
        reject: 2,
        threshold: 2,
        votes: [{ member: 0, recorded: 'REJECT', approves: false, reason: 'README lacks usage' }],
      },
    ]);
    const eps = episodesOf({
      workflowId: 'w',
      repo: '/r',
      events,
      traces: [{ iteration: 1, files: [], errors: ['Error: cannot find module x'], testFailure: null, summary: null, retrieved: [] }],
    });
    expect(eps).toHaveLength(2);
    expect(eps[0]?.outcome).toBe('success');
    expect(eps[1]?.outcome).toBe('partial');
    expect(eps[1]?.councilReasons).toEqual(['README lacks usage']);
    expect(eps[1]?.signatures).toEqual(['council:README lacks usage']);
  });
});

describe('consolidation', () => {
  it('three failures of one test for the same reason make an anti-pattern naming the test and the reason; the fix a pattern that supersedes it', () => {
    const a = runA();
    const eps = episodesOf({ workflowId: 'wf-a', repo: '/repo/a', events: a.events, traces: a.traces });
    const out = consolidate(eps, [a.end]);
    const anti = out.patterns.find((p) => p.kind === 'anti_pattern');
    expect(anti).toBeDefined();
    expect(anti?.title).toBe('Test "adds two numbers" failed 3 times for the same reason: Expected values to be strictly equal: N !== N');
    expect(anti?.body).toContain('What fixed it: iteration 4 changed src/add.js, src/carry.js ("Fixed the carry.")');
    expect(anti?.from.map((f) => f.iteration)).toEqual([1, 2, 3]);
    expect(anti?.repo).toBe('/repo/a');
    const fix = out.patterns.find((p) => p.kind === 'pattern');
    expect(fix?.title).toContain('passed again after it failed');
    expect(out.links).toContainEqual({
      relation: 'supersedes',
      from: { repo: '/repo/a', kind: 'pattern', signature: anti?.signature },
      to: { repo: '/repo/a', kind: 'anti_pattern', signature: anti?.signature },
    });
    // The run ended done: a skill with its steps.
    expect(out.skills).toHaveLength(1);
    expect(out.skills[0]?.taskKind).toBe('add numbers');
    expect(out.skills[0]?.steps.join('\n')).toContain('Fixed the carry. (fixed adds two numbers)');
  });

  it('two failures are not yet an anti-pattern; different reasons do not group', () => {
    const events = journal('r', 0, [
      {
        kind: 'run_started',
        prdPath: '/p',
        prdTitle: 't',
        repoPath: '/r',
        provider: 'command',
        maxIterations: 5,
        budgetUsd: 0,
        autonomyMode: 'perpetual',
      },
      it_(1),
      testsFail(1),
      it_(2),
      testsFail(2),
      it_(3),
      testsFail(3),
    ]);
    const traces = [trace(1), trace(2), trace(3, { testFailure: 'TypeError: x is not a function' })];
    const out = consolidate(episodesOf({ workflowId: 'w', repo: '/r', events, traces }), []);
    expect(out.patterns).toEqual([]);
  });

  it('the same signature in two repositories is also remembered across repositories, derived from both', () => {
    const a = runA();
    const b = { ...runA(), end: { ...runA().end, workflowId: 'wf-b', repo: '/repo/b' } };
    const eps = [
      ...episodesOf({ workflowId: 'wf-a', repo: '/repo/a', events: a.events, traces: a.traces }),
      ...episodesOf({ workflowId: 'wf-b', repo: '/repo/b', events: b.events, traces: b.traces }),
    ];
    const out = consolidate(eps, [a.end, b.end]);
    const global = out.patterns.filter((p) => p.repo === null);
    expect(global.map((p) => p.kind).sort()).toEqual(['anti_pattern', 'pattern']);
    expect(global.find((p) => p.kind === 'anti_pattern')?.evidence).toBe(6);
    expect(
      out.links
        .filter((l) => l.relation === 'derived_from' && l.from.repo === null && l.from.kind === 'anti_pattern')
        .map((l) => l.to.repo)
        .sort(),
    ).toEqual(['/repo/a', '/repo/b']);
  });

  it('a forgotten item is never consolidated again', () => {
    const a = runA();
    const eps = episodesOf({ workflowId: 'wf-a', repo: '/repo/a', events: a.events, traces: a.traces });
    const sig = eps[0]?.signatures[0] as string;
    const out = consolidate(
      eps,
      [a.end],
      new Set([forgetKey('/repo/a', 'anti_pattern', sig), forgetKey('/repo/a', 'skill', 'add numbers')]),
    );
    expect(out.patterns.map((p) => p.kind)).toEqual(['pattern']);
    expect(out.skills).toEqual([]);
  });
});

describe('signature helpers', () => {
  it('reasons compare without their counts, durations and hashes', () => {
    expect(normalizeReason('failed after 12ms (34 ms) at deadbeefcafe')).toBe(normalizeReason('failed after 99ms (1 ms) at 0123456789ab'));
    expect(failingTest('vitest: 1 failed (exit 1); first: src/a.test.ts > adds')).toBe('src/a.test.ts > adds');
    expect(failingTest('vitest: zero tests ran')).toBeNull();
    // A report's id (`file-or-class::name`) gives the name alone, and no colon survives into a signature.
    expect(failingTest('node: 1 failed, 0 passed (exit 1); first: test::adds two numbers')).toBe('adds two numbers');
    expect(failingTest('pytest: 1 failed (exit 1); first: tests/test_a.py::test_x[a:b]')).toBe('test_x[a.b]');
    expect(failingTest('node-test: 1 of 2 baseline tests did not pass (failed, errored or skipped): test::adds two numbers, test::b')).toBe(
      'adds two numbers',
    );
  });
  it('the error line of a TAP block, of a stack, or none', () => {
    expect(errorLine("not ok 1 - adds\n  ---\n  error: |-\n    Expected values to be strictly equal:\n  code: 'ERR_ASSERTION'")).toBe(
      'Expected values to be strictly equal:',
    );
    expect(
      errorLine("not ok 1 - adds\n  ---\n  error: |-\n    Expected values to be strictly equal:\n\n    4 !== 3\n\n  code: 'ERR_ASSERTION'"),
    ).toBe('Expected values to be strictly equal: 4 !== 3');
    expect(errorLine('ok\nTypeError: x is not a function\n    at y')).toBe('TypeError: x is not a function');
    expect(errorLine('all good')).toBeNull();
  });
});

describe('the index (memoryTopics)', () => {
  it('counts each topic per kind, the fullest topic first, then by name; nothing is an empty index', () => {
    const items = [
      { topic: 'tests', kind: 'pattern' },
      { topic: 'council', kind: 'pattern' },
      { topic: 'tests', kind: 'anti_pattern' },
      { topic: 'tests', kind: 'pattern' },
      { topic: 'agent', kind: 'skill' },
    ];
    expect(memoryTopics(items)).toEqual([
      { topic: 'tests', count: 3, kinds: { pattern: 2, anti_pattern: 1 } },
      { topic: 'agent', count: 1, kinds: { skill: 1 } },
      { topic: 'council', count: 1, kinds: { pattern: 1 } },
    ]);
    expect(memoryTopics([])).toEqual([]);
  });
});

describe('retrieval by layer', () => {
  const item = (id: number, kind: string, body: string, keywords: string[], repo: string | null = '/r', importance = 0.6): StoredItem => ({
    ref: { kind: kind === 'skill' ? 'skill' : 'pattern', id },
    repo,
    kind,
    topic: kind === 'skill' ? 'skills' : 'tests',
    title: body.slice(0, 40),
    body,
    keywords,
    evidence: 3,
    importance,
  });
  const items = [
    item(1, 'anti_pattern', 'Test "parses dates" failed 3 times: Invalid time value', ['parses', 'dates', 'invalid', 'time']),
    item(2, 'anti_pattern', 'Test "adds numbers" failed 3 times: 3 !== 4', ['adds', 'numbers', 'carry']),
    item(3, 'skill', 'How "Add numbers" got done here: ACT: changed src/add.js', ['add', 'numbers']),
    item(4, 'pattern', 'x'.repeat(2000), ['numbers'], null),
  ];
  const timeline = Array.from({ length: 30 }, (_, i) => ({
    workflowId: `w${i}`,
    startedAt: '2026-03-01T00:00:00Z',
    prdTitle: `Run ${i}`,
    iterations: 4,
    status: 'council_approved',
    failures: [{ what: 'test "adds numbers"', count: 3 }],
  }));

  it('each layer within its budget; the task decides which entries come first', () => {
    const budgets = { indexTokens: 40, timelineTokens: 60, entriesTokens: 60 };
    const r = retrieve({ repo: '/r', task: 'Add numbers with carry', budgets, items, timeline, episodes: { count: 40, runs: 30 } });
    expect(r.chars.index).toBeGreaterThan(0);
    expect(r.chars.index).toBeLessThanOrEqual(40 * CHARS_PER_TOKEN);
    expect(r.chars.timeline).toBeLessThanOrEqual(60 * CHARS_PER_TOKEN);
    expect(r.chars.entries).toBeLessThanOrEqual(60 * CHARS_PER_TOKEN);
    expect(r.text).toContain('Index: 4 item(s) from 30 earlier run(s), 40 episode(s).');
    expect(r.text).toContain('- tests: 2 anti-patterns, 1 pattern');
    const entries = r.text.slice(r.text.indexOf('Entries'));
    expect(entries.split('\n')[1]).toContain('#2');
    expect(entries).not.toContain('#4'); // too long for the budget
    expect(r.refs.map((x) => x.id)).toContain(2);
    expect(r.refs.map((x) => x.id)).not.toContain(4);
  });

  it('the relevance floor: an item that matches nothing of the task is not loaded to fill the budget, only counted', () => {
    // The adversary of the floor: an unrelated item of the highest importance, this repository's own.
    const loud = item(9, 'pattern', 'Prefer tabs in the Makefile', ['makefile', 'tabs'], '/r', 1);
    const r = retrieve({
      repo: '/r',
      task: 'Parse dates in ISO format',
      taskType: 'implementation',
      budgets: { indexTokens: 100, timelineTokens: 0, entriesTokens: 2000 },
      items: [...items, loud],
      timeline: [],
      episodes: { count: 5, runs: 2 },
    });
    expect(r.text).toContain('Index: 5 item(s)');
    expect(r.refs.map((x) => x.id)).toEqual([1]); // "parses dates" matches; nothing else does
    expect(r.text).not.toContain('Makefile');
    // The honest control: with a task it matches, the same item is loaded.
    const asked = retrieve({
      repo: '/r',
      task: 'Fix the Makefile tabs',
      taskType: 'implementation',
      budgets: { indexTokens: 0, timelineTokens: 0, entriesTokens: 2000 },
      items: [...items, loud],
      timeline: [],
      episodes: { count: 5, runs: 2 },
    });
    expect(asked.refs.map((x) => x.id)).toEqual([9]);
  });

  it("the type of task weighs the layers as the original's retrieval strategies do", () => {
    expect(taskTypeOf({ iteration: 1, prdTitle: 'Add numbers' })).toBe('exploration');
    expect(taskTypeOf({ iteration: 4, prdTitle: 'Add numbers' })).toBe('implementation');
    expect(taskTypeOf({ iteration: 4, prdTitle: 'Add numbers', gateFindings: 'tests: 1 failed' })).toBe('debugging');
    expect(taskTypeOf({ iteration: 1, prdTitle: 'Add numbers', gateFindings: '  ' })).toBe('exploration');
    expect(taskTypeOf({ iteration: 3, prdTitle: 'Refactor the parser into modules' })).toBe('refactoring');
    expect(taskTypeOf({ iteration: 3, prdTitle: 'Clean up the date helpers' })).toBe('refactoring');
    expect(TASK_WEIGHTS.debugging.skills).toBe(0);

    const same = [
      item(1, 'anti_pattern', 'Test "adds numbers" failed 3 times: 3 !== 4', ['adds', 'numbers']),
      item(2, 'skill', 'How "adds numbers" got done here: ACT: changed src/add.js', ['adds', 'numbers']),
    ];
    const at = (taskType: 'debugging' | 'implementation' | 'exploration') =>
      retrieve({
        repo: '/r',
        task: 'adds numbers',
        taskType,
        budgets: { indexTokens: 0, timelineTokens: 200, entriesTokens: 2000 },
        items: same,
        timeline,
        episodes: { count: 30, runs: 30 },
      });
    // Debugging: the anti-pattern, and no skill at all.
    expect(at('debugging').refs.map((x) => x.id)).toEqual([1]);
    expect(at('debugging').text).toContain('weighed for debugging');
    // Implementation: both, and the skill is loaded (it was not while debugging).
    expect(
      at('implementation')
        .refs.map((x) => x.id)
        .sort(),
    ).toEqual([1, 2]);
    // The earlier runs: the whole timeline budget while exploring, a quarter of it while implementing.
    expect(at('exploration').chars.timeline).toBeGreaterThan(3 * at('implementation').chars.timeline);
    expect(at('exploration').chars.timeline).toBeLessThanOrEqual(200 * CHARS_PER_TOKEN);
    expect(at('implementation').chars.timeline).toBeGreaterThan(0);
  });

  it('a layer at 0 is left out; no memory says nothing', () => {
    const r = retrieve({
      repo: '/r',
      task: 'dates',
      budgets: { indexTokens: 0, timelineTokens: 0, entriesTokens: 500 },
      items,
      timeline,
      episodes: { count: 1, runs: 1 },
    });
    expect(r.text.startsWith('Entries')).toBe(true);
    expect(r.text.split('\n')[1]).toContain('#1');
    expect(
      retrieve({
        repo: '/r',
        task: 'x',
        budgets: { indexTokens: 100, timelineTokens: 100, entriesTokens: 100 },
        items: [],
        timeline: [],
        episodes: { count: 0, runs: 0 },
      }).text,
    ).toBe('');
  });
});

describe("links: the original's eight relations", () => {
  it('two repositories that fixed one test, and a later run whose failures came back after the fix, link by all eight', () => {
    const a = runA();
    const b = { ...runA(), end: { ...runA().end, workflowId: 'wf-b', repo: '/repo/b' } };
    // A later run on /repo/a: the test fails three more times for the first reason, then three
    // times each for a TypeError said in full and said short.
    const later = journal('r3', Date.parse('2026-03-02T10:00:00Z'), [
      { ...(a.events[0]?.event as RunEvent), prdTitle: 'Carry digits' } as RunEvent,
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((n) => [it_(n), testsFail(n)]),
    ]);
    const reason = (n: number): string | undefined => (n <= 3 ? undefined : n <= 6 ? 'TypeError: carry is undefined' : 'TypeError');
    const laterTraces = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => trace(n, reason(n) ? { testFailure: reason(n) as string } : {}));
    const eps = [
      ...episodesOf({ workflowId: 'wf-a', repo: '/repo/a', events: a.events, traces: a.traces }),
      ...episodesOf({ workflowId: 'wf-b', repo: '/repo/b', events: b.events, traces: b.traces }),
      ...episodesOf({ workflowId: 'wf-c', repo: '/repo/a', events: later, traces: laterTraces }),
    ];
    const ended = { workflowId: 'wf-c', repo: '/repo/a', prdTitle: 'Carry digits', exitCode: null, status: null };
    const out = consolidate(eps, [a.end, b.end, ended]);
    expect([...new Set(out.links.map((l) => l.relation))].sort()).toEqual([
      'contradicts',
      'derived_from',
      'elaborates',
      'example_of',
      'related_to',
      'superseded_by',
      'supersedes',
      'supports',
    ]);
    const at = (repo: string | null, kind: 'pattern' | 'anti_pattern' | 'skill', signature: string) => ({ repo, kind, signature });
    const sig = eps[0]?.signatures[0] as string;
    // /repo/a's fix came before its last failures: it contradicts the anti-pattern; /repo/b's supersedes it, both sides; it is
    // an example of the installation's anti-pattern, and its fix supports the skill of the run that fixed it.
    const expected: [string, ReturnType<typeof at>, ReturnType<typeof at>][] = [
      ['contradicts', at('/repo/a', 'pattern', sig), at('/repo/a', 'anti_pattern', sig)],
      ['supersedes', at('/repo/b', 'pattern', sig), at('/repo/b', 'anti_pattern', sig)],
      ['superseded_by', at('/repo/b', 'anti_pattern', sig), at('/repo/b', 'pattern', sig)],
      ['example_of', at('/repo/b', 'anti_pattern', sig), at(null, 'anti_pattern', sig)],
      ['supports', at('/repo/b', 'pattern', sig), at('/repo/b', 'skill', 'add numbers')],
    ];
    for (const [relation, from, to] of expected) expect(out.links).toContainEqual({ relation, from, to });
    // The TypeError said in full elaborates the one said short; both are related to the first reason.
    const antis = out.patterns.filter((p) => p.repo === '/repo/a' && p.kind === 'anti_pattern').map((p) => p.signature);
    const full = antis.find((s) => s.includes('carry is undefined')) as string;
    const short = antis.find((s) => s.endsWith(':TypeError')) as string;
    expect(out.links).toContainEqual({
      relation: 'elaborates',
      from: at('/repo/a', 'anti_pattern', full),
      to: at('/repo/a', 'anti_pattern', short),
    });
    const related = out.links.filter((l) => l.relation === 'related_to' && l.from.repo === '/repo/a' && l.from.kind === 'anti_pattern');
    expect(related.map((l) => [l.from.signature, l.to.signature].sort())).toEqual(
      expect.arrayContaining([[sig, full].sort(), [sig, short].sort()]),
    );
    expect(related).toHaveLength(2);
    const sigs = [sig, full, short];
    expect(sigs.every((s) => typeof s === 'string' && s.startsWith('tests:adds two numbers:'))).toBe(true);
  });
});
