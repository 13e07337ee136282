/**
 * The Wall's activities (knob `acceptanceTests`; docs/how-a-run-works.md, Acceptance tests):
 *
 * - `sealAcceptance`, once at the run's start: the person's folder (or the one the acceptance role
 *   wrote, knob `acceptanceFromPrd`: activities/acceptance-author.ts) checked
 *   (lib/acceptance-files.ts) and copied into the run's private folder,
 *   `$VIGIL_HOME/private/<run>/acceptance/`, which no agent sandbox shows; the result (in the run's
 *   history) is each file's sha256.
 * - `runAcceptance`, on a candidate tree: every sealed file re-hashed first (one whose digest
 *   changed is refused, nothing runs), the tree exported from the repository's object store into a
 *   scratch folder of the private one with Vigil's safe git (a scratch index, `checkout-index`:
 *   no hook, filter or driver of the repository runs), the repository's dependency folders linked
 *   (read-only in the sandbox), the sealed files laid over it, and the runner run on them alone,
 *   sandboxed like the tests, its verdict the report's (lib/gates/test-report.ts). The
 *   first run of a run (on the tree it started with) keeps its report, and every later one is held
 *   to the acceptance tests it listed. The result has counts and failing test names, never the
 *   tests' source or output; the log stays in the private folder.
 */
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import {
  AcceptanceResultSchema,
  RunAcceptanceInputSchema,
  SealAcceptanceInputSchema,
  type AcceptanceResult,
  type RunAcceptanceInput,
  type SealAcceptanceInput,
  type SealAcceptanceResult,
} from '../schemas/acceptance.js';
import { TestReportSchema, type TestReport } from '../schemas/test-report.js';
import { acceptanceCommandLine, acceptanceVerdict } from '../rules/acceptance.js';
import { testsVerdict } from '../rules/tests-verdict.js';
import { acceptanceDraftDir } from './acceptance-author.js';
import { fileDigest, inspectAcceptanceDir, isTestFile } from '../lib/acceptance-files.js';
import { ensurePrivateRunDir, pad } from './artifacts.js';
import { readReport, runnerOfCommand } from '../lib/gates/test-report.js';
import { detectTestRunner, summarizeTestOutput } from '../lib/gates/test-runner.js';
import { beatWhileRunning } from './heartbeat.js';
import { authorizeCall } from './run-authorization.js';
import { ensurePrivateDir, writePrivateFile } from '../lib/safe-files.js';
import { sandboxReport } from '../lib/sandbox.js';
import { exportTree, linkDependencies, ownScratch, runInScratch } from './scratch-tree.js';

/** The sealed copy of a run's acceptance tests. */
export function sealedDir(runId: string): string {
  return path.join(ensurePrivateRunDir(runId), 'acceptance');
}

const baselinePath = (runId: string): string => path.join(ensurePrivateRunDir(runId), 'acceptance-baseline.json');

export async function sealAcceptance(raw: SealAcceptanceInput): Promise<SealAcceptanceResult> {
  const input = SealAcceptanceInputSchema.parse(raw);
  // The acceptance role's folder (activities/acceptance-author.ts), or the person's.
  const source = input.drafted ? acceptanceDraftDir(input.runId) : input.sourceDir;
  await authorizeCall({ runId: input.runId, repoPath: input.repoPath, kind: { acceptance: source } }, input.authorization);
  const seen = inspectAcceptanceDir(source, input.repoPath);
  if (!seen.ok) return { ok: false, reason: seen.reason.slice(0, 1000), files: [] };
  const dir = sealedDir(input.runId);
  rmSync(dir, { recursive: true, force: true });
  ensurePrivateDir(path.dirname(dir), dir);
  for (const f of seen.files) {
    const to = path.join(dir, f.path);
    ensurePrivateDir(dir, path.dirname(to));
    writePrivateFile(to, readFileSync(path.join(source, f.path)));
    // The copy is what runs: it must be what was inspected (a file changed in between is not sealed).
    if (fileDigest(to) !== f.sha256) return { ok: false, reason: `acceptance tests: ${f.path} changed while it was sealed`, files: [] };
  }
  // The acceptance role's draft is not kept beside the sealed copy: one copy, the one that runs.
  if (input.drafted) rmSync(source, { recursive: true, force: true });
  // A new seal (the acceptance role asked again) owes its own tests: the old list of them goes.
  rmSync(baselinePath(input.runId), { force: true });
  return { ok: true, reason: `${seen.tests} test file(s), ${seen.files.length} file(s) sealed`, files: seen.files, dir };
}

function readAcceptanceBaseline(runId: string): TestReport | null {
  try {
    return TestReportSchema.parse(JSON.parse(readFileSync(baselinePath(runId), 'utf8')));
  } catch {
    return null;
  }
}

export async function runAcceptance(raw: RunAcceptanceInput): Promise<AcceptanceResult> {
  const input = RunAcceptanceInputSchema.parse(raw);
  await authorizeCall({ runId: input.runId, repoPath: input.repoPath, kind: { acceptance: input.command } }, input.authorization);
  const started = Date.now();
  const attempt = Context.current().info.attempt;
  const priv = ensurePrivateRunDir(input.runId);
  const label = `${pad(input.iteration)}-${attempt}`;
  const logPath = path.join(priv, `acceptance-${label}.log`);
  const empty = { passed: null, failed: null, failing: [], runner: 'none', command: input.command, durationMs: 0, logPath: '' };
  // 1. The seal: every file as it was recorded, or nothing runs.
  const sealed = sealedDir(input.runId);
  const changed = input.files.filter((f) => fileDigest(path.join(sealed, f.path)) !== f.sha256).map((f) => f.path);
  if (changed.length > 0)
    return AcceptanceResultSchema.parse({
      ...empty,
      verdict: 'refused',
      reason: `acceptance: ${changed.length} sealed file(s) no longer have the digest recorded at the start (${changed.slice(0, 3).join(', ')}); not run`,
      setupMs: Date.now() - started,
    });
  // 2. The candidate tree, its dependencies and the sealed files over it.
  // A folder of its own: an attempt that timed out may still be running beside its retry.
  const { dir: scratch, release } = ownScratch(path.join(priv, 'acceptance-run'), label, (d) => ensurePrivateDir(priv, d));
  const ctx = Context.current();
  const stopBeat = beatWhileRunning(() => ctx.heartbeat(), ctx);
  try {
    await exportTree(input.repoPath, input.treeHash, scratch);
    const readable = linkDependencies(input.repoPath, scratch);
    for (const f of input.files) {
      const to = path.join(scratch, f.path);
      rmSync(to, { recursive: true, force: true });
      mkdirSync(path.dirname(to), { recursive: true });
      cpSync(path.join(sealed, f.path), to);
    }
    const tests = input.files.map((f) => f.path).filter(isTestFile);
    // 3. The runner: the knob's command, else the one the tree implies.
    let command = input.command;
    let runner = command ? runnerOfCommand(command, scratch) : 'none';
    if (!command) {
      const found = detectTestRunner(scratch);
      if (found) ({ command, runner } = found);
    }
    const setupMs = Date.now() - started;
    if (!command)
      return AcceptanceResultSchema.parse({
        ...empty,
        verdict: 'inconclusive',
        reason: 'acceptance: no acceptanceCommand and no test runner found in the tree',
        setupMs,
      });
    const line = acceptanceCommandLine(command, runner, tests);
    stopBeat();
    return await runRunner(input, { scratch, readable, line, runner, logPath, label, setupMs });
  } finally {
    stopBeat();
    release();
  }
}

async function runRunner(
  input: ReturnType<typeof RunAcceptanceInputSchema.parse>,
  o: { scratch: string; readable: string[]; line: string; runner: string; logPath: string; label: string; setupMs: number },
): Promise<AcceptanceResult> {
  const priv = ensurePrivateRunDir(input.runId);
  const { dir: reportDir, release } = ownScratch(path.join(priv, 'acceptance-reports'), o.label, (d) =>
    mkdirSync(d, { recursive: true, mode: 0o700 }),
  );
  try {
    return await judgeRun(input, o, reportDir, priv);
  } finally {
    release();
  }
}

/** The runner in the scratch tree, its report read into the acceptance verdict. */
async function judgeRun(
  input: ReturnType<typeof RunAcceptanceInputSchema.parse>,
  o: { scratch: string; readable: string[]; line: string; runner: string; logPath: string; label: string; setupMs: number },
  reportDir: string,
  priv: string,
): Promise<AcceptanceResult> {
  const { setup, proc, sandbox } = await runInScratch({
    runId: input.runId,
    scratch: o.scratch,
    readable: o.readable,
    runner: o.runner,
    line: o.line,
    reportDir,
    logPath: o.logPath,
    pidFile: path.join(priv, `acceptance-${path.basename(reportDir)}.pid.json`),
    header: `=== vigil: tests for acceptance, iteration ${input.iteration}: ${o.line} ===`,
    sandbox: input.sandbox,
    registries: input.sandboxRegistries,
    timeoutMs: input.timeoutSeconds * 1000,
  });
  const summary = summarizeTestOutput(o.runner, proc.tail, proc.exitCode);
  const report = readReport(setup, reportDir, o.logPath);
  const baseline = readAcceptanceBaseline(input.runId);
  // The first complete report that collected every file (no test errored) lists the acceptance tests later runs owe.
  if (baseline === null && report?.complete && report.tests.length > 0 && report.tests.every((t) => t.status !== 'error'))
    writePrivateFile(baselinePath(input.runId), JSON.stringify(report));
  const tv = testsVerdict({
    runner: o.runner,
    exitCode: proc.exitCode,
    timedOut: proc.timedOut,
    report,
    baseline,
    expected: setup.source !== null,
    summary: { verdict: summary.verdict, reason: summary.reason },
  });
  const judged = acceptanceVerdict(tv);
  return AcceptanceResultSchema.parse({
    ...judged,
    verdict: proc.timedOut ? 'fail' : judged.verdict,
    reason: proc.timedOut ? `acceptance: timed out after ${input.timeoutSeconds}s` : judged.reason,
    runner: o.runner,
    command: o.line.slice(0, 4096),
    durationMs: proc.durationMs,
    setupMs: o.setupMs,
    logPath: o.logPath,
    sandbox: sandboxReport(sandbox, proc.sandboxDenials, proc.tail),
  });
}
