/**
 * The comparison round of a run with attempts (docs/attempts.md): what a council member's answer
 * picks, and which approved attempt the council's picks choose. The majority of the members
 * picks; a pick of an attempt that was not approved (or of no attempt) counts for nothing; the
 * pick rule (decisions/attempts.ts) breaks a tie and decides when the council gave no usable
 * majority. Pure: the members' answers and the attempts' facts come in as values.
 */
import { attemptApproved, pickAttempt, type AttemptFacts } from './attempts.js';

/** A member's answer, read: the attempt it picks (null: none readable) and its one-line reason. */
export interface ParsedPick {
  attempt: number | null;
  reason: string | null;
}

/**
 * The pick in a member's answer: its last `PICK: <n>` line (the answer's end is its conclusion)
 * and its last `REASON:` line. Anything else (`PICK: 2 or 3`, `PICK: two`) picks nothing.
 */
export function parsePick(text: string): ParsedPick {
  let attempt: number | null = null;
  let reason: string | null = null;
  for (const raw of text.split(/\r?\n|\\n/)) {
    const line = raw.trim().replace(/^[*_`>#\s-]+/, '');
    const pick = /^PICK:\s*([0-9]+)\s*[.*_`]*$/i.exec(line);
    if (pick) attempt = Number(pick[1]);
    const why = /^REASON:\s*(.+)$/i.exec(line);
    if (why) reason = (why[1] as string).trim().slice(0, 300);
  }
  return { attempt, reason };
}

/** One member's pick as the round recorded it. */
export interface MemberPick {
  member: number;
  role: string;
  /** The attempt it picked (null: its call was lost, or its answer picked nothing readable). */
  attempt: number | null;
  reason: string | null;
}

export interface ComparisonDecision {
  /** The winner (null only when no attempt was approved). */
  winner: AttemptFacts | null;
  /** Who chose: the council's majority, or the pick rule (a tie, no usable majority, no council). */
  decidedBy: 'council' | 'rule';
  /** Members split between approved attempts, none with a majority: a supervised run asks a person. */
  split: boolean;
  /** Valid picks per approved attempt, in attempt order. */
  counts: { n: number; votes: number }[];
  /** Members whose pick counted for nothing: an attempt that was not approved, none, or a lost call. */
  ignored: number[];
  /** One line for status and the outcome. */
  why: string;
}

/**
 * The council's choice among the attempts: an approved attempt picked by more than half of the
 * members asked wins. Otherwise the pick rule decides, among the most-picked attempts when the
 * members split between approved ones (then `split`), among all approved ones when no approved
 * attempt was picked.
 */
export function decideComparison(attempts: readonly AttemptFacts[], picks: readonly MemberPick[]): ComparisonDecision {
  const approved = attempts.filter(attemptApproved);
  const valid = (p: MemberPick): boolean => p.attempt !== null && approved.some((a) => a.n === p.attempt);
  const counts = approved.map((a) => ({ n: a.n, votes: picks.filter((p) => valid(p) && p.attempt === a.n).length }));
  const ignored = picks.filter((p) => !valid(p)).map((p) => p.member);
  const top = Math.max(0, ...counts.map((c) => c.votes));
  const leaders = counts.filter((c) => c.votes === top && top > 0).map((c) => c.n);
  const said =
    `${counts.map((c) => `attempt ${c.n}: ${c.votes}`).join(', ')} of ` +
    `${picks.length} member(s` +
    `)${ignored.length ? `; ${ignored.length} pick(s) ignored (not an approved attempt, none, or lost)` : ''}`;
  if (leaders.length === 1 && top * 2 > picks.length) {
    const winner = approved.find((a) => a.n === leaders[0]) as AttemptFacts;
    return { winner, decidedBy: 'council', split: false, counts, ignored, why: `the council picked attempt ${winner.n} (${said})` };
  }
  const split = counts.filter((c) => c.votes > 0).length >= 2;
  const pool = split ? approved.filter((a) => leaders.includes(a.n)) : approved;
  const winner = pickAttempt(pool);
  const how = split
    ? `the council split (${said}); the pick rule broke the tie`
    : `no majority of the council (${said}); the pick rule decided`;
  return {
    winner,
    decidedBy: 'rule',
    split,
    counts,
    ignored,
    why: winner ? `${how}: attempt ${winner.n}, fewest review findings (${winner.findings}), then iterations (${winner.iterations})` : how,
  };
}

/** The prompt of comparison member `member` (council role `role`): the pack to read, the attempts to choose from, the answer owed. */
export function comparisonPrompt(o: {
  member: number;
  role: string;
  prdPath: string;
  packPath: string;
  approved: readonly number[];
}): string {
  return [
    `You are member ${o.member} (${o.role}) of the council comparing approved attempts at one PRD.`,
    `Each attempt below ran the same PRD (${o.prdPath}) independently and was approved by its own completion check.`,
    `Read the comparison pack ${o.packPath}: for each approved attempt, its diff (and the file holding it), its evidence line and its review findings.`,
    'Choose the one attempt whose change best does what the PRD asks, with the fewest and least serious findings and the clearest, smallest change.',
    'You may read files, never change any.',
    '',
    `Answer with a line \`PICK: <n>\`, n one of ${o.approved.join(', ')}, and a line \`REASON: <one line>\`.`,
    '',
  ].join('\n');
}

/** Why a person's pick is refused (null: it is taken): the run is not waiting for one, or the attempt is not one it may pick. */
export function pickRefusal(
  o: { runId: string; waiting: boolean; k: number; pickFrom: readonly number[] },
  attempt: unknown,
): string | null {
  if (!o.waiting) return `run ${o.runId} is not waiting for a pick: a person picks only where the council split in a supervised run`;
  if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1 || attempt > o.k)
    return `${String(attempt)} is not an attempt of run ${o.runId}: pick one of ${o.pickFrom.join(', ')}`;
  if (!o.pickFrom.includes(attempt)) return `attempt ${attempt} of run ${o.runId} was not approved: pick one of ${o.pickFrom.join(', ')}`;
  return null;
}
