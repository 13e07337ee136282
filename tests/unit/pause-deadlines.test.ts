/**
 * Questions with deadlines, the rule (rules/pause-deadlines.ts): which pause waits for
 * a person, when its reminder, re-route and deadline fall, what is due now, what the deadline does,
 * and the line status shows.
 */
import { describe, expect, it } from 'vitest';
import { defaultKnobs } from '../../schemas/knobs.js';
import { RunStateSchema, type PauseInfo } from '../../schemas/run.js';
import { packValue, unpackValue, type Json } from '../../workflows/carried-state.js';
import { initialRunState } from '../../workflows/initial-state.js';
import {
  deadlineNote,
  deadlinesLine,
  duePauseStep,
  pauseDeadlines,
  pauseTimers,
  spokenDuration,
  waitsForPerson,
  type DeadlineKnobs,
} from '../../rules/pause-deadlines.js';

const H = 3_600_000;
const T0 = Date.parse('2026-11-30T00:00:00.000Z');
const pause = (over: Partial<PauseInfo> = {}): PauseInfo => ({
  reason: 'escalation (dead letter): x',
  by: 'vigil',
  at: new Date(T0).toISOString(),
  ...over,
});
const BOTH = { main: true, reroute: true };
const knobs = (over: Partial<DeadlineKnobs> = {}): DeadlineKnobs => {
  const d = defaultKnobs();
  return {
    escalationRemindAfter: d.escalationRemindAfter,
    escalationRerouteAfter: d.escalationRerouteAfter,
    escalationDeadline: d.escalationDeadline,
    onDeadline: d.onDeadline,
    ...over,
  };
};

describe('the defaults', () => {
  it('remind after 4 h, re-route after 24 h (when a second list is set), no deadline, stop at one', () => {
    expect(knobs()).toEqual({ escalationRemindAfter: 14_400, escalationRerouteAfter: 86_400, escalationDeadline: 0, onDeadline: 'stop' });
  });
});

describe('which pause waits for a person', () => {
  it("Vigil's own pauses do; a person's or a tool's pause does not (nobody is asked)", () => {
    expect(waitsForPerson(pause())).toBe(true);
    expect(waitsForPerson(pause({ by: 'alice' }))).toBe(false);
    expect(waitsForPerson(null)).toBe(false);
    expect(pauseTimers(pause({ by: 'alice' }), knobs({ escalationDeadline: 3600 }), BOTH)).toEqual({
      remindAtMs: null,
      rerouteAtMs: null,
      deadlineAtMs: null,
    });
  });
});

describe('the timers', () => {
  it('count from the pause’s start, each only with its knob and its channels', () => {
    expect(pauseTimers(pause(), knobs({ escalationDeadline: 72 * 3600 }), BOTH)).toEqual({
      remindAtMs: T0 + 4 * H,
      rerouteAtMs: T0 + 24 * H,
      deadlineAtMs: T0 + 72 * H,
    });
    // No second list: no re-route; no channel at all: no reminder; the deadline needs none.
    expect(pauseTimers(pause(), knobs({ escalationDeadline: 3600 }), { main: false, reroute: false })).toEqual({
      remindAtMs: null,
      rerouteAtMs: null,
      deadlineAtMs: T0 + H,
    });
    expect(pauseTimers(pause(), knobs({ escalationRemindAfter: 0 }), BOTH).remindAtMs).toBeNull();
  });

  it('an answer cancels them all', () => {
    const answered = pause({ answered: { by: 'bob', at: new Date(T0 + H).toISOString() } });
    expect(pauseTimers(answered, knobs({ escalationDeadline: 7200 }), BOTH)).toEqual({
      remindAtMs: null,
      rerouteAtMs: null,
      deadlineAtMs: null,
    });
    expect(duePauseStep(answered, knobs({ escalationDeadline: 7200 }), BOTH, T0 + 100 * H)).toEqual({ due: null, nextAtMs: null });
  });
});

describe('what is due', () => {
  const k = knobs({ escalationDeadline: 72 * 3600 });
  it('nothing before the reminder: the next time is the reminder', () => {
    expect(duePauseStep(pause(), k, BOTH, T0 + H)).toEqual({ due: null, nextAtMs: T0 + 4 * H });
  });
  it('the reminder once, then the re-route once, then the deadline', () => {
    expect(duePauseStep(pause(), k, BOTH, T0 + 4 * H).due).toEqual({ kind: 'remind' });
    const reminded = pause({ reminded: new Date(T0 + 4 * H).toISOString() });
    expect(duePauseStep(reminded, k, BOTH, T0 + 5 * H)).toEqual({ due: null, nextAtMs: T0 + 24 * H });
    expect(duePauseStep(reminded, k, BOTH, T0 + 24 * H).due).toEqual({ kind: 'reroute' });
    const rerouted = pause({ reminded: reminded.reminded, rerouted: new Date(T0 + 24 * H).toISOString() });
    expect(duePauseStep(rerouted, k, BOTH, T0 + 30 * H)).toEqual({ due: null, nextAtMs: T0 + 72 * H });
    expect(duePauseStep(rerouted, k, BOTH, T0 + 72 * H).due).toEqual({
      kind: 'deadline',
      action: 'stop',
      note: 'nobody answered in 72 h: stopped',
    });
  });
  it('a worker that was down past several times catches up in order, the reminder first', () => {
    expect(duePauseStep(pause(), k, BOTH, T0 + 100 * H).due).toEqual({ kind: 'remind' });
  });
  it('with no deadline and everything sent there is nothing left to time', () => {
    const sent = pause({ reminded: 'x', rerouted: 'y' });
    expect(duePauseStep(sent, knobs(), BOTH, T0 + 1000 * H)).toEqual({ due: null, nextAtMs: null });
  });
  it('a pause that does not wait for a person has nothing to time, deadline or not', () => {
    expect(duePauseStep(pause({ by: 'alice' }), k, BOTH, T0 + 100 * H)).toEqual({ due: null, nextAtMs: null });
    expect(duePauseStep(null, k, BOTH, T0)).toEqual({ due: null, nextAtMs: null });
  });
});

describe('the deadline', () => {
  const at = T0 + 72 * H;
  const sent = { reminded: 'x', rerouted: 'y' };
  it('continue lifts the pause, and says nobody answered', () => {
    expect(duePauseStep(pause(sent), knobs({ escalationDeadline: 72 * 3600, onDeadline: 'continue' }), BOTH, at).due).toEqual({
      kind: 'deadline',
      action: 'continue',
      note: 'nobody answered in 72 h: continued without an answer',
    });
  });
  it("default-answer takes the agent's default answer", () => {
    const k = knobs({ escalationDeadline: 72 * 3600, onDeadline: 'default-answer' });
    expect(duePauseStep(pause({ ...sent, defaultAnswer: 'use sqlite' }), k, BOTH, at).due).toEqual({
      kind: 'deadline',
      action: 'default-answer',
      note: "nobody answered in 72 h: continued with the agent's default answer",
    });
  });
  it('default-answer without a default answer stops: nobody said what to do (the adversarial case)', () => {
    const k = knobs({ escalationDeadline: 72 * 3600, onDeadline: 'default-answer' });
    const step = duePauseStep(pause(sent), k, BOTH, at).due;
    expect(step).toMatchObject({ kind: 'deadline', action: 'stop' });
    expect(deadlineNote(k, pause())).toMatch(/stopped \(onDeadline is default-answer, but the question carried no default answer\)/);
  });
});

describe('what status shows', () => {
  it('the times, and a line a person reads: "reminder sent 2 h ago; re-routed in 22 h; stops in 70 h"', () => {
    const k = knobs({ escalationDeadline: 72 * 3600 });
    const p = pause({ reminded: new Date(T0 + 4 * H).toISOString() });
    const d = pauseDeadlines(p, k, BOTH);
    expect(d).toEqual({
      remindAt: new Date(T0 + 4 * H).toISOString(),
      rerouteAt: new Date(T0 + 24 * H).toISOString(),
      deadlineAt: new Date(T0 + 72 * H).toISOString(),
      onDeadline: 'stop',
      reminded: p.reminded,
      rerouted: null,
      answered: null,
    });
    expect(deadlinesLine(d, T0 + 6 * H)).toBe('reminder sent 2 h ago; re-routed in 18 h; stops in 66 h');
    expect(deadlinesLine(pauseDeadlines(pause(), knobs(), { main: true, reroute: false }), T0)).toBe('reminder in 4 h');
    expect(deadlinesLine(pauseDeadlines(pause({ answered: { by: 'bob', at: 'x' } }), k, BOTH), T0)).toBe(
      'answered by bob; no reminder or deadline',
    );
    expect(pauseDeadlines(pause({ by: 'alice' }), k, BOTH)).toBeNull();
    expect(deadlinesLine(null, T0)).toBe('');
  });
  it('durations as a person says them', () => {
    expect([45, 600, 7200, 72 * 3600, 30 * 86_400].map(spokenDuration)).toEqual(['45 s', '10 min', '2 h', '72 h', '30 d']);
  });
});

describe('continue-as-new', () => {
  it('carries the pause with its start and what was sent: the next execution keeps every time and sends nothing twice', () => {
    const p = pause({ reminded: new Date(T0 + 4 * H).toISOString(), defaultAnswer: 'use sqlite' });
    const state = { ...initialRunState(T0), pause: p, deadlineNotes: ['nobody answered in 3 s: continued without an answer'] };
    const carried = RunStateSchema.parse(unpackValue(packValue(RunStateSchema.parse(state) as unknown as Json)));
    expect(carried.pause).toEqual(p);
    expect(carried.deadlineNotes).toEqual(state.deadlineNotes);
    const k = knobs({ escalationDeadline: 72 * 3600 });
    expect(duePauseStep(carried.pause, k, BOTH, T0 + 5 * H)).toEqual(duePauseStep(p, k, BOTH, T0 + 5 * H));
    expect(duePauseStep(carried.pause, k, BOTH, T0 + 5 * H).nextAtMs).toBe(T0 + 24 * H);
  });
});
