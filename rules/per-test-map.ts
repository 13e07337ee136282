/**
 * Affected tests by pytest's per-test map: the tests whose recorded files a change touches. A
 * full run records the map under coverage.py, one dynamic context per test
 * (lib/gates/pytest-map.ts): which repository files each test executed, and which lines of
 * each file ran outside any test (at import, during collection). A later iteration selects,
 * against everything changed since the map's tree:
 *
 * - the tests that executed a changed file, when the change stays inside code that ran within
 *   tests (a function's body);
 * - every test file that imports a changed file (the import graph, as without a map) when the
 *   change touches what runs at import: a removed or changed line that ran outside any test, or
 *   an added top-level statement other than a new `def` or `class` (a decorator counts: it
 *   changes a function at import), or when no test executed the file;
 * - every test of a changed test file, of a test file that failed last, and of a test file with
 *   imports Vigil cannot follow when the change touches import-time code.
 *
 * A harness or configuration change since the map's tree, or a file no import graph covers, makes
 * the map stale: the caller runs the full suite and records it anew. What the map cannot see
 * (code run in a subprocess, a module-level name a test reads without calling into the module, a
 * class attribute added) is caught by the full suite of the next completion check.
 *
 * Pure: the map, the changed files, their diffs and the import graph come in as values; every
 * pattern is bounded (the diffs are the agent's).
 */
import type { PerTestMap, TestReport } from '../schemas/test-report.js';
import { idInFile, isLeftover, isSource, isSuiteWide, isTestFile, type ImportGraph } from './affected-tests.js';

/** What a zero-context diff (`git diff -U0`) says of one file: the old lines it removed or changed, and the lines it added. */
export interface FileChange {
  removed: number[];
  added: string[];
  /** Lines added with none removed: after which old line (0: at the top). */
  after: number[];
}

const MAX_DIFF_LINES = 200_000;

/** `git diff -U0` output, per file (its new path; a deleted file by its old one). */
export function parseZeroDiff(diff: string): Map<string, FileChange> {
  const out = new Map<string, FileChange>();
  let cur: FileChange | null = null;
  let oldPath: string | null = null;
  let oldLine = 0;
  const lines = diff.split('\n', MAX_DIFF_LINES);
  for (const l of lines) {
    if (l.startsWith('diff --git ')) {
      cur = null;
      oldPath = null;
      continue;
    }
    if (l.startsWith('--- ')) {
      oldPath = l.startsWith('--- a/') ? l.slice(6) : null;
      continue;
    }
    if (l.startsWith('+++ ')) {
      const name = l.startsWith('+++ b/') ? l.slice(6) : oldPath;
      if (name === null) continue;
      cur = out.get(name) ?? { removed: [], added: [], after: [] };
      out.set(name, cur);
      continue;
    }
    const hunk = /^@@ -(\d{1,9})(?:,(\d{1,9}))? \+\d{1,9}(?:,\d{1,9})? @@/.exec(l);
    if (hunk) {
      oldLine = Number(hunk[1]);
      // `-a,0`: an insertion after old line a (the numbering goes on from a + 1 for nothing removed).
      if (hunk[2] === '0') {
        cur?.after.push(oldLine);
        oldLine += 1;
      }
      continue;
    }
    if (!cur) continue;
    if (l.startsWith('-')) cur.removed.push(oldLine++);
    else if (l.startsWith('+')) cur.added.push(l.slice(1, 2001));
  }
  return out;
}

/** A new function or class (its header line): binds a new name, changes nothing that already ran. */
const NEW_DEFINITION = /^(?:async\s{1,5}def|def|class)\s/;

/** The change touches what runs at import: a changed line that ran outside any test, or an added top-level statement. */
export function touchesImportTime(change: FileChange, importLines: readonly number[]): boolean {
  const ran = new Set(importLines);
  if (change.removed.some((n) => ran.has(n))) return true;
  return change.added.some((l) => /^[^\s#]/.test(l) && !NEW_DEFINITION.test(l));
}

const indent = (l: string): number => /^[ \t]*/.exec(l)?.[0].length ?? 0;
const blank = (l: string | undefined): boolean => l === undefined || /^\s*(?:#.*)?$/.test(l);
const DEF = /^\s*(?:async\s{1,5})?def\s/;

/**
 * The function a line of `lines` (1-based) is in, as a range of lines from its `def` to its last
 * line; null when the line is not inside a function's body (module level, a class body): a change
 * there runs at import. Read from indentation: a line whose enclosing block cannot be told
 * (a string running at the left margin) is at module level, which selects more, never less.
 */
export function enclosingFunction(lines: readonly string[], n: number): [number, number] | null {
  let probe = n;
  while (probe <= lines.length && blank(lines[probe - 1])) probe++;
  if (probe > lines.length) for (probe = n; probe >= 1 && blank(lines[probe - 1]);) probe--;
  if (probe < 1) return null;
  let level = indent(lines[probe - 1] as string);
  // A `def` line itself: its function (the line also ran at import, which touchesImportTime sees).
  let from = probe - 1;
  if (DEF.test(lines[probe - 1] as string)) {
    level += 1;
    from = probe;
  }
  for (let i = from; i >= 1 && level > 0; i--) {
    const l = lines[i - 1] as string;
    if (blank(l) || indent(l) >= level) continue;
    if (/^\s*class\s/.test(l)) return null;
    if (DEF.test(l)) {
      const k = indent(l);
      let end = i;
      for (let j = i + 1; j <= lines.length; j++) {
        const m = lines[j - 1] as string;
        if (blank(m)) continue;
        if (indent(m) <= k && !/^\s*[)\]}]/.test(m)) break;
        end = j;
      }
      return [i, end];
    }
    level = indent(l);
  }
  return null;
}

/** The functions a change touches in the old text (ranges of old lines); null when some of it is outside any function. */
export function changedFunctions(oldText: string, change: FileChange): [number, number][] | null {
  const lines = oldText.split('\n', MAX_DIFF_LINES);
  const at = [...change.removed, ...change.after.flatMap((a) => [a, a + 1])].filter((n) => n >= 1 && n <= lines.length);
  if (at.length === 0 && change.after.length + change.removed.length > 0) return null;
  const out: [number, number][] = [];
  for (const n of at) {
    const r = enclosingFunction(lines, n);
    if (!r) return null;
    out.push(r);
  }
  return out;
}

/** The id the JUnit report gives a pytest node id (pytest's own mangling: `a/b.py::C::t[x]` is `a.b.C::t[x]`). */
export function junitIdOfNode(nodeid: string): string {
  const bracket = nodeid.indexOf('[');
  const head = bracket >= 0 ? nodeid.slice(0, bracket) : nodeid;
  const params = bracket >= 0 ? nodeid.slice(bracket) : '';
  const names = head.split('::');
  names[0] = (names[0] ?? '').replace(/\//g, '.').replace(/\.py$/, '');
  const last = `${names.pop() ?? ''}${params}`;
  return names.length ? `${names.join('.')}::${last}` : last;
}

/** The file part of a node id. */
export const fileOfNode = (nodeid: string): string => nodeid.split('::', 1)[0] ?? nodeid;

/** The reason a map has served its time: everything it knows is affected (the next full run records it anew). */
export const EVERY_TEST = 'every test is affected';

export type PerTestPlan =
  | { kind: 'tests'; ids: string[]; whole: string[]; count: number; total: number }
  | { kind: 'stale'; reason: string }
  | { kind: 'none'; reason: string };

/**
 * The tests a change since the map's tree can affect. `changed`: the files changed since
 * `map.tree`; `diffs`: their zero-context diffs (null: unknown); `graph`: the import graph of the
 * tree now; `failing` and `dynamic`: the test files that failed last, and those with imports
 * Vigil cannot follow.
 */
export function planPerTest(o: {
  map: PerTestMap;
  changed: readonly string[] | null;
  diffs: ReadonlyMap<string, FileChange> | null;
  graph: ImportGraph;
  failing: readonly string[];
  dynamic: readonly string[];
  /** The changed files' text in the map's tree (those the map knows). */
  oldTexts: ReadonlyMap<string, string>;
}): PerTestPlan {
  const { map, graph } = o;
  if (o.changed === null || o.diffs === null) return { kind: 'stale', reason: 'what changed since the per-test map cannot be read' };
  const changed = o.changed.filter((f) => !isLeftover(f));
  const wide = changed.find(isSuiteWide);
  if (wide) return { kind: 'stale', reason: `a test harness or configuration file changed since the per-test map: ${wide}` };
  const uncovered = changed.find((f) => !isSource(f, 'py'));
  if (uncovered) return { kind: 'stale', reason: `${uncovered} changed, which no import graph covers` };
  const testFiles = new Set(Object.keys(graph.tests));
  const whole = new Set<string>();
  /** Per file index: the old line ranges of the functions changed. */
  const ranges = new Map<number, [number, number][]>();
  const importers = (file: string): void => {
    for (const [t, deps] of Object.entries(graph.tests)) if (deps.includes(file)) whole.add(t);
    for (const t of o.dynamic) whole.add(t);
  };
  for (const f of changed) {
    if (isTestFile(f, 'py')) {
      whole.add(f);
      continue;
    }
    const index = map.files.indexOf(f);
    const change = o.diffs.get(f);
    const old = o.oldTexts.get(f);
    const blocks = index >= 0 && change && old !== undefined ? changedFunctions(old, change) : null;
    if (!change || !blocks || touchesImportTime(change, map.imports[String(index)] ?? [])) importers(f);
    else ranges.set(index, blocks);
  }
  for (const f of o.failing) whole.add(f);
  for (const f of [...whole]) if (!testFiles.has(f)) whole.delete(f);
  const ranFunction = (lines: Record<string, number[]>): boolean =>
    [...ranges].some(([i, rs]) => (lines[String(i)] ?? []).some((n) => rs.some(([a, b]) => n >= a && n <= b)));
  const ids = Object.entries(map.tests)
    .filter(([id, lines]) => !whole.has(fileOfNode(id)) && testFiles.has(fileOfNode(id)) && ranFunction(lines))
    .map(([id]) => id)
    .sort();
  const inWhole = Object.keys(map.tests).filter((id) => whole.has(fileOfNode(id))).length;
  const total = Object.keys(map.tests).length;
  const count = ids.length + inWhole;
  if (ids.length === 0 && whole.size === 0) return { kind: 'none', reason: 'no test executed or imports what changed' };
  if (count >= total) return { kind: 'none', reason: EVERY_TEST };
  return { kind: 'tests', ids, whole: [...whole].sort(), count, total };
}

/** The baseline a per-test selection is held to: the baseline tests it kept (by node id) and those of the whole files it ran. */
export function baselineOfTests(baseline: TestReport, ids: readonly string[], whole: readonly string[]): TestReport {
  const kept = new Set(ids.map(junitIdOfNode));
  return { ...baseline, tests: baseline.tests.filter((t) => kept.has(t.id) || whole.some((f) => idInFile(t.id, f))) };
}
