/**
 * Vigil's reporter for node's test runner (`node --test`): JUnit XML that names each test by its
 * file (`classname` is the test file, relative to the working folder; `name` the test's ancestors
 * and its own name, `outer > inner > test`), which node's own JUnit reporter does not (every test
 * is `classname="test"` there, so two files' tests of one name are one id, and a selection of
 * test files cannot be told in the report). Every test is a test case, a test with subtests too,
 * so the count node announces (`tests N`) is the number listed; a suite (`describe`) is not one.
 * Written into the call's report folder (as pytest's plugin is) and loaded through NODE_OPTIONS
 * (lib/gates/test-report.ts); the file is written once, at the end of the run, so a run
 * cut short leaves none rather than part of one.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestReport } from '../../schemas/test-report.js';

export const NODE_REPORTER_FILE = 'vigil-node-reporter.mjs';
export const NODE_REPORT_FILE = 'node-test.xml';

const REPORTER = `// Vigil's JUnit reporter for node --test: each test named by its file (lib/gates/node-test-reporter.ts).
import path from 'node:path';

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);

export default async function* vigilJunit(source) {
  const stacks = new Map();
  const cases = [];
  let announced = null;
  for await (const event of source) {
    const d = event.data ?? {};
    const file = d.file ? path.relative(process.cwd(), d.file).split(path.sep).join('/') : '';
    if (event.type === 'test:start') {
      const stack = stacks.get(file) ?? [];
      stack.length = d.nesting;
      stack.push(d.name);
      stacks.set(file, stack);
    } else if (event.type === 'test:pass' || event.type === 'test:fail') {
      if (d.details?.type === 'suite') continue;
      const stack = (stacks.get(file) ?? []).slice(0, d.nesting);
      const name = [...stack, d.name].join(' > ');
      const status = d.skip !== undefined || d.todo !== undefined ? 'skipped' : event.type === 'test:pass' ? 'passed' : 'failed';
      const message = event.type === 'test:fail' ? String(d.details?.error?.message ?? d.details?.error ?? 'failed').slice(0, 2000) : '';
      cases.push({ file, name, status, message });
    } else if (event.type === 'test:diagnostic' && d.nesting === 0) {
      const m = /^tests (\\d+)$/.exec(String(d.message ?? ''));
      if (m) announced = Number(m[1]);
    }
  }
  const body = cases.map((c) => {
    const open = '\\t<testcase classname="' + esc(c.file || 'test') + '" name="' + esc(c.name) + '"';
    if (c.status === 'passed') return open + '/>';
    const inner = c.status === 'skipped' ? '<skipped/>' : '<failure message="' + esc(c.message) + '"/>';
    return open + '>' + inner + '</testcase>';
  });
  const count = announced === null ? '' : ' tests="' + announced + '"';
  yield '<?xml version="1.0" encoding="utf-8"?>\\n<testsuites' + count + '>\\n' + body.join('\\n') + '\\n</testsuites>\\n';
}
`;

/** Writes the reporter into `dir` (the call's report folder); its path. */
export function writeNodeReporter(dir: string): string {
  const file = path.join(dir, NODE_REPORTER_FILE);
  writeFileSync(file, REPORTER, { mode: 0o600 });
  return file;
}

/**
 * A baseline recorded with node's own JUnit reporter (every id `test::<name>`, before Vigil's
 * reporter) is compared with a report of today's in that form: each test by its own name, the
 * file and the ancestors left out, so a run begun before the change is still held to its tests.
 */
export function inBaselineForm(report: TestReport | null, baseline: TestReport | null): TestReport | null {
  if (!report || !baseline || baseline.tests.length === 0 || !baseline.tests.every((t) => t.id.startsWith('test::'))) return report;
  return {
    ...report,
    tests: report.tests.map((t) => ({
      ...t,
      id: `test::${
        t.id
          .slice(t.id.indexOf('::') + 2)
          .split(' > ')
          .at(-1) ?? ''
      }`,
    })),
  };
}
