/**
 * The eras of the run workflow: every `patched()` id of the loop, and the one place where each is
 * asked. Most are decided once per execution, before the first command, in the fixed order of
 * `decideEras` (each era builds on the one before it); three are asked where their code runs
 * (`rateLimitEra`, `undeliveredDirectivesEra`, `packedCarryEra`), and the hosts patch by
 * `onRunHost` (workflows/hosts.ts), last of the per-execution calls.
 *
 * Each id maps to the replay fixtures recorded just before it landed: the table is
 * tests/replay/eras.ts (`ERAS`), typed by `PatchId` below, and tests/unit/architecture.test.ts
 * checks that both list the same ids. A new patch adds its constant here, its call in
 * `decideEras` (or where its code runs), its id to `PATCH_IDS` and its fixture to the table.
 *
 * Workflow code: deterministic, no I/O.
 */
import { patched } from '@temporalio/workflow';
import type { RunInput } from '../../schemas/run.js';
import { HOSTS_PATCH, onRunHost } from '../hosts.js';

/**
 * Runs started before the completion council existed replay with the plain completion check;
 * every newer run (and every run after continue-as-new) takes the council path.
 */
export const COUNCIL_PATCH = 'vigil-council-v1';

/** Runs from before escalation, notifications, the tier ladder and agent signal files replay without them. */
export const ESCALATION_PATCH = 'vigil-escalation-v1';

/** Runs from before rate-limit waits back off exponentially on a rate limit too, as they did. */
export const RATE_LIMIT_PATCH = 'vigil-rate-limit-v1';

/**
 * Runs from before the hardening (repository trouble handled as an outcome or a pause, rollover
 * on history size while the agent runs, backoff trimmed to the caps) replay as they ran.
 */
export const HARDENING_PATCH = 'vigil-hardening-v1';

/** Runs from before provider presets replay without auth pauses and budget warnings. */
export const PROVIDERS_PATCH = 'vigil-providers-v1';

/** Runs from before quality gates, code review and the PRD checklist replay without them. */
export const GATES_PATCH = 'vigil-gates-v1';

/** Runs from before the event store journal replay without it. */
export const JOURNAL_PATCH = 'vigil-journal-v1';

/**
 * Runs started without Vigil's search attributes (input `searchAttributes: false`) upsert none.
 * Only such runs record the marker; every other run, old or new, upserts as it always did.
 */
export const SEARCH_ATTRIBUTES_PATCH = 'vigil-search-attributes-v1';

/** Runs from before checkpoints replay without them (no checkpoint asked of the inspection, no rewind). */
export const CHECKPOINTS_PATCH = 'vigil-checkpoints-v1';

/**
 * Runs from before the lean iteration (the inspection and the signal files as activities of their
 * own, every prompt part in every agent call, one activity per quality gate, transient statuses
 * in the VigilStatus search attribute) replay as they ran. See workflows/lean-iteration.ts.
 */
export const LEAN_PATCH = 'vigil-lean-iteration-v1';

/** Runs from before the run memory (the run so far in every prompt, the agent's notes) replay without it. */
export const MEMORY_PATCH = 'vigil-memory-v1';

/**
 * Runs from before the lean prompt (the rendered run memory and the agent's notes as text in every
 * iteration call and in the activities' results) replay as they ran. See workflows/lean-prompt.ts.
 */
export const LEAN_PROMPT_PATCH = 'vigil-lean-prompt-v1';

/**
 * Runs from before the round activities (a council round and a code review as workflow code, one
 * activity per member, reviewer and step) replay as they ran. See activities/rounds.ts.
 */
export const ROUNDS_PATCH = 'vigil-round-activity-v1';

/**
 * Runs from before the gate pass rode with the agent call (a gated iteration as two activities)
 * replay as they ran. See workflows/lean-iteration.ts.
 */
export const GATES_WITH_CALL_PATCH = 'vigil-gates-with-call-v1';

/**
 * A completion claim (or another council trigger) whose check a pause, stop, rollover or rewind
 * interrupted is held and judged at the next boundary the run reaches, instead of being dropped
 * until the agent claims again. Runs from before it drop the claim, unchanged for replay.
 */
export const CLAIMS_HELD_PATCH = 'vigil-claims-held-v1';

/**
 * A run that ends with human directives no prompt carried says so in its outcome's notes (and so
 * in the final notification). Runs from before it end without the note, unchanged for replay.
 */
export const UNDELIVERED_DIRECTIVES_PATCH = 'vigil-undelivered-directives-v1';

/** Runs from before the packed carry hand the next execution their state as is (`state`, not `packedState`). */
export const PACKED_CARRY_PATCH = 'vigil-packed-carry-v1';

/**
 * One rule for every completion check (decisions/completion-check.ts): an empty diff is refused
 * first, by the evidence gate; any check that does not approve — a tool gate, the code review,
 * the checklist, the council — is a rejected evaluation for the safety valves; a review or a
 * checklist verification of a tree already judged is not asked again; a reviewing agent's
 * answer without its role's line is a contract error, not a failing gate (decisions/contract.ts);
 * an idle iteration never steps the tier ladder down. Runs from before it replay as they ran.
 */
export const COMPLETION_RULE_PATCH = 'vigil-completion-rule-v1';

/**
 * A rewind asked for while the run waits for its provider (a rate limit, an open circuit breaker)
 * ends the wait, as a pause, a stop and a rollover do. Runs from before it held the rewind
 * through the wait and a whole agent call.
 */
export const PROVIDER_WAIT_REWIND_PATCH = 'vigil-provider-wait-rewind-v1';

/**
 * A stop, pause, rewind or rollover that arrived while the provider was being asked (the breaker
 * activity, a failover health check, a wait) is honoured before the agent call starts; a call the
 * breaker let out is released, not made. Runs from before it started the call anyway.
 */
export const RECHECK_BEFORE_CALL_PATCH = 'vigil-recheck-before-call-v1';

/**
 * A run paused because its repository could not be prepared (before its first iteration: a
 * repository gone, a committed `.vigil` link) waits for a person before preparing again, as every
 * other pause does. Runs from before it prepared again at once, paused, in a loop of activities.
 */
export const PREPARE_WAITS_PATCH = 'vigil-prepare-waits-v1';

/**
 * A signed run is admitted once, at its start, by an activity of its own (`admitRun`: expiry, the
 * PRD's and the knobs' digests, a nonce no other run used) and ends `agent_not_runnable` when
 * refused. Only signed runs ask. Signed runs from before it went straight to their preparation.
 */
export const RUN_ADMISSION_PATCH = 'vigil-run-admission-v1';

/**
 * A directive that comes with an id the run has seen (a resend of one whose update went
 * unanswered) is acknowledged and not queued again. Runs from before it queued every directive.
 */
export const DIRECTIVE_IDS_PATCH = 'vigil-directive-ids-v1';

/**
 * Orchestration does not pay again for a judgement that cannot have changed
 * (workflows/decisions/lean-rounds.ts): the early check convenes only on a change that could flip
 * a verdict, a passing review stands for later trees that differ only in reviewed files nobody
 * flagged, and the checklist verifier asks only about items whose files changed. Runs from before
 * it convened, reviewed and verified everything on every green tree.
 */
export const LEAN_ROUNDS_PATCH = 'vigil-lean-rounds-v1';

/**
 * A PRD checklist extraction a provider's trouble spoiled (a rate limit, an overload, an auth
 * error, a hung call) is asked again at a later boundary, after the wait, up to three times; then
 * a supervised run pauses and asks. Runs from before it went on without a checklist at once.
 */
export const CHECKLIST_RETRY_PATCH = 'vigil-checklist-retry-v1';

/**
 * A run that ends done commits its work on its run branch (knob `deliver`, activity `deliverRun`)
 * before its outcome is recorded. Runs from before it left the work uncommitted.
 */
export const DELIVERY_PATCH = 'vigil-delivery-v1';

/**
 * A run split into tasks with parallelStreams above 1 runs each task as a child run in a worktree
 * of its own and merges them before its own loop (workflows/run/streams.ts). Asked only by such
 * runs: a run with one stream records nothing new. Runs from before it ran as one stream.
 */
export const STREAMS_PATCH = 'vigil-streams-v1';

/**
 * A run that ends (any outcome) removes the files its sandboxed calls kept in VIGIL_HOME (each
 * provider's sandbox home, with its copy of the CLI's credentials; the reviewing calls' signal
 * folders) with the activity `releaseRunFiles`, after its journal is flushed. Runs from before it
 * left them.
 */
export const RUN_FILES_PATCH = 'vigil-run-files-released-v1';

/**
 * A run that ends with the event store on and the memoryJudge knob on asks the memory judge
 * (activity `judgeMemory`, role `memory`; docs/memory.md, Judgement) once its journal is flushed,
 * before its sandbox homes go. Asked only by such runs. Runs from before it left the memory as
 * the deterministic consolidation made it.
 */
export const MEMORY_JUDGE_PATCH = 'vigil-memory-judge-v1';

/**
 * A run split into parallel streams without a person's task list asks one planner call
 * (taskPlanner=agent, role `planner`) to group the checklist's items into tasks with
 * dependencies, instead of taking each item as a task. Asked only where such a call is due.
 */
export const STREAM_PLANNER_PATCH = 'vigil-stream-planner-v1';

/**
 * A stream (a child run) tells its run when it starts or stops waiting for a person; the run
 * shows it, a resume of the run that is not paused reaches its waiting streams, and a rewind of
 * the run waits until its streams are over. Asked by a stream as it starts and by a run as its
 * streams start.
 */
export const STREAM_WAITS_PATCH = 'vigil-stream-waits-v1';

/**
 * A claim whose PRD checklist must be verified again rides the verifier in the council round (one
 * activity): asked first, and in the members' batched call where the provider can (its main agent
 * runs the verifier, then the members only when nothing blocks), so a claim the council refuses
 * costs one call. Asked by a council round that would verify the checklist, and only there.
 */
export const COUNCIL_CHECKLIST_PATCH = 'vigil-council-checklist-v1';

/** Every patch id of the run workflow, in the order an execution first asks for it. */
export const PATCH_IDS = [
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
  SEARCH_ATTRIBUTES_PATCH,
  HOSTS_PATCH,
  RATE_LIMIT_PATCH,
  UNDELIVERED_DIRECTIVES_PATCH,
  PACKED_CARRY_PATCH,
  PREPARE_WAITS_PATCH,
  RUN_ADMISSION_PATCH,
  DIRECTIVE_IDS_PATCH,
  LEAN_ROUNDS_PATCH,
  CHECKLIST_RETRY_PATCH,
  DELIVERY_PATCH,
  STREAMS_PATCH,
  RUN_FILES_PATCH,
  STREAM_PLANNER_PATCH,
  STREAM_WAITS_PATCH,
  MEMORY_JUDGE_PATCH,
  COUNCIL_CHECKLIST_PATCH,
] as const;
export type PatchId = (typeof PATCH_IDS)[number];

/** The eras of one execution, and the options that put a proxy on the run's host. */
export interface Eras {
  councilEra: boolean;
  escalationEra: boolean;
  hardeningEra: boolean;
  providersEra: boolean;
  gatesEra: boolean;
  journalEra: boolean;
  checkpointsEra: boolean;
  leanEra: boolean;
  memoryEra: boolean;
  leanPromptEra: boolean;
  roundsEra: boolean;
  gatesWithCallEra: boolean;
  claimsHeldEra: boolean;
  completionRuleEra: boolean;
  providerWaitRewindEra: boolean;
  recheckBeforeCallEra: boolean;
  /** Judgements that still hold are not paid for again (LEAN_ROUNDS_PATCH). */
  leanRoundsEra: boolean;
  /** Runs started without Vigil's search attributes upsert none (SEARCH_ATTRIBUTES_PATCH). */
  upsertsSearchAttributes: boolean;
  /** Spread into every repository-bound proxy (workflows/hosts.ts). */
  onHost: { taskQueue?: string };
}

/**
 * The eras of this execution, decided once, before the first command (continue-as-new starts a
 * fresh one): the same `patched()` calls in the same order, each era building on the one before.
 */
export function decideEras(input: RunInput): Eras {
  const councilEra = patched(COUNCIL_PATCH);
  const escalationEra = councilEra && patched(ESCALATION_PATCH);
  // Decided once per execution, before the first command (continue-as-new starts a fresh one).
  const hardeningEra = escalationEra && patched(HARDENING_PATCH);
  const providersEra = hardeningEra && patched(PROVIDERS_PATCH);
  const gatesEra = providersEra && patched(GATES_PATCH);
  const journalEra = gatesEra && patched(JOURNAL_PATCH);
  const checkpointsEra = journalEra && patched(CHECKPOINTS_PATCH);
  const leanEra = journalEra && patched(LEAN_PATCH);
  const memoryEra = checkpointsEra && patched(MEMORY_PATCH);
  const leanPromptEra = memoryEra && leanEra && patched(LEAN_PROMPT_PATCH);
  const roundsEra = leanPromptEra && patched(ROUNDS_PATCH);
  const gatesWithCallEra = roundsEra && patched(GATES_WITH_CALL_PATCH);
  const claimsHeldEra = gatesEra && patched(CLAIMS_HELD_PATCH);
  const completionRuleEra = claimsHeldEra && patched(COMPLETION_RULE_PATCH);
  const providerWaitRewindEra = checkpointsEra && providersEra && patched(PROVIDER_WAIT_REWIND_PATCH);
  const recheckBeforeCallEra = providersEra && patched(RECHECK_BEFORE_CALL_PATCH);
  const leanRoundsEra = completionRuleEra && roundsEra && patched(LEAN_ROUNDS_PATCH);
  const upsertsSearchAttributes = input.searchAttributes !== false || !patched(SEARCH_ATTRIBUTES_PATCH);
  // Everything that touches the repository (or `.vigil/` in it, like the notification ledger, or
  // needs the agent CLIs installed there, like the health check) runs on the run's host.
  const onHost = onRunHost(input);
  return {
    councilEra,
    escalationEra,
    hardeningEra,
    providersEra,
    gatesEra,
    journalEra,
    checkpointsEra,
    leanEra,
    memoryEra,
    leanPromptEra,
    roundsEra,
    gatesWithCallEra,
    claimsHeldEra,
    completionRuleEra,
    providerWaitRewindEra,
    recheckBeforeCallEra,
    leanRoundsEra,
    upsertsSearchAttributes,
    onHost,
  };
}

/** Asked where a failed call hit a rate limit, and only then (RATE_LIMIT_PATCH). */
export const rateLimitEra = (): boolean => patched(RATE_LIMIT_PATCH);

/** Asked where the run ends with directives no prompt carried, and only then (UNDELIVERED_DIRECTIVES_PATCH). */
export const undeliveredDirectivesEra = (): boolean => patched(UNDELIVERED_DIRECTIVES_PATCH);

/** Asked where the run continues as new (PACKED_CARRY_PATCH). */
export const packedCarryEra = (): boolean => patched(PACKED_CARRY_PATCH);

/** Asked where a paused run would prepare its repository again, and only then (PREPARE_WAITS_PATCH). */
export const prepareWaitsEra = (): boolean => patched(PREPARE_WAITS_PATCH);

/** Asked where a signed run starts, and only then (RUN_ADMISSION_PATCH). */
export const admissionEra = (): boolean => patched(RUN_ADMISSION_PATCH);

/** Asked where a directive with an id arrives, and only then (DIRECTIVE_IDS_PATCH). */
export const directiveIdsEra = (): boolean => patched(DIRECTIVE_IDS_PATCH);

/** Asked where a spoiled checklist extraction is due again, and only then (CHECKLIST_RETRY_PATCH). */
export const checklistRetryEra = (): boolean => patched(CHECKLIST_RETRY_PATCH);

/** Asked where a run that ended done would deliver its work, and only then (DELIVERY_PATCH). */
export const deliveryEra = (): boolean => patched(DELIVERY_PATCH);

/** Asked where a run with tasks and parallelStreams above 1 would start its streams, and only then (STREAMS_PATCH). */
export const streamsEra = (): boolean => patched(STREAMS_PATCH);

/** Asked as a run ends, after its journal is flushed (RUN_FILES_PATCH). */
export const runFilesEra = (): boolean => patched(RUN_FILES_PATCH);

/** Asked as a run that journals, with the memoryJudge knob on, ends, after its journal is flushed (MEMORY_JUDGE_PATCH). */
export const memoryJudgeEra = (): boolean => patched(MEMORY_JUDGE_PATCH);

/** Asked where a run's parallel streams would have their tasks planned by an agent, and only then (STREAM_PLANNER_PATCH). */
export const streamPlannerEra = (): boolean => patched(STREAM_PLANNER_PATCH);

/** Asked by a stream as it starts and by a run as its streams start, and only there (STREAM_WAITS_PATCH). */
export const streamWaitsEra = (): boolean => patched(STREAM_WAITS_PATCH);

/** Asked by a council round whose claim needs the checklist verified again, and only there (COUNCIL_CHECKLIST_PATCH). */
export const councilChecklistEra = (): boolean => patched(COUNCIL_CHECKLIST_PATCH);
