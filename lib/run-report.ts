/**
 * One run's report from the event store: its timeline of iterations and decisions, read from the
 * run's journalled events (`vigil report <id>`, the pull request's body at delivery), rendered as
 * text or Markdown, and its history as JSON lines or Markdown (`vigil history <id>`). The
 * functions take a connected `pg` pool or client and read the views of lib/event-store.ts; they do
 * not print. The report across runs and the commands are cli/report.ts.
 *
 * Definitions (shared with the report across runs):
 *   - a tier climb: a tier change to a stronger tier (fast < development < planning; LOW < MEDIUM < HIGH).
 *   - spend: spend events are the run's running totals, so a run cost what its latest one says
 *     (without any, the sum of its iterations' costs).
 *   - time waiting for people: from an accepted `pause` message or an escalation that paused the
 *     run, to the next accepted `resume` (or the outcome; a run still paused counts until now).
 */
import type { z } from 'zod';
import type { Db } from './event-store.js';
import type { RunReportSchema, TimelineEntrySchema, TimelineIterationSchema } from '../schemas/cli-output-reports.js';
import type { RunEvent } from '../schemas/events.js';

import { waitingForPeople } from './report-waiting.js';
import { neutraliseLine } from './terminal-text.js';
import { voteLine } from '../rules/ui.js';
import { pullRequestLines, pullRequestReport } from './report-pr.js';

export const DONE_STATUSES: readonly string[] = ['council_approved', 'completion_promise_fulfilled', 'already_satisfied', 'merged'];

export const usd = (x: number): number => Math.round(x * 1e6) / 1e6;
export const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
export const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : typeof v === 'string' ? v : null);
export const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

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

export const money = (x: number): string => `${usd(x)} USD`;

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
