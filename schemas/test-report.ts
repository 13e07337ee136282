/**
 * What a test run reported test by test (lib/gates/test-report.ts reads it from the
 * runner's machine-readable report), and the run's baseline: the tests the repository's suite had
 * when the run started and how each ended. The tests verdict (rules/tests-verdict.ts)
 * holds a report against the baseline instead of trusting the process's exit code.
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const TEST_STATUSES = ['passed', 'failed', 'skipped', 'error'] as const;
export const TestStatusSchema = shared('schemas/test-report:TestStatusSchema', () => z.enum(TEST_STATUSES));
export type TestStatus = z.infer<typeof TestStatusSchema>;

/** Where a report came from. */
export const REPORT_FORMATS = ['junit', 'jest-json', 'go-json', 'libtest', 'unittest'] as const;
export const ReportFormatSchema = shared('schemas/test-report:ReportFormatSchema', () => z.enum(REPORT_FORMATS));
export type ReportFormat = z.infer<typeof ReportFormatSchema>;

export const TestCaseSchema = shared('schemas/test-report:TestCaseSchema', () =>
  z.object({
    /** The test's id as the runner names it (file or class, then the name; `#2` for a repeated name). */
    id: z.string().max(1000),
    status: TestStatusSchema,
  }),
);
export type TestCase = z.infer<typeof TestCaseSchema>;

export const TestReportSchema = shared('schemas/test-report:TestReportSchema', () =>
  z.object({
    format: ReportFormatSchema,
    /** The runner finished its report: every test it announced is in it (a run cut short is not). */
    complete: z.boolean(),
    /** Why the report is not complete (null when it is). */
    incomplete: z.string().max(500).nullable(),
    tests: z.array(TestCaseSchema),
  }),
);
export type TestReport = z.infer<typeof TestReportSchema>;

/** The run's baseline: the suite as the run found it (kept in the run's private folder, never in history). */
export const TestBaselineSchema = shared('schemas/test-report:TestBaselineSchema', () =>
  z.object({
    version: z.literal(1),
    command: z.string(),
    runner: z.string(),
    at: z.string(),
    /** The per-test report of the baseline run; null when the runner gave none (then only its summary is judged). */
    report: TestReportSchema.nullable(),
  }),
);
export type TestBaseline = z.infer<typeof TestBaselineSchema>;

/**
 * pytest's per-test map, recorded by a full run under coverage.py with one dynamic context per
 * test: which lines of which repository files each test executed (by index into `files`), and
 * the lines of each file executed outside any test (at import, during collection). Its `tree` is the tree it was
 * recorded on: a later selection covers everything changed since.
 */
export const PerTestMapSchema = shared('schemas/test-report:PerTestMapSchema', () =>
  z.object({
    tree: z.string(),
    iteration: z.number().int().min(0),
    files: z.array(z.string()),
    /** Per pytest node id: per index in `files`, the lines it executed. */
    tests: z.record(z.string(), z.record(z.string(), z.array(z.number().int().min(0)))),
    /** Per index in `files`: the lines executed outside any test. */
    imports: z.record(z.string(), z.array(z.number().int().min(0))),
  }),
);
export type PerTestMap = z.infer<typeof PerTestMapSchema>;

/**
 * The run's test map (kept in its private folder, remade by every full test run): per test file the
 * full run reported, the repository files it imports; what the tests gate of an ordinary iteration
 * selects from (rules/affected-tests.ts).
 */
export const TestMapSchema = shared('schemas/test-report:TestMapSchema', () =>
  z.object({
    version: z.literal(1),
    runner: z.string(),
    command: z.string(),
    /** The tree the full run tested: the selection covers what changed since. */
    tree: z.string(),
    iteration: z.number().int().min(0),
    tests: z.record(z.string(), z.array(z.string())),
    /** Test files with imports Vigil cannot follow: always selected. */
    dynamic: z.array(z.string()),
    /** Test files of the tree the full run did not report (the runner's configuration leaves them out). */
    others: z.array(z.string()),
    /** Test files with a failed test in their last run: always selected. */
    failing: z.array(z.string()),
    /** pytest: the tests' own map (coverage.py's per-test contexts), when a full run recorded one. */
    perTest: PerTestMapSchema.optional(),
    /** pytest: why the last recording left no per-test map (shown on the tests gate's line). */
    perTestProblem: z.string().optional(),
  }),
);
export type TestMap = z.infer<typeof TestMapSchema>;

/** A partial test run: the test files it ran, of how many the full suite has. */
export const TestSelectionSchema = shared('schemas/test-report:TestSelectionSchema', () =>
  z.object({
    files: z.number().int().min(0),
    of: z.number().int().min(0),
    /** Selected by the per-test map: the tests run, of how many it knows. */
    tests: z.object({ ran: z.number().int().min(0), of: z.number().int().min(0) }).optional(),
  }),
);
export type TestSelection = z.infer<typeof TestSelectionSchema>;

/** What a test run's report said against the baseline, in the test result (small: counts and a few names). */
export const ReportFactsSchema = shared('schemas/test-report:ReportFactsSchema', () =>
  z.object({
    format: ReportFormatSchema.nullable(),
    complete: z.boolean(),
    total: z.number().int().min(0),
    passed: z.number().int().min(0),
    failed: z.number().int().min(0),
    skipped: z.number().int().min(0),
    /** Baseline tests, and how many of them ran and passed in this run. */
    baselineTotal: z.number().int().min(0).nullable(),
    baselinePassed: z.number().int().min(0).nullable(),
    /** Baseline tests this run did not report (deleted, renamed or never reached), the first few by name. */
    missing: z.array(z.string().max(300)).max(10),
    missingCount: z.number().int().min(0),
    /** Tests reported failed or errored, the first few by name. */
    failing: z.array(z.string().max(300)).max(10).default([]),
    /** Baseline tests reported skipped, failed or errored, the first few by name. */
    notPassed: z.array(z.string().max(300)).max(10),
    notPassedCount: z.number().int().min(0),
  }),
);
export type ReportFacts = z.infer<typeof ReportFactsSchema>;
