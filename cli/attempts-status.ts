/**
 * What `vigil status` prints of a run with attempts (workflows/attempts-workflow.ts). Light: types
 * only, for the CLI's quick path.
 */
import type { AttemptsStatus } from '../schemas/attempts.js';
import type { StatusSnapshot } from '../schemas/status.js';

/** A running attempt's own state, from its run's `status` query (null: its worker did not answer). */
export interface LiveAttempt {
  status: string;
  iteration: number;
  spendUsd: number;
  budgetUsd: number;
  pausedBy: string | null;
}

/** How a running attempt is said: its own state when its run answered, else "running". */
function liveFacts(live: LiveAttempt | null | undefined): string {
  if (!live) return 'running';
  const budget = live.budgetUsd > 0 ? ` of $${live.budgetUsd.toFixed(2)}` : '';
  return `${live.status}${live.pausedBy ? ` (by ${live.pausedBy})` : ''}, iteration ${live.iteration}, $${live.spendUsd.toFixed(2)}${budget}`;
}

/**
 * `vigil status` of a run with attempts: its phase, one line per attempt (a running one with its own
 * state when `live` has it: paused, stopping, its iteration and spend), the winner and why.
 */
export function attemptsLines(s: AttemptsStatus, live: ReadonlyMap<number, LiveAttempt | null> = new Map()): string[] {
  const state = s.stopping ? `, stopping (by ${s.stopping.by})` : s.paused ? `, paused (by ${s.paused.by})` : '';
  const lines = [`run ${s.runId} (${s.attempts.length} attempts): ${s.phase}${state}`];
  for (const a of s.attempts) {
    const facts =
      a.state === 'ended'
        ? `${a.status ?? '?'}` +
          (a.iterations !== null ? `, ${a.iterations} iteration(s)` : '') +
          (a.findings !== null ? `, ${a.findings} review finding(s)` : '') +
          (a.spendUsd !== null ? `, $${a.spendUsd.toFixed(2)}` : '')
        : liveFacts(live.get(a.n));
    const agent = `${a.provider}${a.model ? ` ${a.model}` : ''}`;
    lines.push(`  attempt ${a.n}${s.winner === a.n ? ' (winner)' : ''}: ${facts} · ${agent} · ${a.workflowId}`);
  }
  if (s.comparison) {
    const by = { council: 'the council', rule: 'the pick rule', person: 'a person' }[s.comparison.decidedBy];
    const picks = s.comparison.picks.map((p) => `member ${p.member}: ${p.attempt ?? 'none'}`).join(', ');
    lines.push(
      `  compared  : decided by ${by}${s.comparison.split ? ' (the council split)' : ''}; picks: ${picks}; pack ${s.comparison.packPath}`,
    );
  }
  if (s.why) lines.push(`  picked    : ${s.why}`);
  if (s.branch) lines.push(`  delivered : ${s.branch}`);
  if (s.pullRequest) lines.push(`  pull req. : ${s.pullRequest.note}`);
  if (s.budgetUsd !== undefined) lines.push(`  budget    : $${s.budgetUsd.toFixed(2)} for all the attempts`);
  if (s.outcome) lines.push(`  outcome   : ${s.outcome.status} (exit ${s.outcome.exitCode}): ${s.outcome.reason}`);
  return lines;
}

/** Each running attempt's own state, asked of its run (`status` query) in parallel; null where no worker answered. */
export async function liveAttempts(
  s: AttemptsStatus,
  ask: (workflowId: string) => Promise<unknown>,
): Promise<Map<number, LiveAttempt | null>> {
  const rows = s.attempts.filter((a) => a.state === 'running');
  const answers = await Promise.all(
    rows.map(async (a): Promise<[number, LiveAttempt | null]> => {
      const snap = (await ask(a.workflowId).catch(() => null)) as StatusSnapshot | null;
      if (!snap) return [a.n, null];
      return [
        a.n,
        {
          status: snap.status,
          iteration: snap.iteration,
          spendUsd: snap.spend.usd,
          budgetUsd: snap.budgetUsd,
          pausedBy: snap.pause?.by ?? null,
        },
      ];
    }),
  );
  return new Map(answers);
}
