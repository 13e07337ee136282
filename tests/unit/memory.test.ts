/**
 * Owns the unit tests of rules/memory.ts (the run memory): what an iteration and the
 * decisions around it leave in it, that it stays bounded over a 200-iteration run (entries, their
 * text, the state carried across continue-as-new, the rendered "run so far"), that the rendering
 * is newest first within its budget and says how much older memory there is, and the bounds of the
 * agent's continuity notes and the repository's learnings.
 */
import { describe, expect, it } from 'vitest';
import { MEMORY_LIMITS, emptyMemory, type RunMemory } from '../../schemas/memory.js';
import {
  appendMemory,
  boundedContinuity,
  boundedLearnings,
  directiveMemory,
  iterationMemory,
  memoryFromEvent,
  promptMemory,
  renderRunSoFar,
  rewindMemory,
  type IterationFacts,
} from '../../rules/memory.js';
import { runState } from '../support/run-state.js';

function facts(over: Partial<IterationFacts> = {}): IterationFacts {
  return {
    iteration: 1,
    phase: 'ACT',
    exitCode: 0,
    timedOut: false,
    changed: true,
    paths: ['src/a.ts'],
    lines: 12,
    filesChangedSinceStart: 1,
    insertions: 10,
    deletions: 2,
    tests: null,
    claimed: false,
    provider: 'command',
    summary: null,
    ...over,
  };
}

describe('iterationMemory', () => {
  it('says what changed, the exit, the tests, the claim and the agent summary', () => {
    const e = iterationMemory(
      facts({
        iteration: 12,
        paths: ['a.ts', 'b.ts'],
        lines: 40,
        filesChangedSinceStart: 5,
        insertions: 120,
        deletions: 8,
        tests: 'pass',
        claimed: true,
        summary: 'Added the tag\nfilter.',
      }),
    );
    expect(e).toEqual({
      iteration: 12,
      kind: 'iteration',
      text:
        'ACT · exit 0 · changed 2 file(s): a.ts, b.ts (40 line(s)) · 5 file(s) vs run start (+120 -8) · tests pass · claimed ' +
        'completion — agent: "Added the tag filter."',
    });
  });

  it('names at most five files and counts the rest', () => {
    const e = iterationMemory(facts({ paths: ['1', '2', '3', '4', '5', '6', '7'] }));
    expect(e.text).toContain('changed 7 file(s): 1, 2, 3, 4, 5 +2 more');
  });

  it('tells a failure, a timeout and no change apart', () => {
    expect(iterationMemory(facts({ exitCode: 2, changed: false })).text).toMatch(/^ACT · FAILED \(exit 2\) · no change/);
    expect(iterationMemory(facts({ exitCode: 124, timedOut: true })).text).toContain('timed out (exit 124)');
  });

  it('keeps the agent summary whole (up to its bound) when the facts are long', () => {
    const summary = 's'.repeat(MEMORY_LIMITS.summaryChars);
    const e = iterationMemory(facts({ paths: Array.from({ length: 50 }, (_, i) => `src/${'deep/'.repeat(10)}file-${i}.ts`), summary }));
    expect(e.text.length).toBeLessThanOrEqual(MEMORY_LIMITS.entryChars);
    expect(e.text).toContain(summary);
  });
});

describe('memoryFromEvent', () => {
  it('keeps a council round with the first reason against', () => {
    const e = memoryFromEvent({
      kind: 'council_round',
      round: 2,
      iteration: 9,
      trigger: 'claim',
      result: 'REJECTED',
      approve: 1,
      reject: 2,
      threshold: 2,
      votes: [
        { member: 0, recorded: 'APPROVE', approves: true, reason: 'fine' },
        { member: 1, recorded: 'REJECT', approves: false, reason: 'README lacks docs' },
      ],
    });
    expect(e).toEqual({
      iteration: 9,
      kind: 'council',
      text: 'council round 2 (claim): REJECTED · 1 of 3 approve, 2 needed — REJECT: README lacks docs',
    });
  });

  it('keeps failing gates and the tests verdict; other passing gates leave nothing', () => {
    expect(memoryFromEvent({ kind: 'gate', iteration: 3, gate: 'static_analysis', verdict: 'pass', reason: '', findings: 0 })).toBeNull();
    expect(memoryFromEvent({ kind: 'gate', iteration: 3, gate: 'tests', verdict: 'pass', reason: '', findings: 0 })?.text).toBe(
      'gate tests passed',
    );
    expect(
      memoryFromEvent({ kind: 'gate', iteration: 3, gate: 'secret_scan', verdict: 'fail', reason: 'a key in .env', findings: 1 })?.text,
    ).toBe('gate secret scan fail: a key in .env');
  });

  it('keeps escalations, reviews and tier changes; ignores notifications and spend', () => {
    expect(
      memoryFromEvent({ kind: 'escalation', iteration: 4, reason: 'uncertainty', detail: 'the run looks stuck', paused: true })?.text,
    ).toBe('escalated to a person (uncertainty), run paused: the run looks stuck');
    expect(
      memoryFromEvent({
        kind: 'review',
        iteration: 4,
        round: 1,
        result: 'fail',
        mergeability: 80,
        reviewers: [{ reviewer: 'security-sentinel', verdict: 'FAIL', blocking: true }],
      })?.text,
    ).toBe('code review 1: fail · mergeability 80 · blocking: security-sentinel');
    expect(memoryFromEvent({ kind: 'tier_change', iteration: 4, from: 'LOW', to: 'MEDIUM', trigger: '2 failures' })?.kind).toBe('tier');
    expect(memoryFromEvent({ kind: 'notification', event: 'paused', delivered: 1, failed: 0 })).toBeNull();
    expect(memoryFromEvent({ kind: 'spend', iteration: 1, usd: 1, calls: 1, unpricedCalls: 0, budgetUsd: 0 })).toBeNull();
  });
});

describe('appendMemory', () => {
  it('merges the gate lines of one iteration into one entry', () => {
    let m = emptyMemory();
    m = appendMemory(m, { iteration: 2, kind: 'gates', text: 'gate tests fail: 2 failed' });
    m = appendMemory(m, { iteration: 2, kind: 'gates', text: 'gate static analysis fail: tsc' });
    m = appendMemory(m, { iteration: 3, kind: 'gates', text: 'gate tests passed' });
    expect(m.entries.map((e) => e.text)).toEqual(['gate tests fail: 2 failed; gate static analysis fail: tsc', 'gate tests passed']);
  });

  it('makes every entry one line within its bound', () => {
    const m = appendMemory(emptyMemory(), directiveMemory(1, { text: `line one\nline two ${'x'.repeat(2000)}`, by: 'alice' }));
    expect(m.entries[0]?.text).toMatch(/^directive from alice: "line one line two x+…"$/);
    expect(m.entries[0]?.text.length).toBeLessThanOrEqual(MEMORY_LIMITS.entryChars);
  });
});

/** A 200-iteration run that leaves everything the memory keeps, at its largest. */
function longRun(iterations: number): RunMemory {
  let m = emptyMemory();
  for (let i = 1; i <= iterations; i++) {
    m = appendMemory(
      m,
      iterationMemory(
        facts({
          iteration: i,
          paths: Array.from({ length: 9 }, (_, k) => `src/module-${k}/file-${i}.ts`),
          summary: `iteration ${i}: ${'did things '.repeat(40)}`,
        }),
      ),
    );
    m = appendMemory(m, { iteration: i, kind: 'gates', text: `gate tests fail: ${'e'.repeat(300)}` });
    m = appendMemory(m, { iteration: i, kind: 'gates', text: `gate static analysis fail: ${'e'.repeat(300)}` });
    if (i % 5 === 0)
      m = appendMemory(
        m,
        memoryFromEvent({
          kind: 'council_round',
          round: i / 5,
          iteration: i,
          trigger: 'interval',
          result: 'REJECTED',
          approve: 0,
          reject: 3,
          threshold: 2,
          votes: [{ member: 0, recorded: 'REJECT', approves: false, reason: 'r'.repeat(300) }],
        }) ?? { iteration: i, kind: 'note', text: '' },
      );
    if (i % 7 === 0) m = appendMemory(m, directiveMemory(i, { text: 'd'.repeat(5000), by: 'bob' }));
  }
  return { ...m, continuity: boundedContinuity('c'.repeat(100_000)), learnings: boundedLearnings('l'.repeat(100_000)) };
}

describe('the memory over a 200-iteration run', () => {
  const m = longRun(200);

  it('keeps at most its entries, the newest, and counts the dropped ones', () => {
    expect(m.entries).toHaveLength(MEMORY_LIMITS.entries);
    expect(m.entries.at(-1)?.iteration).toBe(200);
    expect(m.dropped).toBe(200 + 200 + 40 + 28 - MEMORY_LIMITS.entries); // iterations, merged gate lines, council rounds, directives
    for (const e of m.entries) expect(e.text.length).toBeLessThanOrEqual(MEMORY_LIMITS.entryChars);
  });

  it('stays a valid, bounded part of the state carried across continue-as-new', () => {
    const state = runState({ iteration: 200, generations: 2, memory: m });
    expect(state.memory).toEqual(m);
    // 80 entries of at most 400 characters, the notes and the learnings: under 48 KB whatever the run length.
    expect(JSON.stringify(state.memory).length).toBeLessThan(48_000);
    expect(JSON.stringify(longRun(40).entries).length).toBeLessThanOrEqual(JSON.stringify(m.entries).length + 1000);
  });

  it('renders within the budget, newest first, with a line for the older memory', () => {
    for (const budget of [300, 1000, 4000, 20_000]) {
      const text = renderRunSoFar(m, budget);
      expect(text.length).toBeLessThanOrEqual(budget);
      const its = [...text.matchAll(/^- iteration (\d+):/gm)].map((x) => Number(x[1]));
      expect(its[0]).toBe(200);
      expect([...its].sort((a, b) => b - a)).toEqual(its);
      expect(text.split('\n').at(-1)).toMatch(/^- … \d+ older entries not shown \(iteration \d+ and before\)$/);
    }
  });

  it('the prompt part: the run so far plus bounded notes and learnings', () => {
    const p = promptMemory(m, 4000);
    expect(p?.runSoFar.length).toBeLessThanOrEqual(4000);
    expect(p?.continuity?.length).toBeLessThanOrEqual(MEMORY_LIMITS.continuityChars);
    expect(p?.learnings?.length).toBeLessThanOrEqual(MEMORY_LIMITS.learningsChars);
  });
});

describe('renderRunSoFar', () => {
  it('is empty with a budget of 0 or no entries; the prompt part is null with nothing at all', () => {
    const m = appendMemory(emptyMemory(), iterationMemory(facts()));
    expect(renderRunSoFar(m, 0)).toBe('');
    expect(renderRunSoFar(emptyMemory(), 4000)).toBe('');
    expect(promptMemory(emptyMemory(), 4000)).toBeNull();
    expect(promptMemory({ ...emptyMemory(), continuity: 'notes' }, 4000)).toEqual({ runSoFar: '', continuity: 'notes', learnings: null });
  });

  it('shows everything when it fits, with no "older" line', () => {
    let m = emptyMemory();
    m = appendMemory(m, iterationMemory(facts({ iteration: 1 })));
    m = appendMemory(m, directiveMemory(1, { text: 'Use SQLite.', by: 'alice' }));
    m = appendMemory(m, iterationMemory(facts({ iteration: 2, changed: false })));
    expect(renderRunSoFar(m, 4000)).toBe(
      [
        '- iteration 2: ACT · exit 0 · no change · 1 file(s) vs run start (+10 -2)',
        '- iteration 1: directive from alice: "Use SQLite."',
        '- iteration 1: ACT · exit 0 · changed 1 file(s): src/a.ts (12 line(s)) · 1 file(s) vs run start (+10 -2)',
      ].join('\n'),
    );
  });
});

describe('continuity and learnings bounds', () => {
  it('continuity keeps its beginning and says it was cut', () => {
    const c = boundedContinuity(`# Notes\n${'a'.repeat(10_000)}`);
    expect(c?.startsWith('# Notes\n')).toBe(true);
    expect(c?.endsWith('… (cut: the file is longer)')).toBe(true);
    expect(c?.length).toBeLessThanOrEqual(MEMORY_LIMITS.continuityChars);
    expect(boundedContinuity('  \n ')).toBeNull();
  });

  it('learnings keep their end (the newest lessons), from a line start', () => {
    const text = Array.from({ length: 400 }, (_, i) => `- lesson ${i}`).join('\n');
    const l = boundedLearnings(text);
    expect(l?.startsWith('(older learnings cut)\n- lesson ')).toBe(true);
    expect(l?.endsWith('- lesson 399')).toBe(true);
    expect(l?.length).toBeLessThanOrEqual(MEMORY_LIMITS.learningsChars);
    expect(boundedLearnings('- short')).toBe('- short');
  });
});

describe('rewindMemory', () => {
  const r = { from: 8, to: 4, by: 'alice', reason: 'the ORM was a mistake', savedRef: 'refs/vigil/run/before-rewind-1' };

  it('forgets the iterations set aside and says in one line that they were', () => {
    let m = emptyMemory();
    for (let i = 1; i <= 8; i++) m = appendMemory(m, iterationMemory(facts({ iteration: i })));
    const after = rewindMemory(m, r);
    expect(after.entries.map((e) => e.iteration)).toEqual([1, 2, 3, 4, 4]);
    expect(after.entries.at(-1)).toEqual({
      iteration: 4,
      kind: 'note',
      text: 'rewound by alice from iteration 8 to 4 (the ORM was a mistake): iterations 5-8 set aside; that tree is kept under refs/vigil/run/before-rewind-1',
    });
    expect(renderRunSoFar(after, 4000).split('\n')[0]).toBe(`- iteration 4: ${after.entries.at(-1)?.text}`);
  });

  it('leaves an empty memory (a run from before the memory) empty', () => {
    expect(rewindMemory(emptyMemory(), r)).toEqual(emptyMemory());
  });
});
