/**
 * The Wall's judgement (knob `acceptanceTests`): the command that runs only the sealed acceptance
 * files, the verdict of their run — the tests verdict held to the acceptance tests the base tree
 * reported, with a skipped acceptance test never green — and what the builder learns of a
 * failure: how many fail and their names, never their source or their output.
 *
 * Pure: the report and the tests verdict come in as values.
 */
import { MAX_FAILING_NAMES, type AcceptanceResult } from '../schemas/acceptance.js';
import type { TestsVerdict } from './tests-verdict.js';

/** A test's name: the last part of its report id (`tests/test_wall.py::test_negative` is `test_negative`). */
export function testName(id: string): string {
  const last = id.split('::').at(-1) ?? id;
  return last.replace(/#\d+$/, '').slice(0, 200);
}

const quote = (s: string): string => (/^[\w./@+-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);
const NPM_TEST = /^(?:npm|pnpm|yarn)\s+(?:run\s+)?test\b/;

/**
 * The command line that runs the acceptance test files `tests` (paths relative to the tree) with
 * `command`: appended (after `--` for an npm-style script), as modules for unittest; go and cargo
 * run their packages as they are (the files laid in them are part of those).
 */
export function acceptanceCommandLine(command: string, runner: string, tests: readonly string[]): string {
  if (runner === 'go-test' || runner === 'cargo-test' || tests.length === 0) return command;
  if (runner === 'unittest') {
    const modules = tests.filter((t) => t.endsWith('.py')).map((t) => t.slice(0, -3).replaceAll('/', '.'));
    const base = command.replace(/\s+discover\b.*$/, '');
    return `${base}${/(?:^|\s)-v\b/.test(base) ? '' : ' -v'} ${modules.map(quote).join(' ')}`;
  }
  const files = tests.map(quote).join(' ');
  if (NPM_TEST.test(command.trim())) return / -- /.test(command) ? `${command} ${files}` : `${command} -- ${files}`;
  return `${command} ${files}`;
}

/** The acceptance run's verdict, from the tests verdict of its report (held to the base tree's acceptance tests). */
export function acceptanceVerdict(tv: TestsVerdict): Pick<AcceptanceResult, 'verdict' | 'reason' | 'passed' | 'failed' | 'failing'> {
  const f = tv.facts;
  const failing = [...new Set([...(f?.failing ?? []), ...(f?.notPassed ?? []), ...(f?.missing ?? [])].map(testName))].slice(
    0,
    MAX_FAILING_NAMES,
  );
  const counts = { passed: f?.passed ?? null, failed: f ? f.failed + f.skipped + f.missingCount : null, failing };
  if (tv.verdict === 'pass' && f && f.skipped > 0)
    return {
      verdict: 'fail',
      reason: `acceptance: ${f.skipped} of ${f.total} acceptance tests were skipped; every one must pass`,
      ...counts,
    };
  return { verdict: tv.verdict, reason: `acceptance: ${tv.reason}`.slice(0, 500), ...counts };
}

/** The builder's findings after acceptance refused a claim: the count and the names, nothing of the tests themselves. */
export function acceptanceFindings(r: Pick<AcceptanceResult, 'verdict' | 'reason' | 'failed' | 'failing'>, iteration: number): string {
  const head =
    `Completion at iteration ${iteration} was refused: the acceptance tests, which a person wrote from the PRD and which you ` +
    `cannot see, did not pass.`;
  if (r.verdict === 'refused' || r.verdict === 'inconclusive')
    return `${head}\nThey could not be judged on this tree. Keep to what the PRD asks; the run's status says why for a person.`;
  const n = r.failed ?? r.failing.length;
  const names = r.failing.length ? `\nFailing: ${r.failing.join(', ')}` : '';
  return (
    `${head}\n${n} acceptance test${n === 1 ? '' : 's'} failed.${names}\nDo what the PRD asks for every input it describes, not ` +
    `only for the inputs the repository's tests use; then claim again.`
  );
}
