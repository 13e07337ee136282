/**
 * The `vigilProviderBreaker` workflow: the one long-lived entity per agent provider (workflow id
 * `vigil-provider-<provider>`) that owns that provider's circuit breaker state and is shared by
 * every run. Runs ask it (`ask` update, normally through update-with-start by the
 * `askProviderBreaker` activity) whether a call may go out, report each call's outcome (`report`
 * signal from workflow code), operators reset it (`reset` update) and read it (`breakerState`).
 *
 * Judgement is the pure state machine in decisions/provider-breaker.ts; this file adds only what an
 * entity needs around it: workflow time, who holds the HALF_OPEN probe (so a retried ask gets the
 * same answer, and a probe lost with its run cannot wedge the breaker: past its lease it counts as
 * a failed probe), the bounded event log, the runs waiting, UI details, and continue-as-new. It
 * never ends by itself.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  log,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  breakerAsk,
  breakerReport,
  breakerReset,
  DEFAULT_BREAKER_CONFIG,
  initialBreaker,
  type BreakerConfig,
  type ProviderBreakerState,
} from '../rules/provider-breaker.js';
import {
  askUpdate,
  AskPayloadSchema,
  BREAKER_LIMITS,
  breakerStateQuery,
  breakerWorkflowId,
  DEFAULT_CONTINUE_AS_NEW_AFTER_MESSAGES,
  DEFAULT_PROBE_LEASE_MS,
  effectivePhase,
  failuresInWindow,
  parseBreakerPayload,
  ProviderBreakerInputSchema,
  reportSignal,
  ReportPayloadSchema,
  resetUpdate,
  ResetPayloadSchema,
  type AskAnswer,
  type AskPayload,
  type BreakerEvent,
  type BreakerView,
  type InvalidReport,
  type ProbeHolder,
  type ProviderBreakerInput,
  type WaitingRun,
} from './provider-breaker-messages.js';

export { breakerWorkflowId } from './provider-breaker-messages.js';

const nowMs = (): number => Date.now(); // deterministic: workflow clock
const iso = (ms: number): string => new Date(ms).toISOString();
const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

export async function vigilProviderBreaker(rawInput: ProviderBreakerInput): Promise<never> {
  const parsed = parseBreakerPayload('vigilProviderBreaker input', ProviderBreakerInputSchema, rawInput);
  if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.error, 'InvalidBreakerInput');
  const input = parsed.value;
  const provider = input.provider;
  const workflowId = breakerWorkflowId(provider);
  const cfg: BreakerConfig = { ...DEFAULT_BREAKER_CONFIG, ...input.config };
  const rolloverAfter = input.continueAsNewAfterMessages ?? DEFAULT_CONTINUE_AS_NEW_AFTER_MESSAGES;
  const defaultLeaseMs = input.probeLeaseMs ?? DEFAULT_PROBE_LEASE_MS;
  const generation = input.generation ?? 0;

  let state: ProviderBreakerState = input.state ?? initialBreaker();
  let events: BreakerEvent[] = input.events ?? [];
  let waiting: WaitingRun[] = input.waiting ?? [];
  let invalidReports: InvalidReport[] = input.invalidReports ?? [];
  let invalidReportCount = input.invalidReportCount ?? 0;
  let probe: ProbeHolder | null = null;
  if (state.probeInFlight) {
    // Every probe out has a holder and a lease, even one carried without (a hand-made input).
    const since = state.lastProbeAtMs ?? nowMs();
    probe = input.probe ?? { runId: 'unknown', askId: null, atMs: since, leaseUntilMs: since + defaultLeaseMs };
  }
  let messages = 0;

  // ---- bookkeeping ----

  const record = (e: Omit<BreakerEvent, 'at'>): void => {
    const event: BreakerEvent = { ...e, by: e.by.slice(0, 300), why: e.why.slice(0, 500), at: iso(e.atMs) };
    events = [...events, event].slice(-BREAKER_LIMITS.recentEvents);
    log.info('provider breaker transition', { provider, ...event });
  };

  /** Records what an ask, a report or a lease expiry changed (`by` caused it). */
  const noteChange = (before: ProviderBreakerState, after: ProviderBreakerState, now: number, by: string, reason?: string): void => {
    const from = effectivePhase(before, now);
    if (before.phase === 'OPEN' && after.phase !== 'OPEN' && before.openUntilMs !== null) {
      record({
        kind: 'transition',
        from: 'OPEN',
        to: 'HALF_OPEN',
        atMs: before.openUntilMs,
        by,
        why: `cooldown of ${seconds(cfg.cooldownMs)} ended`,
      });
    }
    if (after.trips > before.trips) {
      const cause = from === 'CLOSED' ? `${cfg.failureThreshold} failure(s) within ${seconds(cfg.failureWindowMs)}` : 'the probe failed';
      record({
        kind: 'transition',
        from,
        to: 'OPEN',
        atMs: now,
        by,
        why: `${cause}${reason ? `: ${reason}` : ''}; open until ${iso(after.openUntilMs ?? now)}`,
      });
    } else if (from === 'HALF_OPEN' && after.phase === 'CLOSED') {
      record({ kind: 'transition', from, to: 'CLOSED', atMs: now, by, why: `${cfg.closeAfterSuccesses} probe(s) succeeded in a row` });
    }
  };

  /** Waiting runs whose retry time is not long past (a run that stopped asking is forgotten). */
  const currentWaiting = (now: number): WaitingRun[] => waiting.filter((w) => w.retryAtMs + BREAKER_LIMITS.waitingGraceMs >= now);

  const view = (): BreakerView => {
    const now = nowMs();
    return {
      provider,
      workflowId,
      state,
      effectivePhase: effectivePhase(state, now),
      config: cfg,
      recentEvents: events,
      runsWaiting: currentWaiting(now),
      probe,
      invalidReportCount,
      invalidReports,
      messagesThisRun: messages,
      continueAsNewAfterMessages: rolloverAfter,
      generation,
      atMs: now,
    };
  };

  /** The Temporal UI's current details: the phase, until when, and what happened last. */
  const details = (): string => {
    const now = nowMs();
    const phase = effectivePhase(state, now);
    let head = `**${phase}** · provider \`${provider}\``;
    if (state.phase === 'OPEN' && phase === 'OPEN') head += ` · calls refused until ${iso(state.openUntilMs ?? now)}`;
    else if (state.phase === 'OPEN') head += ` · cooldown ended at ${iso(state.openUntilMs ?? now)}: the next ask is the probe`;
    else if (phase === 'HALF_OPEN') head += ` · ${state.probeSuccesses}/${cfg.closeAfterSuccesses} probe successes`;
    else head += ` · ${failuresInWindow(state, now, cfg)}/${cfg.failureThreshold} failures in ${seconds(cfg.failureWindowMs)}`;
    const lines = [head];
    if (probe) lines.push(`Probe out: run \`${probe.runId}\` since ${iso(probe.atMs)} (lease until ${iso(probe.leaseUntilMs)})`);
    const last = events.at(-1);
    if (last) lines.push(`Last ${last.kind}: ${last.from} → ${last.to} at ${last.at} by ${last.by}: ${last.why}`);
    lines.push(
      `Trips ${state.trips} · runs waiting ${currentWaiting(now).length} · invalid reports ${invalidReportCount} · ` +
        `messages ${messages}/${rolloverAfter} · generation ${generation}`,
    );
    return lines.join('\n\n');
  };
  const publish = (): void => setCurrentDetails(details());

  // ---- messages ----

  const ask = (p: AskPayload): AskAnswer => {
    messages += 1;
    const now = nowMs();
    // The same ask again (an activity retry after this execution rolled over): the same answer.
    if (state.probeInFlight && probe && p.askId !== undefined && probe.askId === p.askId) return { allow: true, probe: true, state };
    const before = state;
    const r = breakerAsk(state, now, cfg);
    state = r.state;
    noteChange(before, state, now, p.runId);
    const d = r.decision;
    const others = waiting.filter((w) => w.runId !== p.runId);
    if (d.allow) {
      waiting = others;
      if (d.probe) probe = { runId: p.runId, askId: p.askId ?? null, atMs: now, leaseUntilMs: now + (p.leaseMs ?? defaultLeaseMs) };
    } else {
      const since = waiting.find((w) => w.runId === p.runId)?.sinceMs ?? now;
      waiting = [...others, { runId: p.runId, sinceMs: since, retryAtMs: d.retryAtMs, reason: d.reason }].slice(
        -BREAKER_LIMITS.waitingRuns,
      );
    }
    publish();
    return { ...d, state };
  };

  setHandler(
    askUpdate,
    (payload: AskPayload) => {
      const r = parseBreakerPayload('ask', AskPayloadSchema, payload);
      if (!r.ok) throw new Error(r.error); // unreachable: the validator ran first
      return ask(r.value);
    },
    {
      validator: (payload: AskPayload) => {
        const r = parseBreakerPayload('ask', AskPayloadSchema, payload);
        if (!r.ok) throw new Error(r.error);
      },
      description: 'May a call to this provider go out now? Answers allow (maybe as the probe) or when to ask again.',
    },
  );

  const recordInvalid = (error: string): void => {
    invalidReportCount += 1;
    invalidReports = [...invalidReports, { atMs: nowMs(), error: error.slice(0, 1000) }].slice(-BREAKER_LIMITS.invalidReports);
    log.warn('ignored invalid report signal', { provider, error });
  };

  setHandler(
    reportSignal,
    (payload: unknown) => {
      messages += 1;
      // Never throws: a bad report must not fail the workflow task (it would fail on every replay).
      try {
        const r = parseBreakerPayload('report', ReportPayloadSchema, payload);
        if (!r.ok) {
          recordInvalid(r.error);
        } else {
          const p = r.value;
          const now = nowMs();
          // Only the holder's report is the probe's: a late report of an older probe says nothing now.
          const isTheProbe =
            p.probe &&
            probe !== null &&
            probe.runId === p.runId &&
            (p.askId === undefined || probe.askId === null || probe.askId === p.askId);
          const before = state;
          state = breakerReport(state, p.outcome, now, cfg, { probe: isTheProbe });
          if (!state.probeInFlight) probe = null;
          noteChange(before, state, now, p.runId, p.reason);
        }
      } catch (err) {
        recordInvalid(`report: ${err instanceof Error ? err.message : String(err)}`);
      }
      publish();
    },
    {
      description:
        'The outcome of a call this breaker let out: {runId, outcome: success|failure|released, probe, reason?}. Invalid payloads are ignored and counted.',
    },
  );

  setHandler(
    resetUpdate,
    (payload?: unknown) => {
      const r = parseBreakerPayload('reset', ResetPayloadSchema, payload);
      if (!r.ok) throw new Error(r.error); // unreachable: the validator ran first
      messages += 1;
      const now = nowMs();
      const before = state;
      state = breakerReset(state, now);
      probe = null;
      const by = r.value.by ?? 'unknown';
      record({
        kind: 'reset',
        from: effectivePhase(before, now),
        to: 'CLOSED',
        atMs: now,
        by,
        why: r.value.reason ? `operator reset: ${r.value.reason}` : 'operator reset',
      });
      publish();
      return state;
    },
    {
      validator: (payload?: unknown) => {
        const r = parseBreakerPayload('reset', ResetPayloadSchema, payload);
        if (!r.ok) throw new Error(r.error);
      },
      description: 'Operator override: close the breaker now ({by?, reason?}). Answers with the new state.',
    },
  );

  setHandler(breakerStateQuery, view, {
    description: 'The breaker: state, config, recent transitions and resets, runs waiting, invalid reports.',
  });

  // ---- the entity's own clock: cooldown ends, probe leases, rollover ----

  /** A probe not reported within its lease counts as a failed probe: the breaker re-opens. */
  const expireProbe = (now: number): void => {
    if (!probe || now < probe.leaseUntilMs) return;
    const lost = probe;
    const before = state;
    state = breakerReport(state, 'failure', now, cfg, { probe: true });
    probe = null;
    noteChange(
      before,
      state,
      now,
      'vigil',
      `run ${lost.runId} did not report its probe within its lease (${seconds(lost.leaseUntilMs - lost.atMs)})`,
    );
  };

  /** The next instant the breaker changes by itself, if any. */
  const nextDeadline = (now: number): number | null => {
    const due: number[] = [];
    if (state.phase === 'OPEN' && state.openUntilMs !== null && state.openUntilMs > now) due.push(state.openUntilMs);
    if (probe && probe.leaseUntilMs > now) due.push(probe.leaseUntilMs);
    return due.length ? Math.min(...due) : null;
  };
  const deadlineKey = (): string => `${state.phase}:${state.openUntilMs ?? ''}:${probe?.leaseUntilMs ?? ''}`;
  const rolloverDue = (): boolean => messages >= rolloverAfter || workflowInfo().continueAsNewSuggested;

  const rollOver = async (): Promise<never> => {
    const now = nowMs();
    const carried = ProviderBreakerInputSchema.parse({
      provider,
      config: cfg,
      state,
      events,
      probe,
      waiting: currentWaiting(now),
      invalidReports,
      invalidReportCount,
      ...(input.continueAsNewAfterMessages !== undefined ? { continueAsNewAfterMessages: input.continueAsNewAfterMessages } : {}),
      ...(input.probeLeaseMs !== undefined ? { probeLeaseMs: input.probeLeaseMs } : {}),
      generation: generation + 1,
    });
    log.info('provider breaker continuing as new', {
      provider,
      messages,
      generation: carried.generation,
      historyLength: workflowInfo().historyLength,
    });
    return continueAsNew<typeof vigilProviderBreaker>(carried);
  };

  publish();
  for (;;) {
    const now = nowMs();
    if (probe && now >= probe.leaseUntilMs) {
      expireProbe(now);
      publish();
    }
    const key = deadlineKey();
    const deadline = nextDeadline(now);
    const woken = () => rolloverDue() || deadlineKey() !== key;
    if (deadline === null) await condition(woken);
    // Bounds the sleep to the next instant the breaker changes by itself: the end of the cooldown
    // (the UI details then say HALF_OPEN) or of the probe lease (the probe then counts as failed).
    else await condition(woken, deadline - now);
    if (rolloverDue()) {
      // Handlers are synchronous, so this is immediate; it keeps a future async handler safe.
      await condition(allHandlersFinished);
      return rollOver();
    }
    publish();
  }
}
