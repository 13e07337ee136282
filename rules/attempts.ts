/**
 * Attempts from the start (`vigil start --attempts K`): what each attempt is given and which
 * approved attempt wins. Pure: the attempts' facts come in as values.
 */

/** An attempt as the pick rule sees it, once its run has ended. */
export interface AttemptFacts {
  /** 1..K. */
  n: number;
  /** Its run's outcome status (`council_approved`, `force_stopped`, ...). */
  status: string;
  /** Review findings of its last review, every severity, waived ones included. */
  findings: number;
  iterations: number;
  spendUsd: number;
}

/** Outcomes that count as an approved attempt: the run ended done. */
const APPROVED = new Set(['council_approved', 'completion_promise_fulfilled', 'already_satisfied']);

export const attemptApproved = (a: Pick<AttemptFacts, 'status'>): boolean => APPROVED.has(a.status);

/**
 * The winner among the approved attempts: fewest review findings (a finding a person waived still
 * counts: it was found), then fewest iterations, then lowest spend, then the lowest number. Null
 * when none was approved.
 */
export function pickAttempt(attempts: readonly AttemptFacts[]): AttemptFacts | null {
  const approved = attempts.filter(attemptApproved);
  if (!approved.length) return null;
  return [...approved].sort(
    (a, b) => a.findings - b.findings || a.iterations - b.iterations || a.spendUsd - b.spendUsd || a.n - b.n,
  )[0] as AttemptFacts;
}

/** Why the winner won, in one line for status and the outcome. */
export function pickReason(attempts: readonly AttemptFacts[], winner: AttemptFacts): string {
  const approved = attempts.filter(attemptApproved);
  if (approved.length === 1) return `attempt ${winner.n} was the only one approved`;
  return (
    `attempt ${winner.n} of ${approved.length} approved: fewest review findings (${winner.findings}), then iterations ` +
    `(${winner.iterations}), then spend ($${winner.spendUsd.toFixed(2)})`
  );
}

/** Among attempts none of which was approved, the best outcome to report: the one that got furthest (most iterations), the lowest number on a tie. */
export function bestUnapproved(attempts: readonly AttemptFacts[]): AttemptFacts | null {
  if (!attempts.length) return null;
  return [...attempts].sort((a, b) => b.iterations - a.iterations || a.n - b.n)[0] as AttemptFacts;
}

/** Each attempt's budget: the run's budget shared equally (0: no budget stays no budget), so all of them together never exceed it. */
export function attemptBudget(budgetUsd: number, k: number): number {
  if (budgetUsd <= 0) return 0;
  return Math.floor((budgetUsd / k) * 100) / 100;
}

/**
 * A live attempt's budget after the run's budget is set to `budgetUsd` (`vigil budget <run>`): what
 * the ended attempts did not spend, shared equally by the live ones (rounded down to the cent), so
 * that all the attempts together never exceed it; at least a cent once nothing is left (each live
 * attempt then pauses on its budget). 0 stays no budget.
 */
export function liveAttemptBudget(budgetUsd: number, endedSpendUsd: number, live: number): number {
  if (budgetUsd <= 0) return 0;
  const share = Math.floor(((budgetUsd - endedSpendUsd) / Math.max(1, live)) * 100) / 100;
  return Math.max(0.01, share);
}

/** The n-th (1-based) value of a cycled list; undefined when the list is empty. */
export function cycled<T>(list: readonly T[], n: number): T | undefined {
  return list.length ? list[(n - 1) % list.length] : undefined;
}

/** The id of attempt n of a run. */
export const attemptId = (runId: string, n: number): string => `${runId}-attempt-${n}`;

/**
 * The attempt number a run id and its repository say, when the run is attempt n of a run with attempts (its worktree
 * `.vigil/worktrees/<run>/attempt-<n>`); null otherwise.
 */
export function attemptOf(runId: string, repoPath: string): number | null {
  const m = /^(.+)-attempt-([1-9][0-9]?)$/.exec(runId);
  if (!m) return null;
  const tail = repoPath.replace(/\/+$/, '').split('/').slice(-4);
  return tail[0] === '.vigil' && tail[1] === 'worktrees' && tail[3] === `attempt-${m[2]}` ? Number(m[2]) : null;
}

/** What `vigil start --attempts K` says before starting. */
export function multiplierMessage(k: number, budgetUsd: number): string {
  const budget =
    budgetUsd > 0
      ? `the budget covers all of them: each attempt gets $${attemptBudget(budgetUsd, k).toFixed(2)} of $${budgetUsd.toFixed(2)}`
      : 'no budget is set (budgetUsd=0): nothing caps their spend';
  return `${k} attempts: up to ${k}× the spend of one run; ${budget}.`;
}

/** What a pull request of a run with attempts says (deliver=pr): the attempts, the winner and why. */
export function attemptsPullRequestBody(s: {
  runId: string;
  prdTitle: string;
  winner: number | null;
  why: string | null;
  attempts: readonly {
    n: number;
    status: string | null;
    iterations: number | null;
    findings: number | null;
    spendUsd: number | null;
    provider: string;
    model: string;
  }[];
}): string {
  const rows = s.attempts.map(
    (a) =>
      `| ${a.n}${a.n === s.winner ? ' (winner)' : ''} | ${a.status ?? '?'} | ${a.iterations ?? '?'} | ${a.findings ?? '?'} ` +
      `| $${(a.spendUsd ?? 0).toFixed(2)} | ${a.provider}${a.model ? ` ${a.model}` : ''} |`,
  );
  return [
    `# ${s.prdTitle}`,
    '',
    `Vigil run \`${s.runId}\` ran ${s.attempts.length} attempts of this PRD, each under the full completion check, ` +
      `and delivers attempt ${s.winner ?? '?'}: ${s.why ?? ''}`,
    '',
    '| attempt | outcome | iterations | review findings | spend | agent |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Each attempt is a run of its own: \`vigil report ${s.runId}-attempt-<n>\` shows it in full.`,
    '',
  ].join('\n');
}

/**
 * What a run with attempts says in its `VigilStatus` search attribute (runs whose input says
 * `searchAttributes`): `starting` until its attempts run, `running` while they run and while they
 * are compared or the winner delivered, `paused` while a person paused it or while it waits for a
 * person's pick (the word a single run waiting for a person has), `stopping` once stopped, and its
 * outcome's status once it has ended — so `vigil list --status X` finds it as it finds a single run.
 */
export function attemptsSearchStatus(s: {
  phase: string;
  paused?: unknown;
  stopping?: unknown;
  outcome: { status: string } | null;
}): string {
  if (s.phase === 'ended' && s.outcome) return s.outcome.status;
  if (s.phase === 'starting') return 'starting';
  if (s.stopping) return 'stopping';
  if (s.paused || s.phase === 'waiting_for_pick') return 'paused';
  return 'running';
}
