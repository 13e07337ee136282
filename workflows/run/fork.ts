/**
 * Attempts from a stuck point (knob `onStuck=fork`, docs/attempts.md): where the stagnation or
 * done-signal valve would force-stop the run, it forks `forkAttempts` attempts from its last good
 * checkpoint instead, with the machinery of attempts from the start (workflows/attempts-workflow.ts,
 * activities/attempts.ts): each fork an ordinary `vigilRun` child (`<run>-attempt-<n>`, so its agent
 * calls carry `VIGIL_ATTEMPT=<n>`) in a worktree of its own (`.vigil/worktrees/<run>/attempt-<n>`),
 * under the full completion check and the valves, with its `forkWith` entry's agent, model and tier
 * and a share of what is left of the budget, delivering on its own branch. The first fork to end
 * approved continues the run: the others are stopped, its tree becomes the run's working tree and
 * the run ends with its outcome, delivered as usual. None approved: `force_stopped`, as without the
 * knob. A stop sent to the run reaches the forks; the run ends `stopped` once they have ended.
 *
 * Keyed on the knob `onStuck` (rules/fork.ts `forksWhenStuck`): a knob no run started before it
 * has, so an older run's knobs parse to `stop` and its history replays down the old path; no patch
 * is asked. A fork's own run is keyed on its input's `forkOf` (absent in every other run) the same way.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure } from '@temporalio/common';
import type { Outcome, OutcomeStatus, RunInput } from '../../schemas/run.js';
import type { ForkAttempt, ForkState } from '../../schemas/fork.js';
import { attemptId, liveAttemptBudget } from '../../rules/attempts.js';
import { checkpointRows } from '../../rules/checkpoints.js';
import {
  forkConfigs,
  forkDirective,
  forkOutcomeReason,
  forkPoint,
  forksWhenStuck,
  forkVerdict,
  type ForkConfig,
  type ForkEnd,
} from '../../rules/fork.js';
import { stopSignal } from '../messages.js';
import { finish, stopOutcome } from './ending.js';
import { endDone } from './follow-pr.js';
import { type Run } from './run.js';
import type { StreamHandle } from './port.js';

const FORK_DIRECTIVE_ID = 'vigil-fork-of';

/** Whether this run forks now that a valve fires (knob onStuck=fork; never a fork's own run; once per run). */
export function forksNow(run: Run): boolean {
  return forksWhenStuck(run.knobs, { isFork: run.input.forkOf !== undefined, forkedAlready: run.state.fork !== undefined });
}

/** A fork's own run: what got stuck goes into its first prompt, once. */
export function seedForkDirective(run: Run): void {
  const { state, input } = run;
  if (!input.forkOf || run.continued || state.iteration > 0 || state.directiveIds.includes(FORK_DIRECTIVE_ID)) return;
  state.pendingDirectives.push({ text: input.forkOf.directive, by: 'vigil', at: run.nowIso(), id: FORK_DIRECTIVE_ID });
  state.directiveIds = [...state.directiveIds, FORK_DIRECTIVE_ID];
}

/** What fork n's run is given: the run's input on the fork's worktree, with the fork's agent, model, tier and budget. */
function forkInput(run: Run, c: ForkConfig, k: number, worktree: string, budgetUsd: number, directive: string): RunInput {
  const { input, knobs, info } = run;
  return {
    prdPath: input.prdPath,
    prdTitle: `${input.prdTitle} — fork ${c.n} of ${k}`.slice(0, 200),
    repoPath: worktree,
    knobs: {
      ...knobs,
      provider: c.provider as RunInput['knobs']['provider'],
      model: c.model,
      tier: c.tier,
      budgetUsd,
      parallelStreams: 1,
      deliver: 'branch',
      deliverToCurrent: false,
      onStuck: 'stop',
    },
    forkOf: { parentId: info.workflowId, n: c.n, directive },
    ...(input.checklist ? { checklist: input.checklist } : {}),
    ...(input.authorization ? { authorization: input.authorization } : {}),
    ...(input.host ? { host: input.host } : {}),
    ...(input.notifyTriggers ? { notifyTriggers: true } : {}),
    ...(input.searchAttributes !== undefined ? { searchAttributes: input.searchAttributes } : {}),
    ...(input.loopRules !== undefined ? { loopRules: input.loopRules } : {}),
  };
}

/**
 * The valve fired with `stuck` as its reason: the forks, to the first approved one (the run's
 * outcome, or null where a followed pull request asks for an iteration) or to none
 * (`force_stopped`), or a stop.
 */
export async function forkFromStuck(run: Run, stuck: string): Promise<Outcome | null> {
  const { state, knobs, input, info } = run;
  const point = forkPoint(checkpointRows(state), state.runStart);
  if (!point) return finish(run, 'force_stopped', `${stuck}; no fork: the run never recorded its start, so there is nothing to fork from`);
  const acts = run.acts.streams;
  const runId = info.workflowId;
  const configs = forkConfigs(knobs);
  const k = configs.length;
  const base = await acts.forkBase.executeWithOptions({ summary: `the commit the forks start from (iteration ${point.iteration})` }, [
    { repoPath: input.repoPath, runId, tree: point.tree, parent: state.runStart?.sha ?? null, iteration: point.iteration },
  ]);
  const made = await acts.addAttempts.executeWithOptions({ summary: `the worktrees of ${k} fork(s)` }, [
    { repoPath: input.repoPath, runId, k, base: base.commit },
  ]);
  const budgetUsd = liveAttemptBudget(state.budgetUsd ?? knobs.budgetUsd, state.spend.usd, k);
  const fork: ForkState = {
    stuckAt: state.iteration,
    stuck: stuck.slice(0, 1000),
    from: { iteration: point.iteration, commit: point.commit, tree: point.tree },
    base: base.commit,
    phase: 'running',
    attempts: configs.map((c) => ({
      ...c,
      workflowId: attemptId(runId, c.n),
      budgetUsd,
      status: null,
      reason: null,
      iterations: null,
      findings: null,
      spendUsd: null,
    })),
    winner: null,
    evidence: null,
    tree: null,
  };
  state.fork = fork;
  run.sdk.log.info('stuck: forking', { iteration: state.iteration, from: point.iteration, forks: k });
  const ended: (ForkEnd & { evidence: string | null })[] = [];
  const handles = new Map<number, StreamHandle>();
  for (const c of configs) {
    const directive = forkDirective({ parentId: runId, n: c.n, k, from: point, stuck, findings: state.lastFindings ?? '' });
    const row = fork.attempts[c.n - 1] as ForkAttempt;
    const handle = await run.sdk.startStream({
      workflowId: row.workflowId,
      args: [forkInput(run, c, k, made.paths[c.n - 1] as string, budgetUsd, directive)],
      staticSummary: `fork ${c.n} of ${k} of ${runId}, stuck at iteration ${state.iteration}`.slice(0, 200),
    });
    handles.set(c.n, handle);
    handle.result().then(
      (o) => {
        Object.assign(row, { status: o.status, reason: o.reason.slice(0, 500), spendUsd: o.spendUsd ?? null });
        ended.push({ n: c.n, status: o.status, evidence: o.notes.find((x) => x.startsWith('evidence: '))?.slice(0, 2000) ?? null });
      },
      (err: unknown) => {
        const status = run.sdk.isCancellation(err) ? 'stopped' : 'failed';
        Object.assign(row, { status, reason: (err instanceof Error ? err.message : String(err)).slice(0, 500) });
        ended.push({ n: c.n, status, evidence: null });
      },
    );
  }
  run.publish();
  let verdict = forkVerdict(ended, k);
  while (verdict.kind === 'wait' && !run.stopRequest) {
    const seen = ended.length;
    await run.sdk.until(() => ended.length > seen || run.stopRequest !== null);
    verdict = forkVerdict(ended, k);
    run.publish();
  }
  // The forks still running are stopped (a person's stop, or another fork came first), and awaited.
  const live = [...handles.keys()].filter((n) => !ended.some((e) => e.n === n));
  const req = run.stopRequest;
  const why = req ? `the run was stopped: ${req.reason}` : `fork ${verdict.kind === 'won' ? verdict.n : '?'} was approved first`;
  await Promise.all(
    live.map(async (n) =>
      run.sdk
        .signal(attemptId(runId, n), stopSignal, { reason: why.slice(0, 2000), by: req?.by ?? 'vigil', now: true })
        .catch((err: unknown) => run.sdk.log.warn('a fork could not be stopped', { fork: n, error: String(err) })),
    ),
  );
  await run.sdk.until(() => ended.length >= k);
  await describe(run, fork);
  state.spend = { ...state.spend, usd: state.spend.usd + fork.attempts.reduce((s, a) => s + (a.spendUsd ?? 0), 0) };
  const winner = verdict.kind === 'won' && !req ? verdict.n : null;
  if (winner !== null) {
    const applied = await acts.applyFork.executeWithOptions({ summary: `fork ${winner}'s tree into the run's working tree` }, [
      { repoPath: input.repoPath, runId, forkId: attemptId(runId, winner) },
    ]);
    Object.assign(fork, { winner, tree: applied.tree, evidence: ended.find((e) => e.n === winner)?.evidence ?? null });
    state.convergence = { ...state.convergence, lastHash: applied.tree };
  }
  await acts.settleAttempts.executeWithOptions({ summary: "the forks' worktrees and branches removed" }, [
    { repoPath: input.repoPath, runId, attemptIds: fork.attempts.map((a) => a.workflowId), winner: null, keepAttempts: false },
  ]);
  fork.phase = 'ended';
  run.publish();
  if (req) return stopOutcome(run, [forkOutcomeReason(fork, fork.attempts)]);
  const reason = forkOutcomeReason(fork, fork.attempts);
  if (winner === null) return finish(run, 'force_stopped', reason);
  const won = fork.attempts[winner - 1] as ForkAttempt;
  return endDone(run, won.status as OutcomeStatus, reason, []);
}

/** Each fork's iterations, findings and spend, from its run's status; a fork whose status cannot be read keeps what its outcome said. */
async function describe(run: Run, fork: ForkState): Promise<void> {
  try {
    const facts = await run.acts.streams.describeAttempts.executeWithOptions({ summary: "the forks' facts" }, [
      {
        attempts: fork.attempts.map((a) => ({ n: a.n, workflowId: a.workflowId, status: a.status ?? 'failed', spendUsd: a.spendUsd ?? 0 })),
      },
    ]);
    for (const f of facts)
      Object.assign(fork.attempts[f.n - 1] as ForkAttempt, { iterations: f.iterations, findings: f.findings, spendUsd: f.spendUsd });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    run.sdk.log.warn("the forks' facts could not be read", { error: err.cause?.message ?? err.message });
  }
}
