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
 * A run whose input says `forwarding` (every start from the release that added it; older runs
 * replay without it, so no patch is asked) also: forwards pause, resume, stop, input and budget to
 * its live attempts (workflows/attempts-steer.ts); ends `stopped` on a stop, delivering nothing;
 * removes the attempts' worktrees when it is stopped or cancelled (also while it waits for a pick),
 * keeping their branches with `keepAttempts`; and with deliver=pr pushes the run's branch and opens
 * its pull request as a single run would. One whose input names them in `forwardsAlso` forwards
 * forceReview and waive too; one whose input says `searchAttributes` keeps its search attributes
 * (workflows/attempts-search.ts). Both fields are absent in older runs, which replay unchanged.
 *
 * Workflow code: deterministic, no I/O.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  ParentClosePolicy,
  isCancellation,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import { AttemptsInputSchema, PickPayloadSchema, type AttemptRow, type AttemptsInput, type AttemptsStatus } from '../schemas/attempts.js';
import { OUTCOME_EXIT_CODES, type Outcome, type OutcomeStatus, type RunInput } from '../schemas/run.js';
import {
  attemptApproved,
  attemptBudget,
  attemptId,
  attemptsPullRequestBody,
  bestUnapproved,
  cycled,
  pickAttempt,
  pickReason,
  type AttemptFacts,
} from '../rules/attempts.js';
import { decideComparison, pickRefusal, type ComparisonDecision } from '../rules/comparison.js';
import { pullRequestTitle } from '../rules/delivery.js';
import { attemptsQuery, pickUpdate } from './attempts-messages.js';
import { searchPublisher } from './attempts-search.js';
import { installSteering, type Steering } from './attempts-steer.js';
import { attemptsComparisonEra } from './run/eras.js';
import type { vigilRun } from './run-workflow.js';

const acts = proxyActivities<Pick<typeof activities, 'addAttempts' | 'describeAttempts' | 'settleAttempts'>>({
  // Worktrees added or removed, K status queries, one merge: seconds, minutes for huge repositories.
  startToCloseTimeout: '10m',
  // They beat every second: a dead worker costs seconds, and the retry finds what the first attempt did.
  heartbeatTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '1s' },
});

/** deliver=pr: the winner's branch pushed and its pull request opened (activities/deliver.ts), as a single run's. */
const prActs = proxyActivities<Pick<typeof activities, 'openPullRequest'>>({
  // A push and gh's calls, each bounded inside the activity; this is the backstop.
  startToCloseTimeout: '10m',
  retry: { maximumAttempts: 3, initialInterval: '2s' },
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
  const children: ChildWorkflowHandle<typeof vigilRun>[] = [];
  // Keyed on the input's `searchAttributes` (absent in runs started before): those upsert nothing (workflows/attempts-search.ts).
  const publishSearch = searchPublisher(input.searchAttributes === true, status);
  // Keyed on the input's `forwarding` (absent in runs started before): no handler, no new command, for those;
  // forceReview and waive on its `forwardsAlso` (absent in runs started before it), the same way.
  const steering: Steering | null = input.forwarding
    ? installSteering({
        status,
        children,
        councilEnabled: run.knobs.councilEnabled,
        onChange: () => publishSearch(),
        ...(input.forwardsAlso ? { also: input.forwardsAlso } : {}),
      })
    : null;
  const nowIso = (): string => new Date(Date.now()).toISOString();
  const ended = (o: Outcome): Outcome => {
    status.phase = 'ended';
    status.outcome = { status: o.status, reason: o.reason, exitCode: o.exitCode };
    publishSearch(o.iteration);
    return o;
  };
  const spent = (): number => status.attempts.reduce((s, a) => s + (a.spendUsd ?? 0), 0);
  /** Stopped or cancelled before delivering (runs with `forwarding`): nothing delivered, the worktrees removed. */
  const endUndelivered = async (why: string): Promise<Outcome> => {
    await CancellationScope.nonCancellable(() =>
      acts.settleAttempts({
        repoPath: run.repoPath,
        runId,
        attemptIds: status.attempts.map((a) => a.workflowId),
        winner: null,
        keepAttempts: input.keepAttempts,
      }),
    );
    const kept = input.keepAttempts ? 'their branches kept' : 'their branches deleted';
    return ended({
      status: 'stopped',
      reason: `${why}; no attempt delivered; the attempts' worktrees removed, ${kept}`.slice(0, 2000),
      exitCode: OUTCOME_EXIT_CODES.stopped,
      iteration: 0,
      at: nowIso(),
      notes: [],
      spendUsd: spent(),
    });
  };
  const stoppedBy = (): string => {
    const st = steering?.stop;
    return st ? `stopped by ${st.by}${st.reason ? `: ${st.reason}` : ''}` : 'stopped';
  };

  const made = await acts.addAttempts({ repoPath: run.repoPath, runId, k });
  const budget = attemptBudget(run.knobs.budgetUsd, k);
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
  publishSearch();

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
    if (steering) return endUndelivered('the run with attempts was cancelled; its attempts were asked to stop');
    return ended({
      status: 'stopped',
      reason: 'the run with attempts was cancelled; its attempts were asked to stop',
      exitCode: 0,
      iteration: 0,
      at: nowIso(),
      notes: [],
    });
  }
  if (steering?.stop) return endUndelivered(`${stoppedBy()}; its attempts were stopped`);

  let decision: { winner: AttemptFacts | null; facts: AttemptFacts[]; spend: number } | 'stopped';
  try {
    decision = await decide(input, status, made.base, () => personPick, steering, publishSearch);
  } catch (err) {
    if (!steering || !isCancellation(err)) throw err;
    return endUndelivered(
      'the run with attempts was cancelled while it ' +
        ((status.phase as AttemptsStatus['phase']) === 'waiting_for_pick' ? "waited for a person's pick" : 'compared its attempts'),
    );
  }
  // A stop that came while the attempts were described or compared: nothing is delivered.
  if (decision === 'stopped' || steering?.stop) return endUndelivered(`${stoppedBy()} before a winner was delivered`);
  const { winner, facts, spend } = decision;
  status.winner = winner?.n ?? null;

  status.phase = 'delivering';
  publishSearch();
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
  // deliver=pr (runs with `forwarding` only): the run's branch pushed and its pull request opened.
  const pr = steering && run.knobs.deliver === 'pr' && settled.branch ? await pullRequest(input, status, settled.branch) : null;
  const wonStatus = winner.status as OutcomeStatus;
  return ended({
    status: wonStatus,
    reason: `${status.why ?? ''}; delivered on ${settled.branch ?? '(no branch)'}${pr ? `; ${pr.note}` : ''}`.slice(0, 2000),
    exitCode: OUTCOME_EXIT_CODES[wonStatus] ?? 0,
    iteration: winner.iterations,
    at: nowIso(),
    notes: pr ? [pr.note] : [],
    spendUsd: spend,
  });
}

type ParsedInput = ReturnType<typeof AttemptsInputSchema.parse>;

/**
 * Once every attempt has ended: their facts, then the winner — the council's comparison, a person's
 * pick where it split in a supervised run, or the pick rule. 'stopped': a stop came first (runs with
 * `forwarding`: the wait for a pick also ends on a stop).
 */
async function decide(
  input: ParsedInput,
  status: AttemptsStatus,
  base: string,
  personPick: () => { n: number; by: string } | null,
  steering: Steering | null,
  publishSearch: () => void,
): Promise<{ winner: AttemptFacts | null; facts: AttemptFacts[]; spend: number } | 'stopped'> {
  const { run } = input;
  const { runId } = status;
  const row = (n: number): AttemptRow => status.attempts[n - 1] as AttemptRow;
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
      base,
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
    if (steering?.stop) return 'stopped';
    if (decided.split && run.knobs.autonomyMode === 'supervised') {
      // The council split in a supervised run: a person picks (`vigil pick`), however long it takes; no timer, no polling.
      status.comparison.pickFrom = facts.filter(attemptApproved).map((f) => f.n);
      status.phase = 'waiting_for_pick';
      publishSearch();
      status.why =
        `${decided.why.replace(/; the pick rule broke the tie.*$/, '')}; waiting for a person's pick: vigil pick ` +
        `${runId} <${status.comparison.pickFrom.join('|')}>`;
      await condition(() => personPick() !== null || Boolean(steering?.stop));
      if (steering?.stop && personPick() === null) return 'stopped';
      const picked = personPick() as { n: number; by: string };
      winner = facts.find((f) => f.n === picked.n) ?? winner;
      Object.assign(status.comparison, { decidedBy: 'person', pickedBy: picked.by, pickFrom: undefined });
      status.why = `${picked.by} picked attempt ${picked.n}; the council split (${decided.counts.map((c) => `attempt ${c.n}: ${c.votes}`).join(', ')})`;
    }
  } else {
    winner = pickAttempt(facts);
    status.why = winner ? pickReason(facts, winner) : null;
  }
  return { winner, facts, spend };
}

/** deliver=pr: the run's branch pushed to its remote and a pull request opened with gh (one open for it reused). Never fails the run. */
async function pullRequest(input: ParsedInput, status: AttemptsStatus, branch: string): Promise<{ note: string; url: string | null }> {
  try {
    const pr = await prActs.openPullRequest({
      repoPath: input.run.repoPath,
      runId: status.runId,
      branch,
      title: pullRequestTitle(input.run.prdTitle),
      body: attemptsPullRequestBody({ ...status, prdTitle: input.run.prdTitle }),
    });
    status.pullRequest = pr.url
      ? { url: pr.url, note: `pull request opened: ${pr.url}` }
      : { url: null, note: `no pull request: ${pr.skipped ?? 'gh gave no address'}; the branch ${branch} is delivered` };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    status.pullRequest = {
      url: null,
      note: `no pull request: ${(err.cause?.message ?? err.message).slice(0, 300)}; the branch ${branch} is delivered`,
    };
  }
  return status.pullRequest;
}
