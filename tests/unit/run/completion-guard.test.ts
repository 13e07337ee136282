/**
 * The completion guards before the council, without a server (tests/unit/run/support.ts): a tree
 * that differs in nothing from the run start, and a claim naming files the diff does not hold,
 * are refused before anything is spent on them; a check a message interrupted is held.
 */
import { describe, expect, it } from 'vitest';
import type { RunState } from '../../../schemas/run.js';
import { holdClaim, refuseEmptyDiff, refuseFalseClaim } from '../../../workflows/run/completion.js';
import { testRun } from './support.js';

const changed = (files: number) => (s: RunState) => {
  s.iteration = 4;
  s.recentIterations = [{ filesChangedSinceStart: files } as RunState['recentIterations'][number]];
};

describe('the completion guards, server-less', () => {
  it('refuses a claim on a tree that changed nothing since the run started', async () => {
    const { run, seen } = testRun({ state: changed(0) });
    const refused = refuseEmptyDiff(run, 'claim');
    expect(refused).not.toBeNull();
    expect(await refused).toBeNull(); // refused, the run goes on (no safety valve tripped)
    expect(run.state.lastEvidence).toMatchObject({ iteration: 4, pass: false, filesChanged: 0 });
    expect(run.state.lastFindings).toContain('nothing changed since the run started');
    expect(run.state.checks).toMatchObject({ refused: 1, byCause: { evidence: 1 }, last: { iteration: 4 } });
    expect(seen.activities).toEqual([]);
  });

  it('lets a tree with changes through to the judges (control)', () => {
    const { run } = testRun({ state: changed(3) });
    expect(refuseEmptyDiff(run, 'claim')).toBeNull();
    expect(run.state.lastEvidence).toBeNull();
  });

  it('refuses a claim that names files the diff does not hold, naming them', async () => {
    const { run, seen } = testRun({ state: changed(2) });
    run.judging.falseClaim = { iteration: 4, paths: ['src/never-touched.ts'] };
    const refused = refuseFalseClaim(run, 'claim');
    expect(refused).not.toBeNull();
    expect(await refused).toBeNull();
    expect(run.state.lastFindings).toContain('src/never-touched.ts');
    expect(run.state.lastEvidence).toMatchObject({ pass: false, filesChanged: 2 });
    expect(seen.activities).toEqual([]);
  });

  it("leaves a person's forced review, and a claim of an earlier iteration, to the judges", () => {
    const { run } = testRun({ state: changed(2) });
    run.judging.falseClaim = { iteration: 4, paths: ['src/never-touched.ts'] };
    expect(refuseFalseClaim(run, 'forced')).toBeNull();
    run.judging.falseClaim = { iteration: 3, paths: ['src/never-touched.ts'] };
    expect(refuseFalseClaim(run, 'claim')).toBeNull();
  });

  it('holds a claim whose check a message interrupted, for the next boundary', () => {
    const { run } = testRun({ state: changed(2) });
    holdClaim(run, 'claim');
    expect(run.state.council.heldClaim).toEqual({ trigger: 'claim', iteration: 4 });
    holdClaim(run, 'forced');
    expect(run.state.council.heldClaim).toEqual({ trigger: 'claim', iteration: 4 });
  });
});
