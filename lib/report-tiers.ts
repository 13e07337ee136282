/**
 * The model tiers across runs, for `vigil report` (the original's tier metrics): per tier, how
 * many iterations ran at it, how many failed and what they cost; how often the ladder climbed per
 * iteration (the escalation rate); and how many done runs finished without ever climbing (first-tier
 * success). From the event store's views (lib/run-events-sql.ts).
 */
import type { z } from 'zod';
import type { Db } from '../lib/event-store.js';
import type { TierMetricsSchema } from '../schemas/cli-output-reports.js';

export type TierMetrics = z.infer<typeof TierMetricsSchema>;

const usd = (x: number): number => Math.round(x * 1e6) / 1e6;
const rate = (n: number, d: number): number | null => (d > 0 ? Math.round((n / d) * 1e4) / 1e4 : null);
/** The tiers from cheapest to dearest, then any other name a run recorded. */
const ORDER = ['fast', 'development', 'planning'];

export async function tierMetrics(
  db: Db,
  workflowIds: string[],
  climbs: readonly { workflow_id: string }[],
  doneIds: readonly string[],
): Promise<TierMetrics> {
  const rows = (
    await db.query<{ tier: string | null; iterations: number; failed: number; cost: string | null; priced: number }>(
      `select tier, count(*)::int as iterations, (count(*) filter (where failed))::int as failed,
              sum(cost_usd) as cost, count(cost_usd)::int as priced
       from vigil_iterations where workflow_id = any($1::text[]) group by tier`,
      [workflowIds],
    )
  ).rows;
  const rank = (t: string): number => (ORDER.includes(t) ? ORDER.indexOf(t) : ORDER.length);
  const byTier = rows
    .map((r) => {
      const cost = usd(Number(r.cost ?? 0));
      return {
        tier: r.tier ?? 'unknown',
        iterations: r.iterations,
        failed: r.failed,
        successRate: rate(r.iterations - r.failed, r.iterations),
        costUsd: cost,
        perIterationUsd: r.priced ? usd(cost / r.priced) : null,
      };
    })
    .sort((a, b) => rank(a.tier) - rank(b.tier) || a.tier.localeCompare(b.tier));
  const iterations = byTier.reduce((a, t) => a + t.iterations, 0);
  const climbed = new Set(climbs.map((c) => c.workflow_id));
  const withoutClimb = doneIds.filter((id) => !climbed.has(id)).length;
  return {
    byTier,
    escalationRate: rate(climbs.length, iterations),
    firstTierSuccess: { doneRuns: doneIds.length, withoutClimb, rate: rate(withoutClimb, doneIds.length) },
  };
}

/** The report's text lines for the tiers. */
export function tierLines(t: TierMetrics): string[] {
  const pct = (x: number | null): string => (x === null ? '—' : `${Math.round(x * 100)}%`);
  if (!t.byTier.length) return ['tiers: no iteration recorded'];
  const per = t.byTier.map(
    (x) =>
      `${x.tier} ${x.iterations} (${pct(x.successRate)} ok, ${x.costUsd} USD` +
      `${x.perIterationUsd !== null ? `, ${x.perIterationUsd} per priced iteration` : ''})`,
  );
  const first = t.firstTierSuccess;
  return [
    `tiers: ${per.join(' · ')}`,
    `tier escalation rate: ${pct(t.escalationRate)} of iterations climbed; first-tier success: ` +
      (first.doneRuns ? `${first.withoutClimb} of ${first.doneRuns} done run(s) never climbed (${pct(first.rate)})` : 'no run done'),
  ];
}
