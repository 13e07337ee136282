import { describe, expect, it } from 'vitest';
import type { ChangeMark, ChecklistItem, ChecklistState, ReviewRecord } from '../../schemas/gates.js';
import type { Verdict } from '../../schemas/run.js';
import {
  advanceMark,
  earlyCheckDue,
  flaggedTexts,
  itemsToRecheck,
  MARK_PATHS,
  markTree,
  named,
  isProductPath,
  reviewDue,
  reviewStands,
  stepPaths,
} from '../../rules/lean-rounds.js';

const mark = (over: Partial<ChangeMark> = {}): ChangeMark => ({
  tree: 't1',
  iteration: 3,
  files: ['notes.txt', 'src/app.ts'],
  since: [],
  head: 't1',
  ...over,
});

const review = (over: Partial<ReviewRecord> = {}): ReviewRecord => ({
  round: 1,
  iteration: 3,
  treeHash: 't1',
  reviewers: [
    {
      reviewer: 'correctness',
      verdict: 'PASS',
      blocking: false,
      counts: { critical: 0, high: 0, medium: 0, low: 0 },
      findings: [],
      logPath: '',
    },
  ],
  devilsAdvocate: null,
  result: 'pass',
  reason: 'no blocking finding',
  mergeability: 90,
  rerun: false,
  at: '2026-11-27T00:00:00Z',
  ...over,
});

const checklist = (
  status: Record<string, 'passing' | 'failing' | 'unverified'>,
  items: ChecklistItem[] = [
    { id: 'REQ-1', title: 'notes.txt has the lines', priority: 'critical', verify: 'read notes.txt' },
    { id: 'REQ-2', title: 'src/app.ts exports main', priority: 'high', verify: '' },
  ],
): ChecklistState => ({
  items,
  heldOut: [],
  source: 'agent',
  status: Object.fromEntries(Object.entries(status).map(([id, s]) => [id, { status: s, evidence: '', iteration: 3 }])),
  waivers: [],
});

describe('a mark follows the changes since its tree', () => {
  it('accumulates the paths of an unbroken chain of inspections', () => {
    let m: ChangeMark | null = markTree('t1', 3, ['notes.txt']);
    m = advanceMark(m, { from: 't1', to: 't2', paths: ['notes.txt'] });
    m = advanceMark(m, { from: 't2', to: 't3', paths: ['src/app.ts', 'notes.txt'] });
    expect(m).toEqual({ tree: 't1', iteration: 3, files: ['notes.txt'], since: ['notes.txt', 'src/app.ts'], head: 't3' });
  });

  it('counts nothing for an inspection of the same tree, and nothing at all once back on the marked tree', () => {
    const m = advanceMark(markTree('t1', 3, []), { from: 't1', to: 't2', paths: ['a.ts'] });
    expect(advanceMark(m, { from: 't2', to: 't2', paths: [] })).toBe(m);
    expect(advanceMark(m, { from: 't2', to: 't1', paths: ['a.ts'] })?.since).toEqual([]);
  });

  it('becomes unknown when the chain breaks, the paths are not listed in full, or there are too many', () => {
    const m = markTree('t1', 3, []);
    expect(advanceMark(m, { from: 'elsewhere', to: 't2', paths: ['a.ts'] })?.since).toBeNull();
    expect(advanceMark(m, { from: 't1', to: 't2', paths: null })?.since).toBeNull();
    const many = Array.from({ length: MARK_PATHS + 1 }, (_, i) => `f${i}.ts`);
    expect(advanceMark(m, { from: 't1', to: 't2', paths: many })?.since).toBeNull();
    // Unknown stays unknown, whatever follows.
    const lost = advanceMark(m, { from: 't1', to: 't2', paths: null });
    expect(advanceMark(lost, { from: 't2', to: 't3', paths: ['b.ts'] })?.since).toBeNull();
    expect(advanceMark(null, { from: 't1', to: 't2', paths: [] })).toBeNull();
  });

  it('takes an inspection’s paths only when it listed every changed file', () => {
    expect(stepPaths({ files: 2, paths: ['a', 'b'] })).toEqual(['a', 'b']);
    expect(stepPaths({ files: 60, paths: ['a'] })).toBeNull();
    expect(stepPaths(null)).toBeNull();
  });

  it('names a file by its path, or by a base name with an extension', () => {
    expect(named('src/app.ts', ['look at src/app.ts line 3'])).toBe(true);
    expect(named('src/app.ts', ['app.ts throws'])).toBe(true);
    expect(named('src/Makefile', ['the Makefile target'])).toBe(false);
    expect(named('notes.txt', ['nothing here'])).toBe(false);
  });
});

describe('the early check convenes only on a change that could flip a verdict', () => {
  it('convenes without a round, or when the changes are not known', () => {
    expect(earlyCheckDue(null, []).again).toBe(true);
    expect(earlyCheckDue(mark({ since: null }), []).again).toBe(true);
    expect(earlyCheckDue(mark({ files: null, since: ['notes.txt'] }), []).again).toBe(true);
  });

  it('does not convene when nothing changed, or only unflagged files the round saw', () => {
    expect(earlyCheckDue(mark({ since: [] }), [])).toEqual({ again: false, why: 'nothing changed since the round at iteration 3' });
    const v = earlyCheckDue(mark({ since: ['notes.txt'] }), ['member says reject']);
    expect(v.again).toBe(false);
    expect(v.why).toContain('touch no new, flagged or open checklist file');
  });

  it('convenes for a new file, or a change to a flagged or open checklist file', () => {
    expect(earlyCheckDue(mark({ since: ['src/new.ts'] }), []).why).toBe('new file(s) since the round at iteration 3: src/new.ts');
    expect(earlyCheckDue(mark({ since: ['src/app.ts'] }), ['src/app.ts: the handler ignores errors']).again).toBe(true);
  });

  it('reads the flags from the round’s reasons, the review’s findings and the open checklist items only', () => {
    const verdict = { votes: [{ reason: 'notes.txt misses line 4' }], devilsAdvocate: null } as unknown as Verdict;
    const r = review({ reviewers: [{ ...review().reviewers[0]!, findings: ['[High] src/app.ts:3 unchecked input'] }] });
    const texts = flaggedTexts(verdict, r, checklist({ 'REQ-1': 'passing', 'REQ-2': 'failing' }));
    expect(texts).toEqual(['notes.txt misses line 4', '[High] src/app.ts:3 unchecked input', 'src/app.ts exports main ']);
    // A passing item's file is no flag.
    expect(flaggedTexts(null, null, checklist({ 'REQ-1': 'passing', 'REQ-2': 'passing' }))).toEqual([]);
  });
});

describe('a passing review stands for a tree that changed only in reviewed, unflagged files', () => {
  it('stands for its own tree, and for later changes to files it saw that nobody flagged', () => {
    expect(reviewStands(review(), mark(), 't1').again).toBe(false);
    const v = reviewStands(review(), mark({ since: ['notes.txt'], head: 't2' }), 't2');
    expect(v).toEqual({
      again: false,
      why: 'review round 1 stands: the changes since review round 1 (iteration 3) (notes.txt) touch only reviewed files nobody flagged',
    });
  });

  it('is asked again for a new file, a flagged file, unknown changes, another tree or a review that did not pass', () => {
    expect(reviewStands(review(), mark({ since: ['src/new.ts'], head: 't2' }), 't2').why).toContain('new file(s)');
    const flagged = review({ reviewers: [{ ...review().reviewers[0]!, findings: ['[Medium] notes.txt: typo'] }] });
    expect(reviewStands(flagged, mark({ since: ['notes.txt'], head: 't2' }), 't2').why).toContain('flagged file(s): notes.txt');
    expect(reviewStands(review(), mark({ since: null, head: 't2' }), 't2').again).toBe(true);
    expect(reviewStands(review(), mark({ since: ['notes.txt'], head: 't2' }), 't3').again).toBe(true);
    expect(reviewStands(review(), mark({ tree: 't0', since: ['notes.txt'], head: 't2' }), 't2').again).toBe(true);
    expect(reviewStands(review({ result: 'blocked' }), mark({ head: 't2' }), 't2').again).toBe(true);
    expect(reviewStands(null, mark(), 't1').again).toBe(true);
  });
});

describe('judges see what changed: a passing review stands only while the product code is the one reviewed', () => {
  it('product code is what is neither a test nor documentation', () => {
    for (const p of ['src/app.ts', 'gap.py', 'package.json', 'lib/x.go']) expect(isProductPath(p), p).toBe(true);
    for (const p of ['notes.txt', 'README.md', 'docs/guide.html', 'tests/test_gap.py', 'src/a.test.ts', 'LICENSE', 'CHANGELOG.md'])
      expect(isProductPath(p), p).toBe(false);
  });

  it('adversary: product code changed since the review passed is reviewed again, as the delta from the reviewed tree', () => {
    // Under the rule before it (reviewStands), this change to a reviewed, unflagged file let the review stand.
    expect(reviewStands(review(), mark({ since: ['src/app.ts'], head: 't2' }), 't2').again).toBe(false);
    expect(reviewDue(review(), mark({ since: ['src/app.ts'], head: 't2' }), 't2', false)).toEqual({
      kind: 'delta',
      why: 'product code changed since review round 1 (iteration 3): src/app.ts',
    });
    expect(reviewDue(review(), mark({ since: ['notes.txt', 'src/new.ts'], head: 't2' }), 't2', false).kind).toBe('delta');
    const flagged = review({ reviewers: [{ ...review().reviewers[0]!, findings: ['[Medium] notes.txt: typo'] }] });
    expect(reviewDue(flagged, mark({ since: ['notes.txt'], head: 't2' }), 't2', false).kind).toBe('delta');
  });

  it('honest: the review stands for its own tree and for changes to docs or tests alone', () => {
    expect(reviewDue(review(), mark(), 't1', false)).toEqual({ kind: 'stands', why: 'this tree had review round 1' });
    expect(reviewDue(review(), mark({ since: ['notes.txt', 'tests/test_app.py'], head: 't2' }), 't2', false)).toEqual({
      kind: 'stands',
      why: 'review round 1 stands: the changes since review round 1 (iteration 3) (notes.txt, tests/test_app.py) touch no product code',
    });
    expect(reviewDue(review(), mark({ since: [], head: 't2' }), 't2', false).kind).toBe('stands');
  });

  it('a full review when the changes are not known, the tree is not the marked one, or no review passed', () => {
    expect(reviewDue(null, mark(), 't1', false).kind).toBe('full');
    expect(reviewDue(review(), mark({ since: null, head: 't2' }), 't2', false).kind).toBe('full');
    expect(reviewDue(review(), mark({ since: ['src/app.ts'], head: 't2' }), 't3', false).kind).toBe('full');
    expect(reviewDue(review({ result: 'blocked' }), mark({ head: 't2' }), 't2', false).kind).toBe('full');
    // A failing review of this very tree stands: nothing changed that could lift it.
    expect(reviewDue(review({ result: 'blocked' }), mark(), 't1', false).kind).toBe('stands');
  });

  it('a review whose answers broke the agent contract never stands, so every check counts on the contract', () => {
    expect(reviewDue(review({ result: 'inconclusive' }), mark(), 't1', true)).toEqual({
      kind: 'full',
      why: 'review round 1 broke the agent contract: asked again',
    });
  });

  it('an inconclusive review (a reviewer that gave no answer) never stands, even on its own tree', () => {
    // Standing, it refused every later claim on that tree, which the builder cannot change: a
    // devil's advocate that fell silent once held a run until its iteration cap.
    expect(reviewDue(review({ result: 'inconclusive' }), mark(), 't1', false)).toEqual({
      kind: 'full',
      why: 'review round 1 was inconclusive: asked again',
    });
    expect(reviewDue(review({ result: 'inconclusive' }), mark({ since: [], head: 't2' }), 't2', false).kind).toBe('full');
  });
});

describe('the checklist verifier is asked only about items that could have changed', () => {
  it('skips passing items whose named files did not change', () => {
    const cl = checklist({ 'REQ-1': 'passing', 'REQ-2': 'passing' });
    expect(itemsToRecheck(cl, mark({ since: ['notes.txt'], head: 't2' }), 't2').ids).toEqual(['REQ-1']);
    expect(itemsToRecheck(cl, mark({ since: [], head: 't2' }), 't2').ids).toEqual([]);
  });

  it('asks again about items that did not pass or name none of the run’s changed files', () => {
    const prose = [{ id: 'REQ-3', title: 'errors are explained', priority: 'medium' as const, verify: '' }];
    expect(itemsToRecheck(checklist({ 'REQ-3': 'passing' }, prose), mark({ since: [], head: 't2' }), 't2').ids).toEqual(['REQ-3']);
    expect(itemsToRecheck(checklist({ 'REQ-1': 'failing', 'REQ-2': 'passing' }), mark({ since: [], head: 't2' }), 't2').ids).toEqual([
      'REQ-1',
    ]);
  });

  it('asks about every item without a mark on this tree, with unknown changes or a new file', () => {
    const cl = checklist({ 'REQ-1': 'passing', 'REQ-2': 'passing' });
    expect(itemsToRecheck(cl, null, 't2').ids).toEqual(['REQ-1', 'REQ-2']);
    expect(itemsToRecheck(cl, mark({ since: ['notes.txt'], head: 't2' }), 't3').ids).toEqual(['REQ-1', 'REQ-2']);
    expect(itemsToRecheck(cl, mark({ since: null, head: 't2' }), 't2').ids).toEqual(['REQ-1', 'REQ-2']);
    expect(itemsToRecheck(cl, mark({ since: ['lib/new.ts'], head: 't2' }), 't2').ids).toEqual(['REQ-1', 'REQ-2']);
  });
});
