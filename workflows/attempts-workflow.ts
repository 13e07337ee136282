/**
 * The `vigilAttempts` workflow (`vigil start --attempts K`, docs/attempts.md): K attempts of one
 * PRD, each an ordinary `vigilRun` child (`<run>-attempt-<n>`) in a worktree of its own
 * (`.vigil/worktrees/<run>/attempt-<n>`), each under the full completion check and delivering on
 * its own branch (`vigil/<run>-attempt-<n>`), with a K-th of the run's budget and the agent and
 * model of its turn (`agents`, `models`, cycled). Each attempt's agent calls carry
 * `VIGIL_ATTEMPT=<n>` (activities/agent.ts reads it from where the attempt works). When every
 * attempt has ended and several were approved, the council compares them (`compareAttempts`,
 * from `vigil-attempts-comparison-v1` on) and its majority picks (rules/comparison.ts);
 * the pick rule (rules/attempts.ts) breaks a tie, decides without a usable majority
 * or a council, and alone chose before that patch. The winner's branch becomes the run's branch `vigil/<run>`, the others' branches go unless
 * `keepAttempts`. None approved: the run ends `force_stopped`, saying how far the best one got.
 *
 * Workflow code: deterministic, no I/O.
 */
import {
  ActivityCancellationType,
  ApplicationFailure,
  condition,
  ParentClosePolicy,
  isCancellation,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import { AttemptsInputSchema, PickPayloadSchema, type AttemptRow, type AttemptsInput, type AttemptsStatus } from '../schemas/attempts.js';
import { OUTCOME_EXIT_CODES, type Outcome, type OutcomeStatus, type RunInput } from '../schemas/run.js';
import {
  attemptApproved,
  attemptBudget,
  attemptId,
  bestUnapproved,
  cycled,
  pickAttempt,
  pickReason,
  type AttemptFacts,
} from '../rules/attempts.js';
import { decideComparison, pickRefusal, type ComparisonDecision } from '../rules/comparison.js';
import { attemptsQuery, pickUpdate } from './attempts-messages.js';
import { attemptsComparisonEra } from './run/eras.js';
import type { vigilRun } from './run-workflow.js';

const acts = proxyActivities<Pick<typeof activities, 'addAttempts' | 'describeAttempts' | 'settleAttempts'>>({
  // Worktrees added or removed, K status queries, one merge: seconds, minutes for huge repositories.
  startToCloseTimeout: '10m',
  // They beat every second: a dead worker costs seconds, and the retry finds what the first attempt did.
  heartbeatTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '1s' },
});

/** The comparison round (activities/comparison.ts): bounded as a council round is (workflows/run/proxies.ts). */
function comparisonProxy(knobs: RunInput['knobs']) {
  return proxyActivities<Pick<typeof activities, 'compareAttempts'>>({
    // The pack (K diffs and status queries), then the members in parallel, each call bounded by the member timeout inside; this is the backstop.
    startToCloseTimeout: (knobs.councilMemberTimeoutSeconds + 60 + 600) * 1000,
    // The calls beat while they run, the pack every attempt.
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // A retried round re-attaches to its calls (or collects their answers): no member runs twice.
    retry: { maximumAttempts: 3, initialInterval: '2s' },
  });
}

export async function vigilAttempts(rawInput: AttemptsInput): Promise<Outcome> {
  const parsed = AttemptsInputSchema.safeParse(rawInput);
  if (!parsed.success) throw ApplicationFailure.nonRetryable(`invalid attempts input: ${parsed.error.message}`, 'InvalidRunInput');
  const input = parsed.data;
  const { run, attempts: k } = input;
  const runId = workflowInfo().workflowId;
  const status: AttemptsStatus = { runId, phase: 'starting', attempts: [], winner: null, why: null, branch: null, outcome: null };
  setHandler(attemptsQuery, () => status);
  // A person's pick, taken only while the run waits for one (a supervised run whose council split).
  let personPick: { n: number; by: string } | null = null;
  const refusal = (raw: unknown): string | null => {
    const p = PickPayloadSchema.safeParse(raw);
    const pickFrom = status.comparison?.pickFrom ?? [];
    const waiting = status.phase === 'waiting_for_pick' && personPick === null;
    return p.success
      ? pickRefusal({ runId, waiting, k: status.attempts.length, pickFrom }, p.data.attempt)
      : `a pick is { attempt, by }: ${p.error.message}`;
  };
  setHandler(
    pickUpdate,
    (raw) => {
      const p = PickPayloadSchema.parse(raw);
      personPick = { n: p.attempt, by: p.by };
      return `attempt ${p.attempt} picked by ${p.by}: run ${runId} delivers it`;
    },
    {
      validator: (raw) => {
        const why = refusal(raw);
        if (why) throw new Error(why);
      },
    },
  );
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
          const evidence = o.notes.find((x) => x.startsWith('evidence:'))?.slice(0, 2000) ?? null;
          Object.assign(r, { state: 'ended', status: o.status, reason: o.reason.slice(0, 500), spendUsd: o.spendUsd ?? 0, evidence });
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
  let spend = facts.reduce((s, f) => s + f.spendUsd, 0);
  let winner: AttemptFacts | null;
  if (facts.filter(attemptApproved).length > 1 && run.knobs.councilEnabled && attemptsComparisonEra()) {
    // Several approved: the council compares them (the pack holds the diffs; the history, references).
    status.phase = 'comparing';
    const cmp = await comparisonProxy(run.knobs).compareAttempts({
      runId,
      repoPath: run.repoPath,
      prdPath: run.prdPath,
      base: made.base,
      knobs: run.knobs,
      authorization: run.authorization ?? null,
      attempts: facts
        .filter(attemptApproved)
        .map((f) => ({ n: f.n, workflowId: row(f.n).workflowId, evidence: row(f.n).evidence ?? null })),
    });
    spend += cmp.spendUsd;
    const decided: ComparisonDecision = decideComparison(facts, cmp.picks);
    status.comparison = { picks: cmp.picks, packPath: cmp.packPath, decidedBy: decided.decidedBy, split: decided.split };
    winner = decided.winner;
    status.why = decided.why;
    if (decided.split && run.knobs.autonomyMode === 'supervised') {
      // The council split in a supervised run: a person picks (`vigil pick`), however long it takes; no timer, no polling.
      status.comparison.pickFrom = facts.filter(attemptApproved).map((f) => f.n);
      status.phase = 'waiting_for_pick';
      status.why =
        `${decided.why.replace(/; the pick rule broke the tie.*$/, '')}; waiting for a person's pick: vigil pick ` +
        `${runId} <${status.comparison.pickFrom.join('|')}>`;
      await condition(() => personPick !== null);
      const picked = personPick as unknown as { n: number; by: string };
      winner = facts.find((f) => f.n === picked.n) ?? winner;
      Object.assign(status.comparison, { decidedBy: 'person', pickedBy: picked.by, pickFrom: undefined });
      status.why = `${picked.by} picked attempt ${picked.n}; the council split (${decided.counts.map((c) => `attempt ${c.n}: ${c.votes}`).join(', ')})`;
    }
  } else {
    winner = pickAttempt(facts);
    status.why = winner ? pickReason(facts, winner) : null;
  }
  status.winner = winner?.n ?? null;

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
