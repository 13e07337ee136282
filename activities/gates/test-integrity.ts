/**
 * Gates 5 and 6 (spec §5.1): mock integrity and test mutation. An agent that is graded by its tests
 * can make them pass without making the code right: assert a value against itself, test nothing it
 * imports, mock the very module under test, or edit the expected value until it matches whatever
 * the new implementation returns. These detectors look for those patterns in the test files an
 * iteration changed. HIGH findings fail the gate; lower ones are kept as advisory findings for the
 * next prompt.
 *
 * The analysis is pure (`mockProblems`, `mutationProblems`, `isTestFile`); the activities only read
 * files. Every file is written by an untrusted agent, so every scan is line by line, every regex is
 * anchored or starts with a literal and uses bounded repetitions only, at most `MAX_FILE_BYTES` are
 * read per file, at most `MAX_LINE_CHARS` of a line are examined and at most `MAX_FILES` files are
 * looked at per run.
 *
 * This module also hosts the small helpers the other file-reading gates share (path checks, capped
 * reads, turning findings into a result with a stable reason).
 */
import { readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';

import { legacyNote, scopeFindings, type ChangeScope } from './change-scope.js';
import { MAX_FINDINGS, severityRank, type FindingInput, type GateName, type GateResultInput, type Severity } from '../../schemas/gates.js';
import { readRegularFile } from '../../lib/safe-files.js';
import { objectExists, readAtTree } from '../git.js';

// ---------------------------------------------------------------------------------------------
// Limits and shared helpers
// ---------------------------------------------------------------------------------------------

/** Bytes read per file: enough for any hand-written test, small enough to scan in milliseconds. */
export const MAX_FILE_BYTES = 512 * 1024;
/** Files looked at per gate run: an iteration touching more than this is reviewed by other gates. */
export const MAX_FILES = 500;
/** Characters of one line the patterns look at: bounds the work per line whatever the input. */
export const MAX_LINE_CHARS = 4000;

/** Folders whose files are never the project's own code or tests (tools, builds, Vigil's state). */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set([
  '.vigil',
  '.git',
  'node_modules',
  'dist',
  'build',
  'vendor',
  '__pycache__',
  '.venv',
  'venv',
]);

/**
 * The repository-relative form of a path an agent reported, or null when it is not one: absolute,
 * escaping the repository (`..`), empty or containing NUL. The file list comes from a diff of an
 * untrusted tree, so it is checked before anything is read.
 */
export function safeRelPath(p: string): string | null {
  if (!p || p.includes('\0') || p.length > 4096 || path.posix.isAbsolute(p) || path.win32.isAbsolute(p)) return null;
  const norm = path.posix.normalize(p);
  if (norm === '.' || norm === '..' || norm.startsWith('../')) return null;
  return norm.replace(/\/+$/, '');
}

/** True when a path lies under one of the skipped folders (at any depth). */
export function inSkippedDir(rel: string): boolean {
  const parts = rel.split('/');
  parts.pop();
  return parts.some((part) => SKIPPED_DIRS.has(part));
}

/** The checked, de-duplicated, sorted and capped list of in-scope paths (sorted so reasons are stable). */
export function scopeFiles(files: readonly string[], keep: (rel: string) => boolean): string[] {
  const out = new Set<string>();
  for (const f of files) {
    const rel = safeRelPath(f);
    if (rel !== null && !inSkippedDir(rel) && keep(rel)) out.add(rel);
  }
  return [...out].sort().slice(0, MAX_FILES);
}

/** A capped read: `bytes` is the file's full size (more than was read when it exceeds the cap). */
export type RepoRead = { kind: 'text'; text: string; bytes: number } | { kind: 'absent' } | { kind: 'problem'; problem: string };

/**
 * Reads at most `maxBytes` of a repository file. A link (at the file, or a folder on the way that
 * leads outside the repository) is never followed: an agent could otherwise make a gate read any
 * file of the machine into its report.
 */
export function readRepoText(repoPath: string, rel: string, maxBytes = MAX_FILE_BYTES): RepoRead {
  const abs = path.join(repoPath, rel);
  try {
    const root = realpathSync(repoPath);
    const dir = realpathSync(path.dirname(abs));
    if (dir !== root && !dir.startsWith(root + path.sep))
      return { kind: 'problem', problem: 'lies outside the repository (linked folder); not read' };
  } catch {
    return { kind: 'absent' };
  }
  const r = readRegularFile(abs, maxBytes);
  if (r === null) return { kind: 'absent' };
  if (!r.ok) return { kind: 'problem', problem: r.problem };
  return { kind: 'text', text: r.text, bytes: r.bytes };
}

/** Splits text into lines (LF or CRLF), each cut to `MAX_LINE_CHARS`. */
export function linesOf(text: string): string[] {
  return text.split('\n').map((l) => (l.length > MAX_LINE_CHARS ? l.slice(0, MAX_LINE_CHARS) : l).replace(/\r$/, ''));
}

const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** A finding with its fields clipped to what the schema allows. */
export function finding(gate: GateName, severity: Severity, file: string | null, line: number | null, message: string): FindingInput {
  return { gate, severity, file: file === null ? null : clip(file, 500), line, message: clip(message, 500) };
}

/**
 * The stable one-line reason of a finding. Messages are written `label: detail`; the label (never
 * the detail, which quotes agent text) plus file and line is what the stuck-gate rule compares.
 */
export function findingReason(f: FindingInput): string {
  const label = f.message.split(': ')[0] ?? f.message;
  const where = f.file ? ` in ${f.file}${f.line !== null && f.line !== undefined ? `:${f.line}` : ''}` : '';
  return clip(`${label}${where}`, 500);
}

/**
 * Turns a gate's findings into its result: fail on any critical or high finding (its reason is the
 * first of them, worst first), else pass with `passReason`. Findings are ordered worst first so the
 * capped list keeps the ones that matter; the order within a severity is the scan order.
 */
export function gateResult(gate: GateName, all: FindingInput[], passReason: string, startedAt: number): GateResultInput {
  const sorted = all
    .map((f, i) => ({ f, i }))
    .sort((a, b) => severityRank(a.f.severity) - severityRank(b.f.severity) || a.i - b.i)
    .map((x) => x.f);
  const blocking = sorted.find((f) => f.severity === 'critical' || f.severity === 'high');
  return {
    gate,
    verdict: blocking ? 'fail' : 'pass',
    reason: blocking ? findingReason(blocking) : clip(passReason, 500),
    findings: sorted.slice(0, MAX_FINDINGS),
    findingCount: sorted.length,
    durationMs: Math.max(0, Date.now() - startedAt),
  };
}

// ---------------------------------------------------------------------------------------------
// Classifying files and lines
// ---------------------------------------------------------------------------------------------

type Lang = 'js' | 'py';

const JS_EXT = /\.(?:[cm]?[jt]s|[jt]sx)$/;

function langOf(file: string): Lang | null {
  if (file.endsWith('.py')) return 'py';
  if (JS_EXT.test(file) && !file.endsWith('.d.ts')) return 'js';
  return null;
}

/**
 * Whether a repository path is a test file: JS/TS `*.test.*`, `*.spec.*` or under `__tests__/`,
 * `test/`, `tests/`; Python `test_*.py`, `*_test.py` or under `tests/`.
 */
export function isTestFile(p: string): boolean {
  const file = p.split('\\').join('/');
  const parts = file.split('/');
  const base = parts.pop() ?? '';
  const lang = langOf(base);
  if (lang === 'js') {
    return /\.(?:test|spec)\.[^.]{1,10}$/.test(base) || parts.some((d) => d === '__tests__' || d === 'test' || d === 'tests');
  }
  if (lang === 'py') {
    return base.startsWith('test_') || base.endsWith('_test.py') || parts.includes('tests');
  }
  return false;
}

/** Source files whose change counts as an implementation change (not docs, data or config). */
const CODE_EXT = /\.(?:[cm]?[jt]s|[jt]sx|py|go|rs|java|kt|kts|rb|php|cs|c|h|cc|cpp|hpp|swift|scala|sh|vue|svelte)$/;

export function isImplementationFile(p: string): boolean {
  return CODE_EXT.test(p) && !isTestFile(p);
}

/** Whole-line comments (`//`, `/*`, `*`, `#`) are not code: a tautology in a comment asserts nothing. */
function isCommentLine(trimmed: string, lang: Lang): boolean {
  return lang === 'py' ? trimmed.startsWith('#') : trimmed.startsWith('//') || trimmed.startsWith('/*') || trimmed.startsWith('*');
}

const JS_ASSERT = new RegExp(
  String.raw`\b(?:${[
    /expect(?:TypeOf)?\s{0,5}[(.]|assert(?:[A-Z][A-Za-z]{0,40})?\s{0,5}[(.]/.source,
    /t\.(?:is|not|true|false|deepEqual|notDeepEqual|equal|ok|throws|throwsAsync|like|regex|snapshot)\s{0,5}\(/.source,
  ].join('|')})|\.should\s{0,5}[(.]`,
);
const PY_ASSERT = new RegExp(
  [
    /^\s{0,200}assert\b|\bself\.(?:assert[A-Z][A-Za-z]{0,40}|fail)\s{0,5}\(/.source,
    /\bpytest\.(?:raises|warns|fail)\s{0,5}\(|\.assert_[a-z_]{1,40}\s{0,5}\(|\bassert_[a-z_]{1,40}\s{0,5}\(/.source,
  ].join('|'),
);

/** One assertion per line is what every detector counts: lines, not calls, so the count is bounded. */
function isAssertionLine(line: string, lang: Lang): boolean {
  const t = line.trim();
  if (!t || isCommentLine(t, lang)) return false;
  return lang === 'py' ? PY_ASSERT.test(line) : JS_ASSERT.test(line);
}

const JS_TEST_CASE = /^\s{0,200}(?:it|test|Deno\.test)((?:\.[A-Za-z]{1,20}){0,3})\s{0,5}[(`]/;
const PY_TEST_CASE = /^\s{0,200}(?:async\s{1,10})?def\s{1,10}test[A-Za-z0-9_]{0,200}\s{0,5}\(/;

/** A test case declaration (`it(`, `test.each(`, `def test_x(`); skipped and todo cases do not count. */
function isTestCaseLine(line: string, lang: Lang): boolean {
  if (lang === 'py') return PY_TEST_CASE.test(line);
  const m = JS_TEST_CASE.exec(line);
  return m !== null && !/\.(?:skip|todo)\b/.test(m[1] ?? '');
}

// ---------------------------------------------------------------------------------------------
// Mock integrity (gate 5)
// ---------------------------------------------------------------------------------------------

/** What `mockProblems` needs to know about the repository to tell project imports from others. */
export interface MockContext {
  /** The package's own name (package.json `name`): `import { x } from 'name'` tests the source. */
  packageName?: string | null;
  /**
   * Python modules that exist in the repository (a `.py` file or a package folder at the root or
   * under `src/`). Unknown (undefined): the Python import and patch-target checks are skipped
   * rather than guessed.
   */
  localModules?: ReadonlySet<string>;
}

const JS_OPERAND = `(${[
  String.raw`-?\d{1,30}(?:\.\d{1,30})?`,
  String.raw`'[^'\\]{0,200}'|"[^"\\]{0,200}"|\x60[^\x60\\$]{0,200}\x60`,
  String.raw`[A-Za-z_$][\w$]{0,60}(?:\.[A-Za-z_$][\w$]{0,60}){0,5}`,
].join('|')})`;
const PY_OPERAND = String.raw`(-?\d{1,30}(?:\.\d{1,30})?|'[^'\\]{0,200}'|"[^"\\]{0,200}"|[A-Za-z_][\w]{0,60}(?:\.[A-Za-z_][\w]{0,60}){0,5})`;

/** `expect(A).toBe(A)` and friends (Jest/Vitest matchers and Chai's `to.equal`). */
const JS_EXPECT_SAME = new RegExp(
  String.raw`\bexpect\s{0,5}\(\s{0,5}${JS_OPERAND}\s{0,5}\)\s{0,5}\.\s{0,5}` +
    String.raw`(?:toBe|toEqual|toStrictEqual|to\.equal|to\.eql|to\.deep\.equal|to\.be\.equal)\s{0,5}\(\s{0,5}${JS_OPERAND}\s{0,5}\)`,
);
/** `expect(true).toBeTruthy()`, `expect(null).toBeNull()`: the matcher restates the literal. */
const JS_EXPECT_CONST = new RegExp(
  String.raw`\bexpect\s{0,5}\(\s{0,5}(?:${[
    /true\s{0,5}\)\s{0,5}\.\s{0,5}(?:toBeTruthy|to\.be\.true|to\.be\.ok)/.source,
    /false\s{0,5}\)\s{0,5}\.\s{0,5}(?:toBeFalsy|to\.be\.false)/.source,
    /null\s{0,5}\)\s{0,5}\.\s{0,5}(?:toBeNull|to\.be\.null)/.source,
    /undefined\s{0,5}\)\s{0,5}\.\s{0,5}(?:toBeUndefined|to\.be\.undefined)/.source,
  ].join('|')})\b`,
);
const JS_ASSERT_SAME = new RegExp(
  String.raw`\bassert\s{0,5}\.\s{0,5}(?:equal|strictEqual|deepEqual|deepStrictEqual)\s{0,5}\(\s{0,5}${JS_OPERAND}\s{0,5},\s{0,5}${JS_OPERAND}\s{0,5}[,)]`,
);
const JS_ASSERT_TRUE = /\bassert(?:\s{0,5}\.\s{0,5}ok)?\s{0,5}\(\s{0,5}(?:true|[1-9]\d{0,20}|'[^'\\]{1,200}'|"[^"\\]{1,200}")\s{0,5}[,)]/;

const PY_ASSERT_SAME = new RegExp(
  String.raw`^\s{0,200}assert\s{1,20}${PY_OPERAND}\s{0,20}(?:==|is)\s{0,20}${PY_OPERAND}\s{0,20}(?:$|[,#])`,
);
const PY_ASSERT_TRUE =
  /^\s{0,200}assert\s{1,20}(?:\(\s{0,5})?(?:True|[1-9]\d{0,20}|'[^'\\]{1,200}'|"[^"\\]{1,200}")(?:\s{0,5}\))?\s{0,20}(?:$|[,#])/;
const PY_SELF_SAME = new RegExp(
  String.raw`\bself\.assert(?:Equal|Equals|Is|ListEqual|DictEqual|TupleEqual|SetEqual|CountEqual|SequenceEqual|MultiLineEqual|AlmostEqual|AlmostEquals)` +
    String.raw`\s{0,5}\(\s{0,5}${PY_OPERAND}\s{0,5},\s{0,5}${PY_OPERAND}\s{0,5}[,)]`,
);
const PY_SELF_CONST = new RegExp(
  String.raw`\bself\.(?:${[
    /assertTrue\s{0,5}\(\s{0,5}(?:True|[1-9]\d{0,20})|assertFalse\s{0,5}\(\s{0,5}(?:False|0|None)/.source,
    /assertIsNone\s{0,5}\(\s{0,5}None|assertIsNotNone\s{0,5}\(\s{0,5}(?:True|[1-9]\d{0,20})/.source,
  ].join('|')})\s{0,5}[,)]`,
);

/** Whether an assertion line compares a value with itself or restates a constant. */
function isTautology(line: string, lang: Lang): boolean {
  if (lang === 'js') {
    const same = JS_EXPECT_SAME.exec(line) ?? JS_ASSERT_SAME.exec(line);
    if (same && same[1] === same[2]) return true;
    return JS_EXPECT_CONST.test(line) || JS_ASSERT_TRUE.test(line);
  }
  const same = PY_ASSERT_SAME.exec(line) ?? PY_SELF_SAME.exec(line);
  if (same && same[1] === same[2]) return true;
  return PY_ASSERT_TRUE.test(line) || PY_SELF_CONST.test(line);
}

/** `from '<spec>'`, `import '<spec>'`, `import('<spec>')`, `require('<spec>')`, `export … from`. */
const JS_IMPORT_SPEC = /(?:\bfrom|\bimport|\brequire)\s{0,5}\(?\s{0,5}(['"\x60])([^'"\x60\n]{1,300})\1/g;
const JS_MOCK_SPEC = /\b(?:vi|jest)\s{0,5}\.\s{0,5}(?:mock|doMock|unstable_mockModule)\s{0,5}\(\s{0,5}(['"\x60])([^'"\x60\n]{1,300})\1/;

/**
 * Whether a JS/TS module specifier names the project's own code: relative (`./`, `../`), the
 * package's own name, or a project alias (`@/`, `~/`, `#` subpath imports) that resolves into it.
 */
function isProjectSpecifier(spec: string, packageName: string | null): boolean {
  if (spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')) return true;
  if (spec.startsWith('@/') || spec.startsWith('~/') || spec.startsWith('#')) return true;
  return packageName !== null && packageName !== '' && (spec === packageName || spec.startsWith(`${packageName}/`));
}

const PY_IMPORT = /^\s{0,200}import\s{1,20}([A-Za-z_][\w.\s,]{0,2000})/;
const PY_FROM = /^\s{0,200}from\s{1,20}(\.{1,10}[\w.]{0,300}|[A-Za-z_][\w.]{0,300})\s{1,20}import\b/;
const PY_PATCH = /\bpatch(?:\.dict)?\s{0,5}\(\s{0,5}(['"])([A-Za-z_][\w.]{0,300})\1/;
const PY_PATCH_OBJECT = /\bpatch\.object\s{0,5}\(\s{0,5}([A-Za-z_][\w.]{0,300})\s{0,5},/;
const PY_MONKEYPATCH = /\bmonkeypatch\.setattr\s{0,5}\(\s{0,5}(?:(['"])([A-Za-z_][\w.]{0,300})\1|([A-Za-z_][\w.]{0,300})\s{0,5},)/;
const PY_MOCK_ASSIGN = new RegExp(
  [
    /^\s{0,200}([A-Za-z_][\w]{0,100})(?:\.[A-Za-z_]\w{0,100}){1,10}\s{0,5}=\s{0,5}(?:mock\.|unittest\.mock\.)?/.source,
    /(?:MagicMock|Mock|AsyncMock|create_autospec)\s{0,5}\(/.source,
  ].join(''),
);

const topModule = (dotted: string): string => dotted.split('.')[0] ?? dotted;

const PY_FROM_NAMES = /\bimport\s{1,20}\(?\s{0,5}([A-Za-z_][\w\s,]{0,2000})/;

/**
 * The names a Python import line binds to project code (relative imports are always the
 * project's): `from mypkg import core` binds `core`, `import mypkg.core as c` binds `c`, `import
 * mypkg.core` binds `mypkg`. Empty when the line imports nothing of the project.
 */
function pythonLocalBindings(line: string, local: ReadonlySet<string>): string[] {
  const from = PY_FROM.exec(line);
  if (from) {
    const mod = from[1] ?? '';
    if (!mod.startsWith('.') && !local.has(topModule(mod))) return [];
    const names = PY_FROM_NAMES.exec(line.slice(from[0].length - 'import'.length));
    const bound = (names?.[1] ?? '')
      .split(',')
      .map(
        (part) =>
          part
            .trim()
            .split(/\s{1,20}/)
            .pop() ?? '',
      )
      .filter((n) => /^[A-Za-z_]\w{0,100}$/.test(n));
    return bound.length > 0 ? bound : [mod];
  }
  const imp = PY_IMPORT.exec(line);
  if (!imp) return [];
  const out: string[] = [];
  for (const part of (imp[1] ?? '').split(',')) {
    const words = part.trim().split(/\s{1,20}/);
    const mod = words[0] ?? '';
    if (local.has(topModule(mod))) out.push(words.length === 3 && words[1] === 'as' ? (words[2] ?? mod) : topModule(mod));
  }
  return out;
}

/**
 * Whether a Python line mocks a project module: a patch target in a local module, or a patched
 * object, monkeypatched object or mock assignment whose root is a local module or a name bound to
 * one by an import (`local` plus `bound`).
 */
function pythonMocksLocal(line: string, local: ReadonlySet<string>, bound: ReadonlySet<string>): boolean {
  const isLocal = (dotted: string): boolean => local.has(topModule(dotted)) || bound.has(topModule(dotted));
  const p = PY_PATCH.exec(line);
  if (p && local.has(topModule(p[2] ?? ''))) return true;
  const o = PY_PATCH_OBJECT.exec(line);
  if (o && isLocal(o[1] ?? '')) return true;
  const m = PY_MONKEYPATCH.exec(line);
  if (m && (m[2] !== undefined ? local.has(topModule(m[2])) : isLocal(m[3] ?? ''))) return true;
  const a = PY_MOCK_ASSIGN.exec(line);
  return a !== null && isLocal(a[1] ?? '');
}

/**
 * Mock-integrity findings (gate `mock_integrity`) for one JS/TS or Python test file:
 * - a tautological assertion (a value compared with itself, a literal restated): high;
 * - test cases but no import of the project's own code: high ("test imports no source under test");
 * - test cases but not one assertion: medium;
 * - more lines mocking project modules than assertion lines: medium.
 * Other files yield nothing. The caller decides which files are tests.
 */
export function mockProblems(file: string, content: string, ctx: MockContext = {}): FindingInput[] {
  const lang = langOf(file);
  if (lang === null) return [];
  const lines = linesOf(content.length > MAX_FILE_BYTES ? content.slice(0, MAX_FILE_BYTES) : content);
  const packageName = ctx.packageName ?? null;
  const local = ctx.localModules;
  const out: FindingInput[] = [];
  let testCases = 0;
  let firstTestLine = 0;
  let assertions = 0;
  let importsSource = false;
  let internalMocks = 0;
  let firstMockLine = 0;
  const bound = new Set<string>();

  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (!trimmed || isCommentLine(trimmed, lang)) return;
    if (isTestCaseLine(line, lang)) {
      testCases++;
      if (firstTestLine === 0) firstTestLine = i + 1;
    }
    if (isAssertionLine(line, lang)) {
      assertions++;
      if (isTautology(line, lang))
        out.push(finding('mock_integrity', 'high', file, i + 1, `tautological assertion: ${clip(trimmed, 200)}`));
    }
    let mocks = false;
    if (lang === 'js') {
      const mock = JS_MOCK_SPEC.exec(line);
      if (mock) {
        mocks = isProjectSpecifier(mock[2] ?? '', packageName);
      } else if (!importsSource) {
        for (const imp of line.matchAll(JS_IMPORT_SPEC)) if (isProjectSpecifier(imp[2] ?? '', packageName)) importsSource = true;
      }
    } else if (local) {
      const names = pythonLocalBindings(line, local);
      if (names.length > 0) {
        importsSource = true;
        for (const n of names) bound.add(n);
      }
      mocks = pythonMocksLocal(line, local, bound);
    }
    if (mocks) {
      internalMocks++;
      if (firstMockLine === 0) firstMockLine = i + 1;
    }
  });

  if (testCases > 0) {
    const canJudgeImports = lang === 'js' || local !== undefined;
    if (canJudgeImports && !importsSource) {
      out.push(
        finding(
          'mock_integrity',
          'high',
          file,
          1,
          'test imports no source under test: no import of the project code (relative path, package name or local module)',
        ),
      );
    }
    if (assertions === 0) {
      out.push(
        finding(
          'mock_integrity',
          'medium',
          file,
          firstTestLine,
          `test file has no assertions: ${testCases} test case(s), 0 assertion lines`,
        ),
      );
    }
  }
  if (internalMocks > 0 && internalMocks > assertions) {
    out.push(
      finding(
        'mock_integrity',
        'medium',
        file,
        firstMockLine,
        `internal mocks outnumber assertions: ${internalMocks} line(s) mock project modules, ${assertions} assertion line(s)`,
      ),
    );
  }
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

// ---------------------------------------------------------------------------------------------
// Test mutation (gate 6)
// ---------------------------------------------------------------------------------------------

/** One file of a change set; null content means the file does not exist on that side. */
export interface FileChange {
  file: string;
  before: string | null;
  after: string | null;
}

/** Assertion lines below one per this many lines of test code are "low density". */
export const DENSITY_LINES_PER_ASSERTION = 15;

/** String, template, number and keyword literals: what "the expected value" of an assertion is made of. */
const LITERAL = new RegExp(
  [
    /'(?:[^'\\\n]|\\.){0,500}'|"(?:[^"\\\n]|\\.){0,500}"|\x60(?:[^\x60\\]|\\.){0,500}\x60/.source,
    /\b(?:0[xX][0-9a-fA-F]{1,32}|\d{1,40}(?:\.\d{1,40})?(?:[eE][+-]?\d{1,5})?)\b/.source,
    /\b(?:true|false|null|undefined|None|True|False|NaN)\b/.source,
  ].join('|'),
  'g',
);
const PLACEHOLDER = '\u0001';

/** An assertion's shape (its text with every literal replaced by a placeholder) and its literals. */
export function assertionShape(line: string): { shape: string; literals: string } {
  const lits: string[] = [];
  const shape = line.trim().replace(LITERAL, (m) => {
    lits.push(m);
    return PLACEHOLDER;
  });
  return { shape: shape.replace(/\s{1,100}/g, ' '), literals: lits.join('\u0000') };
}

interface NumberedLine {
  text: string;
  line: number;
}

/**
 * A line-level diff by multiset difference (not an LCS): a line counts as removed when the old
 * file has more copies of it (trimmed) than the new one, as added in the converse case. Moving a
 * line is therefore not a change, which is what assertion accounting wants, and the cost is linear
 * in the number of lines whatever the input.
 */
export function lineMultisetDiff(before: string, after: string): { removed: NumberedLine[]; added: NumberedLine[] } {
  const b = linesOf(before).map((t) => t.trim());
  const a = linesOf(after).map((t) => t.trim());
  const count = (xs: string[]): Map<string, number> => {
    const m = new Map<string, number>();
    for (const x of xs) if (x) m.set(x, (m.get(x) ?? 0) + 1);
    return m;
  };
  const inAfter = count(a);
  const inBefore = count(b);
  const removed: NumberedLine[] = [];
  const added: NumberedLine[] = [];
  b.forEach((text, i) => {
    if (!text) return;
    const n = inAfter.get(text) ?? 0;
    if (n > 0) inAfter.set(text, n - 1);
    else removed.push({ text, line: i + 1 });
  });
  a.forEach((text, i) => {
    if (!text) return;
    const n = inBefore.get(text) ?? 0;
    if (n > 0) inBefore.set(text, n - 1);
    else added.push({ text, line: i + 1 });
  });
  return { removed, added };
}

function assertionLines(content: string, lang: Lang): string[] {
  return linesOf(content)
    .filter((l) => isAssertionLine(l, lang))
    .map((l) => l.trim());
}

/** Code lines (non-blank, not whole-line comments), assertion lines and test cases of a test file. */
function density(content: string, lang: Lang): { code: number; assertions: number; cases: number } {
  let code = 0;
  let assertions = 0;
  let cases = 0;
  for (const line of linesOf(content)) {
    const t = line.trim();
    if (!t || isCommentLine(t, lang)) continue;
    code++;
    if (isAssertionLine(line, lang)) assertions++;
    if (isTestCaseLine(line, lang)) cases++;
  }
  return { code, assertions, cases };
}

const capText = (s: string | null): string | null => (s !== null && s.length > MAX_FILE_BYTES ? s.slice(0, MAX_FILE_BYTES) : s);

/**
 * Test-mutation findings (gate `test_mutation`) for one change set. When implementation files
 * changed too:
 * - an existing assertion whose literals changed while its shape stayed (the expected value was
 *   edited to fit the new code): high, at the new line;
 * - an existing test file that lost assertion lines (deleted test files count, unless their
 *   assertions reappear in a test file the change set adds, i.e. a move): high.
 * Always: a changed test file with test cases and fewer than one assertion line per
 * `DENSITY_LINES_PER_ASSERTION` code lines: low.
 */
export function mutationProblems(changes: readonly FileChange[]): FindingInput[] {
  const set = changes.slice(0, MAX_FILES).map((c) => ({ file: c.file, before: capText(c.before), after: capText(c.after) }));
  const changed = set.filter((c) => c.before !== c.after);
  const implChanged = changed.some((c) => isImplementationFile(c.file));
  const tests = changed.filter((c) => isTestFile(c.file) && langOf(c.file) !== null);
  const out: FindingInput[] = [];

  // Assertions of test files this change set adds: where a deleted test file's assertions may have moved.
  const movedTo = new Map<string, number>();
  for (const c of tests) {
    if (c.before !== null || c.after === null) continue;
    for (const a of assertionLines(c.after, langOf(c.file) as Lang)) movedTo.set(a, (movedTo.get(a) ?? 0) + 1);
  }

  for (const c of tests) {
    const lang = langOf(c.file) as Lang;
    if (implChanged && c.before !== null) {
      if (c.after === null) {
        let lost = 0;
        for (const a of assertionLines(c.before, lang)) {
          const n = movedTo.get(a) ?? 0;
          if (n > 0) movedTo.set(a, n - 1);
          else lost++;
        }
        if (lost > 0)
          out.push(
            finding(
              'test_mutation',
              'high',
              c.file,
              null,
              `assertions removed: test file deleted with ${lost} assertion line(s) alongside implementation changes`,
            ),
          );
        continue;
      }
      const { removed, added } = lineMultisetDiff(c.before, c.after);
      const removedByShape = new Map<string, string[]>();
      for (const r of removed) {
        if (!isAssertionLine(r.text, lang)) continue;
        const s = assertionShape(r.text);
        if (!s.literals) continue;
        const list = removedByShape.get(s.shape) ?? [];
        list.push(s.literals);
        removedByShape.set(s.shape, list);
      }
      for (const a of added) {
        if (!isAssertionLine(a.text, lang)) continue;
        const s = assertionShape(a.text);
        const list = removedByShape.get(s.shape);
        const idx = list ? list.findIndex((lits) => lits !== s.literals) : -1;
        if (list && idx >= 0) {
          list.splice(idx, 1);
          out.push(
            finding(
              'test_mutation',
              'high',
              c.file,
              a.line,
              `assertion value changed alongside the implementation (test-fitting): ${clip(a.text, 200)}`,
            ),
          );
        }
      }
      const lost = assertionLines(c.before, lang).length - assertionLines(c.after, lang).length;
      if (lost > 0) {
        const first = removed.find((r) => isAssertionLine(r.text, lang));
        const was = first ? ` (first at line ${first.line} before the change)` : '';
        out.push(
          finding(
            'test_mutation',
            'high',
            c.file,
            null,
            `assertions removed: ${lost} assertion line(s) fewer alongside implementation changes${was}`,
          ),
        );
      }
    }
    if (c.after !== null) {
      const d = density(c.after, lang);
      if (d.cases > 0 && d.assertions * DENSITY_LINES_PER_ASSERTION < d.code) {
        out.push(
          finding(
            'test_mutation',
            'low',
            c.file,
            null,
            `low assertion density: ${d.assertions} assertion line(s) in ${d.code} lines of test code (below 1 per ${DENSITY_LINES_PER_ASSERTION})`,
          ),
        );
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Activities
// ---------------------------------------------------------------------------------------------

/** The package's own name from package.json (null when absent or unreadable). */
export function readPackageJson(repoPath: string): Record<string, unknown> | null {
  const r = readRepoText(repoPath, 'package.json');
  if (r.kind !== 'text') return null;
  try {
    const v: unknown = JSON.parse(r.text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const MAX_DIR_ENTRIES = 2000;
const NOT_SOURCE_MODULES = new Set(['tests', 'test', 'conftest', 'setup', 'noxfile', 'docs']);

/**
 * Python modules of the repository: `.py` files and folders holding `.py` files at the root and
 * under `src/`, except test modules. A test that imports one of them tests project code.
 */
export function pythonLocalModules(repoPath: string): Set<string> {
  const out = new Set<string>();
  const list = (dir: string): { name: string; dir: boolean }[] => {
    try {
      return readdirSync(dir, { withFileTypes: true })
        .slice(0, MAX_DIR_ENTRIES)
        .map((e) => ({ name: e.name, dir: e.isDirectory() }));
    } catch {
      return [];
    }
  };
  for (const base of [repoPath, path.join(repoPath, 'src')]) {
    let dirsChecked = 0;
    for (const e of list(base)) {
      const name = e.dir ? e.name : e.name.endsWith('.py') ? e.name.slice(0, -3) : '';
      if (!/^[A-Za-z_]\w{0,100}$/.test(name) || NOT_SOURCE_MODULES.has(name) || name.startsWith('test_') || name.endsWith('_test'))
        continue;
      if (SKIPPED_DIRS.has(e.name)) continue;
      if (!e.dir) {
        out.add(name);
      } else if (dirsChecked++ < 200 && list(path.join(base, e.name)).some((c) => !c.dir && c.name.endsWith('.py'))) {
        out.add(name);
      }
    }
  }
  return out;
}

/**
 * Gate 5 activity: mock integrity of the test files among the changed files (repository-relative).
 * No changed test file: pass. Fail on any high finding; medium ones are advisory.
 */
export async function mockIntegrityGate(opts: {
  repoPath: string;
  files: string[];
  scope?: ChangeScope | undefined;
}): Promise<GateResultInput> {
  const startedAt = Date.now();
  const scope = scopeFiles(opts.files, (rel) => isTestFile(rel));
  if (scope.length === 0) return gateResult('mock_integrity', [], 'no test file changed', startedAt);
  const pkg = readPackageJson(opts.repoPath);
  const packageName = typeof pkg?.['name'] === 'string' ? pkg['name'] : null;
  const localModules = scope.some((f) => f.endsWith('.py')) ? pythonLocalModules(opts.repoPath) : undefined;
  const all: FindingInput[] = [];
  let checked = 0;
  let unreadable = 0;
  let legacy = 0;
  for (const rel of scope) {
    const r = readRepoText(opts.repoPath, rel);
    if (r.kind === 'absent') continue;
    if (r.kind === 'problem') {
      unreadable++;
      all.push(finding('mock_integrity', 'medium', rel, null, `test file not checked: ${r.problem}`));
      continue;
    }
    checked++;
    const scoped = scopeFindings(mockProblems(rel, r.text, { packageName, localModules }), opts.scope);
    legacy += scoped.legacy;
    all.push(...scoped.findings);
  }
  if (checked === 0 && unreadable === 0)
    return gateResult('mock_integrity', all, 'no test file changed (the changed test files were deleted)', startedAt);
  const notRead = unreadable > 0 ? `, ${unreadable} not readable` : '';
  return gateResult(
    'mock_integrity',
    all,
    `${checked} changed test file(s) checked${notRead}; ${all.length} advisory finding(s)${legacyNote(legacy)}`,
    startedAt,
  );
}

/** A tree-ish the gate accepts (a hash or a ref name); never an option-looking string. */
const TREEISH = /^[A-Za-z0-9][A-Za-z0-9._/^~{}@-]{0,199}$/;

/** Runs `fn` over `items` with at most `limit` in flight, keeping order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Gate 6 activity: compares the changed test files with their content in `beforeTree` (the tree or
 * commit of the previous iteration; null when there is none, so every file counts as new) and
 * looks for test-fitting alongside implementation changes. No changed test file: pass. A
 * `beforeTree` git does not have: inconclusive (a comparison that cannot be made is never a pass).
 */
export async function testMutationGate(opts: { repoPath: string; files: string[]; beforeTree: string | null }): Promise<GateResultInput> {
  const startedAt = Date.now();
  const scope = scopeFiles(opts.files, () => true);
  const testFiles = scope.filter((f) => isTestFile(f));
  if (testFiles.length === 0) return gateResult('test_mutation', [], 'no test file changed', startedAt);

  const tree = opts.beforeTree;
  if (tree !== null) {
    const ok = TREEISH.test(tree) && (await objectExists(opts.repoPath, `${tree}^{tree}`));
    if (!ok) {
      return {
        ...gateResult('test_mutation', [], '', startedAt),
        verdict: 'inconclusive',
        reason: 'previous tree not found in the repository; cannot compare test files',
      };
    }
  }
  const before = (rel: string): Promise<string | null> => (tree === null ? Promise.resolve(null) : readAtTree(opts.repoPath, tree, rel));
  const after = (rel: string): string | null => {
    const r = readRepoText(opts.repoPath, rel);
    return r.kind === 'text' ? r.text : null;
  };

  const changes: FileChange[] = await mapLimited(testFiles, 8, async (rel) => ({
    file: rel,
    before: await before(rel),
    after: after(rel),
  }));
  // Implementation changes matter only when an existing test changed; one is enough, so stop at the first.
  if (changes.some((c) => c.before !== null && c.before !== c.after)) {
    const impl = scope.filter((f) => isImplementationFile(f));
    for (let i = 0; i < impl.length; i += 8) {
      const batch = await mapLimited(impl.slice(i, i + 8), 8, async (rel) => ({ file: rel, before: await before(rel), after: after(rel) }));
      const hit = batch.find((c) => c.before !== c.after);
      if (hit) {
        changes.push(hit);
        break;
      }
    }
  }
  const all = mutationProblems(changes);
  return gateResult(
    'test_mutation',
    all,
    `${testFiles.length} changed test file(s) compared; ${all.length} advisory finding(s)`,
    startedAt,
  );
}
