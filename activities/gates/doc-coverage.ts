/**
 * Gate 7 (spec §5.1), documentation coverage: a repository an agent built unattended must still
 * be usable by the person who picks it up, so it needs a README, and the public API it changed
 * needs doc comments. Missing API docs are advisory (medium) in an ordinary repository and block
 * (high) in a publishable package, whose exported symbols are other people's interface
 * ("Missing API docs = Medium (BLOCK for npm/pip packages)").
 *
 * Whether the repository is such a package is read as npm and PyPI read it (publishable.ts), and
 * a failing run's reason names the file, the export, that rule and how to turn it off.
 *
 * The analysis (`undocumentedExports`) is pure and line by line, with anchored, bounded patterns;
 * the activity reads at most `MAX_FILE_BYTES` of at most `MAX_FILES` changed files.
 */
import { readdirSync } from 'node:fs';
import type { FindingInput, GateResultInput, Severity } from '../../schemas/gates.js';
import { asLegacy, legacyNote, scopeFindings, type ChangeScope } from './change-scope.js';
import { finding, gateResult, isTestFile, linesOf, MAX_FILE_BYTES, readRepoText, scopeFiles } from './test-integrity.js';
import { README_NAMES, readmeCandidates } from '../../rules/readme.js';
import { PRIVATE_CLASSIFIER, publishability, type Manifests, type Publishability } from '../../lib/gates/publishable.js';

type DocLang = 'js' | 'py';

function docLangOf(file: string): DocLang | null {
  if (file.endsWith('.d.ts') || file.endsWith('.d.mts') || file.endsWith('.d.cts')) return null;
  if (/\.(?:[cm]?[jt]s|[jt]sx)$/.test(file)) return 'js';
  if (file.endsWith('.py')) return 'py';
  return null;
}

/** Which changed files the gate documents: JS/TS and Python modules that are not tests or declarations. */
export function isDocumentedModule(rel: string): boolean {
  return docLangOf(rel) !== null && !isTestFile(rel);
}

const JS_EXPORT = new RegExp(
  [
    /^export\s{1,10}(?:default\s{1,10})?(?:declare\s{1,10})?(?:abstract\s{1,10})?(?:async\s{1,10})?/.source,
    /(const\s{1,10}enum|function|class|const|let|var|interface|type|enum|namespace)\b\s{0,10}\*?\s{0,10}/.source,
    /([A-Za-z_$][\w$]{0,200})?/.source,
  ].join(''),
);
const JS_DECORATOR = /^\s{0,200}@[A-Za-z_$][\w$.]{0,200}/;

/**
 * Top-level JS/TS exports (`export function|class|const|let|var|interface|type|enum|namespace`,
 * at column 0) not preceded by a `/** … *\/` block. Between the block's end and the export only
 * blank lines and decorators are allowed (decorators are part of the declaration; anything else,
 * a `//` comment or a statement, means the block documents something else). Re-exports
 * (`export { a }`, `export * from`) are documented where they are declared. Overloads: only the
 * first declaration of a name is checked.
 */
function undocumentedJs(file: string, lines: string[], severity: Severity): FindingInput[] {
  const out: FindingInput[] = [];
  const seen = new Set<string>();
  let inBlock = false;
  let blockIsDoc = false;
  let docReady = false;
  lines.forEach((line, i) => {
    if (inBlock) {
      const end = line.indexOf('*/');
      if (end >= 0) {
        inBlock = false;
        docReady = blockIsDoc && line.slice(end + 2).trim() === '';
      }
      return;
    }
    const t = line.trim();
    if (t === '') return;
    if (t.startsWith('/*')) {
      const isDoc = t.startsWith('/**') && !t.startsWith('/**/');
      const end = t.indexOf('*/', isDoc ? 3 : 2);
      if (end < 0) {
        inBlock = true;
        blockIsDoc = isDoc;
      } else {
        docReady = isDoc && t.slice(end + 2).trim() === '';
      }
      return;
    }
    if (JS_DECORATOR.test(line)) return;
    const m = JS_EXPORT.exec(line);
    if (m) {
      const name = m[2] ?? (line.startsWith('export default') ? 'default' : '');
      if (name && !seen.has(name)) {
        seen.add(name);
        if (!docReady)
          out.push(
            finding(
              'doc_coverage',
              severity,
              file,
              i + 1,
              `undocumented export: ${(m[1] ?? 'symbol').replace(/\s{1,10}/g, ' ')} ${name} has no /** … */ doc comment`,
            ),
          );
      }
    }
    docReady = false;
  });
  return out;
}

const PY_DEF = /^(?:async\s{1,10})?(def|class)\s{1,10}([A-Za-z_]\w{0,200})/;
const PY_DOCSTRING = /^(?:[rRuU]|[rR][bB]|[bB][rR])?(?:"""|'''|"|')/;
const MAX_HEADER_LINES = 50;

/** The code of a Python line without a trailing `#` comment (quotes are tracked, roughly). */
function pyCode(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}

/**
 * Public top-level Python `def`/`class` (at column 0, name not starting with `_`) whose body does
 * not start with a string literal (the docstring). The header may span lines (brackets are
 * counted, at most `MAX_HEADER_LINES`, never past the next top-level def/class); a body on the
 * header line (`def f(): return 1`) counts as undocumented unless it is a string.
 */
function undocumentedPy(file: string, lines: string[], severity: Severity): FindingInput[] {
  const out: FindingInput[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = PY_DEF.exec(lines[i] ?? '');
    if (!m) continue;
    const kind = m[1] ?? 'def';
    const name = m[2] ?? '';
    if (name.startsWith('_')) continue;
    // Find the colon that ends the header: bracket depth 0, at the end of the code or before an inline body.
    let depth = 0;
    let inline: string | null = null;
    let headerEnd = -1;
    for (let j = i; j < Math.min(lines.length, i + MAX_HEADER_LINES) && headerEnd < 0; j++) {
      // The next top-level def/class ends an unclosed header: each line is scanned by one header at most.
      if (j > i && PY_DEF.test(lines[j] ?? '')) break;
      const code = pyCode(lines[j] ?? '');
      let quote = '';
      for (let k = 0; k < code.length; k++) {
        const c = code[k];
        if (quote) {
          if (c === '\\') k++;
          else if (c === quote) quote = '';
          continue;
        }
        if (c === '"' || c === "'") quote = c;
        else if (c === '(' || c === '[' || c === '{') depth++;
        else if (c === ')' || c === ']' || c === '}') depth = Math.max(0, depth - 1);
        else if (c === ':' && depth === 0) {
          headerEnd = j;
          inline = code.slice(k + 1).trim();
          break;
        }
      }
    }
    if (headerEnd < 0) continue;
    let documented = false;
    if (inline) {
      documented = PY_DOCSTRING.test(inline);
    } else {
      for (let j = headerEnd + 1; j < lines.length; j++) {
        const l = lines[j] ?? '';
        const t = l.trim();
        if (t === '' || t.startsWith('#')) continue;
        documented = /^\s/.test(l) && PY_DOCSTRING.test(t);
        break;
      }
    }
    if (!documented) out.push(finding('doc_coverage', severity, file, i + 1, `undocumented export: ${kind} ${name} has no docstring`));
    i = Math.max(i, headerEnd);
  }
  return out;
}

/**
 * Exported symbols of one JS/TS or Python module that have no doc comment (see the two scanners
 * above for what counts). `severity` is medium for an ordinary repository, high for a
 * publishable package. Other files (and `.d.ts`) yield nothing.
 */
export function undocumentedExports(file: string, content: string, severity: Severity = 'medium'): FindingInput[] {
  const lang = docLangOf(file);
  if (lang === null) return [];
  const lines = linesOf(content.length > MAX_FILE_BYTES ? content.slice(0, MAX_FILE_BYTES) : content);
  return lang === 'js' ? undocumentedJs(file, lines, severity) : undocumentedPy(file, lines, severity);
}

/** The root's package manifests, as publishable.ts reads them (unreadable counts as absent). */
export function readManifests(repoPath: string): Manifests {
  const text = (rel: string): string | null => {
    const r = readRepoText(repoPath, rel);
    return r.kind === 'text' ? r.text : null;
  };
  return { packageJson: text('package.json'), pyproject: text('pyproject.toml'), setupCfg: text('setup.cfg'), setupPy: text('setup.py') };
}

/** How to turn the gate off, in every reason that blocks. */
export const DOC_GATE_OFF =
  'to turn the gate off, set the knob gateDocCoverage=false (--set gateDocCoverage=false, or VIGIL_GATE_DOC_COVERAGE=false)';

const clipped = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The reason of a failing run of the gate: the first blocking finding (which file, which export),
 * why it blocks and how to stop it blocking. One stable line (the same findings give the same
 * reason), within the 500 characters of a gate's reason: the file and export are clipped first.
 */
export function docFailureReason(first: FindingInput, blocking: number, pkg: Publishability): string {
  if (first.file === null) return `README missing or empty: add a README.md to the repository root; ${DOC_GATE_OFF}`;
  const what = first.message.replace(/^undocumented export: /, '');
  const more = blocking > 1 ? ` (and ${blocking - 1} more)` : '';
  const fix =
    pkg.registry === 'npm' ? 'add "private": true to package.json' : `list the classifier "${PRIVATE_CLASSIFIER}" in its classifiers`;
  const tail =
    `${more}. Undocumented exports block in a publishable package: ${pkg.why}. ` +
    `Document them, or, to make them advisory, ${fix}; ${DOC_GATE_OFF}`;
  return `${clipped(`${first.file}${first.line ? `:${first.line}` : ''}: export ${what}`, Math.max(80, 500 - tail.length))}${tail}`.slice(
    0,
    500,
  );
}

/** The root README's name (as spelt on disk) when one is present and has non-blank text, else null. */
function readmeWithText(repoPath: string): string | null {
  let names: string[];
  try {
    names = readdirSync(repoPath).slice(0, 10_000);
  } catch {
    return null;
  }
  for (const name of readmeCandidates(names)) {
    const r = readRepoText(repoPath, name, 64 * 1024);
    if (r.kind === 'text' && r.text.trim() !== '') return name;
  }
  return null;
}

/**
 * Gate 7 activity: README in the repository root, and doc comments on the exports of the changed
 * modules (repository-relative `files`). Fail on any high finding (no README; an undocumented
 * export of a publishable package); medium ones are advisory. With the run's `scope`, only what
 * the run wrote can block: an export on a line it did not write, or a README the start tree did
 * not have either, is listed as already in the base tree.
 */
export async function docCoverageGate(opts: {
  repoPath: string;
  files: string[];
  scope?: ChangeScope | undefined;
}): Promise<GateResultInput> {
  const startedAt = Date.now();
  const all: FindingInput[] = [];
  let legacy = 0;
  const readme = readmeWithText(opts.repoPath);
  if (readme === null) {
    const missing = finding(
      'doc_coverage',
      'high',
      null,
      null,
      `README missing or empty: add a README.md to the repository root that says what the project is and how to use it`,
    );
    const before = opts.scope?.startRoot;
    const hadNone = before !== undefined && !README_NAMES.some((n) => before.has(n));
    if (hadNone) legacy++;
    all.push(hadNone ? asLegacy(missing) : missing);
  }

  const pkg = publishability(readManifests(opts.repoPath));
  const severity: Severity = pkg.publishable ? 'high' : 'medium';
  const scope = scopeFiles(opts.files, isDocumentedModule);
  let checked = 0;
  let undocumented = 0;
  for (const rel of scope) {
    const r = readRepoText(opts.repoPath, rel);
    if (r.kind !== 'text') continue;
    checked++;
    const found = undocumentedExports(rel, r.text, severity);
    undocumented += found.length;
    const scoped = scopeFindings(found, opts.scope);
    legacy += scoped.legacy;
    all.push(...scoped.findings);
  }
  const advisory = undocumented > 0 && !pkg.publishable ? ` (advisory, not a publishable package: ${pkg.why})` : '';
  const result = gateResult(
    'doc_coverage',
    all,
    `${readme === null ? 'no README' : `${readme} present`}; ${checked} changed module(s) checked, ` +
      `${undocumented} undocumented export(s)${advisory}${legacyNote(legacy)}`,
    startedAt,
  );
  const first = result.findings?.[0];
  const blocking = all.filter((f) => f.file !== null && f.severity === 'high').length;
  return result.verdict === 'fail' && first ? { ...result, reason: docFailureReason(first, blocking, pkg) } : result;
}
