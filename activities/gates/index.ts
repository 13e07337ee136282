/**
 * The `runGate` activity: one tool gate on the working tree as it is now. It works out which
 * files changed since the tree the gates last saw, runs the gate (static analysis, secret scan,
 * mock integrity, test mutation, documentation, coverage; the test suite is `runTests`), writes
 * the full report under the run folder (`gates/<gate>-NNNN.json`) and returns the capped result.
 * A gate that overruns its timeout is inconclusive, never a pass.
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { GateResultSchema, MAX_FINDINGS, RunGateInputSchema, type GateResult, type GateResultInput, type RunGateInput } from '../../schemas/gates.js';
import { ensureRepoDir, ensureRunDir, pad } from '../artifacts.js';
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

export async function runGate(raw: RunGateInput): Promise<GateResult> {
  const input = RunGateInputSchema.parse(raw);
  const ctx = Context.current();
  const started = Date.now();
  const beat = setInterval(() => ctx.heartbeat(), 1000);
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), input.timeoutSeconds * 1000);
  const signal = AbortSignal.any([timeout.signal, ctx.cancellationSignal]);
  try {
    const tree = await workingTreeHash(input.repoPath);
    const files = await changedSince(input.repoPath, input.sinceTree, tree);
    const timedOut = new Promise<GateResultInput>((resolve) => {
      signal.addEventListener('abort', () =>
        resolve({ gate: input.gate, verdict: 'inconclusive', reason: `the ${input.gate.replace(/_/g, ' ')} gate did not finish within ${input.timeoutSeconds}s` }),
      );
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
  } finally {
    clearInterval(beat);
    clearTimeout(timer);
  }
}
