/**
 * Each test run's per-test report, from the runner itself: how the test command is asked to write
 * one (`reportSetup`), and how it is read (`readReport`). The tests verdict
 * (rules/tests-verdict.ts) trusts the report, never the exit code alone.
 *
 * | runner | how it is asked | what is read |
 * |---|---|---|
 * | pytest | `PYTEST_ADDOPTS=--junitxml=…` (any command that runs pytest) | JUnit XML, written at the session's end |
 * | node's test runner | `NODE_OPTIONS=--test-reporter=<Vigil's reporter> …` beside its usual output | JUnit XML, each test named by its file |
 * | vitest | `--reporter=default --reporter=junit --outputFile.junit=…` appended | JUnit XML |
 * | jest | `--json --outputFile=…` appended | jest's JSON results |
 * | mocha | `--reporter=xunit --reporter-option=output=…` appended | xunit XML |
 * | go test | `GOFLAGS=-json` | `go test -json` events in the log |
 * | cargo test | — | libtest's `test … ok` lines in the log |
 * | unittest | `-v` appended when missing | its `… ok` lines and `Ran N tests` in the log |
 *
 * Arguments are appended only to a command that is the runner itself (`npx vitest run`,
 * `npm test` whose script runs it), never to a pipeline. The report folder is the call's own
 * (outside the repository, written by the sandboxed run and read here). JUnit XML is parsed with
 * fast-xml-parser (entities off); everything read is bounded.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import type { ReportFormat, TestCase, TestReport, TestStatus } from '../../schemas/test-report.js';
import { NODE_REPORT_FILE, NODE_REPORTER_FILE, writeNodeReporter } from './node-test-reporter.js';

/** Reports larger than this are not read (a suite of that size is judged by its summary). */
const MAX_REPORT_BYTES = 64 * 1024 * 1024;

export interface ReportSetup {
  /** The command to run (the configured one, with the runner's report arguments appended where they can be). */
  command: string;
  /** Environment the runner reads its report options from. */
  env: Record<string, string>;
  /** What is read after the run: a file of the report folder, or the log (file null). */
  source: { format: ReportFormat; file: string | null } | null;
}

const SIMPLE = /^[^;&|<>`$()\n]+$/;
const NPM_TEST = /^(?:npm|pnpm|yarn)\s+(?:run\s+)?test\b/;

/** Arguments appended to a command: after `--` for an npm-style script, directly otherwise; null when it cannot be done safely. */
export function appendArgs(command: string, args: string): string | null {
  if (!SIMPLE.test(command)) return null;
  if (NPM_TEST.test(command.trim())) return / -- /.test(command) ? `${command} ${args}` : `${command} -- ${args}`;
  return `${command} ${args}`;
}

/**
 * How `runner` is asked for a report in `dir` (the folder as the test process sees it, and the
 * host's: node's reporter is written into it), given the command and the environment it would
 * run with. A runner Vigil cannot ask gets no source: its
 * summary is judged.
 */
export function reportSetup(runner: string, command: string, dir: string, env: Readonly<Record<string, string>>): ReportSetup {
  const file = (name: string): string => path.posix.join(dir, name);
  const keep = { command, env: {}, source: null };
  switch (runner) {
    case 'pytest':
      return {
        command,
        env: { PYTEST_ADDOPTS: `${env.PYTEST_ADDOPTS ?? ''} --junitxml=${file('pytest.xml')}`.trim() },
        source: { format: 'junit', file: 'pytest.xml' },
      };
    case 'node-test':
      // Vigil's JUnit reporter, which names each test's file (lib/gates/node-test-reporter.ts).
      writeNodeReporter(dir);
      return {
        command,
        env: {
          NODE_OPTIONS: (
            `${env.NODE_OPTIONS ?? ''} --test-reporter=spec --test-reporter-destination=stdout ` +
            `--test-reporter=${file(NODE_REPORTER_FILE)} --test-reporter-destination=${file(NODE_REPORT_FILE)}`
          ).trim(),
        },
        source: { format: 'junit', file: NODE_REPORT_FILE },
      };
    case 'vitest': {
      const c = appendArgs(command, `--reporter=default --reporter=junit --outputFile.junit=${file('vitest.xml')}`);
      return c ? { command: c, env: {}, source: { format: 'junit', file: 'vitest.xml' } } : keep;
    }
    case 'jest': {
      const c = appendArgs(command, `--json --outputFile=${file('jest.json')}`);
      return c ? { command: c, env: {}, source: { format: 'jest-json', file: 'jest.json' } } : keep;
    }
    case 'mocha': {
      const c = appendArgs(command, `--reporter=xunit --reporter-option=output=${file('mocha.xml')}`);
      return c ? { command: c, env: {}, source: { format: 'junit', file: 'mocha.xml' } } : keep;
    }
    case 'go-test':
      return { command, env: { GOFLAGS: `${env.GOFLAGS ?? ''} -json`.trim() }, source: { format: 'go-json', file: null } };
    case 'cargo-test':
      return { command, env: {}, source: { format: 'libtest', file: null } };
    case 'unittest': {
      // Its per-test lines are those of `-v`.
      const c = /(?:^|\s)-v\b|--verbose\b/.test(command) ? command : appendArgs(command, '-v');
      return c ? { command: c, env: {}, source: { format: 'unittest', file: null } } : keep;
    }
    default:
      return keep;
  }
}

/** The runner a command runs, reading an npm-style `test` script for `npm test`. */
export function runnerOfCommand(command: string, repoPath: string): string {
  const c = command.trim();
  if (NPM_TEST.test(c)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(repoPath, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> };
      const script = typeof pkg.scripts?.test === 'string' ? pkg.scripts.test : '';
      if (/\bvitest\b/.test(script)) return 'vitest';
      if (/\bjest\b/.test(script)) return 'jest';
      if (/\bmocha\b/.test(script)) return 'mocha';
      if (/\bnode\b/.test(script) && /(?:^|\s)--test\b/.test(script)) return 'node-test';
      if (/\bpytest\b/.test(script)) return 'pytest';
    } catch {
      return 'command';
    }
    return 'command';
  }
  for (const [needle, name] of [
    [/\bvitest\b/, 'vitest'],
    [/\bjest\b/, 'jest'],
    [/\bmocha\b/, 'mocha'],
    [/\bnode\b[^|;&]*\s--test\b/, 'node-test'],
    [/\bpytest\b/, 'pytest'],
    [/\bunittest\b/, 'unittest'],
    [/\bgo\s+test\b/, 'go-test'],
    [/\bcargo\s+test\b/, 'cargo-test'],
  ] as const) {
    if (needle.test(c)) return name;
  }
  return 'command';
}

/** Reads the report a run left (null: none was written, or it cannot be read). */
export function readReport(setup: ReportSetup, hostDir: string, logPath: string): TestReport | null {
  if (!setup.source) return null;
  const where = setup.source.file === null ? logPath : path.join(hostDir, setup.source.file);
  let text: string;
  try {
    if (!existsSync(where) || statSync(where).size > MAX_REPORT_BYTES) return null;
    text = readFileSync(where, 'utf8');
  } catch {
    return null;
  }
  // The log holds every attempt of the activity: only the last one's output counts.
  if (setup.source.file === null) text = text.slice(Math.max(0, text.lastIndexOf('=== vigil: tests for ')));
  switch (setup.source.format) {
    case 'junit':
      return parseJunit(text);
    case 'jest-json':
      return parseJestJson(text);
    case 'go-json':
      return parseGoJson(text);
    case 'libtest':
      return parseLibtest(text);
    case 'unittest':
      return parseUnittest(text);
  }
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
type XmlNode = Record<string, unknown>;
const attr = (n: XmlNode, k: string): string | undefined => (typeof n[`@_${k}`] === 'string' ? (n[`@_${k}`] as string) : undefined);

/** JUnit XML (pytest, node's test runner, vitest; mocha's xunit): test cases under nested suites. */
export function parseJunit(text: string): TestReport | null {
  let doc: XmlNode;
  try {
    const parser = new XMLParser({ ignoreAttributes: false, processEntities: false, commentPropName: '#comment', parseTagValue: false });
    doc = parser.parse(text) as XmlNode;
  } catch {
    return null;
  }
  const tests: TestCase[] = [];
  let declared = 0;
  let declaredSeen = false;
  const visit = (n: XmlNode, suite: string): void => {
    for (const tc of asArray(n.testcase as XmlNode | XmlNode[] | undefined)) {
      if (typeof tc !== 'object' || tc === null) continue;
      const cls = attr(tc, 'classname') ?? suite;
      const name = attr(tc, 'name') ?? '';
      const status: TestStatus =
        'failure' in tc || attr(tc, 'failure') !== undefined ? 'failed' : 'error' in tc ? 'error' : 'skipped' in tc ? 'skipped' : 'passed';
      tests.push({ id: cls ? `${cls}::${name}` : name, status });
    }
    for (const s of asArray(n.testsuite as XmlNode | XmlNode[] | undefined)) {
      if (typeof s !== 'object' || s === null) continue;
      visit(s, attr(s, 'name') ?? suite);
    }
  };
  const root = (doc.testsuites ?? doc.testsuite) as XmlNode | undefined;
  if (root === undefined || typeof root !== 'object') return null;
  // The count the runner announced: on <testsuites>, else summed over the top suites, else node's `<!-- tests N -->`.
  const top = doc.testsuites !== undefined ? root : { testsuite: root };
  const announced = attr(root, 'tests');
  if (doc.testsuites !== undefined && announced !== undefined) {
    declared = Number(announced);
    declaredSeen = true;
  } else {
    for (const s of asArray(top.testsuite as XmlNode | XmlNode[] | undefined)) {
      const t = typeof s === 'object' && s !== null ? attr(s, 'tests') : undefined;
      if (t !== undefined) {
        declared += Number(t);
        declaredSeen = true;
      }
    }
  }
  for (const c of asArray(root['#comment'] as string | string[] | undefined)) {
    const m = /^\s*tests (\d+)\s*$/.exec(String(c));
    if (m && !declaredSeen) {
      declared = Number(m[1]);
      declaredSeen = true;
    }
  }
  visit(doc.testsuites !== undefined ? root : { testsuite: root }, '');
  // pytest 9 counts each subtest's report in `tests` (3 tests with 5 subtests announce 8) but lists
  // only the tests: its count is a bound there, not a total. pytest writes the file once, at the
  // session's end, so a list cut short is not what a smaller list means; every baseline test
  // must still be in it, and pass.
  const subtestsCounted = doc.testsuites !== undefined && attr(root, 'name') === 'pytest tests';
  const complete = !declaredSeen || declared === tests.length || (subtestsCounted && declared > tests.length);
  return {
    format: 'junit',
    complete,
    incomplete: complete ? null : `the report announced ${declared} tests and lists ${tests.length}`,
    tests,
  };
}

/** jest's `--json` results. */
export function parseJestJson(text: string): TestReport | null {
  let doc: {
    numTotalTests?: number;
    testResults?: { name?: string; assertionResults?: { fullName?: string; title?: string; status?: string }[] }[];
  };
  try {
    doc = JSON.parse(text) as typeof doc;
  } catch {
    return null;
  }
  const tests: TestCase[] = [];
  for (const file of doc.testResults ?? []) {
    const rel = file.name ?? '';
    for (const a of file.assertionResults ?? []) {
      const s = a.status;
      const status: TestStatus = s === 'passed' ? 'passed' : s === 'failed' ? 'failed' : 'skipped';
      tests.push({ id: `${rel}::${a.fullName ?? a.title ?? ''}`, status });
    }
  }
  const total = typeof doc.numTotalTests === 'number' ? doc.numTotalTests : tests.length;
  const complete = total === tests.length;
  return { format: 'jest-json', complete, incomplete: complete ? null : `jest announced ${total} tests and lists ${tests.length}`, tests };
}

/** `go test -json` events: each test's last action, each package's end. */
export function parseGoJson(text: string): TestReport | null {
  const last = new Map<string, TestStatus>();
  const started = new Set<string>();
  const ended = new Set<string>();
  let any = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let e: { Action?: string; Package?: string; Test?: string };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      continue;
    }
    if (!e.Package || !e.Action) continue;
    any = true;
    started.add(e.Package);
    if (!e.Test) {
      if (e.Action === 'pass' || e.Action === 'fail' || e.Action === 'skip') ended.add(e.Package);
      continue;
    }
    if (e.Test.includes('/')) continue; // subtests count with their test
    const id = `${e.Package}::${e.Test}`;
    if (e.Action === 'run' && !last.has(id)) last.set(id, 'error'); // started, not (yet) ended
    if (e.Action === 'pass') last.set(id, 'passed');
    else if (e.Action === 'fail') last.set(id, 'failed');
    else if (e.Action === 'skip') last.set(id, 'skipped');
  }
  if (!any) return null;
  const open = [...started].filter((p) => !ended.has(p));
  const unfinished = [...last.values()].filter((s) => s === 'error').length;
  const complete = open.length === 0 && unfinished === 0;
  return {
    format: 'go-json',
    complete,
    incomplete: complete
      ? null
      : `${open.length} package(s) never reported an end${unfinished ? `, ${unfinished} test(s) started and never ended` : ''}`,
    tests: [...last].map(([id, status]) => ({ id, status })),
  };
}

/** libtest (cargo test): `running N tests`, then one `test name ... ok|FAILED|ignored` per test, per binary. */
export function parseLibtest(text: string): TestReport | null {
  const tests: TestCase[] = [];
  let announced = 0;
  let results = 0;
  let any = false;
  for (const line of text.split('\n')) {
    const run = /^running (\d+) tests?$/.exec(line.trim());
    if (run) {
      any = true;
      announced += Number(run[1]);
      continue;
    }
    const t = /^test (\S.{0,500}?) \.\.\. (ok|FAILED|ignored)(?:,.*)?$/.exec(line.trim());
    if (t) tests.push({ id: t[1] as string, status: t[2] === 'ok' ? 'passed' : t[2] === 'FAILED' ? 'failed' : 'skipped' });
    if (/^test result: /.test(line.trim())) results += 1;
  }
  if (!any) return null;
  const complete = tests.length === announced && results > 0;
  return {
    format: 'libtest',
    complete,
    incomplete: complete
      ? null
      : `libtest announced ${announced} tests and reported ${tests.length}${results ? '' : ', with no result line'}`,
    tests,
  };
}

/** unittest's `-v` output: `test_x (module.Class.test_x) ... ok`, then `Ran N tests` and OK/FAILED. */
export function parseUnittest(text: string): TestReport | null {
  const tests: TestCase[] = [];
  let ran: number | null = null;
  let ended = false;
  let pending: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const m = /^(test\w{0,300}) \(([\w.]{1,500})\)(?:\s*$|\s(.{0,2000}))/.exec(line);
    if (m) pending = `${m[2]}.${m[1]}`.replace(/\.(test\w+)\.\1$/, '.$1');
    const outcome = / \.\.\. (ok|FAIL|ERROR|skipped\b.*|expected failure|unexpected success)\s*$/.exec(line);
    if (outcome && pending !== null) {
      const o = outcome[1] as string;
      const status: TestStatus =
        o === 'ok' ? 'passed' : o === 'FAIL' || o === 'unexpected success' ? 'failed' : o === 'ERROR' ? 'error' : 'skipped';
      tests.push({ id: pending, status });
      pending = null;
    }
    const r = /^Ran (\d+) tests? in /.exec(line);
    if (r) ran = Number(r[1]);
    if (ran !== null && /^(OK|FAILED)\b/.test(line)) ended = true;
  }
  if (ran === null && tests.length === 0) return null;
  const complete = ran !== null && ended && ran === tests.length;
  return {
    format: 'unittest',
    complete,
    incomplete: complete
      ? null
      : ran === null
        ? `it reported ${tests.length} tests and never said how many ran`
        : `it ran ${ran} tests and reported ${tests.length}`,
    tests,
  };
}
