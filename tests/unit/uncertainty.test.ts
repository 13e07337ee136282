/**
 * Owns the unit tests of rules/uncertainty.ts (spec §4.1): the seed's nine-case test
 * plan (design §4) rewritten as pure tests of `evaluateUncertainty`, plus the ring, same-round,
 * derived-minimum and exact-N-th-round rules, and the handoff lines of `describeProxies`.
 */
import { describe, expect, it } from 'vitest';
import {
  UNCERTAINTY_RING_SIZE,
  describeProxies,
  evaluateUncertainty,
  initialUncertainty,
  noChangeMin,
  trailingSplitRounds,
  type UncertaintyKnobs,
  type UncertaintyObservation,
  type UncertaintyState,
} from '../../rules/uncertainty.js';

const KNOBS: UncertaintyKnobs = {
  uncertaintyEscalation: true,
  uncertaintyRounds: 2,
  uncertaintyNoChangeMin: 0,
  uncertaintySplitRounds: 2,
  stagnationLimit: 5,
};

const APPROVED = { result: 'APPROVED', approve: 3 };
const SPLIT = { result: 'REJECTED', approve: 1 };
const UNANIMOUS_REJECT = { result: 'REJECTED', approve: 0 };

/** A cold observation: some change, a fresh hash, an approving council. */
function obs(iteration: number, over: Partial<UncertaintyObservation> = {}): UncertaintyObservation {
  return { iteration, consecutiveNoChange: 0, treeHash: `h${iteration}`, verdicts: [APPROVED], ...over };
}

/** P1 and P3 hot, P2 cold (the hash never recurs). */
function p1p3(iteration: number): UncertaintyObservation {
  return obs(iteration, { consecutiveNoChange: 4, verdicts: [APPROVED, SPLIT, SPLIT] });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Feeds observations in order; returns every result. */
function run(observations: UncertaintyObservation[], k: UncertaintyKnobs = KNOBS, start: UncertaintyState = initialUncertainty()) {
  let state = start;
  return observations.map((o) => {
    const r = evaluateUncertainty(deepFreeze(state), o, k);
    state = r.state;
    return r;
  });
}

function withRing(ring: string[], lastRoundIteration = 0): UncertaintyState {
  return { ...initialUncertainty(), ring, lastRoundIteration };
}

describe('initialUncertainty', () => {
  it('starts cold, never escalated, no rounds seen', () => {
    expect(initialUncertainty()).toEqual({
      consecutiveCoOccur: 0,
      escalatedEpisode: false,
      escalatedAtIteration: -1,
      ring: [],
      lastRoundIteration: -1,
      lastProxies: { p1: false, p2: false, p3: false },
    });
    expect(UNCERTAINTY_RING_SIZE).toBe(6);
  });
});

describe('seed test plan (design §4)', () => {
  it('case 1: P1 alone is read but does not escalate', () => {
    const r = evaluateUncertainty(initialUncertainty(), obs(1, { consecutiveNoChange: 4 }), KNOBS);
    expect(r.proxies).toEqual({ p1: true, p2: false, p3: false });
    expect(r.state.lastProxies).toEqual({ p1: true, p2: false, p3: false });
    expect(r.coOccur).toBe(false);
    expect(r.escalate).toBe(false);
  });

  it('case 2: P2 alone is read from the ring (A,B then A) and does not escalate; A,A does not count', () => {
    const r = evaluateUncertainty(withRing(['A', 'B']), obs(1, { treeHash: 'A' }), KNOBS);
    expect(r.proxies).toEqual({ p1: false, p2: true, p3: false });
    expect(r.state.lastProxies.p2).toBe(true);
    expect(r.escalate).toBe(false);

    const repeat = evaluateUncertainty(withRing(['A']), obs(1, { treeHash: 'A' }), KNOBS);
    expect(repeat.proxies.p2).toBe(false);
  });

  it('case 3: P3 alone is read from result/approve (no stored threshold) and does not escalate', () => {
    const r = evaluateUncertainty(initialUncertainty(), obs(1, { verdicts: [APPROVED, SPLIT, SPLIT] }), KNOBS);
    expect(r.proxies).toEqual({ p1: false, p2: false, p3: true });
    expect(r.state.lastProxies.p3).toBe(true);
    expect(r.escalate).toBe(false);
  });

  it('case 4: two proxies co-occurring for N rounds escalate on the N-th round', () => {
    const results = run([p1p3(1), p1p3(2)]);
    expect(results.map((r) => r.coOccur)).toEqual([true, true]);
    expect(results.map((r) => r.escalate)).toEqual([false, true]);
    const last = results[1]!.state;
    expect(last.escalatedEpisode).toBe(true);
    expect(last.escalatedAtIteration).toBe(2);
    expect(last.consecutiveCoOccur).toBe(2);
  });

  it('case 5: a single hot proxy never escalates, however long it stays hot', () => {
    const rounds = Array.from({ length: 30 }, (_, i) => obs(i + 1, { consecutiveNoChange: 10 + i }));
    const results = run(rounds);
    expect(results.every((r) => !r.escalate && !r.coOccur)).toBe(true);
    expect(results.at(-1)!.state.escalatedEpisode).toBe(false);
    expect(results.at(-1)!.state.consecutiveCoOccur).toBe(0);

    const p3Only = run(Array.from({ length: 30 }, (_, i) => obs(i + 1, { verdicts: [SPLIT, SPLIT, SPLIT] })));
    expect(p3Only.some((r) => r.escalate)).toBe(false);
  });

  it('case 6: debounce, no re-fire while the same episode stays hot', () => {
    const results = run([p1p3(1), p1p3(2), p1p3(3), p1p3(4), p1p3(5)]);
    expect(results.map((r) => r.escalate)).toEqual([false, true, false, false, false]);
    const last = results.at(-1)!.state;
    expect(last.escalatedEpisode).toBe(true);
    expect(last.escalatedAtIteration).toBe(2);
    expect(last.consecutiveCoOccur).toBe(5);
  });

  it('case 7: a cleared round re-arms the episode, and a new episode escalates again', () => {
    const results = run([p1p3(1), p1p3(2), obs(3, { consecutiveNoChange: 4 }), p1p3(4), p1p3(5)]);
    expect(results.map((r) => r.escalate)).toEqual([false, true, false, false, true]);
    const cleared = results[2]!.state;
    expect(cleared.escalatedEpisode).toBe(false);
    expect(cleared.consecutiveCoOccur).toBe(0);
    expect(cleared.escalatedAtIteration).toBe(2);
    expect(results[4]!.state.escalatedAtIteration).toBe(5);
  });

  it('case 8: knob off returns the same state object and touches nothing', () => {
    const state = deepFreeze(withRing(['A', 'B'], 7));
    const snapshot = structuredClone(state);
    const off = { ...KNOBS, uncertaintyEscalation: false };
    for (let i = 1; i <= 5; i++) {
      const r = evaluateUncertainty(state, { ...p1p3(7 + i), treeHash: 'A' }, off);
      expect(r.state).toBe(state);
      expect(r.escalate).toBe(false);
      expect(r.coOccur).toBe(false);
      expect(r.proxies).toEqual({ p1: false, p2: false, p3: false });
    }
    expect(state).toEqual(snapshot);
  });

  // Case 9 (perpetual mode degrades to notify-only) tests the ACTION half: how the run consumes
  // the pause it asked for. It is not part of the decision function, so it has no pure test here;
  // it belongs with the workflow's handling of an escalation.
});

describe('same-round re-evaluation', () => {
  it('refreshes lastProxies only: no ring push, no streak advance, no escalation', () => {
    const first = evaluateUncertainty(initialUncertainty(), p1p3(3), KNOBS);
    expect(first.state.consecutiveCoOccur).toBe(1);
    const again = evaluateUncertainty(deepFreeze(first.state), { ...p1p3(3), treeHash: 'other' }, KNOBS);
    expect(again.escalate).toBe(false);
    expect(again.coOccur).toBe(true);
    expect(again.state.ring).toEqual(first.state.ring);
    expect(again.state.consecutiveCoOccur).toBe(1);
    expect(again.state.escalatedEpisode).toBe(false);
    expect(again.state.lastRoundIteration).toBe(3);

    const cooled = evaluateUncertainty(again.state, obs(3), KNOBS);
    expect(cooled.state.lastProxies).toEqual({ p1: false, p2: false, p3: false });
    expect(cooled.state.consecutiveCoOccur).toBe(1);
    expect(cooled.state.ring).toEqual(first.state.ring);
  });

  it('cannot reach the N-th round by repeating an iteration', () => {
    const results = run([p1p3(1), p1p3(1), p1p3(1)]);
    expect(results.some((r) => r.escalate)).toBe(false);
    expect(results.at(-1)!.state.consecutiveCoOccur).toBe(1);
    expect(run([p1p3(1), p1p3(1), p1p3(2)]).map((r) => r.escalate)).toEqual([false, false, true]);
  });

  it('a cold re-evaluation of the same round does not re-arm a latched episode', () => {
    const [, fired] = run([p1p3(1), p1p3(2)]);
    const again = evaluateUncertainty(fired!.state, obs(2), KNOBS);
    expect(again.state.escalatedEpisode).toBe(true);
    expect(again.state.consecutiveCoOccur).toBe(2);
  });
});

describe('P2 oscillation over the ring', () => {
  const hashes = (seq: string[]) => run(seq.map((h, i) => obs(i + 1, { treeHash: h }))).map((r) => r.proxies.p2);

  it('A,A,A never fires', () => {
    expect(hashes(['A', 'A', 'A', 'A'])).toEqual([false, false, false, false]);
  });

  it('A,B,A fires on the return', () => {
    expect(hashes(['A', 'B', 'A'])).toEqual([false, false, true]);
  });

  it('A,B,B does not fire (an immediate repeat is stagnation, not oscillation)', () => {
    expect(hashes(['A', 'B', 'B'])).toEqual([false, false, false]);
  });

  it('uses the ring before this round is pushed', () => {
    const r = evaluateUncertainty(withRing(['A', 'B'], 1), obs(2, { treeHash: 'B' }), KNOBS);
    expect(r.proxies.p2).toBe(false);
    expect(r.state.ring).toEqual(['A', 'B', 'B']);
  });

  it('a null or empty hash is never P2 and is not pushed', () => {
    for (const treeHash of [null, '']) {
      const r = evaluateUncertainty(withRing(['A', 'B'], 1), obs(2, { treeHash }), KNOBS);
      expect(r.proxies.p2).toBe(false);
      expect(r.state.ring).toEqual(['A', 'B']);
      expect(r.state.lastRoundIteration).toBe(2);
    }
  });

  it('keeps only the last 6 hashes, oldest first, so an old state falls out', () => {
    const seq = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'];
    const results = run(seq.map((h, i) => obs(i + 1, { treeHash: h })));
    expect(results.at(-1)!.state.ring).toEqual(['C', 'D', 'E', 'F', 'G', 'H']);
    expect(results.every((r) => r.state.ring.length <= UNCERTAINTY_RING_SIZE)).toBe(true);
    const back = evaluateUncertainty(results.at(-1)!.state, obs(9, { treeHash: 'A' }), KNOBS);
    expect(back.proxies.p2).toBe(false);
    const recent = evaluateUncertainty(results.at(-1)!.state, obs(9, { treeHash: 'C' }), KNOBS);
    expect(recent.proxies.p2).toBe(true);
  });
});

describe('P1 and the no-change minimum', () => {
  it.each([
    [5, 4],
    [4, 3],
    [2, 1],
    [1, 1],
    [0, 1],
  ])('derived: stagnationLimit %i gives max(1, limit - 1) = %i', (stagnationLimit, expected) => {
    expect(noChangeMin({ ...KNOBS, uncertaintyNoChangeMin: 0, stagnationLimit })).toBe(expected);
  });

  it('an explicit minimum wins over the derived one', () => {
    expect(noChangeMin({ ...KNOBS, uncertaintyNoChangeMin: 7, stagnationLimit: 5 })).toBe(7);
  });

  it('fires at the minimum, not one below', () => {
    expect(evaluateUncertainty(initialUncertainty(), obs(1, { consecutiveNoChange: 3 }), KNOBS).proxies.p1).toBe(false);
    expect(evaluateUncertainty(initialUncertainty(), obs(1, { consecutiveNoChange: 4 }), KNOBS).proxies.p1).toBe(true);
  });
});

describe('P3 council split', () => {
  it('counts only the trailing run of REJECTED with at least one approval', () => {
    expect(trailingSplitRounds([])).toBe(0);
    expect(trailingSplitRounds([SPLIT, SPLIT, APPROVED])).toBe(0);
    expect(trailingSplitRounds([SPLIT, UNANIMOUS_REJECT, SPLIT])).toBe(1);
    expect(trailingSplitRounds([APPROVED, SPLIT, SPLIT, SPLIT])).toBe(3);
  });

  it('a unanimous rejection is not a split', () => {
    const r = evaluateUncertainty(initialUncertainty(), obs(1, { verdicts: [UNANIMOUS_REJECT, UNANIMOUS_REJECT] }), KNOBS);
    expect(r.proxies.p3).toBe(false);
  });

  it('needs uncertaintySplitRounds rounds', () => {
    const k3 = { ...KNOBS, uncertaintySplitRounds: 3 };
    expect(evaluateUncertainty(initialUncertainty(), obs(1, { verdicts: [SPLIT, SPLIT] }), k3).proxies.p3).toBe(false);
    expect(evaluateUncertainty(initialUncertainty(), obs(1, { verdicts: [SPLIT, SPLIT, SPLIT] }), k3).proxies.p3).toBe(true);
  });
});

describe('the N-round debounce', () => {
  it.each([1, 2, 3, 5])('with uncertaintyRounds %i escalates at exactly that co-occurring round', (rounds) => {
    const k = { ...KNOBS, uncertaintyRounds: rounds };
    const results = run(
      Array.from({ length: rounds + 2 }, (_, i) => p1p3(i + 1)),
      k,
    );
    expect(results.map((r) => r.escalate)).toEqual(Array.from({ length: rounds + 2 }, (_, i) => i + 1 === rounds));
  });

  it('any two proxies co-occur: P1+P2 and P2+P3 count as well', () => {
    const p1p2 = run([
      obs(1, { treeHash: 'A' }),
      obs(2, { treeHash: 'B' }),
      obs(3, { treeHash: 'A', consecutiveNoChange: 4 }),
      obs(4, { treeHash: 'B', consecutiveNoChange: 5 }),
    ]);
    expect(p1p2.map((r) => r.coOccur)).toEqual([false, false, true, true]);
    expect(p1p2.map((r) => r.escalate)).toEqual([false, false, false, true]);

    const split = [SPLIT, SPLIT];
    const p2p3 = run([
      obs(1, { treeHash: 'A' }),
      obs(2, { treeHash: 'B' }),
      obs(3, { treeHash: 'A', verdicts: split }),
      obs(4, { treeHash: 'B', verdicts: split }),
    ]);
    expect(p2p3.map((r) => r.escalate)).toEqual([false, false, false, true]);
  });

  it('a broken streak starts counting again from zero', () => {
    const results = run([p1p3(1), obs(2), p1p3(3), p1p3(4)]);
    expect(results.map((r) => r.state.consecutiveCoOccur)).toEqual([1, 0, 1, 2]);
    expect(results.map((r) => r.escalate)).toEqual([false, false, false, true]);
  });
});

describe('purity', () => {
  it('never mutates the input state (deep-frozen inputs throw on mutation)', () => {
    const state = deepFreeze({ ...withRing(['A', 'B', 'C', 'D', 'E', 'F'], 1), consecutiveCoOccur: 1 });
    const snapshot = structuredClone(state);
    const r = evaluateUncertainty(state, { ...p1p3(2), treeHash: 'B' }, KNOBS);
    expect(state).toEqual(snapshot);
    expect(r.state).not.toBe(state);
    expect(r.state.ring).not.toBe(state.ring);
    expect(r.state.ring).toEqual(['B', 'C', 'D', 'E', 'F', 'B']);
  });

  it('is deterministic', () => {
    const a = run([p1p3(1), obs(2, { treeHash: 'h1' }), p1p3(3)]);
    const b = run([p1p3(1), obs(2, { treeHash: 'h1' }), p1p3(3)]);
    expect(a).toEqual(b);
  });
});

describe('describeProxies', () => {
  it('gives one line per hot proxy, in P1, P2, P3 order', () => {
    const o = obs(5, { consecutiveNoChange: 4, verdicts: [SPLIT, SPLIT] });
    expect(describeProxies({ p1: true, p2: true, p3: true }, o, KNOBS)).toEqual([
      'no change for 4 iterations (limit 4)',
      'the tree returned to an earlier state (oscillation)',
      'the council split in the last 2 rounds (rejected with at least one approval)',
    ]);
  });

  it('says nothing about cold proxies', () => {
    expect(describeProxies({ p1: false, p2: false, p3: false }, obs(1), KNOBS)).toEqual([]);
    expect(describeProxies({ p1: false, p2: true, p3: false }, obs(1), KNOBS)).toEqual([
      'the tree returned to an earlier state (oscillation)',
    ]);
  });

  it('uses the singular for one iteration or round and the explicit minimum', () => {
    const k = { ...KNOBS, uncertaintyNoChangeMin: 1, uncertaintySplitRounds: 1 };
    const o = obs(1, { consecutiveNoChange: 1, verdicts: [SPLIT] });
    expect(describeProxies({ p1: true, p2: false, p3: true }, o, k)).toEqual([
      'no change for 1 iteration (limit 1)',
      'the council split in the last 1 round (rejected with at least one approval)',
    ]);
  });

  it('describes what evaluateUncertainty found hot', () => {
    const o = p1p3(1);
    const r = evaluateUncertainty(initialUncertainty(), o, KNOBS);
    expect(describeProxies(r.proxies, o, KNOBS)).toHaveLength(2);
  });
});
