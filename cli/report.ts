/**
 * Reports from the event store (Postgres: DATABASE_URL, or the local one): across runs (`vigil report`), one run's
 * timeline of iterations and decisions (`vigil report <id>`), and a run's history as JSON lines or
 * Markdown (`vigil history <id> --format jsonl|md`). One run's report is lib/run-report.ts (the
 * delivery's pull request body reads it too); the report across runs and the commands are here.
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
import type { AcrossRunsReportSchema, RunCountsSchema, RunSummarySchema } from '../schemas/cli-output-reports.js';

import { CliError, EXIT } from './connection.js';
import { tierLines, tierMetrics } from '../lib/report-tiers.js';
import { pauseEvents, waitingForPeople } from '../lib/report-waiting.js';
import { withEventStore } from './event-store-client.js';

export { waitingForPeople, type PauseEvent, type Waiting } from '../lib/report-waiting.js';

import {
  DONE_STATUSES,
  duration,
  exportHistory,
  HISTORY_FORMATS,
  iso,
  money,
  num,
  reportRun,
  runText,
  spendWords,
  usd,
  type HistoryFormat,
} from '../lib/run-report.js';

const rate = (n: number, d: number): number | null => (d > 0 ? Math.round((n / d) * 1e4) / 1e4 : null);

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
