/**
 * The gate activities. `runGates` (lean runs): every tool gate of one pass on the working tree as
 * it is now, in one activity — the groups in order, the gates of a group in parallel, each bounded
 * by its timeout, the test suite (`runTests`) where asked; the tree hash is computed once and the
 * changed files once per starting tree. A cancellation (the workflow's answer to a PAUSE or STOP)
 * aborts the running group and starts no other: the activity returns the results of the groups
 * that finished, marked interrupted. `runGate` (older runs): one gate per activity.
 *
 * Each gate works out which files changed since the tree it last passed on (else the run start),
 * runs (static analysis, secret scan, mock integrity, test mutation, documentation, coverage),
 * writes its full report under the run folder (`gates/<gate>-NNNN.json`) and returns the capped
 * result. A gate that overruns its timeout is inconclusive, never a pass.
 */
import path from 'node:path';
import { CancelledFailure, Context } from '@temporalio/activity';
import { beatWhileRunning } from '../heartbeat.js';
import { GATES_STEP, type GatesStepDetails } from '../../schemas/call-step.js';
import { RunGatesInputSchema, type RunGatesInput, type RunGatesResult, type TestResult } from '../../schemas/activities.js';
import { runTests } from '../tests.js';
import { GateResultSchema, MAX_FINDINGS, RunGateInputSchema, type GateResult, type GateResultInput, type RunGateInput } from '../../schemas/gates.js';
import { ensureRepoDir, ensureRunDir, pad, runDir } from '../artifacts.js';
import { changedPaths, git, workingTreeHash } from '../repo.js';
import { describeWriteError, isStorageError, writePrivateFile } from '../safe-files.js';
import { coverageGate } from './coverage.js';
import { docCoverageGate } from './doc-coverage.js';
import { secretScanGate } from './secret-scan.js';
import { staticAnalysis } from './static-analysis.js';
import { mockIntegrityGate, testMutationGate } from './test-integrity.js';

/** Files that changed since `sinceTree` (all tracked and untracked files when there is none), existing ones only. */
async function changedSince(repoPath: string, sinceTree: string | null, tree: string): Promise<string[]> {
  const base = sinceTree ?? (await git(repoPath, ['mktree'], {}, ''));
  const ok = sinceTree === null || (await git(repoPath, ['cat-file', '-t', sinceTree]).then((t) => t === 'tree' || t === 'commit').catch(() => false));
  return changedPaths(repoPath, ok ? base : await git(repoPath, ['mktree'], {}, ''), tree);
}

async function evaluate(input: ReturnType<typeof RunGateInputSchema.parse>, files: string[], signal: AbortSignal): Promise<GateResultInput> {
  const timeoutMs = input.timeoutSeconds * 1000;
  switch (input.gate) {
    case 'static_analysis':
      return staticAnalysis({ repoPath: input.repoPath, files, timeoutMs, signal });
    case 'secret_scan':
      return secretScanGate({ repoPath: input.repoPath, files });
    case 'mock_integrity':
      return mockIntegrityGate({ repoPath: input.repoPath, files });
    case 'test_mutation':
      return testMutationGate({ repoPath: input.repoPath, files, beforeTree: input.sinceTree });
    case 'doc_coverage':
      return docCoverageGate({ repoPath: input.repoPath, files });
    case 'coverage':
      return coverageGate({ repoPath: input.repoPath, thresholdPercent: input.coverageThreshold });
  }
}

type GateInput = ReturnType<typeof RunGateInputSchema.parse>;

/** One gate on `tree` (its changed files given): the capped result, its report written. */
async function gateOnTree(input: GateInput, tree: string, files: string[], signal: AbortSignal): Promise<GateResult> {
  const started = Date.now();
  const timedOut = new Promise<GateResultInput>((resolve) => {
    const done = (): void => resolve({ gate: input.gate, verdict: 'inconclusive', reason: `the ${input.gate.replace(/_/g, ' ')} gate did not finish within ${input.timeoutSeconds}s` });
    if (signal.aborted) done();
    else signal.addEventListener('abort', done);
  });
  const raw = await Promise.race([evaluate(input, files, signal), timedOut]);
  const all = raw.findings ?? [];
  const result: GateResultInput = {
    ...raw,
    findings: all.slice(0, MAX_FINDINGS),
    findingCount: Math.max(raw.findingCount ?? 0, all.length),
    durationMs: Date.now() - started,
    treeHash: tree,
    iteration: input.iteration,
  };
  const report = path.join(ensureRepoDir(input.repoPath, path.join(ensureRunDir(input.repoPath, input.runId), 'gates')), `${input.gate}-${pad(input.iteration)}.json`);
  try {
    writePrivateFile(report, `${JSON.stringify({ ...result, files, findings: all }, null, 2)}\n`);
    result.reportPath = report;
  } catch (err) {
    if (!isStorageError(err)) throw err;
    result.reason = `${result.reason ?? ''} (${describeWriteError('report not written', err)})`.slice(0, 500);
  }
  return GateResultSchema.parse({ ...result, reason: (result.reason ?? '').slice(0, 500) });
}

export async function runGate(raw: RunGateInput): Promise<GateResult> {
  const input = RunGateInputSchema.parse(raw);
  const ctx = Context.current();
  const stopBeats = beatWhileRunning(() => ctx.heartbeat(), ctx);
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), input.timeoutSeconds * 1000);
  const signal = AbortSignal.any([timeout.signal, ctx.cancellationSignal]);
  try {
    const tree = await workingTreeHash(input.repoPath);
    return await gateOnTree(input, tree, await changedSince(input.repoPath, input.sinceTree, tree), signal);
  } finally {
    stopBeats();
    clearTimeout(timer);
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
  const out = await runGatesPass(raw, knownTree, known);
  if (!raw.compact) return out;
  const reportDir = path.join(runDir(raw.repoPath, raw.runId), 'gates');
  return { ...out, reportDir, results: out.results.map((r) => compactGateResult(r, out.treeHash, raw.iteration, reportDir)) };
}

/** A gate result without what the workflow knows already (its defaults, the pass's tree and iteration, where its report is). */
export function compactGateResult(r: GateResultInput, tree: string, iteration: number, reportDir: string): GateResultInput {
  const { findings, findingCount, missingTools, treeHash, iteration: it, reportPath, ...rest } = r;
  const usual = reportPath === path.join(reportDir, `${r.gate}-${pad(iteration)}.json`);
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

async function runGatesPass(raw: RunGatesInput, knownTree: string | undefined, known: KnownChanges | null): Promise<RunGatesResult> {
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
    const results: GateResult[] = [];
    let tests: TestResult | null = null;
    for (const group of input.groups) {
      if (ctx.cancellationSignal.aborted) return { treeHash: tree, results, tests, interrupted: true };
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
          const one = { runId: input.runId, repoPath: input.repoPath, gate, iteration: input.iteration, sinceTree: gate in input.sinceTrees ? (input.sinceTrees[gate] ?? null) : (input.sinceDefault ?? null), timeoutSeconds: input.timeoutSeconds, coverageThreshold: input.coverageThreshold };
          finished.push(await gateOnTree(RunGateInputSchema.parse(one), tree, await filesSince(one.sinceTree), signal));
        }),
      );
      // A group cut short by the cancellation does not count: it runs again on the next pass.
      if (ctx.cancellationSignal.aborted) return { treeHash: tree, results, tests, interrupted: true };
      results.push(...group.flatMap((g) => finished.filter((r) => r.gate === g)));
      tests = testsNow ?? tests;
    }
    return { treeHash: tree, results, tests, interrupted: false };
  } finally {
    stopBeats();
  }
}
