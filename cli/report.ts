/**
 * Reports from the event store (Postgres: DATABASE_URL, or the local one): across runs (`vigil report`), one run's
 * timeline of iterations and decisions (`vigil report <id>`), and a run's history as JSON lines or
 * Markdown (`vigil history <id> --format jsonl|md`).
 *
 * The report functions take a connected `pg` pool or client and read the views of
 * lib/event-store.ts; they do not print. The command functions connect, print text or JSON,
 * and return the exit code; no store (no DATABASE_URL and no local store) or an unreachable one is
 * a CliError with exit code 4 that says what to set.
 *
 * Definitions:
 *   - done: outcome council_approved, completion_promise_fulfilled, already_satisfied or merged; iterations to done count the
 *     distinct iteration numbers of done runs.
 *   - a failed iteration: exit code other than 0, or its tests failed.
 *   - approval rate: approved council rounds over all rounds (rounds blocked by a gate included);
 *     the vote approval rate: approving votes over all votes.
 *   - a tier climb: a tier change to a stronger tier (fast < development < planning; LOW < MEDIUM < HIGH).
 *   - spend: spend events are the run's running totals, so a run cost what its latest one says
 *     (without any, the sum of its iterations' costs).
 *   - time waiting for people: from an accepted `pause` message or an escalation that paused the
 *     run, to the next accepted `resume` (or the outcome; a run still paused counts until now).
 */
import path from 'node:path';
import type { Db } from '../lib/event-store.js';
import type { z } from 'zod';
import type {
  AcrossRunsReportSchema,
  RunCountsSchema,
  RunReportSchema,
  RunSummarySchema,
  TimelineEntrySchema,
  TimelineIterationSchema,
} from '../schemas/cli-output-reports.js';
import type { RunEvent } from '../schemas/events.js';
import { CliError, EXIT } from './connection.js';
import { tierLines, tierMetrics } from './report-tiers.js';
import { pauseEvents, waitingForPeople } from './report-waiting.js';
import { withEventStore } from './event-store-client.js';

export { waitingForPeople, type PauseEvent, type Waiting } from './report-waiting.js';
import { neutraliseLine } from './terminal-text.js';
import { voteLine } from '../workflows/ui.js';
import { pullRequestLines, pullRequestReport } from './report-pr.js';

export const DONE_STATUSES: readonly string[] = ['council_approved', 'completion_promise_fulfilled', 'already_satisfied', 'merged'];

const usd = (x: number): number => Math.round(x * 1e6) / 1e6;
const rate = (n: number, d: number): number | null => (d > 0 ? Math.round((n / d) * 1e4) / 1e4 : null);
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : typeof v === 'string' ? v : null);
const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

// ---------------------------------------------------------------------------------------------
// Across runs

/** What both reports count for a run, one run of the report across runs, and that report (their schemas: schemas/cli-output-reports.ts). */
export type RunCounts = z.infer<typeof RunCountsSchema>;
export type RunSummary = z.infer<typeof RunSummarySchema>;
export type AcrossRunsReport = z.infer<typeof AcrossRunsReportSchema>;

export interface AcrossRunsOptions {
  /** Runs started at or after this time. */
  since?: Date | string;
  /** Runs on this repository (the absolute path the run recorded). */
  repo?: string;
  /** "Now" for runs still paused (default: the current time). */
  now?: Date;
}

interface RunsViewRow {
  workflow_id: string;
  started_at: Date | null;
  finished_at: Date | null;
  prd_title: string | null;
  repo: string | null;
  provider: string | null;
  outcome: string | null;
  exit_code: number | null;
  iterations: number;
  failed_iterations: number;
  council_rounds: number;
  approved_rounds: number;
  escalations: number;
  tier_climbs: number;
  spend_usd: string | null;
  unpriced_calls: number;
}

function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function countBy<T>(items: T[], key: (t: T) => string): Map<string, { item: T; count: number }> {
  const m = new Map<string, { item: T; count: number }>();
  for (const it of items) {
    const k = key(it);
    const cur = m.get(k);
    if (cur) cur.count += 1;
    else m.set(k, { item: it, count: 1 });
  }
  return m;
}

export async function reportAcrossRuns(db: Db, opts: AcrossRunsOptions = {}): Promise<AcrossRunsReport> {
  const now = opts.now ?? new Date();
  const since = opts.since === undefined ? null : new Date(opts.since);
  if (since && Number.isNaN(since.getTime())) throw new Error(`not a time: ${String(opts.since)}`);
  const repo = opts.repo ?? null;

  const runs = (
    await db.query<RunsViewRow>(
      `select workflow_id, started_at, finished_at, prd_title, repo, provider, outcome, exit_code, iterations, failed_iterations,
              council_rounds, approved_rounds, escalations, tier_climbs, spend_usd, unpriced_calls
       from vigil_runs
       where ($1::timestamptz is null or started_at >= $1) and ($2::text is null or repo = $2)
       order by started_at nulls last, workflow_id`,
      [since, repo],
    )
  ).rows;
  const ids = runs.map((r) => r.workflow_id);

  const rounds = (
    await db.query<{ result: string; n: number }>(
      `select upper(result) as result, count(*)::int as n from vigil_council_rounds where workflow_id = any($1::text[]) group by 1`,
      [ids],
    )
  ).rows;
  const votes = (
    await db.query<{ votes: number; approve: number }>(
      `select count(*)::int as votes, (count(*) filter (where approves))::int as approve from vigil_votes where workflow_id = any($1::text[])`,
      [ids],
    )
  ).rows[0];
  const escalations = (
    await db.query<{ workflow_id: string; reason: string }>(
      `select workflow_id, reason from vigil_escalations where workflow_id = any($1::text[]) order by workflow_id, seq`,
      [ids],
    )
  ).rows;
  const climbs = (
    await db.query<{ workflow_id: string; from_tier: string; to_tier: string }>(
      `select workflow_id, from_tier, to_tier from vigil_tier_changes where climb and workflow_id = any($1::text[]) order by workflow_id, seq`,
      [ids],
    )
  ).rows;
  const pauses = await pauseEvents(db, ids);

  const perRun: RunSummary[] = runs.map((r) => {
    const w = waitingForPeople(pauses.get(r.workflow_id) ?? [], now);
    return {
      workflowId: r.workflow_id,
      startedAt: iso(r.started_at),
      finishedAt: iso(r.finished_at),
      prdTitle: r.prd_title,
      repo: r.repo,
      provider: r.provider,
      outcome: r.outcome,
      exitCode: r.exit_code,
      iterations: r.iterations,
      failedIterations: r.failed_iterations,
      councilRounds: r.council_rounds,
      approvedRounds: r.approved_rounds,
      escalations: r.escalations,
      tierClimbs: r.tier_climbs,
      spendUsd: usd(num(r.spend_usd)),
      unpricedCalls: num(r.unpriced_calls),
      waitingMs: w.ms,
      pauses: w.pauses,
      pausedNow: w.pausedNow,
    };
  });

  const n = perRun.length;
  const done = perRun.filter((r) => r.outcome !== null && DONE_STATUSES.includes(r.outcome));
  const doneIterations = done.map((r) => r.iterations);
  const totalUsd = perRun.reduce((a, r) => a + r.spendUsd, 0);
  const doneUsd = done.reduce((a, r) => a + r.spendUsd, 0);
  const roundsBy = new Map(rounds.map((r) => [r.result, r.n]));
  const allRounds = rounds.reduce((a, r) => a + r.n, 0);
  const approved = roundsBy.get('APPROVED') ?? 0;
  const totalWait = perRun.reduce((a, r) => a + r.waitingMs, 0);

  return {
    since: since ? since.toISOString() : null,
    repo,
    runs: n,
    outcomes: [...countBy(perRun, (r) => `${r.outcome ?? 'running'}\u0000${r.exitCode ?? ''}`).values()]
      .map(({ item, count }) => ({ status: item.outcome ?? 'running', exitCode: item.exitCode, runs: count }))
      .sort((a, b) => b.runs - a.runs || a.status.localeCompare(b.status)),
    exitCodes: [...countBy(perRun, (r) => String(r.exitCode)).values()]
      .map(({ item, count }) => ({ exitCode: item.exitCode, runs: count }))
      .sort((a, b) => (a.exitCode ?? Infinity) - (b.exitCode ?? Infinity)),
    iterationsToDone: {
      runs: done.length,
      mean: doneIterations.length ? Math.round((doneIterations.reduce((a, b) => a + b, 0) / doneIterations.length) * 100) / 100 : null,
      median: median(doneIterations),
      min: doneIterations.length ? Math.min(...doneIterations) : null,
      max: doneIterations.length ? Math.max(...doneIterations) : null,
    },
    council: {
      rounds: allRounds,
      approved,
      rejected: roundsBy.get('REJECTED') ?? 0,
      blocked: roundsBy.get('BLOCKED_BY_GATE') ?? 0,
      approvalRate: rate(approved, allRounds),
      votes: votes?.votes ?? 0,
      approveVotes: votes?.approve ?? 0,
      voteApprovalRate: rate(votes?.approve ?? 0, votes?.votes ?? 0),
    },
    escalations: {
      total: escalations.length,
      perRun: rate(escalations.length, n),
      byReason: [...countBy(escalations, (e) => e.reason).values()]
        .map(({ item, count }) => ({ reason: item.reason, count }))
        .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
      runs: [...countBy(escalations, (e) => e.workflow_id).values()].map(({ item, count }) => ({
        workflowId: item.workflow_id,
        count,
        reasons: escalations.filter((e) => e.workflow_id === item.workflow_id).map((e) => e.reason),
      })),
    },
    tierClimbs: {
      total: climbs.length,
      runs: new Set(climbs.map((c) => c.workflow_id)).size,
      byChange: [...countBy(climbs, (c) => `${c.from_tier}\u0000${c.to_tier}`).values()]
        .map(({ item, count }) => ({ from: item.from_tier, to: item.to_tier, count }))
        .sort((a, b) => b.count - a.count),
    },
    tiers: await tierMetrics(
      db,
      ids,
      climbs,
      done.map((r) => r.workflowId),
    ),
    cost: {
      totalUsd: usd(totalUsd),
      perRunUsd: n ? usd(totalUsd / n) : null,
      doneRuns: done.length,
      perDoneRunUsd: done.length ? usd(doneUsd / done.length) : null,
      allSpendPerDoneRunUsd: done.length ? usd(totalUsd / done.length) : null,
      unpricedCalls: runs.reduce((a, r) => a + num(r.unpriced_calls), 0),
    },
    waitingForPeople: {
      totalMs: totalWait,
      pauses: perRun.reduce((a, r) => a + r.pauses, 0),
      perRunMs: n ? Math.round(totalWait / n) : null,
      pausedNow: perRun.filter((r) => r.pausedNow).map((r) => r.workflowId),
    },
    perRun,
  };
}

// ---------------------------------------------------------------------------------------------
// One run

/** A run's timeline and report (`vigil report <id>`; their schemas: schemas/cli-output-reports.ts). */
export type TimelineEntry = z.infer<typeof TimelineEntrySchema>;
export type TimelineIteration = z.infer<typeof TimelineIterationSchema>;
export type RunReport = z.infer<typeof RunReportSchema>;

interface EventRow {
  run_id: string;
  seq: number;
  at: Date | null;
  kind: string;
  data: unknown;
}

async function eventsOf(db: Db, workflowId: string): Promise<EventRow[]> {
  return (
    await db.query<EventRow>('select run_id, seq, at, kind, data from run_events where workflow_id = $1 order by seq, at, run_id', [
      workflowId,
    ])
  ).rows;
}

const money = (x: number): string => `${usd(x)} USD`;

/** A run's spend: the priced calls' sum, the calls no one priced apart; calls that all went unpriced never read as 0 USD. */
export function spendWords(spendUsd: number, unpriced: number, calls: number | null): string {
  const allUnpriced = unpriced > 0 && (calls !== null ? unpriced >= calls : spendUsd === 0);
  if (allUnpriced) return `unpriced (${unpriced} call(s), none reported its cost)`;
  return `${money(spendUsd)}${unpriced ? ` + ${unpriced} unpriced call(s)` : ''}`;
}
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}h ${m}m ${s % 60}s` : `${m}m ${s % 60}s`;
}

/** One line about an event, for timelines and history. */
export function describeEvent(e: RunEvent): string {
  switch (e.kind) {
    case 'run_started':
      return (
        `run started: "${e.prdTitle}" in ${e.repoPath} with ${e.provider}, up to ${e.maxIterations} iterations, budget ` +
        `${money(e.budgetUsd)}, ${e.autonomyMode}`
      );
    case 'iteration':
      return [
        `iteration ${e.iteration}`,
        e.phase,
        e.tier ? `tier ${e.tier}` : null,
        `exit ${e.exitCode}`,
        `tests ${e.tests ?? '—'}`,
        seconds(e.durationMs),
        e.changed ? 'changed' : 'no change',
        e.claimed ? 'claimed completion' : null,
        e.attempts > 1 ? `${e.attempts} attempts` : null,
        e.costUsd !== null ? money(e.costUsd) : null,
      ]
        .filter((x): x is string => Boolean(x))
        .join(' · ');
    case 'council_round':
      return `council round ${e.round} (${e.trigger}): ${e.result}, ${e.approve} of ${e.approve + e.reject} approve, ${e.threshold} needed`;
    case 'gate':
      return `gate ${e.gate}: ${e.verdict}${e.findings ? ` (${e.findings} finding(s))` : ''}${e.reason ? ` — ${e.reason}` : ''}`;
    case 'review':
      return (
        `review ${e.round}: ${e.result}, mergeability ${e.mergeability}, ${e.reviewers.length} reviewer(s), ` +
        `${e.reviewers.filter((r) => r.blocking).length} blocking`
      );
    case 'escalation':
      return `escalation (${e.reason})${e.paused ? ', paused for a person' : ''}: ${e.detail}`;
    case 'notification':
      return `notification ${e.event}: ${e.delivered} delivered, ${e.failed} failed`;
    case 'message':
      return `${e.name} by ${e.by}${e.accepted ? '' : ' (refused)'}${e.summary ? `: ${e.summary}` : ''}`;
    case 'tier_change':
      return `tier ${e.from} → ${e.to}: ${e.trigger}`;
    case 'spend':
      return e.calls > 0 && e.unpricedCalls >= e.calls
        ? `spend unpriced: ${e.calls} call(s), none reported its cost (budget ${money(e.budgetUsd)})`
        : `spend ${money(e.usd)} of ${money(e.budgetUsd)} (${e.calls} call(s)${e.unpricedCalls ? `, ${e.unpricedCalls} unpriced` : ''})`;
    case 'outcome':
      return `${e.status} (exit ${e.exitCode}) at iteration ${e.iteration}: ${e.reason}`;
  }
}

/** Each member's vote and reason in a journalled council round, a line each. */
function councilDetails(e: Extract<RunEvent, { kind: 'council_round' }>): string[] {
  return e.votes.map((v) => `council round ${e.round}, ${voteLine(v)}`);
}

const TIER_RANK: Record<string, number> = { fast: 0, low: 0, development: 1, medium: 1, planning: 2, high: 2 };
const isClimb = (from: string, to: string): boolean => {
  const a = TIER_RANK[from.toLowerCase()];
  const b = TIER_RANK[to.toLowerCase()];
  return a !== undefined && b !== undefined && b > a;
};

/** The memory judge's call as the run ended (table memory_judgements), or null: not asked, or a store from before it. */
async function memoryJudgementOf(db: Db, workflowId: string): Promise<RunReport['memoryJudgement'] | null> {
  try {
    const r = await db.query<{ calls: number; usd: number; lessons: number; merges: number; problem: string | null }>(
      'select calls, usd, lessons, merges, problem from memory_judgements where workflow_id = $1',
      [workflowId],
    );
    const j = r.rows[0];
    return j ? { calls: j.calls, usd: usd(j.usd), lessons: j.lessons, merges: j.merges, problem: j.problem } : null;
  } catch {
    return null;
  }
}

/** A run's timeline of iterations and decisions; null when the store has no event of it. */
export async function reportRun(db: Db, workflowId: string, opts: { now?: Date } = {}): Promise<RunReport | null> {
  const rows = await eventsOf(db, workflowId);
  if (!rows.length) return null;
  const valid = rows.filter((r) => r.kind !== 'invalid').map((r) => ({ ...r, event: r.data as RunEvent }));
  const entry = (r: (typeof valid)[number]): TimelineEntry => ({
    seq: r.seq,
    at: iso(r.at),
    kind: r.kind,
    iteration: 'iteration' in r.event ? r.event.iteration : null,
    text: oneLine(describeEvent(r.event)),
    ...(r.event.kind === 'council_round' && r.event.votes.length ? { details: councilDetails(r.event) } : {}),
  });

  const start = valid.find((r) => r.event.kind === 'run_started')?.event as Extract<RunEvent, { kind: 'run_started' }> | undefined;
  const outcomeRow = [...valid].reverse().find((r) => r.event.kind === 'outcome');
  const outcome = outcomeRow?.event as Extract<RunEvent, { kind: 'outcome' }> | undefined;
  const lastSpend = [...valid].reverse().find((r) => r.event.kind === 'spend')?.event as Extract<RunEvent, { kind: 'spend' }> | undefined;

  const byIteration = new Map<number, TimelineIteration>();
  for (const r of valid) {
    if (r.event.kind !== 'iteration') continue;
    const e = r.event;
    byIteration.set(e.iteration, {
      iteration: e.iteration,
      seq: r.seq,
      at: iso(r.at),
      phase: e.phase,
      tier: e.tier,
      exitCode: e.exitCode,
      tests: e.tests,
      changed: e.changed,
      claimed: e.claimed,
      durationMs: e.durationMs,
      costUsd: e.costUsd,
      provider: e.provider,
      model: e.model,
      failed: e.exitCode !== 0 || e.tests === 'fail',
      text: oneLine(describeEvent(e)),
      decisions: [],
    });
  }
  const notices: TimelineEntry[] = [];
  for (const r of valid) {
    const k = r.event.kind;
    if (k === 'iteration' || k === 'spend') continue;
    const it = k !== 'outcome' && 'iteration' in r.event ? byIteration.get(r.event.iteration) : undefined;
    if (it) it.decisions.push(entry(r));
    else notices.push(entry(r));
  }
  const timeline = [...byIteration.values()].sort((a, b) => a.iteration - b.iteration);
  const rounds = valid.filter((r) => r.event.kind === 'council_round').map((r) => r.event as Extract<RunEvent, { kind: 'council_round' }>);
  const w = waitingForPeople(
    valid.filter((r) => r.at !== null).map((r) => ({ at: r.at as Date, event: r.event })),
    opts.now ?? new Date(),
  );
  const iterationCost = timeline.reduce((a, t) => a + (t.costUsd ?? 0), 0);
  const judgement = await memoryJudgementOf(db, workflowId);
  const pr = pullRequestReport(valid.map((r) => ({ at: iso(r.at), event: r.event })));

  return {
    workflowId,
    runIds: [...new Set(rows.map((r) => r.run_id))],
    prdTitle: start?.prdTitle ?? null,
    prdPath: start?.prdPath ?? null,
    repo: start?.repoPath ?? null,
    provider: start?.provider ?? null,
    autonomyMode: start?.autonomyMode ?? null,
    maxIterations: start?.maxIterations ?? null,
    budgetUsd: start?.budgetUsd ?? null,
    startedAt: iso(valid.find((r) => r.event.kind === 'run_started')?.at ?? rows[0]?.at ?? null),
    finishedAt: outcomeRow ? iso(outcomeRow.at) : null,
    outcome: outcome
      ? {
          status: outcome.status,
          exitCode: outcome.exitCode,
          reason: outcome.reason,
          iteration: outcome.iteration,
          ...(outcome.evidence ? { evidence: outcome.evidence } : {}),
        }
      : null,
    iterations: timeline.length,
    failedIterations: timeline.filter((t) => t.failed).length,
    councilRounds: rounds.length,
    approvedRounds: rounds.filter((r) => r.result.toUpperCase() === 'APPROVED').length,
    escalations: valid.filter((r) => r.event.kind === 'escalation').length,
    tierClimbs: valid.filter((r) => r.event.kind === 'tier_change' && isClimb(r.event.from, r.event.to)).length,
    spendUsd: usd(lastSpend ? lastSpend.usd : iterationCost),
    calls: lastSpend ? lastSpend.calls : null,
    unpricedCalls: lastSpend?.unpricedCalls ?? 0,
    orchestration:
      lastSpend?.orchestrationCalls !== undefined
        ? { calls: lastSpend.orchestrationCalls, usd: usd(lastSpend.orchestrationUsd ?? 0) }
        : null,
    ...(judgement ? { memoryJudgement: judgement } : {}),
    waitingMs: w.ms,
    pauses: w.pauses,
    pausedNow: w.pausedNow,
    ...(pr ? { pullRequest: pr } : {}),
    timeline,
    notices,
  };
}

// ---------------------------------------------------------------------------------------------
// History export

export type HistoryFormat = 'jsonl' | 'md';
export const HISTORY_FORMATS: readonly HistoryFormat[] = ['jsonl', 'md'];

function iterationLine(t: TimelineIteration): string {
  return t.decisions.length ? `${t.text} — ${t.decisions.map((d) => d.text).join('; ')}` : t.text;
}

function summaryLines(r: RunReport): string[] {
  const o = r.outcome;
  return [
    `repository: ${r.repo ?? 'unknown'}`,
    `provider: ${r.provider ?? 'unknown'} · mode ${r.autonomyMode ?? 'unknown'} · up to ${r.maxIterations ?? '?'} iterations · ` +
      `budget ${r.budgetUsd !== null ? money(r.budgetUsd) : 'unknown'}`,
    `started: ${r.startedAt ?? 'unknown'}${r.finishedAt ? ` · finished: ${r.finishedAt}` : ''}`,
    `outcome: ${o ? `${o.status} (exit ${o.exitCode}) at iteration ${o.iteration} — ${oneLine(o.reason)}` : 'none yet (running)'}`,
    // What done rested on, as the run said it (`evidence: baseline tests 2 of 2 passed …`).
    ...(o?.evidence ? [oneLine(o.evidence)] : []),
    `iterations: ${r.iterations} (${r.failedIterations} failed) · council rounds: ` +
      `${r.councilRounds} (${r.approvedRounds} approved) · escalations: ${r.escalations} · tier climbs: ${r.tierClimbs} · spend: ` +
      spendWords(r.spendUsd, r.unpricedCalls, r.calls) +
      (r.orchestration
        ? ` (orchestration ${r.orchestration.calls} call(s)` +
          `${r.spendUsd > 0 ? `, ${money(r.orchestration.usd)}, ${Math.round((r.orchestration.usd / r.spendUsd) * 100)}%` : ''})`
        : ''),
    `waiting for people: ${duration(r.waitingMs)} over ${r.pauses} pause(s)${r.pausedNow ? ' (paused now)' : ''}`,
    ...(r.memoryJudgement ? [memoryJudgementLine(r.memoryJudgement)] : []),
  ];
}

/** What the memory judge cost and did as the run ended (beside the run's spend, not in it). */
export function memoryJudgementLine(j: NonNullable<RunReport['memoryJudgement']>): string {
  const did = j.problem ? `changed nothing: ${oneLine(j.problem).slice(0, 200)}` : `${j.lessons} lesson(s), ${j.merges} merge(s)`;
  return `memory judgement (after the run, not in its spend): ${j.calls} call(s), ${money(j.usd)} — ${did}`;
}

/** Markdown: a summary, one line per iteration with its decisions, then the other events. */
export function runMarkdown(r: RunReport): string {
  const lines = [
    `# Run \`${r.workflowId}\`${r.prdTitle ? `: ${oneLine(r.prdTitle)}` : ''}`,
    '',
    ...summaryLines(r).map((l) => `- ${l}`),
    ...(r.pullRequest ? ['', '## Pull request', '', ...pullRequestLines(r.pullRequest).map((l) => `- ${oneLine(l)}`)] : []),
    '',
    '## Iterations',
    '',
  ];
  const details = (entries: readonly TimelineEntry[]): string[] => entries.flatMap((d) => d.details ?? []).map((l) => `  - ${l}`);
  for (const t of r.timeline) lines.push(`- ${iterationLine(t)}`, ...details(t.decisions));
  if (!r.timeline.length) lines.push('(none yet)');
  lines.push('', '## Messages and notices', '');
  for (const n of r.notices) lines.push(`- ${n.at ?? '?'} ${n.text}`, ...details([n]));
  if (!r.notices.length) lines.push('(none)');
  return `${lines.join('\n')}\n`;
}

/** Plain text for the terminal. */
export function runText(r: RunReport): string {
  const lines = [
    `run ${r.workflowId}${r.prdTitle ? `: ${oneLine(r.prdTitle)}` : ''}`,
    ...summaryLines(r).map((l) => `  ${l}`),
    // Comments' authors and the run's replies are other people's text: shown terminal-safe.
    ...(r.pullRequest ? ['pull request:', ...pullRequestLines(r.pullRequest).map((l) => neutraliseLine(`  ${l}`))] : []),
    'timeline:',
  ];
  const under = (entries: readonly TimelineEntry[]): string[] =>
    entries.flatMap((d) => d.details ?? []).map((l) => neutraliseLine(`    ${l}`));
  const all = [
    ...r.timeline.map((t) => ({ seq: t.seq, lines: [`  ${iterationLine(t)}`, ...under(t.decisions)] })),
    ...r.notices.map((n) => ({ seq: n.seq, lines: [`  ${n.at ?? '?'} ${n.text}`, ...under([n])] })),
  ].sort((a, b) => a.seq - b.seq);
  for (const x of all) lines.push(...x.lines);
  return `${lines.join('\n')}\n`;
}

/**
 * A run's history: `jsonl` is one event envelope per line ({seq, runId, at, event}, in seq order;
 * an envelope stored aside as invalid carries its raw event and `invalid`); `md` is runMarkdown.
 * Null when the store has no event of the run.
 */
export async function exportHistory(db: Db, workflowId: string, format: HistoryFormat, opts: { now?: Date } = {}): Promise<string | null> {
  if (format === 'md') {
    const r = await reportRun(db, workflowId, opts);
    return r ? runMarkdown(r) : null;
  }
  const rows = await eventsOf(db, workflowId);
  if (!rows.length) return null;
  return rows
    .map((r) => {
      if (r.kind === 'invalid') {
        const d = r.data as { raw?: unknown; error?: string };
        return JSON.stringify({ seq: r.seq, runId: r.run_id, at: iso(r.at), event: d.raw ?? null, invalid: d.error ?? 'invalid' });
      }
      return JSON.stringify({ seq: r.seq, runId: r.run_id, at: iso(r.at), event: r.data });
    })
    .map((l) => `${l}\n`)
    .join('');
}

// ---------------------------------------------------------------------------------------------
// CLI commands (the commander lines live in cli/commands/ and cli/report-commands.ts)

export interface ReportFlags {
  /** `vigil report <id>`: one run's timeline instead of the report across runs. */
  id?: string;
  /** An ISO date or time, or a duration back from now: 30m, 12h, 7d, 2w. */
  since?: string;
  /** A repository path (resolved to an absolute path). */
  repo?: string;
  json?: boolean;
}

export interface HistoryFlags {
  format?: string;
}

export interface CommandIo {
  out: (text: string) => void;
  env: NodeJS.ProcessEnv;
  now: Date;
}

const defaultIo = (): CommandIo => ({ out: (t) => process.stdout.write(t), env: process.env, now: new Date() });

/** `--since`: an ISO date/time, or `<n>m|h|d|w` back from `now`. */
export function parseSince(s: string, now: Date = new Date()): Date {
  const m = /^(\d+)\s*([mhdw])$/i.exec(s.trim());
  if (m) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[(m[2] as string).toLowerCase() as 'm' | 'h' | 'd' | 'w'];
    return new Date(now.getTime() - Number(m[1]) * unit);
  }
  const t = Date.parse(s);
  if (!Number.isFinite(t))
    throw new CliError(`--since ${s}: not a date (2026-01-31, 2026-01-31T12:00Z) or a duration (30m, 12h, 7d, 2w)`, EXIT.usage);
  return new Date(t);
}

// Kept here for activities/deliver.ts, whose one exemption to import the CLI is this module.
export { withEventStore };

function acrossRunsText(r: AcrossRunsReport): string {
  const pct = (x: number | null): string => (x === null ? '—' : `${Math.round(x * 100)}%`);
  const scope = [r.since ? `since ${r.since}` : null, r.repo ? `repository ${r.repo}` : null].filter(Boolean).join(', ');
  const lines = [`runs: ${r.runs}${scope ? ` (${scope})` : ''}`];
  if (!r.runs) return `${lines.join('\n')}\n`;
  lines.push(
    `outcomes: ${r.outcomes.map((o) => `${o.status} ${o.runs}${o.exitCode !== null ? ` (exit ${o.exitCode})` : ''}`).join(' · ')}`,
  );
  lines.push(`exit codes: ${r.exitCodes.map((e) => `${e.exitCode ?? 'none yet'}: ${e.runs}`).join(' · ')}`);
  const d = r.iterationsToDone;
  lines.push(
    d.runs
      ? `iterations to done: mean ${d.mean}, median ${d.median} (min ${d.min}, max ${d.max}) over ${d.runs} done run(s)`
      : 'iterations to done: no run done',
  );
  const c = r.council;
  lines.push(
    `council: ${c.rounds} round(s), ${c.approved} approved, ${c.rejected} rejected, ${c.blocked} blocked by a gate; approval ` +
      `rate ${pct(c.approvalRate)}; votes ${c.approveVotes} of ${c.votes} approve (${pct(c.voteApprovalRate)})`,
  );
  const e = r.escalations;
  lines.push(
    `escalations: ${e.total} (${e.perRun ?? 0} per run)${e.byReason.length ? ` — ${e.byReason.map((x) => `${x.reason} ${x.count}`).join(', ')}` : ''}`,
  );
  const t = r.tierClimbs;
  lines.push(
    `tier climbs: ${t.total} in ${t.runs} run(s)${t.byChange.length ? ` — ${t.byChange.map((x) => `${x.from} → ${x.to} ${x.count}`).join(', ')}` : ''}`,
  );
  lines.push(...tierLines(r.tiers));
  const k = r.cost;
  lines.push(
    `cost: ${money(k.totalUsd)} in all, ${money(k.perRunUsd ?? 0)} per run; ${k.doneRuns} done ` +
      `run(s)${k.doneRuns ? `: ${money(k.perDoneRunUsd ?? 0)} each, ${money(k.allSpendPerDoneRunUsd ?? 0)} of all spend per done run` : ''}` +
      `${k.unpricedCalls ? `; ${k.unpricedCalls} unpriced call(s) not counted` : ''}`,
  );
  const w = r.waitingForPeople;
  lines.push(
    `waiting for people: ${duration(w.totalMs)} over ${w.pauses} pause(s) (${duration(w.perRunMs ?? 0)} per ` +
      `run)${w.pausedNow.length ? `; paused now: ${w.pausedNow.join(', ')}` : ''}`,
  );
  lines.push('', 'runs:');
  for (const p of r.perRun) {
    lines.push(
      `  ${p.workflowId} · ${p.startedAt ?? '?'} · ${p.repo ?? '?'} · ` +
        `${p.outcome ?? 'running'}${p.exitCode !== null ? ` (exit ${p.exitCode})` : ''} · ${p.iterations} iteration(s), ` +
        `${p.failedIterations} failed · council ${p.approvedRounds}/${p.councilRounds} · ${p.escalations} escalation(s) · ` +
        `${p.tierClimbs} climb(s) · ${spendWords(p.spendUsd, p.unpricedCalls, null)} · waited ${duration(p.waitingMs)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `vigil report [--since D] [--repo R] [--json]` and `vigil report <id> [--json]`.
 * Exit codes: 0, 2 bad --since, 3 no such run in the store, 4 no store or unreachable.
 */
export async function reportCommand(opts: ReportFlags, io: Partial<CommandIo> = {}): Promise<number> {
  const { out, env, now } = { ...defaultIo(), ...io };
  if (opts.id) {
    const id = opts.id;
    const r = await withEventStore(env, (db) => reportRun(db, id, { now }));
    if (!r) throw new CliError(`the event store has no events of run ${id}`, EXIT.noSuchRun);
    out(opts.json ? `${JSON.stringify(r, null, 2)}\n` : runText(r));
    return 0;
  }
  const since = opts.since ? parseSince(opts.since, now) : undefined;
  const repo = opts.repo ? path.resolve(opts.repo) : undefined;
  const r = await withEventStore(env, (db) => reportAcrossRuns(db, { ...(since ? { since } : {}), ...(repo ? { repo } : {}), now }));
  out(opts.json ? `${JSON.stringify(r, null, 2)}\n` : acrossRunsText(r));
  return 0;
}

/** `vigil history <id> --format jsonl|md` (default jsonl). Exit codes as reportCommand. */
export async function historyCommand(id: string, opts: HistoryFlags, io: Partial<CommandIo> = {}): Promise<number> {
  const { out, env, now } = { ...defaultIo(), ...io };
  const format = (opts.format ?? 'jsonl') as HistoryFormat;
  if (!HISTORY_FORMATS.includes(format)) throw new CliError(`--format ${opts.format}: use jsonl or md`, EXIT.usage);
  const text = await withEventStore(env, (db) => exportHistory(db, id, format, { now }));
  if (text === null) throw new CliError(`the event store has no events of run ${id}`, EXIT.noSuchRun);
  out(text);
  return 0;
}
