/**
 * The run journal as decisions: appending an event (sequence numbers, the bound on what waits for
 * the store), what a projection's answer means for the journal, and how the run's records become
 * events. Pure; the workflow records, a local activity projects (lib/event-store.ts).
 */
import { journalSummary } from '../schemas/message-verbs.js';
import { MAX_PENDING_EVENTS, type EventEnvelope, type JournalState, type RunEvent } from '../schemas/events.js';
import type { GateResult, ReviewRecord } from '../schemas/gates.js';
import type { EscalationRecord, IterationRecord, Outcome, TestRunRecord, Verdict } from '../schemas/run.js';
import { evidenceNote } from './evidence-line.js';

export const emptyJournal = (): JournalState => ({ nextSeq: 1, pending: [], dropped: 0, stored: 0, problem: null });

/** Appends one event; past MAX_PENDING_EVENTS waiting, the oldest is dropped and counted. */
export function appendEvent(j: JournalState, event: RunEvent, runId: string, at: string): JournalState {
  const envelope: EventEnvelope = { seq: j.nextSeq, runId, at, event };
  const pending = [...j.pending, envelope];
  const over = Math.max(0, pending.length - MAX_PENDING_EVENTS);
  return { ...j, nextSeq: j.nextSeq + 1, pending: over > 0 ? pending.slice(over) : pending, dropped: j.dropped + over };
}

/** A projection's answer: events up to `storedThrough` leave the journal; a problem is kept for status. */
export function ackProjection(j: JournalState, r: { storedThrough: number; written: number; problem: string | null }): JournalState {
  const pending = r.storedThrough > 0 ? j.pending.filter((e) => e.seq > r.storedThrough) : j.pending;
  return { ...j, pending, stored: j.stored + r.written, problem: r.problem };
}

// ---- the run's records as events ----

const clip = (s: string, n: number): string => (s.length <= n ? s : s.slice(0, n));

export function iterationEvent(r: IterationRecord, attemptsTests: TestRunRecord | null): RunEvent {
  const tests =
    attemptsTests && attemptsTests.treeHash === r.treeHash ? (attemptsTests.verdict ?? (attemptsTests.passed ? 'pass' : 'fail')) : null;
  return {
    kind: 'iteration',
    iteration: r.iteration,
    phase: r.phase,
    tier: r.tier,
    exitCode: r.exitCode,
    durationMs: r.durationMs,
    changed: r.changed,
    filesChangedSinceStart: r.filesChangedSinceStart,
    claimed: r.claimed,
    tests,
    provider: r.provider ?? null,
    model: r.model ?? null,
    costUsd: r.costUsd ?? null,
    attempts: r.attempts,
  };
}

export function councilEvent(v: Verdict): RunEvent {
  return {
    kind: 'council_round',
    round: v.round,
    iteration: v.iteration,
    trigger: v.trigger,
    result: v.result,
    approve: v.approve,
    reject: v.reject,
    threshold: v.threshold,
    votes: v.votes.slice(0, 20).map((m) => ({ member: m.member, recorded: m.recorded, approves: m.approves, reason: clip(m.reason, 300) })),
  };
}

export const gateEvent = (r: GateResult): RunEvent => ({
  kind: 'gate',
  iteration: r.iteration,
  gate: r.gate,
  verdict: r.verdict,
  reason: clip(r.reason, 500),
  findings: r.findingCount,
});

export function reviewEvent(r: ReviewRecord): RunEvent {
  const all = r.devilsAdvocate ? [...r.reviewers, r.devilsAdvocate] : r.reviewers;
  return {
    kind: 'review',
    round: r.round,
    iteration: r.iteration,
    result: r.result,
    mergeability: r.mergeability,
    reviewers: all.slice(0, 13).map((x) => ({ reviewer: x.reviewer, verdict: x.verdict, blocking: x.blocking })),
  };
}

export const escalationEvent = (e: EscalationRecord): RunEvent => ({
  kind: 'escalation',
  iteration: e.iteration,
  reason: e.reason,
  detail: clip(e.detail, 1000),
  paused: e.paused,
});

/**
 * A message as an event: who sent which message and a short summary of it (the message table's,
 * schemas/message-verbs.ts). A directive's text never goes into the store (it is in history and
 * the prompt); its size does.
 */
export function messageEvent(
  name: string,
  payload: Record<string, unknown> | null,
  by: string,
  accepted: boolean,
  error?: string,
): RunEvent {
  const summary = journalSummary(name, payload, accepted, error);
  return { kind: 'message', name: clip(name, 40), by: clip(by, 200), summary: clip(summary, 300), accepted };
}

export const outcomeEvent = (o: Outcome): RunEvent => {
  const evidence = evidenceNote(o.notes);
  return {
    kind: 'outcome',
    status: o.status,
    exitCode: o.exitCode,
    reason: clip(o.reason, 1000),
    iteration: o.iteration,
    ...(evidence ? { evidence: clip(evidence, 600) } : {}),
  };
};
