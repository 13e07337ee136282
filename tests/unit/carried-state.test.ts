/**
 * Owns the unit tests of workflows/carried-state.ts: the run state a continue-as-new carries is
 * packed (repeats written once) and unpacks to exactly what was packed, for any JSON value and
 * for a run's state with its 50 rewind snapshots, at under half the size; and a hostile
 * packed input (a bad or forward reference, a value that would unpack to millions of values) is
 * refused with a clear error instead of looping or exhausting memory.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunStateSchema, type RunState } from '../../schemas/run.js';
import { packValue, unpackValue, type Json } from '../../workflows/carried-state.js';
import { addCheckpoint, checkpointRef, sealCheckpoint } from '../../rules/checkpoints.js';
import { sha256Hex } from '../../rules/sha256.js';
import { runState } from '../support/run-state.js';

const roundTrip = (v: Json): unknown => unpackValue(JSON.parse(JSON.stringify(packValue(v))) as { table: unknown[]; value: unknown });

/** The state of a run of `n` iterations of default knobs, each changing the tree: what the loop keeps of them, checkpoints sealed as it seals them. */
function longRunState(n: number): RunState {
  const GATES = ['static_analysis', 'secret_scan', 'tests', 'mock_integrity', 'test_mutation', 'doc_coverage', 'code_review'] as const;
  let state = runState();
  const hashes: string[] = [];
  for (let i = 1; i <= n; i++) {
    const tree = sha256Hex(`tree ${i}`).slice(0, 40);
    hashes.push(tree);
    const ring = hashes.slice(-6);
    state = RunStateSchema.parse({
      ...state,
      iteration: i,
      convergence: { ...state.convergence, lastHash: tree, recentHashes: ring },
      uncertainty: { ...state.uncertainty, ring, lastRoundIteration: i - (i % 5) },
      gates: {
        ...state.gates,
        lastTree: tree,
        tracks: Object.fromEntries(GATES.map((g) => [g, { passTree: g === 'tests' ? null : tree }])),
      },
      lastTests: {
        treeHash: tree,
        iteration: i,
        passed: false,
        timedOut: false,
        exitCode: 0,
        logPath: '',
        failures: null,
        runner: 'none',
        verdict: 'inconclusive',
        reason: 'no test command configured and no test runner found in the repository',
      },
      recentIterations: [
        ...state.recentIterations,
        {
          iteration: i,
          phase: 'REASON',
          tier: 'fast',
          exitCode: 0,
          durationMs: 10,
          logPath: `/tmp/repo/.vigil/runs/r/iteration-${String(i).padStart(4, '0')}.log`,
          attempts: 1,
          claimed: false,
          changed: true,
          filesChangedSinceStart: 1,
          treeHash: tree,
          at: new Date(i * 1000).toISOString(),
        },
      ].slice(-20),
    });
    state.checkpoints.list = addCheckpoint(
      sealCheckpoint(state.checkpoints.list, { ...state, iteration: i - 1 }),
      {
        iteration: i,
        commit: sha256Hex(`commit ${i}`).slice(0, 40),
        tree,
        ref: checkpointRef('r', i),
        at: new Date(i * 1000).toISOString(),
        filesChanged: 1,
        filesSinceStart: 1,
        exitCode: 0,
        tests: null,
        verdict: null,
        snapshot: null,
      },
      50,
    );
  }
  return RunStateSchema.parse(state);
}

describe('packValue / unpackValue', () => {
  it('unpack what they packed, for any JSON value, strings with the mark included', () => {
    const marked = fc
      .oneof(fc.string(), fc.constantFrom('~', '~~', '~0', '~1f', '~~~x', '~zzzzzzzzz', `~${'a'.repeat(30)}`))
      .map((s) => (s.length % 2 ? `~${s}` : s));
    const json = fc.letrec<{ v: Json }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        marked,
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('v'), { maxLength: 6 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('v'), { maxKeys: 5 }),
      ),
    })).v;
    // Repeats, so that the table is used: the same values several times over.
    fc.assert(
      fc.property(json, fc.array(json, { maxLength: 4 }), (v, more) => {
        const value: Json = { a: v, b: [v, ...more, v], c: { d: more, e: v } };
        expect(roundTrip(value)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
    expect(roundTrip({ p: '__proto__', __proto__x: 1, k: ['~', '~~', '~0'] })).toEqual({
      p: '__proto__',
      __proto__x: 1,
      k: ['~', '~~', '~0'],
    });
  });

  it('write a repeated string or record once, and leave short or single values as they are', () => {
    const hash = 'a'.repeat(40);
    const track = { consecutiveFailures: 0, lastReason: null, sameReason: 0, passTree: hash };
    const p = packValue({ x: hash, y: [hash, hash], t1: track, t2: { ...track }, once: 'b'.repeat(40), short: 'ok', n: 3 });
    expect(p.table).toEqual([hash, { consecutiveFailures: 0, lastReason: null, sameReason: 0, passTree: '~0' }]);
    expect(p.value).toEqual({ x: '~0', y: ['~0', '~0'], t1: '~1', t2: '~1', once: 'b'.repeat(40), short: 'ok', n: 3 });
  });

  it('unpack to objects that share nothing', () => {
    const track = { passTree: 'a'.repeat(40), reasons: ['x'.repeat(30)] };
    const out = roundTrip({ t1: track, t2: track }) as { t1: typeof track; t2: typeof track };
    out.t1.reasons.push('changed');
    out.t1.passTree = 'b';
    expect(out.t2).toEqual(track);
  });

  it("pack a long run's state, 50 rewind snapshots included, to under half its size and unpack it to the same state", () => {
    const state = longRunState(100);
    expect(state.checkpoints.list).toHaveLength(50);
    expect(state.checkpoints.list.filter((c) => c.snapshot !== null)).toHaveLength(49);
    const packed = packValue(state as unknown as Json);
    const plain = JSON.stringify(state).length;
    expect(JSON.stringify(packed).length).toBeLessThan(plain * 0.5);
    expect(RunStateSchema.parse(roundTrip(state as unknown as Json))).toEqual(state);
  });

  it('carry a held completion claim to the next execution; a state carried from before held claims has none', () => {
    const base = longRunState(5);
    const held = RunStateSchema.parse({ ...base, council: { ...base.council, heldClaim: { trigger: 'claim', iteration: 5 } } });
    expect(RunStateSchema.parse(roundTrip(held as unknown as Json)).council.heldClaim).toEqual({ trigger: 'claim', iteration: 5 });
    const { heldClaim: _gone, ...older } = base.council;
    expect(RunStateSchema.parse(roundTrip({ ...base, council: older } as unknown as Json)).council.heldClaim).toBeNull();
    // A forced review is not held (it stays requested on its own): the schema has no such trigger.
    expect(
      RunStateSchema.safeParse({ ...base, council: { ...base.council, heldClaim: { trigger: 'forced', iteration: 5 } } }).success,
    ).toBe(false);
  });

  it('refuse a bad reference, a reference to a later entry (no loops) and an input that unpacks to millions of values', () => {
    expect(() => unpackValue({ table: [], value: '~0' })).toThrow(/bad reference "~0"/);
    expect(() => unpackValue({ table: ['x'], value: '~-1' })).toThrow(/bad reference/);
    expect(() => unpackValue({ table: ['x'], value: ['~1'] })).toThrow(/bad reference/);
    expect(() => unpackValue({ table: ['~0'], value: '~0' })).toThrow(/bad reference/); // itself
    expect(() => unpackValue({ table: ['~1', 'x'], value: '~0' })).toThrow(/bad reference/); // a later one
    // Each entry twice the one before: 2^40 values from 40 entries.
    const bomb = Array.from({ length: 40 }, (_, i) => (i === 0 ? 'x' : [`~${(i - 1).toString(36)}`, `~${(i - 1).toString(36)}`]));
    expect(() => unpackValue({ table: bomb, value: `~${(39).toString(36)}` })).toThrow(/more than 4000000 values/);
    // Anything else is a value as it is (what it means is for the schema to say).
    expect(unpackValue({ table: [], value: { a: [1, true, null, 'x'] } })).toEqual({ a: [1, true, null, 'x'] });
  });
});
