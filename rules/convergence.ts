/**
 * Convergence tracking (spec §2.10, improved): after each iteration the repository's tree hash is
 * compared with the previous one. Same hash: the no-change counter grows; different: it resets.
 * A bounded ring keeps the most recent hashes for oscillation checks.
 */
import type { ConvergenceState } from '../schemas/run.js';

/**
 * How many recent tree hashes the run remembers (shown by `vigil status` and in the convergence
 * summary). Was the knob convergenceRingSize, which nobody set on purpose: no test set it, no doc
 * spoke of it but its own row, and a longer ring only grows the carried state.
 */
export const CONVERGENCE_RING_SIZE = 6;

export const initialConvergence = (): ConvergenceState => ({
  lastHash: null,
  consecutiveNoChange: 0,
  recentHashes: [],
  doneSignals: 0,
  totalDoneSignals: 0,
});

export function trackConvergence(
  state: ConvergenceState,
  treeHash: string,
  ringSize: number,
): { state: ConvergenceState; changed: boolean } {
  // The first observation is compared with the run-start tree hash, which the workflow stores as
  // the initial `lastHash`; with no previous hash at all, an observation counts as a change.
  const changed = state.lastHash === null || state.lastHash !== treeHash;
  const ring = [...state.recentHashes, treeHash];
  return {
    changed,
    state: {
      ...state,
      lastHash: treeHash,
      consecutiveNoChange: changed ? 0 : state.consecutiveNoChange + 1,
      recentHashes: ring.slice(Math.max(0, ring.length - ringSize)),
    },
  };
}
