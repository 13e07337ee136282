/**
 * The run-level gauges of workers/metrics.ts, derived at scrape time from Temporal rather than
 * from the workflow: the open `vigilRun` workflows (visibility), and each one's `status` query
 * (schemas/status.ts, as `vigil status` asks it), read with the worker's connection and payload
 * codec. A refresh is cached for a few seconds and shared by concurrent scrapes, so scraping every
 * few seconds costs one list and one query per open run per cache period.
 */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { RUN_STATUSES } from '../schemas/status.js';
import { SA_STATUS } from '../schemas/search-attributes.js';

/** The fields of a status snapshot the gauges read (a newer or older snapshot may have more). */
export const StatusFactsSchema = z.object({
  status: z.enum(RUN_STATUSES),
  pause: z.object({ by: z.string(), at: z.string() }).nullable(),
  spend: z.object({ usd: z.number() }),
});
export type StatusFacts = z.infer<typeof StatusFactsSchema>;

/** One open run as read: its status facts, or only its VigilStatus search attribute when the query did not answer. */
export interface OpenRun {
  workflowId: string;
  facts: StatusFacts | null;
  searchStatus: string | null;
}

export interface WaitingRun {
  workflowId: string;
  /** `vigil`: Vigil paused it (escalation, gate, budget, credentials); `person`: someone paused it. */
  pausedBy: 'vigil' | 'person';
  seconds: number;
}

export interface RunsSummary {
  byStatus: Record<string, number>;
  waiting: WaitingRun[];
  spendUsd: number;
  unreadable: number;
}

/** What the gauges say of these runs at `nowMs` (pure; unit-tested). */
export function summarizeRuns(runs: readonly OpenRun[], nowMs: number): RunsSummary {
  const byStatus: Record<string, number> = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0]));
  byStatus.unknown = 0;
  const waiting: WaitingRun[] = [];
  let spendUsd = 0;
  let unreadable = 0;
  for (const r of runs) {
    if (!r.facts) {
      unreadable++;
      const s = r.searchStatus && (RUN_STATUSES as readonly string[]).includes(r.searchStatus) ? r.searchStatus : 'unknown';
      byStatus[s] = (byStatus[s] ?? 0) + 1;
      continue;
    }
    byStatus[r.facts.status] = (byStatus[r.facts.status] ?? 0) + 1;
    spendUsd += r.facts.spend.usd;
    // Waiting for a person: paused (not `pausing`, whose agent call still runs) with a pause on record.
    if (r.facts.status === 'paused' && r.facts.pause) {
      const at = Date.parse(r.facts.pause.at);
      const seconds = Number.isFinite(at) ? Math.max(0, (nowMs - at) / 1000) : 0;
      waiting.push({ workflowId: r.workflowId, pausedBy: r.facts.pause.by === 'vigil' ? 'vigil' : 'person', seconds });
    }
  }
  waiting.sort((a, b) => b.seconds - a.seconds);
  return { byStatus, waiting, spendUsd, unreadable };
}

export interface RunGaugeOptions {
  /** How long a refresh is reused (default 10 s). */
  cacheMs?: number;
  /** Per status query (default 5 s). */
  queryTimeoutMs?: number;
  /** Open runs read at most (default 1,000; the rest are not counted). */
  maxRuns?: number;
  /** Status queries in flight at once (default 8). */
  concurrency?: number;
  now?: () => number;
}

/** Reads the open runs through `client` (its namespace and codec). */
export async function readOpenRuns(
  client: Client,
  opts: Required<Pick<RunGaugeOptions, 'queryTimeoutMs' | 'maxRuns' | 'concurrency'>>,
): Promise<OpenRun[]> {
  const listed: { workflowId: string; searchStatus: string | null }[] = [];
  for await (const wf of client.workflow.list({ query: "WorkflowType = 'vigilRun' AND ExecutionStatus = 'Running'" })) {
    listed.push({ workflowId: wf.workflowId, searchStatus: wf.typedSearchAttributes.get(SA_STATUS) ?? null });
    if (listed.length >= opts.maxRuns) break;
  }
  const out: OpenRun[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < listed.length) {
      const run = listed[next++] as (typeof listed)[number];
      let facts: StatusFacts | null = null;
      try {
        const answer = await client.withAbortSignal(AbortSignal.timeout(opts.queryTimeoutMs), () =>
          client.workflow.getHandle(run.workflowId).query('status'),
        );
        const parsed = StatusFactsSchema.safeParse(answer);
        facts = parsed.success ? parsed.data : null;
      } catch {
        facts = null; // no worker answered in time, or the run just closed: counted by its search attribute
      }
      out.push({ ...run, facts });
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, listed.length) }, lane));
  return out;
}

/** A cached source of the run summary for VigilMetrics.setRunsSource; a failed refresh reads as null (no run gauges) until the next. */
export function runGaugeSource(client: Client, opts: RunGaugeOptions = {}): () => Promise<RunsSummary | null> {
  const cacheMs = opts.cacheMs ?? 10_000;
  const now = opts.now ?? Date.now;
  const read = { queryTimeoutMs: opts.queryTimeoutMs ?? 5000, maxRuns: opts.maxRuns ?? 1000, concurrency: opts.concurrency ?? 8 };
  let cached: { at: number; value: Promise<RunsSummary | null> } | null = null;
  return () => {
    const t = now();
    if (cached && t - cached.at < cacheMs) return cached.value;
    const value = readOpenRuns(client, read).then(
      (runs) => summarizeRuns(runs, now()),
      () => null,
    );
    cached = { at: t, value };
    return value;
  };
}
