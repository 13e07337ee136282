/**
 * One pass of the tool gates on a tree (spec §5.1), in one activity (`runGates`): the groups of
 * `gateGroups` in order, the gates of a group in parallel, the test suite among them (its run on
 * the same tree, shared with the evidence gate, is not made again). A PAUSE or STOP cancels the
 * activity, which reports the groups that finished (the interrupted pass runs again later); a
 * pass lost after its retries leaves every gate inconclusive, never a pass and never a failed run.
 *
 * The pass rides with the agent call (`carriedGates`): the call makes it after a good agent run
 * that changed the tree, so a gated iteration is one activity. A PAUSE or STOP cancels the call;
 * the call asks the workflow what the cancellation means (`vigil.callCancel`): the agent finishes
 * and the pass is skipped or cut short, unless the agent is to be killed (STOP --now, a rewind, a
 * rollover, a cancelled workflow). Results come back compact (their defaults, the pass's tree and
 * iteration left out) and one report file per pass.
 *
 * Workflow code: deterministic, no I/O. What the results mean is decided in `decisions/gates.ts`.
 */
import { ActivityFailure, isCancellation, type ActivityInterfaceFor } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import type { CarriedGates, RunGatesInput, RunGatesResult, RunTestsInput } from '../schemas/activities.js';
import { GateResultSchema, type GateResult, type GateResultInput, type GateTrack, type ToolGate } from '../schemas/gates.js';
import type { Knobs } from '../schemas/knobs.js';
import type { TestRunRecord } from '../schemas/run.js';
import type { SandboxReport } from '../schemas/sandbox.js';
import { gateGroups, gateLabel } from '../rules/gates.js';

type Acts = ActivityInterfaceFor<typeof activities>;

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

/** The test record of a run (as the workflow keeps it) from the activity's result. */
export function testRecord(t: NonNullable<RunGatesResult['tests']>, treeHash: string, iteration: number): TestRunRecord {
  return {
    treeHash,
    iteration,
    passed: t.passed,
    timedOut: t.timedOut,
    exitCode: t.exitCode,
    logPath: t.logPath,
    failures: t.failures,
    runner: t.runner,
    verdict: t.verdict,
    reason: t.reason,
    baselineTotal: t.report?.baselineTotal ?? null,
    baselinePassed: t.report?.baselinePassed ?? null,
    command: t.command ? t.command.slice(0, 300) : null,
    selected: t.selection ?? null,
  };
}

export interface GatesPassInput {
  runId: string;
  repoPath: string;
  iteration: number;
  knobs: Knobs;
  treeHash: string;
  runStartTree: string | null;
  tracks: Partial<Record<ToolGate, GateTrack>>;
  /** The test run already made on `treeHash` (shared with the evidence gate), if any. */
  knownTests: TestRunRecord | null;
  /** How to run the suite when there is none for this tree (null: nothing to run). */
  testsInput: RunTestsInput | null;
  /** Runs the activity (in the scope the caller cancels on PAUSE or STOP). */
  run: (call: () => Promise<RunGatesResult>) => Promise<RunGatesResult>;
  /** True when a PAUSE or STOP arrived. */
  interrupted: () => boolean;
  /** The pass the iteration's agent call made, used when it looked at this tree. */
  carried?: RunGatesResult | null;
}

/** The gates activity's input for a pass (`tests`: the suite to run, or null). */
export function gatesPassArgs(
  input: Omit<GatesPassInput, 'run' | 'interrupted' | 'carried' | 'treeHash' | 'knownTests' | 'testsInput'>,
  tests: RunTestsInput | null,
): RunGatesInput {
  const k = input.knobs;
  const groups = gateGroups(k);
  return {
    runId: input.runId,
    repoPath: input.repoPath,
    iteration: input.iteration,
    groups,
    ...sinceTreesArg(groups.flat(), (g) => input.tracks[g]?.passTree ?? input.runStartTree),
    timeoutSeconds: k.gateTimeoutSeconds,
    coverageThreshold: k.coverageThreshold,
    tests,
    compact: true,
    ...(k.sandbox !== 'auto' ? { sandbox: k.sandbox } : {}),
    // The build gate's command when the knob sets one (else the activity detects it).
    ...(k.buildCommand.trim() !== '' && groups.some((g) => g.includes('build')) ? { buildCommand: k.buildCommand } : {}),
    // The product checks' commands, when on (the app check without one runs the start tree's `.vigil/app-check.*`).
    ...(k.appCheck.trim() !== '' && groups.some((g) => g.includes('app_check')) ? { appCheck: k.appCheck } : {}),
    ...(groups.some((g) => g.includes('e2e')) ? { e2eCommand: k.e2eCommand } : {}),
    ...(groups.some((g) => g.includes('perf')) ? { perfCommand: k.perfCommand } : {}),
    // The integrity gates judge everything the run changed, from the tree it started with.
    ...(input.runStartTree !== null ? { runStartTree: input.runStartTree } : {}),
  };
}

/**
 * The pass an iteration's agent call carries: the same pass, made by the call after a good agent
 * run that changed the tree. Null when the gates do not follow every
 * good iteration (`gateCadence`) or there are none.
 */
export function carriedGates(
  input: Omit<GatesPassInput, 'run' | 'interrupted' | 'carried' | 'treeHash'>,
  lastTree: string | null,
): CarriedGates | null {
  const groups = gateGroups(input.knobs);
  if (groups.length === 0 || input.knobs.gateCadence !== 'changed') return null;
  const wantsTests = groups.some((g) => g.includes('tests'));
  return { pass: gatesPassArgs(input, wantsTests ? input.testsInput : null), lastTree, knownTestsTree: input.knownTests?.treeHash ?? null };
}

export interface GatesPassOutcome {
  /** Every gate that finished, in the spec's order (the tests gate included). */
  results: GateResult[];
  interrupted: boolean;
  /** A test run made by this pass (to remember for the tree). */
  tests: TestRunRecord | null;
  /** How the pass's test run and gate tools were isolated, and what the sandbox refused them. */
  sandbox?: { tests: SandboxReport | null; gates: SandboxReport | null };
}

/**
 * A compact gate result with what it left out: its defaults, the pass's tree and iteration, its report (the pass's one
 * report, or its own file in a pass recorded before the one report).
 */
export function gateResultOf(r: GateResultInput, out: RunGatesResult, iteration: number): GateResult {
  const full = {
    findings: [],
    findingCount: 0,
    missingTools: [],
    durationMs: 0,
    treeHash: out.treeHash,
    iteration,
    reportPath: out.reportFile ?? (out.reportDir ? `${out.reportDir}/${r.gate}-${String(iteration).padStart(4, '0')}.json` : null),
    ...r,
  };
  const parsed = GateResultSchema.safeParse(full);
  // A result the schema refuses (never expected) is kept as it came rather than failing the workflow task.
  return parsed.success ? parsed.data : (full as GateResult);
}

/** Per gate, the tree it looks at changes since: the most common one once (`sinceDefault`), the others by gate. */
export function sinceTreesArg(
  gates: readonly ToolGate[],
  since: (g: ToolGate) => string | null,
): { sinceTrees: Partial<Record<ToolGate, string | null>>; sinceDefault?: string | null } {
  const all = gates.map((g) => [g, since(g)] as const);
  if (all.length === 0) return { sinceTrees: {} };
  const counts = new Map<string | null, number>();
  for (const [, t] of all) counts.set(t, (counts.get(t) ?? 0) + 1);
  const common = [...counts.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  return { sinceTrees: Object.fromEntries(all.filter(([, t]) => t !== common)), sinceDefault: common };
}

/** One pass of the tool gates in one activity (see the file comment). */
export async function runGatesPass(acts: Pick<Acts, 'runGates'>, input: GatesPassInput): Promise<GatesPassOutcome> {
  const k = input.knobs;
  const groups = gateGroups(k);
  const carried = input.carried && input.carried.treeHash === input.treeHash ? input.carried : null;
  if (!carried && input.interrupted()) return { results: [], interrupted: true, tests: null };
  // A partial run on the tree stands only for a pass that would make one itself (never for a completion check's).
  const known =
    input.knownTests !== null &&
    input.knownTests.treeHash === input.treeHash &&
    (!input.knownTests.selected || input.testsInput?.scope === 'affected');
  const wantsTests = groups.some((g) => g.includes('tests'));
  let out: RunGatesResult;
  try {
    out =
      carried ??
      (await input.run(() =>
        acts.runGates.executeWithOptions(
          { summary: `quality gates (iteration ${input.iteration}): ${groups.map((g) => g.map(gateLabel).join(' + ')).join(' → ')}` },
          [gatesPassArgs(input, wantsTests && !known ? input.testsInput : null)],
        ),
      ));
  } catch (err) {
    if (isCancellation(err) && input.interrupted()) return { results: [], interrupted: true, tests: null };
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    // Lost after its retries: every gate of the pass is inconclusive, never a pass.
    const why = err.cause?.message ?? err.message;
    const lost = groups.flat().map((gate) =>
      GateResultSchema.parse({
        gate,
        verdict: 'inconclusive',
        reason: `the ${gateLabel(gate)} gate could not run: ${why}`.slice(0, 500),
        treeHash: input.treeHash,
        iteration: input.iteration,
      }),
    );
    return { results: lost, interrupted: false, tests: null };
  }
  const ran = out.tests ? testRecord(out.tests, input.treeHash, input.iteration) : null;
  const testsNow = known ? input.knownTests : ran;
  // The tests gate counts once its group finished: it ran here, or the tree's run was known and the pass went past it.
  const testsDone = ran !== null || (known && !out.interrupted) || (!input.testsInput && !out.interrupted);
  const results: GateResult[] = [];
  for (const group of groups) {
    for (const gate of group) {
      if (gate === 'tests') {
        if (testsDone)
          results.push(testsGateResult(testsNow && testsNow.runner !== 'none' ? testsNow : null, input.treeHash, input.iteration));
        continue;
      }
      const r = out.results.find((x) => x.gate === gate);
      // A compact result leaves out its defaults and the pass's tree and iteration.
      if (r) results.push(gateResultOf(r, out, input.iteration));
    }
  }
  return { results, interrupted: out.interrupted, tests: ran, sandbox: { tests: out.tests?.sandbox ?? null, gates: out.sandbox ?? null } };
}
