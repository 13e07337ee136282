/**
 * The Wall in the run (knob `acceptanceTests`, patch vigil-done-means-done-v1): the acceptance
 * tests sealed at the start (their digests in the seal's result, in history, and in the state),
 * run once on the tree the run started with — a run whose work is already done ends there,
 * `already_satisfied`, without a builder call — and at every completion check, before the code
 * review and the council: a failure refuses the claim, and the builder's next prompt says how
 * many fail and their names, never their source. A run without the knob records nothing here.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { AcceptanceResult } from '../../schemas/acceptance.js';
import { LIMITS, type Outcome } from '../../schemas/run.js';
import { acceptanceFindings } from '../../rules/acceptance.js';
import { noteSandbox, sandboxArgs } from '../../rules/sandbox.js';
import { finish } from './ending.js';
import { type Run } from './run.js';

/** At the start, once: the person's folder copied where no agent sees it, each file's digest recorded. */
export async function sealAcceptanceTests(run: Run): Promise<Outcome | null> {
  const { state, knobs, input, info } = run;
  if (!knobs.acceptanceTests || state.acceptance || state.iteration > 0) return null;
  const r = await run.acts.tests.sealAcceptance.executeWithOptions({ summary: 'seal the acceptance tests' }, [
    { runId: info.workflowId, sourceDir: knobs.acceptanceTests, repoPath: input.repoPath, authorization: input.authorization ?? null },
  ]);
  if (!r.ok) return finish(run, 'failed', `the acceptance tests could not be sealed, so nothing was built: ${r.reason}`);
  state.acceptance = { files: r.files, sealedAt: run.nowIso(), last: null };
  run.sdk.log.info('acceptance tests sealed', { files: r.files.length });
  return null;
}

/** The sealed tests on `tree`: the verdict kept in the state (counts and names). */
async function runOn(run: Run, tree: string, summary: string): Promise<AcceptanceResult> {
  const { state, knobs, input, info } = run;
  const files = state.acceptance?.files ?? [];
  const r = await run.acts.tests.runAcceptance.executeWithOptions({ summary }, [
    {
      runId: info.workflowId,
      repoPath: input.repoPath,
      treeHash: tree,
      files,
      command: knobs.acceptanceCommand,
      iteration: state.iteration,
      timeoutSeconds: knobs.testTimeoutSeconds,
      authorization: input.authorization ?? null,
      ...sandboxArgs(knobs),
    },
  ]);
  const { verdict, reason, passed, failed, failing } = r;
  if (state.acceptance)
    state.acceptance = {
      ...state.acceptance,
      last: { treeHash: tree, iteration: state.iteration, verdict, reason, passed, failed, failing },
    };
  state.sandbox = noteSandbox(state.sandbox, r.sandbox, { iteration: state.iteration, role: 'tests' });
  run.sdk.log.info('acceptance tests', { iteration: state.iteration, verdict, passed, failed });
  return r;
}

/** Before the first builder call: acceptance tests that already pass on the tree the run started with end the run as done. */
export async function acceptanceOnBase(run: Run): Promise<Outcome | null> {
  const { state } = run;
  if (!state.acceptance || state.acceptance.last || state.iteration > 0 || !state.runStart) return null;
  const tree = state.runStart.treeHash;
  const r = await runOn(run, tree, 'acceptance tests on the tree the run started with');
  // Tests the acceptance role wrote never end the run here: an agent's tests that pass before any
  // work are no evidence it is done (workflows/run/acceptance-author.ts asks again).
  if (r.verdict !== 'pass' || state.acceptance.drafted) return null;
  return finish(
    run,
    'already_satisfied',
    `the acceptance tests already pass on the tree the run started with (${r.passed ?? 0} passed; tree ${tree.slice(0, 12)}), so no builder was called`,
  );
}

/**
 * At a completion check, before the code review and the council: the acceptance tests on the
 * claimed tree. The reason to refuse the claim (the builder's findings set: how many fail and their
 * names), or null.
 */
export async function judgeAcceptance(run: Run, tree: string): Promise<string | null> {
  const { state } = run;
  // Tests the acceptance role wrote that passed before any work are not judged by (refuseDraftThatAlreadyPasses).
  if (!state.acceptance || state.acceptance.drafted?.dropped) return null;
  const known = state.acceptance.last;
  const r =
    known && known.treeHash === tree ? known : await runOn(run, tree, `acceptance tests on the tree of iteration ${state.iteration}`);
  if (r.verdict === 'pass') return null;
  state.lastFindings = acceptanceFindings(r, state.iteration).slice(0, LIMITS.findingChars * 4);
  return r.reason;
}
