/**
 * The provider of the next call: the run's own, unless its circuit breaker is open or it is rate
 * limited and a failover provider can take over; otherwise the run waits for it (a durable wait
 * that pause, stop, rollover and rewind end). The breaker is told how the call it let out went,
 * or that it was not made. An authentication failure pauses the run.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { AgentResult } from '../../schemas/activities.js';
import type { ProviderKnob } from '../../schemas/knobs.js';
import { failoverChain } from '../../rules/failover.js';
import { providerOutcome } from '../../rules/provider-outcome.js';
import { breakerWorkflowId, reportSignal } from '../provider-breaker-messages.js';
import { notifyPeople } from './people.js';
import { type Again, AGAIN, go, INTERRUPTED, type Run, type Step } from './run.js';

/** Whether a call to `provider` asks a circuit breaker first. */
export function breakerApplies(run: Run, provider: string): boolean {
  const { knobs } = run;
  return knobs.providerBreaker && provider !== 'command';
}

/** The run's own provider, when neither a breaker nor a rate limit stands in its way (what pickProvider would answer at once). */
export function providerAtOnce(run: Run): { provider: ProviderKnob; gate: null } | null {
  const { state, knobs } = run;
  const blocked = state.providerBlockedUntilMs !== null && run.nowMs() < state.providerBlockedUntilMs;
  return blocked || breakerApplies(run, knobs.provider) ? null : { provider: knobs.provider, gate: null };
}

/**
 * The provider of the next iteration: the run's own, unless it is unavailable (breaker open, or
 * rate-limited until `providerBlockedUntilMs`) and a healthy provider of the failover chain
 * whose breaker allows takes over. With nobody to take over, the run waits for its own.
 */
export async function pickProvider(
  run: Run,
): Promise<{ provider: ProviderKnob; gate: { probe: boolean; askId: string } | null } | 'interrupted'> {
  const { state, knobs } = run;
  const { checks } = run.acts;
  const primary = knobs.provider;
  const chain = failoverChain(knobs);
  const blocked = state.providerBlockedUntilMs !== null && run.nowMs() < state.providerBlockedUntilMs;
  if (!blocked) {
    const gate = await passBreaker(run, primary, chain.length === 0);
    if (gate === 'interrupted') return 'interrupted';
    if (gate !== 'blocked') return { provider: primary, gate };
  }
  for (const alt of chain) {
    const health = await checks.providerHealth
      .executeWithOptions({ summary: `is ${alt} ready to take over?` }, [{ provider: alt }])
      .catch(() => ({ ok: false, problem: 'health check failed' }));
    if (!health.ok) {
      run.sdk.log.info('failover provider not ready', { provider: alt, problem: health.problem });
      continue;
    }
    const gate = await passBreaker(run, alt, false);
    if (gate === 'interrupted') return 'interrupted';
    if (gate === 'blocked') continue;
    run.sdk.log.info('failing over', { from: primary, to: alt, iteration: state.iteration + 1 });
    return { provider: alt, gate };
  }
  // Nobody can take over: the run's own provider, after its rate limit (a durable wait that
  // pause and stop interrupt) and its breaker.
  if (blocked && state.providerBlockedUntilMs !== null) {
    const until = state.providerBlockedUntilMs;
    run.status = 'backing_off';
    run.backoffUntil = new Date(until).toISOString(); // deterministic: workflow clock
    run.publish();
    await run.sdk.until(() => run.messageWaiting(), Math.max(until - run.nowMs(), 1), {
      summary: `rate limited, no failover provider ready: waiting until ${run.backoffUntil}`,
    });
    run.backoffUntil = null;
    run.status = 'running';
    if (run.messageWaiting()) return 'interrupted';
    state.providerBlockedUntilMs = null;
  }
  const gate = await passBreaker(run, primary, true);
  if (gate === 'interrupted') return 'interrupted';
  return { provider: primary, gate: gate === 'blocked' ? null : gate };
}

/**
 * Asks the provider's breaker before a call (null: no breaker applies, or it cannot be reached);
 * while it is open the run waits on a durable timer, re-asking at least every minute.
 */
export async function passBreaker(
  run: Run,
  provider: string,
  waitIfOpen = true,
): Promise<{ probe: boolean; askId: string } | 'interrupted' | 'blocked' | null> {
  const { state, knobs, info } = run;
  const { breakers } = run.acts;
  if (!breakerApplies(run, provider)) return null;
  for (;;) {
    const askId = run.provider.nextAskId(`${info.workflowId}/${info.runId}/${state.iteration + 1}`);
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
      run.sdk.log.warn('provider circuit breaker unreachable; calling the agent anyway', {
        provider,
        error: err instanceof Error ? err.message : String(err),
      });
      return null;
    }
    if (answer.allow) {
      if (run.provider.wait) run.status = 'running';
      run.provider.wait = null;
      return { probe: answer.probe, askId };
    }
    if (!waitIfOpen) return 'blocked';
    const waitMs = Math.min(Math.max(answer.retryAtMs - run.nowMs(), 1000), 60_000);
    const why = run.provider.whyFailed(provider);
    const wait = (run.provider.wait = {
      provider,
      until: new Date(answer.retryAtMs).toISOString(),
      reason: answer.reason,
      ...(why ? { why } : {}),
    }); // deterministic: workflow clock
    run.status = 'waiting_for_provider';
    run.publish();
    await run.sdk.until(() => run.messageWaiting(), waitMs, {
      summary: `provider ${provider} unavailable (breaker ${answer.reason.replace(/_/g, ' ')}): waiting until ${wait.until}`,
    });
    if (run.messageWaiting()) {
      run.provider.wait = null;
      run.status = run.stopRequest ? 'stopping' : 'running';
      return 'interrupted';
    }
  }
}

/** Tells the provider's breaker that the call it let out was not made (never fails the run). */
export async function releaseBreakerCall(run: Run, provider: string, gate: { probe: boolean; askId: string }): Promise<void> {
  const { info } = run;
  try {
    await run.sdk.signal(breakerWorkflowId(provider), reportSignal, {
      runId: info.workflowId,
      outcome: 'released',
      probe: gate.probe,
      askId: gate.askId,
      reason: 'the run was stopped, paused or rewound before the call',
    });
  } catch (err) {
    run.sdk.log.warn('could not release the provider circuit breaker call', {
      provider,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/** Tells the provider's breaker how the call it let out went (never fails the run). */
export async function reportToBreaker(
  run: Run,
  provider: string,
  gate: { probe: boolean; askId: string },
  result: AgentResult,
): Promise<void> {
  const { info } = run;
  const o = providerOutcome({
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    rateLimited: result.rateLimit !== null,
    authError: result.authError !== null,
    tail: result.tail,
    modelOutput: result.modelOutput,
    limitHit: result.sandbox?.limitHit,
    hung: result.hung,
  });
  run.provider.callWent(provider, o.outcome === 'failure' && o.reason ? o.reason : null);
  try {
    await run.sdk.signal(breakerWorkflowId(provider), reportSignal, {
      runId: info.workflowId,
      outcome: o.outcome,
      probe: gate.probe,
      askId: gate.askId,
      ...(o.reason ? { reason: o.reason } : {}),
    });
  } catch (err) {
    run.sdk.log.warn('could not report to the provider circuit breaker', {
      provider,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/** Pauses the run on an authentication failure and tells people (once per iteration). */
export async function pauseForAuth(run: Run, result: AgentResult): Promise<void> {
  const { state, info } = run;
  const why = `authentication failed for provider ${result.provider}: ${result.authError ?? ''}`.slice(0, 800);
  state.lastFindings = `Iteration ${state.iteration} could not reach the model: ${why}. The credentials were fixed before this attempt.`;
  if (state.pause) return;
  state.pause = {
    reason:
      `${why}. Fix the credentials where the worker runs (\`vigil doctor --provider ${result.provider}\`), then \`vigil resume ${info.workflowId}\``.slice(
        0,
        2000,
      ),
    by: 'vigil',
    at: run.nowIso(),
  };
  await notifyPeople(
    run,
    'auth_failed',
    `Authentication failed (${result.provider}): the run is paused`,
    state.pause.reason,
    'critical',
    { iteration: state.iteration, provider: result.provider },
    `${info.workflowId}:auth_failed:${state.iteration}`,
  );
}

/** The provider of an iteration, and the breaker's lease on the call when a breaker let it out. */
export type ProviderPick = { provider: ProviderKnob; gate: { probe: boolean; askId: string } | null };

/** The provider of the next call (a pick, its breaker lease with it), or INTERRUPTED when a message came while it was asked. */
export async function chooseProvider(run: Run): Promise<Step<ProviderPick>> {
  const { state } = run;
  // The provider's shared circuit breaker lets the call out, or the run waits with every
  // other run on that provider (pause and stop interrupt the wait).
  const pick = providerAtOnce(run) ?? (await pickProvider(run));
  if (pick === 'interrupted') return INTERRUPTED;
  if (run.stopRequest || state.pause || run.rewindPending() || run.rolloverNow) {
    // A message came while the provider was asked: honoured at the boundary, the call unmade.
    if (pick.gate) await releaseBreakerCall(run, pick.provider, pick.gate);
    return INTERRUPTED;
  }
  return go(pick);
}

/**
 * An authentication failure never fixes itself: no backoff, no retry count, no tier climb — the
 * run pauses in every mode until a person fixes the credentials and resumes.
 */
export async function afterAuthFailure(run: Run, result: AgentResult): Promise<Again> {
  await pauseForAuth(run, result);
  run.publish();
  return AGAIN;
}
