/**
 * The per-execution fields of a run, grouped by what they are about, each group with its own
 * transitions: the running agent call (`run.call`), the provider (`run.provider`), what the
 * judges hand each other (`run.judging`), a gate's pause held for the completion check
 * (`run.gateHolds`) and the streams (`run.streams`). A step moves them through these methods,
 * not field by field. Gone with the execution: continue-as-new carries the run's state, not these.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { CarriedChecklist } from '../../rounds/council-round.js';
import type { GateResult, GateTrack } from '../../schemas/gates.js';
import type { CheckCause } from '../../schemas/run.js';
import type { GateAction } from '../../rules/gates.js';
import { MemoryParts, PromptParts } from '../prompt-parts.js';
import type { Scope } from './port.js';

/** A gate's failure streak that asks for something: the stuck-gate abort, a pause or an escalation. */
export type GateStreak = { action: Exclude<GateAction, 'none' | 'block'>; track: GateTrack };

/** While a provider's breaker keeps the run waiting (the status snapshot shows it). */
export type ProviderWait = { provider: string; until: string; reason: string; why?: string };

/** The provider side of one execution: the breaker's wait, the asks of the breaker, why each provider's last call failed. */
export class ProviderTrack {
  /** While the provider's breaker keeps the run waiting. */
  wait: ProviderWait | null = null;
  private asks = 0;
  /** Why this run's last call to each provider failed, as its breaker was told (this execution). */
  private readonly lastFailure = new Map<string, string>();

  /** The id of the next ask of a breaker: `prefix` (the run, the iteration) and the ask's number in this execution. */
  nextAskId(prefix: string): string {
    this.asks += 1;
    return `${prefix}/${this.asks}`;
  }
  /** How the last call to `provider` went: why it failed, or null when it did not. */
  callWent(provider: string, failure: string | null): void {
    if (failure) this.lastFailure.set(provider, failure);
    else this.lastFailure.delete(provider);
  }
  whyFailed(provider: string): string | undefined {
    return this.lastFailure.get(provider);
  }
}

/** The streams side of one execution: the watch of a stream, the fan-out of a run, a resume for its waiting streams. */
export class StreamsTrack {
  private watching = false;
  /** The run's parallel streams are running: a rewind waits for them, a resume reaches the waiting ones. */
  fanningOut = false;
  /** A person's resume of a run that is not paused, for its streams that wait for a person (sent by the fan-out loop). */
  private resume: { by: string } | null = null;

  /** True the first time: a stream's watch that tells its run when it waits for a person runs once per execution. */
  startWatch(): boolean {
    if (this.watching) return false;
    this.watching = true;
    return true;
  }
  /** A person resumed the run (not paused itself): its waiting streams are resumed by the fan-out loop. */
  resumeWaiting(by: string): void {
    this.resume = { by };
  }
  resumePending(): boolean {
    return this.resume !== null;
  }
  /** The resume to send, once. */
  takeResume(): { by: string } | null {
    const r = this.resume;
    this.resume = null;
    return r;
  }
}

/**
 * The running agent call of one execution (its scope, the directives and the gate pass it carries, the prompt parts it
 * sends by reference) and the tool gates' pass of a lean run.
 */
export class CallTrack {
  private scope: Scope | null = null;
  /** Directives the running call's prompt carries: delivered, no longer waiting. */
  directives = 0;
  /** The running agent call carries a gate pass: a PAUSE or STOP cancels it (the call finishes its agent). */
  carriesGates = false;
  /** The running pass of the tool gates (lean runs): a PAUSE or STOP cancels it. */
  private gatesScope: Scope | null = null;
  readonly promptParts = new PromptParts();
  readonly memoryParts = new MemoryParts();

  running(): boolean {
    return this.scope !== null;
  }
  /** A call starts in `scope`, its prompt carrying `directives`, with or without a gate pass. */
  started(scope: Scope, directives: number, carriesGates: boolean): void {
    this.scope = scope;
    this.directives = directives;
    this.carriesGates = carriesGates;
  }
  ended(): void {
    this.scope = null;
    this.directives = 0;
    this.carriesGates = false;
  }
  /** Cancels the running call's scope: false when no call runs. */
  cancel(): boolean {
    if (!this.scope) return false;
    this.scope.cancel();
    return true;
  }
  gatesStarted(scope: Scope): void {
    this.gatesScope = scope;
  }
  gatesEnded(): void {
    this.gatesScope = null;
  }
  cancelGates(): void {
    this.gatesScope?.cancel();
  }
}

/** What the judges of one execution hand each other (workflows/run/completion.ts, council.ts, prd-checklist.ts). */
export class JudgingTrack {
  /** A person's review of a paused run is judged while the run stays paused. */
  reviewWhilePaused = false;
  /** What the checklist verifier's last call answered: whether it named any item (the contract). */
  lastVerifierAnswer: { exitCode: number; timedOut: boolean; answered: number; logPath: string } | null = null;
  /** The last good iteration's claim named files the diff since the run's start does not hold (workflows/run/completion.ts `refuseFalseClaim`). */
  falseClaim: { iteration: number; paths: string[] } | null = null;
  /** The last inspection's changed files (vs the run start) and its tree, when it listed all of them: what a judgement's mark records. */
  lastFiles: { tree: string; files: string[] | null } | null = null;
  /** What refused the last completion check before the council was asked (workflows/run/completion.ts). */
  refusedBy: { cause: CheckCause; reason: string } = { cause: 'quality_gates', reason: '' };
  /**
   * The checklist verification a completion check handed to its council round: the verifier's call and
   * the rule its answer is judged by (workflows/run/prd-checklist.ts, workflows/run/completion.ts).
   */
  private carried: CarriedChecklist | null = null;

  /** A completion check refused the claim before the council was asked. */
  refused(cause: CheckCause, reason: string): void {
    this.refusedBy = { cause, reason: reason.slice(0, 500) };
  }
  /** The completion check hands its checklist verification to the council round. */
  carryChecklist(carried: CarriedChecklist): void {
    this.carried = carried;
  }
  /** The checklist verification carried to this round, once (null when none was). */
  takeChecklist(): CarriedChecklist | null {
    const c = this.carried;
    this.carried = null;
    return c;
  }
}

/**
 * While an iteration's own completion check is still to come, a gate's pause waits for it: a
 * check the safety valves end must not be held by the gate's pause.
 */
export class GateHolds {
  private holding = false;
  private held: { r: GateResult; streak: GateStreak } | null = null;

  /** From now until `release()`, a gate's pause is held. */
  holdPauses(): void {
    this.holding = true;
  }
  /** Holds a gate's pause when pauses are held: true when it was. */
  hold(r: GateResult, streak: GateStreak): boolean {
    if (!this.holding) return false;
    this.held = { r, streak };
    return true;
  }
  /** Ends the hold: the pause held meanwhile, if any. */
  release(): { r: GateResult; streak: GateStreak } | null {
    this.holding = false;
    const held = this.held;
    this.held = null;
    return held;
  }
}
