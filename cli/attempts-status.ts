/**
 * What `vigil status` prints of a run with attempts (workflows/attempts-workflow.ts). Light: types
 * only, for the CLI's quick path.
 */
import type { AttemptsStatus } from '../schemas/attempts.js';

/** `vigil status` of a run with attempts: its phase, one line per attempt, the winner and why. */
export function attemptsLines(s: AttemptsStatus): string[] {
  const lines = [`run ${s.runId} (${s.attempts.length} attempts): ${s.phase}`];
  for (const a of s.attempts) {
    const facts =
      a.state === 'ended'
        ? `${a.status ?? '?'}` +
          (a.iterations !== null ? `, ${a.iterations} iteration(s)` : '') +
          (a.findings !== null ? `, ${a.findings} review finding(s)` : '') +
          (a.spendUsd !== null ? `, $${a.spendUsd.toFixed(2)}` : '')
        : 'running';
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
  if (s.outcome) lines.push(`  outcome   : ${s.outcome.status} (exit ${s.outcome.exitCode}): ${s.outcome.reason}`);
  return lines;
}
