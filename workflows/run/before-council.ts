/**
 * Frozen: runs from before the completion council (COUNCIL_PATCH not recorded) judge a claim with
 * the plain completion check, as they ran. Replay of such histories depends on this module doing
 * exactly what it does; new behaviour never goes here.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { AgentResult, RepoSnapshot } from '../../schemas/activities.js';
import { describeRefusal, judgeCompletion } from '../decisions/completion.js';
import { finish } from './ending.js';
import { type Again, AGAIN, end, type End, type Run } from './run.js';

/** After a good iteration of a run from before the council: a claim judged by the plain completion check. */
export async function beforeCouncilCheck(run: Run, result: AgentResult, snap: RepoSnapshot): Promise<End | Again> {
  const { state, knobs, input, info } = run;
  const { tests } = run.acts;
  // Runs from before the council: the plain completion check, unchanged for replay.
  state.consecutiveFailures = 0;
  state.lastFindings = null;
  if (result.claimed) {
    let testFacts: { passed: boolean; logPath: string } | null = null;
    if (knobs.testCommand && snap.changedCount > 0) {
      const t = await tests.runTests.executeWithOptions({ summary: `tests for the completion claim of iteration ${state.iteration}` }, [
        {
          runId: info.workflowId,
          repoPath: input.repoPath,
          command: knobs.testCommand,
          iteration: state.iteration,
          timeoutSeconds: knobs.testTimeoutSeconds,
        },
      ]);
      testFacts = { passed: t.passed, logPath: t.logPath };
    } else if (knobs.testCommand) {
      testFacts = null; // empty diff decides; tests would not change the verdict
    }
    const verdict = judgeCompletion({ iteration: state.iteration, filesChangedSinceStart: snap.changedCount, tests: testFacts });
    state.lastCompletion = verdict;
    if (verdict.accepted) {
      const evidence = knobs.testCommand ? 'tests green' : 'no test command configured, tests not verified';
      return end(
        await finish(
          run,
          'completion_promise_fulfilled',
          `completion claim accepted at iteration ${state.iteration}: ${snap.changedCount} file(s) changed since run start, ${evidence}`,
        ),
      );
    }
    state.lastFindings = describeRefusal(verdict);
  }
  run.publish();
  return AGAIN;
}
