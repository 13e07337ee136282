/**
 * The patches of the run workflow: every patch id of the loop, and the one place where each is
 * asked. A patch lives three releases (CONTRIBUTING.md, Adding a patch):
 *
 * 1. `patched(ID)` in the release that introduces it: both paths in the code, an era of `Eras`
 *    (`run.eras.xxx`) or a function here choosing between them; its id in `PATCH_IDS`, its
 *    fixtures recorded just before it in tests/replay/eras.ts (`ERAS`).
 * 2. `deprecatePatch(ID)` in the next release: every run that release must replay was started by
 *    the one before it (docs/operations.md, Upgrading Vigil under open runs), whose code took the
 *    new path, so the old one is deleted. The call stays at the same point of the command sequence:
 *    the histories of the previous release hold the (undeprecated) marker there, and a marker with
 *    no patch call beside it fails their replay. A history without the marker (its run never came
 *    there) replays as well: a deprecated patch is asked for nothing. Listed in `DEPRECATED_PATCHES`
 *    with the release that deprecated it; recordings of the previous release that hold its marker
 *    are in tests/replay/eras.ts (`RELEASE_FIXTURES`).
 * 3. Deleted in the release after that: the runs it replays all recorded the marker as deprecated,
 *    which Temporal lets a workflow without the call skip.
 *
 * 0.5.0 deprecated all 33 patches of 0.4.0 and earlier; 0.6.0 deleted their calls (the runs it
 * replays, started by 0.5.0, recorded those markers as deprecated). 0.6.0 deprecates the eight
 * patches 0.5.0 had live (done-means-done, judges-see-changes, acceptance-from-prd,
 * stream-recovery, stop-now, affected-tests, pause-deadlines, follow-pr: their old paths deleted);
 * 0.7.0 deletes their calls. Live: the attempts-comparison and pr-update patches of 0.6.0 (below).
 * The done-means-done and judges-see-changes patches are asked once per execution, before the
 * first command, in the fixed order of `decideEras`; the others where their code runs (the
 * `mark...` and `...Era` functions below).
 *
 * Workflow code: deterministic, no I/O.
 */
import { deprecatePatch, patched } from '@temporalio/workflow';
import type { RunInput } from '../../schemas/run.js';
import { onRunHost } from '../hosts.js';

// ---- the patches of 0.5.0: deprecated by 0.6.0 (their old paths deleted; 0.7.0 deletes the calls) ----

/**
 * Done means done: the run's tests run once on the tree it started with, before the first
 * iteration, as the baseline every later test run is held to (runs before it have none: their
 * verdicts rest on each run's own report); with the acceptanceTests knob, the acceptance tests are
 * sealed at the start, end the run as already_satisfied when they pass on that tree, and are run at
 * every completion check (runs before it had no such knob). Asked once per execution, before the
 * first command.
 */
export const DONE_MEANS_DONE_PATCH = 'vigil-done-means-done-v1';

/**
 * The judges see what changed: a passing code review stands only for a later tree whose changes
 * touch no product code (else the delta is reviewed), a review that broke the agent contract is
 * asked again (so each check counts), a claim naming files the diff since the start does not hold
 * is refused, and a perpetual run's blocking request for a person notifies without pausing and is
 * listed in the outcome. Runs before it: a passing review stood for reviewed, unflagged files,
 * a contract-breaking review was reused on its tree uncounted, claims were not read for files, and
 * a blocking request paused every run. Asked once per execution, after the done-means-done patch.
 */
export const JUDGES_SEE_CHANGES_PATCH = 'vigil-judges-see-changes-v1';

/**
 * The acceptance role (knob acceptanceFromPrd): before the first iteration an agent writes the
 * acceptance tests from the PRD into a private folder, they are sealed as a person's are, and a
 * supervised run pauses once to show them (runs before it did not know the knob: a run started with
 * it had no acceptance tests). Asked where a run with the knob would write them, and only there, so
 * a run without the knob records no marker.
 */
export const ACCEPTANCE_FROM_PRD_PATCH = 'vigil-acceptance-from-prd-v1';

/**
 * A stream's lost worktree and a stopped stream (workflows/run/streams.ts): a stream resumed by a
 * person makes its worktree again from its last checkpoint when it is gone, and a stream stopped
 * on its own (not by its run's stop) is tried once more, as any stream that does not end done
 * (runs before it paused again on resume, and dead-lettered a stopped stream's task at once).
 * Asked by a stream as it resumes, and by a run where one of its streams ended stopped.
 */
export const STREAM_RECOVERY_PATCH = 'vigil-stream-recovery-v1';

/**
 * A run stopped with `stop --now` closes first (workflows/run/ending.ts): its final notification
 * and the removal of its run files go at once, side by side, its journal is flushed, and it closes
 * without the memory judge, whose agent call would hold the close (runs before it notified, flushed,
 * judged the memory and removed the run files one after the other). Asked as such a run ends.
 */
export const STOP_NOW_PATCH = 'vigil-stop-now-closes-first-v1';

/**
 * Affected tests between completion checks: the gate pass of an ordinary iteration asks the test
 * run for the tests the change can affect (`scope: 'affected'`, rules/affected-tests.ts),
 * and a completion check never rests on such a partial run (runs before it ran the full suite in
 * every pass). Asked where a gate pass with tests is prepared, with the affectedTestsFullEvery knob
 * above 1.
 */
export const AFFECTED_TESTS_PATCH = 'vigil-affected-tests-v1';

/**
 * Questions with deadlines (workflows/run/pause-wait.ts): a pause that waits for a person, with a
 * reminder, a re-route or a deadline to keep (knobs escalationRemindAfter, escalationRerouteAfter,
 * escalationDeadline), waits with a durable timer for each, and at the deadline does what onDeadline
 * says (runs before it waited for the person with no timer, however long). Asked where such a pause
 * begins to wait, and only when one of its timers applies, so a pause without one records no marker.
 */
export const PAUSE_DEADLINES_PATCH = 'vigil-pause-deadlines-v1';

/**
 * Following the pull request (workflows/run/follow-pr.ts): a run that ends done with deliver=pr and
 * the followPr knob delivers, opens its pull request and then waits for its events instead of
 * ending (red checks and comments are iterations, a merge or a close ends it; runs before it ended
 * at delivery). Asked where such a run would deliver, and only there, so any other run records no
 * marker.
 */
export const FOLLOW_PR_PATCH = 'vigil-follow-pr-v1';

// ---- live patches of 0.6.0 ----

/**
 * The comparison round of a run with attempts (workflows/attempts-workflow.ts): when several
 * attempts were approved, the council compares them (`compareAttempts`) and its majority picks,
 * the pick rule breaking a tie; a supervised run whose council split waits for a person's pick
 * (runs before it took the pick rule's winner at once). Asked by the `vigilAttempts` workflow where
 * several attempts were approved, and only there, so any other run records no marker.
 */
export const ATTEMPTS_COMPARISON_PATCH = 'vigil-attempts-comparison-v1';

/**
 * The base branch moved (workflows/run/pr-update.ts): a followed pull request's base-moved event
 * rebases the run branch onto the new base (or merges it, knob prUpdate) in a scratch worktree, the
 * evidence is judged again on the new tree, and the delivery pushes it (with a lease after a
 * rebase); a conflict asks a person. The wait for the pull request also answers a rewind, and a
 * review or comment the run took in this era is answered on the pull request once its work is
 * pushed (`replyOnPullRequest`). Runs before it logged a base-moved event and acted on nothing,
 * their wait answered a rewind only with the next event, and they never replied. Asked where a run
 * begins to wait for its pull request, and only there.
 */
export const PR_UPDATE_PATCH = 'vigil-pr-update-v1';

/**
 * Live patches: the ids asked with `patched()`, whose old path this code still has, in the order
 * an execution first asks for them. A new patch adds its constant here, its call in
 * `decideEras` (or a function here asked where its code runs), its id here, and its fixtures to
 * tests/replay/eras.ts (`ERAS`); tests/unit/architecture.test.ts checks that both list the same ids.
 */
export const PATCH_IDS = [ATTEMPTS_COMPARISON_PATCH, PR_UPDATE_PATCH] as const satisfies readonly string[];
export type PatchId = (typeof PATCH_IDS)[number];

/** A patch whose old path is gone: asked with `deprecatePatch()` until `deletedIn`. */
export interface DeprecatedPatch {
  id: string;
  /** The release that deprecated it and deleted its old path. */
  deprecatedIn: string;
  /** The release that deletes its call. */
  deletedIn: string;
}

const deprecatedIn060 = (id: string): DeprecatedPatch => ({ id, deprecatedIn: '0.6.0', deletedIn: '0.7.0' });

/** Every deprecated patch, in the order an execution of the release before asked for it. */
export const DEPRECATED_PATCHES: readonly DeprecatedPatch[] = [
  DONE_MEANS_DONE_PATCH,
  JUDGES_SEE_CHANGES_PATCH,
  ACCEPTANCE_FROM_PRD_PATCH,
  STREAM_RECOVERY_PATCH,
  STOP_NOW_PATCH,
  AFFECTED_TESTS_PATCH,
  PAUSE_DEADLINES_PATCH,
  FOLLOW_PR_PATCH,
].map(deprecatedIn060);

/** The options of one execution (the eras of its live patches would join them). */
export interface Eras {
  /** The run was started with Vigil's search attributes (input `searchAttributes` not false): it upserts them. */
  upsertsSearchAttributes: boolean;
  /** Spread into every repository-bound proxy (workflows/hosts.ts). */
  onHost: { taskQueue?: string };
  /**
   * No patch: the raw input's knobs name prPollEvery, which no run started before it has, so an old history replays
   * unchanged. It keys the follow-ups of a followed pull request: the poller, and the reply when an iteration on an
   * event changed nothing (workflows/run/follow-pr.ts).
   */
  prFollowUps: boolean;
}

/**
 * Once per execution, before the first command (continue-as-new starts a fresh one): the patch
 * markers 0.5.0 recorded there, in its order, then the execution's options.
 */
export function decideEras(input: RunInput, raw: unknown = input): Eras {
  const upsertsSearchAttributes = input.searchAttributes !== false;
  // Everything that touches the repository (or `.vigil/` in it, like the notification ledger, or
  // needs the agent CLIs installed there, like the health check) runs on the run's host.
  const onHost = onRunHost(input);
  deprecatePatch(DONE_MEANS_DONE_PATCH);
  deprecatePatch(JUDGES_SEE_CHANGES_PATCH);
  // The raw input, before the knobs' defaults are filled in.
  const rawKnobs = raw && typeof raw === 'object' ? (raw as { knobs?: unknown }).knobs : undefined;
  const prFollowUps = typeof (rawKnobs as { prPollEvery?: unknown } | undefined)?.prPollEvery === 'number';
  return { upsertsSearchAttributes, onHost, prFollowUps };
}

// ---- asked where their code runs: each call stands where 0.5.0 asked `patched()` ----

/** A gate pass of an ordinary iteration with tests is prepared, with affectedTestsFullEvery above 1 (AFFECTED_TESTS_PATCH). */
export const markAffectedTests = (): void => deprecatePatch(AFFECTED_TESTS_PATCH);
/** A pause that waits for a person, with a timer to keep, begins to wait (PAUSE_DEADLINES_PATCH). */
export const markPauseDeadlines = (): void => deprecatePatch(PAUSE_DEADLINES_PATCH);
/** A run stopped with `stop --now` ends (STOP_NOW_PATCH). */
export const markStopNow = (): void => deprecatePatch(STOP_NOW_PATCH);
/** A run with the acceptanceFromPrd knob is about to have its acceptance tests written (ACCEPTANCE_FROM_PRD_PATCH). */
export const markAcceptanceFromPrd = (): void => deprecatePatch(ACCEPTANCE_FROM_PRD_PATCH);
/** A stream resumes, or a run's stream ended stopped with an attempt left (STREAM_RECOVERY_PATCH): true, it is retried. */
export const markStreamRecovery = (): true => {
  deprecatePatch(STREAM_RECOVERY_PATCH);
  return true;
};
/** A done run with deliver=pr and followPr is about to deliver and follow its pull request (FOLLOW_PR_PATCH). */
export const markFollowPr = (): void => deprecatePatch(FOLLOW_PR_PATCH);

// ---- live patches asked where their code runs ----

/** Several attempts of a run with attempts were approved: the era of the comparison round (ATTEMPTS_COMPARISON_PATCH). */
export const attemptsComparisonEra = (): boolean => patched(ATTEMPTS_COMPARISON_PATCH);
/** A run begins to wait for its pull request: the era in which a moved base is rebased onto and a rewind is answered (PR_UPDATE_PATCH). */
export const prUpdateEra = (): boolean => patched(PR_UPDATE_PATCH);
