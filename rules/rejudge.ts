/**
 * Re-judging a recorded run (`vigil rejudge`): each completion check its journal holds is judged
 * again by today's rules, under the run's own knobs (today's defaults for knobs it did not have,
 * then any `--set`), from the evidence recorded then — the files changed since the run's start,
 * the gate results, the code review's reviewers and mergeability, the checklist's result, the
 * council's votes — and, for the integrity rules, the tree itself. Nothing is asked of an agent
 * or a tool: a rule that would need a new answer (a gate that never ran on that tree, a council
 * of another size, a review or checklist the run did not have) says "needs a new judgement".
 *
 * The checks a journal shows: every council round, a completion without a council
 * (`completion_promise_fulfilled`), and a claim that a gate, the review or the checklist refused
 * before the council was asked (a failing result recorded at the claim's iteration). The order of
 * the rules is the completion check's (workflows/run/completion.ts): the evidence gate, the tool
 * gates, the code review, the checklist, the council.
 *
 * Pure: no clock, environment or I/O; the recorded run comes in as a value.
 */
import type { z } from 'zod';
import type { RunEvent } from '../schemas/events.js';
import { GATE_NAMES, TOOL_GATES, type GateName } from '../schemas/gates.js';
import { defaultKnobs, KNOB_NAMES, KNOBS, type Knobs } from '../schemas/knobs.js';
import type { RecordedRun, RecordedTree, RejudgedCheck, RejudgedRun, RejudgedVerdict } from '../schemas/rejudge.js';
import { tally } from './council.js';
import { gamingFindings } from './gaming.js';
import { gateDisposition } from './gates.js';
import { integrityFindings } from './integrity.js';
import { sha256Hex } from './sha256.js';

type Ev<K extends RunEvent['kind']> = Extract<RunEvent, { kind: K }>;

/** The evidence of one recorded check: what the journal said when it was judged. */
export interface CheckEvidence {
  iteration: number;
  trigger: string;
  filesChangedSinceStart: number;
  tests: 'pass' | 'fail' | 'inconclusive' | null;
  /** The latest result of each gate (tool gates and the checklist) recorded before the check. */
  gates: Map<string, Ev<'gate'>>;
  review: Ev<'review'> | null;
  council: Ev<'council_round'> | null;
  recorded: { verdict: 'approved' | 'refused'; by: string | null; reason: string };
}

/** The knobs a run had, read one by one (a knob its release did not have, or one no longer valid, takes today's default). */
export function recordedKnobs(raw: Record<string, unknown> | null): { knobs: Knobs; missing: string[] } {
  const knobs = defaultKnobs() as Record<string, unknown>;
  const missing: string[] = [];
  for (const k of KNOB_NAMES) {
    if (raw === null || !(k in raw)) {
      missing.push(k);
      continue;
    }
    const parsed = (KNOBS[k].schema as z.ZodType<unknown>).safeParse(raw[k]);
    if (parsed.success) knobs[k] = parsed.data;
    else missing.push(k);
  }
  return { knobs: knobs as Knobs, missing };
}

const isTool = (g: string): boolean => (TOOL_GATES as readonly string[]).includes(g);
const isGateName = (g: string): g is GateName => (GATE_NAMES as readonly string[]).includes(g);

/** The checks a journal shows, each with the evidence recorded before it (see the file comment). */
export function recordedChecks(events: readonly RunEvent[]): CheckEvidence[] {
  const out: CheckEvidence[] = [];
  const gates = new Map<string, Ev<'gate'>>();
  let review: Ev<'review'> | null = null;
  let last: Ev<'iteration'> | null = null;
  let claim: Ev<'iteration'> | null = null;
  const snapshot = (
    it: number,
    trigger: string,
    council: Ev<'council_round'> | null,
    recorded: CheckEvidence['recorded'],
  ): CheckEvidence => ({
    iteration: it,
    trigger,
    filesChangedSinceStart: last?.filesChangedSinceStart ?? 0,
    tests: last?.tests ?? null,
    gates: new Map(gates),
    review,
    council,
    recorded,
  });
  /** A claim that reached no council round: refused before it, when a result recorded at its iteration failed. */
  const closeClaim = (): void => {
    if (!claim) return;
    const it = claim.iteration;
    claim = null;
    const failed = [...gates.values()].find(
      (g) => g.iteration === it && g.verdict !== 'pass' && (g.verdict === 'fail' || g.gate === 'checklist'),
    );
    const reviewFailed = review && review.iteration === it && review.result !== 'pass' ? review : null;
    if (failed) out.push(snapshot(it, 'claim', null, { verdict: 'refused', by: failed.gate, reason: failed.reason }));
    else if (reviewFailed)
      out.push(snapshot(it, 'claim', null, { verdict: 'refused', by: 'code_review', reason: `code review ${reviewFailed.result}` }));
  };
  for (const e of events) {
    if (e.kind === 'iteration') {
      closeClaim();
      last = e;
      if (e.claimed) claim = e;
    } else if (e.kind === 'gate') gates.set(e.gate, e);
    else if (e.kind === 'review') review = e;
    else if (e.kind === 'council_round') {
      if (claim?.iteration === e.iteration) claim = null;
      const approved = e.result === 'APPROVED';
      const by = approved ? null : e.result === 'BLOCKED_BY_GATE' ? 'evidence' : 'council';
      out.push(
        snapshot(e.iteration, e.trigger, e, {
          verdict: approved ? 'approved' : 'refused',
          by,
          reason: `${e.result}: ${e.approve} of ${e.votes.length} approve, ${e.threshold} needed`,
        }),
      );
    } else if (e.kind === 'outcome') {
      if (e.status === 'completion_promise_fulfilled') {
        claim = null;
        out.push(snapshot(e.iteration, 'claim', null, { verdict: 'approved', by: null, reason: e.reason.slice(0, 500) }));
      }
    }
  }
  closeClaim();
  return out;
}

/** Finding ids a person waived (`vigil waive`), from the journal's messages. */
export function waivedIds(events: readonly RunEvent[]): Set<string> {
  const ids = new Set<string>();
  for (const e of events) {
    if (e.kind !== 'message' || e.name !== 'waive' || !e.accepted) continue;
    const m = /^waived (\S+?)(?::|$)/.exec(e.summary);
    if (m?.[1]) ids.add(m[1]);
  }
  return ids;
}

/** What today's integrity rules (test_mutation's and test_gaming's pure part) find in a recorded tree, waived findings left out. */
export function integrityOn(tree: RecordedTree, gate: 'test_mutation' | 'test_gaming', waived: ReadonlySet<string>): string[] {
  const found = gate === 'test_mutation' ? integrityFindings(tree.deltas) : gamingFindings(tree.deltas);
  return found
    .map((f) => ({ id: `${f.kind}-${sha256Hex(f.id).slice(0, 8)}`, message: f.message }))
    .filter((f) => !waived.has(f.id))
    .map((f) => `${f.id}: ${f.message}`.slice(0, 300));
}

type Judged = { verdict: RejudgedVerdict; by: string | null; reason: string; notes: string[] };

const refused = (by: string, reason: string, notes: string[]): Judged => ({ verdict: 'refused', by, reason: reason.slice(0, 500), notes });
const anew = (by: string, reason: string, notes: string[]): Judged => ({
  verdict: 'needs_new_judgement',
  by,
  reason: reason.slice(0, 500),
  notes,
});

/** The review's result under `k`, from its recorded reviewers and mergeability (reviewInconclusiveBlocks, reviewMergeabilityMin). */
function reviewNow(r: Ev<'review'>, k: Knobs): { pass: boolean; reason: string } {
  const blocking = r.reviewers.filter((x) => x.blocking);
  if (blocking.length > 0 || (r.result === 'blocked' && r.mergeability === 0))
    return { pass: false, reason: `blocked by ${blocking.map((x) => x.reviewer).join(', ') || 'a finding'}` };
  if (r.result === 'refused') return { pass: false, reason: 'the review was refused' };
  const silent = r.reviewers.filter((x) => x.verdict !== 'PASS' && x.verdict !== 'FAIL');
  if (r.reviewers.length === 0 || silent.length > 0 || r.result === 'inconclusive') {
    if (k.reviewInconclusiveBlocks)
      return { pass: false, reason: `inconclusive: no verdict from ${silent.map((x) => x.reviewer).join(', ') || 'any reviewer'}` };
    return { pass: true, reason: 'inconclusive, which does not block (reviewInconclusiveBlocks off)' };
  }
  if (k.reviewMergeabilityMin > 0 && r.mergeability < k.reviewMergeabilityMin)
    return { pass: false, reason: `mergeability ${r.mergeability} is below the minimum ${k.reviewMergeabilityMin}` };
  return { pass: true, reason: `passed, mergeability ${r.mergeability}` };
}

/** What the run had on (by its own knobs; a knob its release did not have counts as off). */
export interface RanThen {
  gates: ReadonlySet<string>;
  checklist: boolean;
}

const GATE_KNOB: Record<(typeof TOOL_GATES)[number], keyof Knobs> = {
  static_analysis: 'gateStaticAnalysis',
  secret_scan: 'gateSecretScan',
  build: 'buildCommand',
  tests: 'gateTests',
  mock_integrity: 'gateMockIntegrity',
  test_mutation: 'gateTestMutation',
  test_gaming: 'gateTestGaming',
  doc_coverage: 'gateDocCoverage',
  coverage: 'gateCoverage',
  app_check: 'appCheck',
  e2e: 'e2eCommand',
  perf: 'perfCommand',
};

export function ranThen(had: Knobs, missing: readonly string[]): RanThen {
  const known = (key: keyof Knobs): boolean => !missing.includes(key);
  return {
    gates: new Set(TOOL_GATES.filter((g) => known(GATE_KNOB[g]) && known('qualityGates') && gateDisposition(g, had) === 'blocking')),
    checklist: known('prdChecklist') && had.prdChecklist,
  };
}

/** One check under today's rules (see the file comment for the order). */
export function judgeCheck(c: CheckEvidence, k: Knobs, ran: RanThen, tree: RecordedTree | null, waived: ReadonlySet<string>): Judged {
  const notes: string[] = [];
  if (c.filesChangedSinceStart === 0) return refused('evidence', 'no file changed since the run started', notes);
  if (c.council?.result === 'BLOCKED_BY_GATE')
    return refused('evidence', 'the evidence gate blocked the council round (as recorded)', notes);
  // The tool gates, in their order.
  for (const g of TOOL_GATES) {
    if (gateDisposition(g, k) !== 'blocking') continue;
    const r = c.gates.get(g);
    const integrity = g === 'test_mutation' || g === 'test_gaming';
    if (r?.verdict === 'fail') return refused(g, `${g.replace(/_/g, ' ')}: ${r.reason}`, notes);
    if (integrity && tree && !tree.incomplete) {
      const found = integrityOn(tree, g, waived);
      const what = r ? 'today' : 'the run was recorded without this gate; it would have said';
      if (found.length > 0) return refused(g, `${g.replace(/_/g, ' ')} (${what}): ${found.length} finding(s): ${found.join('; ')}`, notes);
      if (!r) notes.push(`${g.replace(/_/g, ' ')} (not run then) would have passed: no finding in ${tree.deltas.length} changed file(s)`);
      continue;
    }
    // A gate the run had on that left no result said nothing against the check (it had nothing to judge).
    if (!r && ran.gates.has(g)) continue;
    // The app check without a command runs the file the run's start had, which no recording keeps: nothing to judge again.
    if (!r && g === 'app_check' && k.appCheck.trim() === '') {
      notes.push('app check (not run then): whether the repository kept a .vigil/app-check.* file at the start is not recorded');
      continue;
    }
    if (!r) {
      if (integrity)
        return anew(
          g,
          `the ${g.replace(/_/g, ' ')} gate never ran on this tree and the tree is ${tree ? 'too large to read' : 'not recorded'}`,
          notes,
        );
      return anew(g, `the ${g.replace(/_/g, ' ')} gate never ran on this tree: it needs a new gate run`, notes);
    }
  }
  for (const [g, r] of c.gates)
    if (isGateName(g) && isTool(g) && r.verdict === 'fail' && gateDisposition(g, k) !== 'blocking')
      notes.push(`${g.replace(/_/g, ' ')} failed then, and no longer blocks`);
  if (k.codeReview) {
    if (!c.review) return anew('code_review', 'no code review was recorded: it needs reviewers', notes);
    const r = reviewNow(c.review, k);
    if (!r.pass) return refused('code_review', `code review: ${r.reason}`, notes);
  }
  if (k.prdChecklist) {
    const r = c.gates.get('checklist');
    if (r && r.verdict !== 'pass') return refused('checklist', `checklist: ${r.reason}`, notes);
    if (!r && !ran.checklist) return anew('checklist', 'the run had no PRD checklist: it needs an extraction and a verifier', notes);
    if (!r) notes.push('no checklist result was recorded (the run had no checklist items)');
  }
  if (!k.councilEnabled) {
    if (c.tests === 'fail') return refused('evidence', 'the tests failed on this tree', notes);
    return { verdict: 'approved', by: null, reason: 'the evidence gate alone (no council)', notes };
  }
  if (!c.council) return anew('council', 'no council round was recorded for this check: it needs council members', notes);
  const votes = c.council.votes;
  if (votes.length !== k.councilSize)
    return anew('council', `the council had ${votes.length} member(s) and now has ${k.councilSize}: it needs new members' votes`, notes);
  const t = tally(
    votes.map((v) => v.approves),
    k.councilSize,
    k.councilThreshold,
  );
  const unanimous = t.approve === t.size && t.size >= 2;
  if (t.verdict !== 'COMPLETE') return refused('council', `${t.approve} of ${t.size} approve, ${t.threshold} needed`, notes);
  // The devil's advocate answered on a unanimous approval: its answer stands as recorded.
  if (unanimous && c.council.result !== 'APPROVED') return refused('council', "the devil's advocate refused a unanimous approval", notes);
  return { verdict: 'approved', by: null, reason: `${t.approve} of ${t.size} approve, ${t.threshold} needed`, notes };
}

/** The knobs that differ from the run's own: those `set` changes, and the completion rules' knobs the run did not have (today's defaults). */
function knobChanges(had: Knobs, now: Knobs, missing: readonly string[]): RejudgedRun['knobChanges'] {
  const h = had as Record<string, unknown>;
  const n = now as Record<string, unknown>;
  const completionKnob = (key: string): boolean => /^(gate|review|council|codeReview|prdChecklist|qualityGates|buildCommand)/.test(key);
  return KNOB_NAMES.filter(
    (key) => JSON.stringify(h[key]) !== JSON.stringify(n[key]) || (missing.includes(key) && completionKnob(key)),
  ).map((key) => ({ knob: key, recorded: missing.includes(key) ? null : h[key], now: n[key] }));
}

/** Without the run's knobs, its council as its rounds show it (their members and threshold) rather than today's defaults. */
function withRecordedCouncil(
  r: { knobs: Knobs; missing: string[] },
  unknown: boolean,
  events: readonly RunEvent[],
): { knobs: Knobs; missing: string[] } {
  const round = events.find((e): e is Ev<'council_round'> => e.kind === 'council_round');
  if (!unknown || !round || round.votes.length === 0) return r;
  return { ...r, knobs: { ...r.knobs, councilSize: round.votes.length, councilThreshold: round.threshold } };
}

/**
 * A recorded run re-judged: its checks under its own knobs overlaid with `set` (and today's
 * defaults for knobs it did not have). `set` holds valid knob values (the CLI parses them).
 */
export function rejudgeRun(run: RecordedRun, set: Partial<Knobs> = {}): RejudgedRun {
  const events = [...run.events].sort((a, b) => a.seq - b.seq).map((e) => e.event);
  const { knobs: had, missing } = withRecordedCouncil(recordedKnobs(run.knobs), run.knobs === null, events);
  const now = { ...had, ...set } as Knobs;
  const waived = waivedIds(events);
  const ran = ranThen(had, run.knobs === null ? KNOB_NAMES : missing);
  const checks: RejudgedCheck[] = recordedChecks(events).map((c) => {
    const tree = run.startTree ? (run.trees.find((t) => t.iteration === c.iteration) ?? null) : null;
    const j = judgeCheck(c, now, ran, tree, waived);
    const flipped = j.verdict !== 'needs_new_judgement' && j.verdict !== c.recorded.verdict;
    return {
      iteration: c.iteration,
      trigger: c.trigger,
      round: c.council?.round ?? null,
      recorded: { verdict: c.recorded.verdict, by: c.recorded.by, reason: c.recorded.reason.slice(0, 500) },
      now: { verdict: j.verdict, by: j.by, reason: j.reason },
      flipped,
      notes: j.notes.map((n) => n.slice(0, 500)),
    };
  });
  const outcome = events.filter((e): e is Ev<'outcome'> => e.kind === 'outcome').at(-1)?.status ?? null;
  return {
    workflowId: run.workflowId,
    outcome,
    checks,
    flips: checks.filter((c) => c.flipped).length,
    needsNewJudgement: checks.filter((c) => c.now.verdict === 'needs_new_judgement').length,
    knobChanges: knobChanges(had, now, run.knobs === null ? [] : missing),
  };
}
