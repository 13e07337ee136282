/**
 * What the operator console shows, as pure functions of a run's status snapshot (the `status`
 * query, schemas/status.ts) and, where the event store has the run, its report (cli/report.ts):
 * whether a run waits for a person and why (the inbox), and the series of its charts. No I/O here:
 * tests/unit/console-model.test.ts feeds them snapshots and reports.
 */
import { z } from 'zod';
import type { StatusSnapshot } from '../../schemas/status.js';
import type { PauseEvent } from '../report.js';
import { waitingForPeople } from '../report.js';
import { providerWaitText } from '../../rules/ui.js';
import { type RunReport } from '../../lib/run-report.js';

/** Why a run waits for a person: the kinds of pause Vigil makes itself, and long provider waits. */
export const WAIT_KINDS = [
  'escalation',
  'gate',
  'budget',
  'auth',
  'contract',
  'dead_letter',
  'repository',
  'rate_limit',
  'stream',
  'pull_request',
  'paused_by_vigil',
] as const;
export const WaitKindSchema = z.enum(WAIT_KINDS);
export type WaitKind = z.infer<typeof WaitKindSchema>;

export const WAIT_LABELS: Record<WaitKind, string> = {
  escalation: 'escalated to a person',
  gate: 'a quality gate keeps failing',
  budget: 'budget exhausted',
  auth: 'provider credentials refused',
  contract: 'agent contract error',
  dead_letter: 'the same failure keeps repeating (dead letter)',
  repository: 'repository unavailable',
  rate_limit: 'rate-limited for over an hour',
  stream: 'one of its parallel streams waits for a person',
  pull_request: 'its pull request waits for a person',
  paused_by_vigil: 'paused by Vigil',
};

export const WaitingSchema = z.object({
  kind: WaitKindSchema,
  /** The run's own words (the pause reason, or the provider wait). */
  why: z.string(),
  /** ISO time the wait began. */
  since: z.string(),
});
export type Waiting = z.infer<typeof WaitingSchema>;

/** A provider wait longer than this puts the run in the inbox. */
export const LONG_RATE_LIMIT_MS = 60 * 60 * 1000;

/**
 * Whether the run waits for a person: paused by Vigil (escalation, gate, budget, auth, contract
 * error, dead letter, repository, its pull request's branch in conflict with the moved base), or kept waiting by a provider's rate limit for over an hour.
 * A run one of whose parallel streams waits so is too. A pause a person made is not in the inbox
 * (they know); a run that is not running never is.
 */
export function waitingFor(
  s: Pick<StatusSnapshot, 'status' | 'pause' | 'escalations' | 'providerWait' | 'streams'>,
  now: Date,
): Waiting | null {
  if (s.status === 'finished') return null;
  const p = s.pause;
  if (p && p.by === 'vigil') {
    const r = p.reason;
    const last = s.escalations.at(-1);
    let kind: WaitKind = 'paused_by_vigil';
    if (/^escalation \(dead letter\)/.test(r) || (last?.reason === 'dead_letter' && /^escalation/.test(r))) kind = 'dead_letter';
    else if (/^escalation \(/.test(r)) kind = 'escalation';
    else if (/^budget exceeded/.test(r)) kind = 'budget';
    else if (/gate failed \d+ times in a row/.test(r)) kind = 'gate';
    else if (/^contract error/.test(r)) kind = 'contract';
    else if (/^authentication failed|Fix the credentials/.test(r)) kind = 'auth';
    else if (/^(repository unavailable|disk full)/i.test(r)) kind = 'repository';
    // The followed pull request's branch conflicts with its moved base (workflows/run/pr-update.ts): a person rebases it.
    else if (/^the base branch moved and .* no longer applies cleanly/s.test(r)) kind = 'pull_request';
    return { kind, why: r, since: p.at };
  }
  // A run split into parallel streams, one of which waits for a person (the stream is in the inbox too, on its own).
  const stream = (s.streams ?? []).find((t) => t.waiting);
  if (stream?.waiting)
    return { kind: 'stream', why: `stream ${stream.task} (${stream.childId ?? ''}): ${stream.waiting.reason}`, since: stream.waiting.at };
  const w = s.providerWait;
  if (w && Date.parse(w.until) - now.getTime() > LONG_RATE_LIMIT_MS) {
    return { kind: 'rate_limit', why: providerWaitText(w), since: now.toISOString() };
  }
  return null;
}

export const ChartDataSchema = z.object({
  /** Where the numbers come from: every iteration (the event store) or the latest ones (the status query). */
  source: z.enum(['event store', 'status query']),
  iterations: z.array(z.number().int()),
  /** Running total of what the iterations' agent calls cost, in USD (null: not reported). */
  costUsd: z.array(z.number().nullable()),
  /** The budget in USD (null: none). */
  budgetUsd: z.number().nullable(),
  /** Files differing from the run's start after each iteration. */
  filesChanged: z.array(z.number().nullable()),
  /** 1 when the tests passed on the iteration's tree, 0 when they failed, null when none ran. */
  testsPassing: z.array(z.number().nullable()),
  /** Time spent waiting for people, one bar per pause (minutes). */
  waits: z.object({ pauses: z.array(z.number().int()), minutes: z.array(z.number()) }),
});
export type ChartData = z.infer<typeof ChartDataSchema>;

const testsValue = (t: string | null | undefined): number | null => (t === 'pass' ? 1 : t === 'fail' ? 0 : null);
const round = (x: number, digits = 6): number => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * The charts from the status query: the iterations it keeps (the latest 20), their costs as a
 * running total, files changed since the start, the tests of each checkpoint, and the pause going
 * on now.
 */
export function chartsFromSnapshot(s: StatusSnapshot, now: Date): ChartData {
  const its = s.recentIterations;
  const tests = new Map<number, string | null>((s.checkpoints?.list ?? []).map((c) => [c.iteration, c.tests]));
  if (s.lastTests) tests.set(s.lastTests.iteration, s.lastTests.verdict ?? (s.lastTests.passed ? 'pass' : 'fail'));
  // The iterations the query no longer keeps cost something too: start the running total from them.
  const shown = its.reduce((a, r) => a + (r.costUsd ?? 0), 0);
  let total = (its[0]?.iteration ?? 1) > 1 ? Math.max(0, s.spend.usd - shown) : 0;
  const costUsd = its.map((r) => {
    if (r.costUsd === null || r.costUsd === undefined) return s.spend.calls > 0 ? round(total) : null;
    total += r.costUsd;
    return round(total);
  });
  const pausedMs = s.pause ? Math.max(0, now.getTime() - Date.parse(s.pause.at)) : 0;
  return {
    source: 'status query',
    iterations: its.map((r) => r.iteration),
    costUsd,
    budgetUsd: s.budgetUsd > 0 ? s.budgetUsd : null,
    filesChanged: its.map((r) => r.filesChangedSinceStart),
    testsPassing: its.map((r) => testsValue(tests.get(r.iteration))),
    waits: s.pause ? { pauses: [1], minutes: [round(pausedMs / 60_000, 2)] } : { pauses: [], minutes: [] },
  };
}

/** One pause's length, from the run's events in order (as the report counts them). */
export function pauseLengths(events: readonly PauseEvent[], now: Date): number[] {
  const lengths: number[] = [];
  let open: PauseEvent[] = [];
  for (const e of events) {
    open.push(e);
    const ended = (e.event.kind === 'message' && e.event.name === 'resume' && e.event.accepted) || e.event.kind === 'outcome';
    if (ended) {
      const w = waitingForPeople(open, now);
      if (w.pauses > 0) lengths.push(w.ms);
      open = [];
    }
  }
  const w = waitingForPeople(open, now);
  if (w.pauses > 0) lengths.push(w.ms);
  return lengths;
}

/**
 * The charts from the event store: every iteration of the run, the cost as the run's spend events
 * say after each iteration (else the iterations' own costs), the tests of each iteration's tree,
 * files changed (from the status query where the store has no count), and every pause.
 */
export function chartsFromReport(
  r: RunReport,
  spendByIteration: ReadonlyMap<number, number>,
  filesByIteration: ReadonlyMap<number, number>,
  pauses: readonly PauseEvent[],
  now: Date,
  budgetUsd: number | null,
): ChartData {
  let total = 0;
  const costUsd = r.timeline.map((t) => {
    total += t.costUsd ?? 0;
    const spent = spendByIteration.get(t.iteration);
    return round(spent ?? total);
  });
  const lengths = pauseLengths(pauses, now);
  const budget = budgetUsd ?? r.budgetUsd;
  return {
    source: 'event store',
    iterations: r.timeline.map((t) => t.iteration),
    costUsd,
    budgetUsd: budget !== null && budget > 0 ? budget : null,
    filesChanged: r.timeline.map((t) => filesByIteration.get(t.iteration) ?? null),
    testsPassing: r.timeline.map((t) => testsValue(t.tests)),
    waits: { pauses: lengths.map((_, i) => i + 1), minutes: lengths.map((ms) => round(ms / 60_000, 2)) },
  };
}

/** `3m 20s`, `2h 5m`, `4d 1h`: how long ago (or how long) for the pages. */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}
