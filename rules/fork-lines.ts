/**
 * What a run that forked (knob `onStuck=fork`, rules/fork.ts) says of its fork: in its outcome's
 * reason and in `vigil status`. Pure, and free of zod (the CLI's quick path prints status).
 */
import type { ForkAttempt } from '../schemas/fork.js';

/** Where a fork stands, in a few words. */
export function forkLine(a: Pick<ForkAttempt, 'n' | 'provider' | 'model' | 'tier' | 'status' | 'iterations'>): string {
  const ran = `${a.provider}${a.model ? ` ${a.model}` : ''}, tier ${a.tier}`;
  return `fork ${a.n} (${ran}) ${a.status ?? 'running'}${a.iterations !== null ? ` after ${a.iterations} iteration(s)` : ''}`;
}

export const fromWhat = (p: { iteration: number }): string =>
  p.iteration > 0 ? `the checkpoint of iteration ${p.iteration}` : 'the run start';

/** The outcome's reason once the forks are over: which fork continued the run and from where, or that none was approved. */
export function forkOutcomeReason(
  f: { stuck: string; stuckAt: number; from: { iteration: number }; winner: number | null },
  attempts: readonly Pick<ForkAttempt, 'n' | 'provider' | 'model' | 'tier' | 'status' | 'iterations' | 'reason'>[],
): string {
  const head = `stuck at iteration ${f.stuckAt} (${f.stuck}); forked ${attempts.length} attempt(s) from ${fromWhat(f.from)}`;
  const won = f.winner === null ? undefined : attempts.find((a) => a.n === f.winner);
  if (won) return `${head}: ${forkLine(won)} continued the run, its tree delivered as the run's`.slice(0, 2000);
  return `${head}; none was approved: ${attempts.map(forkLine).join('; ')}`.slice(0, 2000);
}

/** `vigil status`: the fork of a stuck run, one line for where it forked and one per fork (the winner marked). */
export function forkStatusLines(
  f: { stuckAt: number; from: { iteration: number }; phase: string; winner: number | null },
  attempts: readonly Pick<ForkAttempt, 'n' | 'workflowId' | 'provider' | 'model' | 'tier' | 'status' | 'iterations'>[],
): string[] {
  const state = f.winner !== null ? `fork ${f.winner} continued the run` : f.phase === 'ended' ? 'none was approved' : 'running';
  return [
    `stuck at iteration ${f.stuckAt}: forked ${attempts.length} attempt(s) from ${fromWhat(f.from)}; ${state}`,
    ...attempts.map((a) => `${forkLine(a)}${a.n === f.winner ? ' (winner)' : ''}: vigil status ${a.workflowId}`),
  ];
}
