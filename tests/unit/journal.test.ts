import { describe, expect, it } from 'vitest';
import { EventEnvelopeSchema, MAX_PENDING_EVENTS, RunEventSchema } from '../../schemas/events.js';
import { IterationRecordSchema, OutcomeSchema, TestRunRecordSchema } from '../../schemas/run.js';
import { ackProjection, appendEvent, emptyJournal, iterationEvent, messageEvent, outcomeEvent } from '../../rules/journal.js';

const outcome = (n: number) => ({ kind: 'outcome' as const, status: 'stopped', exitCode: 0, reason: `r${n}`, iteration: n });

describe('the run journal', () => {
  it('numbers events 1, 2, 3 with the recording execution and time', () => {
    let j = emptyJournal();
    j = appendEvent(j, outcome(1), 'run-a', 't1');
    j = appendEvent(j, outcome(2), 'run-b', 't2');
    expect(j.pending.map((e) => [e.seq, e.runId, e.at])).toEqual([
      [1, 'run-a', 't1'],
      [2, 'run-b', 't2'],
    ]);
    expect(j.nextSeq).toBe(3);
    for (const e of j.pending) expect(EventEnvelopeSchema.safeParse(e).success).toBe(true);
  });

  it('keeps at most MAX_PENDING_EVENTS waiting, dropping (and counting) the oldest', () => {
    let j = emptyJournal();
    for (let i = 1; i <= MAX_PENDING_EVENTS + 3; i++) j = appendEvent(j, outcome(i), 'r', 't');
    expect(j.pending).toHaveLength(MAX_PENDING_EVENTS);
    expect(j.dropped).toBe(3);
    expect(j.pending[0]?.seq).toBe(4);
  });

  it('a projection removes what the store confirmed; a problem keeps everything', () => {
    let j = emptyJournal();
    for (let i = 1; i <= 5; i++) j = appendEvent(j, outcome(i), 'r', 't');
    const down = ackProjection(j, { storedThrough: 0, written: 0, problem: 'connection refused' });
    expect(down.pending).toHaveLength(5);
    expect(down.problem).toBe('connection refused');
    const up = ackProjection(down, { storedThrough: 3, written: 3, problem: null });
    expect(up.pending.map((e) => e.seq)).toEqual([4, 5]);
    expect(up).toMatchObject({ stored: 3, problem: null });
    // A retry of an already stored batch writes nothing and still clears it.
    expect(ackProjection(up, { storedThrough: 5, written: 0, problem: null })).toMatchObject({ pending: [], stored: 3 });
  });

  it('a directive is journaled by its size, never its text', () => {
    const e = messageEvent('input', { directive: 'use the secret key sk-live-123 for payments', by: 'ana' }, 'ana', true);
    expect(e).toEqual({ kind: 'message', name: 'input', by: 'ana', summary: 'directive of 43 characters', accepted: true });
    expect(messageEvent('pause', null, 'signal', false, 'pause: field "reason": expected string')).toMatchObject({
      accepted: false,
      summary: 'refused: pause: field "reason": expected string',
    });
    expect(messageEvent('waive', { item: 'REQ-2', reason: 'later' }, 'ops', true)).toMatchObject({ summary: 'waived REQ-2: later' });
    expect(messageEvent('budget', { usd: 12.5 }, 'ops', true)).toMatchObject({ summary: 'budget set to $12.50' });
  });

  it('an iteration carries the test verdict only when the tests ran on its tree', () => {
    const rec = IterationRecordSchema.parse({
      iteration: 4,
      phase: 'ACT',
      tier: 'development',
      exitCode: 0,
      durationMs: 1200,
      logPath: '/l',
      attempts: 1,
      claimed: true,
      changed: true,
      filesChangedSinceStart: 3,
      treeHash: 'tree-4',
      at: 't',
    });
    const tests = TestRunRecordSchema.parse({
      treeHash: 'tree-4',
      iteration: 4,
      passed: false,
      timedOut: false,
      exitCode: 1,
      logPath: '/t',
      verdict: 'fail',
    });
    const e = iterationEvent(rec, tests);
    expect(e).toMatchObject({ kind: 'iteration', iteration: 4, claimed: true, tests: 'fail', filesChangedSinceStart: 3 });
    expect(iterationEvent(rec, { ...tests, treeHash: 'tree-3' })).toMatchObject({ tests: null });
    expect(RunEventSchema.safeParse(e).success).toBe(true);
  });

  it("a done outcome's event keeps its evidence line for vigil report; any other outcome has none", () => {
    const line = 'evidence: baseline tests 2 of 2 passed (`node --test`), integrity findings 0, gaming findings 0, tree abcdef012345';
    const done = OutcomeSchema.parse({
      status: 'council_approved',
      reason: 'approved',
      exitCode: 0,
      iteration: 4,
      at: 't',
      notes: [line, 'delivered to branch vigil/x'],
    });
    const e = outcomeEvent(done);
    expect(e).toEqual({ kind: 'outcome', status: 'council_approved', exitCode: 0, reason: 'approved', iteration: 4, evidence: line });
    expect(RunEventSchema.parse(e)).toEqual(e);
    // A note that only mentions evidence is not the line; an outcome without notes has no field.
    const stopped = outcomeEvent({ ...done, status: 'stopped', notes: ['the evidence gate was off'] });
    expect(stopped).not.toHaveProperty('evidence');
    expect(outcomeEvent({ ...done, notes: [] })).not.toHaveProperty('evidence');
    // An adversary's long line is clipped to what the event takes.
    expect(RunEventSchema.safeParse(outcomeEvent({ ...done, notes: [`evidence: ${'x'.repeat(5000)}`] })).success).toBe(true);
  });
});
