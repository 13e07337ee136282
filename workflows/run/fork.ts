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
 * knob. A stop sent to the run reaches the forks; the run ends `stopped` once they have ended. A
 * pause, a resume, a directive and a new budget reach the live forks too.
 *
 * Keyed on the knob `onStuck` (rules/fork.ts `forksWhenStuck`): a knob no run started before it
 * has, so an older run's knobs parse to `stop` and its history replays down the old path; no patch
 * is asked. A fork's own run is keyed on its input's `forkOf` (absent in every other run) the same way.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure } from '@temporalio/common';
import type { Directive, Outcome, OutcomeStatus, RunInput } from '../../schemas/run.js';
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
  type ForkPoint,
} from '../../rules/fork.js';
import { budgetSignal, inputSignal, pauseSignal, resumeSignal, stopSignal } from '../messages.js';
import { finish, stopOutcome } from './ending.js';
import { endDone } from './follow-pr.js';
import { type Run } from './run.js';

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

type Ended = ForkEnd & { evidence: string | null };

/**
 * The valve fired with `stuck` as its reason: the forks, to the first approved one (the run's
 * outcome, or null where a followed pull request asks for an iteration) or to none
 * (`force_stopped`), or a stop.
 */
export async function forkFromStuck(run: Run, stuck: string): Promise<Outcome | null> {
  const { state, knobs } = run;
  const point = forkPoint(checkpointRows(state), state.runStart);
  if (!point) return finish(run, 'force_stopped', `${stuck}; no fork: the run never recorded its start, so there is nothing to fork from`);
  const configs = forkConfigs(knobs);
  const made = await makeWorktrees(run, point, configs.length);
  if ('why' in made) return finish(run, 'force_stopped', `${stuck}; no fork: ${made.why}`);
  const budgetUsd = liveAttemptBudget(state.budgetUsd ?? knobs.budgetUsd, state.spend.usd, configs.length);
  const fork: ForkState = {
    stuckAt: state.iteration,
    stuck: stuck.slice(0, 1000),
    from: { iteration: point.iteration, commit: point.commit, tree: point.tree },
    base: made.base,
    phase: 'running',
    attempts: configs.map((c) => ({
      ...c,
      workflowId: attemptId(run.info.workflowId, c.n),
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
  run.sdk.log.info('stuck: forking', { iteration: state.iteration, from: point.iteration, forks: configs.length });
  const ended: Ended[] = [];
  const directive = (c: ForkConfig): string =>
    forkDirective({ parentId: run.info.workflowId, n: c.n, k: configs.length, from: point, stuck, findings: state.lastFindings ?? '' });
  for (const c of configs)
    await startFork(run, fork, forkInput(run, c, configs.length, made.paths[c.n - 1] as string, budgetUsd, directive(c)), ended);
  run.publish();
  const winner = await awaitForks(run, fork, ended);
  return conclude(run, fork, ended, winner);
}

/** The forks' base commit and worktrees; why not, when the repository would not take them (the run then ends as without the knob). */
async function makeWorktrees(run: Run, point: ForkPoint, k: number): Promise<{ base: string; paths: string[] } | { why: string }> {
  const { state, input, info } = run;
  const acts = run.acts.streams;
  try {
    const base = await acts.forkBase.executeWithOptions({ summary: `the commit the forks start from (iteration ${point.iteration})` }, [
      {
        repoPath: input.repoPath,
        runId: info.workflowId,
        tree: point.tree,
        parent: state.runStart?.sha ?? null,
        iteration: point.iteration,
      },
    ]);
    const made = await acts.addAttempts.executeWithOptions({ summary: `the worktrees of ${k} fork(s)` }, [
      { repoPath: input.repoPath, runId: info.workflowId, k, base: base.commit },
    ]);
    return { base: base.commit, paths: made.paths };
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    return { why: (err.cause?.message ?? err.message).slice(0, 500) };
  }
}

/** Fork n's run started; its end (an outcome, or a failure or cancellation) lands on its row and in `ended`, in the order they come. */
async function startFork(run: Run, fork: ForkState, args: RunInput, ended: Ended[]): Promise<void> {
  const n = args.forkOf?.n ?? 0;
  const row = fork.attempts[n - 1] as ForkAttempt;
  const handle = await run.sdk.startStream({
    workflowId: row.workflowId,
    args: [args],
    staticSummary: `fork ${n} of ${fork.attempts.length} of ${run.info.workflowId}, stuck at iteration ${fork.stuckAt}`.slice(0, 200),
  });
  handle.result().then(
    (o) => {
      Object.assign(row, { status: o.status, reason: o.reason.slice(0, 500), spendUsd: o.spendUsd ?? null });
      ended.push({ n, status: o.status, evidence: o.notes.find((x) => x.startsWith('evidence: '))?.slice(0, 2000) ?? null });
    },
    (err: unknown) => {
      const status = run.sdk.isCancellation(err) ? 'stopped' : 'failed';
      Object.assign(row, { status, reason: (err instanceof Error ? err.message : String(err)).slice(0, 500) });
      ended.push({ n, status, evidence: null });
    },
  );
}

/**
 * Until a fork ends approved, all end without approval, or a person stops the run; then the forks
 * still running are stopped and awaited. The winner's number (null: none, or a stop). Meanwhile
 * the run's other messages reach the live forks, as a run's reach its streams: a pause and a
 * resume, each person's directive (taken off the run's own queue: the forks do the work now), and
 * a new budget, what the run and the ended forks have not spent shared among the live ones.
 */
async function awaitForks(run: Run, fork: ForkState, ended: Ended[]): Promise<number | null> {
  const k = fork.attempts.length;
  const told: Told = { paused: false, budget: budgetOf(run) };
  await steer(run, fork, ended, told);
  let verdict = forkVerdict(ended, k);
  while (verdict.kind === 'wait' && !run.stopRequest) {
    const seen = ended.length;
    await run.sdk.until(() => ended.length > seen || run.stopRequest !== null || steered(run, told));
    await steer(run, fork, ended, told);
    verdict = forkVerdict(ended, k);
    run.publish();
  }
  const req = run.stopRequest;
  const why = req ? `the run was stopped: ${req.reason}` : `fork ${verdict.kind === 'won' ? verdict.n : '?'} was approved first`;
  await tellForks(run, fork, ended, 'the stop', (id) =>
    run.sdk.signal(id, stopSignal, { reason: why.slice(0, 2000), by: req?.by ?? 'vigil', now: true }),
  );
  await run.sdk.until(() => ended.length >= k);
  return verdict.kind === 'won' && !req ? verdict.n : null;
}

/** What the live forks were last told. */
interface Told {
  paused: boolean;
  budget: number;
}

const budgetOf = (run: Run): number => run.state.budgetUsd ?? run.knobs.budgetUsd;

/** A person's directives waiting in the run's queue (the run's own are not forwarded). */
const directivesToForward = (run: Run): Directive[] => run.state.pendingDirectives.filter((d) => d.by !== 'vigil');

/** Whether a message changed what the forks were told. */
function steered(run: Run, told: Told): boolean {
  return (run.state.pause !== null) !== told.paused || budgetOf(run) !== told.budget || directivesToForward(run).length > 0;
}

/** The message to every live fork, as a signal; one that ended meanwhile (or cannot be reached) is logged and skipped. */
async function tellForks(
  run: Run,
  fork: ForkState,
  ended: readonly Ended[],
  what: string,
  send: (workflowId: string) => Promise<void>,
): Promise<void> {
  const live = fork.attempts.filter((a) => !ended.some((e) => e.n === a.n));
  await Promise.all(
    live.map(async (a) =>
      send(a.workflowId).catch((err: unknown) =>
        run.sdk.log.warn(`a fork could not be told of ${what}`, { fork: a.n, error: String(err) }),
      ),
    ),
  );
}

/** The run's pause or resume, a person's directives and a new budget, to the live forks. */
async function steer(run: Run, fork: ForkState, ended: readonly Ended[], told: Told): Promise<void> {
  const { state } = run;
  if ((state.pause !== null) !== told.paused) {
    told.paused = state.pause !== null;
    const pause = state.pause;
    await tellForks(run, fork, ended, pause ? 'the pause' : 'the resume', (id) =>
      pause
        ? run.sdk.signal(id, pauseSignal, { reason: `the run is paused: ${pause.reason}`.slice(0, 2000), by: pause.by })
        : run.sdk.signal(id, resumeSignal, { by: 'vigil' }),
    );
  }
  const directives = directivesToForward(run);
  if (directives.length > 0) {
    state.pendingDirectives = state.pendingDirectives.filter((d) => !directives.includes(d));
    for (const d of directives)
      await tellForks(run, fork, ended, 'a directive', (id) =>
        run.sdk.signal(id, inputSignal, { directive: d.text, by: d.by, ...(d.id !== undefined ? { id: d.id } : {}) }),
      );
  }
  const budget = budgetOf(run);
  if (budget !== told.budget) {
    told.budget = budget;
    const done = fork.attempts.filter((a) => ended.some((e) => e.n === a.n));
    const spent = state.spend.usd + done.reduce((n, a) => n + (a.spendUsd ?? 0), 0);
    const share = liveAttemptBudget(budget, spent, fork.attempts.length - done.length);
    await tellForks(run, fork, ended, 'the budget', (id) => run.sdk.signal(id, budgetSignal, { usd: share, by: 'vigil' }));
  }
}

/** Every fork over: their facts and spend, the winner's tree into the run's, the worktrees gone, and the run's end. */
async function conclude(run: Run, fork: ForkState, ended: Ended[], winner: number | null): Promise<Outcome | null> {
  const { state, input, info } = run;
  const acts = run.acts.streams;
  await describe(run, fork);
  state.spend = { ...state.spend, usd: state.spend.usd + fork.attempts.reduce((s, a) => s + (a.spendUsd ?? 0), 0) };
  if (winner !== null) {
    const applied = await acts.applyFork.executeWithOptions({ summary: `fork ${winner}'s tree into the run's working tree` }, [
      { repoPath: input.repoPath, runId: info.workflowId, forkId: attemptId(info.workflowId, winner) },
    ]);
    Object.assign(fork, { winner, tree: applied.tree, evidence: ended.find((e) => e.n === winner)?.evidence ?? null });
    state.convergence = { ...state.convergence, lastHash: applied.tree };
  }
  await acts.settleAttempts.executeWithOptions({ summary: "the forks' worktrees and branches removed" }, [
    {
      repoPath: input.repoPath,
      runId: info.workflowId,
      attemptIds: fork.attempts.map((a) => a.workflowId),
      winner: null,
      keepAttempts: false,
    },
  ]);
  fork.phase = 'ended';
  run.publish();
  const reason = forkOutcomeReason(fork, fork.attempts);
  if (run.stopRequest) return stopOutcome(run, [reason]);
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
