/**
 * Test integrity measured from the run's start: what an agent does to its tests and their harness
 * to reach green without doing the work. Each finding blocks completion until a person waives it
 * (`vigil waive <run> <id>`) or a PRD checklist item asks for that change:
 *
 * - `test_deleted`: a test case the repository had when the run started is gone (its file
 *   deleted, or the case removed or renamed away);
 * - `skip_added`: a skip, xfail, only or todo marker added to a test file (`@pytest.mark.skip`,
 *   `self.skipTest`, `it.skip`, `test.only`, `{ skip: true }` …);
 * - `assertion_changed`: an assertion of a test file the run started with was removed or changed
 *   (its expected value edited, its comparison weakened); assertions added are the honest way;
 * - `harness_changed`: a file the test run or the gates read was changed (conftest files, pytest,
 *   tox and setup.cfg settings, `package.json`'s test script, vitest/jest/mocha configs, coverage
 *   thresholds, lint configs, CI workflows).
 *
 * Pure: the files' contents at the run's start and now come in as values; every pattern is
 * bounded (the files are the agent's).
 */

/** A file at the run's start and now; null: absent on that side. */
export interface FileDelta {
  file: string;
  before: string | null;
  after: string | null;
}

export const INTEGRITY_KINDS = ['test_deleted', 'skip_added', 'assertion_changed', 'harness_changed'] as const;
export type IntegrityKind = (typeof INTEGRITY_KINDS)[number];

export interface IntegrityFinding {
  kind: IntegrityKind;
  /** Stable across trees while the change stands: what a waiver names (`integrity:<id>`). */
  id: string;
  file: string;
  line: number | null;
  /** The baseline test it touches, when one is known. */
  test: string | null;
  message: string;
}

const MAX_LINES = 20_000;
const MAX_LINE = 2000;
const lines = (text: string): string[] => text.split('\n', MAX_LINES).map((l) => (l.length > MAX_LINE ? l.slice(0, MAX_LINE) : l));

type Lang = 'js' | 'py' | 'go' | 'rs';

function langOf(file: string): Lang | null {
  if (file.endsWith('.py')) return 'py';
  if (/\.(?:[cm]?[jt]s|[jt]sx)$/.test(file) && !file.endsWith('.d.ts')) return 'js';
  if (file.endsWith('_test.go')) return 'go';
  if (file.endsWith('.rs')) return 'rs';
  return null;
}

/**
 * Test files: JS/TS `*.test.*`, `*.spec.*`, under `test/`, `tests/`, `__tests__/`; Python `test_*.py`, `*_test.py`, under
 * `tests/`; Go `*_test.go`; Rust under `tests/`.
 */
export function isTestPath(p: string): boolean {
  const parts = p.split('/');
  const base = parts.pop() ?? '';
  const lang = langOf(base);
  if (lang === 'js')
    return /\.(?:test|spec)\.[^.]{1,10}$/.test(base) || parts.some((d) => d === '__tests__' || d === 'test' || d === 'tests');
  if (lang === 'py') return base.startsWith('test_') || base.endsWith('_test.py') || parts.includes('tests');
  if (lang === 'go') return true;
  if (lang === 'rs') return parts.includes('tests');
  return false;
}

const HARNESS_FILES: readonly RegExp[] = [
  /(^|\/)conftest\.py$/,
  /(^|\/)pytest\.ini$/,
  /(^|\/)tox\.ini$/,
  /(^|\/)noxfile\.py$/,
  /(^|\/)\.coveragerc$/,
  /(^|\/)(vitest|vite|jest|karma|playwright|cypress)\.config\.[cm]?[jt]s$/,
  /(^|\/)vitest\.workspace\.[cm]?[jt]s$/,
  /(^|\/)jest\.config\.json$/,
  /(^|\/)\.mocharc(\.[a-z]{2,4})?$/,
  /(^|\/)\.nycrc(\.[a-z]{2,4})?$/,
  /(^|\/)\.c8rc(\.json)?$/,
  /(^|\/)(\.eslintrc(\.[a-z]{2,4})?|eslint\.config\.[cm]?[jt]s)$/,
  /(^|\/)(ruff|\.ruff)\.toml$/,
  /(^|\/)\.flake8$/,
  /(^|\/)mypy\.ini$/,
  /(^|\/)tsconfig(\.[\w-]+)?\.json$/,
  /^\.github\/workflows\/[^/]+\.ya?ml$/,
  /^\.gitlab-ci\.yml$/,
  /^Jenkinsfile$/,
  /^\.circleci\//,
];

/** A file of the tests' harness by its name alone (conftest files, runner, coverage and lint configurations, CI workflows). */
export function isHarnessFile(file: string): boolean {
  return HARNESS_FILES.some((re) => re.test(file));
}

/** Sections of shared configuration files that only the tests and gates read. */
const HARNESS_SECTIONS: readonly { file: RegExp; section: RegExp }[] = [
  { file: /(^|\/)setup\.cfg$/, section: /^\s*\[(tool:pytest|coverage:[\w]+|flake8|mypy[\w:.-]*)\]/ },
  { file: /(^|\/)pyproject\.toml$/, section: /^\s*\[tool\.(pytest|coverage|ruff|mypy|hatch\.envs\.test)[\w.-]*\]/ },
];

/** The lines of the test-relevant sections of a shared configuration file (`[section]` up to the next one). */
function sectionLines(text: string | null, section: RegExp): string {
  if (text === null) return '';
  const out: string[] = [];
  let inside = false;
  for (const l of lines(text)) {
    if (/^\s*\[/.test(l)) inside = section.test(l);
    if (inside) out.push(l.trim());
  }
  return out.join('\n');
}

/** What `package.json` says about testing: its test scripts and the runners' own keys. */
function packageTestParts(text: string | null): string {
  if (text === null) return '';
  try {
    const pkg = JSON.parse(text) as Record<string, unknown>;
    const scripts = (typeof pkg.scripts === 'object' && pkg.scripts !== null ? pkg.scripts : {}) as Record<string, unknown>;
    const tests = Object.entries(scripts).filter(([k]) => /^(pre|post)?test\b|^test[:-]/.test(k));
    return JSON.stringify({
      scripts: Object.fromEntries(tests),
      jest: pkg.jest ?? null,
      mocha: pkg.mocha ?? null,
      c8: pkg.c8 ?? null,
      nyc: pkg.nyc ?? null,
    });
  } catch {
    return text;
  }
}

function harnessFindings(d: FileDelta): IntegrityFinding[] {
  const found = (what: string): IntegrityFinding[] => [
    {
      kind: 'harness_changed',
      id: `harness_changed:${d.file}`,
      file: d.file,
      line: null,
      test: null,
      message: `${d.file}: ${what} changed since the run started (the tests' harness: a person or a checklist item must ask for it)`,
    },
  ];
  if (HARNESS_FILES.some((re) => re.test(d.file)))
    return found(d.before === null ? 'a harness file was added' : d.after === null ? 'a harness file was deleted' : 'the harness');
  if (/(^|\/)package\.json$/.test(d.file) && packageTestParts(d.before) !== packageTestParts(d.after))
    return found('its test scripts or test runner settings');
  for (const s of HARNESS_SECTIONS)
    if (s.file.test(d.file) && sectionLines(d.before, s.section) !== sectionLines(d.after, s.section))
      return found('its test or lint settings');
  return [];
}

const SKIP: Record<Lang, RegExp> = {
  py: new RegExp(
    [
      /@(?:pytest\.mark\.(?:skip|skipif|xfail)|unittest\.(?:skip|skipIf|skipUnless|expectedFailure))\b/.source,
      /\b(?:self\.skipTest|pytest\.skip|pytest\.xfail)\s{0,5}\(/.source,
    ].join('|'),
  ),
  js: new RegExp(
    [
      /\b(?:it|test|describe|suite|context|Deno\.test)\s{0,5}\.\s{0,5}(?:skip|only|todo|fails|skipIf|runIf)\b/.source,
      /\b(?:xit|xdescribe|xtest|fit|fdescribe)\s{0,5}\(|\b(?:skip|todo|only)\s{0,5}:\s{0,5}(?:true|['"`])/.source,
      /\bt\s{0,5}\.\s{0,5}(?:skip|todo)\s{0,5}\(/.source,
    ].join('|'),
  ),
  go: /\bt\.(?:Skip|Skipf|SkipNow)\s{0,5}\(/,
  rs: /#\[\s{0,5}ignore\b/,
};
const CASE: Record<Lang, RegExp> = {
  py: /^\s{0,200}(?:async\s{1,10})?def\s{1,10}(test[A-Za-z0-9_]{0,200})\s{0,5}\(/,
  js: /^\s{0,200}(?:it|test|Deno\.test)(?:\.[A-Za-z]{1,20}){0,3}\s{0,5}\(\s{0,5}(['"`])([^'"`\n]{1,300})\1/,
  go: /^func\s{1,10}(Test[A-Za-z0-9_]{0,200})\s{0,5}\(/,
  rs: /^\s{0,200}fn\s{1,10}([a-z_][a-z0-9_]{0,200})\s{0,5}\(/,
};
const ASSERT: Record<Lang, RegExp> = {
  py: /^\s{0,200}assert\b|\bself\.(?:assert[A-Z][A-Za-z]{0,40}|fail)\s{0,5}\(|\bpytest\.(?:raises|approx|warns|fail)\b|\bassert_[a-z_]{1,40}\s{0,5}\(/,
  js: new RegExp(
    String.raw`\b(?:${[
      /expect(?:TypeOf)?\s{0,5}[(.]|assert(?:[A-Z][A-Za-z]{0,40}|\.[a-zA-Z]{1,40})?\s{0,5}\(/.source,
      /t\.(?:is|not|true|false|deepEqual|equal|ok|throws|like|snapshot)\s{0,5}\(/.source,
    ].join('|')})|\.should\b`,
  ),
  go: /\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b|\b(?:assert|require)\.[A-Z][A-Za-z]{0,40}\s{0,5}\(/,
  rs: /\b(?:assert|assert_eq|assert_ne|debug_assert)!\s{0,5}\(/,
};

const isComment = (t: string, lang: Lang): boolean =>
  lang === 'py' ? t.startsWith('#') : t.startsWith('//') || t.startsWith('/*') || t.startsWith('*');

function casesOf(text: string | null, lang: Lang): { name: string; line: number }[] {
  if (text === null) return [];
  const out: { name: string; line: number }[] = [];
  lines(text).forEach((l, i) => {
    const m = CASE[lang].exec(l);
    const name = m ? (lang === 'js' ? m[2] : m[1]) : undefined;
    if (name) out.push({ name, line: i + 1 });
  });
  return out;
}

/** The test case a line belongs to: the last declaration above it. */
function caseAt(cases: readonly { name: string; line: number }[], line: number): string | null {
  let at: string | null = null;
  for (const c of cases) if (c.line <= line) at = c.name;
  return at;
}

/** Per line (trimmed, comments and blanks left out), how many times it appears. */
function counted(text: string | null, keep: (t: string) => boolean): Map<string, number> {
  const m = new Map<string, number>();
  if (text === null) return m;
  for (const l of lines(text)) {
    const t = l.trim();
    if (t && keep(t)) m.set(t, (m.get(t) ?? 0) + 1);
  }
  return m;
}

function testFileFindings(d: FileDelta, lang: Lang): IntegrityFinding[] {
  const out: IntegrityFinding[] = [];
  const before = casesOf(d.before, lang);
  const after = new Set(casesOf(d.after, lang).map((c) => c.name));
  for (const c of before) {
    if (after.has(c.name)) continue;
    out.push({
      kind: 'test_deleted',
      id: `test_deleted:${d.file}::${c.name}`,
      file: d.file,
      line: c.line,
      test: c.name,
      message:
        `${d.file}: the test ${c.name} (line ${c.line} when the run started) is gone: ` +
        `${d.after === null ? 'its file was deleted' : 'deleted or renamed'}`,
    });
  }
  if (d.after === null) return out;
  // Markers and assertions: a line added (skip) or one the start had that is gone (assertion), by multiset difference.
  const had = counted(d.before, (t) => !isComment(t, lang));
  const afterCases = casesOf(d.after, lang);
  lines(d.after).forEach((l, i) => {
    const t = l.trim();
    if (!t || isComment(t, lang) || !SKIP[lang].test(l)) return;
    const n = had.get(t) ?? 0;
    if (n > 0) return void had.set(t, n - 1);
    const test = caseAt(afterCases, i + 2);
    out.push({
      kind: 'skip_added',
      id: `skip_added:${d.file}::${test ?? t.slice(0, 80)}`,
      file: d.file,
      line: i + 1,
      test,
      message: `${d.file}:${i + 1}: a skip/only/xfail/todo marker was added${test ? ` to ${test}` : ''}: ${t.slice(0, 120)}`,
    });
  });
  if (d.before === null) return out;
  const now = counted(d.after, (t) => !isComment(t, lang));
  lines(d.before).forEach((l, i) => {
    const t = l.trim();
    if (!t || isComment(t, lang) || !ASSERT[lang].test(l)) return;
    const n = now.get(t) ?? 0;
    if (n > 0) return void now.set(t, n - 1);
    const test = caseAt(before, i + 1);
    out.push({
      kind: 'assertion_changed',
      id: `assertion_changed:${d.file}::${test ?? '?'}::${t.slice(0, 120)}`,
      file: d.file,
      line: i + 1,
      test,
      message: `${d.file}:${i + 1}: an assertion of ${test ?? 'a test'} the run started with was changed or removed: ${t.slice(0, 120)}`,
    });
  });
  return out;
}

/** Every integrity finding of the files changed since the run started (see the file comment). */
export function integrityFindings(deltas: readonly FileDelta[]): IntegrityFinding[] {
  const out: IntegrityFinding[] = [];
  for (const d of deltas) {
    if (d.before === d.after) continue;
    out.push(...harnessFindings(d));
    const lang = langOf(d.file);
    if (lang !== null && isTestPath(d.file)) out.push(...testFileFindings(d, lang));
  }
  return out;
}
