/**
 * A run started from a goal (`vigil start --goal`), not a PRD: before anything else, the discovery
 * call (the run's builder agent, through the normal provider call path, in the sandbox with the
 * repository read-only) analyses the codebase and writes the PRD into the run folder, at the run's
 * `prdPath` (activities/discovery.ts; what it is asked: rules/discovery.ts). The run then goes on
 * from it as from a person's PRD. A supervised run first pauses with the PRD named in the pause's
 * reason (status, watch and the console show it) and waits for a person's resume, stop, or input.
 * A call that fails or writes no usable PRD ends the run `failed` before any other call.
 *
 * No patch: keyed on the run input's `goal`, which no run started before it has, so their
 * histories replay on the old path unchanged; the discovery is recorded in the run state
 * (`discovery`), so a continued run does not ask again.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure } from '@temporalio/common';
import type { AgentResult } from '../../schemas/activities.js';
import { MAX_CHECKLIST_ITEMS } from '../../schemas/gates.js';
import { chooseAgent, silenceSeconds } from '../../rules/agent-choice.js';
import { addOrchestrationUsage, addUnpricedOrchestration } from '../../rules/budget.js';
import { discoveredPrdNote, discoveryPrompt } from '../../rules/discovery.js';
import { noteSandbox, sandboxArgs } from '../../rules/sandbox.js';
import { finish } from './ending.js';
import { notifyPeople } from './people.js';
import { end, type End, go, type Go, type Run } from './run.js';

/** Why the discovery call gave no PRD, or null when it wrote one at the run's PRD path. */
function discoveryProblem(r: AgentResult | null, failure: string | null, prdPath: string): string | null {
  if (failure !== null) return failure;
  if (!r) return 'the call was lost';
  if (r.reviewChangedTree?.length)
    return `it changed the repository (${r.reviewChangedTree.slice(0, 5).join(', ')}), which it may only read`;
  if (r.timedOut) return 'it timed out';
  if (!r.discovered?.ok)
    return `${r.discovered?.problem ?? 'it wrote no PRD'}${r.tail ? `: ${r.tail.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}` : ''}`;
  if (r.discovered.path !== prdPath) return `it was kept at ${r.discovered.path}, not at the run's PRD path ${prdPath}`;
  return null;
}

/**
 * Once per run, before the preparation: the PRD from the goal. `go(true)` when it was written in
 * this call (a supervised run is then paused, to show it), `go(false)` when there was nothing to
 * do, `end` when the run ends here.
 */
export async function discoverPrd(run: Run): Promise<End | Go<boolean>> {
  const { state, knobs, input, info } = run;
  if (input.goal === undefined || state.discovery !== null) return go(false);
  let r: AgentResult | null = null;
  let failure: string | null = null;
  try {
    r = await run.acts.members.runAgent.executeWithOptions({ summary: 'write the PRD from the goal (discovery)' }, [
      {
        runId: info.workflowId,
        repoPath: input.repoPath,
        // The run's builder agent (its provider, command and model), in the role of a reader.
        ...chooseAgent(knobs, 'iteration', knobs.tier),
        authorization: input.authorization ?? null,
        prompt: discoveryPrompt({ goal: input.goal, maxItems: MAX_CHECKLIST_ITEMS }),
        role: 'discovery',
        iteration: 1,
        phase: 'REASON',
        tier: knobs.tier,
        timeoutSeconds: knobs.agentTimeoutSeconds,
        silenceSeconds: silenceSeconds(knobs),
        completionPromise: '',
        rateLimitRpm: knobs.rateLimitRpm,
        tailOnFailure: true,
        ...sandboxArgs(knobs),
      },
    ]);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    failure = `the call failed: ${(err.cause?.message ?? err.message).slice(0, 300)}`;
  }
  if (r?.usage) state.spend = addOrchestrationUsage(state.spend, r.usage);
  else if (r) state.spend = addUnpricedOrchestration(state.spend, 1);
  state.sandbox = noteSandbox(state.sandbox, r?.sandbox, { iteration: state.iteration, role: 'discovery' });
  const problem = discoveryProblem(r, failure, input.prdPath);
  if (problem || !r?.discovered)
    return end(await finish(run, 'failed', `the discovery agent could not write the PRD from the goal, so nothing was built: ${problem}`));
  const { bytes, title } = r.discovered;
  state.discovery = { at: run.nowIso(), bytes };
  const supervised = knobs.autonomyMode === 'supervised';
  const note = discoveredPrdNote({ runId: info.workflowId, prdPath: input.prdPath, title, bytes, supervised });
  if (supervised && !state.pause) state.pause = { reason: note.slice(0, 2000), by: 'vigil', at: run.nowIso() };
  run.sdk.log.info('PRD written from the goal', { bytes, supervised });
  await notifyPeople(
    run,
    supervised ? 'paused' : 'escalation',
    supervised ? 'PRD written from the goal: read it, then resume' : 'PRD written from the goal',
    note,
    'info',
    { prdPath: input.prdPath, bytes },
    `${info.workflowId}:discovery`,
  );
  run.publish();
  return go(true);
}
