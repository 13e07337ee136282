/**
 * The gate activities. `runGates` (lean runs): every tool gate of one pass on the working tree as
 * it is now, in one activity — the groups in order, the gates of a group in parallel, each bounded
 * by its timeout, the test suite (`runTests`) where asked; the tree hash is computed once and the
 * changed files once per starting tree. A cancellation (the workflow's answer to a PAUSE or STOP)
 * aborts the running group and starts no other: the activity returns the results of the groups
 * that finished, marked interrupted. `runGate` (older runs): one gate per activity.
 *
 * Each gate works out which files changed since the tree it last passed on (else the run start),
 * runs (static analysis, secret scan, mock integrity, test mutation, documentation, coverage) and
 * returns the capped result; its full report (every finding, the files it looked at) goes under
 * the run folder: with the pass's others in one file per pass (`gates/pass-NNNN.json`, compact
 * passes), or in its own (`gates/<gate>-NNNN.json`, older runs and `runGate`). A gate that
 * overruns its timeout is inconclusive, never a pass.
 */
import path from 'node:path';
import { CancelledFailure, Context } from '@temporalio/activity';
import { beatWhileRunning } from '../heartbeat.js';
import { GATES_STEP, type GatesStepDetails } from '../../schemas/call-step.js';
import { RunGatesInputSchema, type RunGatesInput, type RunGatesResult, type TestResult } from '../../schemas/activities.js';
import { runTests } from '../tests.js';
import { addDenial } from '../../lib/sandbox-policy.js';
import type { SandboxReport } from '../../schemas/sandbox.js';
import {
  GateResultSchema,
  MAX_FINDINGS,
  RunGateInputSchema,
  type GateResult,
  type GateResultInput,
  type RunGateInput,
  type ToolGate,
} from '../../schemas/gates.js';
import { ensureRepoDir, ensureRunDir, pad, runDir } from '../artifacts.js';
import { changedPaths, git, workingTreeHash } from '../git.js';
import { describeWriteError, isStorageError, writePrivateFile } from '../../lib/safe-files.js';
import { changeScope, type ChangeScope } from './change-scope.js';
import { buildGate } from './build.js';
import { commandCheckGate, perfGate } from './product-checks.js';
import { coverageGate } from './coverage.js';
import { docCoverageGate } from './doc-coverage.js';
import { secretScanGate } from './secret-scan.js';
import { staticAnalysis } from './static-analysis.js';
import { testGamingGate, testIntegrityGate } from './integrity-gates.js';
import { mockIntegrityGate, testMutationGate } from './test-integrity.js';

/** The gates that judge everything the run changed, from its start tree, not since they last passed. */
const FROM_START: ReadonlySet<string> = new Set(['test_mutation', 'test_gaming']);

/** The gates that block only on lines the run wrote (activities/gates/change-scope.ts). */
const LINE_SCOPED: ReadonlySet<string> = new Set(['static_analysis', 'secret_scan', 'mock_integrity', 'doc_coverage']);

/**
 * The gates that run only on a full pass: not on a pass whose tests ran an affected-tests
 * selection (an ordinary iteration's; the completion check runs the pass again with the full
 * suite, and these then run), since they cost the most (a build, the app booted, a journey, a
 * benchmark) and judge the product as a whole, not what a change touched.
 */
export const FULL_PASS_ONLY: ReadonlySet<string> = new Set(['build', 'app_check', 'e2e', 'perf']);

/**
 * The groups as the pass runs them: the full-pass gates after the tests group (joining the group
 * that follows it, else a group of their own at the end), so the pass knows whether its tests were
 * a selection before it builds. A pass without the tests gate runs them where the groups put them.
 */
export function fullPassGatesAfterTests(groups: readonly (readonly ToolGate[])[]): ToolGate[][] {
  const at = groups.findIndex((g) => g.includes('tests'));
  if (at < 0) return groups.map((g) => [...g]);
  const late = groups.flat().filter((g) => FULL_PASS_ONLY.has(g));
  const out = groups.map((g) => g.filter((gate) => !FULL_PASS_ONLY.has(gate)));
  const after = out.findIndex((g, i) => i > at && g.length > 0);
  if (late.length > 0) {
    if (after >= 0) out[after] = [...late, ...(out[after] as ToolGate[])];
    else out.push(late);
  }
  return out.filter((g) => g.length > 0);
}

/** Files that changed since `sinceTree` (all tracked and untracked files when there is none), existing ones only. */
async function changedSince(repoPath: string, sinceTree: string | null, tree: string): Promise<string[]> {
  const base = sinceTree ?? (await git(repoPath, ['mktree'], {}, ''));
  const ok =
    sinceTree === null ||
    (await git(repoPath, ['cat-file', '-t', sinceTree])
      .then((t) => t === 'tree' || t === 'commit')
      .catch(() => false));
  return changedPaths(repoPath, ok ? base : await git(repoPath, ['mktree'], {}, ''), tree);
}

async function evaluate(
  input: ReturnType<typeof RunGateInputSchema.parse>,
  files: string[],
  signal: AbortSignal,
  onSandbox?: (r: SandboxReport) => void,
  scope?: ChangeScope,
): Promise<GateResultInput> {
  const timeoutMs = input.timeoutSeconds * 1000;
  switch (input.gate) {
    case 'static_analysis':
      // The checkers read code the agent wrote (an eslint config is a program): in the sandbox, repository read-only, no network.
      return staticAnalysis({
        repoPath: input.repoPath,
        files,
        timeoutMs,
        signal,
        sandbox: { runId: input.runId, repoPath: input.repoPath, mode: input.sandbox, ...(onSandbox ? { report: onSandbox } : {}) },
        scope,
      });
    case 'secret_scan':
      return secretScanGate({ repoPath: input.repoPath, files, scope });
    case 'mock_integrity':
      return mockIntegrityGate({ repoPath: input.repoPath, files, scope });
    case 'test_mutation':
      // From the run start when the run names it (its files then are those changed since then).
      return input.runStartTree !== undefined
        ? testIntegrityGate({
            repoPath: input.repoPath,
            files,
            startTree: input.runStartTree,
            // The added tests' run on the start code gets the gate's budget, less a margin to report in.
            provenance: { runId: input.runId, sandbox: input.sandbox, timeoutMs: timeoutMs - 15_000 },
          })
        : testMutationGate({ repoPath: input.repoPath, files, beforeTree: input.sinceTree });
    case 'test_gaming':
      return testGamingGate({ repoPath: input.repoPath, runId: input.runId, files, startTree: input.runStartTree ?? input.sinceTree });
    case 'doc_coverage':
      return docCoverageGate({ repoPath: input.repoPath, files, scope });
    case 'coverage':
      return coverageGate({ repoPath: input.repoPath, thresholdPercent: input.coverageThreshold });
    case 'build':
      // The build runs what the repository says (a build script is code the agent wrote): in the sandbox, no network.
      return buildGate({
        repoPath: input.repoPath,
        command: input.buildCommand ?? '',
        timeoutMs,
        signal,
        logPath: path.join(gatesDir(input.repoPath, input.runId), `build-${pad(input.iteration)}.log`),
        sandbox: { runId: input.runId, repoPath: input.repoPath, mode: input.sandbox, ...(onSandbox ? { report: onSandbox } : {}) },
      });
    case 'app_check':
    case 'e2e':
    case 'perf': {
      // The product checks run the app, a journey, a benchmark: code the agent wrote, in the sandbox (no network but the loopback).
      const opts = {
        repoPath: input.repoPath,
        runId: input.runId,
        command: (input.gate === 'app_check' ? input.appCheck : input.gate === 'e2e' ? input.e2eCommand : input.perfCommand) ?? '',
        timeoutMs,
        signal,
        logPath: path.join(gatesDir(input.repoPath, input.runId), `${input.gate}-${pad(input.iteration)}.log`),
        sandbox: { runId: input.runId, repoPath: input.repoPath, mode: input.sandbox, ...(onSandbox ? { report: onSandbox } : {}) },
        runStartTree: input.runStartTree ?? null,
        sandboxMode: input.sandbox,
      };
      return input.gate === 'perf' ? perfGate(opts) : commandCheckGate(input.gate, opts);
    }
  }
}

type GateInput = ReturnType<typeof RunGateInputSchema.parse>;

/** A gate's full report: its result with every finding and the files it looked at. */
type GateReport = Omit<GateResult, 'findings'> & { files: string[]; findings: GateResultInput['findings'] };

/**
 * A gate that did not finish within its time. A person's command run on the change — the build,
 * the app check, the e2e journey, the benchmark — that does not finish in time does not pass: it
 * fails, as each of those checks says of its own command (a journey an agent made hang must not
 * leave the gate undecided, which never blocks completion). Any other gate, or one cancelled, could
 * not decide.
 */
function notFinished(input: { gate: ToolGate; timeoutSeconds: number }, signal: AbortSignal): GateResultInput {
  const reason = `the ${input.gate.replace(/_/g, ' ')} gate did not finish within ${input.timeoutSeconds}s`;
  const timeout = (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
  if (timeout && FULL_PASS_ONLY.has(input.gate))
    return { gate: input.gate, verdict: 'fail', reason: `${reason} (gateTimeoutSeconds): a check that does not finish does not pass` };
  return { gate: input.gate, verdict: 'inconclusive', reason };
}

/** One gate on `tree` (its changed files given): the capped result, and its full report (written to its own file unless `ownReport` is false). */
async function gateOnTree(
  input: GateInput,
  tree: string,
  files: string[],
  signal: AbortSignal,
  ownReport = true,
  onSandbox?: (r: SandboxReport) => void,
  scope?: ChangeScope,
): Promise<{ result: GateResult; report: GateReport }> {
  const started = Date.now();
  const timedOut = new Promise<GateResultInput>((resolve) => {
    const done = (): void => resolve(notFinished(input, signal));
    if (signal.aborted) done();
    else signal.addEventListener('abort', done);
  });
  const raw = await Promise.race([evaluate(input, files, signal, onSandbox, scope), timedOut]);
  const all = raw.findings ?? [];
  const result: GateResultInput = {
    ...raw,
    findings: all.slice(0, MAX_FINDINGS),
    findingCount: Math.max(raw.findingCount ?? 0, all.length),
    durationMs: Date.now() - started,
    treeHash: tree,
    iteration: input.iteration,
  };
  if (ownReport) {
    const report = path.join(gatesDir(input.repoPath, input.runId), `${input.gate}-${pad(input.iteration)}.json`);
    const problem = writeReport(report, { ...result, files, findings: all });
    if (problem === null) result.reportPath = report;
    else result.reason = `${result.reason ?? ''} (${problem})`;
  }
  const parsed = GateResultSchema.parse({ ...result, reason: (result.reason ?? '').slice(0, 500) });
  return { result: parsed, report: { ...parsed, files, findings: all } };
}

/** The run's folder of gate reports. */
function gatesDir(repoPath: string, runId: string): string {
  return ensureRepoDir(repoPath, path.join(ensureRunDir(repoPath, runId), 'gates'));
}

/** Writes a report; null when written, else what went wrong (a full disk costs the report, not the gate). */
function writeReport(file: string, content: unknown): string | null {
  try {
    writePrivateFile(file, `${JSON.stringify(content, null, 2)}\n`);
    return null;
  } catch (err) {
    if (!isStorageError(err)) throw err;
    return describeWriteError('report not written', err);
  }
}

export async function runGate(raw: RunGateInput): Promise<GateResult> {
  const input = RunGateInputSchema.parse(raw);
  const ctx = Context.current();
  const stopBeats = beatWhileRunning(() => ctx.heartbeat(), ctx);
  const signal = AbortSignal.any([AbortSignal.timeout(input.timeoutSeconds * 1000), ctx.cancellationSignal]);
  try {
    const tree = await workingTreeHash(input.repoPath);
    const start = LINE_SCOPED.has(input.gate) ? input.runStartTree : null;
    const scope = start ? ((await changeScope(input.repoPath, start, tree)) ?? undefined) : undefined;
    return (await gateOnTree(input, tree, await changedSince(input.repoPath, input.sinceTree, tree), signal, true, undefined, scope))
      .result;
  } finally {
    stopBeats();
  }
}

/** The paths that changed from `since` to the pass's tree, when the caller's inspection diffed them already. */
export interface KnownChanges {
  since: string;
  paths: readonly string[];
}

/**
 * Every tool gate of one pass (see the file comment). `knownTree`: the working tree's hash just
 * computed by the caller (an agent call's inspection), so the pass need not hash it again;
 * `known`: what that inspection found changed since a tree, so gates last run there need no diff.
 */
export async function runGates(raw: RunGatesInput, knownTree?: string, known: KnownChanges | null = null): Promise<RunGatesResult> {
  if (!raw.compact) return runGatesPass(raw, knownTree, known, null);
  // Compact passes (lean runs) write one report for the whole pass: one file made, not one per gate.
  const reportFile = path.join(runDir(raw.repoPath, raw.runId), 'gates', `pass-${pad(raw.iteration)}.json`);
  const out = await runGatesPass(raw, knownTree, known, reportFile);
  return { ...out, reportFile, results: out.results.map((r) => compactGateResult(r, out.treeHash, raw.iteration, reportFile)) };
}

/** A gate result without what the workflow knows already (its defaults, the pass's tree and iteration, the pass's report). */
export function compactGateResult(r: GateResultInput, tree: string, iteration: number, reportFile: string): GateResultInput {
  const { findings, findingCount, missingTools, treeHash, iteration: it, reportPath, ...rest } = r;
  const usual = reportPath === reportFile;
  return {
    ...rest,
    ...(findings && findings.length > 0 ? { findings } : {}),
    ...(findingCount ? { findingCount } : {}),
    ...(missingTools && missingTools.length > 0 ? { missingTools } : {}),
    ...(reportPath && !usual ? { reportPath } : {}),
    ...(reportPath === null || reportPath === undefined ? { reportPath: null } : {}),
    ...(treeHash !== undefined && treeHash !== tree ? { treeHash } : {}),
    ...(it !== undefined && it !== iteration ? { iteration: it } : {}),
  };
}

/**
 * The pass. `reportFile`: every gate's full report goes into this one file (`{ iteration,
 * treeHash, interrupted, gates: [...] }`, written when the pass ends, cut short or not), and
 * each result names it; null: each gate writes its own (`<gate>-NNNN.json`, older runs).
 */
async function runGatesPass(
  raw: RunGatesInput,
  knownTree: string | undefined,
  known: KnownChanges | null,
  reportFile: string | null,
): Promise<RunGatesResult> {
  const input = RunGatesInputSchema.parse(raw);
  const ctx = Context.current();
  // The group running now, in the heartbeats: the UI's pending activity and `vigil status` show it.
  let now: GatesStepDetails = { step: GATES_STEP, gates: [...(input.groups[0] ?? [])] };
  const stopBeats = beatWhileRunning(() => ctx.heartbeat(now), ctx);
  try {
    const tree = knownTree ?? (await workingTreeHash(input.repoPath));
    const changed = new Map<string, Promise<string[]>>();
    if (known && knownTree !== undefined) changed.set(known.since, Promise.resolve([...known.paths]));
    const filesSince = (since: string | null): Promise<string[]> => {
      const key = since ?? '';
      let p = changed.get(key);
      if (!p) changed.set(key, (p = changedSince(input.repoPath, since, tree)));
      return p;
    };
    // What the run wrote since its start, read once per pass for the gates that block only on it.
    let scopeOnce: Promise<ChangeScope | undefined> | undefined;
    const scopeFor = (gate: string): Promise<ChangeScope | undefined> => {
      const start = input.runStartTree;
      if (!LINE_SCOPED.has(gate) || !start) return Promise.resolve(undefined);
      scopeOnce ??= changeScope(input.repoPath, start, tree).then((s) => s ?? undefined);
      return scopeOnce;
    };
    const results: GateResult[] = [];
    let tests: TestResult | null = null;
    const reports = new Map<object, GateReport>();
    const toolReports: SandboxReport[] = [];
    const isolation = (): { sandbox?: SandboxReport } => (toolReports.length ? { sandbox: passSandbox(toolReports) } : {});
    /** The pass's one report (when it has one), named by every result it holds. */
    const withPassReport = (out: RunGatesResult): RunGatesResult => {
      if (reportFile === null || out.results.length === 0) return out;
      gatesDir(input.repoPath, input.runId);
      const problem = writeReport(reportFile, {
        iteration: input.iteration,
        treeHash: out.treeHash,
        interrupted: out.interrupted,
        gates: out.results.map((r) => reports.get(r)),
      });
      return {
        ...out,
        results: out.results.map((r) =>
          problem === null ? { ...r, reportPath: reportFile } : { ...r, reason: `${r.reason} (${problem})`.slice(0, 500) },
        ),
      };
    };
    for (const planned of fullPassGatesAfterTests(input.groups)) {
      if (ctx.cancellationSignal.aborted) return { treeHash: tree, results, tests, interrupted: true, ...isolation() };
      // A pass whose tests ran only the affected ones does not build (the completion check runs it in full, and builds).
      const group = (tests as TestResult | null)?.selection ? planned.filter((g) => !FULL_PASS_ONLY.has(g)) : planned;
      if (group.length === 0) continue;
      if (group.join() !== now.gates.join()) now = { step: GATES_STEP, gates: [...group] };
      const finished: GateResult[] = [];
      let testsNow: TestResult | null = null;
      await Promise.all(
        group.map(async (gate) => {
          if (gate === 'tests') {
            if (!input.tests) return;
            try {
              testsNow = await runTests(input.tests, { ...now });
            } catch (err) {
              if (!(err instanceof CancelledFailure)) throw err;
            }
            return;
          }
          const timeout = AbortSignal.timeout(input.timeoutSeconds * 1000);
          const signal = AbortSignal.any([timeout, ctx.cancellationSignal]);
          // The integrity gates compare with the run start whatever they last passed on (when the run names it).
          const fromStart = FROM_START.has(gate) && input.runStartTree !== undefined;
          const one = {
            runId: input.runId,
            repoPath: input.repoPath,
            gate,
            iteration: input.iteration,
            sinceTree: fromStart
              ? (input.runStartTree ?? null)
              : gate in input.sinceTrees
                ? (input.sinceTrees[gate] ?? null)
                : (input.sinceDefault ?? null),
            ...(input.runStartTree !== undefined ? { runStartTree: input.runStartTree } : {}),
            timeoutSeconds: input.timeoutSeconds,
            coverageThreshold: input.coverageThreshold,
            ...(input.sandbox ? { sandbox: input.sandbox } : {}),
            ...(input.buildCommand !== undefined ? { buildCommand: input.buildCommand } : {}),
            ...(input.appCheck !== undefined ? { appCheck: input.appCheck } : {}),
            ...(input.e2eCommand !== undefined ? { e2eCommand: input.e2eCommand } : {}),
            ...(input.perfCommand !== undefined ? { perfCommand: input.perfCommand } : {}),
          };
          const { result, report } = await gateOnTree(
            RunGateInputSchema.parse(one),
            tree,
            await filesSince(one.sinceTree),
            signal,
            reportFile === null,
            (r) => toolReports.push(r),
            await scopeFor(gate),
          );
          finished.push(result);
          reports.set(result, report);
        }),
      );
      // A group cut short by the cancellation does not count: it runs again on the next pass.
      if (ctx.cancellationSignal.aborted) return withPassReport({ treeHash: tree, results, tests, interrupted: true, ...isolation() });
      results.push(...group.flatMap((g) => finished.filter((r) => r.gate === g)));
      tests = testsNow ?? tests;
    }
    return withPassReport({ treeHash: tree, results, tests, interrupted: false, ...isolation() });
  } finally {
    stopBeats();
  }
}

/** The gate tools' runs of one pass as one report: isolated as the first that ran outside (or the last), with every refusal. */
function passSandbox(runs: readonly SandboxReport[]): SandboxReport {
  const shown = runs.find((r) => !r.applied) ?? (runs.at(-1) as SandboxReport);
  const denied: SandboxReport['denied'] = [];
  for (const r of runs) for (const d of r.denied) addDenial(denied, d);
  return { ...shown, denied };
}
