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
 * 0.5.0 deprecated all 33 patches of 0.4.0 and earlier; 0.6.0 deletes their calls. Live: the
 * done-means-done, judges-see-changes, acceptance-from-prd, stream-recovery, stop-now, affected-tests
 * pause-deadlines, follow-pr, attempts-comparison and pr-update patches (below).
 * Most were asked once per execution, before the first command, in the fixed order of
 * `decideEras`; the others where their code runs (the `mark...` functions below), and the hosts
 * patch by `onRunHost` (workflows/hosts.ts), last of the per-execution calls.
 *
 * Workflow code: deterministic, no I/O.
 */
import { deprecatePatch, patched } from '@temporalio/workflow';
import type { RunInput } from '../../schemas/run.js';
import { HOSTS_PATCH, onRunHost } from '../hosts.js';

// ---- the patches of 0.4.0 and earlier: deprecated by 0.5.0 (their old paths deleted); 0.6.0 deletes the calls ----

/** The completion council judges a claim (runs before it took the plain completion check). */
export const COUNCIL_PATCH = 'vigil-council-v1';
/** Escalation, notifications, the tier ladder and the agent's signal files. */
export const ESCALATION_PATCH = 'vigil-escalation-v1';
/** A rate limit waits as the provider says (runs before it backed off exponentially). Asked where a failed call hit one. */
export const RATE_LIMIT_PATCH = 'vigil-rate-limit-v1';
/** Repository trouble as an outcome or a pause, rollover on history size while the agent runs, backoff trimmed to the caps. */
export const HARDENING_PATCH = 'vigil-hardening-v1';
/** Provider presets: auth pauses, budget warnings, the provider breaker and failover. */
export const PROVIDERS_PATCH = 'vigil-providers-v1';
/** Quality gates, code review and the PRD checklist. */
export const GATES_PATCH = 'vigil-gates-v1';
/** The event store journal. */
export const JOURNAL_PATCH = 'vigil-journal-v1';
/**
 * Inverse: runs started without Vigil's search attributes (input `searchAttributes: false`) upsert
 * none, and only they record the marker (runs before it upserted whatever the input said).
 */
export const SEARCH_ATTRIBUTES_PATCH = 'vigil-search-attributes-v1';
/** Checkpoints and the rewind. */
export const CHECKPOINTS_PATCH = 'vigil-checkpoints-v1';
/** The lean iteration: the inspection and the signal files with the call, prompt parts by reference, one gate pass per activity. */
export const LEAN_PATCH = 'vigil-lean-iteration-v1';
/** The run memory (the run so far in every prompt, the agent's notes). */
export const MEMORY_PATCH = 'vigil-memory-v1';
/** The lean prompt: the run memory and the agent's notes by reference, compact results. */
export const LEAN_PROMPT_PATCH = 'vigil-lean-prompt-v1';
/** A council round and a code review as one activity each (runs before it ran them as workflow code). */
export const ROUNDS_PATCH = 'vigil-round-activity-v1';
/** The gate pass rides with the agent call. */
export const GATES_WITH_CALL_PATCH = 'vigil-gates-with-call-v1';
/** A claim whose check a message interrupted is held for the next boundary (runs before it dropped it). */
export const CLAIMS_HELD_PATCH = 'vigil-claims-held-v1';
/** A run that ends with directives no prompt carried says so. Asked where it ends with some. */
export const UNDELIVERED_DIRECTIVES_PATCH = 'vigil-undelivered-directives-v1';
/** Continue-as-new hands the state over packed. Asked where the run continues as new. */
export const PACKED_CARRY_PATCH = 'vigil-packed-carry-v1';
/** One rule for every completion check (decisions/completion-check.ts), the agent contract, an idle iteration never steps the ladder down. */
export const COMPLETION_RULE_PATCH = 'vigil-completion-rule-v1';
/** A rewind ends a wait for the provider. */
export const PROVIDER_WAIT_REWIND_PATCH = 'vigil-provider-wait-rewind-v1';
/** A message that came while the provider was asked is honoured before the call. */
export const RECHECK_BEFORE_CALL_PATCH = 'vigil-recheck-before-call-v1';
/** A run a failed preparation paused waits for a person before preparing again. Asked there. */
export const PREPARE_WAITS_PATCH = 'vigil-prepare-waits-v1';
/** A signed run is admitted once, at its start (`admitRun`). Asked there, by signed runs. */
export const RUN_ADMISSION_PATCH = 'vigil-run-admission-v1';
/** A directive with an id the run has seen is taken once. Asked where one with an id arrives. */
export const DIRECTIVE_IDS_PATCH = 'vigil-directive-ids-v1';
/** Orchestration does not pay again for a judgement that cannot have changed (decisions/lean-rounds.ts). */
export const LEAN_ROUNDS_PATCH = 'vigil-lean-rounds-v1';
/** A checklist extraction a provider spoiled is asked again. Asked where it is due again. */
export const CHECKLIST_RETRY_PATCH = 'vigil-checklist-retry-v1';
/** A run that ends done delivers its work (`deliverRun`). Asked where it would. */
export const DELIVERY_PATCH = 'vigil-delivery-v1';
/** Parallel streams as child runs (workflows/run/streams.ts). Asked where a run's streams would start. */
export const STREAMS_PATCH = 'vigil-streams-v1';
/** A run that ends releases its sandbox homes (`releaseRunFiles`). Asked as every run ends. */
export const RUN_FILES_PATCH = 'vigil-run-files-released-v1';
/** The memory judge as a run with the event store ends (`judgeMemory`). Asked there, with the memoryJudge knob on. */
export const MEMORY_JUDGE_PATCH = 'vigil-memory-judge-v1';
/** A planner call groups the checklist into the streams' tasks. Asked where one is due. */
export const STREAM_PLANNER_PATCH = 'vigil-stream-planner-v1';
/** A stream tells its run when it waits for a person. Asked by a stream as it starts and by a run as its streams start. */
export const STREAM_WAITS_PATCH = 'vigil-stream-waits-v1';
/** The checklist verifier rides in the council round. Asked by a round that would verify the checklist. */
export const COUNCIL_CHECKLIST_PATCH = 'vigil-council-checklist-v1';

// ---- live patches of 0.5.0 ----

/**
 * Done means done: the run's tests run once on the tree it started with, before the first
 * iteration, as the baseline every later test run is held to (runs before it have none: their
 * verdicts rest on each run's own report); with the acceptanceTests knob, the acceptance tests are
 * sealed at the start, end the run as already_satisfied when they pass on that tree, and are run at
 * every completion check (runs before it had no such knob). Asked once per execution, after the
 * deprecated ones.
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
export const PATCH_IDS = [
  DONE_MEANS_DONE_PATCH,
  JUDGES_SEE_CHANGES_PATCH,
  ACCEPTANCE_FROM_PRD_PATCH,
  STREAM_RECOVERY_PATCH,
  STOP_NOW_PATCH,
  AFFECTED_TESTS_PATCH,
  PAUSE_DEADLINES_PATCH,
  FOLLOW_PR_PATCH,
  ATTEMPTS_COMPARISON_PATCH,
  PR_UPDATE_PATCH,
] as const satisfies readonly string[];
export type PatchId = (typeof PATCH_IDS)[number];

/** A patch whose old path is gone: asked with `deprecatePatch()` until `deletedIn`. */
export interface DeprecatedPatch {
  id: string;
  /** The release that deprecated it and deleted its old path. */
  deprecatedIn: string;
  /** The release that deletes its call. */
  deletedIn: string;
}

const deprecatedIn050 = (id: string): DeprecatedPatch => ({ id, deprecatedIn: '0.5.0', deletedIn: '0.6.0' });

/** Every deprecated patch, in the order an execution of the release before asked for it. */
export const DEPRECATED_PATCHES: readonly DeprecatedPatch[] = [
  COUNCIL_PATCH,
  ESCALATION_PATCH,
  HARDENING_PATCH,
  PROVIDERS_PATCH,
  GATES_PATCH,
  JOURNAL_PATCH,
  CHECKPOINTS_PATCH,
  LEAN_PATCH,
  MEMORY_PATCH,
  LEAN_PROMPT_PATCH,
  ROUNDS_PATCH,
  GATES_WITH_CALL_PATCH,
  CLAIMS_HELD_PATCH,
  COMPLETION_RULE_PATCH,
  PROVIDER_WAIT_REWIND_PATCH,
  RECHECK_BEFORE_CALL_PATCH,
  LEAN_ROUNDS_PATCH,
  SEARCH_ATTRIBUTES_PATCH,
  HOSTS_PATCH,
  RATE_LIMIT_PATCH,
  UNDELIVERED_DIRECTIVES_PATCH,
  PACKED_CARRY_PATCH,
  PREPARE_WAITS_PATCH,
  RUN_ADMISSION_PATCH,
  DIRECTIVE_IDS_PATCH,
  CHECKLIST_RETRY_PATCH,
  DELIVERY_PATCH,
  STREAMS_PATCH,
  RUN_FILES_PATCH,
  STREAM_PLANNER_PATCH,
  STREAM_WAITS_PATCH,
  MEMORY_JUDGE_PATCH,
  COUNCIL_CHECKLIST_PATCH,
].map(deprecatedIn050);

/** The options of one execution (the eras of its live patches would join them). */
export interface Eras {
  /** The run was started with Vigil's search attributes (input `searchAttributes` not false): it upserts them. */
  upsertsSearchAttributes: boolean;
  /** Spread into every repository-bound proxy (workflows/hosts.ts). */
  onHost: { taskQueue?: string };
  /**
   * Done means done (DONE_MEANS_DONE_PATCH): the run records its tests' baseline before the first
   * iteration, and, with the acceptanceTests knob, seals its acceptance tests, ends at once when
   * they already pass and runs them at every completion check.
   */
  doneMeansDone: boolean;
  /** Reviews see the delta, contract errors count on cached reviews, claims are held to the diff (JUDGES_SEE_CHANGES_PATCH). */
  judgesSeeChanges: boolean;
  /**
   * No patch: the raw input's knobs name prPollEvery, which no run started before it has, so an old history replays
   * unchanged. It keys the follow-ups of a followed pull request: the poller, and the reply when an iteration on an
   * event changed nothing (workflows/run/follow-pr.ts).
   */
  prFollowUps: boolean;
}

/**
 * Once per execution, before the first command (continue-as-new starts a fresh one): the patch
 * markers 0.4.0 recorded there, in its order, then the execution's options.
 */
export function decideEras(input: RunInput, raw: unknown = input): Eras {
  for (const id of [
    COUNCIL_PATCH,
    ESCALATION_PATCH,
    HARDENING_PATCH,
    PROVIDERS_PATCH,
    GATES_PATCH,
    JOURNAL_PATCH,
    CHECKPOINTS_PATCH,
    LEAN_PATCH,
    MEMORY_PATCH,
    LEAN_PROMPT_PATCH,
    ROUNDS_PATCH,
    GATES_WITH_CALL_PATCH,
    CLAIMS_HELD_PATCH,
    COMPLETION_RULE_PATCH,
    PROVIDER_WAIT_REWIND_PATCH,
    RECHECK_BEFORE_CALL_PATCH,
    LEAN_ROUNDS_PATCH,
  ])
    deprecatePatch(id);
  const upsertsSearchAttributes = input.searchAttributes !== false;
  if (!upsertsSearchAttributes) deprecatePatch(SEARCH_ATTRIBUTES_PATCH);
  // Everything that touches the repository (or `.vigil/` in it, like the notification ledger, or
  // needs the agent CLIs installed there, like the health check) runs on the run's host.
  const onHost = onRunHost(input);
  const doneMeansDone = patched(DONE_MEANS_DONE_PATCH);
  const judgesSeeChanges = patched(JUDGES_SEE_CHANGES_PATCH);
  // The raw input, before the knobs' defaults are filled in.
  const rawKnobs = raw && typeof raw === 'object' ? (raw as { knobs?: unknown }).knobs : undefined;
  const prFollowUps = typeof (rawKnobs as { prPollEvery?: unknown } | undefined)?.prPollEvery === 'number';
  return { upsertsSearchAttributes, onHost, doneMeansDone, judgesSeeChanges, prFollowUps };
}

// ---- asked where their code runs: each call stands where 0.4.0 asked `patched()` ----

/** A failed call hit a rate limit. */
export const markRateLimit = (): void => deprecatePatch(RATE_LIMIT_PATCH);
/** The run ends with directives no prompt carried. */
export const markUndeliveredDirectives = (): void => deprecatePatch(UNDELIVERED_DIRECTIVES_PATCH);
/** The run continues as new. */
export const markPackedCarry = (): void => deprecatePatch(PACKED_CARRY_PATCH);
/** A run a failed preparation paused waits before preparing again. */
export const markPrepareWaits = (): void => deprecatePatch(PREPARE_WAITS_PATCH);
/** A signed run starts: its admission. */
export const markAdmission = (): void => deprecatePatch(RUN_ADMISSION_PATCH);
/** A directive with an id arrives. */
export const markDirectiveIds = (): void => deprecatePatch(DIRECTIVE_IDS_PATCH);
/** A spoiled checklist extraction is asked again. */
export const markChecklistRetry = (): void => deprecatePatch(CHECKLIST_RETRY_PATCH);
/** A run that ended done delivers its work. */
export const markDelivery = (): void => deprecatePatch(DELIVERY_PATCH);
/** A run with tasks and parallelStreams above 1 starts its streams. */
export const markStreams = (): void => deprecatePatch(STREAMS_PATCH);
/** A run ends, its journal flushed: its run files go. */
export const markRunFiles = (): void => deprecatePatch(RUN_FILES_PATCH);
/** A run that journals, with the memoryJudge knob on, ends: the memory judge. */
export const markMemoryJudge = (): void => deprecatePatch(MEMORY_JUDGE_PATCH);
/** The run's streams have their tasks planned by an agent. */
export const markStreamPlanner = (): void => deprecatePatch(STREAM_PLANNER_PATCH);
/** A stream starts, or a run's streams start: the waits they tell. */
export const markStreamWaits = (): void => deprecatePatch(STREAM_WAITS_PATCH);
/** A council round carries the checklist verifier. */
export const markCouncilChecklist = (): void => deprecatePatch(COUNCIL_CHECKLIST_PATCH);

// ---- live patches asked where their code runs ----

/** A run with the acceptanceFromPrd knob is about to have its acceptance tests written: the era (ACCEPTANCE_FROM_PRD_PATCH). */
export const acceptanceFromPrdEra = (): boolean => patched(ACCEPTANCE_FROM_PRD_PATCH);
/** A stream resumes, or a run's stream ended stopped: the stream-recovery era (STREAM_RECOVERY_PATCH). */
export const streamRecoveryEra = (): boolean => patched(STREAM_RECOVERY_PATCH);
/** A gate pass with tests is prepared: the affected-tests era (AFFECTED_TESTS_PATCH). */
export const affectedTestsEra = (): boolean => patched(AFFECTED_TESTS_PATCH);
/** A pause that waits for a person, with a timer to keep, begins to wait: the era of questions with deadlines (PAUSE_DEADLINES_PATCH). */
export const pauseDeadlinesEra = (): boolean => patched(PAUSE_DEADLINES_PATCH);
/** A done run with deliver=pr and followPr is about to deliver: the era in which it follows its pull request (FOLLOW_PR_PATCH). */
export const followPrEra = (): boolean => patched(FOLLOW_PR_PATCH);
/** Several attempts of a run with attempts were approved: the era of the comparison round (ATTEMPTS_COMPARISON_PATCH). */
export const attemptsComparisonEra = (): boolean => patched(ATTEMPTS_COMPARISON_PATCH);
/** A run begins to wait for its pull request: the era in which a moved base is rebased onto and a rewind is answered (PR_UPDATE_PATCH). */
export const prUpdateEra = (): boolean => patched(PR_UPDATE_PATCH);
/** A run stopped with `stop --now` ends: the era in which it closes first (STOP_NOW_PATCH). */
export const stopNowClosesFirstEra = (): boolean => patched(STOP_NOW_PATCH);
