/**
 * The build gate (activities/gates/build.ts): what it detects per ecosystem, and its verdict
 * rules, with real builds: this checkout's typescript linked into a scratch project as a
 * project's own would be installed, `sh` for a configured command. A build that cannot start,
 * is killed or overruns is never green; no build is not applicable, said so.
 * The sandbox is left to the workflow test (tests/workflow/build-gate.test.ts), which runs the
 * gate in it as a run does.
 */
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildGate,
  buildVerdict,
  detectBuild,
  locatedErrors,
  logTail,
  NO_BUILD_REASON,
  readableLog,
  type BuildPlan,
} from '../../activities/gates/build.js';
import type { ToolRun } from '../../lib/gates/tools.js';
import { ROOT } from '../support/harness.js';
import { patient } from '../support/patience.js';

const repo = (files: Record<string, string>): string => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-build-gate-'));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return dir;
};

/** A directory holding only the named tools (links to the worker's), for a PATH that lacks the others. */
function pathWith(names: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-build-path-'));
  for (const n of names) {
    for (const d of (process.env.PATH ?? '').split(':')) {
      try {
        symlinkSync(path.join(d, n), path.join(dir, n));
        readFileSync(path.join(dir, n));
        break;
      } catch {
        /* not in this folder */
      }
    }
  }
  return dir;
}

const run = (over: Partial<ToolRun>): ToolRun => ({
  exitCode: 0,
  timedOut: false,
  aborted: false,
  stdout: '',
  stderr: '',
  truncated: false,
  spawnError: null,
  ...over,
});
const PLAN: BuildPlan = { ecosystem: 'npm', label: 'npm run build', argv: ['/usr/bin/npm', 'run', 'build'], missing: null, env: {} };

describe('what the build gate detects', () => {
  it('the knob first: a command runs as given, off and none turn the gate off', () => {
    const dir = repo({ 'package.json': '{"scripts":{"build":"tsc"}}' });
    expect(detectBuild(dir, 'make dist')).toMatchObject({ kind: 'build', plan: { ecosystem: 'command', label: 'make dist' } });
    expect(detectBuild(dir, 'off')).toEqual({ kind: 'off' });
    expect(detectBuild(dir, ' NONE ')).toEqual({ kind: 'off' });
  });

  it('npm run build for a build script; else tsc --noEmit where the project installs typescript', () => {
    expect(detectBuild(repo({ 'package.json': '{"scripts":{"build":"tsc -p ."}}' }), '')).toMatchObject({
      plan: { ecosystem: 'npm', label: 'npm run build' },
    });
    const ts = repo({ 'package.json': '{"scripts":{"test":"node --test"}}', 'tsconfig.json': '{}' });
    // A tsconfig without a local typescript is no build the gate can run: not applicable.
    expect(detectBuild(ts, '')).toEqual({ kind: 'none', reason: NO_BUILD_REASON });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(ts, 'node_modules'));
    expect(detectBuild(ts, '')).toMatchObject({
      plan: { ecosystem: 'typescript', argv: ['node_modules/.bin/tsc', '-p', 'tsconfig.json', '--noEmit'] },
    });
    // A build script that is not a string, or a package.json that does not parse, is no build script.
    expect(detectBuild(repo({ 'package.json': '{"scripts":{"build":7}}' }), '').kind).toBe('none');
    expect(detectBuild(repo({ 'package.json': '{"scripts":' }), '').kind).toBe('none');
  });

  it('go build, cargo build --offline and compileall by their project files; the tools from PATH only', () => {
    const tools = pathWith(['go', 'cargo', 'python3', 'sh']);
    expect(detectBuild(repo({ 'go.mod': 'module x\n' }), '', tools)).toMatchObject({ plan: { ecosystem: 'go', label: 'go build ./...' } });
    expect(detectBuild(repo({ 'Cargo.toml': '[package]\n' }), '', tools)).toMatchObject({
      plan: { ecosystem: 'rust', label: 'cargo build --offline' },
    });
    const py = detectBuild(repo({ 'pyproject.toml': '[project]\nname="x"\n' }), '', tools);
    expect(py).toMatchObject({ plan: { ecosystem: 'python', label: 'python3 -m compileall -q .' } });
    // Not installed: the plan says what to install, and runs nothing.
    const none = mkdtempSync(path.join(os.tmpdir(), 'vigil-empty-path-'));
    expect(detectBuild(repo({ 'go.mod': 'module x\n' }), '', none)).toMatchObject({
      plan: { argv: null, missing: expect.stringMatching(/^go: not installed/) },
    });
  });

  it('a repository with none of these has no build: not applicable', () => {
    expect(detectBuild(repo({ 'README.md': '# x\n', 'main.py': 'print(1)\n' }), '')).toEqual({ kind: 'none', reason: NO_BUILD_REASON });
  });
});

describe('the build verdict', () => {
  const note = 'log: /r/gates/build-0001.log';
  it('exit 0 passes', () => {
    expect(buildVerdict(PLAN, run({}), '', 300, note)).toMatchObject({ verdict: 'pass', reason: 'builds (`npm run build` exited 0)' });
  });
  it('a failing build fails, with its located errors and the log tail in the finding', () => {
    const log = "src/unused.ts(2,7): error TS2322: Type 'string' is not assignable to type 'number'.\nFound 1 error.\n";
    const r = buildVerdict(PLAN, run({ exitCode: 2 }), log, 300, note);
    expect(r).toMatchObject({ verdict: 'fail', reason: 'the build `npm run build` failed (exit 2, 1 located error)' });
    expect(r.findings?.[0]).toMatchObject({
      gate: 'build',
      file: 'src/unused.ts',
      line: 2,
      message: expect.stringMatching(/^error TS2322/),
    });
    expect(r.findings?.[1]?.message).toContain(`${note}; log tail: src/unused.ts(2,7): error TS2322`);
  });
  it('never green when nobody saw the build finish: not started, exit 127, killed, overrun', () => {
    const cases: [Partial<ToolRun>, RegExp][] = [
      [{ exitCode: null, spawnError: 'sh: command not found' }, /could not start \(sh: command not found\)/],
      [{ exitCode: 127 }, /could not start \(exit 127/],
      [{ exitCode: null }, /was killed before it finished/],
      [{ exitCode: null, timedOut: true }, /did not finish within 300s/],
      [{ exitCode: 125 }, /failed \(exit 125\)/],
    ];
    for (const [r, why] of cases) {
      const v = buildVerdict(PLAN, run(r), 'vigil-build: nothing\n', 300, note);
      expect(v.verdict, JSON.stringify(r)).toBe('fail');
      expect(v.reason).toMatch(why);
    }
    expect(
      buildVerdict(PLAN, run({ exitCode: 125 }), 'vigil-build: the working tree could not be copied to /tmp/x\n', 300, note).reason,
    ).toMatch(/could not be copied/);
  });
  it("reads the log with the repository's paths, and keeps its tail short", () => {
    expect(readableLog('vigil-build-copy: /tmp/vigil-build-ab12\n/tmp/vigil-build-ab12/src/a.ts(1,1): error TS1\n')).toBe(
      'src/a.ts(1,1): error TS1\n',
    );
    expect(logTail(Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n'))).toMatch(/line 88 \| .* \| line 99$/);
    expect(locatedErrors('./main.go:5:2: undefined: x\n/abs/y.go:1:1: no\n../up.go:1:1: no\n')).toEqual([
      { gate: 'build', severity: 'high', file: 'main.go', line: 5, message: 'undefined: x' },
    ]);
  });
});

describe('the build gate, run', { timeout: patient(60_000) }, () => {
  const logDir = (): string => mkdtempSync(path.join(os.tmpdir(), 'vigil-build-log-'));
  /** A TypeScript project whose tests would pass (they import only `ok.ts`) and whose other file does not type-check. */
  const tsProject = (broken: boolean): string => {
    const dir = repo({
      'package.json': '{"name":"p","scripts":{"test":"node --test"}}',
      'tsconfig.json': '{"compilerOptions":{"strict":true,"noEmit":false,"outDir":"dist","incremental":true},"include":["src"]}',
      'src/ok.ts': 'export const ok = (n: number): number => n + 1;\n',
      'src/unused.ts': broken ? 'export const n: number = "not a number";\n' : 'export const n: number = 1;\n',
    });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    return dir;
  };

  it('a type error in a file no test imports fails the gate, its log in the run folder; the tree is left as it was', async () => {
    const dir = tsProject(true);
    const logPath = path.join(logDir(), 'build-0001.log');
    const r = await buildGate({ repoPath: dir, command: '', timeoutMs: 50_000, logPath });
    expect(r).toMatchObject({ verdict: 'fail', reason: 'the build `tsc -p tsconfig.json --noEmit` failed (exit 2, 1 located error)' });
    expect(r.findings?.[0]).toMatchObject({ file: 'src/unused.ts', line: 1 });
    expect(readFileSync(logPath, 'utf8')).toMatch(/^\$ tsc -p tsconfig.json --noEmit\nsrc\/unused.ts\(1,14\): error TS2322/);
    // The build ran in a copy: no tsbuildinfo, no dist in the repository.
    expect(() => readFileSync(path.join(dir, 'tsconfig.tsbuildinfo'))).toThrow();
  });

  it('the honest control builds', async () => {
    const r = await buildGate({ repoPath: tsProject(false), command: '', timeoutMs: 50_000, logPath: path.join(logDir(), 'b.log') });
    expect(r).toMatchObject({ verdict: 'pass', reason: 'builds (`tsc -p tsconfig.json --noEmit` exited 0)' });
  });

  it('a configured command that writes its output builds in the copy; one not installed, or too slow, is red', async () => {
    const dir = repo({ 'a.txt': 'x\n' });
    const ok = await buildGate({
      repoPath: dir,
      command: 'mkdir -p dist && cp a.txt dist/',
      timeoutMs: 20_000,
      logPath: path.join(logDir(), 'c.log'),
    });
    expect(ok.verdict).toBe('pass');
    expect(() => readFileSync(path.join(dir, 'dist', 'a.txt'))).toThrow();
    const missing = await buildGate({
      repoPath: dir,
      command: 'no-such-builder-x --all',
      timeoutMs: 20_000,
      logPath: path.join(logDir(), 'd.log'),
    });
    expect(missing).toMatchObject({ verdict: 'fail', reason: expect.stringMatching(/could not start \(exit 127/) });
    const slow = await buildGate({ repoPath: dir, command: 'sleep 30', timeoutMs: 1500, logPath: path.join(logDir(), 'e.log') });
    expect(slow).toMatchObject({ verdict: 'fail', reason: expect.stringMatching(/did not finish within 2s/) });
  });

  it('no build: passes as not applicable, and runs nothing', async () => {
    const logPath = path.join(logDir(), 'f.log');
    const r = await buildGate({ repoPath: repo({ 'README.md': '# x\n' }), command: '', timeoutMs: 5000, logPath });
    expect(r).toEqual({ gate: 'build', verdict: 'pass', reason: NO_BUILD_REASON });
    expect(() => readFileSync(logPath)).toThrow();
  });

  it('a Python project: compileall fails on a module no test imports', async () => {
    const bad = repo({ 'pyproject.toml': '[project]\nname = "p"\n', 'p/__init__.py': '', 'p/unused.py': 'def f(:\n    pass\n' });
    const r = await buildGate({ repoPath: bad, command: '', timeoutMs: 30_000, logPath: path.join(logDir(), 'g.log') });
    expect(r).toMatchObject({ verdict: 'fail', reason: expect.stringMatching(/^the build `python3 -m compileall -q \.` failed \(exit 1/) });
    const good = repo({ 'pyproject.toml': '[project]\nname = "p"\n', 'p/__init__.py': '', 'p/ok.py': 'def f():\n    pass\n' });
    expect((await buildGate({ repoPath: good, command: '', timeoutMs: 30_000, logPath: path.join(logDir(), 'h.log') })).verdict).toBe(
      'pass',
    );
  });
});
