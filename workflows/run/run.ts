/**
 * The run of one execution of `vigilRun`: the carried state (validated, handed to the next
 * execution on continue-as-new), the per-execution fields (status, the stop request, ..., and in
 * sub-objects with their own transitions: the running call, the provider, the judges, the gate
 * holds, the streams), the named conditions the loop waits on, and what every step shares:
 * publishing the status and search attributes, journaling an event, the run memory.
 *
 * The steps of the loop (the other modules of this folder) are plain functions of a `Run`; each
 * returns what the loop does next as a `Step`: `AGAIN` (back to the boundary), `INTERRUPTED` (a
 * message cut it short: back to the boundary), `end(outcome)`, `refused(outcome)` (before the
 * loop), or `go(what the next step needs)`. The SDK reaches them through `run.sdk` (port.ts).
 *
 * Workflow code: deterministic, no I/O.
 */
import type { PullRequestState } from '../../schemas/pr-event.js';
import type { ChangeMark } from '../../schemas/gates.js';
import type { RunEvent } from '../../schemas/events.js';
import type { ComplexityRecord } from '../../schemas/effort.js';
import { effectiveKnobs } from '../../rules/complexity.js';
import type { Knobs } from '../../schemas/knobs.js';
import type { MemoryEntry } from '../../schemas/memory.js';
import type { Outcome, Phase, RunInput, RunState, Tier } from '../../schemas/run.js';
import { SA_ITERATION, SA_STATUS } from '../../schemas/search-attributes.js';
import type { RunStatus, StatusSnapshot } from '../../schemas/status.js';
import { breakerTrip } from '../../rules/breaker.js';
import { checkpointRows } from '../../rules/checkpoints.js';
import { markTree } from '../../rules/lean-rounds.js';
import { maskedChecklist } from '../../rules/checklist/state.js';
import { ackProjection, appendEvent } from '../../rules/journal.js';
import { appendMemory, memoryFromEvent, memorySummary } from '../../rules/memory.js';
import { noChangeMin } from '../../rules/uncertainty.js';
import { pauseDeadlines } from '../../rules/pause-deadlines.js';
import { deadlineChannels } from '../escalation.js';
import type { CallCancel, MessageAck } from '../messages.js';
import type { Rewinder } from '../rewind.js';
import { tellRunningCall } from '../running-call.js';
import { currentDetails } from '../../rules/ui.js';
import type { Eras } from './eras.js';
import type { Proxies } from './proxies.js';
import type { WorkflowInfo, WorkflowPort } from './port.js';
import { CallTrack, GateHolds, JudgingTrack, ProviderTrack, StreamsTrack } from './tracks.js';

// Workflow time: Date in the workflow sandbox is deterministic (frozen at the workflow task start).
export const nowMs = (): number => Date.now(); // deterministic: workflow clock
export const nowIso = (): string => new Date(nowMs()).toISOString(); // deterministic: workflow clock

// ---- what a step answers the loop (`Step`; run-workflow.ts switches on `step`) ----

/** The loop goes round again, from the boundary. */
export interface Again {
  readonly step: 'again';
}
/** A message (pause, stop, rewind, rollover) cut the step short: the loop goes round and honours it at the boundary. */
export interface Interrupted {
  readonly step: 'interrupted';
}
/** The run ends with this outcome. */
export interface End {
  readonly step: 'end';
  readonly end: Outcome;
}
/** The run was refused before its loop (no agent to call, a signed run this worker does not admit): it ends with this outcome. */
export interface Refused {
  readonly step: 'refused';
  readonly end: Outcome;
}
/** The next step may go on, with what it needs. */
export interface Go<T> {
  readonly step: 'go';
  readonly go: T;
}
/** What a step of the loop answers. */
export type Step<T = undefined> = Again | Interrupted | End | Refused | Go<T>;

export const AGAIN: Again = { step: 'again' };
export const INTERRUPTED: Interrupted = { step: 'interrupted' };
export const end = (outcome: Outcome): End => ({ step: 'end', end: outcome });
export const refused = (outcome: Outcome): Refused => ({ step: 'refused', end: outcome });
export const go = <T>(value: T): Go<T> => ({ step: 'go', go: value });
export const GO: Go<undefined> = go(undefined);

export type { GateStreak, ProviderWait } from './tracks.js';

export class Run {
  /** The knobs the run goes by: the input's, with what the task's complexity set (`fitEffort`). */
  knobs: Knobs;
  /** Whether this execution continues a run (carries its state) rather than starting it. */
  readonly continued: boolean;
  /** Events are journaled and projected only when the run asks for the store: no extra activity otherwise. */
  readonly journaling: boolean;
  /** The test runner is detected when no test command is configured (the tests gate on). */
  readonly detectTests: boolean;

  // ---- transient (per execution) state ----
  status: RunStatus;
  stopRequest: { reason: string; by: string; now: boolean } | null = null;
  /** The running agent call, what it carries, and the tool gates' pass of a lean run. */
  readonly call = new CallTrack();
  backoffUntil: string | null = null;
  phase: Phase | null;
  tier: Tier | null;
  outcome: Outcome | null = null;
  /** The provider of the calls: the breaker's wait, its asks, why the last calls failed. */
  readonly provider = new ProviderTrack();
  /** Set when messages pushed the history near Temporal's limit: roll over at once. */
  rolloverNow = false;
  readonly published = { status: '', iteration: -1 };
  /** What the judges of this execution hand each other: the last claim, files and verifier answer, the checklist carried to the council, the refusal. */
  readonly judging = new JudgingTrack();
  /** A gate's pause held while an iteration's own completion check is still to come. */
  readonly gateHolds = new GateHolds();
  iterationsThisExecution = 0;
  /** The rewind step, installed with the message handlers. */
  rewinder: Rewinder | null = null;
  /** The run's parallel streams, or this stream's watch (this execution). */
  readonly streams = new StreamsTrack();

  constructor(
    readonly input: RunInput,
    readonly state: RunState,
    readonly info: WorkflowInfo,
    readonly eras: Eras,
    readonly acts: Proxies,
    readonly sdk: WorkflowPort,
  ) {
    this.knobs = effectiveKnobs(input.knobs, state.complexity);
    this.continued = input.state !== undefined || input.packedState !== undefined;
    this.journaling = this.knobs.eventStore;
    this.detectTests = this.knobs.qualityGates && this.knobs.gateTests;
    this.status = state.iteration === 0 ? 'starting' : 'running';
    this.phase = state.recentIterations.at(-1)?.phase ?? null;
    this.tier = state.recentIterations.at(-1)?.tier ?? null;
  }

  /** The task's complexity, decided at the start: carried in the state, its knobs the run's from now on. */
  fitEffort(complexity: ComplexityRecord | null): void {
    this.state.complexity = complexity;
    this.knobs = effectiveKnobs(this.input.knobs, complexity);
  }

  /** The workflow clock (the port's), in ms and as an ISO string. */
  nowMs(): number {
    return this.sdk.now();
  }
  nowIso(): string {
    return new Date(this.sdk.now()).toISOString();
  }

  visibleStatus(): RunStatus {
    return this.state.pause && this.status !== 'finished' ? 'paused' : this.status;
  }

  // ---- named conditions ----

  /** A rewind waits for the loop: every wait of the loop ends on it. */
  rewindPending(): boolean {
    return this.rewinder?.pending() ?? false;
  }
  /** A message the loop must honour at its boundary ends a wait (a backoff, a wait for the provider): pause, stop, rollover, rewind. */
  messageWaiting(): boolean {
    return this.state.pause !== null || this.stopRequest !== null || this.rolloverNow || this.rewindPending();
  }
  /** A paused run goes on: resumed, stopped, rolled over, rewound, or a review to judge while paused. */
  pauseOver(): boolean {
    return (
      this.state.pause === null || this.stopRequest !== null || this.rolloverNow || this.rewindPending() || this.reviewDueWhilePaused()
    );
  }
  /** Every update handler answered (before the run closes or rolls over), or a rewind came first. */
  handlersDone(): boolean {
    return this.sdk.allHandlersFinished() || this.rewindPending();
  }
  /** A completion check stops for a message (a person's review of a paused run aside). */
  interrupted(): boolean {
    return (
      (this.state.pause !== null && !this.judging.reviewWhilePaused) ||
      this.stopRequest !== null ||
      this.rolloverNow ||
      this.rewindPending()
    );
  }
  /** A person asked for a council review of a paused run: it is judged now, the run stays paused. */
  reviewDueWhilePaused(): boolean {
    const { state, knobs } = this;
    return knobs.councilEnabled && state.pause !== null && state.council.forceReview !== null && state.iteration >= 1;
  }

  // ---- the running agent call ----

  /** What cancelling the running agent call means: kill the agent, or only skip the gate pass it carries. */
  callCancelMeant(): CallCancel {
    return this.stopRequest?.now || this.rewindPending() || this.rolloverNow || this.sdk.cancelRequested() ? 'kill' : 'skipGates';
  }
  /** Cancels the running agent call, and tells the worker that hosts it at once (workflows/running-call.ts). */
  cancelAgentCall(): void {
    if (!this.call.cancel()) return;
    tellRunningCall(this.callCancelMeant());
  }

  ack(changed: boolean, message: string): MessageAck {
    return {
      changed,
      message,
      status: this.visibleStatus(),
      iteration: this.state.iteration,
      paused: this.state.pause !== null,
    };
  }

  // ---- status, journal and memory ----

  snapshot(): StatusSnapshot {
    const { state, knobs, input, info } = this;
    const outcome = this.outcome;
    return {
      workflowId: info.workflowId,
      runId: info.runId,
      // A pause asked for during a call: the call finishes first (the search attribute says paused).
      status: this.visibleStatus() === 'paused' && this.call.running() ? 'pausing' : this.visibleStatus(),
      iteration: state.iteration,
      maxIterations: knobs.maxIterations,
      phase: this.phase,
      tier: this.tier,
      paused: state.pause !== null,
      pause: state.pause ? { ...state.pause, deadlines: pauseDeadlines(state.pause, knobs, deadlineChannels(knobs)) } : null,
      ...(state.pullRequest ? { pullRequest: followedPullRequest(state.pullRequest) } : {}),
      consecutiveFailures: state.consecutiveFailures,
      consecutiveNoChange: state.convergence.consecutiveNoChange,
      recentHashes: state.convergence.recentHashes,
      runStartSha: state.runStart?.sha ?? null,
      pendingDirectives: state.pendingDirectives.length - this.call.directives,
      directivesInCall: this.call.directives,
      backoffUntil: this.backoffUntil,
      agentRunning: this.call.running(),
      lastIteration: state.recentIterations.at(-1) ?? null,
      recentIterations: state.recentIterations,
      lastCompletion: state.lastCompletion,
      outcome: outcome
        ? {
            status: outcome.status,
            reason: outcome.reason,
            exitCode: outcome.exitCode,
            ...(outcome.notes.length ? { notes: outcome.notes } : {}),
          }
        : null,
      invalidMessages: state.invalidMessages,
      invalidMessageCount: state.invalidMessageCount,
      generations: state.generations,
      repoPath: input.repoPath,
      prdPath: input.prdPath,
      host: input.host ?? null,
      doneSignals: state.convergence.doneSignals,
      totalDoneSignals: state.convergence.totalDoneSignals,
      breaker: breakerTrip(state.convergence, knobs.stagnationLimit),
      council: {
        enabled: knobs.councilEnabled,
        rounds: state.council.rounds,
        verdicts: state.council.verdicts,
        forceReviewPending: state.council.forceReview !== null,
        heldClaimIteration: state.council.heldClaim?.iteration ?? null,
        heldClaimTrigger: state.council.heldClaim?.trigger ?? null,
      },
      lastEvidence: state.lastEvidence,
      lastTests: state.lastTests,
      acceptance: state.acceptance
        ? { files: state.acceptance.files.length, last: state.acceptance.last, drafted: state.acceptance.drafted ?? null }
        : null,
      autonomyMode: knobs.autonomyMode,
      uncertainty: { ...state.uncertainty, enabled: knobs.uncertaintyEscalation, noChangeMin: noChangeMin(knobs) },
      ladder: knobs.tierLadder ? state.ladder : null,
      complexity: state.complexity,
      escalations: state.escalations,
      notifications: state.notifications,
      driftReports: state.driftReports,
      latestHandoff: state.latestHandoff,
      spend: state.spend,
      budgetUsd: state.budgetUsd ?? knobs.budgetUsd,
      providerWait: this.provider.wait,
      deadLetters: state.deadLetter.entries,
      ...(state.tasks
        ? {
            tasks: { source: state.tasks.source, count: state.tasks.tasks.length, note: state.tasks.note ?? null },
            streams: state.tasks.tasks.map((t) => ({
              task: t.id,
              title: t.title,
              state: t.state,
              dependsOn: t.dependsOn,
              attempts: t.attempts,
              childId: t.childId,
              branch: t.branch,
              merged: t.merged,
              spendUsd: t.spendUsd,
              outcome: t.outcome ? `${t.outcome.status}: ${t.outcome.reason}`.slice(0, 300) : null,
              deadLetter: t.deadLetter,
              waiting: t.waiting ?? null,
            })),
          }
        : {}),
      checkpoints: {
        kept: knobs.checkpointsKept,
        list: checkpointRows(state),
        rewinds: state.checkpoints.rewinds,
        lastTree: state.convergence.lastHash,
      },
      memory: memorySummary(state.memory),
      checks: state.checks,
      contract: state.contract,
      sandbox: { mode: knobs.sandbox, ...state.sandbox },
      ...(state.fork ? { fork: state.fork } : {}),
      ...(this.journaling
        ? {
            eventStore: {
              stored: state.journal.stored,
              pending: state.journal.pending.length,
              dropped: state.journal.dropped,
              problem: state.journal.problem,
            },
          }
        : {}),
      quality: {
        gates: state.gates.latest,
        failing: Object.fromEntries(
          Object.entries(state.gates.tracks)
            .filter(([, t]) => (t?.consecutiveFailures ?? 0) > 0)
            .map(([g, t]) => [g, t?.consecutiveFailures ?? 0]),
        ),
        lastReview: state.gates.reviews.at(-1) ?? null,
        reviewRounds: state.gates.reviewRounds,
        checklist: state.gates.checklist ? maskedChecklist(state.gates.checklist) : null,
        checklistProblem: state.gates.checklistProblem,
        lastRefusal: state.gates.lastRefusal,
      },
    };
  }

  /** Refreshes the UI details and the search attributes that changed. */
  publish(): void {
    const { state, outcome, published } = this;
    const shown = this.visibleStatus();
    // The short-lived gating/reviewing steps stay out of the search attribute (an upsert event each).
    const saStatus = outcome ? outcome.status : shown === 'gating' || shown === 'reviewing' ? 'running' : shown;
    const updates = [];
    if (published.status !== saStatus) updates.push({ key: SA_STATUS, value: saStatus });
    if (published.iteration !== state.iteration) updates.push({ key: SA_ITERATION, value: state.iteration });
    if (updates.length && this.eras.upsertsSearchAttributes) this.sdk.upsertSearchAttributes(updates);
    published.status = saStatus;
    published.iteration = state.iteration;
    this.sdk.setCurrentDetails(currentDetails(this.snapshot()));
  }

  /** Journals one run event for the store (nothing when the run has no event store). */
  recordEvent(event: RunEvent): void {
    const { state } = this;
    if (this.journaling) state.journal = appendEvent(state.journal, event, this.info.runId, this.nowIso());
    // The decisions an event stands for (council, gates, review, escalation, tier) join the run memory.
    const remembered = memoryFromEvent(event);
    if (remembered) this.remember(remembered);
  }

  /** A mark on `tree`, where a judgement was just made (null without a tree). */
  markHere(tree: string): ChangeMark | null {
    if (!tree) return null;
    return markTree(tree, this.state.iteration, this.judging.lastFiles?.tree === tree ? this.judging.lastFiles.files : null);
  }

  /** The run's spend so far as an event (its running totals, orchestration apart). */
  recordSpend(): void {
    const { state, knobs } = this;
    const sp = state.spend;
    const o = sp.orchestration ?? { calls: 0, usd: 0 };
    this.recordEvent({
      kind: 'spend',
      iteration: state.iteration,
      usd: sp.usd,
      calls: sp.calls,
      unpricedCalls: sp.unpricedCalls ?? 0,
      budgetUsd: state.budgetUsd ?? knobs.budgetUsd,
      orchestrationCalls: o.calls,
      orchestrationUsd: o.usd,
    });
  }

  /** Adds an entry to the run memory, bounded. */
  remember(entry: MemoryEntry): void {
    const { state } = this;
    state.memory = appendMemory(state.memory, entry);
  }

  /** Projects the journaled events into the store; a store that is down leaves them for the next boundary. */
  journalPending(): boolean {
    return this.journaling && this.state.journal.pending.length > 0;
  }
  async flushJournal(): Promise<void> {
    const { state, info } = this;
    if (!this.journalPending()) return;
    const batch = state.journal.pending;
    try {
      const r = await this.acts.store.projectEvents({ workflowId: info.workflowId, events: batch });
      state.journal = ackProjection(state.journal, r);
      if (r.problem) this.sdk.log.warn('event store: events kept for later', { pending: state.journal.pending.length, problem: r.problem });
    } catch (err) {
      state.journal = { ...state.journal, problem: (err instanceof Error ? err.message : String(err)).slice(0, 500) };
      this.sdk.log.warn('event store projection failed; events kept for later', { pending: state.journal.pending.length });
    }
  }
}

/** The followed pull request as status shows it: what is queued counted, not carried. */
function followedPullRequest(pr: PullRequestState): NonNullable<StatusSnapshot['pullRequest']> {
  return {
    url: pr.url,
    branch: pr.branch,
    ...(pr.base ? { base: pr.base } : {}),
    since: pr.since,
    waiting: pr.waiting,
    taken: pr.taken,
    ...(pr.updates?.length ? { updates: pr.updates } : {}),
    ...(pr.replies?.length ? { replies: pr.replies } : {}),
    ...(pr.polled ? { polled: pr.polled } : {}),
    queued: pr.queue.length,
    ...(pr.answering ? { answering: { author: pr.answering.author, review: pr.answering.review } } : {}),
  };
}
