/**
 * The test gate's two halves that do not run anything long: which test command a repository
 * implies when none is configured (spec §5.1 "Test suite detection"), and what a runner's output
 * says (counts and a verdict).
 *
 * The verdict never turns "nothing was tested" into green: a runner that executed zero tests is
 * inconclusive, whatever its exit code. Output is read line by line with anchored, bounded
 * patterns, so a hostile 64 KiB of output costs linear time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { findBinary } from '../find-binary.js';

export interface DetectedRunner {
  runner: string;
  command: string;
  /** Why this runner was chosen (shown in logs). */
  reason: string;
}

export interface TestSummary {
  passed: number | null;
  failed: number | null;
  /** Tests executed (passed + failed); 0 means the runner ran nothing. Null when unknown. */
  ran: number | null;
  verdict: 'pass' | 'fail' | 'inconclusive';
  reason: string;
}

// ---------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------

/** `npm init`'s placeholder test script: a project without tests, not a failing suite. */
const NPM_PLACEHOLDER = /no test specified/;
const PYTEST_IMPORT_TIMEOUT_MS = 5000;

function readText(p: string): string | null {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return null;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function listDir(p: string): string[] {
  try {
    return readdirSync(p);
  } catch {
    return [];
  }
}

interface PackageJson {
  scripts: Record<string, string>;
  workspaces: boolean;
}

function readPackageJson(repoPath: string): PackageJson | null {
  const text = readText(path.join(repoPath, 'package.json'));
  if (text === null) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { scripts: {}, workspaces: false }; // a broken package.json is still a Node project
  }
  const obj = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const scripts: Record<string, string> = {};
  if (typeof obj.scripts === 'object' && obj.scripts !== null) {
    for (const [k, v] of Object.entries(obj.scripts as Record<string, unknown>)) if (typeof v === 'string') scripts[k] = v;
  }
  const ws = obj.workspaces;
  const workspaces = Array.isArray(ws) ? ws.length > 0 : typeof ws === 'object' && ws !== null;
  return { scripts, workspaces };
}

/** The runner a test script names; `npm-test` when it names none we know. */
function runnerOfScript(script: string): string {
  if (/\bvitest\b/.test(script)) return 'vitest';
  if (/\bjest\b/.test(script)) return 'jest';
  if (/\bmocha\b/.test(script)) return 'mocha';
  if (/\bnode\b/.test(script) && /(?:^|\s)--test\b/.test(script)) return 'node-test';
  return 'npm-test';
}

function detectNode(repoPath: string, pkg: PackageJson): DetectedRunner | null {
  const test = pkg.scripts.test?.trim();
  if (test && !NPM_PLACEHOLDER.test(test)) {
    const runner = runnerOfScript(test);
    return { runner, command: 'npm test --silent', reason: `package.json scripts.test${runner === 'npm-test' ? '' : ` runs ${runner}`}` };
  }
  const bin = (name: string): boolean => existsSync(path.join(repoPath, 'node_modules', '.bin', name));
  const turbo = existsSync(path.join(repoPath, 'turbo.json'));
  const pnpm = existsSync(path.join(repoPath, 'pnpm-workspace.yaml'));
  if (pkg.workspaces || pnpm || turbo) {
    if (turbo && bin('turbo'))
      return { runner: 'turbo', command: 'npx --no-install turbo run test', reason: 'turbo.json and a local turbo: monorepo tests' };
    if (pnpm && !pkg.workspaces && findBinary('pnpm')) {
      return {
        runner: 'pnpm-workspaces',
        command: 'pnpm -r --if-present run test',
        reason: 'pnpm-workspace.yaml: tests of every workspace package',
      };
    }
    return {
      runner: 'npm-workspaces',
      command: 'npm test --workspaces --if-present',
      reason: 'monorepo without a root test script: tests of every workspace',
    };
  }
  if (bin('vitest')) return { runner: 'vitest', command: 'npx --no-install vitest run', reason: 'vitest in node_modules/.bin' };
  if (bin('jest'))
    return { runner: 'jest', command: 'npx --no-install jest --passWithNoTests --forceExit', reason: 'jest in node_modules/.bin' };
  if (bin('mocha')) return { runner: 'mocha', command: 'npx --no-install mocha', reason: 'mocha in node_modules/.bin' };
  return null;
}

const PY_CONFIGS = ['pyproject.toml', 'setup.cfg', 'tox.ini'];
const isPyTest = (name: string): boolean => /^test_.{0,200}\.py$/.test(name) || /^.{1,200}_test\.py$/.test(name);

/** Python test files at the root, or any .py under tests/ or test/ (one level of sub-folders). */
function hasPythonTests(repoPath: string): boolean {
  if (listDir(repoPath).some(isPyTest)) return true;
  for (const d of ['tests', 'test']) {
    const dir = path.join(repoPath, d);
    if (!isDir(dir)) continue;
    for (const e of listDir(dir)) {
      if (e.endsWith('.py')) return true;
      const sub = path.join(dir, e);
      if (isDir(sub) && listDir(sub).some((n) => n.endsWith('.py'))) return true;
    }
  }
  return false;
}

function pytestImportable(repoPath: string): boolean {
  const r = spawnSync('python3', ['-c', 'import pytest'], {
    cwd: repoPath,
    stdio: 'ignore',
    timeout: PYTEST_IMPORT_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  return r.status === 0;
}

function detectPython(repoPath: string): DetectedRunner | null {
  const configured =
    existsSync(path.join(repoPath, 'pytest.ini')) || PY_CONFIGS.some((f) => (readText(path.join(repoPath, f)) ?? '').includes('pytest'));
  const tests = hasPythonTests(repoPath);
  if (!configured && !tests) return null;
  if (pytestImportable(repoPath)) {
    return {
      runner: 'pytest',
      command: 'python3 -m pytest --tb=short -q',
      reason: configured ? 'pytest configured' : 'Python tests and pytest installed',
    };
  }
  if (tests) return { runner: 'unittest', command: 'python3 -m unittest discover -v', reason: 'Python tests, pytest not installed' };
  return null;
}

/**
 * The test command a repository implies, or null when nothing is runnable. Node first (its
 * scripts say what the project means by "test"), then Python, Go, Rust.
 */
export function detectTestRunner(repoPath: string): DetectedRunner | null {
  const pkg = readPackageJson(repoPath);
  if (pkg) {
    const node = detectNode(repoPath, pkg);
    if (node) return node;
  }
  const py = detectPython(repoPath);
  if (py) return py;
  if (existsSync(path.join(repoPath, 'go.mod'))) return { runner: 'go-test', command: 'go test ./...', reason: 'go.mod' };
  if (existsSync(path.join(repoPath, 'Cargo.toml'))) return { runner: 'cargo-test', command: 'cargo test', reason: 'Cargo.toml' };
  return null;
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

/** Only the end of the output is read: every runner prints its summary last. */
const MAX_READ = 64 * 1024;
const MAX_LINE = 4096;

type Family = 'vitest' | 'mocha' | 'node' | 'pytest' | 'unittest' | 'go' | 'cargo' | 'plain';

const FAMILIES_OF: Record<string, readonly Family[]> = {
  vitest: ['vitest'],
  jest: ['vitest'],
  mocha: ['mocha'],
  'node-test': ['node'],
  pytest: ['pytest'],
  unittest: ['unittest'],
  'go-test': ['go'],
  'cargo-test': ['cargo'],
};
const ALL_FAMILIES: readonly Family[] = ['vitest', 'mocha', 'node', 'pytest', 'unittest', 'go', 'cargo', 'plain'];

/** Counts one family of summary lines gathered from the output (summed across runs, e.g. workspaces). */
class Tally {
  seen = false;
  /** Line number of the last summary line (the family printed last wins when several match). */
  last = -1;
  passed = 0;
  failed = 0;
  /** Runs that said they found no tests at all. */
  noTests = false;
  /** go test: packages reported `ok` with tests, so something ran even without counts. */
  goOk = 0;
  goFailLines = 0;
  /** go test: packages reported `FAIL` (failing tests, or a build failure). */
  goFailPkg = 0;
  goPassLines = 0;
  /** Set when `passed` is not known (go without -v). */
  passedUnknown = false;
  hit(line: number): void {
    this.seen = true;
    this.last = line;
  }
}

const ANSI = /\x1b\[[0-9;]{0,20}[A-Za-z]/g; // eslint-disable-line no-control-regex

const VITEST_TESTS = /^\s{0,20}Tests:?\s{1,20}(.{1,300})$/;
const COUNT_ITEM = /(\d{1,9}) (failed|passed|skipped|todo|pending|total)\b/g;
const NO_TEST_FILES = /^\s{0,20}(?:No test files found|No tests found)\b/;
const MOCHA = /^\s{0,20}(\d{1,9}) (passing|failing|pending)\b/;
const MOCHA_NONE = /^\s{0,20}Error: No test files found\b/;
const NODE = /^(?:#|ℹ) (tests|pass|fail) (\d{1,9})\s{0,20}$/;
const PYTEST_TAIL = /^(.{1,400}?) in \d{1,9}(?:\.\d{1,9})?s(?: \(\d{1,3}:\d{2}:\d{2}\))?$/;
const PYTEST_ITEM =
  /^(\d{1,9}) (failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun|subtests passed|subtests failed)$/;
const UNITTEST_RAN = /^Ran (\d{1,9}) tests? in /;
const UNITTEST_END = /^(OK|FAILED)(?: \((.{0,200})\))?\s{0,20}$/;
const GO_OK = /^ok\s{1,20}\S{1,500}\s{1,20}(?:\(cached\)|\d{1,9}(?:\.\d{1,9})?s)(.{0,100})$/;
const GO_FAIL_PKG = /^FAIL\s{1,20}\S{1,500}(?:\s|$)/;
const GO_NO_FILES = /^\?\s{1,20}\S{1,500}\s{1,20}\[no test files\]/;
const GO_TEST_LINE = /^\s{0,40}--- (FAIL|PASS): (\S{1,300})/;
const CARGO = /^test result: (?:ok|FAILED)\. (\d{1,9}) passed; (\d{1,9}) failed;/;
const PLAIN = /^(?:\w{1,40}: )?(\d{1,9}) passed, (\d{1,9}) failed(?:, \d{1,9} skipped)?\s{0,20}$/;

/** Strips pytest's `====` frame (linear: plain loops, no regex backtracking). */
function unframe(line: string): string {
  let a = 0;
  let b = line.length;
  while (a < b && (line[a] === '=' || line[a] === ' ')) a++;
  while (b > a && (line[b - 1] === '=' || line[b - 1] === ' ')) b--;
  return line.slice(a, b);
}

/** The first failing test's name, where the runner prints one on a line of its own (stable: no durations). */
function failingName(line: string): string | null {
  let m = /^--- FAIL: (\S{1,200})/.exec(line.trimStart());
  if (m) return m[1] ?? null;
  m = /^FAILED ([^\s(]\S{0,199})/.exec(line); // pytest short summary: "FAILED tests/test_a.py::test_x - assert ..."
  if (m) return m[1] ?? null;
  m = /^(?:FAIL|ERROR): (\S{1,200})/.exec(line); // unittest
  if (m) return m[1] ?? null;
  m = /^test (\S{1,200}) \.\.\. FAILED$/.exec(line); // cargo
  if (m) return m[1] ?? null;
  m = /^not ok \d{1,9} - (.{1,200})$/.exec(line); // node --test (TAP)
  if (m) return (m[1] ?? '').replace(/\s{0,5}#.{0,100}$/, '') || null;
  m = /^\s{0,4}(?:FAIL|×|✗|✖) {1,4}(\S.{0,199})$/.exec(line); // vitest/jest/node spec
  if (m) return (m[1] ?? '').replace(/ {0,4}\(?\d{1,9}(?:\.\d{1,9})? ?m?s\)?$/, '').trim() || null;
  return null;
}

function parse(lines: readonly string[], families: readonly Family[]): Map<Family, Tally> {
  const want = new Set(families);
  const tallies = new Map<Family, Tally>();
  const t = (f: Family): Tally => {
    let x = tallies.get(f);
    if (!x) tallies.set(f, (x = new Tally()));
    return x;
  };
  let unittestRan = -1;
  lines.forEach((line, i) => {
    if (line.trim() === '') return; // no summary is blank; skipping keeps a flood of newlines cheap
    if (want.has('vitest')) {
      const m = VITEST_TESTS.exec(line);
      if (m) {
        let any = false;
        for (const item of (m[1] ?? '').matchAll(COUNT_ITEM)) {
          any = true;
          if (item[2] === 'passed') t('vitest').passed += Number(item[1]);
          else if (item[2] === 'failed') t('vitest').failed += Number(item[1]);
        }
        if (any) t('vitest').hit(i);
      } else if (NO_TEST_FILES.test(line)) {
        t('vitest').noTests = true;
        t('vitest').hit(i);
      }
    }
    if (want.has('mocha')) {
      const m = MOCHA.exec(line);
      if (m) {
        if (m[2] === 'passing') t('mocha').passed += Number(m[1]);
        else if (m[2] === 'failing') t('mocha').failed += Number(m[1]);
        t('mocha').hit(i);
      } else if (MOCHA_NONE.test(line)) {
        t('mocha').noTests = true;
        t('mocha').hit(i);
      }
    }
    if (want.has('node')) {
      const m = NODE.exec(line);
      if (m) {
        if (m[1] === 'pass') t('node').passed += Number(m[2]);
        else if (m[1] === 'fail') t('node').failed += Number(m[2]);
        t('node').hit(i);
      }
    }
    if (want.has('pytest')) {
      const core = line.length > 0 && (line[0] === '=' || /^\d|^no tests ran/.test(line)) ? unframe(line) : '';
      if (core === 'no tests ran' || /^no tests ran in /.test(core)) {
        t('pytest').noTests = true;
        t('pytest').hit(i);
      } else if (core) {
        const m = PYTEST_TAIL.exec(core);
        const items = m ? (m[1] ?? '').split(', ') : [];
        if (items.length > 0 && items.every((it) => PYTEST_ITEM.test(it))) {
          for (const it of items) {
            const [n, kind] = [Number(it.slice(0, it.indexOf(' '))), it.slice(it.indexOf(' ') + 1)];
            if (kind === 'passed') t('pytest').passed += n;
            else if (kind === 'failed' || kind === 'error' || kind === 'errors') t('pytest').failed += n;
          }
          t('pytest').hit(i);
        }
      }
    }
    if (want.has('unittest')) {
      const ran = UNITTEST_RAN.exec(line);
      if (ran) {
        // Counted as passed until the closing OK/FAILED line says how many failed or were skipped.
        unittestRan = Number(ran[1]);
        if (unittestRan === 0) t('unittest').noTests = true;
        t('unittest').passed += unittestRan;
        t('unittest').hit(i);
      } else if (unittestRan >= 0) {
        const end = UNITTEST_END.exec(line);
        if (end) {
          let failed = 0;
          let skipped = 0;
          for (const part of (end[2] ?? '').split(', ')) {
            const kv = /^(failures|errors|skipped|expected failures|unexpected successes)=(\d{1,9})$/.exec(part);
            if (!kv) continue;
            if (kv[1] === 'failures' || kv[1] === 'errors' || kv[1] === 'unexpected successes') failed += Number(kv[2]);
            else skipped += Number(kv[2]);
          }
          const tally = t('unittest');
          const notPassed = Math.min(unittestRan, failed + skipped);
          tally.failed += Math.min(unittestRan, failed);
          tally.passed -= notPassed;
          tally.hit(i);
          unittestRan = -1;
        }
      }
    }
    if (want.has('go')) {
      const ok = GO_OK.exec(line);
      if (ok) {
        if (/\[no tests to run\]/.test(ok[1] ?? '')) t('go').noTests = true;
        else t('go').goOk++;
        t('go').hit(i);
      } else if (GO_NO_FILES.test(line)) {
        t('go').noTests = true;
        t('go').hit(i);
      } else if (GO_FAIL_PKG.test(line)) {
        t('go').goFailPkg++;
        t('go').hit(i);
      } else {
        const tl = GO_TEST_LINE.exec(line);
        // Subtests are indented; only top-level tests are counted.
        if (tl && line.startsWith('---')) {
          if (tl[1] === 'FAIL') t('go').goFailLines++;
          else t('go').goPassLines++;
          t('go').hit(i);
        }
      }
    }
    if (want.has('cargo')) {
      const m = CARGO.exec(line);
      if (m) {
        t('cargo').passed += Number(m[1]);
        t('cargo').failed += Number(m[2]);
        t('cargo').hit(i);
      }
    }
    if (want.has('plain')) {
      const m = PLAIN.exec(line);
      if (m) {
        t('plain').passed += Number(m[1]);
        t('plain').failed += Number(m[2]);
        t('plain').hit(i);
      }
    }
  });
  return tallies;
}

/** The counts a family's tally stands for. */
function counts(family: Family, tally: Tally): { passed: number | null; failed: number | null; ran: number | null; noTests: boolean } {
  if (family === 'go') {
    const failed = tally.goFailLines;
    const passed = tally.goPassLines > 0 ? tally.goPassLines : null; // only `go test -v` lists passing tests
    const ranSomething = tally.goOk > 0 || tally.goFailPkg > 0 || tally.goFailLines > 0 || tally.goPassLines > 0;
    return {
      passed,
      failed,
      ran: ranSomething ? (passed === null ? null : passed + failed) : tally.noTests ? 0 : null,
      noTests: tally.noTests && !ranSomething,
    };
  }
  const ran = tally.passed + tally.failed;
  return { passed: tally.passed, failed: tally.failed, ran, noTests: tally.noTests && ran === 0 };
}

/**
 * Counts and a verdict from a runner's output and exit code. Non-zero exit fails, except when the
 * runner says it found no tests (pytest/unittest exit 5, "No test files found"): inconclusive.
 * Exit 0 with zero tests executed is inconclusive; exit 0 with unknown counts passes.
 */
export function summarizeTestOutput(runner: string, output: string, exitCode: number): TestSummary {
  const text = output.length > MAX_READ ? output.slice(-MAX_READ) : output;
  const lines = text.split('\n').map((l) => (l.length > MAX_LINE ? l.slice(0, MAX_LINE) : l).replace(ANSI, '').replace(/\r$/, ''));

  const own = FAMILIES_OF[runner];
  let tallies = parse(lines, own ?? ALL_FAMILIES);
  if (own && ![...tallies.values()].some((x) => x.seen)) tallies = parse(lines, ALL_FAMILIES); // e.g. a script that wraps another runner
  let family: Family | null = null;
  let best: Tally | null = null;
  for (const [f, tally] of tallies) {
    if (tally.seen && (!best || tally.last > best.last)) {
      family = f;
      best = tally;
    }
  }
  const c = family && best ? counts(family, best) : { passed: null, failed: null, ran: null, noTests: false };
  let firstFailing: string | null = null;
  for (const line of lines) {
    if (line.length < 6) continue; // shorter than any failure line
    firstFailing = failingName(line);
    if (firstFailing) break;
  }

  const name = runner || 'tests';
  const tallyText = (): string => {
    const parts: string[] = [];
    if (c.failed !== null) parts.push(`${c.failed} failed`);
    if (c.passed !== null) parts.push(`${c.passed} passed`);
    return parts.join(', ');
  };
  const noTestsExit = exitCode === 5 && (runner === 'pytest' || runner === 'unittest' || family === 'pytest' || family === 'unittest');

  if (exitCode !== 0) {
    if ((noTestsExit || c.noTests) && !c.failed) {
      return { passed: c.passed, failed: c.failed, ran: 0, verdict: 'inconclusive', reason: `${name}: no tests ran (exit ${exitCode})` };
    }
    const counted = tallyText();
    const first = firstFailing ? `; first: ${firstFailing}` : '';
    return { ...pick(c), verdict: 'fail', reason: clip(`${name}: ${counted ? `${counted} ` : ''}(exit ${exitCode})${first}`) };
  }
  if (c.ran === 0) return { ...pick(c), verdict: 'inconclusive', reason: `${name}: zero tests ran` };
  if (c.failed !== null && c.failed > 0) {
    return {
      ...pick(c),
      verdict: 'fail',
      reason: clip(`${name}: ${tallyText()} although it exited 0${firstFailing ? `; first: ${firstFailing}` : ''}`),
    };
  }
  const counted = tallyText();
  return { ...pick(c), verdict: 'pass', reason: counted ? `${name}: ${counted}` : `${name}: exit 0 (counts unknown)` };
}

const pick = (c: { passed: number | null; failed: number | null; ran: number | null }): Pick<TestSummary, 'passed' | 'failed' | 'ran'> => ({
  passed: c.passed,
  failed: c.failed,
  ran: c.ran,
});

function clip(s: string): string {
  const one = s.replace(/[\r\n\t]+/g, ' ');
  return one.length > 300 ? `${one.slice(0, 297)}...` : one;
}
