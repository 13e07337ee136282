/**
 * The acceptance role in the run (knob `acceptanceFromPrd`, patch vigil-acceptance-from-prd-v1):
 * before the first iteration, an agent writes the acceptance tests from the PRD and a map of the
 * repository into a private folder of the worker (activities/acceptance-author.ts), and they are
 * sealed exactly as a person's folder is (activities/acceptance.ts: the same checks, digests in
 * history); a call that fails, changes the repository or leaves no test ends the run `failed`
 * before any builder call. Once sealed (and run on the starting tree, workflows/run/acceptance.ts),
 * a supervised run pauses once, naming the folder and its files for the person to read; a
 * perpetual run goes on and says so. A run without the knob records nothing here.
 *
 * Workflow code: deterministic, no I/O.
 */
import { ActivityFailure } from '@temporalio/common';
import type { AgentResult } from '../../schemas/activities.js';
import type { Outcome } from '../../schemas/run.js';
import { acceptanceAuthorPrompt, draftedAcceptanceNote, MAX_ACCEPTANCE_DRAFTS, toothlessDraftNote } from '../../rules/acceptance-author.js';
import { chooseAgent, silenceSeconds } from '../../rules/agent-choice.js';
import { addOrchestrationUsage, addUnpricedOrchestration } from '../../rules/budget.js';
import { noteSandbox, sandboxArgs } from '../../rules/sandbox.js';
import { acceptanceOnBase } from './acceptance.js';
import { finish } from './ending.js';
import { markAcceptanceFromPrd } from './eras.js';
import { notifyPeople } from './people.js';
import { type Run } from './run.js';

/** Why the acceptance role's call gave nothing to seal, or null when it may be sealed. */
function callProblem(r: AgentResult | null, failure: string | null): string | null {
  if (failure !== null) return failure;
  if (!r) return 'the call was lost';
  if (r.reviewChangedTree?.length)
    return `it changed the repository (${r.reviewChangedTree.slice(0, 5).join(', ')}), which it may only read`;
  if (r.timedOut) return 'it timed out';
  if (r.exitCode !== 0)
    return `it exited with ${r.exitCode}${r.tail ? `: ${r.tail.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}` : ''}`;
  return null;
}

/** At the start, once: the acceptance role writes the tests, and they are sealed. The outcome when the run ends here. */
export async function draftAcceptanceTests(run: Run): Promise<Outcome | null> {
  const { state, knobs } = run;
  // A person's folder wins (vigil start refuses both; a client that sends both gets the person's).
  if (!knobs.acceptanceFromPrd || knobs.acceptanceTests || state.acceptance || state.iteration > 0) return null;
  markAcceptanceFromPrd();
  return draft(run, 1, null);
}

/** One call of the acceptance role (`attempt`, with what its earlier call's tests did), then the seal. */
async function draft(run: Run, attempt: number, earlier: { passed: number } | null): Promise<Outcome | null> {
  const { state, knobs, input, info } = run;
  let r: AgentResult | null = null;
  let failure: string | null = null;
  try {
    r = await run.acts.members.runAgent.executeWithOptions(
      { summary: attempt === 1 ? 'write the acceptance tests from the PRD' : `write the acceptance tests again (call ${attempt})` },
      [
        {
          runId: info.workflowId,
          repoPath: input.repoPath,
          ...chooseAgent(knobs, 'acceptance', knobs.tier),
          authorization: input.authorization ?? null,
          prompt: acceptanceAuthorPrompt({ prdPath: input.prdPath, ...(earlier ? { earlier } : {}) }),
          role: 'acceptance',
          iteration: 1,
          phase: 'REASON',
          tier: knobs.tier,
          timeoutSeconds: knobs.councilMemberTimeoutSeconds,
          silenceSeconds: silenceSeconds(knobs),
          completionPromise: '',
          rateLimitRpm: knobs.rateLimitRpm,
          tailOnFailure: true,
          ...sandboxArgs(knobs),
        },
      ],
    );
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    failure = `the call failed: ${(err.cause?.message ?? err.message).slice(0, 300)}`;
  }
  if (r?.usage) state.spend = addOrchestrationUsage(state.spend, r.usage);
  else if (r) state.spend = addUnpricedOrchestration(state.spend, 1);
  state.sandbox = noteSandbox(state.sandbox, r?.sandbox, { iteration: state.iteration, role: 'acceptance' });
  const problem = callProblem(r, failure);
  if (problem) return finish(run, 'failed', `the acceptance agent could not write the acceptance tests, so nothing was built: ${problem}`);
  const seal = await run.acts.tests.sealAcceptance.executeWithOptions({ summary: 'seal the acceptance tests the acceptance agent wrote' }, [
    { runId: info.workflowId, sourceDir: '', drafted: true, repoPath: input.repoPath, authorization: input.authorization ?? null },
  ]);
  if (!seal.ok)
    return finish(
      run,
      'failed',
      `the acceptance tests the acceptance agent wrote could not be sealed, so nothing was built: ${seal.reason}`,
    );
  state.acceptance = {
    files: seal.files,
    sealedAt: run.nowIso(),
    drafted: { dir: seal.dir ?? '', shown: false, attempt, dropped: null },
    last: null,
  };
  run.sdk.log.info('acceptance tests written and sealed', { files: seal.files.length, attempt });
  return null;
}

/**
 * After the tests ran on the starting tree: tests the acceptance role wrote that all pass there
 * cannot tell done from not done (a lazy or sycophantic role's `assert True`, or tests of what the
 * code already does). They never end the run `already_satisfied`, as a person's folder does: the
 * role is asked once more, saying so, and its new tests are sealed and run on the starting tree in
 * turn; when they pass there too, the run does not rest on them, and the person is told
 * (supervised: a pause). The outcome when the run ends here (the second call failed), else null.
 */
export async function refuseDraftThatAlreadyPasses(run: Run): Promise<Outcome | null> {
  const { state, knobs, info } = run;
  for (;;) {
    const acc = state.acceptance;
    const last = acc?.last;
    if (!acc?.drafted || acc.drafted.dropped || !last || last.verdict !== 'pass' || state.iteration > 0) return null;
    const attempt = acc.drafted.attempt ?? 1;
    const passed = last.passed ?? 0;
    if (attempt < MAX_ACCEPTANCE_DRAFTS) {
      run.sdk.log.warn('the acceptance tests pass on the starting tree: the acceptance role is asked again', { attempt, passed });
      const ended = (await draft(run, attempt + 1, { passed })) ?? (await acceptanceOnBase(run));
      if (ended) return ended;
      continue;
    }
    const supervised = knobs.autonomyMode === 'supervised';
    const note = toothlessDraftNote({ dir: acc.drafted.dir, passed, attempts: attempt, supervised });
    state.acceptance = { ...acc, drafted: { ...acc.drafted, shown: true, dropped: note.slice(0, 2000) } };
    if (supervised && !state.pause) state.pause = { reason: note.slice(0, 2000), by: 'vigil', at: run.nowIso() };
    await notifyPeople(
      run,
      supervised ? 'paused' : 'escalation',
      'The acceptance tests written from the PRD already pass: the run does not rest on them',
      note,
      'warning',
      { files: acc.files.length, dir: acc.drafted.dir, attempts: attempt },
      `${info.workflowId}:acceptance-toothless`,
    );
    run.publish();
    return null;
  }
}

/** Once the tests are sealed and run on the starting tree: shown to the person (supervised: a pause until `vigil resume`). */
export async function showDraftedAcceptance(run: Run): Promise<null> {
  const { state, knobs, info } = run;
  const acc = state.acceptance;
  if (!acc?.drafted || acc.drafted.shown) return null;
  state.acceptance = { ...acc, drafted: { ...acc.drafted, shown: true } };
  const supervised = knobs.autonomyMode === 'supervised';
  const note = draftedAcceptanceNote({
    dir: acc.drafted.dir,
    files: acc.files.map((f) => f.path),
    base: acc.last ? { verdict: acc.last.verdict, passed: acc.last.passed, failed: acc.last.failed } : null,
    supervised,
  });
  if (supervised && !state.pause) state.pause = { reason: note.slice(0, 2000), by: 'vigil', at: run.nowIso() };
  await notifyPeople(
    run,
    supervised ? 'paused' : 'escalation',
    supervised ? 'Acceptance tests written: read them, then resume' : 'Acceptance tests written from the PRD',
    note,
    'info',
    { files: acc.files.length, dir: acc.drafted.dir },
    `${info.workflowId}:acceptance-drafted`,
  );
  run.publish();
  return null;
}
