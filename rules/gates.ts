/**
 * Quality gates as decisions (spec §5.1–§5.3, seed 004): which gates run and in which order, what
 * a gate's verdict means (blocking, advisory, off), the per-gate failure ladder (block; tell a
 * person at `gateEscalateAfter`; pause at `gatePauseAfter`), the stuck-gate abort, and the text
 * the builder and people read. Gate activities report facts; nothing here does I/O.
 *
 * A failing gate never turns into a pass by repetition: the ladder only adds consequences.
 */
import type { Knobs } from '../schemas/knobs.js';
import {
  severityRank,
  TOOL_GATES,
  type ChecklistState,
  type GateName,
  type GateResult,
  type GateTrack,
  type ReviewRecord,
  type ToolGate,
} from '../schemas/gates.js';
import { checklistBlock } from './checklist/state.js';

export type GateKnobs = Pick<
  Knobs,
  | 'qualityGates'
  | 'gateCadence'
  | 'gateStaticAnalysis'
  | 'gateSecretScan'
  | 'buildCommand'
  | 'appCheck'
  | 'e2eCommand'
  | 'perfCommand'
  | 'gateTests'
  | 'gateMockIntegrity'
  | 'gateTestMutation'
  | 'gateTestGaming'
  | 'gateDocCoverage'
  | 'gateCoverage'
  | 'gateEscalateAfter'
  | 'gatePauseAfter'
  | 'gateStuckAfter'
  | 'gateFindingsInPrompt'
  | 'codeReview'
  | 'prdChecklist'
>;

/** A command knob said off (`off` or `none`, any case): buildCommand's no build gate, appCheck's no app check. */
export const buildOff = (command: string): boolean => /^\s*(off|none)\s*$/i.test(command);

/** off: not run; blocking: a `fail` refuses completion; advisory: findings reach the prompt only. */
export type Disposition = 'off' | 'blocking' | 'advisory';

/**
 * The seed's table: every default gate blocks (coverage too, once opted in: it has a threshold);
 * each has its own switch. Without `qualityGates` no tool gate runs; review and checklist keep
 * their own switches, since they guard completion rather than iterations.
 */
export function gateDisposition(gate: GateName, k: GateKnobs): Disposition {
  const on: Record<GateName, boolean> = {
    static_analysis: k.qualityGates && k.gateStaticAnalysis,
    secret_scan: k.qualityGates && k.gateSecretScan,
    build: k.qualityGates && !buildOff(k.buildCommand),
    tests: k.qualityGates && k.gateTests,
    mock_integrity: k.qualityGates && k.gateMockIntegrity,
    test_mutation: k.qualityGates && k.gateTestMutation,
    test_gaming: k.qualityGates && k.gateTestGaming,
    doc_coverage: k.qualityGates && k.gateDocCoverage,
    coverage: k.qualityGates && k.gateCoverage,
    app_check: k.qualityGates && !buildOff(k.appCheck),
    e2e: k.qualityGates && k.e2eCommand.trim() !== '' && !buildOff(k.e2eCommand),
    perf: k.qualityGates && k.perfCommand.trim() !== '' && !buildOff(k.perfCommand),
    code_review: k.codeReview,
    checklist: k.prdChecklist,
  };
  return on[gate] ? 'blocking' : 'off';
}

/**
 * The tool gates in the spec's order, grouped: gates in one group are independent and run in
 * parallel; a PAUSE or STOP is honoured between groups. Static analysis and the secret scan read
 * files; the tests run the suite (coverage reads the report the suite wrote, so it comes after);
 * the test-integrity and documentation gates read files again. The build is named in the first
 * group (where histories recorded it), but the pass runs it after the tests group, with the
 * product checks (app check, e2e, performance), and only on a full pass: not where the tests ran
 * an affected-tests selection (activities/gates/index.ts `fullPassGatesAfterTests`). A build gate
 * only adds a name to the one gates activity.
 */
export function gateGroups(k: GateKnobs): ToolGate[][] {
  const groups: ToolGate[][] = [
    ['static_analysis', 'secret_scan', 'build'],
    ['tests'],
    ['mock_integrity', 'test_mutation', 'test_gaming', 'doc_coverage', 'coverage', 'app_check', 'e2e', 'perf'],
  ];
  return groups.map((g) => g.filter((gate) => gateDisposition(gate, k) !== 'off')).filter((g) => g.length > 0);
}

/** Whether the tool gates run now: on a tree they have not seen, after a good iteration or before judging completion. */
export function gatesDue(
  facts: { judging: boolean; iterationSucceeded: boolean; treeHash: string; lastTree: string | null; partialTests?: boolean },
  k: GateKnobs,
): boolean {
  if (gateGroups(k).length === 0) return false;
  // A completion check does not rest on a partial test run (affected tests): the pass runs again, with the full suite.
  if (facts.treeHash === facts.lastTree && !(facts.judging && facts.partialTests === true)) return false;
  if (facts.judging) return true;
  return k.gateCadence === 'changed' && facts.iterationSucceeded;
}

/** Gates whose same failure reason, repeated, means the agent cannot fix it (spec §5.3). */
export const STUCK_GATES: ReadonlySet<GateName> = new Set<GateName>(['static_analysis', 'mock_integrity', 'test_mutation']);

export type GateAction = 'none' | 'block' | 'escalate' | 'pause' | 'stuck';

export const freshTrack = (passTree: string | null = null): GateTrack => ({
  consecutiveFailures: 0,
  lastReason: null,
  sameReason: 0,
  escalatedAt: 0,
  pausedAt: 0,
  passTree,
});

/**
 * One gate result against its track. A pass clears the streak; an inconclusive result leaves it
 * as it was (nothing was learned); a failure of a blocking gate counts. On a failure the stuck
 * rule comes first (the same reason `gateStuckAfter` times in a row ends the run), then the pause
 * (once per streak), then the escalation (once per streak), else the gate just blocks.
 */
export function trackGate(track: GateTrack | undefined, result: GateResult, k: GateKnobs): { track: GateTrack; action: GateAction } {
  const t = track ?? freshTrack();
  // The pass tree: from now on the gate looks only at what changed since.
  if (result.verdict === 'pass') return { track: freshTrack(result.treeHash || null), action: 'none' };
  if (result.verdict === 'inconclusive' || gateDisposition(result.gate, k) !== 'blocking') return { track: t, action: 'none' };
  const count = t.consecutiveFailures + 1;
  const sameReason = t.lastReason === result.reason ? t.sameReason + 1 : 1;
  const next: GateTrack = { ...t, consecutiveFailures: count, lastReason: result.reason, sameReason };
  if (STUCK_GATES.has(result.gate) && k.gateStuckAfter > 0 && sameReason >= k.gateStuckAfter) return { track: next, action: 'stuck' };
  if (count >= k.gatePauseAfter && t.pausedAt === 0) return { track: { ...next, pausedAt: count }, action: 'pause' };
  if (count >= k.gateEscalateAfter && t.escalatedAt === 0) return { track: { ...next, escalatedAt: count }, action: 'escalate' };
  return { track: next, action: 'block' };
}

/** The latest result per gate: `results` replace earlier results of the same gates (in gate order). */
export function mergeLatest(latest: readonly GateResult[], results: readonly GateResult[]): GateResult[] {
  const byGate = new Map<GateName, GateResult>();
  for (const r of latest) byGate.set(r.gate, r);
  for (const r of results) byGate.set(r.gate, r);
  return [...byGate.values()];
}

/** Results that refuse completion: a blocking gate's `fail` (on the tree being judged, when given). */
export function blockingFailures(latest: readonly GateResult[], k: GateKnobs, treeHash?: string): GateResult[] {
  return latest.filter(
    (r) => r.verdict === 'fail' && gateDisposition(r.gate, k) === 'blocking' && (treeHash === undefined || r.treeHash === treeHash),
  );
}

export const gateLabel = (gate: GateName): string => gate.replace(/_/g, ' ');

/** One line per result, for status, the UI and notifications. */
export function gateLine(r: GateResult): string {
  const findings = r.findingCount > 0 ? `, ${r.findingCount} finding${r.findingCount === 1 ? '' : 's'}` : '';
  const missing = r.missingTools.length > 0 ? `; not installed: ${r.missingTools.join(', ')}` : '';
  return `${gateLabel(r.gate)}: ${r.verdict.toUpperCase()}${findings} (${r.reason})${missing}`.slice(0, 600);
}

/** Why a completion claim is refused, naming every failing blocking gate. */
export function describeGateRefusal(failures: readonly GateResult[], iteration: number): string {
  const names = failures.map((f) => gateLabel(f.gate)).join(', ');
  return [
    `Completion at iteration ${iteration} was refused before the council was asked: the blocking quality ` +
      `gate${failures.length === 1 ? '' : 's'} ${names} failed.`,
    ...failures.map((f) => `- ${gateLine(f)}`),
    'Fix these first; they are listed under "Quality gate failures" with file and line.',
  ].join('\n');
}

/**
 * The "Quality gate failures" section of the next prompt: failing gates with their worst findings
 * first, then advisory findings of passing gates and tools that could not run, at most
 * `gateFindingsInPrompt` finding lines. Null when there is nothing to say.
 */
export function gateFindingsForPrompt(latest: readonly GateResult[], k: GateKnobs): string | null {
  const failing = latest.filter((r) => r.verdict === 'fail');
  const others = latest.filter(
    (r) => r.verdict !== 'fail' && (r.findings.length > 0 || r.missingTools.length > 0 || r.verdict === 'inconclusive'),
  );
  if (failing.length === 0 && others.length === 0) return null;
  let budget = k.gateFindingsInPrompt;
  const lines: string[] = [];
  const findingLines = (r: GateResult): string[] => {
    const sorted = [...r.findings].sort((a, b) => severityRank(a.severity) - severityRank(b.severity));
    const out: string[] = [];
    for (const f of sorted) {
      if (budget <= 0) break;
      budget -= 1;
      const where = f.file ? ` ${f.file}${f.line ? `:${f.line}` : ''}` : '';
      out.push(`  - [${f.severity}]${where}: ${f.message}`);
    }
    return out;
  };
  for (const r of failing) {
    lines.push(`- ${gateLabel(r.gate)} FAILED (blocks completion): ${r.reason}`, ...findingLines(r));
    if (r.reportPath) lines.push(`  full report: ${r.reportPath}`);
  }
  for (const r of others) {
    const what = r.verdict === 'inconclusive' ? `could not decide: ${r.reason}` : 'advisory findings';
    lines.push(
      `- ${gateLabel(r.gate)} (${what})${r.missingTools.length ? `; not installed: ${r.missingTools.join(', ')}` : ''}`,
      ...findingLines(r),
    );
  }
  return lines.join('\n').slice(0, 6000);
}

/** The outcome reason of a stuck gate. */
export function stuckReason(gate: GateName, track: GateTrack): string {
  return `the ${gateLabel(gate)} gate failed ${track.sameReason} times in a row for the same reason: ${track.lastReason ?? ''}`.slice(
    0,
    1000,
  );
}

export const isToolGate = (gate: GateName): gate is ToolGate => (TOOL_GATES as readonly GateName[]).includes(gate);

/**
 * A code review as a gate result (it joins the failure ladder and the prompt's gate section): a
 * refused or inconclusive review fails like a blocked one, since nobody vouched for the change.
 */
export function reviewGateResult(r: ReviewRecord): GateResult {
  const pass = r.result === 'pass';
  const all = r.devilsAdvocate ? [...r.reviewers, r.devilsAdvocate] : r.reviewers;
  const findings = all
    .filter((x) => x.blocking || x.findings.length > 0)
    .flatMap((x) =>
      x.findings.slice(0, 2).map((f) => ({
        gate: 'code_review' as const,
        severity: x.blocking ? ('high' as const) : ('medium' as const),
        file: null,
        line: null,
        message: `${x.reviewer}: ${f}`.slice(0, 500),
      })),
    )
    .slice(0, 20);
  return {
    gate: 'code_review',
    verdict: pass ? 'pass' : 'fail',
    reason: `${r.result}: ${r.reason}`.slice(0, 500),
    findings,
    findingCount: findings.length,
    missingTools: [],
    durationMs: 0,
    reportPath: null,
    treeHash: r.treeHash,
    iteration: r.iteration,
  };
}

/**
 * The PRD checklist as a gate result. Gate results reach the builder's prompt, so held-out items
 * appear only as the one generic line of `builderReasons` (no text, label or count); people see
 * them masked in the status's checklist.
 */
export function checklistGateResult(state: ChecklistState, treeHash: string, iteration: number): GateResult {
  const block = checklistBlock(state);
  const said = block.builderReasons;
  return {
    gate: 'checklist',
    verdict: block.blocked ? 'fail' : 'pass',
    reason: block.blocked
      ? (said[0] ?? 'the checklist is not met').slice(0, 500)
      : 'every checklist item that blocks completion is verified',
    findings: said
      .slice(0, 20)
      .map((m) => ({ gate: 'checklist' as const, severity: 'high' as const, file: null, line: null, message: m.slice(0, 500) })),
    findingCount: said.length,
    missingTools: [],
    durationMs: 0,
    reportPath: null,
    treeHash,
    iteration,
  };
}
