/**
 * Owns the unit tests of activities/gates/doc-coverage.ts (gate 7): README presence, doc comments
 * on the exports of changed JS/TS and Python modules, and the severity rule (advisory in an
 * ordinary repository, blocking in a publishable package). The gate runs on real temporary
 * folders; adversarial 512 KiB inputs check the scanners stay linear.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { docCoverageGate, isDocumentedModule, undocumentedExports } from '../../activities/gates/doc-coverage.js';
import { publishability, type Manifests } from '../../lib/gates/publishable.js';
import { GateResultSchema } from '../../schemas/gates.js';

const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-doc-test-'));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function write(repo: string, rel: string, content: string): void {
  const file = path.join(repo, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

const names = (file: string, content: string): string[] => undocumentedExports(file, content).map((f) => f.message);

// ---------------------------------------------------------------------------------------------
// JS/TS
// ---------------------------------------------------------------------------------------------

describe('undocumentedExports: JS/TS', () => {
  it('finds nothing when every export has a JSDoc block', () => {
    const content = [
      "import fs from 'node:fs';",
      '',
      '/** Adds two numbers. */',
      'export function add(a: number, b: number): number {',
      '  return a + b;',
      '}',
      '',
      '/**',
      ' * A counter.',
      ' */',
      'export class Counter {',
      '  /* members are not top-level exports */',
      '  count = 0;',
      '}',
      '',
      '/** The limit. */',
      '',
      'export const LIMIT = 3;',
      '/** Options. */',
      'export interface Options { a: string }',
      '/** A name. */',
      'export type Name = string;',
      '/** Loads. */',
      'export async function load(): Promise<void> {}',
      '/** Colours. */',
      'export enum Colour { Red }',
      'export { add as plus };',
      "export * from './other.js';",
      'export type { Options as Opts };',
      '',
    ].join('\n');
    expect(undocumentedExports('src/a.ts', content)).toEqual([]);
  });

  it('flags each kind of undocumented export (medium by default, at its line)', () => {
    const content = [
      'export function add(a, b) { return a + b; }',
      'export class Counter {}',
      'export const LIMIT = 3;',
      'export interface Options { a: string }',
      'export type Name = string;',
      'export async function load() {}',
      'export default function () {}',
      'export const enum Mode { A }',
      'export abstract class Base {}',
      '',
    ].join('\n');
    expect(undocumentedExports('src/a.ts', content)).toEqual([
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 1,
        message: 'undocumented export: function add has no /** … */ doc comment',
      },
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 2,
        message: 'undocumented export: class Counter has no /** … */ doc comment',
      },
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 3,
        message: 'undocumented export: const LIMIT has no /** … */ doc comment',
      },
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 4,
        message: 'undocumented export: interface Options has no /** … */ doc comment',
      },
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 5,
        message: 'undocumented export: type Name has no /** … */ doc comment',
      },
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 6,
        message: 'undocumented export: function load has no /** … */ doc comment',
      },
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 7,
        message: 'undocumented export: function default has no /** … */ doc comment',
      },
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 8,
        message: 'undocumented export: const enum Mode has no /** … */ doc comment',
      },
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 9,
        message: 'undocumented export: class Base has no /** … */ doc comment',
      },
    ]);
  });

  it('does not accept a line comment, a plain block comment or code between the doc block and the export', () => {
    expect(names('src/a.ts', '/** Doc. */\n// note\nexport const a = 1;\n')).toEqual([
      'undocumented export: const a has no /** … */ doc comment',
    ]);
    expect(names('src/a.ts', '/* not a doc */\nexport const a = 1;\n')).toEqual([
      'undocumented export: const a has no /** … */ doc comment',
    ]);
    expect(names('src/a.ts', '/*\n * not a doc\n */\nexport const a = 1;\n')).toEqual([
      'undocumented export: const a has no /** … */ doc comment',
    ]);
    expect(names('src/a.ts', '/** Doc of x. */\nconst x = 1;\nexport const a = x;\n')).toEqual([
      'undocumented export: const a has no /** … */ doc comment',
    ]);
    expect(names('src/a.ts', '/**/\nexport const a = 1;\n')).toEqual(['undocumented export: const a has no /** … */ doc comment']);
  });

  it('accepts decorators between the doc block and the export, and checks an overloaded name once', () => {
    expect(names('src/a.ts', '/** A service. */\n@Injectable()\n@Other\nexport class Service {}\n')).toEqual([]);
    expect(
      names(
        'src/a.ts',
        '/** Parses. */\nexport function parse(a: string): number;\nexport function parse(a: number): number;\nexport function ' +
          'parse(a: unknown): number { return 0; }\n',
      ),
    ).toEqual([]);
  });

  it('ignores exports that are not at the top level and files that are not modules of the project', () => {
    expect(names('src/a.ts', 'namespace N {\n  export const a = 1;\n}\n')).toEqual([]);
    expect(undocumentedExports('src/types.d.ts', 'export function f(): void;\n')).toEqual([]);
    expect(undocumentedExports('README.md', 'export function f() {}\n')).toEqual([]);
    expect(isDocumentedModule('src/a.ts')).toBe(true);
    expect(isDocumentedModule('src/a.test.ts')).toBe(false);
    expect(isDocumentedModule('src/a.d.ts')).toBe(false);
    expect(isDocumentedModule('tests/test_a.py')).toBe(false);
  });

  it('uses the severity it is given', () => {
    expect(undocumentedExports('src/a.js', 'export function f() {}\n', 'high')).toEqual([
      {
        gate: 'doc_coverage',
        severity: 'high',
        file: 'src/a.js',
        line: 1,
        message: 'undocumented export: function f has no /** … */ doc comment',
      },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Python
// ---------------------------------------------------------------------------------------------

describe('undocumentedExports: Python', () => {
  it('finds nothing when public functions and classes have docstrings', () => {
    const content = [
      'import os',
      '',
      '',
      'def add(a, b):',
      '    """Adds two numbers."""',
      '    return a + b',
      '',
      '',
      'async def load(',
      '    path: str,',
      '    opts: dict[str, int] = {"a": 1},',
      ') -> None:',
      '    # a comment before the docstring is not a statement',
      "    '''Loads a file.'''",
      '',
      '',
      '@dataclass',
      'class Point(Base):',
      '    r"""A point."""',
      '    x: int',
      '',
      '    def method(self):',
      '        return 1',
      '',
      '',
      'def _private():',
      '    return 1',
      '',
      '',
      'class _Hidden:',
      '    pass',
      '',
    ].join('\n');
    expect(undocumentedExports('pkg/core.py', content)).toEqual([]);
  });

  it('flags public functions and classes without a docstring as the first statement', () => {
    const content = [
      'def add(a, b):',
      '    return a + b',
      '',
      'class Point:',
      '    x = 1',
      '    """Too late to be a docstring."""',
      '',
      'def one(): return 1',
      '',
      'def two(',
      '    a,',
      '):',
      '    return a',
      '',
    ].join('\n');
    expect(undocumentedExports('pkg/core.py', content)).toEqual([
      { gate: 'doc_coverage', severity: 'medium', file: 'pkg/core.py', line: 1, message: 'undocumented export: def add has no docstring' },
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'pkg/core.py',
        line: 4,
        message: 'undocumented export: class Point has no docstring',
      },
      { gate: 'doc_coverage', severity: 'medium', file: 'pkg/core.py', line: 8, message: 'undocumented export: def one has no docstring' },
      { gate: 'doc_coverage', severity: 'medium', file: 'pkg/core.py', line: 10, message: 'undocumented export: def two has no docstring' },
    ]);
  });

  it('accepts a docstring on the header line', () => {
    expect(undocumentedExports('pkg/core.py', 'def f(): "Returns nothing."\n')).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Package detection
// ---------------------------------------------------------------------------------------------

const NONE: Manifests = { packageJson: null, pyproject: null, setupCfg: null, setupPy: null };
const npmPkg = (pkg: unknown) => publishability({ ...NONE, packageJson: JSON.stringify(pkg) });
const PRIVATE = 'Private :: Do Not Upload';

describe('publishability: npm', () => {
  it('publishes a package.json with a name, a semver version and no "private": true, and says so', () => {
    for (const pkg of [
      { name: 'lib', version: '1.0.0' },
      { name: 'lib', version: 'v2.3.4-rc.1', private: false },
    ]) {
      expect(npmPkg(pkg)).toEqual({
        publishable: true,
        registry: 'npm',
        why: 'package.json has a name and a version and no "private": true, so npm would publish it',
      });
    }
  });

  it('does not publish what npm refuses or cannot publish, and names why', () => {
    expect(npmPkg({ name: 'app', version: '1.0.0', private: true }).why).toBe(
      'package.json has "private": true, so npm refuses to publish it',
    );
    // libnpmpublish refuses any truthy "private".
    expect(npmPkg({ name: 'app', version: '1.0.0', private: 'yes' }).why).toBe(
      'package.json has "private": "yes", so npm refuses to publish it',
    );
    expect(npmPkg({ version: '1.0.0' }).why).toBe('package.json has no "name", so npm cannot publish it');
    expect(npmPkg({ name: '', version: '1.0.0' }).why).toBe('package.json has no "name", so npm cannot publish it');
    expect(npmPkg({ name: 'lib' }).why).toBe('package.json has no "version", so npm cannot publish it');
    expect(npmPkg({ name: 'lib', version: 'one' }).why).toBe(
      'package.json\'s "version" "one" is not a semver version, so npm cannot publish it',
    );
    expect(publishability({ ...NONE, packageJson: '{ nope' }).why).toBe('package.json does not parse as JSON, so npm cannot publish it');
    expect(publishability({ ...NONE, packageJson: '[1]' }).publishable).toBe(false);
    for (const pkg of [{ name: 'app', version: '1.0.0', private: true }, { name: 'lib' }]) expect(npmPkg(pkg).publishable).toBe(false);
  });

  it('says when there is no manifest at all', () => {
    expect(publishability(NONE)).toEqual({
      publishable: false,
      registry: null,
      why: 'no package.json, and no pyproject.toml, setup.cfg or setup.py with package metadata: not a package',
    });
  });
});

describe('publishability: PyPI', () => {
  const py = (files: Partial<Manifests>) => publishability({ ...NONE, ...files });

  it('publishes a [project] table with a name, a poetry package, setup.cfg metadata and a setup() call', () => {
    expect(py({ pyproject: '[build-system]\nrequires = ["hatchling"]\n\n[project] # pip\nname = "lib"\nversion = "1.0"\n' })).toEqual({
      publishable: true,
      registry: 'PyPI',
      why: 'pyproject.toml has a [project] table with a name, so it builds a distribution PyPI would take',
    });
    expect(py({ pyproject: '[tool.poetry]\nname = "lib"\nversion = "0.1.0"\n' }).why).toBe(
      'pyproject.toml has a [tool.poetry] table with a name, so `poetry publish` would upload it to PyPI',
    );
    expect(py({ setupCfg: '[metadata]\nname = lib\nversion = 1.0\n\n[options]\npackages = find:\n' }).why).toBe(
      'setup.cfg has [metadata] with a name, so it builds a distribution PyPI would take',
    );
    expect(py({ setupPy: 'from setuptools import setup\n\nsetup(\n    name="lib",\n    version="1.0",\n)\n' }).why).toBe(
      'setup.py calls setup() with a name, so it builds a distribution PyPI would take',
    );
  });

  it('does not publish what lists the classifier "Private :: Do Not Upload", nor a project that is no package', () => {
    expect(py({ pyproject: `[project]\nname = "app"\nclassifiers = ["Programming Language :: Python", "${PRIVATE}"]\n` })).toEqual({
      publishable: false,
      registry: null,
      why: 'pyproject.toml lists the classifier "Private :: Do Not Upload", so PyPI refuses to upload it',
    });
    expect(py({ setupCfg: `[metadata]\nname = app\nclassifiers =\n    Programming Language :: Python\n    ${PRIVATE}\n` }).why).toBe(
      'setup.cfg lists the classifier "Private :: Do Not Upload", so PyPI refuses to upload it',
    );
    expect(py({ setupPy: `setup(name="app", classifiers=["${PRIVATE}"])\n` }).publishable).toBe(false);
    // The private classifier stops the upload whichever file holds the name.
    expect(py({ setupPy: 'setup(name="app")\n', setupCfg: `[metadata]\nclassifiers = ${PRIVATE}\n` }).publishable).toBe(false);
    expect(py({ pyproject: '[tool.poetry]\nname = "app"\npackage-mode = false\n' }).why).toBe(
      'pyproject.toml sets [tool.poetry] package-mode = false: not a package',
    );
    expect(py({ pyproject: '[project]\nversion = "1"\n' }).publishable).toBe(false);
    expect(py({ pyproject: '[tool.ruff]\nline-length = 100\nname = "[project]"\n' }).publishable).toBe(false);
    expect(py({ pyproject: '[project.scripts]\nx = "y"\n' }).publishable).toBe(false);
    expect(py({ pyproject: '[project\n' }).why).toBe('pyproject.toml does not parse as TOML, so no distribution can be built from it');
    expect(py({ setupCfg: '[flake8]\nname = x\n', setupPy: 'import os\n' }).publishable).toBe(false);
  });

  it('takes either registry: a private package.json beside a pip package is publishable', () => {
    const r = publishability({
      ...NONE,
      packageJson: JSON.stringify({ name: 'app', private: true }),
      pyproject: '[project]\nname = "lib"\n',
    });
    expect(r).toMatchObject({ publishable: true, registry: 'PyPI' });
  });
});

// ---------------------------------------------------------------------------------------------
// The activity
// ---------------------------------------------------------------------------------------------

const DOCUMENTED = '/** Adds. */\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n';
const UNDOCUMENTED = 'import fs from "node:fs";\n\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n';

function repoWith(files: Record<string, string>): string {
  const repo = tempDir();
  for (const [rel, content] of Object.entries(files)) write(repo, rel, content);
  return repo;
}

const GATE_OFF = 'to turn the gate off, set the knob gateDocCoverage=false (--set gateDocCoverage=false, or VIGIL_GATE_DOC_COVERAGE=false)';
const README_MISSING = `README missing or empty: add a README.md to the repository root; ${GATE_OFF}`;

describe('docCoverageGate', () => {
  it('fails when the README is missing, with a stable reason', async () => {
    const repo = repoWith({ 'src/a.ts': DOCUMENTED });
    const r = await docCoverageGate({ repoPath: repo, files: ['src/a.ts'] });
    expect(r.verdict).toBe('fail');
    expect(r.reason).toBe(README_MISSING);
    expect(r.findings).toEqual([
      {
        gate: 'doc_coverage',
        severity: 'high',
        file: null,
        line: null,
        message: 'README missing or empty: add a README.md to the repository root that says what the project is and how to use it',
      },
    ]);
    expect((await docCoverageGate({ repoPath: repo, files: ['src/a.ts'] })).reason).toBe(r.reason);
    expect(GateResultSchema.parse(r).verdict).toBe('fail');
  });

  it('fails on an empty or blank README, and on a README that is a link', async () => {
    expect((await docCoverageGate({ repoPath: repoWith({ 'README.md': '' }), files: [] })).reason).toBe(README_MISSING);
    expect((await docCoverageGate({ repoPath: repoWith({ 'README.md': ' \n\n\t\n' }), files: [] })).reason).toBe(README_MISSING);
    const outside = repoWith({ 'notes.md': '# Elsewhere\n' });
    const linked = repoWith({});
    symlinkSync(path.join(outside, 'notes.md'), path.join(linked, 'README.md'));
    expect((await docCoverageGate({ repoPath: linked, files: [] })).verdict).toBe('fail');
  });

  it.each(['README.md', 'README', 'README.rst', 'README.txt', 'readme.md'])('passes with a non-empty %s', async (name) => {
    const r = await docCoverageGate({
      repoPath: repoWith({ [name]: '# Tool\n\nDoes things.\n', 'src/a.ts': DOCUMENTED }),
      files: ['src/a.ts'],
    });
    expect(r).toMatchObject({
      verdict: 'pass',
      reason: `${name} present; 1 changed module(s) checked, 0 undocumented export(s)`,
      findings: [],
      findingCount: 0,
    });
  });

  it('keeps undocumented exports advisory (medium) in a private repository', async () => {
    const repo = repoWith({
      'README.md': '# App\n',
      'package.json': JSON.stringify({ name: 'app', private: true }),
      'src/a.ts': UNDOCUMENTED,
    });
    const r = await docCoverageGate({ repoPath: repo, files: ['src/a.ts'] });
    expect(r.verdict).toBe('pass');
    expect(r.reason).toBe(
      'README.md present; 1 changed module(s) checked, 1 undocumented export(s) ' +
        '(advisory, not a publishable package: package.json has "private": true, so npm refuses to publish it)',
    );
    expect(r.findings).toEqual([
      {
        gate: 'doc_coverage',
        severity: 'medium',
        file: 'src/a.ts',
        line: 3,
        message: 'undocumented export: function add has no /** … */ doc comment',
      },
    ]);
  });

  it('fails on an undocumented export of a publishable npm package', async () => {
    const repo = repoWith({
      'README.md': '# Lib\n',
      'package.json': JSON.stringify({ name: 'lib', version: '1.0.0' }),
      'src/a.ts': UNDOCUMENTED,
      'src/b.ts': DOCUMENTED,
    });
    const r = await docCoverageGate({ repoPath: repo, files: ['src/b.ts', 'src/a.ts'] });
    expect(r).toMatchObject({
      verdict: 'fail',
      reason:
        'src/a.ts:3: export function add has no /** … */ doc comment. Undocumented exports block in a publishable package: ' +
        'package.json has a name and a version and no "private": true, so npm would publish it. ' +
        `Document them, or, to make them advisory, add "private": true to package.json; ${GATE_OFF}`,
      findingCount: 1,
    });
    expect(r.findings?.[0]?.severity).toBe('high');
    expect((await docCoverageGate({ repoPath: repo, files: ['src/a.ts', 'src/b.ts'] })).reason).toBe(r.reason);
  });

  it('fails on an undocumented function of a pip package, and passes once it has a docstring', async () => {
    const repo = repoWith({
      'README.md': '# Lib\n',
      'pyproject.toml': '[project]\nname = "lib"\n',
      'lib/core.py': 'def add(a, b):\n    return a + b\n',
    });
    expect(await docCoverageGate({ repoPath: repo, files: ['lib/core.py'] })).toMatchObject({
      verdict: 'fail',
      reason:
        'lib/core.py:1: export def add has no docstring. Undocumented exports block in a publishable package: ' +
        'pyproject.toml has a [project] table with a name, so it builds a distribution PyPI would take. ' +
        `Document them, or, to make them advisory, list the classifier "Private :: Do Not Upload" in its classifiers; ${GATE_OFF}`,
    });
    write(repo, 'lib/core.py', 'def add(a, b):\n    """Adds."""\n    return a + b\n');
    expect(await docCoverageGate({ repoPath: repo, files: ['lib/core.py'] })).toMatchObject({ verdict: 'pass', findingCount: 0 });
  });

  it('counts the other blocking exports, and keeps why and how to change it whatever the length of a path', async () => {
    const deep = `src/${'very-long-folder-name/'.repeat(20)}a.ts`;
    const repo = repoWith({
      'README.md': '# Lib\n',
      'package.json': JSON.stringify({ name: 'lib', version: '1.0.0' }),
      'src/a.ts': `${UNDOCUMENTED}export const two = 2;\n`,
      [deep]: UNDOCUMENTED,
    });
    const r = await docCoverageGate({ repoPath: repo, files: ['src/a.ts'] });
    expect(r.reason).toMatch(
      /^src\/a\.ts:3: export function add has no \/\*\* … \*\/ doc comment \(and 1 more\)\. Undocumented exports block/,
    );
    const long = await docCoverageGate({ repoPath: repo, files: [deep] });
    expect(long.verdict).toBe('fail');
    expect(long.reason.length).toBeLessThanOrEqual(500);
    expect(long.reason).toMatch(/^src\/very-long-folder-name\/.*…\. Undocumented exports block in a publishable package: /);
    expect(long.reason.endsWith(`add "private": true to package.json; ${GATE_OFF}`)).toBe(true);
  });

  it('keeps undocumented exports advisory in a pip package marked "Private :: Do Not Upload", and says why', async () => {
    const repo = repoWith({
      'README.md': '# App\n',
      'pyproject.toml': '[project]\nname = "app"\nclassifiers = ["Private :: Do Not Upload"]\n',
      'app/core.py': 'def add(a, b):\n    return a + b\n',
    });
    const r = await docCoverageGate({ repoPath: repo, files: ['app/core.py'] });
    expect(r).toMatchObject({
      verdict: 'pass',
      reason:
        'README.md present; 1 changed module(s) checked, 1 undocumented export(s) ' +
        '(advisory, not a publishable package: pyproject.toml lists the classifier "Private :: Do Not Upload", so PyPI refuses to upload it)',
    });
    expect(r.findings?.[0]).toMatchObject({ severity: 'medium', file: 'app/core.py', line: 1 });
  });

  it('blocks a package.json that lacks "private": true only once it has a name and a version, as npm reads it', async () => {
    const files = { 'README.md': '# App\n', 'src/a.ts': UNDOCUMENTED };
    const noVersion = await docCoverageGate({
      repoPath: repoWith({ ...files, 'package.json': JSON.stringify({ name: 'app' }) }),
      files: ['src/a.ts'],
    });
    expect(noVersion).toMatchObject({ verdict: 'pass' });
    expect(noVersion.reason).toContain('(advisory, not a publishable package: package.json has no "version", so npm cannot publish it)');
    const versioned = await docCoverageGate({
      repoPath: repoWith({ ...files, 'package.json': JSON.stringify({ name: 'app', version: '0.0.1' }) }),
      files: ['src/a.ts'],
    });
    expect(versioned).toMatchObject({ verdict: 'fail' });
    expect(versioned.reason).toContain('no "private": true, so npm would publish it');
  });

  it('skips tests, declarations, build output, dependencies and Vigil state', async () => {
    const files: Record<string, string> = { 'README.md': '# Lib\n', 'package.json': JSON.stringify({ name: 'lib', version: '1.0.0' }) };
    const skipped = [
      'src/a.test.ts',
      'tests/helpers.ts',
      'src/types.d.ts',
      'dist/a.js',
      'build/a.js',
      'node_modules/x/index.js',
      '.vigil/run/a.ts',
      'tests/test_a.py',
    ];
    for (const rel of skipped) files[rel] = UNDOCUMENTED;
    const r = await docCoverageGate({ repoPath: repoWith(files), files: [...skipped, '../outside.ts', '/etc/a.ts'] });
    expect(r).toMatchObject({
      verdict: 'pass',
      reason: 'README.md present; 0 changed module(s) checked, 0 undocumented export(s)',
      findingCount: 0,
    });
  });
});

describe('adversarial 512 KiB inputs', () => {
  const SIZE = 512 * 1024;
  const fill = (unit: string): string => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
  const inputs: Record<string, string> = {
    'unclosed python headers': fill('def a(\n'),
    'python headers with brackets': fill(`def a(${'('.repeat(3000)}\n`),
    'python defs with blank bodies': fill('def a():\n\n\n'),
    'doc blocks and exports': fill('/**\nexport function a() {}\n'),
    'long export lines': fill(`export ${' '.repeat(3000)}function\n`),
    decorators: fill(`@${'a'.repeat(3000)}\n`),
    'project headers': fill(`[project]${' '.repeat(4000)}x\n`),
    'one line': fill('export const '),
  };

  it.each(Object.keys(inputs))('%s: scanned in under a second', (name) => {
    const content = inputs[name] ?? '';
    const t0 = performance.now();
    undocumentedExports('src/a.ts', content);
    undocumentedExports('pkg/a.py', content);
    publishability({ packageJson: content, pyproject: content, setupCfg: content, setupPy: content });
    expect(performance.now() - t0).toBeLessThan(4000);
  });
});
