/**
 * After a failed iteration: findings for the next prompt, the dead letter, a rate limit (waited out
 * or handed to the failover chain) and the exponential backoff on a durable, interruptible timer.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { AgentResult } from '../../schemas/activities.js';
import { LIMITS } from '../../schemas/run.js';
import { backoffSeconds } from '../../rules/backoff.js';
import { waitWithinCaps } from '../../rules/caps.js';
import { failureFingerprint, trackDeadLetter } from '../../rules/dead-letter.js';
import { failOverOnRateLimit } from '../../rules/failover.js';
import { escalateToPerson, notifyPeople } from './people.js';
import { type Again, AGAIN, type Run } from './run.js';

const tail = (s: string, n: number): string => (s.length <= n ? s : s.slice(s.length - n));

/**
 * After a failed iteration: its findings for the next prompt, then a dead letter (the same failure
 * again and again), a rate limit (the provider's wait, or the failover chain) or the backoff, a
 * durable timer that a pause, stop, rollover or rewind cuts short.
 */
export async function afterFailedIteration(run: Run, result: AgentResult): Promise<Again> {
  const { state, knobs, info } = run;
  state.lastFindings =
    `Iteration ${state.iteration} failed with exit code ${result.exitCode}${result.hung ? ` (${result.hung})` : result.timedOut ? ' (timed out)' : ''}. ` +
    `Last output:\n${tail(result.tail, LIMITS.findingChars)}`;
  // The same failure over and over is a dead letter: a person is told instead of retrying on.
  if (knobs.deadLetterAfter > 0 && result.rateLimit === null && (await deadLetterFailure(run, result))) {
    run.publish();
    return AGAIN;
  }
  // A provider rate limit waits as long as the provider says (or its request rate implies);
  // anything else backs off exponentially. Both count as a failed attempt.
  const rateLimited = result.rateLimit;
  // deterministic: seeded workflow random
  const rawWait = rateLimited ? rateLimited.waitSeconds : backoffSeconds(state.consecutiveFailures, knobs, run.sdk.random());
  // A rate limit says nothing about the work: it is not a failure (no retry count, no tier climb).
  if (!rateLimited) state.consecutiveFailures += 1;
  if (rateLimited) {
    state.lastFindings =
      `Iteration ${state.iteration} hit a provider rate limit; Vigil waited ${rawWait}s ` +
      `(${rateLimited.source.replace(/_/g, ' ')}) before this attempt.`;
    if (knobs.rateLimitNotifySeconds > 0 && rawWait > knobs.rateLimitNotifySeconds) {
      await notifyPeople(
        run,
        'rate_limited',
        `Rate limited for ${rawWait}s`,
        `The agent hit a provider rate limit at iteration ${state.iteration}; the run waits ${rawWait}s before retrying.`,
        'warning',
        { iteration: state.iteration, waitSeconds: rawWait, source: rateLimited.source },
        `${info.workflowId}:rate_limited:${state.iteration}`,
      );
    }
  }
  if (rateLimited && result.provider === knobs.provider && failOverOnRateLimit(rawWait, knobs)) {
    // The run's provider is out for a while: the next iteration goes to the failover chain.
    state.providerBlockedUntilMs = run.nowMs() + rawWait * 1000;
    state.lastFindings = `Iteration ${state.iteration} hit a ${result.provider} rate limit (${rawWait}s); the next iteration runs on a failover provider.`;
    run.publish();
    return AGAIN;
  }
  const capsNow = {
    iteration: state.iteration,
    consecutiveFailures: state.consecutiveFailures,
    startedAtMs: state.startedAtMs,
    nowMs: run.nowMs(),
  };
  const wait = waitWithinCaps(rawWait, capsNow, knobs);
  if (wait > 0 && state.consecutiveFailures < knobs.maxRetries) {
    run.status = 'backing_off';
    run.backoffUntil = new Date(run.nowMs() + wait * 1000).toISOString(); // deterministic: workflow clock
    run.publish();
    await run.sdk.until(() => run.messageWaiting(), wait * 1000, {
      summary: rateLimited
        ? `rate limited: waiting ${wait}s (${rateLimited.source.replace(/_/g, ' ')}) after iteration ${state.iteration}`
        : `backoff ${wait}s after failed iteration ${state.iteration}`,
    });
    run.backoffUntil = null;
    run.status = 'running';
    if (rateLimited && knobs.rateLimitNotifySeconds > 0 && wait > knobs.rateLimitNotifySeconds && !run.stopRequest && !state.pause) {
      await notifyPeople(
        run,
        'rate_limited',
        'Rate limit over: the run goes on',
        `The provider's rate-limit wait after iteration ${state.iteration} has ended; the run continues.`,
        'info',
        { iteration: state.iteration, waitedSeconds: wait },
        `${info.workflowId}:rate_limit_over:${state.iteration}`,
      );
    }
  }
  run.publish();
  return AGAIN;
}

/**
 * Counts a failed iteration by its fingerprint (error class + normalised last lines); the
 * `deadLetterAfter`-th occurrence is recorded as a dead letter and escalated to a person
 * (a pause in supervised mode). True when the run was paused for it.
 */
export async function deadLetterFailure(run: Run, result: AgentResult): Promise<boolean> {
  const { state, knobs } = run;
  const errorClass = result.timedOut ? 'timeout' : `exit ${result.exitCode}`;
  const r = trackDeadLetter(
    state.deadLetter,
    {
      fingerprint: failureFingerprint(errorClass, result.tail),
      errorClass,
      tail: result.tail,
      atIso: run.nowIso(),
      iteration: state.iteration,
    },
    knobs.deadLetterAfter,
  );
  state.deadLetter = r.state;
  const dead = r.deadLettered;
  if (!dead) return false;
  const line = `the same failure (${dead.errorClass}) ${dead.attempts} times, at iterations ${dead.iterations.join(', ')}`;
  await escalateToPerson(
    run,
    'dead_letter',
    'an iteration keeps failing the same way',
    [line, `last output: ${dead.tail.split('\n').filter(Boolean).slice(-3).join(' | ').slice(0, 400)}`],
    [],
    knobs.autonomyMode === 'supervised',
    null,
  );
  return state.pause !== null;
}
