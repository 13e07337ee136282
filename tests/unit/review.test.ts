/**
 * Owns the unit tests of the blind code review's pure decisions (rules/review.ts,
 * spec §5.4, §5.5): diff scope and cap, reviewer selection, verdict and severity parsing, the
 * per-reviewer record, aggregation with the devil's advocate, re-runs, and the prompts.
 */
import { describe, expect, it } from 'vitest';
import { ReviewerRecordSchema, ReviewRecordSchema, type ReviewerRecord, type ReviewRecord } from '../../schemas/gates.js';
import {
  aggregateReview,
  classifyVerdict,
  countSeverities,
  devilsAdvocateDue,
  devilsAdvocateReviewPrompt,
  PROMPT_MAX_FILES,
  REVIEW_EXCLUDED,
  reviewDiffCap,
  reviewerPrompt,
  reviewerRecord,
  reviewPathIncluded,
  reviewSummaryForPrompt,
  selectReviewers,
  severityLines,
  shouldRerun,
  type ReviewerPromptInput,
  type ReviewerRun,
  type SelectionInput,
} from '../../rules/review.js';

// ---------------------------------------------------------------------------------------------
// Diff scope and cap
// ---------------------------------------------------------------------------------------------

describe('reviewPathIncluded', () => {
  it.each([
    '.vigil/state.json',
    '.git/HEAD',
    'node_modules/x/index.js',
    'packages/a/node_modules/x/index.js',
    'venv/lib/site.py',
    'svc/.venv/bin/python',
    'dist/main.js',
    'web/build/app.js',
    'pkg/__pycache__/m.cpython-311.pyc',
    'vendor/github.com/x/y.go',
    './dist/x.js',
    'dist\\win.js',
  ])('excludes %s (excluded directory segment)', (path) => {
    expect(reviewPathIncluded(path)).toBe(false);
  });

  it.each(REVIEW_EXCLUDED.lockfiles.flatMap((l) => [l, `apps/web/${l}`]))('excludes the lockfile %s', (path) => {
    expect(reviewPathIncluded(path)).toBe(false);
  });

  it.each(['src/index.ts', 'package.json', 'scripts/build', 'src/distance.ts', 'docs/vendoring.md', 'my.vigil/notes.md', 'yarn.lock.md'])(
    'keeps %s',
    (path) => {
      expect(reviewPathIncluded(path)).toBe(true);
    },
  );

  it('rejects an empty path', () => {
    expect(reviewPathIncluded('')).toBe(false);
    expect(reviewPathIncluded('./')).toBe(false);
  });
});

describe('reviewDiffCap', () => {
  it('defaults the context window to 200000 tokens and caps at 400000', () => {
    // (150000*3) * 400000 / 425000 = 423529 -> capped
    expect(reviewDiffCap(null, null)).toBe(400_000);
    expect(reviewDiffCap(200_000, null)).toBe(400_000);
    expect(reviewDiffCap(1_000_000, null)).toBe(400_000);
  });

  it('scales with a smaller window, with integer division at each step', () => {
    expect(reviewDiffCap(128_000, null)).toBe(271_058); // 96000*3=288000 -> 271058.8
    expect(reviewDiffCap(100_000, null)).toBe(211_764); // 75000*3=225000 -> 211764.7
    expect(reviewDiffCap(100_001, null)).toBe(211_764); // 75000.75 floors to 75000 first
    expect(reviewDiffCap(32_000, null)).toBe(67_764); // 24000*3=72000 -> 67764.7
  });

  it('an override > 0 wins; 0 or null falls back to the formula', () => {
    expect(reviewDiffCap(128_000, 50_000)).toBe(50_000);
    expect(reviewDiffCap(null, 900_000)).toBe(900_000);
    expect(reviewDiffCap(128_000, 0)).toBe(271_058);
    expect(reviewDiffCap(0, null)).toBe(400_000);
  });
});

// ---------------------------------------------------------------------------------------------
// Selection
// ---------------------------------------------------------------------------------------------

const select = (over: Partial<SelectionInput>) =>
  selectReviewers({ text: '', files: [], complexity: 'standard', requirements: false, maxReviewers: 0, ...over });
const names = (choices: { reviewer: string }[]) => choices.map((c) => c.reviewer);

describe('selectReviewers', () => {
  it('zero scores give the mandatory pair plus the default security and test specialists', () => {
    const r = select({ text: 'fix typo in readme', files: ['README.md'] });
    expect(names(r)).toEqual(['architecture-strategist', 'maintainer-mergeability', 'security-sentinel', 'test-coverage-auditor']);
    expect(r[0]?.reason).toBe('mandatory');
    expect(r[2]?.reason).toBe('no keyword matched: default');
  });

  it('requirements-verifier is mandatory when requirements are on, first in the list', () => {
    const r = select({ requirements: true });
    expect(names(r).slice(0, 3)).toEqual(['requirements-verifier', 'architecture-strategist', 'maintainer-mergeability']);
    expect(r[0]?.reason).toBe('mandatory');
    expect(names(select({ requirements: false }))).not.toContain('requirements-verifier');
  });

  it.each([
    ['security-sentinel', 'auth login password token api sql query cookie cors csrf'],
    ['test-coverage-auditor', 'test spec coverage assert mock fixture expect describe'],
    ['performance-oracle', 'database query cache render loop fetch load index join pool'],
    ['dependency-analyst', 'package import require dependency npm pip yarn lock'],
  ])('every keyword of %s counts', (specialist, text) => {
    const r = select({ text });
    const chosen = r.find((c) => c.reviewer === specialist);
    expect(chosen?.reason).toBe(`keywords: ${text.split(' ').join(', ')}`);
    expect(names(r)[2]).toBe(specialist);
  });

  it('scores by distinct keywords (repeats do not count), case-insensitive, over text and file names', () => {
    // security: token (x1 despite repeats); performance: cache, fetch (from the file name)
    const r = select({ text: 'TOKEN token Token', files: ['src/cache/fetcher.ts'] });
    expect(r.slice(2)).toEqual([
      { reviewer: 'performance-oracle', reason: 'keywords: cache, fetch' },
      { reviewer: 'security-sentinel', reason: 'keywords: token' },
    ]);
  });

  it('ties are broken by priority (security < test < performance < dependency)', () => {
    // one hit each for all four
    const r = select({ text: 'cookie mock pool npm' });
    expect(names(r).slice(2)).toEqual(['security-sentinel', 'test-coverage-auditor']);
    const r2 = select({ text: 'pool npm' });
    expect(names(r2).slice(2)).toEqual(['performance-oracle', 'dependency-analyst']);
  });

  it('higher score beats priority', () => {
    const r = select({ text: 'npm pip yarn cookie' });
    expect(names(r).slice(2)).toEqual(['dependency-analyst', 'security-sentinel']);
  });

  it('complex changes get 4 specialists, simple and standard 2', () => {
    const text = 'auth mock cache npm';
    expect(names(select({ text, complexity: 'complex' })).slice(2)).toEqual([
      'security-sentinel',
      'test-coverage-auditor',
      'performance-oracle',
      'dependency-analyst',
    ]);
    expect(select({ text, complexity: 'simple' })).toHaveLength(4);
    expect(select({ text, complexity: 'standard' })).toHaveLength(4);
  });

  it('complex with only one matching specialist takes just that one', () => {
    expect(names(select({ text: 'csrf', complexity: 'complex' })).slice(2)).toEqual(['security-sentinel']);
  });

  it('a changed manifest force-adds the dependency analyst', () => {
    const r = select({ text: 'auth mock', files: ['svc/go.mod'] });
    expect(r.slice(2)).toEqual([
      { reviewer: 'security-sentinel', reason: 'keywords: auth' },
      { reviewer: 'test-coverage-auditor', reason: 'keywords: mock' },
      { reviewer: 'dependency-analyst', reason: 'package manifest changed: go.mod' },
    ]);
  });

  it('a manifest does not add the dependency analyst twice', () => {
    const r = select({ text: 'npm pip yarn', files: ['Cargo.toml'] });
    expect(names(r).filter((n) => n === 'dependency-analyst')).toHaveLength(1);
    expect(r.find((c) => c.reviewer === 'dependency-analyst')?.reason).toBe(
      'keywords: npm, pip, yarn; package manifest changed: Cargo.toml',
    );
  });

  it('only a manifest basename counts (not a path segment or a lookalike)', () => {
    expect(names(select({ text: 'x', files: ['go.mod/readme.md', 'Cargo.toml.orig'] }))).not.toContain('dependency-analyst');
    expect(names(select({ text: 'x', files: ['Gemfile.lock'] }))).toContain('dependency-analyst');
  });

  it('the cap trims specialists but never drops a mandatory reviewer', () => {
    const r = select({ text: 'auth mock', requirements: true, maxReviewers: 4 });
    expect(names(r)).toEqual(['requirements-verifier', 'architecture-strategist', 'maintainer-mergeability', 'security-sentinel']);
    const tiny = select({ text: 'auth mock', requirements: true, maxReviewers: 1 });
    expect(names(tiny)).toEqual(['requirements-verifier', 'architecture-strategist', 'maintainer-mergeability']);
    expect(select({ text: 'auth mock', requirements: true, maxReviewers: 0 })).toHaveLength(5);
  });

  it('keywords beyond the scan cap are not seen, but file names always are', () => {
    const text = `${'x'.repeat(2_100_000)} csrf`;
    const r = select({ text, files: ['src/mock.ts'] });
    expect(names(r).slice(2)).toEqual(['test-coverage-auditor']);
  });
});

// ---------------------------------------------------------------------------------------------
// Verdict parsing (§5.5)
// ---------------------------------------------------------------------------------------------

describe('classifyVerdict', () => {
  it.each([
    ['VERDICT: PASS', 'PASS'],
    ['VERDICT: FAIL', 'FAIL'],
    ['**VERDICT:** PASS', 'PASS'],
    ['**VERDICT: FAIL**', 'FAIL'],
    ['> VERDICT: approved', 'PASS'],
    ['### verdict: _FAIL_', 'FAIL'],
    ['VERDICT: `PASS`', 'PASS'],
    ['VERDICT: **`_approve_`**', 'PASS'],
    ['verdict: pass', 'PASS'],
    ['Verdict: Ok.', 'PASS'],
    ['  ## VERDICT:PASSED', 'PASS'],
    ['\tVERDICT:\tPASS', 'PASS'],
    ['VERDICT: PASS_WITH_NOTES', 'PASS'],
    ['VERDICT: PASS.', 'PASS'],
    ['VERDICT: FAILED', 'FAIL'],
    ['VERDICT: FAILURE', 'FAIL'],
    ['VERDICT: reject', 'FAIL'],
    ['VERDICT: REJECTED', 'FAIL'],
    ['VERDICT: BLOCK', 'FAIL'],
    ['VERDICT: blocked (security)', 'FAIL'],
    ['VERDICT: APPROVE', 'PASS'],
    ['VERDICT: maybe', 'AMBIGUOUS'],
    ['VERDICT: PASSING', 'AMBIGUOUS'],
    ['VERDICT: not pass', 'AMBIGUOUS'],
    ['VERDICT:', 'AMBIGUOUS'],
    ['VERDICT: <PASS|FAIL>', 'AMBIGUOUS'],
    ['VERDICT: APPROVEDAPPROVEDAPPROVED', 'AMBIGUOUS'],
    ['VERDICT: PASS\r', 'PASS'],
  ])('%j -> %s', (text, expected) => {
    expect(classifyVerdict(text)).toBe(expected);
  });

  it.each([
    ['no verdict line at all', 'Looks fine to me.\nPASS'],
    ['label not at the start of the line', 'My VERDICT: PASS'],
    ['a list bullet before the label', '- VERDICT: PASS'],
    ['a backtick before the label', '`VERDICT: PASS`'],
    ['emphasis underscore before the label', '_VERDICT: PASS_'],
    ['markers interleaved with blanks', '   #> * VERDICT: PASS'],
    ['no colon', 'VERDICT PASS'],
    ['space before the colon', 'VERDICT : PASS'],
    ['empty text', ''],
  ])('NONE: %s', (_name, text) => {
    expect(classifyVerdict(text)).toBe('NONE');
  });

  it('the first verdict line wins, even when ambiguous', () => {
    expect(classifyVerdict('intro\nVERDICT: FAIL\nlater\nVERDICT: PASS')).toBe('FAIL');
    expect(classifyVerdict('VERDICT: PASS\nVERDICT: FAIL')).toBe('PASS');
    expect(classifyVerdict('VERDICT: unsure\nVERDICT: PASS')).toBe('AMBIGUOUS');
  });
});

// ---------------------------------------------------------------------------------------------
// Severities (§5.5)
// ---------------------------------------------------------------------------------------------

describe('countSeverities', () => {
  it.each([
    ['[Critical] x', 'critical'],
    ['see [HIGH] here', 'high'],
    ['**Medium** naming', 'medium'],
    ['** low ** nit', 'low'],
    ['Severity: High', 'high'],
    ['severity critical', 'critical'],
    ['SEVERITY:low', 'low'],
    ['- High: unchecked input', 'high'],
    ['* critical. data loss', 'critical'],
    ['  - medium, naming', 'medium'],
    ['- low', 'low'],
    ['- High* bold end', 'high'],
    ['-\tHigh\tx', 'high'],
  ])('%j counts as %s', (line, level) => {
    const c = countSeverities(line);
    expect(c).toEqual({ critical: 0, high: 0, medium: 0, low: 0, [level]: 1 });
  });

  it.each([
    ['a bare word', 'this is a high risk, low effort change'],
    ['bullet without a space', '-High: x'],
    ['bullet word glued to more letters', '- Highly unlikely'],
    ['bullet severity after another word', '- the high road'],
    ['unclosed bold', '**High risk'],
    ['parenthesised', '(High) maybe'],
    ['plural severities', 'severities high'],
    ['a numbered list', '1. High: x'],
  ])('not a marker: %s', (_name, text) => {
    expect(countSeverities(text)).toEqual({ critical: 0, high: 0, medium: 0, low: 0 });
  });

  it('counts lines, once per level per line, and several levels on one line', () => {
    const text = ['[High] a [High] b', '- [Medium] c', '[Low] d', '[low] e', '[Critical] f **High**', 'VERDICT: FAIL'].join('\n');
    expect(countSeverities(text)).toEqual({ critical: 1, high: 2, medium: 1, low: 2 });
  });
});

describe('severityLines', () => {
  const text = [
    'intro',
    '- [Low] nit one',
    '- [Medium] m one',
    '   - [High] h one (a.ts:1)   ',
    '- [Low] nit two',
    '- [Critical] c one (b.ts:2)',
    '- [High] h two',
  ].join('\n');

  it('returns marker lines worst first, in text order within a level, trimmed', () => {
    expect(severityLines(text, 10)).toEqual([
      '- [Critical] c one (b.ts:2)',
      '- [High] h one (a.ts:1)',
      '- [High] h two',
      '- [Medium] m one',
      '- [Low] nit one',
      '- [Low] nit two',
    ]);
  });

  it('takes at most max lines, the worst ones', () => {
    expect(severityLines(text, 2)).toEqual(['- [Critical] c one (b.ts:2)', '- [High] h one (a.ts:1)']);
    expect(severityLines(text, 0)).toEqual([]);
  });

  it('clips a long line to 300 characters', () => {
    const [line] = severityLines(`[High] ${'x'.repeat(1000)}`, 1);
    expect(line).toHaveLength(300);
    expect(line?.startsWith('[High] xxx')).toBe(true);
    expect(line?.endsWith('…')).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Per-reviewer record
// ---------------------------------------------------------------------------------------------

const run = (output: string | null, over: Partial<ReviewerRun> = {}): ReviewerRun => ({
  reviewer: 'security-sentinel',
  exitCode: 0,
  output,
  lost: false,
  logPath: '/runs/r1/reviews/security-sentinel.txt',
  ...over,
});

describe('reviewerRecord', () => {
  it('PASS without severe findings is a clean PASS', () => {
    const r = reviewerRecord(run('- [Low] nit (a.ts:3)\nVERDICT: PASS'));
    expect(r).toEqual({
      reviewer: 'security-sentinel',
      verdict: 'PASS',
      blocking: false,
      counts: { critical: 0, high: 0, medium: 0, low: 1 },
      findings: ['- [Low] nit (a.ts:3)'],
      logPath: '/runs/r1/reviews/security-sentinel.txt',
    });
    expect(ReviewerRecordSchema.parse(r)).toEqual(r);
  });

  it('PASS with a High finding is normalized to a blocking FAIL', () => {
    const r = reviewerRecord(run('VERDICT: PASS\n- [High] SQL built from input (db.ts:12)'));
    expect(r.verdict).toBe('FAIL');
    expect(r.blocking).toBe(true);
    expect(r.findings).toEqual(['- [High] SQL built from input (db.ts:12)']);
  });

  it('PASS with a Critical finding is a blocking FAIL', () => {
    const r = reviewerRecord(run('**VERDICT:** PASS\nSeverity: Critical - secret logged'));
    expect([r.verdict, r.blocking, r.counts.critical]).toEqual(['FAIL', true, 1]);
  });

  it('FAIL with Critical/High blocks', () => {
    const r = reviewerRecord(run('- [Critical] data loss (x.ts:1)\nVERDICT: FAIL'));
    expect([r.verdict, r.blocking]).toEqual(['FAIL', true]);
  });

  it('FAIL without Critical/High is an advisory FAIL', () => {
    const r = reviewerRecord(run('- [Medium] naming (x.ts:1)\nVERDICT: FAIL'));
    expect([r.verdict, r.blocking]).toEqual(['FAIL', false]);
    expect(r.counts).toEqual({ critical: 0, high: 0, medium: 1, low: 0 });
  });

  it.each([
    ['lost', run('VERDICT: PASS', { lost: true })],
    ['null output', run(null)],
    ['empty output', run('')],
    ['whitespace-only output', run(' \n\t\n')],
    ['non-zero exit, even with a verdict', run('VERDICT: FAIL\n[High] x', { exitCode: 1 })],
  ])('NO_OUTPUT: %s', (_name, r) => {
    const rec = reviewerRecord(r);
    expect(rec.verdict).toBe('NO_OUTPUT');
    expect(rec.blocking).toBe(false);
    expect(rec.counts).toEqual({ critical: 0, high: 0, medium: 0, low: 0 });
    expect(rec.findings).toEqual([]);
  });

  it('no verdict line or an ambiguous one is NO_VERDICT, not blocking, findings kept', () => {
    const none = reviewerRecord(run('- [High] x (a.ts:1)\nlooks bad'));
    expect([none.verdict, none.blocking, none.counts.high]).toEqual(['NO_VERDICT', false, 1]);
    expect(none.findings).toEqual(['- [High] x (a.ts:1)']);
    expect(reviewerRecord(run('VERDICT: maybe')).verdict).toBe('NO_VERDICT');
  });

  it('keeps at most 5 findings, worst first', () => {
    const lines = [...Array.from({ length: 6 }, (_, i) => `- [Low] l${i}`), '- [High] h', 'VERDICT: FAIL'];
    const r = reviewerRecord(run(lines.join('\n')));
    expect(r.findings).toEqual(['- [High] h', '- [Low] l0', '- [Low] l1', '- [Low] l2', '- [Low] l3']);
    expect(r.counts.low).toBe(6);
  });
});

// ---------------------------------------------------------------------------------------------
// Aggregation
// ---------------------------------------------------------------------------------------------

const rec = (
  reviewer: string,
  verdict: ReviewerRecord['verdict'],
  counts: Partial<ReviewerRecord['counts']> = {},
  findings: string[] = [],
): ReviewerRecord => {
  const c = { critical: 0, high: 0, medium: 0, low: 0, ...counts };
  const real = verdict === 'PASS' || verdict === 'FAIL';
  return { reviewer, verdict, blocking: real && c.critical + c.high > 0, counts: c, findings, logPath: '' };
};
const off = { mergeabilityMin: 0 };

describe('aggregateReview', () => {
  it('all PASS, clean: pass with mergeability 100', () => {
    const o = aggregateReview([rec('a', 'PASS'), rec('b', 'PASS')], null, off);
    expect(o).toMatchObject({ result: 'pass', mergeability: 100, hasBlocking: false, inconclusive: false });
    expect(o.reason).toBe('passed: 2 reviewer(s), no critical or high finding; mergeability 100 (0 medium, 0 low advisory)');
  });

  it("mergeability = 100 - 5*medium - 2*low summed over reviewers and the devil's advocate", () => {
    const o = aggregateReview(
      [rec('a', 'PASS', { medium: 2, low: 1 }), rec('b', 'FAIL', { medium: 1, low: 3 })],
      rec('devils-advocate', 'PASS', { low: 1 }),
      off,
    );
    // medium 3, low 5 -> 100 - 15 - 10 = 75
    expect(o.result).toBe('pass');
    expect(o.mergeability).toBe(75);
    expect(o.reason).toContain('advisory FAIL from b');
    expect(o.reason).toContain('(3 medium, 5 low advisory)');
  });

  it('mergeability floors at 0', () => {
    expect(aggregateReview([rec('a', 'PASS', { medium: 30 })], null, off).mergeability).toBe(0);
  });

  it('an advisory FAIL (no Critical/High) does not block', () => {
    const o = aggregateReview([rec('a', 'FAIL', { medium: 1 }), rec('b', 'PASS')], null, off);
    expect(o).toMatchObject({ result: 'pass', hasBlocking: false, mergeability: 95 });
  });

  it('a mergeability minimum blocks below it and passes at it', () => {
    const reviewers = [rec('a', 'PASS', { medium: 4 })]; // 80
    expect(aggregateReview(reviewers, null, { mergeabilityMin: 81 })).toMatchObject({
      result: 'blocked',
      mergeability: 80,
      hasBlocking: false,
    });
    expect(aggregateReview(reviewers, null, { mergeabilityMin: 81 }).reason).toBe(
      'mergeability 80 is below the minimum 81 (4 medium, 0 low findings)',
    );
    expect(aggregateReview(reviewers, null, { mergeabilityMin: 80 }).result).toBe('pass');
  });

  it('a blocking reviewer blocks, names the reviewer and its worst finding, mergeability 0', () => {
    const o = aggregateReview(
      [rec('security-sentinel', 'FAIL', { high: 1, low: 1 }, ['- [High] SQL injection (db.ts:9)', '- [Low] nit']), rec('b', 'PASS')],
      null,
      off,
    );
    expect(o).toMatchObject({ result: 'blocked', hasBlocking: true, inconclusive: false, mergeability: 0 });
    expect(o.reason).toBe('blocked by security-sentinel: - [High] SQL injection (db.ts:9)');
  });

  it('blocking wins over inconclusive', () => {
    const o = aggregateReview([rec('a', 'FAIL', { critical: 1 }), rec('b', 'NO_OUTPUT')], null, off);
    expect(o).toMatchObject({ result: 'blocked', hasBlocking: true, inconclusive: true, mergeability: 0 });
    expect(o.reason).toBe('blocked by a: 1 critical, 0 high');
  });

  it('a reviewer without a verdict makes the review inconclusive', () => {
    const o = aggregateReview([rec('a', 'PASS'), rec('b', 'NO_OUTPUT'), rec('c', 'NO_VERDICT', { medium: 1 })], null, off);
    expect(o).toMatchObject({ result: 'inconclusive', hasBlocking: false, inconclusive: true, mergeability: 0 });
    expect(o.reason).toBe('inconclusive: no verdict from b (no output), c (no verdict line)');
  });

  it('a NO_VERDICT reviewer with a High finding does not block (its answer is not a verdict)', () => {
    const o = aggregateReview([rec('a', 'PASS'), rec('b', 'NO_VERDICT', { high: 1 })], null, off);
    expect(o.result).toBe('inconclusive');
    expect(o.hasBlocking).toBe(false);
  });

  it('an empty panel is inconclusive, never a pass', () => {
    expect(aggregateReview([], null, off)).toMatchObject({
      result: 'inconclusive',
      reason: 'inconclusive: no reviewer ran',
      mergeability: 0,
    });
  });

  it("the devil's advocate's High blocks a unanimous PASS", () => {
    const da = rec('devils-advocate', 'FAIL', { high: 1 }, ['- [High] race in cache (c.ts:4)']);
    const o = aggregateReview([rec('a', 'PASS'), rec('b', 'PASS')], da, off);
    expect(o).toMatchObject({ result: 'blocked', hasBlocking: true, mergeability: 0 });
    expect(o.reason).toBe('blocked by devils-advocate: - [High] race in cache (c.ts:4)');
  });

  it("the devil's advocate's Critical blocks even without a verdict", () => {
    const da = rec('devils-advocate', 'NO_VERDICT', { critical: 1 });
    expect(aggregateReview([rec('a', 'PASS')], da, off)).toMatchObject({ result: 'blocked', hasBlocking: true, inconclusive: true });
  });

  it("the devil's advocate without a verdict makes the review inconclusive", () => {
    const o = aggregateReview([rec('a', 'PASS'), rec('b', 'PASS')], rec('devils-advocate', 'NO_OUTPUT'), off);
    expect(o).toMatchObject({ result: 'inconclusive', inconclusive: true, hasBlocking: false, mergeability: 0 });
    expect(o.reason).toBe('inconclusive: no verdict from devils-advocate (no output)');
  });

  it("the devil's advocate confirming PASS keeps the pass", () => {
    expect(aggregateReview([rec('a', 'PASS')], rec('devils-advocate', 'PASS', { medium: 1 }), off)).toMatchObject({
      result: 'pass',
      mergeability: 95,
    });
  });

  it('the reason stays within 500 characters', () => {
    const many = Array.from({ length: 12 }, (_, i) => rec(`reviewer-${i}`, 'FAIL', { high: 1 }, [`[High] ${'y'.repeat(280)}`]));
    const o = aggregateReview(many, null, off);
    expect(o.reason).toHaveLength(500);
    expect(o.reason.startsWith('blocked by reviewer-0: [High] yyy')).toBe(true);
  });
});

describe('devilsAdvocateDue and shouldRerun', () => {
  it('due only on a unanimous PASS of at least one reviewer', () => {
    expect(devilsAdvocateDue([rec('a', 'PASS'), rec('b', 'PASS')])).toBe(true);
    expect(devilsAdvocateDue([rec('a', 'PASS')])).toBe(true);
    expect(devilsAdvocateDue([rec('a', 'PASS'), rec('b', 'FAIL')])).toBe(false);
    expect(devilsAdvocateDue([rec('a', 'PASS'), rec('b', 'NO_VERDICT')])).toBe(false);
    expect(devilsAdvocateDue([])).toBe(false);
  });

  it('an inconclusive review is re-run once', () => {
    expect(shouldRerun('inconclusive', false)).toBe(true);
    expect(shouldRerun('inconclusive', true)).toBe(false);
    expect(shouldRerun('blocked', false)).toBe(false);
    expect(shouldRerun('pass', false)).toBe(false);
    expect(shouldRerun('refused', false)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Adversarial input
// ---------------------------------------------------------------------------------------------

describe('linear-time parsing of adversarial output', () => {
  const MB = 1 << 20;
  it.each([
    ['blanks', ' '.repeat(MB)],
    ['markers then blanks', `${'*'.repeat(MB / 2)}${' '.repeat(MB / 2)}`],
    ['bold openers with blanks', '** '.repeat(MB / 3)],
    ['bold with blanks and near-misses', '**                                        hig'.repeat(MB / 44)],
    ['severity prefixes', 'severity: '.repeat(MB / 10)],
    ['bullets', '- - - - '.repeat(MB / 8)],
    ['verdict labels', 'VERDICT:'.repeat(MB / 8)],
    ['brackets', '[hig'.repeat(MB / 4)],
    ['blank lines', '\n'.repeat(MB)],
    ['indented blanks then a bullet', `${' '.repeat(MB)}- x`],
  ])('%s (1 MiB) parses in under a second', (_name, text) => {
    const t0 = Date.now();
    const verdict = classifyVerdict(text);
    const counts = countSeverities(text);
    const lines = severityLines(text, 5);
    const record = reviewerRecord(run(text));
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeLessThan(4000);
    expect(counts).toEqual({ critical: 0, high: 0, medium: 0, low: 0 });
    expect(lines).toEqual([]);
    expect(['NONE', 'AMBIGUOUS']).toContain(verdict);
    expect(['NO_OUTPUT', 'NO_VERDICT']).toContain(record.verdict);
  });

  it('a real verdict and finding after 1 MiB of noise are still found', () => {
    const text = `${' '.repeat(MB)}\n**VERDICT:** PASS\n- [High] late finding (z.ts:1)`;
    const r = reviewerRecord(run(text));
    expect([r.verdict, r.blocking, r.findings]).toEqual(['FAIL', true, ['- [High] late finding (z.ts:1)']]);
  });
});

// ---------------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------------

const promptInput = (over: Partial<ReviewerPromptInput> = {}): ReviewerPromptInput => ({
  reviewer: 'security-sentinel',
  diffPath: '/runs/r1/reviews/round-2/diff.patch',
  diffBytes: 12_345,
  files: ['src/auth.ts', 'src/db.ts'],
  testSummary: '42 passed, 0 failed',
  prdPath: '/repo/PRD.md',
  round: 2,
  iteration: 7,
  ...over,
});

const REVIEWERS = [
  'requirements-verifier',
  'architecture-strategist',
  'maintainer-mergeability',
  'security-sentinel',
  'test-coverage-auditor',
  'performance-oracle',
  'dependency-analyst',
  'devils-advocate',
];

describe('reviewerPrompt', () => {
  it('carries the evidence and the output contract', () => {
    const p = reviewerPrompt(promptInput());
    expect(p).toContain('Code review, round 2, iteration 7.');
    expect(p).toContain('SECURITY SENTINEL');
    expect(p).toContain('/runs/r1/reviews/round-2/diff.patch (12345 bytes)');
    expect(p).toContain('since this run started');
    expect(p).toContain('Changed files (2):\n  src/auth.ts\n  src/db.ts');
    expect(p).toContain('Tests (latest run): 42 passed, 0 failed');
    expect(p).toContain('Requirements (PRD): /repo/PRD.md');
    expect(p).toContain('Do not modify any file');
    expect(p).toContain('- [Severity] description (file:line)');
    expect(p).toContain('VERDICT: PASS');
    expect(p).toContain('VERDICT: FAIL');
    expect(p).toContain('Critical and High need a concrete defect');
    expect(p).toContain('Medium and Low are advisory');
  });

  it.each(REVIEWERS)('has a distinct focus paragraph for %s', (reviewer) => {
    const p = reviewerPrompt(promptInput({ reviewer }));
    const focus = p.split('\n')[1] ?? '';
    expect(focus.startsWith('You are the ')).toBe(true);
    expect(focus).not.toContain('Review the change from the angle your role names');
    const others = REVIEWERS.filter((r) => r !== reviewer).map((r) => reviewerPrompt(promptInput({ reviewer: r })).split('\n')[1]);
    expect(others).not.toContain(focus);
  });

  it('an unknown (hub) reviewer gets a generic focus', () => {
    expect(reviewerPrompt(promptInput({ reviewer: 'i18n-checker' })).split('\n')[1]).toBe(
      'You are the I18N-CHECKER reviewer. Review the change from the angle your role names.',
    );
  });

  it('caps the file list at 200 names', () => {
    const files = Array.from({ length: 250 }, (_, i) => `src/f${i}.ts`);
    const p = reviewerPrompt(promptInput({ files }));
    expect(p).toContain('Changed files (250):');
    expect(p).toContain(`  src/f${PROMPT_MAX_FILES - 1}.ts\n  ... and 50 more`);
    expect(p).not.toContain('src/f200.ts');
  });

  it('says so when there is no PRD or no test summary', () => {
    const p = reviewerPrompt(promptInput({ prdPath: null, testSummary: '  ' }));
    expect(p).toContain('There is no requirements document for this run');
    expect(p).toContain('Tests: no test summary is available.');
    expect(p).not.toContain('Requirements (PRD)');
  });

  it.each(REVIEWERS)('an echoed %s prompt neither parses as a verdict nor counts a finding', (reviewer) => {
    const p = reviewerPrompt(promptInput({ reviewer }));
    expect(classifyVerdict(p)).toBe('NONE');
    expect(countSeverities(p)).toEqual({ critical: 0, high: 0, medium: 0, low: 0 });
  });
});

describe('devilsAdvocateReviewPrompt', () => {
  it('is adversarial, about a unanimous PASS, with the same evidence and contract', () => {
    const { reviewer: _r, ...input } = promptInput();
    const p = devilsAdvocateReviewPrompt(input);
    expect(p).toContain("DEVIL'S ADVOCATE");
    expect(p).toContain('Unanimous approval is suspicious');
    expect(p).toContain('what the others missed');
    expect(p).toContain('/runs/r1/reviews/round-2/diff.patch');
    expect(p).toContain('Do not modify any file');
    expect(p).toContain('- [Severity] description (file:line)');
    expect(classifyVerdict(p)).toBe('NONE');
    expect(countSeverities(p)).toEqual({ critical: 0, high: 0, medium: 0, low: 0 });
  });
});

describe('reviewSummaryForPrompt', () => {
  const record = (over: Partial<ReviewRecord> = {}): ReviewRecord =>
    ReviewRecordSchema.parse({
      round: 1,
      iteration: 4,
      treeHash: 'abc',
      reviewers: [
        rec('security-sentinel', 'FAIL', { high: 1, low: 1 }, ['- [High] SQL injection (db.ts:9)', '- [Low] nit']),
        rec('architecture-strategist', 'PASS', { medium: 2 }),
      ],
      result: 'blocked',
      reason: 'blocked by security-sentinel: - [High] SQL injection (db.ts:9)',
      mergeability: 0,
      at: '2025-01-01T00:00:00Z',
      ...over,
    });

  it('shows the result, the blocking reviewers with their findings, advisory counts and mergeability', () => {
    expect(reviewSummaryForPrompt(record(), 2000)).toBe(
      [
        'Code review (round 1, iteration 4): BLOCKED. blocked by security-sentinel: - [High] SQL injection (db.ts:9)',
        'security-sentinel (blocking, 0 critical, 1 high):',
        '  - [High] SQL injection (db.ts:9)',
        '  - [Low] nit',
        'Advisory findings (do not block): 2 medium, 1 low.',
        'Mergeability: 0/100.',
      ].join('\n'),
    );
  });

  it("includes a blocking devil's advocate", () => {
    const s = reviewSummaryForPrompt(
      record({
        reviewers: [rec('a', 'PASS')],
        devilsAdvocate: rec('devils-advocate', 'NO_VERDICT', { critical: 1 }, ['[Critical] secret in log (l.ts:2)']),
        reason: 'blocked by devils-advocate: [Critical] secret in log (l.ts:2)',
      }),
      2000,
    );
    expect(s).toContain('devils-advocate (blocking, 1 critical, 0 high):\n  [Critical] secret in log (l.ts:2)');
  });

  it('a clean pass is two lines', () => {
    const s = reviewSummaryForPrompt(record({ reviewers: [rec('a', 'PASS')], result: 'pass', reason: 'passed', mergeability: 100 }), 2000);
    expect(s).toBe('Code review (round 1, iteration 4): PASSED. passed\nMergeability: 100/100.');
  });

  it('is clipped to maxChars', () => {
    const s = reviewSummaryForPrompt(record(), 40);
    expect(s).toHaveLength(40);
    expect(s.endsWith('…')).toBe(true);
    expect(reviewSummaryForPrompt(record(), 0)).toBe('');
  });
});
