/**
 * Uncertainty-gated escalation, the decision half (spec §4.1; seed design "split DECISION from
 * ACTION"). Owns the three stuck-signal proxies, their 2-of-3 co-occurrence rule, the N-round
 * debounce, the once-per-episode latch and its re-arm, and the carried `UncertaintyState` (streak,
 * episode flag, bounded tree-hash ring, last evaluated round, last proxies). The action half
 * (handoff document, notification, signal marker, pause) belongs to the workflow.
 *
 * Proxies, evaluated once per round (= one loop iteration):
 *   P1 no change:   `consecutiveNoChange >= noChangeMin(k)`; the minimum defaults to
 *                   `max(1, stagnationLimit - 1)`, one short of the circuit breaker.
 *   P2 oscillation: the tree hash is non-empty, differs from the ring's newest entry and appears
 *                   earlier in the ring (the ring BEFORE this round's push): A,B,A fires, A,A,A
 *                   never does (an immediate repeat is already P1).
 *   P3 split:       the trailing run of council verdicts that were REJECTED with at least one
 *                   approval is at least `uncertaintySplitRounds` long.
 * Escalate when at least two proxies are hot for `uncertaintyRounds` consecutive rounds, once per
 * episode; a round without co-occurrence resets the streak and re-arms the episode. Re-evaluating
 * the same iteration only refreshes `lastProxies`. Knob off: the state is returned untouched.
 *
 * Pure: no clocks, randomness, environment or I/O; the input state is never mutated.
 */

export const UNCERTAINTY_RING_SIZE = 6;

export interface Proxies {
  p1: boolean;
  p2: boolean;
  p3: boolean;
}

export interface UncertaintyState {
  consecutiveCoOccur: number;
  escalatedEpisode: boolean;
  /** Iteration of the latest escalation; -1 when it never escalated. */
  escalatedAtIteration: number;
  /** The most recent tree hashes, oldest first, at most UNCERTAINTY_RING_SIZE. */
  ring: string[];
  /** The last evaluated iteration; -1 initially. */
  lastRoundIteration: number;
  lastProxies: Proxies;
}

const COLD: Proxies = { p1: false, p2: false, p3: false };

export function initialUncertainty(): UncertaintyState {
  return {
    consecutiveCoOccur: 0,
    escalatedEpisode: false,
    escalatedAtIteration: -1,
    ring: [],
    lastRoundIteration: -1,
    lastProxies: { ...COLD },
  };
}

export interface UncertaintyObservation {
  iteration: number;
  consecutiveNoChange: number;
  treeHash: string | null;
  /** Council verdict history, oldest first. */
  verdicts: readonly { result: string; approve: number }[];
}

export interface UncertaintyKnobs {
  uncertaintyEscalation: boolean;
  uncertaintyRounds: number;
  /** 0 = derived: max(1, stagnationLimit - 1). */
  uncertaintyNoChangeMin: number;
  uncertaintySplitRounds: number;
  stagnationLimit: number;
}

export function noChangeMin(k: UncertaintyKnobs): number {
  return k.uncertaintyNoChangeMin > 0 ? k.uncertaintyNoChangeMin : Math.max(1, k.stagnationLimit - 1);
}

/** Length of the trailing run of split rounds: REJECTED with at least one approval. */
export function trailingSplitRounds(verdicts: UncertaintyObservation['verdicts']): number {
  let run = 0;
  for (let i = verdicts.length - 1; i >= 0; i--) {
    const v = verdicts[i];
    if (v === undefined || v.result !== 'REJECTED' || !(v.approve >= 1)) break;
    run++;
  }
  return run;
}

function proxiesOf(ring: readonly string[], obs: UncertaintyObservation, k: UncertaintyKnobs): Proxies {
  const hash = obs.treeHash;
  const p2 = hash !== null && hash !== '' && ring[ring.length - 1] !== hash && ring.slice(0, -1).includes(hash);
  return {
    p1: obs.consecutiveNoChange >= noChangeMin(k),
    p2,
    p3: trailingSplitRounds(obs.verdicts) >= k.uncertaintySplitRounds,
  };
}

export function evaluateUncertainty(
  state: UncertaintyState,
  obs: UncertaintyObservation,
  k: UncertaintyKnobs,
): { state: UncertaintyState; escalate: boolean; proxies: Proxies; coOccur: boolean } {
  if (!k.uncertaintyEscalation) return { state, escalate: false, proxies: { ...COLD }, coOccur: false };

  const proxies = proxiesOf(state.ring, obs, k);
  const coOccur = Number(proxies.p1) + Number(proxies.p2) + Number(proxies.p3) >= 2;

  if (obs.iteration === state.lastRoundIteration) {
    // Same round evaluated again: refresh what was seen, advance nothing.
    return { state: { ...state, ring: [...state.ring], lastProxies: { ...proxies } }, escalate: false, proxies, coOccur };
  }

  const pushed = obs.treeHash !== null && obs.treeHash !== '' ? [...state.ring, obs.treeHash] : [...state.ring];
  const ring = pushed.slice(Math.max(0, pushed.length - UNCERTAINTY_RING_SIZE));

  let consecutiveCoOccur: number;
  let escalatedEpisode = state.escalatedEpisode;
  let escalatedAtIteration = state.escalatedAtIteration;
  let escalate = false;
  if (coOccur) {
    consecutiveCoOccur = state.consecutiveCoOccur + 1;
    if (consecutiveCoOccur >= k.uncertaintyRounds && !escalatedEpisode) {
      escalate = true;
      escalatedEpisode = true;
      escalatedAtIteration = obs.iteration;
    }
  } else {
    // A proxy cleared: the episode is over, and a new one may escalate again.
    consecutiveCoOccur = 0;
    escalatedEpisode = false;
  }

  return {
    state: {
      consecutiveCoOccur,
      escalatedEpisode,
      escalatedAtIteration,
      ring,
      lastRoundIteration: obs.iteration,
      lastProxies: { ...proxies },
    },
    escalate,
    proxies,
    coOccur,
  };
}

/** One human line per hot proxy, for handoff documents and log lines. */
export function describeProxies(proxies: Proxies, obs: UncertaintyObservation, k: UncertaintyKnobs): string[] {
  const lines: string[] = [];
  if (proxies.p1) {
    const n = obs.consecutiveNoChange;
    lines.push(`no change for ${n} iteration${n === 1 ? '' : 's'} (limit ${noChangeMin(k)})`);
  }
  if (proxies.p2) lines.push('the tree returned to an earlier state (oscillation)');
  if (proxies.p3) {
    const n = trailingSplitRounds(obs.verdicts);
    lines.push(`the council split in the last ${n} round${n === 1 ? '' : 's'} (rejected with at least one approval)`);
  }
  return lines;
}
