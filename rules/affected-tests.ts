/**
 * Affected tests between completion checks: which test files a change can affect, and when the
 * whole suite must run instead. The tests gate of an ordinary iteration runs only the test files
 * whose imports (followed through the repository's own modules) reach a file changed since the
 * run's last full test run, and the files that failed then; the full suite runs when the test map
 * is missing or made for another command, every `fullEvery` iterations, and whenever a harness or
 * configuration file, a file no import graph covers, or the set of test files changed. The test
 * map (`TestMap`) is kept per run and remade by every full run. A partial run never stands for a
 * completion check: the workflow runs the full suite there (workflows/run/gates.ts).
 *
 * Only runners whose per-test report names each test's file can be judged on a selection:
 * vitest (JUnit `classname` is the file), jest (its JSON names the file), node's test runner
 * (Vigil's reporter names the file), pytest and unittest (the dotted module) and go test (the
 * package, a selection's unit: `goGraph` is the go tool's own graph). Where the runner has its
 * own related-tests mode (vitest related, jest --findRelatedTests) it is handed the changed files
 * beside Vigil's selection and may add what its module graph sees (selection-command.ts). A partial run is held to the baseline tests of the files it ran
 * (`baselineOfSelection`).
 *
 * Pure: the file list, the files' texts and the kept map come in as values
 * (activities/gates/affected-tests.ts reads them); every pattern is bounded (the files are the
 * agent's).
 */
import type { TestMap, TestReport } from '../schemas/test-report.js';
import { isHarnessFile } from './integrity.js';

export type AffectedLang = 'js' | 'py' | 'go';

/** The languages whose import graph Vigil reads from the files' text (Go's is the go tool's own, `goGraph`). */
export type TextLang = Exclude<AffectedLang, 'go'>;

/** The runners whose tests can be selected, and the language of their import graph. */
export const SELECTABLE_RUNNERS: Readonly<Record<string, AffectedLang>> = {
  vitest: 'js',
  jest: 'js',
  'node-test': 'js',
  pytest: 'py',
  unittest: 'py',
  'go-test': 'go',
};

/** Per test file: the repository files it imports, directly or through other repository files; `dynamic`: imports Vigil cannot follow. */
export interface ImportGraph {
  tests: Record<string, string[]>;
  dynamic: string[];
  /** Of `dynamic`, those only for a name the repository may alias to its own files (a runner resolving its own graph follows them). */
  aliased?: string[];
}

/** `bySelection`: the full suite because of what the selection came to (nothing, or everything), not because a selection was ruled out. */
export type TestPlan = { kind: 'full'; reason: string; bySelection?: boolean } | { kind: 'affected'; files: string[]; total: number };

const MAX_LINES = 20_000;
const MAX_LINE = 2000;
const JS_EXT = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
const JS_SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
/** A name that can be put on a command line as it is (no shell word, no space). */
export const SAFE_NAME = /^[\w@+.-][\w@+./-]{0,400}$/;

/** A file the language's import graph covers. */
export function isSource(file: string, lang: AffectedLang): boolean {
  if (lang === 'go') return file.endsWith('.go');
  return lang === 'py' ? file.endsWith('.py') : JS_SOURCE.test(file) && !file.endsWith('.d.ts');
}

/**
 * A file the runner runs as tests by default (pytest: `test_*.py`, `*_test.py`; unittest's
 * discovery: `test*.py`; vitest, jest: `*.test.*`, `*.spec.*`; node's test runner: `test.js`,
 * `test-*.js`, `*.test.js`, `*-test.js`, `*_test.js` and every script under a `test` folder).
 */
export function isTestFile(file: string, lang: AffectedLang, runner?: string): boolean {
  const base = file.slice(file.lastIndexOf('/') + 1);
  if (lang === 'go') return base.endsWith('_test.go');
  if (runner === 'unittest') return /^test.{0,300}\.py$/.test(base);
  if (runner === 'node-test')
    return /\.[cm]?js$/.test(base) && (/^test(?:-.{1,300})?\.[cm]?js$|[.\-_]test\.[cm]?js$/.test(base) || /(?:^|\/)test\//.test(file));
  if (lang === 'py') return /^test_.{0,300}\.py$/.test(base) || /^.{1,300}_test\.py$/.test(base);
  return /\.(?:test|spec)\.[cm]?[jt]sx?$/.test(base);
}

/** Files a change to which always runs the whole suite: the test harness (as the integrity gate knows it) and the project's manifests. */
export function isSuiteWide(file: string): boolean {
  return (
    isHarnessFile(file) ||
    /(?:^|\/)(?:package\.json|pyproject\.toml|setup\.cfg|setup\.py|requirements[\w.-]{0,40}\.txt|go\.mod|go\.sum|go\.work(?:\.sum)?)$/.test(
      file,
    )
  );
}

/**
 * What the runners and tools leave in the tree as they run (bytecode, caches, coverage data): not
 * a change of the code. A forged one is still run by the full suite of every completion check.
 */
const LEFTOVER = new RegExp(
  [
    /(?:^|\/)(?:__pycache__|\.pytest_cache|node_modules|\.mypy_cache|\.ruff_cache|\.tox|\.nox|\.nyc_output|htmlcov)\//.source,
    /\.py[co]$|(?:^|\/)\.coverage(?:\.[^/]{0,100})?$/.source,
  ].join('|'),
);

/** Files the runners and tools leave in the tree as they run (see LEFTOVER). */
export const isLeftover = (file: string): boolean => LEFTOVER.test(file);

const lines = (text: string): string[] => text.split('\n', MAX_LINES).map((l) => (l.length > MAX_LINE ? l.slice(0, MAX_LINE) : l));

/** What one file imports: module specifiers as written, and whether it imports by a computed name. */
export function importsOf(text: string, lang: TextLang): { specs: string[]; dynamic: boolean } {
  return lang === 'py' ? pythonImports(text) : jsImports(text);
}

const JS_FROM = /\bfrom\s{0,5}['"]([^'"\n]{1,300})['"]/g;
const JS_BARE = /^\s{0,20}import\s{0,5}['"]([^'"\n]{1,300})['"]/;
const JS_CALL =
  /\b(?:require|import|(?:vi|jest)\s{0,3}\.\s{0,3}(?:mock|doMock|importActual|requireActual|importMock))\s{0,5}\(\s{0,5}(['"`])([^'"`\n]{1,300})\1/g;
const JS_COMPUTED = /\b(?:require|import)\s{0,5}\(\s{0,5}(?![\s'"`)])/;

function jsImports(text: string): { specs: string[]; dynamic: boolean } {
  const specs: string[] = [];
  let dynamic = false;
  for (const l of lines(text)) {
    for (const m of l.matchAll(JS_FROM)) specs.push(m[1] ?? '');
    const bare = JS_BARE.exec(l);
    if (bare) specs.push(bare[1] ?? '');
    for (const m of l.matchAll(JS_CALL)) {
      // A template with a placeholder is a computed name.
      if (m[1] === '`' && (m[2] ?? '').includes('${')) dynamic = true;
      else specs.push(m[2] ?? '');
    }
    if (JS_COMPUTED.test(l) && !/^\s{0,20}(?:\/\/|\*)/.test(l)) dynamic = true;
  }
  return { specs: specs.filter(Boolean), dynamic };
}

const PY_IMPORT = /^\s{0,40}import\s{1,5}([\w., ]{1,500})/;
const PY_FROM = /^\s{0,40}from\s{1,5}(\.{0,5}[\w.]{0,300})\s{1,5}import\s{1,5}(.{1,500})$/;
const PY_COMPUTED = /\b(?:importlib\s{0,3}\.\s{0,3}import_module|__import__|runpy\s{0,3}\.\s{0,3}run_\w{1,20}|import_module)\s{0,3}\(/;

function pythonImports(text: string): { specs: string[]; dynamic: boolean } {
  const specs: string[] = [];
  let dynamic = false;
  const all = lines(text);
  for (let i = 0; i < all.length; i++) {
    const l = all[i] ?? '';
    if (PY_COMPUTED.test(l)) dynamic = true;
    const from = PY_FROM.exec(l);
    if (from) {
      let names = from[2] ?? '';
      // A parenthesised list may run over several lines.
      if (names.includes('(') && !names.includes(')')) {
        for (let j = i + 1; j < all.length && j < i + 200; j++) {
          names += ` ${all[j] ?? ''}`;
          if ((all[j] ?? '').includes(')')) break;
        }
      }
      const mod = from[1] ?? '';
      specs.push(mod);
      for (const n of names.replace(/[()\\]/g, ' ').split(',')) {
        const name = n.trim().split(/\s/)[0] ?? '';
        if (/^\w{1,100}$/.test(name)) specs.push(mod.endsWith('.') ? `${mod}${name}` : `${mod}.${name}`);
      }
      continue;
    }
    const imp = PY_IMPORT.exec(l);
    if (imp) for (const part of (imp[1] ?? '').split(',')) specs.push((part.trim().split(/\s/)[0] ?? '').trim());
  }
  return { specs: specs.filter((s) => s !== '' && s !== '.'), dynamic };
}

const dirOf = (file: string): string => (file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '');
const join = (...parts: string[]): string => normalize(parts.filter(Boolean).join('/'));

/** `a/./b/../c` as `a/c`; null when it climbs out of the repository. */
function normalize(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return '\0';
      out.pop();
    } else out.push(seg);
  }
  return out.join('/');
}

/** The repository's top-level folders (a bare import naming one may be an alias of the repository's own). */
export function topDirs(files: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const f of files) if (f.includes('/')) out.add(f.slice(0, f.indexOf('/')));
  return out;
}

/** The repository files an import may load (none for a package from outside the repository); `alias`: a name the repository may map to its own files. */
export function resolveImport(
  from: string,
  spec: string,
  lang: TextLang,
  files: ReadonlySet<string>,
  tops: ReadonlySet<string> = topDirs(files),
): { files: string[]; alias: boolean } {
  const hit = (cands: readonly string[]): string[] => [...new Set(cands.filter((c) => files.has(c)))];
  if (lang === 'js') {
    if (!spec.startsWith('.')) {
      const first = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? '');
      const alias = /^(?:@\/|~\/|#)/.test(spec) || tops.has(first);
      return { files: [], alias };
    }
    const base = join(dirOf(from), spec);
    const stem = base.replace(/\.[cm]?jsx?$/, '');
    const cands = [
      base,
      ...JS_EXT.map((e) => `${base}${e}`),
      ...JS_EXT.map((e) => `${stem}${e}`),
      ...JS_EXT.map((e) => `${base}/index${e}`),
    ];
    return { files: hit(cands), alias: false };
  }
  const dots = /^\.{0,5}/.exec(spec)?.[0].length ?? 0;
  const rest = spec.slice(dots).split('.').filter(Boolean);
  let roots: string[];
  if (dots > 0) {
    let d = dirOf(from);
    for (let k = 1; k < dots; k++) d = dirOf(d);
    roots = [d];
  } else {
    // The repository root, a src/ layout, and the folders above the importing file (pytest's rootdir insertion).
    roots = ['', 'src'];
    for (let d = dirOf(from); d !== ''; d = dirOf(d)) roots.push(d);
  }
  const cands: string[] = [];
  for (const r of roots) {
    for (let k = 1; k <= rest.length; k++) cands.push(join(r, ...rest.slice(0, k), '__init__.py'));
    if (rest.length > 0) cands.push(join(r, ...rest.slice(0, -1), `${rest.at(-1)}.py`));
  }
  return { files: hit(cands), alias: false };
}

/**
 * The import graph of the test files: each test file's repository imports, followed through the
 * repository's own files. `texts`: the language's source files of the tree and their text;
 * `runner`: whose test files (isTestFile).
 */
export function importGraph(texts: ReadonlyMap<string, string>, lang: TextLang, runner?: string): ImportGraph {
  const files = new Set(texts.keys());
  const tops = topDirs(files);
  const direct = new Map<string, { deps: string[]; computed: boolean; alias: boolean }>();
  for (const [file, text] of texts) {
    const { specs, dynamic } = importsOf(text, lang);
    const deps: string[] = [];
    let alias = false;
    for (const s of specs) {
      const r = resolveImport(file, s, lang, files, tops);
      deps.push(...r.files);
      if (r.alias && r.files.length === 0) alias = true;
    }
    direct.set(file, { deps, computed: dynamic, alias });
  }
  const tests: Record<string, string[]> = {};
  const dynamic: string[] = [];
  const aliased: string[] = [];
  for (const file of [...files].filter((f) => isTestFile(f, lang, runner)).sort()) {
    const seen = new Set<string>();
    const queue = [...(direct.get(file)?.deps ?? [])];
    let computed = direct.get(file)?.computed ?? false;
    let alias = direct.get(file)?.alias ?? false;
    while (queue.length > 0) {
      const f = queue.pop() as string;
      if (seen.has(f) || f === file) continue;
      seen.add(f);
      const d = direct.get(f);
      if (d?.computed) computed = true;
      if (d?.alias) alias = true;
      queue.push(...(d?.deps ?? []));
    }
    tests[file] = [...seen].sort();
    if (computed || alias) dynamic.push(file);
    if (alias && !computed) aliased.push(file);
  }
  return { tests, dynamic, aliased };
}

/** One package of `go list`: its import path, its files (relative to the repository) and the import paths it and its tests import. */
export interface GoPackage {
  importPath: string;
  /** Its non-test Go files (cgo's included). */
  files: string[];
  /** Its `_test.go` files, in-package and external. */
  testFiles: string[];
  imports: string[];
  testImports: string[];
}

/**
 * The import graph of a Go module as the go tool reads it (`go list`): one entry per package with
 * test files, keyed by its import path (the package `go test -json` names each test by), listing
 * its own files and the files of every package of the module it or its tests import, directly or
 * through others. Go imports are static: nothing is dynamic.
 */
export function goGraph(packages: readonly GoPackage[]): ImportGraph {
  const byPath = new Map(packages.map((p) => [p.importPath, p]));
  const tests: Record<string, string[]> = {};
  for (const p of [...packages].sort((a, b) => a.importPath.localeCompare(b.importPath))) {
    if (p.testFiles.length === 0) continue;
    const files = new Set([...p.files, ...p.testFiles]);
    const seen = new Set<string>([p.importPath]);
    const queue = [...p.imports, ...p.testImports];
    while (queue.length > 0) {
      const ip = queue.pop() as string;
      if (seen.has(ip)) continue;
      seen.add(ip);
      const dep = byPath.get(ip);
      if (!dep) continue; // the standard library or another module
      for (const f of dep.files) files.add(f);
      queue.push(...dep.imports);
    }
    tests[p.importPath] = [...files].sort();
  }
  return { tests, dynamic: [] };
}

/**
 * The report's tests that belong to `file` (vitest, node: `file::name`; pytest: `dotted.module::name` or
 * `dotted.module.Class::name`; unittest: `dotted.module.Class.name`).
 */
export function idInFile(id: string, file: string): boolean {
  const head = id.includes('::') ? id.slice(0, id.indexOf('::')) : id;
  if (head === file || head.endsWith(`/${file}`)) return true;
  if (!file.endsWith('.py')) return false;
  const dotted = file.slice(0, -3).replace(/\//g, '.');
  return head === dotted || head.startsWith(`${dotted}.`);
}

/** The baseline a partial run is held to: the baseline tests of the selected test files. */
export function baselineOfSelection(baseline: TestReport, files: readonly string[]): TestReport {
  return { ...baseline, tests: baseline.tests.filter((t) => files.some((f) => idInFile(t.id, f))) };
}

/** Of `testFiles`, those the report has tests of, and those with a failed or errored test. */
export function reportedFiles(report: TestReport, testFiles: readonly string[]): { ran: string[]; failing: string[] } {
  const ran = new Set<string>();
  const failing = new Set<string>();
  for (const t of report.tests) {
    for (const f of testFiles) {
      if (!idInFile(t.id, f)) continue;
      ran.add(f);
      if (t.status === 'failed' || t.status === 'error') failing.add(f);
    }
  }
  return { ran: [...ran].sort(), failing: [...failing].sort() };
}

/** The map a full run leaves: the graph of the test files it ran (the others are the runner's to leave out), and the files that failed. */
export function mapOfFullRun(o: {
  runner: string;
  command: string;
  tree: string;
  iteration: number;
  graph: ImportGraph;
  report: TestReport;
}): TestMap {
  const all = Object.keys(o.graph.tests);
  const { ran, failing } = reportedFiles(o.report, all);
  const ranSet = new Set(ran);
  return {
    version: 1,
    runner: o.runner,
    command: o.command,
    tree: o.tree,
    iteration: o.iteration,
    tests: Object.fromEntries(ran.map((f) => [f, o.graph.tests[f] ?? []])),
    dynamic: o.graph.dynamic.filter((f) => ranSet.has(f)),
    others: all.filter((f) => !ranSet.has(f)),
    failing,
  };
}

/** The map after a partial run: the selected files' failures replace theirs from before. */
export function mapAfterPartialRun(map: TestMap, selected: readonly string[], report: TestReport): TestMap {
  const now = reportedFiles(report, selected).failing;
  const failing = [...new Set([...map.failing.filter((f) => !selected.includes(f)), ...now])].sort();
  return { ...map, failing };
}

/**
 * What the tests gate of an ordinary iteration runs: the selection, or the full suite and why.
 * `changed`: the files that differ between the map's tree and the tree now (null: unknown);
 * `graph`: the import graph of the tree now; `fullEvery`: the knob affectedTestsFullEvery.
 */
export function planTests(o: {
  lang: AffectedLang;
  map: TestMap | null;
  runner: string;
  command: string;
  iteration: number;
  fullEvery: number;
  changed: readonly string[] | null;
  graph: ImportGraph;
  /** The runner selects by its own module graph too (related mode): a test Vigil cannot follow only for an alias is left to it. */
  runnerGraph?: boolean;
}): TestPlan {
  const full = (reason: string): TestPlan => ({ kind: 'full', reason });
  const { map, graph, lang } = o;
  let changed = o.changed;
  if (o.fullEvery <= 1) return full('affectedTestsFullEvery is 1');
  if (!map) return full('no test map yet');
  if (map.runner !== o.runner || map.command !== o.command) return full('the test map was made for another test command');
  if (changed === null) return full('what changed since the last full run is unknown');
  if (o.iteration - map.iteration >= o.fullEvery)
    return full(`every ${o.fullEvery} iterations; the last full run was at iteration ${map.iteration}`);
  changed = changed.filter((f) => !isLeftover(f));
  const wide = changed.find(isSuiteWide);
  if (wide) return full(`a test harness or configuration file changed: ${wide}`);
  const uncovered = changed.find((f) => !isSource(f, lang));
  if (uncovered) return full(`${uncovered} changed, which no import graph covers`);
  const now = new Set(Object.keys(graph.tests));
  const deleted = Object.keys(map.tests).find((f) => !now.has(f));
  if (deleted) return full(`a test file is gone: ${deleted}`);
  const known = new Set([...Object.keys(map.tests), ...map.others]);
  const added = [...now].find((f) => !known.has(f));
  if (added) return full(`a test file was added: ${added}`);
  const touched = new Set(changed);
  const dynamic = new Set([...graph.dynamic, ...map.dynamic]);
  if (o.runnerGraph) for (const f of graph.aliased ?? []) dynamic.delete(f);
  const reaches = (deps: readonly string[] | undefined): boolean => (deps ?? []).some((d) => touched.has(d));
  const files = Object.keys(map.tests)
    .filter((f) => touched.has(f) || dynamic.has(f) || map.failing.includes(f) || reaches(graph.tests[f]) || reaches(map.tests[f]))
    .sort();
  const total = Object.keys(map.tests).length;
  if (files.length === 0) return { kind: 'full', reason: 'no test file imports what changed', bySelection: true };
  if (files.length >= total) return { kind: 'full', reason: 'every test file is affected', bySelection: true };
  const unsafe = files.find((f) => !SAFE_NAME.test(f));
  if (unsafe) return full(`a selected test file's name cannot be passed to the runner: ${unsafe.slice(0, 100)}`);
  return { kind: 'affected', files, total };
}
