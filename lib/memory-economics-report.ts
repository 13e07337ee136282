/**
 * The token economics the store keeps per agent call (`memory_traces.economics`, written by
 * lib/lasting-memory.ts), read back for `vigil memory economics`: a run's
 * calls, or the latest calls of the installation, with their totals (rules/memory-economics.ts).
 */
import { z } from 'zod';
import { economicsTotals, type CallEconomicsLine, type EconomicsTotals } from '../rules/memory-economics.js';
import type { Db } from './event-store.js';

/** What a trace's economics column holds once its call is over (the retrieval's side alone is skipped). */
const StoredEconomicsSchema = z.object({
  readTokens: z.number().nonnegative(),
  discoveryTokens: z.number().nonnegative(),
  ratio: z.number().nonnegative(),
  savingsPercent: z.number(),
  layer3Loads: z.number().int().nonnegative(),
  actions: z.array(z.string()).default([]),
  acted: z.array(z.string()).default([]),
});

export interface EconomicsReport {
  run: string | null;
  calls: CallEconomicsLine[];
  totals: EconomicsTotals;
}

/** The economics of `run`'s calls (null: the installation's latest calls), oldest first, at most `limit`; the store is migrated. */
export async function memoryEconomics(db: Db, o: { run: string | null; limit: number }): Promise<EconomicsReport> {
  const r = await db.query<{ workflow_id: string; iteration: number; economics: unknown }>(
    `select workflow_id, iteration, economics from memory_traces where economics ? 'readTokens' ${o.run !== null ? 'and workflow_id = $2' : ''}
     order by recorded_at desc, iteration desc limit $1`,
    o.run !== null ? [o.limit, o.run] : [o.limit],
  );
  const calls: CallEconomicsLine[] = [];
  for (const row of [...r.rows].reverse()) {
    const e = StoredEconomicsSchema.safeParse(row.economics);
    if (e.success) calls.push({ runId: row.workflow_id, iteration: row.iteration, ...e.data });
  }
  return { run: o.run, calls, totals: economicsTotals(calls) };
}
