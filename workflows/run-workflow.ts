/**
 * The `vigilRun` workflow: one durable run of a coding agent against a repository.
 *
 * Each pass of the loop: human messages first (stop, pause), then caps, then an iteration:
 * phase and tier, prompt, the agent activity, repository inspection, convergence tracking and the
 * completion check; a failed iteration backs off on a durable timer that PAUSE and STOP interrupt.
 * Judgement lives in `decisions/`; side effects in activities; this file only orchestrates.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  ActivityFailure,
  allHandlersFinished,
  ActivityCancellationType,
  patched,
  getExternalWorkflowHandle,
} from '@temporalio/workflow';
import type { SignalDefinition, UpdateDefinition } from '@temporalio/common';
import type * as activities from '../activities/index.js';
import { blankAgentResult, FAILURE_TYPES, PROMPT_PART_MISSING, type AgentResult, type AgentSignals, type PromptInput, type RepoSnapshot, type RunGatesResult } from '../schemas/activities.js';
import { parseMessage, type MessageName } from '../schemas/messages.js';
import {
  LIMITS,
  OUTCOME_EXIT_CODES,
  RunInputSchema,
  RunStateSchema,
  type InvalidMessage,
  type IterationRecord,
  type CheckCause,
  type ContractBreach,
  type Outcome,
  type OutcomeStatus,
  type Phase,
  type RunInput,
  type RunState,
  type TestRunRecord,
  type Tier,
} from '../schemas/run.js';
import type { NotifyEvent } from '../schemas/notify.js';
import type { ProviderKnob } from '../schemas/knobs.js';
import { SA_ITERATION, SA_PROVIDER, SA_REPO, SA_STATUS } from '../schemas/search-attributes.js';
import type { RunStatus, StatusSnapshot } from '../schemas/status.js';
import { backoffSeconds } from './decisions/backoff.js';
import { addUsage, budgetExceeded, budgetWarning, costOf, remainingBudget, spendAfterCall } from './decisions/budget.js';
import { chooseAgent } from './decisions/agent-choice.js';
import { failoverChain, failOverOnRateLimit, knobsFor } from './decisions/failover.js';
import { providerOutcome } from './decisions/provider-outcome.js';
import { failureFingerprint, trackDeadLetter } from './decisions/dead-letter.js';
import { breakerWorkflowId, INVALID_BREAKER_ASK, reportSignal } from './provider-breaker-messages.js';
import { breakerTrip, safetyValve, trackDoneSignal } from './decisions/breaker.js';
import { shouldConvene, type ConveneTrigger } from './decisions/convene.js';
import { describeBlock } from './decisions/evidence.js';
import { checkEvidence, describeRejection, evidenceRecord, runCouncilRound, type CouncilDeps, type EvidenceInput } from '../rounds/council-round.js';
import { escalate, recordNotification, sendNotification } from './escalation.js';
import { initialLadder, LEVEL_TIER, observeLadder } from './decisions/tier-ladder.js';
import { describeProxies, evaluateUncertainty, noChangeMin, type Proxies } from './decisions/uncertainty.js';
import { verdictSummary } from './ui.js';
import { onRunHost } from './hosts.js';
import { checkCaps, waitWithinCaps } from './decisions/caps.js';
import { onRepositoryTrouble, REPOSITORY_FAILURE_TYPES, repositoryTrouble } from './decisions/repository.js';
import { describeRefusal, judgeCompletion } from './decisions/completion.js';
import { afterRefusal, emptyDiffRefusal, recordCheck } from './decisions/completion-check.js';
import { contractFindings, councilBreaches, describeBreach, reviewBreaches, trackContract, verifierBreach } from './decisions/contract.js';
import { trackConvergence } from './decisions/convergence.js';
import { initialRunState } from './initial-state.js';
import { phaseFor, tierFor } from './decisions/phase.js';
import { directiveRefusal } from './decisions/directives.js';
import { interruptedNote, undeliveredNote } from './decisions/undelivered-directives.js';
import {
  budgetSignal,
  waiveSignal,
  waiveUpdate,
  budgetUpdate,
  forceReviewSignal,
  forceReviewUpdate,
  inputSignal,
  inputUpdate,
  pauseSignal,
  pauseUpdate,
  resumeSignal,
  resumeUpdate,
  callCancelQuery,
  statusQuery,
  stopSignal,
  stopUpdate,
  type CallCancel,
  type MessageAck,
} from './messages.js';
import { currentDetails } from './ui.js';
import type { RunEvent } from '../schemas/events.js';
import { appendMemory, contextClearMemory, directiveMemory, iterationMemory, memoryFromEvent, memorySummary, promptMemory, refusalMemory } from './decisions/memory.js';
import type { MemoryEntry } from '../schemas/memory.js';
import { ackProjection, appendEvent, councilEvent, escalationEvent, gateEvent, iterationEvent, messageEvent, outcomeEvent, reviewEvent } from './decisions/journal.js';
import { blockingFailures, checklistGateResult, describeGateRefusal, gateFindingsForPrompt, gateGroups, gateLabel, gateLine, gatesDue, isToolGate, mergeLatest, reviewGateResult, stuckReason, trackGate, type GateAction } from './decisions/gates.js';
import { builderChecklist, checklistExtractionPrompt, checklistVerifierPrompt, maskedChecklist, selectHeldOut, waive as waiveItem } from './decisions/checklist.js';
import { reviewSummaryForPrompt } from './decisions/review.js';
import { runToolGates } from './quality-gates.js';
import { installRewind } from './rewind.js';
import { callKilledByRun, tellRunningCall } from './running-call.js';
import { addCheckpoint, checkpointRows, planCheckpoint, sealCheckpoint } from './decisions/checkpoints.js';
import { runReviewRound } from '../rounds/review-round.js';
import { packValue, unpackValue, type Json } from './carried-state.js';
import { carriedGates, PromptParts, runGatesPass, testRecord } from './lean-iteration.js';
import { agentResultOf, MemoryParts } from './lean-prompt.js';
import { keepContinuity, keepLearnings } from './decisions/prompt-memory.js';
import { MAX_CHECKLIST_ITEMS, type GateName, type GateResult, type GateTrack, type ReviewRecord } from '../schemas/gates.js';

// Workflow time: Date in the workflow sandbox is deterministic (frozen at the workflow task start).
const nowMs = (): number => Date.now(); // deterministic: workflow clock
const nowIso = (): string => new Date(nowMs()).toISOString(); // deterministic: workflow clock

const initialState = (): RunState => initialRunState(nowMs());

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

/** A gate's failure streak that asks for something: the stuck-gate abort, a pause or an escalation. */
type GateStreak = { action: Exclude<GateAction, 'none' | 'block'>; track: GateTrack };

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

/** The state a continue-as-new carried in (null: the run starts here). A packed state that does not unpack to a valid one fails the run, as a bad input does. */
function carriedState(input: RunInput): RunState | null {
  if (input.state) return RunStateSchema.parse(input.state);
  if (!input.packedState) return null;
  let unpacked: unknown;
  try {
    unpacked = unpackValue(input.packedState);
  } catch (err) {
    throw ApplicationFailure.nonRetryable(`invalid run input: packedState: ${err instanceof Error ? err.message : String(err)}`, 'InvalidRunInput');
  }
  const parsed = RunStateSchema.safeParse(unpacked);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(the state)'}: ${i.message}`);
    throw ApplicationFailure.nonRetryable(`invalid run input: packedState is not a run state: ${issues.slice(0, 5).join('; ')}${issues.length > 5 ? `; and ${issues.length - 5} more` : ''}`, 'InvalidRunInput');
  }
  return parsed.data;
}

/** The tests as a handoff states them: no runner and an inconclusive run are not failures. */
function handoffTestsLine(t: TestRunRecord): string {
  if (t.runner === 'none') return `no test runner found (iteration ${t.iteration})`;
  if (t.verdict === 'inconclusive') return `inconclusive at iteration ${t.iteration}${t.reason ? ` (${t.reason})` : ''}; log ${t.logPath}`;
  return `${t.passed ? 'passing' : t.timedOut ? 'timed out' : `failing (exit ${t.exitCode})`} at iteration ${t.iteration}; log ${t.logPath}`;
}

/** History size past which a run rolls over at once, even mid agent call (Temporal's hard limit is 50 MB). */
const EMERGENCY_HISTORY_BYTES = 20 * 1024 * 1024;

/** Drift reports (DRIFT_DETECTED) in a run after which the agent gets a fresh session. */
const DRIFT_CONTEXT_CLEAR = 3;

/** Exit code recorded for an iteration whose agent call never completed on any worker. */
const AGENT_CALL_LOST = 125;

const tail = (s: string, n: number): string => (s.length <= n ? s : s.slice(s.length - n));

export async function vigilRun(rawInput: RunInput): Promise<Outcome> {
  const parsed = RunInputSchema.safeParse(rawInput);
  if (!parsed.success) {
    throw ApplicationFailure.nonRetryable(`invalid run input: ${parsed.error.message}`, 'InvalidRunInput');
  }
  const input = parsed.data;
  const knobs = input.knobs;
  /** Whether this execution continues a run (carries its state) rather than starting it. */
  const continued = input.state !== undefined || input.packedState !== undefined;
  const state: RunState = carriedState(input) ?? initialState();
  const info = workflowInfo();
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
  /** The longest gate pass a call may carry (its groups one after the other, the suite among them). */
  const carriedGatesSeconds = gatesWithCallEra ? gateGroups(knobs).length * knobs.gateTimeoutSeconds + knobs.testTimeoutSeconds : 0;
  /** What the activities that read the agent's notes are asked for (lean prompt: references, not text). */
  const notesAsk = memoryEra ? { notes: true, ...(leanPromptEra ? { notesByRef: true } : {}) } : {};
  /** Events are journaled and projected only when the run asks for the store: no extra activity otherwise. */
  const journaling = journalEra && knobs.eventStore;
  const upsertsSearchAttributes = input.searchAttributes !== false || !patched(SEARCH_ATTRIBUTES_PATCH);
  // Everything that touches the repository (or `.vigil/` in it, like the notification ledger, or
  // needs the agent CLIs installed there, like the health check) runs on the run's host.
  const onHost = onRunHost(input);

  // ---- activity proxies, one per kind so a hung tool never shares a timeout with the agent ----
  const agent = proxyActivities<typeof activities>({
    ...onHost,
    // The activity enforces the agent timeout itself (kills the tree, exit 124); this is a backstop
    // (with the gate pass the call may carry).
    startToCloseTimeout: (knobs.agentTimeoutSeconds + 120 + carriedGatesSeconds) * 1000,
    // Liveness bound: a worker that dies mid-call is detected this fast and the call retried.
    heartbeatTimeout: knobs.heartbeatTimeoutSeconds * 1000,
    // STOP --now waits until the agent's process tree is really gone.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // Retried only on infrastructure loss (worker death, heartbeat timeout): an agent that exits
    // non-zero returns a result, it does not throw.
    // After the last attempt the iteration counts as failed (the workflow backs off and goes on).
    retry: { maximumAttempts: 5, initialInterval: '2s', nonRetryableErrorTypes: [FAILURE_TYPES.agentNotRunnable] },
  });
  const repo = proxyActivities<typeof activities>({
    ...onHost,
    // git inspection of a working tree: seconds normally, minutes for huge repositories.
    startToCloseTimeout: '10m',
    // Liveness: the activities beat every second, so a dead worker costs seconds, not 10 minutes.
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    retry: { maximumAttempts: 5, initialInterval: '1s', nonRetryableErrorTypes: [FAILURE_TYPES.notAGitRepository] },
  });
  const tests = proxyActivities<typeof activities>({
    ...onHost,
    startToCloseTimeout: (knobs.testTimeoutSeconds + 120) * 1000,
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 3, initialInterval: '1s' },
  });

  const members = proxyActivities<typeof activities>({
    ...onHost,
    // A member that does not answer within its timeout is killed by the activity and counts as
    // REJECT; this bound is the backstop.
    startToCloseTimeout: (knobs.councilMemberTimeoutSeconds + 60) * 1000,
    heartbeatTimeout: knobs.heartbeatTimeoutSeconds * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // One re-run on infrastructure loss; after that the member's vote is lost (REJECT).
    retry: { maximumAttempts: 2, initialInterval: '2s', nonRetryableErrorTypes: [FAILURE_TYPES.agentNotRunnable] },
  });
  const councilDeps: CouncilDeps = { repo, members };
  const rounds = proxyActivities<typeof activities>({
    ...onHost,
    // A round: its evidence or diff, its members in parallel, a re-run and a devil's advocate, each
    // call bounded by the member timeout inside the activity; this is the backstop.
    startToCloseTimeout: (3 * (knobs.councilMemberTimeoutSeconds + 60) + 600) * 1000,
    // The calls beat while they run, the git steps every second.
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // A retried round re-attaches to its calls (or collects their answers): no member runs twice.
    retry: { maximumAttempts: 3, initialInterval: '2s', nonRetryableErrorTypes: [FAILURE_TYPES.notAGitRepository] },
  });
  const checks = proxyActivities<typeof activities>({
    ...onHost,
    // Probing a CLI's --help: seconds, up to 30 s for slow ones.
    startToCloseTimeout: '90s',
    retry: { maximumAttempts: 2, initialInterval: '1s' },
  });
  const gateActs = proxyActivities<typeof activities>({
    ...onHost,
    // The activity bounds its tools by gateTimeoutSeconds (then the gate is inconclusive); this is a backstop.
    startToCloseTimeout: (knobs.gateTimeoutSeconds + 60) * 1000,
    heartbeatTimeout: Math.max(knobs.heartbeatTimeoutSeconds, 10) * 1000,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 3, initialInterval: '1s' },
  });
  const store = proxyLocalActivities<typeof activities>({
    // A local activity: one marker event per projection. The store answers within seconds or
    // the projection waits for the next boundary (the events stay in the journal meanwhile).
    startToCloseTimeout: '15s',
    retry: { maximumAttempts: 2, initialInterval: '1s' },
  });
  const breakers = proxyActivities<typeof activities>({
    // On the workflow's own queue, whatever the run's host: the activity starts the breaker's
    // workflow on the queue it runs on, and host queues serve activities only.
    // One update-with-start round trip to the provider's breaker workflow (a worker must pick up
    // the breaker's task too); a breaker that cannot be reached is no reason to stop the run.
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 5, initialInterval: '1s', maximumInterval: '10s', nonRetryableErrorTypes: [INVALID_BREAKER_ASK] },
  });
  const people = proxyActivities<typeof activities>({
    ...onHost,
    // Notifications. A notification retries inside the activity (4 attempts,
    // each bounded by notifyTimeoutSeconds); this bound keeps a dead channel from holding the run.
    startToCloseTimeout: (knobs.notifyTimeoutSeconds * 4 + 20) * 1000,
    // The activity heartbeats between attempts: a dead worker is noticed within one request's bound.
    heartbeatTimeout: (knobs.notifyTimeoutSeconds + 10) * 1000,
    retry: { maximumAttempts: 3, initialInterval: '2s' },
  });

  // ---- transient (per execution) state ----
  let status: RunStatus = state.iteration === 0 ? 'starting' : 'running';
  let stopRequest: { reason: string; by: string; now: boolean } | null = null;
  let agentScope: CancellationScope | null = null;
  /** The running agent call carries a gate pass: a PAUSE or STOP cancels it (the call finishes its agent). */
  let callCarriesGates = false;
  /** The running pass of the tool gates (lean runs): a PAUSE or STOP cancels it. */
  let gatesScope: CancellationScope | null = null;
  const promptParts = new PromptParts();
  const memoryParts = new MemoryParts();
  let backoffUntil: string | null = null;
  let phase: Phase | null = state.recentIterations.at(-1)?.phase ?? null;
  let tier: Tier | null = state.recentIterations.at(-1)?.tier ?? null;
  let outcome: Outcome | null = null;
  /** While the provider's breaker keeps the run waiting. */
  let providerWait: { provider: string; until: string; reason: string } | null = null;
  let breakerAsks = 0;
  /** Set when messages pushed the history near Temporal's limit: roll over at once. */
  let rolloverNow = false;
  const published = { status: '', iteration: -1 };

  const visibleStatus = (): RunStatus => (state.pause && status !== 'finished' ? 'paused' : status);
  /** Directives the running call's prompt carries: delivered, no longer waiting. */
  let directivesInCall = 0;

  const snapshot = (): StatusSnapshot => ({
    workflowId: info.workflowId,
    runId: info.runId,
    // A pause asked for during a call: the call finishes first (the search attribute says paused).
    status: visibleStatus() === 'paused' && agentScope !== null ? 'pausing' : visibleStatus(),
    iteration: state.iteration,
    maxIterations: knobs.maxIterations,
    phase,
    tier,
    paused: state.pause !== null,
    pause: state.pause,
    consecutiveFailures: state.consecutiveFailures,
    consecutiveNoChange: state.convergence.consecutiveNoChange,
    recentHashes: state.convergence.recentHashes,
    runStartSha: state.runStart?.sha ?? null,
    pendingDirectives: state.pendingDirectives.length - directivesInCall,
    directivesInCall,
    backoffUntil,
    agentRunning: agentScope !== null,
    lastIteration: state.recentIterations.at(-1) ?? null,
    recentIterations: state.recentIterations,
    lastCompletion: state.lastCompletion,
    outcome: outcome ? { status: outcome.status, reason: outcome.reason, exitCode: outcome.exitCode, ...(outcome.notes.length ? { notes: outcome.notes } : {}) } : null,
    invalidMessages: state.invalidMessages,
    invalidMessageCount: state.invalidMessageCount,
    generations: state.generations,
    repoPath: input.repoPath,
    prdPath: input.prdPath,
    host: input.host ?? null,
    doneSignals: state.convergence.doneSignals,
    totalDoneSignals: state.convergence.totalDoneSignals,
    breaker: councilEra ? breakerTrip(state.convergence, knobs.stagnationLimit) : null,
    council: {
      enabled: councilEra && knobs.councilEnabled,
      rounds: state.council.rounds,
      verdicts: state.council.verdicts,
      forceReviewPending: state.council.forceReview !== null,
      heldClaimIteration: state.council.heldClaim?.iteration ?? null,
      heldClaimTrigger: state.council.heldClaim?.trigger ?? null,
    },
    lastEvidence: state.lastEvidence,
    lastTests: state.lastTests,
    autonomyMode: knobs.autonomyMode,
    uncertainty: { ...state.uncertainty, enabled: escalationEra && knobs.uncertaintyEscalation, noChangeMin: noChangeMin(knobs) },
    ladder: escalationEra && knobs.tierLadder ? state.ladder : null,
    escalations: state.escalations,
    notifications: state.notifications,
    driftReports: state.driftReports,
    latestHandoff: state.latestHandoff,
    spend: state.spend,
    budgetUsd: state.budgetUsd ?? knobs.budgetUsd,
    providerWait,
    deadLetters: state.deadLetter.entries,
    ...(checkpointsEra ? { checkpoints: { kept: knobs.checkpointsKept, list: checkpointRows(state), rewinds: state.checkpoints.rewinds, lastTree: state.convergence.lastHash } } : {}),
    ...(memoryEra ? { memory: memorySummary(state.memory) } : {}),
    ...(completionRuleEra ? { checks: state.checks, contract: state.contract } : {}),
    ...(journaling ? { eventStore: { stored: state.journal.stored, pending: state.journal.pending.length, dropped: state.journal.dropped, problem: state.journal.problem } } : {}),
    ...(gatesEra
      ? {
          quality: {
            gates: state.gates.latest,
            failing: Object.fromEntries(Object.entries(state.gates.tracks).filter(([, t]) => (t?.consecutiveFailures ?? 0) > 0).map(([g, t]) => [g, t?.consecutiveFailures ?? 0])),
            lastReview: state.gates.reviews.at(-1) ?? null,
            reviewRounds: state.gates.reviewRounds,
            checklist: state.gates.checklist ? maskedChecklist(state.gates.checklist) : null,
            checklistProblem: state.gates.checklistProblem,
            lastRefusal: state.gates.lastRefusal,
          },
        }
      : {}),
  });

  /** Refreshes the UI details and the search attributes that changed. */
  const publish = (): void => {
    const shown = visibleStatus();
    // Lean runs keep the short-lived gating/reviewing steps out of the search attribute (an upsert event each).
    const saStatus = outcome ? outcome.status : leanEra && (shown === 'gating' || shown === 'reviewing') ? 'running' : shown;
    const updates = [];
    if (published.status !== saStatus) updates.push({ key: SA_STATUS, value: saStatus });
    if (published.iteration !== state.iteration) updates.push({ key: SA_ITERATION, value: state.iteration });
    if (updates.length && upsertsSearchAttributes) upsertSearchAttributes(updates);
    published.status = saStatus;
    published.iteration = state.iteration;
    setCurrentDetails(currentDetails(snapshot()));
  };

  /** Journals one run event for the store (nothing when the run has no event store). */
  const recordEvent = (event: RunEvent): void => {
    if (journaling) state.journal = appendEvent(state.journal, event, info.runId, nowIso());
    // The decisions an event stands for (council, gates, review, escalation, tier) join the run memory.
    const remembered = memoryEra ? memoryFromEvent(event) : null;
    if (remembered) remember(remembered);
  };

  /** Adds an entry to the run memory (memory era), bounded. */
  const remember = (entry: MemoryEntry): void => {
    if (memoryEra) state.memory = appendMemory(state.memory, entry);
  };

  /** The iteration just inspected, with the agent's SUMMARY, joins the run memory; its CONTINUITY.md is kept. */
  const rememberIteration = (result: AgentResult, snap: RepoSnapshot, signals: AgentSignals): void => {
    if (!memoryEra) return;
    const record = state.recentIterations.at(-1);
    const tests = state.lastTests && state.lastTests.treeHash === snap.treeHash ? (state.lastTests.verdict ?? (state.lastTests.passed ? 'pass' : 'fail')) : null;
    remember(
      iterationMemory({
        iteration: state.iteration,
        phase: record?.phase ?? null,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        changed: record?.changed ?? false,
        paths: snap.sinceLast?.paths ?? null,
        lines: snap.sinceLast?.lines ?? null,
        filesChangedSinceStart: snap.changedCount,
        insertions: snap.insertions,
        deletions: snap.deletions,
        tests,
        claimed: result.claimed,
        provider: result.provider,
        summary: signals.summary,
      }),
    );
    state.memory = keepContinuity(state.memory, signals, leanPromptEra);
  };

  /** Projects the journaled events into the store; a store that is down leaves them for the next boundary. */
  const journalPending = (): boolean => journaling && state.journal.pending.length > 0;
  const flushJournal = async (): Promise<void> => {
    if (!journalPending()) return;
    const batch = state.journal.pending;
    try {
      const r = await store.projectEvents({ workflowId: info.workflowId, events: batch });
      state.journal = ackProjection(state.journal, r);
      if (r.problem) log.warn('event store: events kept for later', { pending: state.journal.pending.length, problem: r.problem });
    } catch (err) {
      state.journal = { ...state.journal, problem: (err instanceof Error ? err.message : String(err)).slice(0, 500) };
      log.warn('event store projection failed; events kept for later', { pending: state.journal.pending.length });
    }
  };

  /** What cancelling the running agent call means: kill the agent, or only skip the gate pass it carries. */
  const callCancelMeant = (): CallCancel => (stopRequest?.now || rewindPending() || rolloverNow || CancellationScope.current().consideredCancelled ? 'kill' : 'skipGates');
  /** Cancels the running agent call, and tells the worker that hosts it at once (workflows/running-call.ts). */
  const cancelAgentCall = (): void => {
    if (!agentScope) return;
    agentScope.cancel();
    tellRunningCall(callCancelMeant());
  };

  const ack = (changed: boolean, message: string): MessageAck => ({
    changed,
    message,
    status: visibleStatus(),
    iteration: state.iteration,
    paused: state.pause !== null,
  });

  // ---- message handling: one implementation per message, reached by update and by signal ----
  const apply = {
    pause: (p: { reason?: string; by?: string }, defaultBy: string): MessageAck => {
      if (state.pause) return ack(false, `already paused by ${state.pause.by}`);
      state.pause = { reason: p.reason ?? '', by: p.by ?? defaultBy, at: nowIso() };
      gatesScope?.cancel();
      if (callCarriesGates) cancelAgentCall();
      log.info('run paused', { by: state.pause.by, reason: state.pause.reason });
      publish();
      return ack(true, 'paused; no new iteration starts until resumed (a running agent call finishes first)');
    },
    resume: (p: { by?: string }, defaultBy: string): MessageAck => {
      if (!state.pause) return ack(false, 'not paused');
      log.info('run resumed', { by: p.by ?? defaultBy, pausedBy: state.pause.by });
      state.pause = null;
      publish();
      return ack(true, 'resumed');
    },
    stop: (p: { reason?: string; by?: string; now?: boolean }, defaultBy: string): MessageAck => {
      const now = p.now === true;
      if (stopRequest && !(now && !stopRequest.now)) return ack(false, 'already stopping');
      stopRequest = { reason: p.reason ?? '', by: p.by ?? defaultBy, now };
      status = 'stopping';
      gatesScope?.cancel();
      if (now || callCarriesGates) cancelAgentCall();
      publish();
      return ack(true, now && agentScope ? 'stopping now; the running agent call is being cancelled' : 'stopping at the next boundary');
    },
    input: (p: { directive: string; by?: string }, defaultBy: string): MessageAck => {
      const refused = directiveRefusal(state.pendingDirectives, p.directive);
      if (refused) throw ApplicationFailure.create({ message: `input: ${refused}`, nonRetryable: true });
      state.pendingDirectives.push({ text: p.directive, by: p.by ?? defaultBy, at: nowIso() });
      publish();
      return ack(true, 'directive queued for the next prompt');
    },
  };

  const applyForceReview = (p: { reason?: string; by?: string }, defaultBy: string): MessageAck => {
    if (!councilEra || !knobs.councilEnabled) {
      throw ApplicationFailure.create({ message: 'forceReview: the completion council is disabled for this run (knob councilEnabled)', nonRetryable: true });
    }
    if (state.council.forceReview) return ack(false, `a council review is already requested by ${state.council.forceReview.by}`);
    state.council.forceReview = { by: p.by ?? defaultBy, reason: p.reason ?? '', at: nowIso() };
    publish();
    return ack(true, completionRuleEra && state.pause ? 'the council convenes now; the run stays paused' : 'the council convenes at the next iteration boundary');
  };

  const applyBudget = (p: { usd: number; by?: string }, defaultBy: string): MessageAck => {
    state.budgetUsd = p.usd;
    log.info('budget set', { usd: p.usd, by: p.by ?? defaultBy });
    const over = budgetExceeded(state.spend.usd, p.usd);
    publish();
    return ack(true, `budget set to $${p.usd.toFixed(2)} (spent $${state.spend.usd.toFixed(2)})${over ? '; still exceeded: the run stays paused' : p.usd === 0 ? '; no budget' : ''}`);
  };

  const applyWaive = (p: { item: string; reason?: string; by?: string }, defaultBy: string): MessageAck => {
    const cl = state.gates.checklist;
    if (!gatesEra || !cl) {
      throw ApplicationFailure.create({ message: `waive: this run has no PRD checklist${state.gates.checklistProblem ? ` (${state.gates.checklistProblem})` : ''}`, nonRetryable: true });
    }
    const r = waiveItem(cl, p.item, p.by ?? defaultBy, p.reason ?? '', nowIso());
    if (!r.ok) throw ApplicationFailure.create({ message: `waive: ${r.error}`, nonRetryable: true });
    const changed = r.state.waivers.length !== cl.waivers.length;
    state.gates.checklist = r.state;
    if (changed) {
      // The checklist gate's verdict is re-read at once: a waiver may lift its block.
      const last = state.gates.latest.find((g) => g.gate === 'checklist');
      if (last) state.gates.latest = mergeLatest(state.gates.latest, [checklistGateResult(r.state, last.treeHash, last.iteration)]);
      log.info('checklist item waived', { by: p.by ?? defaultBy });
    }
    publish();
    return ack(changed, changed ? `${p.item} waived: its failure no longer blocks completion` : `${p.item} was already waived`);
  };

  const finishedGuard = (name: MessageName): void => {
    if (outcome) throw new Error(`${name}: the run has finished (${outcome.status})`);
    if (stopRequest && name !== 'stop') throw new Error(`${name}: the run is stopping`);
  };

  /** Messages can grow history while an agent call runs for hours: past the emergency size, interrupt it and roll over. */
  const watchHistorySize = (): void => {
    if (!hardeningEra || rolloverNow || outcome) return;
    if (workflowInfo().historySize < EMERGENCY_HISTORY_BYTES) return;
    rolloverNow = true;
    log.warn('history near its size limit: rolling over now', { historySize: workflowInfo().historySize });
    cancelAgentCall();
    gatesScope?.cancel();
  };

  const recordInvalid = (name: string, kind: 'signal' | 'update', error: string): void => {
    const entry: InvalidMessage = { name, kind, error: error.slice(0, 1000), at: nowIso() };
    state.invalidMessages = [...state.invalidMessages, entry].slice(-LIMITS.invalidMessages);
    state.invalidMessageCount += 1;
    log.warn('ignored invalid message', { name, error });
  };

  function wire<N extends MessageName, A extends unknown[]>(
    name: N,
    update: UpdateDefinition<MessageAck, A>,
    signal: SignalDefinition<[unknown?]>,
    handle: (payload: never, defaultBy: string) => MessageAck,
  ): void {
    setHandler(
      update,
      (...args: A) => {
        watchHistorySize();
        const r = parseMessage(name, args[0]);
        if (!r.ok) throw new Error(r.error); // unreachable: the validator ran first
        const answer = handle(r.value as never, 'unknown');
        const p = r.value as Record<string, unknown>;
        recordEvent(messageEvent(name, p, typeof p.by === 'string' ? p.by : 'unknown', true));
        return answer;
      },
      {
        validator: (...args: A) => {
          const r = parseMessage(name, args[0]);
          if (!r.ok) throw new Error(r.error);
          finishedGuard(name);
          // Rejected here, an oversized directive never enters history.
          if (name === 'input') {
            const refused = directiveRefusal(state.pendingDirectives, (r.value as { directive: string }).directive);
            if (refused) throw new Error(`input: ${refused}`);
          }
        },
        description: `${name} the run (validated; answers with an acknowledgement)`,
      },
    );
    setHandler(
      signal,
      (payload?: unknown) => {
        watchHistorySize();
        const r = parseMessage(name, payload);
        if (!r.ok) {
          recordEvent(messageEvent(name, null, 'signal', false, r.error));
          return recordInvalid(name, 'signal', r.error);
        }
        if (outcome) return recordInvalid(name, 'signal', `${name}: the run has finished`);
        const p = r.value as Record<string, unknown>;
        const by = typeof p.by === 'string' ? p.by : 'signal';
        try {
          handle(r.value as never, 'signal');
          recordEvent(messageEvent(name, p, by, true));
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          recordEvent(messageEvent(name, p, by, false, why));
          recordInvalid(name, 'signal', why);
        }
      },
      { description: `${name} the run (signal form for tools that cannot send updates)` },
    );
  }

  wire('pause', pauseUpdate, pauseSignal, apply.pause);
  wire('resume', resumeUpdate, resumeSignal, apply.resume);
  wire('stop', stopUpdate, stopSignal, apply.stop);
  wire('input', inputUpdate, inputSignal, apply.input);
  wire('forceReview', forceReviewUpdate, forceReviewSignal, applyForceReview);
  wire('budget', budgetUpdate, budgetSignal, applyBudget);
  wire('waive', waiveUpdate, waiveSignal, applyWaive);
  const rewinder = checkpointsEra
    ? installRewind({
        workflowId: info.workflowId,
        repoPath: input.repoPath,
        knobs,
        state,
        acts: repo,
        nowIso,
        closed: () => (outcome ? `the run has finished (${outcome.status}); start a new run from a checkpoint with \`vigil rewind ${info.workflowId} --to N --fork\`` : stopRequest ? 'the run is stopping' : null),
        agentRunning: () => agentScope !== null,
        cancelAgent: () => cancelAgentCall(),
        ack,
        recordEvent: (e) => recordEvent(e),
        recordInvalid: (name, error) => recordInvalid(name, 'signal', error),
        publish: () => publish(),
      })
    : null;
  /** A rewind waits for the loop: every wait of the loop ends on it. */
  const rewindPending = (): boolean => rewinder?.pending() ?? false;
  setHandler(statusQuery, snapshot, { description: 'The run snapshot (status, iteration, pause, outcome, ...)' });
  // Asked by an agent call that carries a gate pass when it is cancelled (activities/iteration.ts).
  setHandler(callCancelQuery, callCancelMeant, {
    description: "What cancelling the running agent call means: kill the agent, or only skip the gate pass it carries",
  });

  // ---- terminal path ----
  const finish = async (s: OutcomeStatus, reason: string, notes: string[] = []): Promise<Outcome> => {
    const undelivered = state.pendingDirectives.length;
    if (undelivered > 0 && patched(UNDELIVERED_DIRECTIVES_PATCH)) notes = [...notes, undeliveredNote(state.pendingDirectives)];
    outcome = { status: s, reason, exitCode: OUTCOME_EXIT_CODES[s], iteration: state.iteration, at: nowIso(), notes };
    recordEvent(outcomeEvent(outcome));
    status = 'finished';
    backoffUntil = null;
    publish();
    log.info('run finished', { status: s, reason, iteration: state.iteration });
    if (escalationEra) {
      const o = outcome;
      await CancellationScope.nonCancellable(async () => {
        const r = await notifyPeople('run_finished', `Run ${s === 'council_approved' || s === 'completion_promise_fulfilled' ? 'completed' : 'ended'}: ${s}`, `${reason}${notes.length ? `\n${notes.join('\n')}` : ''}`, o.exitCode === 0 ? 'info' : o.exitCode === 20 ? 'warning' : 'critical', { status: s, exitCode: o.exitCode, iteration: state.iteration }, `${info.workflowId}:run_finished`);
        void r;
      });
    }
    rewinder?.abandon(`the run finished (${s}) before the rewind could happen`);
    // Let in-flight update handlers answer before the run closes; this must also work after a
    // cancellation request, hence the non-cancellable scope.
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
    // The last events (the outcome, the final notification) reach the store before the run closes.
    await CancellationScope.nonCancellable(flushJournal);
    return outcome;
  };

  const stopOutcome = (notes: string[] = []): Promise<Outcome> => {
    const req = stopRequest ?? { reason: '', by: 'unknown', now: false };
    return finish('stopped', `stopped by ${req.by}${req.reason ? `: ${req.reason}` : ''}${req.now ? ' (now)' : ''}`, notes);
  };

  // ---- tests, evidence and council (council era) ----

  /** The test command's verdict on `treeHash`, re-run only when the tree changed. */
  const detectTests = gatesEra && knobs.qualityGates && knobs.gateTests;
  const ensureTests = async (treeHash: string): Promise<TestRunRecord | null> => {
    if (!knobs.testCommand && !detectTests) return null;
    if (state.lastTests?.treeHash === treeHash) return state.lastTests.runner === 'none' ? null : state.lastTests;
    const t = await tests.runTests.executeWithOptions({ summary: `tests on the tree of iteration ${state.iteration}` }, [
      { runId: info.workflowId, repoPath: input.repoPath, command: knobs.testCommand, detect: detectTests, iteration: state.iteration, timeoutSeconds: knobs.testTimeoutSeconds, authorization: input.authorization ?? null },
    ]);
    state.lastTests = testRecord(t, treeHash, state.iteration);
    return t.runner === 'none' ? null : state.lastTests;
  };

  /** What the evidence gate and the council read of the tests: an inconclusive run verifies nothing. */
  const testEvidence = (t: TestRunRecord | null): { passed: boolean; timedOut: boolean; logPath: string } | null =>
    t && t.verdict !== 'inconclusive' ? { passed: t.passed, timedOut: t.timedOut, logPath: t.logPath } : null;
  const testLine = (t: TestRunRecord): string => {
    const what = knobs.testCommand ? `\`${knobs.testCommand}\`` : `the detected ${t.runner ?? 'test'} runner`;
    const verdict = t.verdict === 'inconclusive' ? `INCONCLUSIVE (${t.reason})` : t.passed ? 'PASSED' : t.timedOut ? 'TIMED OUT' : `FAILED (exit ${t.exitCode})`;
    return `${what} on the current tree (iteration ${t.iteration}): ${verdict}; log: ${t.logPath}`;
  };

  /** What a council round and a code review both start from. */
  const roundBase = (round: number) => ({
    runId: info.workflowId,
    repoPath: input.repoPath,
    prdPath: input.prdPath,
    round,
    iteration: state.iteration,
    knobs,
    authorization: input.authorization ?? null,
    runStart: state.runStart,
  });

  const evidenceInput = async (round: number): Promise<EvidenceInput> => {
    const t = await ensureTests(state.convergence.lastHash ?? '');
    const c = state.convergence;
    return {
      ...roundBase(round),
      tests: testEvidence(t),
      testSummary: t ? testLine(t) : 'No test command is configured for this run, and no test runner was found.',
      ...(leanPromptEra ? { leanPrompt: true } : {}),
      convergenceSummary: `No-change streak ${c.consecutiveNoChange}; done signals ${c.doneSignals} in a row, ${c.totalDoneSignals} in total; recent tree hashes: ${c.recentHashes.map((h) => h.slice(0, 8)).join(', ')}`,
    };
  };

  const notesOf = (inconclusive: readonly string[]): string[] =>
    inconclusive.map((r) => `completion not independently verified: ${r.replace(/_/g, ' ')}`);

  // ---- quality gates, code review and the PRD checklist (gates era) ----

  /** A person's review of a paused run is judged while the run stays paused (completion-rule era). */
  let reviewWhilePaused = false;
  const interrupted = (): boolean => (state.pause !== null && !reviewWhilePaused) || stopRequest !== null || rolloverNow || rewindPending();
  /** A person asked for a council review of a paused run: it is judged now, the run stays paused. */
  const reviewDueWhilePaused = (): boolean => completionRuleEra && councilEra && knobs.councilEnabled && state.pause !== null && state.council.forceReview !== null && state.iteration >= 1;

  /**
   * A gate result against its failure ladder: its track moves on at once; what the streak asks
   * for (the stuck-gate abort, or the pause and the escalation once per streak) is left to
   * `actOnGateStreak`, null when nothing. Not async: the SDK records a stack trace for every
   * promise a workflow creates (for the UI's stack trace), ~0.2 ms apiece here, and a pass of
   * every gate in every iteration asks for nothing.
   */
  const trackGateResult = (r: GateResult): GateStreak | null => {
    const t = trackGate(state.gates.tracks[r.gate], r, knobs);
    state.gates.tracks = { ...state.gates.tracks, [r.gate]: t.track };
    if (t.action === 'stuck' || t.action === 'escalate' || (t.action === 'pause' && !state.pause)) return { action: t.action, track: t.track };
    return null;
  };

  /**
   * While an iteration's own completion check is still to come (completion-rule era), a gate's
   * pause waits for it: a check the safety valves end must not be held by the gate's pause.
   */
  let holdGatePause = false;
  let heldGatePause: { r: GateResult; streak: GateStreak } | null = null;

  /** What a gate's failure streak asks for; the outcome when the run must end. */
  const actOnGateStreak = async (r: GateResult, streak: GateStreak): Promise<Outcome | null> => {
    const n = streak.track.consecutiveFailures;
    if (streak.action === 'stuck') return finish('gate_stuck', stuckReason(r.gate, streak.track));
    if (streak.action === 'pause' && holdGatePause) {
      heldGatePause = { r, streak };
      return null;
    }
    if (streak.action === 'pause') {
      state.pause = { reason: `the ${gateLabel(r.gate)} gate failed ${n} times in a row (${r.reason}); look at it, then \`vigil resume ${info.workflowId}\` or stop the run`.slice(0, 2000), by: 'vigil', at: nowIso() };
      await notifyPeople('escalation', `Quality gate ${gateLabel(r.gate)} keeps failing: the run is paused`, state.pause.reason, 'critical', { gate: r.gate, failures: n, iteration: state.iteration }, `${info.workflowId}:gate_pause:${r.gate}:${state.iteration}`);
    } else {
      await escalateToPerson('gate_failing', `the ${gateLabel(r.gate)} gate failed ${n} times in a row`, [gateLine(r), `${n} consecutive failures; the run pauses at ${knobs.gatePauseAfter}`], [], false, null);
    }
    return null;
  };

  /** Whether the tool gates are due on the current tree. */
  const gatesDueNow = (judging: boolean, iterationSucceeded: boolean): boolean => gatesEra && gatesDue({ judging, iterationSucceeded, treeHash: state.convergence.lastHash ?? '', lastTree: state.gates.lastTree }, knobs);
  /** The tool gates on the current tree, when due; their results join the latest per gate. */
  const qualityGates = async (judging: boolean, iterationSucceeded: boolean, carried: RunGatesResult | null = null): Promise<Outcome | null> => {
    const tree = state.convergence.lastHash ?? '';
    if (!gatesDueNow(judging, iterationSucceeded)) return null;
    status = 'gating';
    publish();
    const out = leanEra
      ? await leanGates(tree, carried)
      : await runToolGates(gateActs, {
          runId: info.workflowId,
          repoPath: input.repoPath,
          iteration: state.iteration,
          knobs,
          treeHash: tree,
          runStartTree: state.runStart?.treeHash ?? null,
          tracks: state.gates.tracks,
          runTests: () => ensureTests(tree),
          interrupted,
        });
    status = stopRequest ? 'stopping' : 'running';
    state.gates.latest = mergeLatest(state.gates.latest, out.results);
    if (!out.interrupted) state.gates.lastTree = tree;
    log.info('quality gates', { iteration: state.iteration, results: out.results.map((r) => `${r.gate}:${r.verdict}`).join(' ') });
    for (const r of out.results) recordEvent(gateEvent(r));
    for (const r of out.results) {
      const streak = trackGateResult(r);
      const ended = streak ? await actOnGateStreak(r, streak) : null;
      if (ended) return ended;
    }
    publish();
    return null;
  };

  /** The tool gates of a lean run: one activity per pass, the test run remembered for the tree. */
  /** What a gate pass needs to know of the run now (the tree aside). */
  const gatesPassFacts = () => ({
    runId: info.workflowId,
    repoPath: input.repoPath,
    iteration: state.iteration,
    knobs,
    runStartTree: state.runStart?.treeHash ?? null,
    tracks: state.gates.tracks,
    knownTests: state.lastTests,
    testsInput: knobs.testCommand || detectTests ? { runId: info.workflowId, repoPath: input.repoPath, command: knobs.testCommand, detect: detectTests, iteration: state.iteration, timeoutSeconds: knobs.testTimeoutSeconds, authorization: input.authorization ?? null } : null,
    ...(leanPromptEra ? { compact: true } : {}),
  });

  const leanGates = async (tree: string, carried: RunGatesResult | null): Promise<{ results: GateResult[]; interrupted: boolean }> => {
    const out = await runGatesPass(gateActs, {
      ...gatesPassFacts(),
      treeHash: tree,
      carried,
      run: async (call) => {
        const scope = new CancellationScope();
        gatesScope = scope;
        try {
          return await scope.run(call);
        } finally {
          gatesScope = null;
        }
      },
      interrupted,
    });
    if (out.tests) state.lastTests = out.tests;
    return out;
  };

  /** The code review of the current tree (a passing review of the same tree is not repeated). */
  const codeReview = async (tree: string): Promise<ReviewRecord> => {
    const last = state.gates.reviews.at(-1);
    if (last && last.treeHash === tree && last.result === 'pass') return last;
    const round = state.gates.reviewRounds + 1;
    status = 'gating';
    publish();
    const t = state.lastTests?.treeHash === tree ? state.lastTests : null;
    const reviewInput = {
      ...roundBase(round),
      testSummary: t ? testLine(t) : 'No test results for this tree.',
      at: nowIso(),
      ...(leanPromptEra ? { leanPrompt: true } : {}),
    };
    const r = roundsEra
      ? await rounds.reviewRound.executeWithOptions({ summary: `code review ${round} (iteration ${state.iteration})` }, [reviewInput])
      : await runReviewRound({ repo, members }, reviewInput);
    status = stopRequest ? 'stopping' : 'running';
    for (const u of r.usages) state.spend = addUsage(state.spend, u);
    state.gates.reviewRounds = round;
    state.gates.reviews = [...state.gates.reviews, r.record].slice(-5);
    recordEvent(reviewEvent(r.record));
    const asGate = reviewGateResult(r.record);
    state.gates.latest = mergeLatest(state.gates.latest, [asGate]);
    log.info('code review', { round, result: r.record.result, reviewers: r.record.reviewers.length });
    return r.record;
  };

  /** What the checklist verifier's last call answered: whether it named any item (the contract). */
  let lastVerifierAnswer: { exitCode: number; timedOut: boolean; answered: number; logPath: string } | null = null;
  /** Asks the verifier about every checklist item (held-out ones included) on the current tree. */
  const verifyChecklist = async (tree: string): Promise<GateResult | null> => {
    const cl = state.gates.checklist;
    if (!cl) return null;
    status = 'gating';
    publish();
    let answer: AgentResult | null = null;
    try {
      answer = await members.runAgent.executeWithOptions({ summary: `verify the PRD checklist (iteration ${state.iteration})` }, [
        {
          runId: info.workflowId,
          repoPath: input.repoPath,
          ...chooseAgent(knobs, 'checklist-verifier', knobs.tier),
          authorization: input.authorization ?? null,
          prompt: checklistVerifierPrompt({ items: cl.items, prdPath: input.prdPath, diffPath: null, testSummary: state.lastTests ? testLine(state.lastTests) : 'No test results.' }),
          role: 'checklist-verifier',
          iteration: state.iteration,
          phase: 'VERIFY',
          tier: knobs.tier,
          timeoutSeconds: knobs.councilMemberTimeoutSeconds,
          completionPromise: '',
          parse: 'verification',
          checklistIds: cl.items.map((i) => i.id),
          rateLimitRpm: knobs.rateLimitRpm,
        },
      ]);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
    }
    status = stopRequest ? 'stopping' : 'running';
    lastVerifierAnswer = answer ? { exitCode: answer.exitCode, timedOut: answer.timedOut, answered: Object.keys(answer.verification ?? {}).length, logPath: answer.logPath } : null;
    if (answer?.usage) state.spend = addUsage(state.spend, answer.usage);
    const statuses = { ...cl.status };
    for (const [id, v] of Object.entries(answer?.verification ?? {})) statuses[id] = { status: v.status, evidence: v.evidence, iteration: state.iteration };
    state.gates.checklist = { ...cl, status: statuses };
    const result = checklistGateResult(state.gates.checklist, tree, state.iteration);
    state.gates.latest = mergeLatest(state.gates.latest, [result]);
    recordEvent(gateEvent(result));
    return result;
  };

  /**
   * Before completion is judged (the council, or the evidence gate alone): the tool gates on this
   * tree, then the code review, then the PRD checklist. 'refused' (findings say what blocked and
   * why) or 'interrupted' (a pause or stop came first) keep the run going; null lets the
   * judgement go on; an outcome ends the run (a stuck gate).
   */
  let refusedBy: { cause: CheckCause; reason: string } = { cause: 'quality_gates', reason: '' };
  const refuse = (gates: GateName[], reason: string, cause: CheckCause = gates[0] === 'code_review' ? 'code_review' : gates[0] === 'checklist' ? 'checklist' : 'quality_gates'): 'refused' => {
    refusedBy = { cause, reason: reason.slice(0, 500) };
    state.gates.lastRefusal = { iteration: state.iteration, gates, reason: reason.slice(0, 500) };
    remember(refusalMemory(state.iteration, reason));
    log.info('completion refused by the quality gates', { iteration: state.iteration, gates: gates.join(',') });
    return 'refused';
  };

  const completionGuard = async (): Promise<Outcome | 'refused' | 'interrupted' | null> => {
    if (!gatesEra) return null;
    const ended = await qualityGates(true, true);
    if (ended) return ended;
    if (interrupted()) return 'interrupted';
    const tree = state.convergence.lastHash ?? '';
    const failing = blockingFailures(state.gates.latest.filter((r) => isToolGate(r.gate)), knobs, tree);
    if (failing.length > 0) {
      state.lastFindings = describeGateRefusal(failing, state.iteration).slice(0, LIMITS.findingChars * 4);
      return refuse(failing.map((f) => f.gate), failing.map((f) => `${gateLabel(f.gate)}: ${f.reason}`).join('; '));
    }
    if (knobs.codeReview && completionRuleEra) {
      const judged = await judgeReview(tree);
      if (judged !== null) return judged;
      if (interrupted()) return 'interrupted';
    } else if (knobs.codeReview) {
      const review = await codeReview(tree);
      const reviewed = state.gates.latest.find((r) => r.gate === 'code_review') as GateResult;
      const streak = trackGateResult(reviewed);
      const ended2 = streak ? await actOnGateStreak(reviewed, streak) : null;
      if (ended2) return ended2;
      if (review.result !== 'pass') {
        state.lastFindings = `Completion at iteration ${state.iteration} was refused before the council was asked: the code review did not pass.\n${reviewSummaryForPrompt(review, LIMITS.findingChars * 3)}`.slice(0, LIMITS.findingChars * 4);
        return refuse(['code_review'], `code review ${review.result}: ${review.reason}`);
      }
      if (interrupted()) return 'interrupted';
    }
    if (knobs.prdChecklist && state.gates.checklist) {
      // A tree whose checklist was verified is not verified again (waivers are read anew).
      const known = completionRuleEra ? state.gates.latest.find((g) => g.gate === 'checklist' && g.treeHash === tree && g.iteration > 0) : undefined;
      const r = known && state.gates.checklist ? checklistGateResult(state.gates.checklist, tree, known.iteration) : await verifyChecklist(tree);
      if (completionRuleEra && !known) {
        const breach = verifierBreach(lastVerifierAnswer, state.iteration, lastVerifierAnswer?.logPath ?? '');
        const ended = await keepContract(breach ? [breach] : []);
        if (ended) return ended;
        if (breach) {
          state.lastFindings = contractFindings(breach, state.iteration);
          return refuse(['checklist'], `contract error: ${describeBreach(breach)}`, 'contract');
        }
      }
      if (r && !known) {
        const streak = trackGateResult(r);
        const ended3 = streak ? await actOnGateStreak(r, streak) : null;
        if (ended3) return ended3;
        if (r.verdict !== 'pass') {
          state.lastFindings = `Completion at iteration ${state.iteration} was refused before the council was asked: the requirements checklist is not met.\n${r.findings.map((f) => `- ${f.message}`).join('\n')}`.slice(0, LIMITS.findingChars * 4);
          return refuse(['checklist'], r.reason);
        }
      } else if (r && r.verdict !== 'pass') {
        state.lastFindings = `Completion at iteration ${state.iteration} was refused before the council was asked: the requirements checklist is not met.\n${r.findings.map((f) => `- ${f.message}`).join('\n')}`.slice(0, LIMITS.findingChars * 4);
        return refuse(['checklist'], r.reason);
      }
    }
    return null;
  };

  /**
   * The code review's part of a completion check (completion-rule era): a tree already reviewed
   * is not reviewed again (nor counted again on the gate's streak); answers without a verdict
   * line are a contract error, never a failing review. Null lets the check go on.
   */
  const judgeReview = async (tree: string): Promise<Outcome | 'refused' | null> => {
    const last = state.gates.reviews.at(-1);
    const reused = last && last.treeHash === tree ? last : null;
    const review = reused ?? (await codeReview(tree));
    const breaches = reviewBreaches(review);
    const contractOnly = review.result === 'inconclusive' && breaches.length > 0;
    if (!reused) {
      const ended = await keepContract(breaches);
      if (ended) return ended;
      if (contractOnly) {
        // Not a verdict on the work: the gate's streak and the builder's findings stay out of it.
        const asGate = state.gates.latest.find((g) => g.gate === 'code_review');
        if (asGate) state.gates.latest = mergeLatest(state.gates.latest, [{ ...asGate, verdict: 'inconclusive', reason: `contract error: ${breaches.length} reviewer answer(s) without a VERDICT line`.slice(0, 500), findings: [], findingCount: 0 }]);
      } else {
        const reviewed = state.gates.latest.find((g) => g.gate === 'code_review') as GateResult;
        const streak = trackGateResult(reviewed);
        const ended2 = streak ? await actOnGateStreak(reviewed, streak) : null;
        if (ended2) return ended2;
      }
    }
    if (review.result === 'pass') return null;
    if (contractOnly) {
      const first = breaches[0] as ContractBreach;
      state.lastFindings = contractFindings(first, state.iteration);
      return refuse(['code_review'], `contract error: ${describeBreach(first)}`, 'contract');
    }
    state.lastFindings = `Completion at iteration ${state.iteration} was refused before the council was asked: the code review did not pass.\n${reviewSummaryForPrompt(review, LIMITS.findingChars * 3)}`.slice(0, LIMITS.findingChars * 4);
    return refuse(['code_review'], `code review ${review.result}: ${review.reason}`);
  };

  /**
   * One check's reviewing answers against the agent contract (completion-rule era). The second
   * check in a row with an answer in the wrong format stops the spending: supervised, a pause
   * that names the role, the missing line and the fix; perpetual, the end (contract_error).
   */
  const keepContract = async (breaches: readonly ContractBreach[]): Promise<Outcome | null> => {
    const t = trackContract(state.contract, breaches);
    state.contract = t.state;
    const first = breaches[0];
    if (!first) return null;
    log.warn('agent contract error', { role: first.role, who: first.who, answer: first.answer, inARow: t.state.consecutive });
    if (!t.stop) return null;
    const why = `contract error, ${t.state.consecutive} checks in a row: ${describeBreach(first)}`;
    if (knobs.autonomyMode === 'perpetual') return finish('contract_error', why);
    if (!state.pause) {
      state.pause = { reason: why.slice(0, 2000), by: 'vigil', at: nowIso() };
      await notifyPeople('escalation', `Agent contract error (${first.role}): the run is paused`, why, 'critical', { role: first.role, answer: first.answer, iteration: state.iteration }, `${info.workflowId}:contract:${state.iteration}`);
    }
    return null;
  };

  /** At run start, once: the PRD checklist from the person's file or extracted by an agent; held-out items chosen. */
  const ensureChecklist = async (): Promise<void> => {
    if (!gatesEra || !knobs.prdChecklist || state.gates.checklistTried) return;
    state.gates.checklistTried = true;
    let items = input.checklist ?? null;
    const source = items ? 'file' : 'agent';
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
            completionPromise: '',
            parse: 'checklist',
            rateLimitRpm: knobs.rateLimitRpm,
          },
        ]);
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        state.gates.checklistProblem = `the checklist could not be extracted: ${(err.cause?.message ?? err.message).slice(0, 300)}`;
      }
      if (r?.usage) state.spend = addUsage(state.spend, r.usage);
      if (r?.checklist?.ok) items = r.checklist.items;
      else if (r) state.gates.checklistProblem = `the checklist could not be extracted: ${r.checklist?.error ?? 'no answer'}`.slice(0, 500);
    }
    if (!items || items.length === 0) {
      log.warn('no PRD checklist for this run', { problem: state.gates.checklistProblem });
      return;
    }
    state.gates.checklist = { items, heldOut: knobs.checklistHeldOut ? selectHeldOut(items) : [], source, status: {}, waivers: [] };
    log.info('PRD checklist ready', { items: items.length, source });
  };

  /**
   * A pause, stop, rollover or rewind came while a claim was checked: the claim is held (a forced
   * review stays requested) and judged at the next boundary, after the message is honoured.
   */
  const holdClaim = (trigger: ConveneTrigger): null => {
    if (trigger !== 'forced') state.council.heldClaim = { trigger, iteration: state.iteration };
    log.info('completion check interrupted; the claim is held for the next boundary', { iteration: state.iteration, trigger });
    return null;
  };

  /** The held claim, judged now: by the council, or by the evidence gate alone when the council is off. */
  const answerHeldClaim = async (): Promise<Outcome | null> => {
    const held = state.council.heldClaim;
    if (!held) return null;
    state.council.heldClaim = null;
    return knobs.councilEnabled ? councilRound(held.trigger) : claimWithoutCouncil();
  };

  /** Files that differ from the run start, as the last inspection saw them. */
  const filesSinceStart = (): number => state.recentIterations.at(-1)?.filesChangedSinceStart ?? 0;

  /**
   * A completion check that did not approve (completion-rule era): recorded, then the safety
   * valves, whatever refused it. The outcome when a valve stops the run, else null.
   */
  const checkRefused = async (trigger: ConveneTrigger, cause: CheckCause, reason: string): Promise<Outcome | null> => {
    if (trigger === 'forced') state.council.forceReview = null;
    const after = afterRefusal(state.convergence, { iteration: state.iteration, trigger, cause, reason }, knobs);
    state.checks = recordCheck(state.checks, after.check);
    log.info('completion check refused', { iteration: state.iteration, trigger, cause });
    return after.end ? finish('force_stopped', after.reason) : null;
  };

  /** The evidence gate's refusal of a tree that differs in nothing from the run start, before anything is spent on it. */
  const refuseEmptyDiff = (trigger: ConveneTrigger): Promise<Outcome | null> | null => {
    const empty = emptyDiffRefusal(filesSinceStart());
    if (empty === null) return null;
    state.lastFindings = `Completion was refused at iteration ${state.iteration} by the evidence gate: nothing changed since the run started (${empty}), so there is nothing to judge yet. Make the changes the PRD asks for, then claim again.`;
    state.lastEvidence = { iteration: state.iteration, pass: false, reason: empty, failures: [empty], inconclusive: [], filesChanged: 0, testsPassed: state.lastTests?.passed ?? null };
    remember(refusalMemory(state.iteration, `evidence gate: ${empty}`));
    return checkRefused(trigger, 'evidence', empty);
  };

  /** A council round; returns the outcome when the run must end, else null (findings set). */
  const councilRound = async (trigger: ConveneTrigger): Promise<Outcome | null> => {
    const empty = completionRuleEra ? refuseEmptyDiff(trigger) : null;
    if (empty) return empty;
    const guard = await completionGuard();
    if (guard === 'interrupted' && claimsHeldEra) return holdClaim(trigger);
    if (guard !== null) {
      if (completionRuleEra && guard === 'refused') return checkRefused(trigger, refusedBy.cause, refusedBy.reason);
      // A person's request is answered by the refusal: it is not asked again at every boundary.
      if (trigger === 'forced') state.council.forceReview = null;
      return typeof guard === 'string' ? null : guard;
    }
    const round = state.council.rounds + 1;
    status = 'reviewing';
    publish();
    const roundInput = { ...(await evidenceInput(round)), trigger, at: nowIso() };
    const r = roundsEra
      ? await rounds.councilRound.executeWithOptions({ summary: `council round ${round} (iteration ${state.iteration}, ${trigger}): evidence, ${knobs.councilSize} members` }, [{ ...roundInput, authorization: roundInput.authorization ?? null }])
      : await runCouncilRound(councilDeps, roundInput);
    for (const u of r.usages) state.spend = addUsage(state.spend, u);
    status = stopRequest ? 'stopping' : 'running';
    state.council.rounds = round;
    state.council.verdicts = [...state.council.verdicts, r.verdict].slice(-20);
    recordEvent(councilEvent(r.verdict));
    state.lastEvidence = r.verdict.evidence;
    if (trigger === 'forced') state.council.forceReview = null;
    log.info('council round', { round, trigger, result: r.verdict.result, approve: r.verdict.approve, threshold: r.verdict.threshold });
    if (completionRuleEra) {
      const ended = await keepContract(councilBreaches(r.verdict));
      if (ended) return ended;
    }
    if (r.approved) {
      const v = r.verdict;
      if (completionRuleEra) state.checks = recordCheck(state.checks, { iteration: state.iteration, trigger, approved: true, cause: null, reason: `council approved, ${v.approve} of ${v.size}` });
      return finish(
        'council_approved',
        `council approved at iteration ${state.iteration} (round ${round}, ${v.approve} of ${v.size}, threshold ${v.threshold}${v.devilsAdvocate ? ", devil's advocate confirmed" : ''}): ${v.evidence.filesChanged} file(s) changed since run start`,
        notesOf(r.evidence.inconclusive),
      );
    }
    if (completionRuleEra) {
      state.lastFindings = describeRejection(r.verdict).slice(0, LIMITS.findingChars * 4);
      const v = r.verdict;
      return checkRefused(trigger, 'council', `${v.approve} of ${v.size} approve, ${v.threshold} needed${v.devilsAdvocate?.flipped ? "; the devil's advocate refused" : ''}`);
    }
    const valve = safetyValve(state.convergence, breakerTrip(state.convergence, knobs.stagnationLimit), knobs);
    if (valve.fire) return finish('force_stopped', valve.reason);
    state.lastFindings = describeRejection(r.verdict).slice(0, LIMITS.findingChars * 4);
    return null;
  };

  /** One notification to every configured channel; its delivery is recorded, never fatal. */
  const notifyPeople = async (
    event: NotifyEvent,
    title: string,
    message: string,
    severity: 'info' | 'warning' | 'critical',
    details: Record<string, unknown>,
    dedupeKey: string,
  ) => {
    const at = nowIso();
    const r = await sendNotification(people, { runId: info.workflowId, repoPath: input.repoPath, knobs, event, title, message, severity, details, dedupeKey, at });
    state.notifications = recordNotification(state.notifications, r, event, at, r === null && hasChannel());
    if (r) recordEvent({ kind: 'notification', event, delivered: r.delivered, failed: r.failed });
    return r;
  };
  const hasChannel = (): boolean => Boolean(knobs.notifyWebhookUrl || knobs.notifySlackWebhookUrl || knobs.notifyDiscordWebhookUrl || knobs.notifyFile || knobs.notifyDesktop);

  type EscalationReason = 'uncertainty' | 'tier_exhausted' | 'agent_request' | 'dead_letter' | 'gate_failing';
  /** Handoff, notification, then the mode's consequence: a pause in supervised mode (or when asked to block). */
  const escalateToPerson = async (reason: EscalationReason, headline: string, signals: string[], questions: string[], pause: boolean, proxies: Proxies | null): Promise<void> => {
    const lastVerdict = state.council.verdicts.at(-1);
    const t = state.lastTests;
    const out = await escalate({ files: repo, people }, {
      knobs,
      at: nowIso(),
      proxies,
      handoff: {
        runId: info.workflowId,
        repoPath: input.repoPath,
        runStartSha: state.runStart?.sha ?? null,
        iteration: state.iteration,
        reason,
        headline,
        signals,
        mode: knobs.autonomyMode,
        paused: pause,
        lastCouncil: lastVerdict ? verdictSummary(lastVerdict) : null,
        lastTests: t ? handoffTestsLine(t) : null,
        openQuestions: questions,
      },
    });
    state.escalations = [...state.escalations, out.record].slice(-20);
    recordEvent(escalationEvent(out.record));
    state.notifications = recordNotification(state.notifications, out.notifyResult, 'escalation', out.record.at, out.notifyResult === null && hasChannel());
    state.latestHandoff = { iteration: state.iteration, path: out.handoff.markdownPath, summary: out.handoff.summary };
    state.handoffContextPending = true;
    log.warn('escalated to a person', { reason, iteration: state.iteration, paused: pause });
    if (pause && !state.pause) state.pause = { reason: `escalation (${reason.replace(/_/g, ' ')}): ${headline}`.slice(0, 2000), by: 'vigil', at: nowIso() };
    publish();
  };

  /**
   * After tracking: agent signal files, the tier ladder, the uncertainty decision; the one
   * escalation they ask for, if any (the caller makes it: deciding needs no promise).
   */
  const watchForTrouble = (result: AgentResult, snap: RepoSnapshot, signals: AgentSignals): Parameters<typeof escalateToPerson> | null => {
    rememberIteration(result, snap, signals);
    for (const p of signals.problems) log.warn('unreadable agent signal file', { problem: p });
    const driftBefore = state.driftReports;
    state.driftReports += signals.driftReports;
    if (signals.contextClearRequested || (driftBefore < DRIFT_CONTEXT_CLEAR && state.driftReports >= DRIFT_CONTEXT_CLEAR)) {
      const why = signals.contextClearRequested ? 'the agent asked for a context clear' : `${state.driftReports} drift reports`;
      state.contextClear = { reason: why, summary: (state.latestHandoff?.summary ?? describeRunSoFar()).slice(0, 4000) };
      remember(contextClearMemory(state.iteration, why));
    }

    let tierExhausted: string | null = null;
    // A rate limit says nothing about the task's difficulty: it does not move the ladder.
    if (knobs.tierLadder && result.rateLimit === null && result.authError === null) {
      state.ladder ??= initialLadder(knobs.tier, null);
      const since = snap.sinceLast;
      const r = observeLadder(
        state.ladder,
        {
          iteration: state.iteration,
          failed: result.exitCode !== 0,
          filesModified: since?.files ?? 0,
          linesChanged: since?.lines ?? 0,
          dependencyManifestChanged: since?.manifestChanged ?? false,
          // The latest test run, if it is at most one iteration old (tests run when the tree changes).
          testFailures: state.lastTests && state.lastTests.iteration >= state.iteration - 1 ? state.lastTests.failures : null,
          // An idle iteration is no success: it never steps the run down.
          ...(completionRuleEra ? { changed: state.recentIterations.at(-1)?.changed ?? true } : {}),
        },
        knobs,
      );
      state.ladder = r.state;
      if (r.change) {
        log.info('tier changed', { ...r.change });
        recordEvent({ kind: 'tier_change', iteration: r.change.iteration, from: r.change.from, to: r.change.to, trigger: r.change.trigger.slice(0, 300) });
      }
      if (r.escalateHuman) tierExhausted = `the agent failed ${r.state.failuresAtLevel} times in a row at the HIGH tier`;
    }

    let uncertain: { proxies: Proxies; lines: string[] } | null = null;
    if (knobs.uncertaintyEscalation) {
      const obs = { iteration: state.iteration, consecutiveNoChange: state.convergence.consecutiveNoChange, treeHash: snap.treeHash, verdicts: state.council.verdicts };
      const r = evaluateUncertainty(state.uncertainty, obs, knobs);
      state.uncertainty = r.state;
      if (r.escalate) uncertain = { proxies: r.proxies, lines: describeProxies(r.proxies, obs, knobs) };
    }

    const hr = signals.humanReview;
    if (hr) return ['agent_request', `the agent asked for a human review: ${hr.reason}`, [`the agent wrote HUMAN_REVIEW_NEEDED${hr.blocking ? ' (blocking)' : ''}: ${hr.reason}`, ...(uncertain?.lines ?? [])], hr.questions, hr.blocking || knobs.autonomyMode === 'supervised', uncertain?.proxies ?? null];
    if (tierExhausted) return ['tier_exhausted', 'the highest model tier keeps failing', [tierExhausted, ...(uncertain?.lines ?? [])], [], knobs.autonomyMode === 'supervised', uncertain?.proxies ?? null];
    if (uncertain) return ['uncertainty', 'the run looks stuck', uncertain.lines, [], knobs.autonomyMode === 'supervised', uncertain.proxies];
    return null;
  };

  const describeRunSoFar = (): string =>
    `Iteration ${state.iteration}; ${state.recentIterations.at(-1)?.filesChangedSinceStart ?? 0} file(s) changed since the run started; ` +
    `${state.council.rounds} council round(s)${state.council.verdicts.at(-1) ? `, the last ${state.council.verdicts.at(-1)?.result}` : ''}.`;

  /** Whether a call to `provider` asks a circuit breaker first. */
  const breakerApplies = (provider: string): boolean => providersEra && knobs.providerBreaker && provider !== 'command';
  /** The run's own provider, when neither a breaker nor a rate limit stands in its way (what pickProvider would answer at once). */
  const providerAtOnce = (): { provider: ProviderKnob; gate: null } | null => {
    const blocked = state.providerBlockedUntilMs !== null && nowMs() < state.providerBlockedUntilMs;
    return blocked || breakerApplies(knobs.provider) ? null : { provider: knobs.provider, gate: null };
  };

  /**
   * The provider of the next iteration: the run's own, unless it is unavailable (breaker open, or
   * rate-limited until `providerBlockedUntilMs`) and a healthy provider of the failover chain
   * whose breaker allows takes over. With nobody to take over, the run waits for its own.
   */
  const pickProvider = async (): Promise<{ provider: ProviderKnob; gate: { probe: boolean; askId: string } | null } | 'interrupted'> => {
    const primary = knobs.provider;
    const chain = providersEra ? failoverChain(knobs) : [];
    const blocked = state.providerBlockedUntilMs !== null && nowMs() < state.providerBlockedUntilMs;
    if (!blocked) {
      const gate = await passBreaker(primary, chain.length === 0);
      if (gate === 'interrupted') return 'interrupted';
      if (gate !== 'blocked') return { provider: primary, gate };
    }
    for (const alt of chain) {
      const health = await checks.providerHealth.executeWithOptions({ summary: `is ${alt} ready to take over?` }, [{ provider: alt }]).catch(() => ({ ok: false, problem: 'health check failed' }));
      if (!health.ok) {
        log.info('failover provider not ready', { provider: alt, problem: health.problem });
        continue;
      }
      const gate = await passBreaker(alt, false);
      if (gate === 'interrupted') return 'interrupted';
      if (gate === 'blocked') continue;
      log.info('failing over', { from: primary, to: alt, iteration: state.iteration + 1 });
      return { provider: alt, gate };
    }
    // Nobody can take over: the run's own provider, after its rate limit (a durable wait that
    // pause and stop interrupt) and its breaker.
    if (blocked && state.providerBlockedUntilMs !== null) {
      const until = state.providerBlockedUntilMs;
      status = 'backing_off';
      backoffUntil = new Date(until).toISOString(); // deterministic: workflow clock
      publish();
      await condition(() => state.pause !== null || stopRequest !== null || rolloverNow || (providerWaitRewindEra && rewindPending()), Math.max(until - nowMs(), 1), {
        summary: `rate limited, no failover provider ready: waiting until ${backoffUntil}`,
      });
      backoffUntil = null;
      status = 'running';
      if (state.pause || stopRequest || rolloverNow || (providerWaitRewindEra && rewindPending())) return 'interrupted';
      state.providerBlockedUntilMs = null;
    }
    const gate = await passBreaker(primary, true);
    if (gate === 'interrupted') return 'interrupted';
    return { provider: primary, gate: gate === 'blocked' ? null : gate };
  };

  /**
   * Asks the provider's breaker before a call (null: no breaker applies, or it cannot be reached);
   * while it is open the run waits on a durable timer, re-asking at least every minute.
   */
  const passBreaker = async (provider: string, waitIfOpen = true): Promise<{ probe: boolean; askId: string } | 'interrupted' | 'blocked' | null> => {
    if (!breakerApplies(provider)) return null;
    for (;;) {
      breakerAsks += 1;
      const askId = `${info.workflowId}/${info.runId}/${state.iteration + 1}/${breakerAsks}`;
      let answer;
      try {
        answer = await breakers.askProviderBreaker.executeWithOptions({ summary: `ask the ${provider} circuit breaker` }, [
          {
            provider,
            runId: info.workflowId,
            askId,
            // The call it lets out is reported within the agent call's bound (all attempts).
            leaseMs: (knobs.agentTimeoutSeconds + 120) * 5 * 1000,
            config: {
              failureThreshold: knobs.breakerFailures,
              failureWindowMs: knobs.breakerWindowSeconds * 1000,
              cooldownMs: knobs.breakerCooldownSeconds * 1000,
              probeIntervalMs: knobs.breakerProbeSeconds * 1000,
              closeAfterSuccesses: knobs.breakerSuccesses,
            },
          },
        ]);
      } catch (err) {
        log.warn('provider circuit breaker unreachable; calling the agent anyway', { provider, error: err instanceof Error ? err.message : String(err) });
        return null;
      }
      if (answer.allow) {
        if (providerWait) status = 'running';
        providerWait = null;
        return { probe: answer.probe, askId };
      }
      if (!waitIfOpen) return 'blocked';
      const waitMs = Math.min(Math.max(answer.retryAtMs - nowMs(), 1000), 60_000);
      providerWait = { provider, until: new Date(answer.retryAtMs).toISOString(), reason: answer.reason }; // deterministic: workflow clock
      status = 'waiting_for_provider';
      publish();
      await condition(() => state.pause !== null || stopRequest !== null || rolloverNow || (providerWaitRewindEra && rewindPending()), waitMs, {
        summary: `provider ${provider} unavailable (breaker ${answer.reason.replace(/_/g, ' ')}): waiting until ${providerWait.until}`,
      });
      if (state.pause || stopRequest || rolloverNow || (providerWaitRewindEra && rewindPending())) {
        providerWait = null;
        status = stopRequest ? 'stopping' : 'running';
        return 'interrupted';
      }
    }
  };

  /** Tells the provider's breaker that the call it let out was not made (never fails the run). */
  const releaseBreakerCall = async (provider: string, gate: { probe: boolean; askId: string }): Promise<void> => {
    try {
      await getExternalWorkflowHandle(breakerWorkflowId(provider)).signal(reportSignal, { runId: info.workflowId, outcome: 'released', probe: gate.probe, askId: gate.askId, reason: 'the run was stopped, paused or rewound before the call' });
    } catch (err) {
      log.warn('could not release the provider circuit breaker call', { provider, error: err instanceof Error ? err.message : String(err) });
    }
  };

  /** Tells the provider's breaker how the call it let out went (never fails the run). */
  const reportToBreaker = async (provider: string, gate: { probe: boolean; askId: string }, result: AgentResult): Promise<void> => {
    const o = providerOutcome({ exitCode: result.exitCode, timedOut: result.timedOut, rateLimited: result.rateLimit !== null, authError: result.authError !== null, tail: result.tail });
    try {
      await getExternalWorkflowHandle(breakerWorkflowId(provider)).signal(reportSignal, {
        runId: info.workflowId,
        outcome: o.outcome,
        probe: gate.probe,
        askId: gate.askId,
        ...(o.reason ? { reason: o.reason } : {}),
      });
    } catch (err) {
      log.warn('could not report to the provider circuit breaker', { provider, error: err instanceof Error ? err.message : String(err) });
    }
  };

  /**
   * Counts a failed iteration by its fingerprint (error class + normalised last lines); the
   * `deadLetterAfter`-th occurrence is recorded as a dead letter and escalated to a person
   * (a pause in supervised mode). True when the run was paused for it.
   */
  const deadLetterFailure = async (result: AgentResult): Promise<boolean> => {
    const errorClass = result.timedOut ? 'timeout' : `exit ${result.exitCode}`;
    const r = trackDeadLetter(state.deadLetter, { fingerprint: failureFingerprint(errorClass, result.tail), errorClass, tail: result.tail, atIso: nowIso(), iteration: state.iteration }, knobs.deadLetterAfter);
    state.deadLetter = r.state;
    const dead = r.deadLettered;
    if (!dead) return false;
    const line = `the same failure (${dead.errorClass}) ${dead.attempts} times, at iterations ${dead.iterations.join(', ')}`;
    await escalateToPerson('dead_letter', 'an iteration keeps failing the same way', [line, `last output: ${dead.tail.split('\n').filter(Boolean).slice(-3).join(' | ').slice(0, 400)}`], [], knobs.autonomyMode === 'supervised', null);
    return state.pause !== null;
  };

  /** Pauses the run on an authentication failure and tells people (once per iteration). */
  const pauseForAuth = async (result: AgentResult): Promise<void> => {
    const why = `authentication failed for provider ${result.provider}: ${result.authError ?? ''}`.slice(0, 800);
    state.lastFindings = `Iteration ${state.iteration} could not reach the model: ${why}. The credentials were fixed before this attempt.`;
    if (state.pause) return;
    state.pause = { reason: `${why}. Fix the credentials where the worker runs (\`vigil doctor --provider ${result.provider}\`), then \`vigil resume ${info.workflowId}\``.slice(0, 2000), by: 'vigil', at: nowIso() };
    await notifyPeople('auth_failed', `Authentication failed (${result.provider}): the run is paused`, state.pause.reason, 'critical', { iteration: state.iteration, provider: result.provider }, `${info.workflowId}:auth_failed:${state.iteration}`);
  };

  /** The 80 % budget warning, once per budget value. */
  const budgetWarningDue = (): boolean => {
    const budget = state.budgetUsd ?? knobs.budgetUsd;
    return budgetWarning(state.spend.usd, budget, state.budgetWarnedAt === budget);
  };
  const warnOnBudget = async (): Promise<void> => {
    if (!budgetWarningDue()) return;
    const budget = state.budgetUsd ?? knobs.budgetUsd;
    state.budgetWarnedAt = budget;
    const spent = `$${state.spend.usd.toFixed(2)} of $${budget.toFixed(2)}`;
    await notifyPeople('budget_warning', `80% of the budget spent: ${spent}`, `The run has spent ${spent} at iteration ${state.iteration}; it pauses when the budget is reached. Raise it with \`vigil budget ${info.workflowId} --usd N\`.`, 'warning', { spentUsd: state.spend.usd, budgetUsd: budget, iteration: state.iteration }, `${info.workflowId}:budget_warning:${budget}`);
  };

  /** Continue as new, carrying the whole validated state (packed: see workflows/carried-state.ts). */
  const rollOver = async (): Promise<never> => {
    const carried = RunStateSchema.parse({ ...state, generations: state.generations + 1 });
    log.info('continuing as new', { iteration: state.iteration, generation: carried.generations, historySize: workflowInfo().historySize });
    const { state: _state, packedState: _packed, ...fresh } = input;
    return continueAsNew<typeof vigilRun>(patched(PACKED_CARRY_PATCH) ? { ...fresh, packedState: packValue(carried as Json) } : { ...fresh, state: carried });
  };

  /**
   * A repository activity failed for good (repository deleted, `.git` damaged, `.vigil` a link):
   * pause and tell a person (supervised) or end with `repository_unavailable` (perpetual).
   * Anything else is rethrown unchanged.
   */
  const handleRepositoryTrouble = async (err: unknown): Promise<Outcome | null> => {
    if (!hardeningEra || !(err instanceof ActivityFailure) || isCancellation(err)) throw err;
    const cause = err.cause;
    const trouble = repositoryTrouble({
      activityType: err.activityType ?? null,
      failureType: cause instanceof ApplicationFailure ? (cause.type ?? null) : null,
      message: (cause?.message ?? err.message).slice(0, 1000),
    });
    if (trouble === null) throw err;
    log.warn('repository trouble', { ...trouble, iteration: state.iteration });
    const action = onRepositoryTrouble(trouble, info.workflowId, knobs);
    if (action.kind === 'end') return finish('repository_unavailable', action.reason);
    if (!state.pause) {
      state.pause = { reason: action.reason.slice(0, 2000), by: 'vigil', at: nowIso() };
      const title = trouble.kind === 'disk_full' ? 'Disk full: the run is paused' : 'Repository unavailable: the run is paused';
      await notifyPeople('escalation', title, action.reason, 'critical', { iteration: state.iteration, problem: trouble.problem }, `${info.workflowId}:repository:${state.iteration}:${trouble.kind}`);
    }
    status = 'running';
    publish();
    return null;
  };

  /** Without a council, a claim completes the run when the evidence gate passes. */
  const claimWithoutCouncil = async (): Promise<Outcome | null> => {
    if (completionRuleEra && emptyDiffRefusal(filesSinceStart()) !== null) {
      // The evidence gate refuses an empty diff before any gate or reviewer is asked.
      const empty = emptyDiffRefusal(filesSinceStart()) ?? '';
      state.lastFindings = `Completion was refused at iteration ${state.iteration} by the evidence gate: nothing changed since the run started (${empty}), so there is nothing to judge yet. Make the changes the PRD asks for, then claim again.`;
      state.checks = recordCheck(state.checks, { iteration: state.iteration, trigger: 'claim', approved: false, cause: 'evidence', reason: empty });
      return null;
    }
    const guard = await completionGuard();
    if (guard === 'interrupted' && claimsHeldEra) return holdClaim('claim');
    if (completionRuleEra && guard === 'refused') state.checks = recordCheck(state.checks, { iteration: state.iteration, trigger: 'claim', approved: false, cause: refusedBy.cause, reason: refusedBy.reason });
    if (guard !== null) return typeof guard === 'string' ? null : guard;
    const round = state.council.rounds + 1;
    const { facts, verdict } = await checkEvidence(councilDeps, await evidenceInput(round));
    state.lastEvidence = evidenceRecord(state.iteration, verdict, facts, state.lastTests?.passed ?? null);
    if (verdict.pass) {
      return finish(
        'completion_promise_fulfilled',
        `completion claim accepted at iteration ${state.iteration}: ${facts.filesChanged} file(s) changed since run start${state.lastTests ? ', tests green' : ''}`,
        notesOf(verdict.inconclusive),
      );
    }
    state.lastFindings = describeBlock(verdict, state.iteration);
    return null;
  };

  try {
    if (!continued && upsertsSearchAttributes) {
      upsertSearchAttributes([
        { key: SA_REPO, value: input.repoPath.slice(-255) },
        { key: SA_PROVIDER, value: knobs.provider },
      ]);
    }
    publish();

    if (knobs.provider === 'command' && knobs.agentCommand.length === 0) {
      return await finish('agent_not_runnable', 'no agent command configured (knob agentCommand; or choose a --provider)');
    }

    let iterationsThisExecution = 0;
    for (;;) {
      try {
        // Run-start commit and tree, captured once per run and carried across continue-as-new.
        if (!state.runStart) {
          const start = await repo.prepareRun.executeWithOptions({ summary: 'capture run-start commit' }, [
            { repoPath: input.repoPath, runId: info.workflowId, ...(escalationEra ? { prdPath: input.prdPath } : {}), ...(memoryEra ? { learnings: true, ...(leanPromptEra ? { learningsByRef: true } : {}) } : {}) },
          ]);
          if (memoryEra) state.memory = keepLearnings(state.memory, start, leanPromptEra);
          state.runStart = { sha: start.sha, treeHash: start.treeHash, capturedAt: nowIso() };
          if (escalationEra && knobs.tierLadder) state.ladder = initialLadder(knobs.tier, start.alwaysHigh ?? null);
          state.convergence = { ...state.convergence, lastHash: start.treeHash };
          status = 'running';
          publish();
        }
        if (!continued && state.iteration === 0 && state.journal.nextSeq === 1) {
          recordEvent({ kind: 'run_started', prdPath: input.prdPath.slice(0, 4096), prdTitle: input.prdTitle, repoPath: input.repoPath.slice(0, 4096), provider: knobs.provider, maxIterations: knobs.maxIterations, budgetUsd: knobs.budgetUsd, autonomyMode: knobs.autonomyMode });
        }
        if (gatesEra && knobs.prdChecklist && !state.gates.checklistTried) {
          await ensureChecklist();
          publish();
        }

        for (;;) {
          // The events of the last iteration go to the store, batched, at the boundary.
          if (journalPending()) await flushJournal();
          // 1. Human messages first.
          if (stopRequest) return await stopOutcome();
          if (rewindPending()) {
            await rewinder?.perform();
            state.council.heldClaim = null; // the claimed tree is gone
            publish();
            continue;
          }
          if (rolloverNow) {
            // Messages filled the history (even while paused): a fresh one now, pause and all.
            await condition(() => allHandlersFinished() || rewindPending());
            if (!stopRequest && !rewindPending()) return await rollOver();
            continue;
          }
          if (reviewDueWhilePaused()) {
            reviewWhilePaused = true;
            try {
              const ended = await councilRound('forced');
              if (ended) return ended;
            } finally {
              reviewWhilePaused = false;
            }
            publish();
            continue;
          }
          if (state.pause) {
            publish();
            if (escalationEra && state.pause.by !== 'vigil') {
              // A person's or a tool's pause (an escalation already notified for its own).
              const p = state.pause;
              await notifyPeople('paused', `Run paused by ${p.by}`, p.reason || 'no reason given', 'info', { by: p.by, iteration: state.iteration }, `${info.workflowId}:paused:${p.at}`);
            }
            await condition(() => state.pause === null || stopRequest !== null || rolloverNow || rewindPending() || reviewDueWhilePaused());
            status = stopRequest ? 'stopping' : 'running';
            continue;
          }

          // Budget: reaching it pauses the run in every mode, until a person raises it.
          const budget = state.budgetUsd ?? knobs.budgetUsd;
          if (budgetExceeded(state.spend.usd, budget)) {
            const spent = `$${state.spend.usd.toFixed(2)} of $${budget.toFixed(2)}`;
            state.pause = { reason: `budget exceeded: ${spent}; raise it with \`vigil budget ${info.workflowId} --usd N\` and resume, or stop the run`, by: 'vigil', at: nowIso() };
            await notifyPeople('budget_exceeded', `Budget exceeded: ${spent}`, `The run is paused at iteration ${state.iteration}. ${state.pause.reason}.`, 'critical', { spentUsd: state.spend.usd, budgetUsd: budget, iteration: state.iteration }, `${info.workflowId}:budget_exceeded:${state.iteration}:${budget}`);
            publish();
            continue;
          }

          // A person asked for a council review: it happens now, at this boundary.
          if (councilEra && state.council.forceReview && state.iteration >= 1) {
            const ended = await councilRound('forced');
            if (ended) return ended;
            publish();
            continue;
          }

          // A claim whose check a message interrupted is judged before anything else happens.
          if (state.council.heldClaim) {
            const ended = await answerHeldClaim();
            if (ended) return ended;
            publish();
            continue;
          }

          // 2. Caps: consecutive failures, iteration count, wall clock.
          const cap = checkCaps(
            { iteration: state.iteration, consecutiveFailures: state.consecutiveFailures, startedAtMs: state.startedAtMs, nowMs: nowMs() },
            knobs,
          );
          if (cap.kind !== 'continue') return await finish(cap.kind, cap.reason);

          // 3. Long runs: a fresh history at an iteration boundary, carrying the whole state.
          if (iterationsThisExecution >= knobs.continueAsNewEvery || workflowInfo().continueAsNewSuggested || rolloverNow) {
            await condition(() => allHandlersFinished() || rewindPending());
            if (stopRequest || state.pause || rewindPending()) continue; // a message arrived meanwhile: honour it first
            return await rollOver();
          }

          // The provider's shared circuit breaker lets the call out, or the run waits with every
          // other run on that provider (pause and stop interrupt the wait).
          const pick = providerAtOnce() ?? (await pickProvider());
          if (pick === 'interrupted') continue;
          if (recheckBeforeCallEra && (stopRequest || state.pause || rewindPending() || rolloverNow)) {
            // A message came while the provider was asked: honoured at the boundary, the call unmade.
            if (pick.gate) await releaseBreakerCall(pick.provider, pick.gate);
            continue;
          }
          const { provider: iterationProvider, gate } = pick;

          // 4. The iteration. The checkpoint of the last one is sealed with the state after it.
          if (checkpointsEra) state.checkpoints.list = sealCheckpoint(state.checkpoints.list, state);
          state.iteration += 1;
          iterationsThisExecution += 1;
          status = 'running';
          phase = phaseFor(state.iteration);
          tier = escalationEra && knobs.tierLadder && state.ladder ? LEVEL_TIER[state.ladder.level] : tierFor(state.iteration, knobs);
          const fresh = escalationEra ? state.contextClear : null;
          const handoffContext = escalationEra && (state.handoffContextPending || fresh) ? (fresh?.summary ?? state.latestHandoff?.summary ?? null) : null;
          const directives = [...state.pendingDirectives]; // a copy: handlers may push while the agent runs
          const promptInput: PromptInput = {
            prdPath: input.prdPath,
            prdTitle: input.prdTitle,
            iteration: state.iteration,
            maxIterations: knobs.maxIterations,
            phase,
            tier,
            retry: state.consecutiveFailures,
            directives,
            findings: state.lastFindings,
            completionPromise: knobs.completionPromise,
            ...(handoffContext ? { handoffSummary: handoffContext } : {}),
            ...(fresh ? { freshSession: true } : {}),
            ...(gatesEra
              ? {
                  gateFindings: gateFindingsForPrompt(state.gates.latest, knobs),
                  checklist: state.gates.checklist ? builderChecklist(state.gates.checklist, 5000) : null,
                }
              : {}),
            // The run so far: its own part of the prompt input, so a fresh session starts with it.
            // (Lean prompt: by reference, `memoryRef` below; the activity renders the same text.)
            ...(memoryEra ? { ...(leanPromptEra ? {} : { memory: promptMemory(state.memory, knobs.memoryBudgetChars) }), ...(knobs.promptTemplate ? { templatePath: knobs.promptTemplate } : {}) } : {}),
          };
          publish();

          // Lean runs: long prompt parts by reference, and the inspection with the call.
          // The tree after the call becomes this iteration's checkpoint when it changed.
          const checkpoint = checkpointsEra ? planCheckpoint(state.checkpoints.list, info.workflowId, state.iteration, knobs.checkpointsKept) : null;
          const inspect = { runStartSha: state.runStart?.sha ?? null, previousTree: state.convergence.lastHash, signals: true, ...notesAsk, ...(checkpoint ? { checkpoint } : {}) };
          const memoryRef = () => (leanPromptEra ? { memoryRef: memoryParts.ref(state.memory, knobs.memoryBudgetChars) } : {});
          // The gate pass rides with the call (made after a good agent run that changed the tree).
          const carried = gatesWithCallEra && gatesEra ? carriedGates(gatesPassFacts(), state.gates.lastTree) : null;
          const leanArgs = (byRef: boolean) => (!leanEra ? { promptInput } : { ...(byRef ? promptParts.split(promptInput) : { promptInput }), inspect, ...memoryRef(), ...(carried ? { gates: carried } : {}) });
          let result: AgentResult;
          try {
            const scope = new CancellationScope();
            agentScope = scope;
            directivesInCall = directives.length;
            callCarriesGates = carried !== null;
            const call = (byRef: boolean): Promise<AgentResult> =>
              agent.runAgent.executeWithOptions(
                { summary: `iteration ${state.iteration} · ${phase} · tier ${tier}` },
                [
                  {
                    runId: info.workflowId,
                    repoPath: input.repoPath,
                    ...chooseAgent(knobsFor(iterationProvider, knobs), 'iteration', tier ?? 'development'),
                    remainingBudgetUsd: remainingBudget(state.spend.usd, state.budgetUsd ?? knobs.budgetUsd),
                    authorization: input.authorization ?? null,
                    ...leanArgs(byRef),
                    role: 'iteration',
                    iteration: state.iteration,
                    phase: phase ?? 'ACT',
                    tier: tier ?? 'development',
                    timeoutSeconds: knobs.agentTimeoutSeconds,
                    completionPromise: knobs.completionPromise,
                    extraEnv: fresh ? { VIGIL_FRESH_SESSION: '1' } : {},
                    rateLimitRpm: knobs.rateLimitRpm,
                    ...(leanPromptEra ? { compact: true } : {}),
                  },
                ],
              ).then((r) => agentResultOf(r, leanPromptEra));
            result = await scope.run(async () => {
              try {
                return await call(true);
              } catch (err) {
                // A referenced prompt part is not stored where the call ran (the agent did not start): send the text.
                if (!(leanEra && err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === PROMPT_PART_MISSING)) throw err;
                promptParts.forget();
                memoryParts.forget();
                return await call(false);
              }
            });
          } catch (err) {
            // Cancelled by Temporal, or killed by the run in the worker that hosts it (running-call.ts).
            const cancelled = isCancellation(err) || callKilledByRun(err);
            if (cancelled && stopRequest && completionRuleEra && directives.length > 0) {
              // The interrupted call's prompt carried them: not "never reached a prompt".
              state.pendingDirectives = state.pendingDirectives.slice(directives.length);
              return await stopOutcome([interruptedNote(directives, state.iteration)]);
            }
            if (cancelled && stopRequest) return await stopOutcome();
            if (cancelled && rewindPending()) continue; // the rewind happens at the boundary
            if (cancelled && rolloverNow) {
              // Interrupted to keep the history under Temporal's limit: the next execution goes on.
              state.lastFindings = `Iteration ${state.iteration} was interrupted: messages filled the run's history, so the run rolled over to a fresh one. Check the state of the repository and carry on.`;
              continue;
            }
            if (cancelled && callCarriesGates && (state.pause || stopRequest)) {
              // A call cancelled for its gate pass that ended anyway (it could not ask what the
              // cancellation meant, or had not started): the pause or stop is honoured at the boundary.
              state.lastFindings = `Iteration ${state.iteration} was interrupted by a ${state.pause ? 'pause' : 'stop'} before the agent finished. Check the state of the repository and carry on.`;
              continue;
            }
            if (hardeningEra && err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && REPOSITORY_FAILURE_TYPES.has(err.cause.type ?? '')) throw err;
            if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FAILURE_TYPES.agentNotRunnable) {
              return await finish('agent_not_runnable', err.cause.message);
            }
            // (A call killed by the run for no reason left here is a lost call, not a failed run.)
            if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
            // Every attempt was lost (worker deaths, heartbeat timeouts): a failed iteration, not a failed run.
            const why = err.cause?.message ?? err.message;
            log.warn('agent call failed after all attempts', { iteration: state.iteration, error: why });
            result = blankAgentResult({ exitCode: AGENT_CALL_LOST, attempt: 5, tail: `vigil: the agent call was lost after every retry: ${why}` });
          } finally {
            agentScope = null;
            directivesInCall = 0;
            callCarriesGates = false;
          }
          if (gate) await reportToBreaker(iterationProvider, gate, result);
          state.spend = spendAfterCall(state.spend, result.usage, result.provider);
          if (providersEra && budgetWarningDue()) await warnOnBudget();
          // The directives reached the agent: they were one-shot. (New ones may have arrived meanwhile.)
          state.pendingDirectives = state.pendingDirectives.slice(directives.length);
          for (const d of directives) remember(directiveMemory(state.iteration, d));
          if (handoffContext) state.handoffContextPending = false;
          if (fresh) state.contextClear = null;

          // 5. What did the iteration change?
          let snap: RepoSnapshot;
          let signalsRead: AgentSignals | null = null;
          if (leanEra) {
            const made = result.inspection && 'snapshot' in result.inspection ? result.inspection : null;
            const got = made ?? (await repo.inspectIteration.executeWithOptions({ summary: `inspect repository after iteration ${state.iteration}` }, [{ runId: info.workflowId, repoPath: input.repoPath, iteration: state.iteration, inspect }]));
            snap = got.snapshot;
            signalsRead = got.signals;
          } else {
            snap = await repo.inspectRepo.executeWithOptions({ summary: `inspect repository after iteration ${state.iteration}` }, [
              { repoPath: input.repoPath, runStartSha: state.runStart?.sha ?? null, ...(escalationEra ? { previousTree: state.convergence.lastHash } : {}), ...(checkpoint ? { checkpoint } : {}) },
            ]);
          }
          const conv = trackConvergence(state.convergence, snap.treeHash, knobs.convergenceRingSize);
          state.convergence = councilEra ? trackDoneSignal(conv.state, result.claimed || result.donePhrase !== null) : conv.state;

          const record: IterationRecord = {
            iteration: state.iteration,
            phase,
            tier,
            exitCode: result.exitCode,
            durationMs: result.durationMs,
            logPath: result.logPath,
            attempts: result.attempt,
            claimed: result.claimed,
            changed: conv.changed,
            filesChangedSinceStart: snap.changedCount,
            treeHash: snap.treeHash,
            at: nowIso(),
            provider: result.provider,
            model: result.model,
            costUsd: result.usage ? costOf(result.usage) : null,
            ...(checkpointsEra ? { checkpoint: snap.checkpoint?.commit ?? null } : {}),
          };
          if (snap.checkpoint) {
            const c = { iteration: state.iteration, commit: snap.checkpoint.commit, tree: snap.treeHash, ref: snap.checkpoint.ref, at: nowIso(), filesChanged: snap.sinceLast?.files ?? 0, filesSinceStart: snap.changedCount, exitCode: result.exitCode, tests: null, verdict: null, snapshot: null };
            state.checkpoints.list = addCheckpoint(state.checkpoints.list, c, knobs.checkpointsKept);
          }
          state.recentIterations = [...state.recentIterations, record].slice(-LIMITS.recentIterations);
          recordEvent(iterationEvent(record, state.lastTests));
          if (result.usage || state.spend.calls > 0) {
            const sp = state.spend;
            recordEvent({ kind: 'spend', iteration: state.iteration, usd: sp.usd, calls: sp.calls, unpricedCalls: sp.unpricedCalls ?? 0, budgetUsd: state.budgetUsd ?? knobs.budgetUsd });
          }
          if (escalationEra) {
            const signals =
              signalsRead ??
              (await repo.readAgentSignals.executeWithOptions({ summary: `agent signal files after iteration ${state.iteration}` }, [
                { runId: info.workflowId, repoPath: input.repoPath, iteration: state.iteration, ...notesAsk },
              ]));
            const trouble = watchForTrouble(result, snap, signals);
            if (trouble) await escalateToPerson(...trouble);
          }

          // An authentication failure never fixes itself: no backoff, no retry count, no tier
          // climb — the run pauses in every mode until a person fixes the credentials and resumes.
          if (providersEra && result.authError) {
            await pauseForAuth(result);
            publish();
            continue;
          }

          // 6. Success: completion check on a claim. Failure: durable, interruptible backoff.
          if (result.exitCode === 0 && !councilEra) {
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
                return await finish(
                  'completion_promise_fulfilled',
                  `completion claim accepted at iteration ${state.iteration}: ${snap.changedCount} file(s) changed since run start, ${evidence}`,
                );
              }
              state.lastFindings = describeRefusal(verdict);
            }
            publish();
            continue;
          }

          if (result.exitCode === 0) {
            state.consecutiveFailures = 0;
            state.lastFindings = null;
            // The quality gates look at every tree a good iteration leaves (gateCadence).
            holdGatePause = completionRuleEra;
            const gated = gatesDueNow(false, true) ? await qualityGates(false, true, result.gates ?? null) : null;
            if (gated) return gated;
            if (!knobs.councilEnabled) {
              if (result.claimed) {
                const ended = await claimWithoutCouncil();
                if (ended) return ended;
              }
            } else {
              const trip = breakerTrip(state.convergence, knobs.stagnationLimit);
              const facts = { iteration: state.iteration, forced: false, circuitTripped: trip !== null, claimed: result.claimed };
              let trigger = shouldConvene({ ...facts, testsGreen: null }, knobs);
              const lastRoundTree = state.council.verdicts.at(-1)?.iteration;
              const changedSinceRound = lastRoundTree === undefined || state.recentIterations.some((r) => r.iteration > lastRoundTree && r.changed);
              if (!trigger && knobs.councilEarlyCheck && knobs.testCommand && state.iteration >= knobs.councilMinIterations && changedSinceRound) {
                // Early check: green tests on a tree the council has not seen yet.
                const t = await ensureTests(snap.treeHash);
                trigger = shouldConvene({ ...facts, testsGreen: t?.passed ?? null }, knobs);
              }
              if (trigger) {
                const ended = await councilRound(trigger);
                if (ended) return ended;
              } else if (result.claimed) {
                state.lastFindings = `Your completion claim in iteration ${state.iteration} was noted; the completion council convenes from iteration ${knobs.councilMinIterations} on. Keep verifying the requirements.`;
              }
            }
            holdGatePause = false;
            const held = heldGatePause as { r: GateResult; streak: GateStreak } | null;
            heldGatePause = null;
            if (held && !state.pause) await actOnGateStreak(held.r, held.streak);
            publish();
            continue;
          }

          state.lastFindings =
            `Iteration ${state.iteration} failed with exit code ${result.exitCode}${result.timedOut ? ' (timed out)' : ''}. ` +
            `Last output:\n${tail(result.tail, LIMITS.findingChars)}`;
          // The same failure over and over is a dead letter: a person is told instead of retrying on.
          if (providersEra && knobs.deadLetterAfter > 0 && result.rateLimit === null && (await deadLetterFailure(result))) {
            publish();
            continue;
          }
          // A provider rate limit waits as long as the provider says (or its request rate implies);
          // anything else backs off exponentially. Both count as a failed attempt.
          const rateLimited = result.rateLimit !== null && patched(RATE_LIMIT_PATCH) ? result.rateLimit : null;
          const rawWait = rateLimited ? rateLimited.waitSeconds : backoffSeconds(state.consecutiveFailures, knobs, Math.random()); // deterministic: seeded workflow random
          // A rate limit says nothing about the work: it is not a failure (no retry count, no tier climb).
          if (!(providersEra && rateLimited)) state.consecutiveFailures += 1;
          if (rateLimited) {
            state.lastFindings = `Iteration ${state.iteration} hit a provider rate limit; Vigil waited ${rawWait}s (${rateLimited.source.replace(/_/g, ' ')}) before this attempt.`;
            if (knobs.rateLimitNotifySeconds > 0 && rawWait > knobs.rateLimitNotifySeconds) {
              await notifyPeople('rate_limited', `Rate limited for ${rawWait}s`, `The agent hit a provider rate limit at iteration ${state.iteration}; the run waits ${rawWait}s before retrying.`, 'warning', { iteration: state.iteration, waitSeconds: rawWait, source: rateLimited.source }, `${info.workflowId}:rate_limited:${state.iteration}`);
            }
          }
          if (rateLimited && providersEra && result.provider === knobs.provider && failOverOnRateLimit(rawWait, knobs)) {
            // The run's provider is out for a while: the next iteration goes to the failover chain.
            state.providerBlockedUntilMs = nowMs() + rawWait * 1000;
            state.lastFindings = `Iteration ${state.iteration} hit a ${result.provider} rate limit (${rawWait}s); the next iteration runs on a failover provider.`;
            publish();
            continue;
          }
          const capsNow = { iteration: state.iteration, consecutiveFailures: state.consecutiveFailures, startedAtMs: state.startedAtMs, nowMs: nowMs() };
          const wait = hardeningEra ? waitWithinCaps(rawWait, capsNow, knobs) : rawWait;
          if (wait > 0 && state.consecutiveFailures < knobs.maxRetries) {
            status = 'backing_off';
            backoffUntil = new Date(nowMs() + wait * 1000).toISOString(); // deterministic: workflow clock
            publish();
            await condition(() => state.pause !== null || stopRequest !== null || rolloverNow || rewindPending(), wait * 1000, {
              summary: rateLimited ? `rate limited: waiting ${wait}s (${rateLimited.source.replace(/_/g, ' ')}) after iteration ${state.iteration}` : `backoff ${wait}s after failed iteration ${state.iteration}`,
            });
            backoffUntil = null;
            status = 'running';
            if (providersEra && rateLimited && knobs.rateLimitNotifySeconds > 0 && wait > knobs.rateLimitNotifySeconds && !stopRequest && !state.pause) {
              await notifyPeople('rate_limited', 'Rate limit over: the run goes on', `The provider's rate-limit wait after iteration ${state.iteration} has ended; the run continues.`, 'info', { iteration: state.iteration, waitedSeconds: wait }, `${info.workflowId}:rate_limit_over:${state.iteration}`);
            }
          }
          publish();
        }
      } catch (err) {
        const ended = await handleRepositoryTrouble(err);
        if (ended) return ended;
      }
    }
  } catch (err) {
    // A Temporal cancellation request (UI "Cancel", `temporal workflow cancel`) is a stop.
    if (isCancellation(err)) {
      stopRequest ??= { reason: 'workflow cancellation requested', by: 'temporal', now: true };
      return await stopOutcome();
    }
    throw err;
  }
}
