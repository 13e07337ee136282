/**
 * The tests verdict that trusts no exit code. A test run is green only when the runner's
 * machine-readable report is complete and every test of the run's baseline (the suite as the run
 * found it) ran and passed (one the suite already skipped then may stay skipped), and no other
 * reported test failed. A process that ends before its
 * report is complete, or reports fewer baseline tests than there were, is red, with the count —
 * never inconclusive, never green. Without a baseline report (a runner whose tests Vigil cannot
 * list), a complete report alone is judged; without any report, the summary verdict stands.
 *
 * Pure: the report and the baseline come in as values (lib/gates/test-report.ts reads them).
 */
import type { ReportFacts, TestCase, TestReport } from '../schemas/test-report.js';

export interface TestsVerdict {
  verdict: 'pass' | 'fail' | 'inconclusive';
  reason: string;
  facts: ReportFacts | null;
}

const FIRST = 10;
const name = (id: string): string => (id.length > 300 ? `${id.slice(0, 297)}...` : id);

/** Ids made unique in report order (a name reported twice is `name`, then `name#2`): reports of the same suite line up. */
export function uniqueIds(tests: readonly TestCase[]): TestCase[] {
  const seen = new Map<string, number>();
  return tests.map((t) => {
    const n = (seen.get(t.id) ?? 0) + 1;
    seen.set(t.id, n);
    return n === 1 ? t : { ...t, id: `${t.id}#${n}` };
  });
}

/** Counts of a report, and of the baseline's tests in it. */
export function reportFacts(report: TestReport, baseline: TestReport | null): ReportFacts {
  const tests = uniqueIds(report.tests);
  const byId = new Map(tests.map((t) => [t.id, t.status]));
  const count = (s: TestCase['status']): number => tests.filter((t) => t.status === s).length;
  const base = baseline ? uniqueIds(baseline.tests) : null;
  const missing = base ? base.filter((t) => !byId.has(t.id)).map((t) => t.id) : [];
  // A test the suite already skipped when the run started (a platform's skip) may stay skipped; any other must pass.
  const owed = (t: TestCase): boolean => byId.get(t.id) !== 'passed' && !(t.status === 'skipped' && byId.get(t.id) === 'skipped');
  const notPassed = base ? base.filter((t) => byId.has(t.id) && owed(t)).map((t) => t.id) : [];
  return {
    format: report.format,
    complete: report.complete,
    total: tests.length,
    passed: count('passed'),
    failed: count('failed') + count('error'),
    skipped: count('skipped'),
    failing: tests
      .filter((t) => t.status === 'failed' || t.status === 'error')
      .slice(0, FIRST)
      .map((t) => name(t.id)),
    baselineTotal: base ? base.length : null,
    baselinePassed: base ? base.length - missing.length - notPassed.length : null,
    missing: missing.slice(0, FIRST).map(name),
    missingCount: missing.length,
    notPassed: notPassed.slice(0, FIRST).map(name),
    notPassedCount: notPassed.length,
  };
}

/**
 * The verdict of a test run. `report`: what the runner reported test by test (null: none was
 * written or readable); `baseline`: the baseline run's report (null: none, or no baseline yet);
 * `expected`: whether the runner is one that writes a report (then a missing one is red);
 * `summary`: the verdict read from the runner's printed summary, for a run without a report.
 */
export function testsVerdict(opts: {
  runner: string;
  exitCode: number;
  timedOut: boolean;
  report: TestReport | null;
  baseline: TestReport | null;
  expected: boolean;
  summary: { verdict: 'pass' | 'fail' | 'inconclusive'; reason: string };
}): TestsVerdict {
  const { runner, exitCode, report, baseline } = opts;
  const who = runner || 'tests';
  if (opts.timedOut) return { verdict: 'fail', reason: opts.summary.reason, facts: report ? reportFacts(report, baseline) : null };
  if (report === null) {
    if (baseline !== null)
      return {
        verdict: 'fail',
        reason: `${who}: the test process exited ${exitCode} without its report: 0 of ${uniqueIds(baseline.tests).length} baseline tests reported`,
        facts: null,
      };
    if (opts.expected && opts.summary.verdict === 'pass')
      return { verdict: 'fail', reason: `${who}: the test process exited ${exitCode} without writing its report`, facts: null };
    return { verdict: opts.summary.verdict, reason: opts.summary.reason, facts: null };
  }
  const facts = reportFacts(report, baseline);
  const base = facts.baselineTotal;
  if (!report.complete) {
    const reported = base !== null ? `${base - facts.missingCount} of ${base} baseline tests reported` : `${facts.total} reported`;
    return {
      verdict: 'fail',
      reason: `${who}: the test process exited ${exitCode} before its report was complete (${report.incomplete ?? 'cut short'}): ${reported}`,
      facts,
    };
  }
  if (base !== null && facts.missingCount > 0)
    return {
      verdict: 'fail',
      reason:
        `${who}: ${facts.missingCount} of ${base} baseline tests were not reported (deleted, renamed or never run): ` +
        `${facts.missing.slice(0, 3).join(', ')}`,
      facts,
    };
  if (base !== null && facts.notPassedCount > 0)
    return {
      verdict: 'fail',
      reason: `${who}: ${facts.notPassedCount} of ${base} baseline tests did not pass (failed, errored or skipped): ${facts.notPassed.slice(0, 3).join(', ')}`,
      facts,
    };
  if (facts.failed > 0)
    return {
      verdict: 'fail',
      reason: `${who}: ${facts.failed} failed, ${facts.passed} passed (exit ${exitCode}); first: ${facts.failing[0] ?? '?'}`,
      facts,
    };
  if (facts.total === 0) return { verdict: 'inconclusive', reason: `${who}: its report lists no test`, facts };
  if (exitCode !== 0)
    return { verdict: 'fail', reason: `${who}: every reported test passed, but the test process exited ${exitCode}`, facts };
  const baseText = base !== null ? `; ${base} of ${base} baseline tests passed` : '';
  const skipped = facts.skipped > 0 ? `, ${facts.skipped} skipped` : '';
  return { verdict: 'pass', reason: `${who}: ${facts.passed} passed${skipped} (from its report${baseText})`, facts };
}
