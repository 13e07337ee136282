/**
 * The PRD checklist inside the run: extracted once at the start (or read from the person's file),
 * held-out items chosen, asked again after a provider's trouble, and verified on a tree.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure } from '@temporalio/common';
import type { AgentResult, RunAgentInput } from '../../schemas/activities.js';
import { type GateResult, MAX_CHECKLIST_ITEMS } from '../../schemas/gates.js';
import { chooseAgent, silenceSeconds } from '../../rules/agent-choice.js';
import { addOrchestrationUsage, addUnpricedOrchestration } from '../../rules/budget.js';
import { selectHeldOut } from '../../rules/checklist/held-out.js';
import {
  afterChecklistFailure,
  CHECKLIST_ATTEMPTS,
  type ChecklistRetry,
  checklistExtractionPrompt,
  checklistVerifierPrompt,
} from '../../rules/checklist/prompts.js';
import { checklistGateResult, mergeLatest } from '../../rules/gates.js';
import { gateEvent } from '../../rules/journal.js';
import { providerOutcome } from '../../rules/provider-outcome.js';
import { noteSandbox, sandboxArgs } from '../../rules/sandbox.js';
import { testLine } from './gates.js';
import { notifyPeople } from './people.js';
import { type Run } from './run.js';

/**
 * Asks the verifier about the checklist items (held-out ones included) on the current tree: all of
 * them, or only `only` (lean rounds: the others keep what the last verification found).
 */
export async function verifyChecklist(run: Run, tree: string, only?: readonly string[]): Promise<GateResult | null> {
  const { state } = run;
  const { members } = run.acts;
  const cl = state.gates.checklist;
  if (!cl) return null;
  const call = verifierCall(run, only);
  run.status = 'gating';
  run.publish();
  let answer: AgentResult | null = null;
  try {
    answer = await members.runAgent.executeWithOptions(
      {
        summary:
          `verify the PRD checklist (iteration ${state.iteration}` +
          `${call.checklistIds.length < cl.items.length ? `, ${call.checklistIds.length} of ${cl.items.length} items whose files changed` : ''})`,
      },
      [call],
    );
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
  }
  run.status = run.stopRequest ? 'stopping' : 'running';
  return applyVerification(run, tree, answer, true);
}

/** The checklist verifier's call on the current tree: every item, or only `only`. */
export function verifierCall(run: Run, only?: readonly string[]): RunAgentInput & { checklistIds: string[] } {
  const { state, knobs, input, info } = run;
  const items = state.gates.checklist?.items ?? [];
  const asked = only ? items.filter((i) => only.includes(i.id)) : items;
  return {
    runId: info.workflowId,
    repoPath: input.repoPath,
    ...chooseAgent(knobs, 'checklist-verifier', knobs.tier),
    authorization: input.authorization ?? null,
    prompt: checklistVerifierPrompt({
      items: asked,
      prdPath: input.prdPath,
      diffPath: null,
      testSummary: state.lastTests ? testLine(run, state.lastTests) : 'No test results.',
    }),
    role: 'checklist-verifier',
    iteration: state.iteration,
    phase: 'VERIFY',
    tier: knobs.tier,
    timeoutSeconds: knobs.councilMemberTimeoutSeconds,
    silenceSeconds: silenceSeconds(knobs),
    completionPromise: '',
    parse: 'verification',
    checklistIds: asked.map((i) => i.id),
    rateLimitRpm: knobs.rateLimitRpm,
    ...sandboxArgs(knobs),
  };
}

/**
 * The verifier's answer (null: its call was lost) on the checklist's state: each item it answered
 * takes its status, the gate's result is recorded. `own`: the answer came from a call of its own,
 * whose cost and sandbox are counted here (a council round that carried the verifier counts them
 * with the round's).
 */
export function applyVerification(run: Run, tree: string, answer: AgentResult | null, own: boolean): GateResult | null {
  const { state } = run;
  const cl = state.gates.checklist;
  if (!cl) return null;
  run.judging.lastVerifierAnswer = answer
    ? {
        exitCode: answer.exitCode,
        timedOut: answer.timedOut,
        answered: Object.keys(answer.verification ?? {}).length,
        logPath: answer.logPath,
      }
    : null;
  if (own && answer?.usage) state.spend = addOrchestrationUsage(state.spend, answer.usage);
  else if (own && answer) state.spend = addUnpricedOrchestration(state.spend, 1);
  if (own) state.sandbox = noteSandbox(state.sandbox, answer?.sandbox, { iteration: state.iteration, role: 'checklist-verifier' });
  const statuses = { ...cl.status };
  for (const [id, v] of Object.entries(answer?.verification ?? {}))
    statuses[id] = { status: v.status, evidence: v.evidence, iteration: state.iteration };
  state.gates.checklist = { ...cl, status: statuses };
  state.marks = { ...state.marks, checklist: answer ? run.markHere(tree) : null };
  const result = checklistGateResult(state.gates.checklist, tree, state.iteration);
  state.gates.latest = mergeLatest(state.gates.latest, [result]);
  run.recordEvent(gateEvent(result));
  return result;
}

/**
 * At run start, once: the PRD checklist from the person's file or extracted by an agent; held-out
 * items chosen. An extraction a provider's trouble spoiled is asked again at a later boundary
 * (`retryChecklist`): what comes next is returned (null when there is nothing to decide).
 */
export async function ensureChecklist(run: Run): Promise<ChecklistRetry | null> {
  const { state, knobs, input, info } = run;
  const { members } = run.acts;
  if (!knobs.prdChecklist || state.gates.checklistTried) return null;
  state.gates.checklistTried = true;
  let items = input.checklist ?? null;
  const source = items ? 'file' : 'agent';
  let providerReason: string | null = null;
  let rateLimitWait: number | null = null;
  let apiProblems: string[] = [];
  if (!items) {
    let r: AgentResult | null = null;
    try {
      r = await members.runAgent.executeWithOptions({ summary: 'extract the PRD checklist' }, [
        {
          runId: info.workflowId,
          repoPath: input.repoPath,
          ...chooseAgent(knobs, 'checklist', knobs.tier),
          authorization: input.authorization ?? null,
          prompt: checklistExtractionPrompt({ prdPath: input.prdPath, maxItems: MAX_CHECKLIST_ITEMS }),
          role: 'checklist',
          iteration: 1,
          phase: 'REASON',
          tier: knobs.tier,
          timeoutSeconds: knobs.councilMemberTimeoutSeconds,
          silenceSeconds: silenceSeconds(knobs),
          completionPromise: '',
          parse: 'checklist',
          apiSpecsFrom: input.prdPath,
          rateLimitRpm: knobs.rateLimitRpm,
          ...sandboxArgs(knobs),
        },
      ]);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      providerReason = `the call failed: ${(err.cause?.message ?? err.message).slice(0, 200)}`;
      state.gates.checklistProblem = `the checklist could not be extracted: ${(err.cause?.message ?? err.message).slice(0, 300)}`;
    }
    if (r?.usage) state.spend = addOrchestrationUsage(state.spend, r.usage);
    else if (r) state.spend = addUnpricedOrchestration(state.spend, 1);
    state.sandbox = noteSandbox(state.sandbox, r?.sandbox, { iteration: state.iteration, role: 'checklist' });
    // Named API descriptions that could not be read: said beside the checklist (state only, no command).
    apiProblems = r?.checklist?.apiProblems ?? [];
    if (r?.checklist?.ok) items = r.checklist.items;
    else if (r) {
      state.gates.checklistProblem = `the checklist could not be extracted: ${r.checklist?.error ?? 'no answer'}`.slice(0, 500);
      const health = providerOutcome({
        exitCode: r.exitCode,
        timedOut: r.timedOut,
        rateLimited: r.rateLimit !== null,
        authError: r.authError !== null,
        tail: r.tail,
        modelOutput: r.modelOutput,
        limitHit: r.sandbox?.limitHit,
        hung: r.hung,
      });
      providerReason = health.outcome === 'failure' ? health.reason : null;
      rateLimitWait = r.rateLimit?.waitSeconds ?? null;
    }
  }
  if (!items || items.length === 0) {
    const attempt = (state.gates.checklistRetry?.attempt ?? 0) + 1;
    const next = afterChecklistFailure({
      attempt,
      providerReason,
      rateLimitWaitSeconds: rateLimitWait,
      baseWaitSeconds: knobs.baseWaitSeconds,
    });
    state.gates.checklistRetry =
      next.kind === 'retry' ? { attempt, atMs: run.nowMs() + next.waitSeconds * 1000, reason: next.reason.slice(0, 300) } : null;
    if (next.kind === 'retry')
      state.gates.checklistProblem = (
        `${state.gates.checklistProblem ?? 'the checklist could not be extracted'} (${next.reason}; asked again in ` +
        `${next.waitSeconds} s, attempt ${attempt} of ${CHECKLIST_ATTEMPTS})`
      ).slice(0, 500);
    if (next.kind === 'give_up')
      state.gates.checklistProblem =
        `${state.gates.checklistProblem ?? 'the checklist could not be extracted'} (${next.reason}; gave up after ${attempt} attempts)`.slice(
          0,
          500,
        );
    run.sdk.log.warn('no PRD checklist for this run', { problem: state.gates.checklistProblem });
    return next;
  }
  state.gates.checklist = { items, heldOut: knobs.checklistHeldOut ? selectHeldOut(items) : [], source, status: {}, waivers: [] };
  state.gates.checklistRetry = null;
  state.gates.checklistProblem = apiProblems.length > 0 ? apiProblems.join('; ').slice(0, 500) : null;
  run.sdk.log.info('PRD checklist ready', { items: items.length, source });
  return null;
}

/**
 * The extraction asked again, once the wait a provider's trouble called for is over. When the
 * provider kept failing, the run does not go on silently without its checklist: supervised, it
 * pauses and asks; perpetual, it goes on and says so.
 */
export async function retryChecklist(run: Run): Promise<void> {
  const { state, knobs, info } = run;
  state.gates.checklistTried = false;
  const next = await ensureChecklist(run);
  if (next?.kind !== 'give_up') return;
  const why =
    `No PRD checklist for this run: its extraction failed ${next.attempts} times for a provider reason (${next.reason}), so the ` +
    `checklist gate and the held-out items are off.`;
  const asks = knobs.autonomyMode === 'supervised';
  if (asks && !state.pause)
    state.pause = {
      reason: `${why} Resume to go on without a checklist, or stop and start again with --checklist FILE.`.slice(0, 2000),
      by: 'vigil',
      at: run.nowIso(),
    };
  await notifyPeople(
    run,
    'escalation',
    asks ? 'No PRD checklist: the run is paused' : 'No PRD checklist: the run goes on without one',
    why,
    asks ? 'critical' : 'warning',
    { attempts: next.attempts, reason: next.reason, iteration: state.iteration },
    `${info.workflowId}:checklist:${next.attempts}`,
  );
}
