/**
 * The static-analysis gate (spec §5.1): the checkers that fit the languages of the files an
 * iteration changed, each run only when it is installed locally (never fetched), its findings
 * reduced to repository-relative file:line facts.
 *
 * Scope follows the original loop: only errors in changed files block (an iteration is not failed
 * for a pre-existing error elsewhere, which would make the gate stuck on something the agent did
 * not touch); those elsewhere are counted in the reason. Nothing unchecked passes: files none of
 * whose checkers is installed, and a checker that times out or fails unreadably, make the gate
 * inconclusive unless something else failed. A missing checker whose files another one still
 * covered (shellcheck next to `bash -n`) is listed in `missingTools` without blocking.
 * The reason is one line that depends only on the tree and the tools (no durations, no temporary
 * paths), because the stuck-gate rule compares reasons between iterations.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { legacyNote, scopeFindings, type ChangeScope } from './change-scope.js';
import { MAX_FINDINGS, severityRank, type FindingInput, type GateResultInput, type Severity } from '../../schemas/gates.js';
import { runTool, type ToolRun, type ToolSandbox } from '../../lib/gates/tools.js';
import { findBinary } from '../../lib/find-binary.js';
import { repoRelative, asArg, batches, nearestWith, groupBy, classify, normalizeFiles } from '../../lib/gates/changed-files.js';

export interface StaticAnalysisOptions {
  repoPath: string;
  /** Changed files, repository-relative; missing ones and anything under `.vigil/` are ignored. */
  files: string[];
  /** Budget for the whole gate; each tool gets what is left of it. */
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * The PATH searched for tools and given to them (default: the worker's). Lets a caller (or a
   * test) pin which installed tools count, e.g. to exercise the "not installed" path.
   */
  pathEnv?: string;
  /** Run every tool in the agent sandbox (the run's gates do; a config file in the repository is code the agent wrote). */
  sandbox?: ToolSandbox;
  /**
   * What the run wrote since its start: a linter's finding on a line it did not write is listed
   * as already in the base tree, never blocking. A file that does not parse or compile blocks
   * wherever its error is reported (a missing bracket shows lines away from where it was left).
   */
  scope?: ChangeScope | undefined;
}

const TS_EXT = new Set(['.ts', '.tsx', '.mts', '.cts']);
const ESLINT_CONFIGS = [
  'eslint.config.js',
  'eslint.config.mjs',
  'eslint.config.cjs',
  'eslint.config.ts',
  'eslint.config.mts',
  'eslint.config.cts',
];
const ESLINTRC = ['.eslintrc', '.eslintrc.js', '.eslintrc.cjs', '.eslintrc.yaml', '.eslintrc.yml', '.eslintrc.json'];
/** Files per tool invocation: keeps argv far below the kernel's limit on large change sets. */
const MESSAGE_MAX = 300;
const REASON_MAX = 400;

/** What `missingTools` says for each checker: the tool and how to install it. */
const HINTS = {
  eslint: 'eslint: not installed (npm install --save-dev eslint)',
  tsc: 'tsc: not installed (npm install --save-dev typescript)',
  python3: 'python3: not installed',
  bash: 'bash: not installed',
  shellcheck: 'shellcheck: not installed (apt-get install shellcheck)',
  go: 'go: not installed (https://go.dev/dl/)',
  cargo: 'cargo: not installed (https://rustup.rs)',
} as const;

/** What the checks found, accumulated across languages. */
class Collector {
  readonly findings: FindingInput[] = [];
  readonly missing = new Set<string>();
  /** Why the result cannot be a pass even without errors (timeouts, unreadable tool failures, unchecked files); in order, once each. */
  readonly problems = new Set<string>();
  /** Facts for the reason of a pass (errors ignored elsewhere, fallbacks used). */
  readonly notes: string[] = [];
  /** The findings of linters (judged by line against the run's scope); the rest are judged by file. */
  readonly lint = new Set<FindingInput>();

  add(severity: Severity, file: string | null, line: number | null, message: string, judged: 'line' | 'file' = 'file'): void {
    const f: FindingInput = {
      gate: 'static_analysis',
      severity,
      file: file === null ? null : file.slice(0, 500),
      line: line !== null && Number.isSafeInteger(line) && line >= 0 ? line : null,
      message: clip(message, MESSAGE_MAX),
    };
    this.findings.push(f);
    if (judged === 'line') this.lint.add(f);
  }
}

function clip(s: string, max: number): string {
  const one = s.replace(/[\r\n\t]+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 3)}...` : one;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Runs a tool with what remains of the gate's budget; a cancelled gate throws instead of reporting. */
class Runner {
  private readonly deadline: number;
  constructor(
    private readonly opts: StaticAnalysisOptions,
    private readonly out: Collector,
  ) {
    this.deadline = Date.now() + opts.timeoutMs;
  }

  async run(
    tool: string,
    file: string,
    args: string[],
    cwd: string,
    extra: { env?: Record<string, string>; maxOutputBytes?: number } = {},
  ): Promise<ToolRun | null> {
    const env: Record<string, string> = { ...extra.env };
    if (this.opts.pathEnv !== undefined) env.PATH = this.opts.pathEnv;
    // The sandbox keeps the repository read-only for a gate: cargo builds in the sandbox's own /tmp.
    if (this.opts.sandbox && tool === 'cargo check') env.CARGO_TARGET_DIR = '/tmp/vigil-cargo-target';
    const r = await runTool(file, args, {
      cwd,
      timeoutMs: this.deadline - Date.now(),
      env,
      ...(this.opts.sandbox ? { sandbox: this.opts.sandbox } : {}),
      ...(this.opts.signal ? { signal: this.opts.signal } : {}),
      ...(extra.maxOutputBytes ? { maxOutputBytes: extra.maxOutputBytes } : {}),
    });
    if (r.aborted || this.opts.signal?.aborted) {
      // Cancellation is not a verdict: the caller's reason (e.g. Temporal's CancelledFailure) propagates.
      const why: unknown = this.opts.signal?.reason;
      throw why instanceof Error ? why : new Error('static analysis cancelled');
    }
    if (r.timedOut) {
      // Once per tool: after the budget is spent, every later run of it "times out" at once.
      if (!this.out.problems.has(`${tool} timed out`)) this.out.add('medium', null, null, `${tool}: tool timed out`);
      this.out.problems.add(`${tool} timed out`);
      return null;
    }
    if (r.spawnError) {
      this.out.add('medium', null, null, r.spawnError);
      this.out.problems.add(`${tool} could not start`);
      return null;
    }
    return r;
  }

  /** A tool that failed without output the gate can read: reported, and the gate cannot pass. */
  unreadable(tool: string, r: ToolRun): void {
    const first = firstLine(`${r.stderr}\n${r.stdout}`, this.opts.repoPath);
    this.out.add('medium', null, null, `${tool} failed (exit ${r.exitCode ?? 'signal'})${first ? `: ${first}` : ''}`);
    this.out.problems.add(`${tool} failed`);
  }

  find(name: string): string | null {
    return findBinary(name, this.opts.repoPath, this.opts.pathEnv ?? process.env.PATH);
  }
}

/** The first non-empty line of a tool's output, with the repository's absolute path removed (stable across checkouts). */
function firstLine(text: string, repoPath: string): string {
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line) return clip(line.split(`${repoPath}${path.sep}`).join(''), 200);
  }
  return '';
}

// ---------------------------------------------------------------------------------------------
// JavaScript / TypeScript
// ---------------------------------------------------------------------------------------------

const EslintOutputSchema = z.array(
  z.object({
    filePath: z.string(),
    messages: z.array(
      z.object({
        ruleId: z.string().nullable().optional(),
        severity: z.number(),
        message: z.string(),
        line: z.number().optional(),
        fatal: z.boolean().optional(),
      }),
    ),
  }),
);

function eslintConfigured(repoPath: string): { flat: boolean; any: boolean } {
  const flat = ESLINT_CONFIGS.some((f) => existsSync(path.join(repoPath, f)));
  let rc = ESLINTRC.some((f) => existsSync(path.join(repoPath, f)));
  if (!rc) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(repoPath, 'package.json'), 'utf8')) as unknown;
      rc = typeof pkg === 'object' && pkg !== null && 'eslintConfig' in pkg;
    } catch {
      /* no package.json, or not JSON: no config there */
    }
  }
  return { flat, any: flat || rc };
}

/** How a checker fared: not configured, not installed, ran (findings recorded), or failed/timed out (a problem recorded). */
type CheckStatus = 'none' | 'missing' | 'ran' | 'failed';

async function eslint(run: Runner, out: Collector, repoPath: string, files: string[]): Promise<CheckStatus> {
  const cfg = eslintConfigured(repoPath);
  if (!cfg.any) return 'none';
  const bin = run.find('eslint');
  if (!bin) {
    out.missing.add(HINTS.eslint);
    return 'missing';
  }
  // ESLint 9 reads only flat configs unless told otherwise; an .eslintrc-only project asks for the old format.
  const env: Record<string, string> = cfg.flat ? {} : { ESLINT_USE_FLAT_CONFIG: 'false' };
  for (const batch of batches(files)) {
    const r = await run.run('eslint', bin, ['--format', 'json', ...batch.map(asArg)], repoPath, { env, maxOutputBytes: 16 * 1024 * 1024 });
    if (!r) return 'failed';
    let parsed: z.infer<typeof EslintOutputSchema> | null = null;
    if (r.exitCode === 0 || r.exitCode === 1) {
      try {
        const res = EslintOutputSchema.safeParse(JSON.parse(r.stdout));
        if (res.success) parsed = res.data;
      } catch {
        parsed = null;
      }
    }
    if (!parsed) {
      run.unreadable('eslint', r);
      return 'failed';
    }
    for (const result of parsed) {
      const file = repoRelative(repoPath, repoPath, result.filePath);
      for (const m of result.messages) {
        if (!m.ruleId && /^File ignored\b/.test(m.message)) continue; // the project's own ignore list, not a finding
        const severity: Severity = m.fatal || m.severity >= 2 ? 'high' : 'low';
        out.add(severity, file, m.line ?? null, `${m.message}${m.ruleId ? ` (${m.ruleId})` : ''}`, m.fatal ? 'file' : 'line');
      }
    }
  }
  return 'ran';
}

const TSC_LINE = /^(.{1,500}?)\((\d{1,9}),(\d{1,9})\): error (TS\d{1,6}): (.{0,2000})$/;
const TSC_GLOBAL = /^error (TS\d{1,6}): (.{0,2000})$/;

/** Only errors in the changed files are findings; those elsewhere are counted in the reason. */
async function tsc(run: Runner, out: Collector, repoPath: string, changed: Set<string>): Promise<CheckStatus> {
  const bin = run.find('tsc');
  if (!bin) {
    out.missing.add(HINTS.tsc);
    return 'missing';
  }
  const r = await run.run('tsc', bin, ['--noEmit', '-p', 'tsconfig.json', '--pretty', 'false'], repoPath);
  if (!r) return 'failed';
  let located = 0;
  let elsewhere = 0;
  let global = '';
  for (const raw of r.stdout.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const m = TSC_LINE.exec(line);
    if (m) {
      located++;
      const file = repoRelative(repoPath, repoPath, m[1] ?? '');
      if (file && changed.has(file)) out.add('high', file, Number(m[2]), `${m[4]} ${m[5]}`);
      else elsewhere++;
      continue;
    }
    const g = TSC_GLOBAL.exec(line);
    if (g && !global) global = `${g[1]} ${g[2]}`;
  }
  if (elsewhere > 0) out.notes.push(`${plural(elsewhere, 'tsc error')} in unchanged files ignored`);
  if (r.exitCode !== 0 && located === 0) {
    if (global) {
      out.add('medium', null, null, `tsc: ${clip(global, 200)}`);
      out.problems.add('tsc could not check the project');
    } else run.unreadable('tsc', r);
    return 'failed';
  }
  return 'ran';
}

async function javascript(run: Runner, out: Collector, repoPath: string, files: string[]): Promise<void> {
  const ts = files.filter((f) => TS_EXT.has(path.extname(f)));
  const lint = await eslint(run, out, repoPath, files);
  const typed = ts.length > 0 && existsSync(path.join(repoPath, 'tsconfig.json')) ? await tsc(run, out, repoPath, new Set(ts)) : 'none';
  if (lint === 'none' && typed === 'none') {
    out.notes.push(`${plural(files.length, 'JS/TS file')} not checked (no eslint config or tsconfig.json)`);
    return;
  }
  // A file whose every configured checker is missing was looked at by nothing: not a pass.
  // (A checker that ran and failed or timed out has already made the gate inconclusive.)
  const covered = (f: string): boolean =>
    lint === 'ran' || lint === 'failed' || (TS_EXT.has(path.extname(f)) && (typed === 'ran' || typed === 'failed'));
  const unchecked = files.filter((f) => !covered(f) && (lint === 'missing' || (TS_EXT.has(path.extname(f)) && typed === 'missing')));
  if (unchecked.length > 0) out.problems.add(`${plural(unchecked.length, 'JS/TS file')} not checked (tools missing)`);
}

// ---------------------------------------------------------------------------------------------
// Python
// ---------------------------------------------------------------------------------------------

const RuffOutputSchema = z.array(
  z.object({
    code: z.string().nullable().optional(),
    message: z.string(),
    filename: z.string(),
    location: z.object({ row: z.number() }).nullable().optional(),
  }),
);

/** Compiles each file without writing bytecode into the repository (py_compile would add __pycache__). */
const PY_COMPILE = [
  'import sys',
  'for f in sys.argv[1:]:',
  '    try:',
  "        with open(f, 'rb') as h: src = h.read()",
  "        compile(src, f, 'exec', dont_inherit=True)",
  '    except SyntaxError as e:',
  "        print('E\\t%s\\t%s\\t%s: %s' % (f, e.lineno or 0, type(e).__name__, str(e.msg).replace('\\n', ' ')))",
  '    except (ValueError, OSError) as e:',
  "        print('E\\t%s\\t0\\t%s' % (f, str(e).replace('\\n', ' ')))",
].join('\n');

async function python(run: Runner, out: Collector, repoPath: string, files: string[]): Promise<void> {
  const ruff = run.find('ruff');
  if (ruff) {
    for (const batch of batches(files)) {
      const r = await run.run('ruff', ruff, ['check', '--output-format=json', '--no-cache', ...batch.map(asArg)], repoPath, {
        maxOutputBytes: 16 * 1024 * 1024,
      });
      if (!r) return;
      let parsed: z.infer<typeof RuffOutputSchema> | null = null;
      if (r.exitCode === 0 || r.exitCode === 1) {
        try {
          const res = RuffOutputSchema.safeParse(JSON.parse(r.stdout));
          if (res.success) parsed = res.data;
        } catch {
          parsed = null;
        }
      }
      if (!parsed) {
        run.unreadable('ruff', r);
        return;
      }
      for (const d of parsed) {
        const code = d.code ?? null;
        const severe = code === null || code.startsWith('E9') || code === 'F821' || /^SyntaxError\b/.test(d.message);
        out.add(
          severe ? 'high' : 'medium',
          repoRelative(repoPath, repoPath, d.filename),
          d.location?.row ?? null,
          code ? `${code} ${d.message}` : d.message,
          severe ? 'file' : 'line',
        );
      }
    }
    return;
  }
  const py = run.find('python3');
  if (!py) {
    out.missing.add(HINTS.python3);
    out.problems.add(`${plural(files.length, 'Python file')} not checked (tools missing)`);
    return;
  }
  out.notes.push('ruff not installed: used py_compile');
  for (const batch of batches(files)) {
    const r = await run.run('py_compile', py, ['-I', '-c', PY_COMPILE, ...batch], repoPath);
    if (!r) return;
    if (r.exitCode !== 0) {
      run.unreadable('py_compile', r);
      return;
    }
    for (const line of r.stdout.split('\n')) {
      const parts = line.replace(/\r$/, '').split('\t');
      if (parts[0] !== 'E' || parts.length < 4) continue;
      out.add('high', repoRelative(repoPath, repoPath, parts[1] ?? ''), Number(parts[2]) || null, parts.slice(3).join(' '));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Shell
// ---------------------------------------------------------------------------------------------

const BASH_LINE = /^(.{1,500}?): line (\d{1,9}): (.{1,2000})$/;

const ShellcheckOutputSchema = z.array(z.object({ file: z.string(), line: z.number(), code: z.number(), message: z.string() }));

async function shell(run: Runner, out: Collector, repoPath: string, files: string[]): Promise<void> {
  const bash = run.find('bash');
  if (bash) {
    for (const f of files) {
      const r = await run.run('bash -n', bash, ['-n', asArg(f)], repoPath);
      if (!r) continue;
      if (r.exitCode === 0) continue;
      let found = false;
      for (const raw of r.stderr.split('\n')) {
        const m = BASH_LINE.exec(raw.replace(/\r$/, ''));
        if (!m || (m[3] ?? '').startsWith('`')) continue; // the second line echoes the offending source
        found = true;
        out.add('high', f, Number(m[2]), `bash -n: ${m[3]}`);
      }
      if (!found) out.add('high', f, null, `bash -n: ${firstLine(r.stderr, repoPath) || 'syntax error'}`);
    }
  } else out.missing.add(HINTS.bash);

  const sc = run.find('shellcheck');
  if (!sc) {
    out.missing.add(HINTS.shellcheck);
    if (!bash) out.problems.add(`${plural(files.length, 'shell file')} not checked (tools missing)`);
    return;
  }
  for (const batch of batches(files)) {
    const r = await run.run('shellcheck', sc, ['-S', 'error', '-f', 'json', ...batch.map(asArg)], repoPath, {
      maxOutputBytes: 16 * 1024 * 1024,
    });
    if (!r) return;
    let parsed: z.infer<typeof ShellcheckOutputSchema> | null = null;
    if (r.exitCode === 0 || r.exitCode === 1) {
      try {
        const res = ShellcheckOutputSchema.safeParse(JSON.parse(r.stdout || '[]'));
        if (res.success) parsed = res.data;
      } catch {
        parsed = null;
      }
    }
    if (!parsed) {
      run.unreadable('shellcheck', r);
      return;
    }
    for (const d of parsed) out.add('high', repoRelative(repoPath, repoPath, d.file), d.line, `SC${d.code} ${d.message}`, 'line');
  }
}

// ---------------------------------------------------------------------------------------------
// Go and Rust
// ---------------------------------------------------------------------------------------------

const GO_LINE = /^(?:vet: )?(.{1,500}?\.go):(\d{1,9})(?::\d{1,9})?: (.{1,2000})$/;

async function golang(run: Runner, out: Collector, repoPath: string, files: string[]): Promise<void> {
  const { groups, none } = groupBy(files, (f) => nearestWith(repoPath, f, 'go.mod'));
  if (none.length > 0) out.notes.push(`${plural(none.length, 'Go file')} outside a Go module not checked`);
  if (groups.size === 0) return;
  const go = run.find('go');
  if (!go) {
    out.missing.add(HINTS.go);
    out.problems.add(`${plural(files.length - none.length, 'Go file')} not checked (tools missing)`);
    return;
  }
  const changed = new Set(files);
  let elsewhere = 0;
  for (const mod of [...groups.keys()].sort()) {
    // GOTOOLCHAIN=local: a go.mod asking for a newer Go must not make the gate download one.
    const r = await run.run('go vet', go, ['vet', './...'], mod, { env: { GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'local' } });
    if (!r) continue;
    let located = 0;
    for (const raw of `${r.stderr}\n${r.stdout}`.split('\n')) {
      const m = GO_LINE.exec(raw.replace(/\r$/, ''));
      if (!m) continue;
      located++;
      const file = repoRelative(repoPath, mod, m[1] ?? '');
      if (file && changed.has(file)) out.add('high', file, Number(m[2]), `go vet: ${m[3]}`, 'line');
      else elsewhere++;
    }
    if (r.exitCode !== 0 && located === 0) run.unreadable('go vet', r);
  }
  if (elsewhere > 0) out.notes.push(`${plural(elsewhere, 'go vet finding')} in unchanged files ignored`);
}

const CARGO_LINE = /^(.{1,500}?\.rs):(\d{1,9}):\d{1,9}: (error(?:\[E\d{1,6}\])?): (.{1,2000})$/;

async function rust(run: Runner, out: Collector, repoPath: string, files: string[]): Promise<void> {
  const { groups, none } = groupBy(files, (f) => nearestWith(repoPath, f, 'Cargo.toml'));
  if (none.length > 0) out.notes.push(`${plural(none.length, 'Rust file')} outside a Cargo package not checked`);
  if (groups.size === 0) return;
  const cargo = run.find('cargo');
  if (!cargo) {
    out.missing.add(HINTS.cargo);
    out.problems.add(`${plural(files.length - none.length, 'Rust file')} not checked (tools missing)`);
    return;
  }
  for (const crate of [...groups.keys()].sort()) {
    const r = await run.run('cargo check', cargo, ['check', '--message-format=short', '-q'], crate, { env: { CARGO_TERM_COLOR: 'never' } });
    if (!r) continue;
    let located = 0;
    for (const raw of r.stderr.split('\n')) {
      const m = CARGO_LINE.exec(raw.replace(/\r$/, ''));
      if (!m) continue;
      located++;
      // Paths are relative to the workspace root, which may be above the crate.
      let file: string | null = null;
      for (let dir = crate; ; dir = path.dirname(dir)) {
        if (existsSync(path.resolve(dir, m[1] ?? ''))) {
          file = repoRelative(repoPath, dir, m[1] ?? '');
          break;
        }
        if (path.resolve(dir) === path.resolve(repoPath) || path.dirname(dir) === dir) break;
      }
      out.add('high', file, Number(m[2]), `${m[3]}: ${m[4]}`);
    }
    if (r.exitCode !== 0 && located === 0) run.unreadable('cargo check', r);
  }
}

// ---------------------------------------------------------------------------------------------
// The gate
// ---------------------------------------------------------------------------------------------

/** Code-unit order: unlike localeCompare it does not depend on the worker's locale, so reasons stay stable. */
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function compareFindings(a: FindingInput, b: FindingInput): number {
  return (
    severityRank(a.severity) - severityRank(b.severity) ||
    cmp(a.file ?? '', b.file ?? '') ||
    (a.line ?? 0) - (b.line ?? 0) ||
    cmp(a.message, b.message)
  );
}

export async function staticAnalysis(opts: StaticAnalysisOptions): Promise<GateResultInput> {
  const started = Date.now();
  const repoPath = path.resolve(opts.repoPath);
  const files = normalizeFiles(repoPath, opts.files);
  const kinds = classify(repoPath, files);
  const analysed = kinds.js.length + kinds.py.length + kinds.sh.length + kinds.go.length + kinds.rs.length;
  const base = { gate: 'static_analysis' as const, reportPath: null };
  if (analysed === 0) {
    return {
      ...base,
      verdict: 'pass',
      reason: 'no changed file to analyse',
      findings: [],
      findingCount: 0,
      missingTools: [],
      durationMs: Date.now() - started,
    };
  }

  const out = new Collector();
  const run = new Runner({ ...opts, repoPath }, out);
  if (kinds.js.length) await javascript(run, out, repoPath, kinds.js);
  if (kinds.py.length) await python(run, out, repoPath, kinds.py);
  if (kinds.sh.length) await shell(run, out, repoPath, kinds.sh);
  if (kinds.go.length) await golang(run, out, repoPath, kinds.go);
  if (kinds.rs.length) await rust(run, out, repoPath, kinds.rs);

  const scoped = scopeFindings(out.findings, opts.scope, (f) => out.lint.has(f));
  const findings = scoped.findings.sort(compareFindings);
  const errors = findings.filter((f) => f.severity === 'critical' || f.severity === 'high');
  let verdict: GateResultInput['verdict'];
  let reason: string;
  const first = errors[0];
  if (first) {
    verdict = 'fail';
    const errFiles = new Set(errors.map((f) => f.file ?? ''));
    const where = first.file ? `${first.file}${first.line !== null && first.line !== undefined ? `:${first.line}` : ''} ` : '';
    reason = `${plural(errors.length, 'error')} in ${plural(errFiles.size, 'file')}: ${where}${first.message}${legacyNote(scoped.legacy)}`;
  } else if (out.problems.size > 0) {
    verdict = 'inconclusive';
    const missing = out.missing.size ? `; missing: ${[...out.missing].map((m) => m.split(':')[0]).join(', ')}` : '';
    reason = `inconclusive: ${[...out.problems].join('; ')}${missing}`;
  } else {
    verdict = 'pass';
    reason = [`no errors in ${plural(analysed, 'changed file')}`, ...out.notes].join('; ') + legacyNote(scoped.legacy);
  }
  return {
    ...base,
    verdict,
    reason: clip(reason, REASON_MAX),
    findings: findings.slice(0, MAX_FINDINGS),
    findingCount: findings.length,
    missingTools: [...out.missing].sort().slice(0, 20),
    durationMs: Date.now() - started,
  };
}
