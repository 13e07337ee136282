/**
 * The product checks: the product is run, not only unit-tested. Three gates, each on a full pass
 * only (activities/gates/index.ts `FULL_PASS_ONLY`: every completion check, never an iteration's
 * affected-tests pass), each sandboxed like the build (the gate sandbox: the repository
 * read-only, no network but the loopback, in a scratch copy of the working tree), each with the
 * build's honest verdict rules: exit 0 passes; any other exit, a command that cannot start (exit
 * 127), one killed by a signal or one that overruns `gateTimeoutSeconds` fails. Its whole log goes
 * to the run's folder (`gates/<gate>-NNNN.log`); the result names it (a reference, never the text).
 *
 * - `app_check`: the knob `appCheck` (a command that boots the app and probes it), else the
 *   repository's `.vigil/app-check.*` as the run's start tree had it. The file is kept when the
 *   run starts (`keepStartAppCheck`, called by prepareRun, before any agent call) in the run's
 *   private folder, out of the agent's reach, and that copy is what runs: an agent that rewrites
 *   the file (to `exit 0`) or deletes it changes nothing. It runs at its own path in the copy
 *   (`sh`, `bash`, `python3` or `node` by its extension, else by its `#!` line).
 * - `e2e`: the knob `e2eCommand` (Playwright or any runner).
 * - `perf`: the knob `perfCommand`, a benchmark whose last line of output is a number or
 *   `{"value": n}` (lower is better: a time). It runs on the start tree (exported to a scratch
 *   folder, as test provenance does; measured once per run and kept) and on the candidate; a
 *   candidate at twice the baseline or more, measured twice, blocks.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FindingInput, GateName, GateResultInput } from '../../schemas/gates.js';
import type { SandboxMode } from '../../schemas/sandbox.js';
import { ensurePrivateRunDir } from '../artifacts.js';
import { describeWriteError, ensurePrivateDir, isStorageError, writePrivateFile } from '../../lib/safe-files.js';
import { exportTree, linkDependencies, ownScratch } from '../scratch-tree.js';
import { logTail, readableLog, SCRATCH_SCRIPT } from './build.js';
import { runTool, type ToolRun, type ToolSandbox } from '../../lib/gates/tools.js';
import { findBinary } from '../../lib/find-binary.js';

export type ProductGate = Extract<GateName, 'app_check' | 'e2e' | 'perf'>;

/** The names the app check file may have: `.vigil/app-check` and an extension. */
export const APP_CHECK_FILE = /^app-check\.[A-Za-z0-9]{1,8}$/;

/** The kept file's record in the run's private folder. */
const KEPT = 'app-check-start.json';

/** Largest app check file kept (a script, not a program's sources). */
const MAX_CHECK_BYTES = 64 * 1024;

interface KeptCheck {
  /** The file's name under `.vigil/` (null: the start tree had none). */
  name: string | null;
  text?: string;
  digest?: string;
}

/**
 * Keeps the repository's `.vigil/app-check.*` as the run finds it at its start (called once, before
 * any agent call), so that the app check runs that copy and not what the agent leaves. Never
 * overwrites a kept record: a retried start keeps the first.
 */
export function keepStartAppCheck(repoPath: string, runId: string): void {
  const priv = ensurePrivateRunDir(runId);
  const kept = path.join(priv, KEPT);
  if (existsSync(kept)) return;
  const dir = path.join(repoPath, '.vigil');
  let record: KeptCheck = { name: null };
  try {
    const names = existsSync(dir)
      ? readdirSync(dir)
          .filter((n) => APP_CHECK_FILE.test(n))
          .sort()
      : [];
    for (const name of names) {
      const file = path.join(dir, name);
      const st = lstatSync(file);
      if (!st.isFile() || st.size > MAX_CHECK_BYTES) continue;
      const text = readFileSync(file, 'utf8');
      record = { name, text, digest: createHash('sha256').update(text).digest('hex').slice(0, 16) };
      break;
    }
  } catch {
    record = { name: null };
  }
  writePrivateFile(kept, JSON.stringify(record));
}

/** The app check file kept at the run's start; null when the run started before they were kept. */
export function keptAppCheck(runId: string): KeptCheck | null {
  const kept = path.join(ensurePrivateRunDir(runId), KEPT);
  if (!existsSync(kept)) return null;
  try {
    const r = JSON.parse(readFileSync(kept, 'utf8')) as KeptCheck;
    return typeof r.name === 'string' && typeof r.text === 'string' && APP_CHECK_FILE.test(r.name) ? r : { name: null };
  } catch {
    return { name: null };
  }
}

/** How the kept file runs, by its extension (else by its `#!` line). */
export function interpreterOf(name: string): string | null {
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  const by: Record<string, string> = { sh: 'sh', bash: 'bash', py: 'python3', js: 'node', mjs: 'node', cjs: 'node' };
  return by[ext] ?? null;
}

/** The script run in the scratch copy for a kept file: it is written at its own path (the copy has no `.vigil/`), then run. */
export const KEPT_FILE_SCRIPT = [
  'mkdir -p .vigil || exit 125',
  'printf "%s" "$VIGIL_APP_CHECK_TEXT" > ".vigil/$VIGIL_APP_CHECK_NAME" || exit 125',
  'chmod +x ".vigil/$VIGIL_APP_CHECK_NAME"',
  'unset VIGIL_APP_CHECK_TEXT',
  'if [ -n "$VIGIL_APP_CHECK_INTERPRETER" ]; then exec "$VIGIL_APP_CHECK_INTERPRETER" ".vigil/$VIGIL_APP_CHECK_NAME"; fi',
  'exec "./.vigil/$VIGIL_APP_CHECK_NAME"',
].join('\n');

const WHAT: Record<ProductGate, string> = { app_check: 'app check', e2e: 'e2e command', perf: 'benchmark' };
const KNOB: Record<ProductGate, string> = { app_check: 'appCheck', e2e: 'e2eCommand', perf: 'perfCommand' };

/**
 * The verdict of a finished check run (pure): the build's rules. `logNote`: where the log is (or
 * why it is not); `passed`: the reason when it passed.
 */
export function checkVerdict(
  gate: ProductGate,
  label: string,
  r: ToolRun,
  log: string,
  budgetSeconds: number,
  logNote: string,
): GateResultInput {
  const cmd = `\`${label.slice(0, 120)}\``;
  const what = `the ${WHAT[gate]} ${cmd}`;
  const fail = (reason: string): GateResultInput => {
    const tail = logTail(log);
    const findings: FindingInput[] = [
      {
        gate,
        severity: 'high',
        file: null,
        line: null,
        message: `${reason}; ${logNote}${tail ? `; log tail: ${tail}` : ''}`.slice(0, 500),
      },
    ];
    return { gate, verdict: 'fail', reason: reason.slice(0, 500), findings, findingCount: 1 };
  };
  if (r.spawnError) return fail(`${what} could not start (${r.spawnError}); install what it needs or set ${KNOB[gate]}`);
  if (r.timedOut) return fail(`${what} did not finish within ${budgetSeconds}s (gateTimeoutSeconds)`);
  if (r.exitCode === null) return fail(`${what} was killed by a signal before it finished`);
  if (r.exitCode === 127) return fail(`${what} could not start (exit 127: a command it runs is not installed)`);
  if (r.exitCode === 125 && log.includes('vigil-build: the working tree could not be copied'))
    return fail(`${what} could not start: the working tree could not be copied to a scratch folder`);
  if (r.exitCode !== 0) return fail(`${what} failed (exit ${r.exitCode})`);
  return { gate, verdict: 'pass', reason: `${what} passed (exit 0; ${logNote})`.slice(0, 500) };
}

export interface CheckOptions {
  repoPath: string;
  runId: string;
  /** The knob (appCheck, e2eCommand, perfCommand); for the app check, empty: the kept file. */
  command: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Where the whole log goes (the run's folder). */
  logPath: string;
  sandbox?: ToolSandbox;
  /** The tree the run started with (the performance check's baseline). */
  runStartTree?: string | null;
  /** The run's sandbox knob (the baseline's run). */
  sandboxMode?: SandboxMode | undefined;
}

interface Planned {
  label: string;
  argv: string[];
  env: Record<string, string>;
}

/** Runs `plan` in a scratch copy of `cwd` (the build's script), sandboxed; throws on a cancellation. */
async function inCopy(
  plan: Planned,
  cwd: string,
  o: CheckOptions,
  timeoutMs: number,
  sandbox: ToolSandbox | undefined,
): Promise<{ r: ToolRun; log: string }> {
  const sh = findBinary('sh') ?? '/bin/sh';
  const r = await runTool(sh, ['-c', SCRATCH_SCRIPT, 'vigil-build', ...plan.argv], {
    cwd,
    timeoutMs,
    env: plan.env,
    ...(o.signal ? { signal: o.signal } : {}),
    ...(sandbox ? { sandbox } : {}),
  });
  if (r.aborted || o.signal?.aborted) {
    const why: unknown = o.signal?.reason;
    throw why instanceof Error ? why : new Error('product check cancelled');
  }
  return { r, log: readableLog(`${r.stdout}${r.stderr ? `\n${r.stderr}` : ''}`) };
}

/** Writes the log; the note the result carries (where it is, or why it is not). */
function keepLog(file: string, label: string, log: string, truncated: boolean): string {
  try {
    writePrivateFile(file, `$ ${label}\n${log}${truncated ? '\n[output cut at 1 MiB]\n' : ''}`);
    return `log: ${file}`;
  } catch (err) {
    if (!isStorageError(err)) throw err;
    return describeWriteError('log not written', err);
  }
}

/** What the app check runs: the knob's command, the kept file, or nothing (and why). */
export function appCheckPlan(command: string, runId: string): Planned | { none: string } {
  const sh = findBinary('sh') ?? '/bin/sh';
  if (command.trim() !== '') return { label: command.trim(), argv: [sh, '-c', command], env: {} };
  const kept = keptAppCheck(runId);
  if (kept === null) return { none: 'not applicable: the run started before app check files were kept (set appCheck)' };
  if (kept.name === null || kept.text === undefined)
    return { none: 'not applicable: no app check (set appCheck, or keep .vigil/app-check.* in the repository)' };
  const interpreter = interpreterOf(kept.name);
  return {
    label: `.vigil/${kept.name} (as the run started)`,
    argv: [sh, '-c', KEPT_FILE_SCRIPT],
    env: {
      VIGIL_APP_CHECK_TEXT: kept.text,
      VIGIL_APP_CHECK_NAME: kept.name,
      VIGIL_APP_CHECK_INTERPRETER: interpreter ? (findBinary(interpreter) ?? interpreter) : '',
    },
  };
}

/** The app check or the e2e gate (see the file comment). A cancellation throws. */
export async function commandCheckGate(gate: 'app_check' | 'e2e', o: CheckOptions): Promise<GateResultInput> {
  const sh = findBinary('sh') ?? '/bin/sh';
  const plan: Planned | { none: string } =
    gate === 'app_check'
      ? appCheckPlan(o.command, o.runId)
      : o.command.trim() !== ''
        ? { label: o.command.trim(), argv: [sh, '-c', o.command], env: {} }
        : { none: 'not applicable: no e2eCommand' };
  if ('none' in plan) return { gate, verdict: 'pass', reason: plan.none };
  const { r, log } = await inCopy(plan, o.repoPath, o, o.timeoutMs, o.sandbox);
  const note = keepLog(o.logPath, plan.label, log, r.truncated);
  return checkVerdict(gate, plan.label, r, log, Math.round(o.timeoutMs / 1000), note);
}

/** The measurement in a benchmark's output: its last non-empty line, a number or `{"value": n}`; null when neither. */
export function parseMeasurement(out: string): number | null {
  const last = out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .at(-1);
  if (last === undefined) return null;
  let v: unknown = null;
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(last)) v = Number(last);
  else if (last.startsWith('{'))
    try {
      v = (JSON.parse(last) as { value?: unknown }).value;
    } catch {
      v = null;
    }
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
}

/** The rule: a candidate at `PERF_LIMIT` times the baseline or more blocks. */
export const PERF_LIMIT = 2;

/** The performance check's verdict from its numbers (pure). */
export function perfVerdict(label: string, baseline: number, candidate: number, logNote: string): GateResultInput {
  const ratio = candidate / baseline;
  const shown = `${candidate} against ${baseline} on the start tree (${ratio.toFixed(2)}×)`;
  if (ratio < PERF_LIMIT)
    return { gate: 'perf', verdict: 'pass', reason: `\`${label.slice(0, 120)}\`: ${shown}; ${logNote}`.slice(0, 500) };
  const reason = `performance regression: \`${label.slice(0, 120)}\` measured ${shown}, ${PERF_LIMIT}× or more, twice`;
  return {
    gate: 'perf',
    verdict: 'fail',
    reason: reason.slice(0, 500),
    findings: [{ gate: 'perf', severity: 'high', file: null, line: null, message: `${reason}; ${logNote}`.slice(0, 500) }],
    findingCount: 1,
  };
}

const digest = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** The baseline: the benchmark on the start tree (kept per tree and command); a number, or why there is none. */
async function perfBaseline(o: CheckOptions, plan: Planned, timeoutMs: number): Promise<number | string> {
  const start = o.runStartTree;
  if (!start) return 'the run has no start tree';
  const priv = ensurePrivateRunDir(o.runId);
  const key = digest(`${start}\n${o.command}`);
  const kept = path.join(priv, 'perf', `${key}.json`);
  if (existsSync(kept)) {
    try {
      const v = (JSON.parse(readFileSync(kept, 'utf8')) as { value?: unknown }).value;
      if (typeof v === 'number') return v;
    } catch {
      /* unreadable: measured again */
    }
  }
  const { dir: scratch, release } = ownScratch(path.join(priv, 'perf-start'), key, (d) => ensurePrivateDir(priv, d));
  try {
    await exportTree(o.repoPath, start, scratch);
    const readable = linkDependencies(o.repoPath, scratch);
    const sandbox: ToolSandbox | undefined = o.sandbox ? { runId: o.runId, repoPath: scratch, mode: o.sandboxMode, readable } : undefined;
    const { r, log } = await inCopy(plan, scratch, o, timeoutMs, sandbox);
    keepLog(o.logPath.replace(/\.log$/, '-baseline.log'), plan.label, log, r.truncated);
    const v = r.exitCode === 0 ? parseMeasurement(r.stdout) : null;
    if (v === null)
      return r.exitCode === 0
        ? 'its output on the start tree ends in no number'
        : `it did not succeed on the start tree (${r.timedOut ? 'timed out' : `exit ${r.exitCode ?? 'by a signal'}`})`;
    ensurePrivateDir(priv, path.dirname(kept));
    writePrivateFile(kept, JSON.stringify({ value: v }));
    return v;
  } finally {
    release();
  }
}

/** The performance check (see the file comment). A cancellation throws. */
export async function perfGate(o: CheckOptions): Promise<GateResultInput> {
  if (o.command.trim() === '') return { gate: 'perf', verdict: 'pass', reason: 'not applicable: no perfCommand' };
  const deadline = Date.now() + o.timeoutMs;
  const left = (): number => Math.max(0, deadline - Date.now());
  const sh = findBinary('sh') ?? '/bin/sh';
  const plan: Planned = { label: o.command.trim(), argv: [sh, '-c', o.command], env: {} };
  const budget = Math.round(o.timeoutMs / 1000);
  const measure = async (): Promise<{ value: number | null; failed: GateResultInput | null }> => {
    const { r, log } = await inCopy(plan, o.repoPath, o, left(), o.sandbox);
    const note = keepLog(o.logPath, plan.label, log, r.truncated);
    const ran = checkVerdict('perf', plan.label, r, log, budget, note);
    if (ran.verdict !== 'pass') return { value: null, failed: ran };
    const value = parseMeasurement(r.stdout);
    if (value === null) {
      const reason = `the benchmark \`${plan.label.slice(0, 120)}\` printed no measurement: its last line must be a positive number or {"value": n}`;
      return {
        value: null,
        failed: {
          gate: 'perf',
          verdict: 'fail',
          reason,
          findings: [{ gate: 'perf', severity: 'high', file: null, line: null, message: `${reason}; ${note}`.slice(0, 500) }],
          findingCount: 1,
        },
      };
    }
    return { value, failed: null };
  };
  const first = await measure();
  if (first.failed || first.value === null) return first.failed as GateResultInput;
  const baseline = await perfBaseline(o, plan, left());
  if (typeof baseline === 'string')
    return { gate: 'perf', verdict: 'inconclusive', reason: `no baseline to compare with: the benchmark ${baseline}`.slice(0, 500) };
  let candidate = first.value;
  const note = `log: ${o.logPath}`;
  // A regression shows twice: one slow run on a busy machine does not block.
  if (candidate / baseline >= PERF_LIMIT) {
    const again = await measure();
    if (again.failed || again.value === null) return again.failed as GateResultInput;
    candidate = Math.min(candidate, again.value);
  }
  return perfVerdict(plan.label, baseline, candidate, note);
}
