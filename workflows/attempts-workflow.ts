/**
 * The `vigilAttempts` workflow (`vigil start --attempts K`, docs/attempts.md): K attempts of one
 * PRD, each an ordinary `vigilRun` child (`<run>-attempt-<n>`) in a worktree of its own
 * (`.vigil/worktrees/<run>/attempt-<n>`), each under the full completion check and delivering on
 * its own branch (`vigil/<run>-attempt-<n>`), with a K-th of the run's budget and the agent and
 * model of its turn (`agents`, `models`, cycled). Each attempt's agent calls carry
 * `VIGIL_ATTEMPT=<n>` (activities/agent.ts reads it from where the attempt works). When every
 * attempt has ended, the pick rule (rules/attempts.ts) chooses among the approved
 * ones; the winner's branch becomes the run's branch `vigil/<run>`, the others' branches go unless
 * `keepAttempts`. None approved: the run ends `force_stopped`, saying how far the best one got.
 *
 * Workflow code: deterministic, no I/O.
 */
import {
  ApplicationFailure,
  ParentClosePolicy,
  isCancellation,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import { AttemptsInputSchema, type AttemptRow, type AttemptsInput, type AttemptsStatus } from '../schemas/attempts.js';
import { OUTCOME_EXIT_CODES, type Outcome, type OutcomeStatus, type RunInput } from '../schemas/run.js';
import { attemptBudget, attemptId, bestUnapproved, cycled, pickAttempt, pickReason } from '../rules/attempts.js';
import { attemptsQuery } from './attempts-messages.js';
import type { vigilRun } from './run-workflow.js';

const acts = proxyActivities<Pick<typeof activities, 'addAttempts' | 'describeAttempts' | 'settleAttempts'>>({
  // Worktrees added or removed, K status queries, one merge: seconds, minutes for huge repositories.
  startToCloseTimeout: '10m',
  // They beat every second: a dead worker costs seconds, and the retry finds what the first attempt did.
  heartbeatTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '1s' },
});

export async function vigilAttempts(rawInput: AttemptsInput): Promise<Outcome> {
  const parsed = AttemptsInputSchema.safeParse(rawInput);
  if (!parsed.success) throw ApplicationFailure.nonRetryable(`invalid attempts input: ${parsed.error.message}`, 'InvalidRunInput');
  const input = parsed.data;
  const { run, attempts: k } = input;
  const runId = workflowInfo().workflowId;
  const status: AttemptsStatus = { runId, phase: 'starting', attempts: [], winner: null, why: null, branch: null, outcome: null };
  setHandler(attemptsQuery, () => status);
  const nowIso = (): string => new Date(Date.now()).toISOString();
  const ended = (o: Outcome): Outcome => {
    status.phase = 'ended';
    status.outcome = { status: o.status, reason: o.reason, exitCode: o.exitCode };
    return o;
  };

  const made = await acts.addAttempts({ repoPath: run.repoPath, runId, k });
  const budget = attemptBudget(run.knobs.budgetUsd, k);
  const children = [];
  for (let n = 1; n <= k; n++) {
    const provider = cycled(input.agents, n) ?? run.knobs.provider;
    const model = cycled(input.models, n) ?? run.knobs.model;
    const workflowId = attemptId(runId, n);
    const childInput: RunInput = {
      ...run,
      prdTitle: `${run.prdTitle} — attempt ${n} of ${k}`.slice(0, 200),
      repoPath: made.paths[n - 1] as string,
      knobs: { ...run.knobs, provider, model, budgetUsd: budget, parallelStreams: 1, deliver: 'branch', deliverToCurrent: false },
    };
    status.attempts.push({
      n,
      workflowId,
      provider,
      model,
      budgetUsd: budget,
      state: 'running',
      status: null,
      reason: null,
      findings: null,
      iterations: null,
      spendUsd: null,
    });
    children.push(
      await startChild<typeof vigilRun>('vigilRun', {
        workflowId,
        args: [childInput],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        staticSummary: `attempt ${n} of ${k} of ${runId}`.slice(0, 200),
      }),
    );
  }
  status.phase = 'running';

  // Every attempt to its end (a failed or cancelled child is an attempt that was not approved).
  const row = (n: number): AttemptRow => status.attempts[n - 1] as AttemptRow;
  try {
    await Promise.all(
      children.map(async (child, i) => {
        const r = row(i + 1);
        try {
          const o = await child.result();
          Object.assign(r, { state: 'ended', status: o.status, reason: o.reason.slice(0, 500), spendUsd: o.spendUsd ?? 0 });
        } catch (err) {
          if (isCancellation(err)) throw err;
          Object.assign(r, { state: 'ended', status: 'failed', reason: String(err).slice(0, 500), spendUsd: 0 });
        }
      }),
    );
  } catch (err) {
    if (!isCancellation(err)) throw err;
    return ended({
      status: 'stopped',
      reason: 'the run with attempts was cancelled; its attempts were asked to stop',
      exitCode: 0,
      iteration: 0,
      at: nowIso(),
      notes: [],
    });
  }

  status.phase = 'picking';
  const facts = await acts.describeAttempts({
    attempts: status.attempts.map((a) => ({ n: a.n, workflowId: a.workflowId, status: a.status ?? 'failed', spendUsd: a.spendUsd ?? 0 })),
  });
  for (const f of facts) Object.assign(row(f.n), { findings: f.findings, iterations: f.iterations, spendUsd: f.spendUsd });
  const spend = facts.reduce((s, f) => s + f.spendUsd, 0);
  const winner = pickAttempt(facts);
  status.winner = winner?.n ?? null;
  status.why = winner ? pickReason(facts, winner) : null;

  status.phase = 'delivering';
  const settled = await acts.settleAttempts({
    repoPath: run.repoPath,
    runId,
    attemptIds: status.attempts.map((a) => a.workflowId),
    winner: winner?.n ?? null,
    keepAttempts: input.keepAttempts,
  });
  status.branch = settled.branch;
  if (!winner) {
    const best = bestUnapproved(facts);
    const said = best
      ? `; the best, attempt ${best.n}, ended ${best.status} after ${best.iterations} iteration(s): ${row(best.n).reason ?? ''}`
      : '';
    return ended({
      status: 'force_stopped',
      reason: `none of the ${k} attempts was approved${said}`.slice(0, 2000),
      exitCode: OUTCOME_EXIT_CODES.force_stopped,
      iteration: best?.iterations ?? 0,
      at: nowIso(),
      notes: [],
      spendUsd: spend,
    });
  }
  const wonStatus = winner.status as OutcomeStatus;
  return ended({
    status: wonStatus,
    reason: `${status.why ?? ''}; delivered on ${settled.branch ?? '(no branch)'}`.slice(0, 2000),
    exitCode: OUTCOME_EXIT_CODES[wonStatus] ?? 0,
    iteration: winner.iterations,
    at: nowIso(),
    notes: [],
    spendUsd: spend,
  });
}
