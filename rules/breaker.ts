/**
 * Done signals, the circuit breaker and the safety valves (spec §2.10, §2.11).
 *
 * A done signal is a completion claim or a done-phrase in the agent's output. The breaker trips
 * when the tree has not changed for `stagnationLimit` iterations in a row, or after 2 consecutive
 * done signals; a trip forces a council round. After a REJECTED round two valves can stop a run
 * that can neither finish nor progress: stagnation at twice the limit (with the breaker tripped),
 * and the total done signals reaching `doneSignalLimit`.
 */
import type { ConvergenceState } from '../schemas/run.js';

export const CONSECUTIVE_DONE_SIGNALS_TRIP = 2;

export function trackDoneSignal(state: ConvergenceState, doneSignal: boolean): ConvergenceState {
  return {
    ...state,
    doneSignals: doneSignal ? state.doneSignals + 1 : 0,
    totalDoneSignals: state.totalDoneSignals + (doneSignal ? 1 : 0),
  };
}

export type BreakerTrip = 'stagnation' | 'done_signals' | null;

export function breakerTrip(state: ConvergenceState, stagnationLimit: number): BreakerTrip {
  if (state.consecutiveNoChange >= stagnationLimit) return 'stagnation';
  if (state.doneSignals >= CONSECUTIVE_DONE_SIGNALS_TRIP) return 'done_signals';
  return null;
}

export type ValveVerdict = { fire: false } | { fire: true; valve: 'stagnation' | 'done_signal_flood'; reason: string };

/**
 * Checked only after a completion check that did not approve (the council's rejection, or a
 * refusal before it: the evidence gate, a tool gate, the code review, the checklist). The reason
 * names what the run could not get past (no change, or claims without approval; both when both
 * hold) and, when given, what refused the last check.
 */
export function safetyValve(
  state: ConvergenceState,
  trip: BreakerTrip,
  knobs: { stagnationLimit: number; doneSignalLimit: number },
  lastRefusal?: string,
): ValveVerdict {
  const stagnant = trip !== null && state.consecutiveNoChange >= 2 * knobs.stagnationLimit;
  const flooded = state.totalDoneSignals >= knobs.doneSignalLimit;
  if (!stagnant && !flooded) return { fire: false };
  const causes: string[] = [];
  if (stagnant)
    causes.push(`no change for ${state.consecutiveNoChange} iterations in a row (2 x stagnationLimit ${knobs.stagnationLimit})`);
  if (flooded) causes.push(`${state.totalDoneSignals} completion claims without approval (doneSignalLimit ${knobs.doneSignalLimit})`);
  const last = lastRefusal ? `; the last completion check was refused by ${lastRefusal}` : ' and the council did not approve';
  return {
    fire: true,
    valve: stagnant ? 'stagnation' : 'done_signal_flood',
    reason: `stopped without approval: ${causes.join(' and ')}${last}`.slice(0, 1000),
  };
}
