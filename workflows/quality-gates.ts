/**
 * The tool gates of one tree, orchestrated (spec §5.1): the groups of `gateGroups` in order, the
 * gates of a group in parallel, each one activity (the test suite reuses the evidence gate's test
 * run on the same tree); a PAUSE or STOP between groups ends the pass early. A gate whose activity
 * is lost after its retries is inconclusive, never a pass and never a failed run.
 *
 * Workflow code: deterministic, no I/O. What the results mean is decided in `decisions/gates.ts`.
 */
import { ActivityFailure, isCancellation, type ActivityInterfaceFor } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import { GateResultSchema, type GateResult, type GateTrack, type ToolGate } from '../schemas/gates.js';
import type { Knobs } from '../schemas/knobs.js';
import type { TestRunRecord } from '../schemas/run.js';
import { gateGroups, gateLabel } from './decisions/gates.js';

type Acts = ActivityInterfaceFor<typeof activities>;

export interface ToolGatesInput {
  runId: string;
  repoPath: string;
  iteration: number;
  knobs: Knobs;
  /** The tree being gated, and the run's start tree (files are looked at since a gate last passed, else since the start). */
  treeHash: string;
  runStartTree: string | null;
  tracks: Partial<Record<ToolGate, GateTrack>>;
  /** The test suite on `treeHash` (shared with the evidence gate: run once per tree). */
  runTests: () => Promise<TestRunRecord | null>;
  /** True when a PAUSE or STOP arrived: no further group starts. */
  interrupted: () => boolean;
}

export interface ToolGatesOutcome {
  results: GateResult[];
  /** Some groups did not run (a pause or a stop came first). */
  interrupted: boolean;
}

/** The test run as a gate result. */
export function testsGateResult(t: TestRunRecord | null, treeHash: string, iteration: number): GateResult {
  if (t === null) {
    return GateResultSchema.parse({
      gate: 'tests',
      verdict: 'inconclusive',
      reason: 'no test command configured and no test runner found',
      treeHash,
      iteration,
    });
  }
  const verdict = t.verdict ?? (t.passed ? 'pass' : 'fail');
  const reason =
    t.reason ||
    (t.passed
      ? 'tests passed'
      : t.timedOut
        ? 'the test command timed out'
        : `tests failed (exit ${t.exitCode}${t.failures !== null ? `, ${t.failures} failing` : ''})`);
  return GateResultSchema.parse({
    gate: 'tests',
    verdict,
    reason: reason.slice(0, 500),
    findings:
      verdict === 'fail'
        ? [{ gate: 'tests', severity: 'high', file: null, line: null, message: `${reason}; log: ${t.logPath}`.slice(0, 500) }]
        : [],
    findingCount: verdict === 'fail' ? 1 : 0,
    reportPath: t.logPath || null,
    treeHash,
    iteration,
  });
}

function lost(gate: ToolGate, err: unknown, treeHash: string, iteration: number): GateResult {
  const why = err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : String(err);
  return GateResultSchema.parse({
    gate,
    verdict: 'inconclusive',
    reason: `the ${gateLabel(gate)} gate could not run: ${why}`.slice(0, 500),
    treeHash,
    iteration,
  });
}

export async function runToolGates(gates: Pick<Acts, 'runGate'>, input: ToolGatesInput): Promise<ToolGatesOutcome> {
  const k = input.knobs;
  const results: GateResult[] = [];
  for (const group of gateGroups(k)) {
    if (input.interrupted()) return { results, interrupted: true };
    const settled = await Promise.all(
      group.map(async (gate): Promise<GateResult> => {
        try {
          if (gate === 'tests') return testsGateResult(await input.runTests(), input.treeHash, input.iteration);
          const r = await gates.runGate.executeWithOptions({ summary: `gate: ${gateLabel(gate)} (iteration ${input.iteration})` }, [
            {
              runId: input.runId,
              repoPath: input.repoPath,
              gate,
              iteration: input.iteration,
              sinceTree: input.tracks[gate]?.passTree ?? input.runStartTree,
              timeoutSeconds: k.gateTimeoutSeconds,
              coverageThreshold: k.coverageThreshold,
            },
          ]);
          return r;
        } catch (err) {
          if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
          return lost(gate, err, input.treeHash, input.iteration);
        }
      }),
    );
    results.push(...settled);
  }
  return { results, interrupted: false };
}
