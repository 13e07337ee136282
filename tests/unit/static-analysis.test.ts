/**
 * Tests of activities/gates/static-analysis.ts (and the tool runner in activities/gates/tools.ts)
 * on real throw-away repositories with the real checkers of this machine: tsc and eslint from this
 * project's node_modules (linked into the temp repo), python3, bash, go, cargo. Tools that may be
 * absent (shellcheck, ruff, go, cargo) are probed first and the test asserts whichever path applies
 * — a missing tool must be reported in `missingTools`, never be a silent pass. The "not installed"
 * paths are also forced by giving the gate a PATH without the tool.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { GateResultSchema, MAX_FINDINGS, type GateResult } from '../../schemas/gates.js';
import { staticAnalysis } from '../../activities/gates/static-analysis.js';
import { runTool } from '../../lib/gates/tools.js';
import { findBinary } from '../../lib/find-binary.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LOCAL_BIN = path.join(ROOT, 'node_modules', '.bin');
const TIMEOUT = 120_000;
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temp repository with the given files (paths relative to it). */
function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-sa-test-'));
  dirs.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

/** Links this project's copy of a Node tool into the temp repo's node_modules/.bin. */
function linkTool(dir: string, name: string): void {
  mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(path.join(LOCAL_BIN, name), path.join(dir, 'node_modules', '.bin', name));
}

/** An empty folder: as a PATH it finds no tool at all. */
function emptyPath(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-sa-path-'));
  dirs.push(dir);
  return dir;
}

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
  },
  include: ['src'],
});

async function gate(repoPath: string, files: string[], extra: { timeoutMs?: number; pathEnv?: string } = {}): Promise<GateResult> {
  const r = await staticAnalysis({
    repoPath,
    files,
    timeoutMs: extra.timeoutMs ?? 60_000,
    ...(extra.pathEnv !== undefined ? { pathEnv: extra.pathEnv } : {}),
  });
  const parsed = GateResultSchema.parse(r); // always a valid gate result
  expect(parsed.findings).toEqual(r.findings);
  expect(parsed.gate).toBe('static_analysis');
  expect(parsed.reason).not.toContain(repoPath); // no temp paths in the stable reason
  expect(parsed.reason).not.toMatch(/\n/);
  return parsed;
}

describe('staticAnalysis: nothing to analyse', () => {
  it('passes with no changed files', async () => {
    const dir = repo({});
    const r = await gate(dir, []);
    expect(r).toMatchObject({ verdict: 'pass', reason: 'no changed file to analyse', findings: [], findingCount: 0, missingTools: [] });
  });

  it('ignores unknown languages, missing files and .vigil/', async () => {
    const dir = repo({ 'README.md': '# hi\n', '.vigil/x.sh': 'if then\n', 'data.json': '{' });
    const r = await gate(dir, ['README.md', '.vigil/x.sh', 'gone.py', 'data.json', '../outside.sh']);
    expect(r.verdict).toBe('pass');
    expect(r.reason).toBe('no changed file to analyse');
  });
});

describe('staticAnalysis: TypeScript (tsc)', () => {
  it(
    'fails on a type error in a changed file, naming file:line, with a stable reason',
    async () => {
      const dir = repo({
        'tsconfig.json': TSCONFIG,
        'src/a.ts': 'export const ok = 1;\nexport function f(): number {\n  const n: number = "text";\n  return n;\n}\n',
        'src/b.ts': 'export const b: string = "fine";\n',
      });
      linkTool(dir, 'tsc');
      const first = await gate(dir, ['src/a.ts', 'src/b.ts']);
      expect(first.verdict).toBe('fail');
      expect(first.findings[0]).toMatchObject({ gate: 'static_analysis', severity: 'high', file: 'src/a.ts', line: 3 });
      expect(first.findings[0]?.message).toMatch(/^TS2322 /);
      expect(first.reason).toMatch(/^1 error in 1 file: src\/a\.ts:3 TS2322 /);
      const second = await gate(dir, ['src/b.ts', 'src/a.ts']);
      expect(second.reason).toBe(first.reason);
      expect(second.findings).toEqual(first.findings);
    },
    TIMEOUT,
  );

  it(
    'passes when the only type error is in an unchanged file, counting it in the reason',
    async () => {
      const dir = repo({
        'tsconfig.json': TSCONFIG,
        'src/a.ts': 'export const a: number = 1;\n',
        'src/old.ts': 'export const broken: number = "x";\n',
      });
      linkTool(dir, 'tsc');
      const r = await gate(dir, ['src/a.ts']);
      expect(r.verdict).toBe('pass');
      expect(r.findings).toEqual([]);
      expect(r.reason).toBe('no errors in 1 changed file; 1 tsc error in unchanged files ignored');
    },
    TIMEOUT,
  );

  it('reports tsc as missing and is inconclusive when it is not installed', async () => {
    const dir = repo({ 'tsconfig.json': TSCONFIG, 'src/a.ts': 'export const a = 1;\n' });
    const r = await gate(dir, ['src/a.ts'], { pathEnv: emptyPath() });
    expect(r.verdict).toBe('inconclusive');
    expect(r.missingTools).toEqual([expect.stringMatching(/^tsc: not installed/)]);
    expect(r.reason).toMatch(/not checked \(tools missing\).*missing: tsc/);
  });

  it('notes JS/TS files that nothing is configured to check, and passes', async () => {
    const dir = repo({ 'index.js': 'module.exports = 1;\n' });
    const r = await gate(dir, ['index.js']);
    expect(r.verdict).toBe('pass');
    expect(r.reason).toBe('no errors in 1 changed file; 1 JS/TS file not checked (no eslint config or tsconfig.json)');
  });

  it('reports a tool that hangs as timed out (inconclusive), killing it within the budget', async () => {
    const dir = repo({
      'tsconfig.json': TSCONFIG,
      'src/a.ts': 'export const a = 1;\n',
      'node_modules/.bin/tsc': '#!/bin/sh\nsleep 60 & sleep 60\n',
    });
    chmodSync(path.join(dir, 'node_modules/.bin/tsc'), 0o755);
    const started = Date.now();
    const r = await gate(dir, ['src/a.ts'], { timeoutMs: 500 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.verdict).toBe('inconclusive');
    expect(r.findings).toEqual([expect.objectContaining({ severity: 'medium', file: null, message: 'tsc: tool timed out' })]);
    expect(r.reason).toBe('inconclusive: tsc timed out');
  });
});

describe('staticAnalysis: budget and cancellation', () => {
  it('a spent budget reports each tool timing out once, inconclusive', async () => {
    const dir = repo({ 'a.sh': 'echo a\n', 'b.sh': 'echo b\n', 'c.sh': 'echo c\n' });
    const r = await gate(dir, ['a.sh', 'b.sh', 'c.sh'], { timeoutMs: 1 });
    expect(r.verdict).toBe('inconclusive');
    expect(r.findings.filter((f) => f.message === 'bash -n: tool timed out')).toHaveLength(1);
    expect(r.reason).toMatch(/^inconclusive: bash -n timed out/);
  });

  it('cancellation throws instead of returning a verdict', async () => {
    const dir = repo({ 'a.sh': 'echo a\n' });
    const ac = new AbortController();
    ac.abort(new Error('stop now'));
    await expect(staticAnalysis({ repoPath: dir, files: ['a.sh'], timeoutMs: 10_000, signal: ac.signal })).rejects.toThrow('stop now');
  });
});

describe('staticAnalysis: ESLint', () => {
  const config =
    "export default [{ rules: { 'no-undef': 'error', 'no-console': 'warn' }, languageOptions: { globals: { console: 'readonly' } } }];\n";

  it(
    'maps ESLint errors to high and warnings to low findings',
    async () => {
      const dir = repo({
        'eslint.config.mjs': config,
        'a.js': 'console.log(1);\nexport const x = missingName;\n',
        'b.js': 'console.log(2);\n',
      });
      linkTool(dir, 'eslint');
      const r = await gate(dir, ['a.js', 'b.js']);
      expect(r.verdict).toBe('fail');
      expect(r.findings).toEqual([
        { gate: 'static_analysis', severity: 'high', file: 'a.js', line: 2, message: "'missingName' is not defined. (no-undef)" },
        { gate: 'static_analysis', severity: 'low', file: 'a.js', line: 1, message: 'Unexpected console statement. (no-console)' },
        { gate: 'static_analysis', severity: 'low', file: 'b.js', line: 1, message: 'Unexpected console statement. (no-console)' },
      ]);
      expect(r.findingCount).toBe(3);
      expect(r.reason).toBe("1 error in 1 file: a.js:2 'missingName' is not defined. (no-undef)");
    },
    TIMEOUT,
  );

  it(
    'passes with only warnings',
    async () => {
      const dir = repo({ 'eslint.config.mjs': config, 'b.js': 'console.log(2);\n' });
      linkTool(dir, 'eslint');
      const r = await gate(dir, ['b.js']);
      expect(r.verdict).toBe('pass');
      expect(r.findings).toHaveLength(1);
      expect(r.findings[0]?.severity).toBe('low');
    },
    TIMEOUT,
  );

  it('reports eslint as missing when a config exists but the binary does not (inconclusive)', async () => {
    const dir = repo({ 'package.json': JSON.stringify({ name: 'x', eslintConfig: { rules: {} } }), 'a.js': 'export const a = 1;\n' });
    const pathEnv = emptyPath();
    expect(findBinary('eslint', dir, pathEnv)).toBeNull();
    const r = await gate(dir, ['a.js'], { pathEnv });
    expect(r.verdict).toBe('inconclusive');
    expect(r.missingTools).toEqual([expect.stringMatching(/^eslint: not installed \(npm install/)]);
  });
});

describe('staticAnalysis: Python', () => {
  it('fails on a syntax error (ruff when installed, else a compile check without writing bytecode)', async () => {
    const dir = repo({ 'pkg/bad.py': 'def f(:\n    return 1\n', 'good.py': 'x = 1\n' });
    const r = await gate(dir, ['pkg/bad.py', 'good.py']);
    expect(r.verdict).toBe('fail');
    expect(r.findings[0]).toMatchObject({ severity: 'high', file: 'pkg/bad.py', line: 1 });
    expect(r.reason).toMatch(/^1 error in 1 file: pkg\/bad\.py:1 /);
    expect(r.missingTools).not.toContainEqual(expect.stringMatching(/^ruff/)); // py_compile is the fallback, not a missing tool
    expect(existsSync(path.join(dir, 'pkg', '__pycache__'))).toBe(false);
  });

  it('passes clean files and says which checker ran', async () => {
    const dir = repo({ 'good.py': 'def f(x):\n    return x + 1\n' });
    const r = await gate(dir, ['good.py']);
    expect(r.verdict).toBe('pass');
    if (findBinary('ruff')) expect(r.reason).toBe('no errors in 1 changed file');
    else expect(r.reason).toBe('no errors in 1 changed file; ruff not installed: used py_compile');
  });

  it('is inconclusive when no Python checker exists at all', async () => {
    const dir = repo({ 'good.py': 'x = 1\n' });
    const r = await gate(dir, ['good.py'], { pathEnv: emptyPath() });
    expect(r.verdict).toBe('inconclusive');
    expect(r.missingTools).toEqual([expect.stringMatching(/^python3: not installed/)]);
  });
});

describe('staticAnalysis: shell', () => {
  const shellcheck = findBinary('shellcheck');

  it('fails on a bash syntax error, also in an extension-less script with a shebang', async () => {
    const dir = repo({
      'run.sh': 'echo ok\nif true; then\n  echo x\n',
      'bin/tool': '#!/bin/bash\nfor x in; do\ndone\n',
      'ok.sh': 'echo fine\n',
    });
    const r = await gate(dir, ['run.sh', 'bin/tool', 'ok.sh']);
    expect(r.verdict).toBe('fail');
    const files = r.findings.filter((f) => f.severity === 'high').map((f) => f.file);
    expect(files).toContain('run.sh');
    expect(files).toContain('bin/tool');
    expect(files).not.toContain('ok.sh');
    expect(r.findings.find((f) => f.file === 'run.sh')?.message).toMatch(/^bash -n: .*(syntax error|unexpected end of file)/);
    if (!shellcheck) expect(r.missingTools).toContainEqual(expect.stringMatching(/^shellcheck: not installed/));
  });

  it('passes a clean script; shellcheck is used when installed and listed as missing otherwise', async () => {
    const dir = repo({ 'ok.sh': '#!/bin/sh\necho "fine"\n' });
    const r = await gate(dir, ['ok.sh']);
    // bash -n still checked the file, so a missing shellcheck is reported without blocking.
    expect(r.verdict).toBe('pass');
    if (shellcheck) expect(r.missingTools).toEqual([]);
    else expect(r.missingTools).toEqual([expect.stringMatching(/^shellcheck: not installed/)]);
  });

  it('is inconclusive, never a pass, when neither bash nor shellcheck can run', async () => {
    const dir = repo({ 'ok.sh': 'echo fine\n' });
    const r = await gate(dir, ['ok.sh'], { pathEnv: emptyPath() });
    expect(r.verdict).toBe('inconclusive');
    expect(r.missingTools).toEqual([expect.stringMatching(/^bash: not installed/), expect.stringMatching(/^shellcheck: not installed/)]);
  });
});

describe('staticAnalysis: Go and Rust', () => {
  const go = findBinary('go');
  const cargo = findBinary('cargo');

  it(
    'go vet: a Printf format mismatch in a changed file fails (or go is reported missing)',
    async () => {
      const dir = repo({
        'svc/go.mod': 'module example.com/svc\n\ngo 1.20\n',
        'svc/main.go': 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Printf("%d\\n", "text")\n}\n',
      });
      const r = await gate(dir, ['svc/main.go']);
      if (go) {
        expect(r.verdict).toBe('fail');
        expect(r.findings[0]).toMatchObject({ severity: 'high', file: 'svc/main.go', line: 6 });
        expect(r.findings[0]?.message).toMatch(/^go vet: .*Printf format %d/);
      } else {
        expect(r.verdict).toBe('inconclusive');
        expect(r.missingTools).toEqual([expect.stringMatching(/^go: not installed/)]);
      }
    },
    TIMEOUT,
  );

  it('go missing from PATH: reported, inconclusive', async () => {
    const dir = repo({ 'go.mod': 'module example.com/m\n\ngo 1.20\n', 'main.go': 'package main\n\nfunc main() {}\n' });
    const r = await gate(dir, ['main.go'], { pathEnv: emptyPath() });
    expect(r.verdict).toBe('inconclusive');
    expect(r.missingTools).toEqual([expect.stringMatching(/^go: not installed/)]);
  });

  it(
    'cargo check: a type error fails (or cargo is reported missing)',
    async () => {
      const dir = repo({
        'Cargo.toml': '[package]\nname = "t"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
        'src/main.rs': 'fn main() {\n    let x: i32 = "a";\n    println!("{}", x);\n}\n',
      });
      const r = await gate(dir, ['src/main.rs']);
      if (cargo) {
        expect(r.verdict).toBe('fail');
        expect(r.findings[0]).toMatchObject({ severity: 'high', file: 'src/main.rs', line: 2 });
        expect(r.findings[0]?.message).toMatch(/^error\[E0308\]: mismatched types/);
      } else {
        expect(r.verdict).toBe('inconclusive');
        expect(r.missingTools).toEqual([expect.stringMatching(/^cargo: not installed/)]);
      }
    },
    TIMEOUT,
  );

  it('cargo missing from PATH: reported, inconclusive', async () => {
    const dir = repo({ 'Cargo.toml': '[package]\nname = "t"\nversion = "0.1.0"\n', 'src/main.rs': 'fn main() {}\n' });
    const r = await gate(dir, ['src/main.rs'], { pathEnv: emptyPath() });
    expect(r.verdict).toBe('inconclusive');
    expect(r.missingTools).toEqual([expect.stringMatching(/^cargo: not installed/)]);
  });
});

describe('staticAnalysis: mixed change sets', () => {
  it('passes a clean set across languages', async () => {
    const dir = repo({ 'a.py': 'print(1)\n', 'b.sh': 'echo ok\n', 'README.md': 'text\n' });
    const r = await gate(dir, ['a.py', 'b.sh', 'README.md']);
    expect(r.verdict).toBe('pass');
    expect(r.reason).toMatch(/^no errors in 2 changed files/);
  });

  it('caps findings at MAX_FINDINGS and keeps the total', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < MAX_FINDINGS + 5; i++) files[`s${String(i).padStart(2, '0')}.sh`] = 'if then\n';
    const dir = repo(files);
    const r = await gate(dir, Object.keys(files));
    expect(r.verdict).toBe('fail');
    expect(r.findings).toHaveLength(MAX_FINDINGS);
    expect(r.findingCount).toBe(MAX_FINDINGS + 5);
    expect(r.reason).toMatch(/^25 errors in 25 files: s00\.sh:1 bash -n: syntax error/);
  });

  it('a failure elsewhere wins over a missing tool', async () => {
    const dir = repo({ 'bad.sh': 'if then\n', 'go.mod': 'module m\n', 'main.go': 'package main\n' });
    const pathEnv = path.dirname(findBinary('bash') ?? '/bin/bash');
    const r = await gate(dir, ['bad.sh', 'main.go'], { pathEnv });
    expect(r.verdict).toBe('fail');
    if (!findBinary('go', undefined, pathEnv)) expect(r.missingTools).toContainEqual(expect.stringMatching(/^go: not installed/));
  });
});

describe('runTool', () => {
  it('captures output and exit code, closes stdin', async () => {
    const r = await runTool('/bin/sh', ['-c', 'read x || echo no-input; echo out; echo err >&2; exit 3'], {
      cwd: os.tmpdir(),
      timeoutMs: 10_000,
    });
    expect(r).toMatchObject({
      exitCode: 3,
      timedOut: false,
      aborted: false,
      stdout: 'no-input\nout\n',
      stderr: 'err\n',
      truncated: false,
      spawnError: null,
    });
  });

  it('caps output', async () => {
    const r = await runTool('/bin/sh', ['-c', 'yes 0123456789 | head -c 3000000'], {
      cwd: os.tmpdir(),
      timeoutMs: 10_000,
      maxOutputBytes: 1000,
    });
    expect(r.stdout).toHaveLength(1000);
    expect(r.truncated).toBe(true);
    expect(r.exitCode).toBe(0);
  });

  it('reports a binary that cannot start', async () => {
    const r = await runTool('/nonexistent/tool', [], { cwd: os.tmpdir(), timeoutMs: 10_000 });
    expect(r.spawnError).toBe('tool: command not found');
  });

  it('stops on abort', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const started = Date.now();
    const r = await runTool('/bin/sh', ['-c', 'sleep 30'], { cwd: os.tmpdir(), timeoutMs: 60_000, signal: ac.signal });
    expect(r.aborted).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('findBinary prefers the repository node_modules/.bin, then absolute PATH entries', () => {
    const dir = repo({ 'node_modules/.bin/mytool': '#!/bin/sh\n', 'notexec/mytool': '#!/bin/sh\n' });
    chmodSync(path.join(dir, 'node_modules/.bin/mytool'), 0o755);
    expect(findBinary('mytool', dir, '')).toBe(path.join(dir, 'node_modules/.bin/mytool'));
    expect(findBinary('mytool', undefined, path.join(dir, 'notexec'))).toBeNull(); // not executable
    expect(findBinary('mytool', undefined, 'node_modules/.bin')).toBeNull(); // relative PATH entry
    expect(findBinary('sh', undefined, '/nonexistent:/bin')).toBe('/bin/sh');
  });
});
