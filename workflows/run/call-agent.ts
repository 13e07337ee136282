/**
 * Calling the agent: the iteration's number, phase, tier and prompt, the call itself in its own
 * cancellation scope (a stop --now, a rewind or an emergency rollover kill it; a pause or a stop
 * only skip the gate pass it carries), what an interrupted or lost call means, then what the call
 * cost and which directives it delivered.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import {
  type AgentResult,
  blankAgentResult,
  FAILURE_TYPES,
  type IterationInspectionInput,
  PROMPT_PART_MISSING,
  type PromptInput,
} from '../../schemas/activities.js';
import type { Phase, Tier } from '../../schemas/run.js';
import { chooseAgent, silenceSeconds } from '../../rules/agent-choice.js';
import { remainingBudget, spendAfterCall } from '../../rules/budget.js';
import { builderChecklist } from '../../rules/checklist/state.js';
import { planCheckpoint, sealCheckpoint } from '../../rules/checkpoints.js';
import { knobsFor } from '../../rules/failover.js';
import { gateFindingsForPrompt } from '../../rules/gates.js';
import { directiveMemory } from '../../rules/memory.js';
import { phaseFor, tierFor } from '../../rules/phase.js';
import { ceilingTier } from '../../rules/tier-ceiling.js';
import { REPOSITORY_FAILURE_TYPES } from '../../rules/repository.js';
import { LEVEL_TIER } from '../../rules/tier-ladder.js';
import { interruptedNote } from '../../rules/undelivered-directives.js';
import { agentResultOf } from '../../rounds/agent-result.js';
import { carriedGates } from '../gates-pass.js';
import { callKilledByRun } from '../running-call.js';
import { finish, stopOutcome } from './ending.js';
import { gatesPassFacts } from './gates.js';
import { budgetWarningDue, warnOnBudget } from './people.js';
import { type ProviderPick, reportToBreaker } from './provider.js';
import { end, go, INTERRUPTED, type Run, type Step } from './run.js';
import { sandboxArgs } from '../../rules/sandbox.js';

/** Exit code recorded for an iteration whose agent call never completed on any worker. */
const AGENT_CALL_LOST = 125;

/** What the agent call leaves for the steps after it. */
export interface AgentCall {
  result: AgentResult;
  /** What the inspection after the call is asked for (lean runs: with the call). */
  inspect: IterationInspectionInput;
  /** The iteration's phase and tier, as its record keeps them. */
  phase: Phase;
  tier: Tier;
}

/**
 * The iteration: its number, phase and tier, its prompt, and the agent call (the inspection and
 * the gate pass ride with it in lean runs), cancelled by a stop --now, a pause or stop of the gate
 * pass it carries, a rewind or an emergency rollover. Then what the call cost and delivered.
 */
export async function callAgent(run: Run, pick: ProviderPick): Promise<Step<AgentCall>> {
  const { state, knobs, input, info } = run;
  const { agent } = run.acts;
  const { provider: iterationProvider, gate } = pick;
  // 4. The iteration. The checkpoint of the last one is sealed with the state after it.
  state.checkpoints.list = sealCheckpoint(state.checkpoints.list, state);
  state.iteration += 1;
  run.iterationsThisExecution += 1;
  run.status = 'running';
  run.phase = phaseFor(state.iteration);
  run.tier = ceilingTier(
    knobs.tierLadder && state.ladder ? LEVEL_TIER[state.ladder.level] : tierFor(state.iteration, knobs),
    knobs.maxTier,
  );
  const fresh = state.contextClear;
  const handoffContext = state.handoffContextPending || fresh ? (fresh?.summary ?? state.latestHandoff?.summary ?? null) : null;
  const directives = [...state.pendingDirectives]; // a copy: handlers may push while the agent runs
  const promptInput: PromptInput = {
    prdPath: input.prdPath,
    prdTitle: input.prdTitle,
    iteration: state.iteration,
    maxIterations: knobs.maxIterations,
    phase: run.phase,
    tier: run.tier,
    retry: state.consecutiveFailures,
    directives,
    findings: state.lastFindings,
    completionPromise: knobs.completionPromise,
    ...(handoffContext ? { handoffSummary: handoffContext } : {}),
    ...(fresh ? { freshSession: true } : {}),
    gateFindings: gateFindingsForPrompt(state.gates.latest, knobs),
    checklist: state.gates.checklist ? builderChecklist(state.gates.checklist, 5000) : null,
    // The run so far goes by reference (`memoryRef` below): the activity renders it into the prompt.
    ...(knobs.promptTemplate ? { templatePath: knobs.promptTemplate } : {}),
  };
  run.publish();

  // Long prompt parts by reference, and the inspection (with the agent's signal files and notes) with the call.
  // The tree after the call becomes this iteration's checkpoint when it changed.
  const checkpoint = planCheckpoint(state.checkpoints.list, info.workflowId, state.iteration, knobs.checkpointsKept);
  const inspect = {
    runStartSha: state.runStart?.sha ?? null,
    previousTree: state.convergence.lastHash,
    signals: true,
    notes: true,
    notesByRef: true,
    ...(checkpoint ? { checkpoint } : {}),
  };
  // The gate pass rides with the call (made after a good agent run that changed the tree).
  const carried = carriedGates(gatesPassFacts(run), state.gates.lastTree);
  const callArgs = (byRef: boolean) => ({
    ...(byRef ? run.call.promptParts.split(promptInput) : { promptInput }),
    inspect,
    memoryRef: run.call.memoryParts.ref(state.memory, knobs.memoryBudgetChars),
    ...(carried ? { gates: carried } : {}),
  });
  let result: AgentResult;
  try {
    const scope = run.sdk.scope();
    run.call.started(scope, directives.length, carried !== null);
    const call = (byRef: boolean): Promise<AgentResult> =>
      agent.runAgent
        .executeWithOptions({ summary: `iteration ${state.iteration} · ${run.phase} · tier ${run.tier}` }, [
          {
            runId: info.workflowId,
            repoPath: input.repoPath,
            ...chooseAgent(knobsFor(iterationProvider, knobs), 'iteration', run.tier ?? 'development'),
            remainingBudgetUsd: remainingBudget(state.spend.usd, state.budgetUsd ?? knobs.budgetUsd),
            authorization: input.authorization ?? null,
            ...callArgs(byRef),
            role: 'iteration',
            iteration: state.iteration,
            phase: run.phase ?? 'ACT',
            tier: run.tier ?? 'development',
            // The repository's model-override file may set this call's tier, never above the ceiling.
            maxTier: knobs.maxTier,
            timeoutSeconds: knobs.agentTimeoutSeconds,
            silenceSeconds: silenceSeconds(knobs),
            // Inside the activity's work (activities/last-error.ts), no new command: no patch.
            selfHeal: knobs.selfHeal,
            completionPromise: knobs.completionPromise,
            extraEnv: fresh ? { VIGIL_FRESH_SESSION: '1' } : {},
            rateLimitRpm: knobs.rateLimitRpm,
            ...sandboxArgs(knobs),
            compact: true,
            // The memory of earlier runs lives in the event store: a run that journals there reads it (docs/memory.md).
            ...(run.journaling
              ? {
                  memoryLayers: {
                    indexTokens: knobs.memoryIndexTokens,
                    timelineTokens: knobs.memoryTimelineTokens,
                    entriesTokens: knobs.memoryEntriesTokens,
                  },
                }
              : {}),
          },
        ])
        .then((r) => agentResultOf(r, true));
    result = await scope.run(async () => {
      try {
        return await call(true);
      } catch (err) {
        // A referenced prompt part is not stored where the call ran (the agent did not start): send the text.
        if (!(err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === PROMPT_PART_MISSING))
          throw err;
        run.call.promptParts.forget();
        run.call.memoryParts.forget();
        return await call(false);
      }
    });
  } catch (err) {
    // Cancelled by Temporal, or killed by the run in the worker that hosts it (running-call.ts).
    const cancelled = run.sdk.isCancellation(err) || callKilledByRun(err);
    if (cancelled && run.stopRequest && directives.length > 0) {
      // The interrupted call's prompt carried them: not "never reached a prompt".
      state.pendingDirectives = state.pendingDirectives.slice(directives.length);
      return end(await stopOutcome(run, [interruptedNote(directives, state.iteration)]));
    }
    if (cancelled && run.stopRequest) return end(await stopOutcome(run));
    if (cancelled && run.rewindPending()) return INTERRUPTED; // the rewind happens at the boundary
    if (cancelled && run.rolloverNow) {
      // Interrupted to keep the history under Temporal's limit: the next execution goes on.
      state.lastFindings =
        `Iteration ${state.iteration} was interrupted: messages filled the run's history, so the run rolled over to a fresh one. ` +
        `Check the state of the repository and carry on.`;
      return INTERRUPTED;
    }
    if (cancelled && run.call.carriesGates && (state.pause || run.stopRequest)) {
      // A call cancelled for its gate pass that ended anyway (it could not ask what the
      // cancellation meant, or had not started): the pause or stop is honoured at the boundary.
      state.lastFindings =
        `Iteration ${state.iteration} was interrupted by a ${state.pause ? 'pause' : 'stop'} before the agent finished. Check ` +
        `the state of the repository and carry on.`;
      return INTERRUPTED;
    }
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && REPOSITORY_FAILURE_TYPES.has(err.cause.type ?? ''))
      throw err;
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FAILURE_TYPES.agentNotRunnable) {
      return end(await finish(run, 'agent_not_runnable', err.cause.message));
    }
    // (A call killed by the run for no reason left here is a lost call, not a failed run.)
    if (!(err instanceof ActivityFailure) || run.sdk.isCancellation(err)) throw err;
    // Every attempt was lost (worker deaths, heartbeat timeouts): a failed iteration, not a failed run.
    const why = err.cause?.message ?? err.message;
    run.sdk.log.warn('agent call failed after all attempts', { iteration: state.iteration, error: why });
    result = blankAgentResult({ exitCode: AGENT_CALL_LOST, attempt: 5, tail: `vigil: the agent call was lost after every retry: ${why}` });
  } finally {
    run.call.ended();
  }
  if (gate) await reportToBreaker(run, iterationProvider, gate, result);
  state.spend = spendAfterCall(state.spend, result.usage);
  if (budgetWarningDue(run)) await warnOnBudget(run);
  // The directives reached the agent: they were one-shot. (New ones may have arrived meanwhile.)
  state.pendingDirectives = state.pendingDirectives.slice(directives.length);
  for (const d of directives) run.remember(directiveMemory(state.iteration, d));
  if (handoffContext) state.handoffContextPending = false;
  if (fresh) state.contextClear = null;
  return go({ result, inspect, phase: run.phase, tier: run.tier });
}
