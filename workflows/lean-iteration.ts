/**
 * The lean iteration (runs from `vigil-lean-iteration-v1` on): what keeps an iteration to a
 * handful of small history events.
 *
 * - Prompt parts by reference (`PromptParts`): a long part (findings, gate findings, checklist,
 *   handoff summary) travels as text the first time this execution sends it — the agent activity
 *   stores it under the run folder — and afterwards as its sha256 only.
 * - The repository's inspection and the agent's signal files come back with the agent call (one
 *   activity instead of three); `inspectIteration` is the fallback when the call could not make it.
 * - The tool gates of a pass in one activity (`runGatesPass`), the test suite included: the groups
 *   still run in order, in parallel within a group; a PAUSE or STOP cancels the activity, which
 *   reports the groups that finished (the interrupted pass runs again later).
 * - From `vigil-gates-with-call-v1` on, the pass rides with the agent call (`carriedGates`): the
 *   call makes it after a good agent run that changed the tree, so a gated iteration is one
 *   activity. A PAUSE or STOP cancels the call; the call asks the workflow what the cancellation
 *   means (`vigil.callCancel`): the agent finishes and the pass is skipped or cut short, unless
 *   the agent is to be killed (STOP --now, a rewind, a rollover, a cancelled workflow).
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure, isCancellation, type ActivityInterfaceFor } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import {
  PROMPT_PART_MIN_CHARS,
  PROMPT_PART_NAMES,
  type CarriedGates,
  type PromptInput,
  type PromptRefs,
  type RunGatesInput,
  type RunGatesResult,
  type RunTestsInput,
} from '../schemas/activities.js';
import { GateResultSchema, type GateResult, type GateResultInput, type GateTrack, type ToolGate } from '../schemas/gates.js';
import type { Knobs } from '../schemas/knobs.js';
import type { TestRunRecord } from '../schemas/run.js';
import { gateGroups, gateLabel } from './decisions/gates.js';
import { sha256Hex } from './decisions/sha256.js';
import { testsGateResult } from './quality-gates.js';
import type { SandboxReport } from '../schemas/sandbox.js';

type Acts = ActivityInterfaceFor<typeof activities>;

/** Which long prompt parts this execution has sent as text (so the activity has stored them). */
export class PromptParts {
  private readonly sent = new Set<string>();

  /** The prompt input with every part sent before replaced by its reference. */
  split(p: PromptInput): { promptInput: PromptInput; promptRefs: PromptRefs } {
    const out: PromptInput = { ...p };
    const refs: PromptRefs = {};
    for (const name of PROMPT_PART_NAMES) {
      const text = p[name];
      if (typeof text !== 'string' || text.length < PROMPT_PART_MIN_CHARS) continue;
      const hash = sha256Hex(text);
      if (this.sent.has(hash)) {
        refs[name] = hash;
        out[name] = null;
      } else {
        this.sent.add(hash);
      }
    }
    return { promptInput: out, promptRefs: refs };
  }

  /** The activity did not find a part where the call ran: send every part as text again. */
  forget(): void {
    this.sent.clear();
  }
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
  /** Runs from `vigil-lean-prompt-v1` on: compact results. */
  compact?: boolean;
  /** The pass the iteration's agent call made (`vigil-gates-with-call-v1`), used when it looked at this tree. */
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
    ...sinceTreesArg(groups.flat(), (g) => input.tracks[g]?.passTree ?? input.runStartTree, input.compact === true),
    timeoutSeconds: k.gateTimeoutSeconds,
    coverageThreshold: k.coverageThreshold,
    tests,
    ...(input.compact ? { compact: true } : {}),
    ...(k.sandbox !== 'auto' ? { sandbox: k.sandbox } : {}),
  };
}

/**
 * The pass an iteration's agent call carries (`vigil-gates-with-call-v1`): the same pass, made by
 * the call after a good agent run that changed the tree. Null when the gates do not follow every
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

/** A compact gate result with what it left out: its defaults, the pass's tree and iteration, its report (the pass's one report, or its own file in older passes). */
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

/** Per gate, the tree it looks at changes since; compact: the most common one once (`sinceDefault`), the others by gate. */
export function sinceTreesArg(
  gates: readonly ToolGate[],
  since: (g: ToolGate) => string | null,
  compact: boolean,
): { sinceTrees: Partial<Record<ToolGate, string | null>>; sinceDefault?: string | null } {
  const all = gates.map((g) => [g, since(g)] as const);
  if (!compact || all.length === 0) return { sinceTrees: Object.fromEntries(all) };
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
  const known = input.knownTests !== null && input.knownTests.treeHash === input.treeHash;
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
      if (r) results.push(input.compact ? gateResultOf(r, out, input.iteration) : (r as GateResult));
    }
  }
  return { results, interrupted: out.interrupted, tests: ran, sandbox: { tests: out.tests?.sandbox ?? null, gates: out.sandbox ?? null } };
}
