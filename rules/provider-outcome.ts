/**
 * What an agent call says about its provider's health, for the provider circuit breaker: a rate
 * limit, an auth error, an API/network failure in the last lines of a failed call, or a call that
 * hit its timeout without a word from the model (a hung stream: the CLI printed nothing the model
 * produced, as its preset reads the output) or that the silence watchdog ended (no output and no
 * change in the repository for `agentSilenceMinutes`: a hung call, whatever the provider preset can
 * tell of its output) is the provider's failure; any other result (the
 * agent ran, whatever it concluded, however long it took) is a success. A failing test in the
 * output is the agent's business, never the provider's, and so is a timeout after the model
 * answered (a slow test, a long tool run), and a call a sandbox limit ended (its processes or its
 * memory: what the agent did, whatever its last lines say as its tree is killed).
 */
import { isTestRunnerLine, lastLines } from './runner-lines.js';

const API_FAILURE = new RegExp(
  String.raw`\b(?:${[
    /API Error|api_error|overloaded(?:_error)?|service unavailable|internal server error|bad gateway/.source,
    /gateway time-?out|HTTP (?:500|502|503|504|529)|status(?: code)?:? (?:500|502|503|504|529)|ECONNRESET/.source,
    /ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|socket hang up|network error|fetch failed|stream disconnected/.source,
  ].join('|')})\b`,
  'i',
);

export interface CallHealthFacts {
  exitCode: number;
  timedOut: boolean;
  rateLimited: boolean;
  authError: boolean;
  tail: string;
  /** Whether the output shows anything from the model; null or absent: the preset cannot tell. */
  modelOutput?: boolean | null;
  /** Why a sandbox limit ended the call (the result's `sandbox.limitHit`); null or absent: none did. */
  limitHit?: string | null;
  /** Why the silence watchdog ended the call (the result's `hung`); null or absent: it did not. */
  hung?: string | null;
}

/** The breaker's reason for a timed-out call that never heard from the model. */
export const HUNG_STREAM_REASON = 'no answer from the model before the call timed out (a hung stream or a stalled API)';

export function providerOutcome(f: CallHealthFacts): { outcome: 'success' | 'failure'; reason: string | null } {
  // The agent's own doing: the provider answered (or was never asked) and is not to blame.
  if (f.limitHit) return { outcome: 'success', reason: null };
  if (f.rateLimited) return { outcome: 'failure', reason: 'rate limited' };
  if (f.authError) return { outcome: 'failure', reason: 'authentication failed' };
  if (f.timedOut && f.hung) return { outcome: 'failure', reason: `${f.hung} (a hung call)`.slice(0, 300) };
  if (f.timedOut && f.modelOutput === false) return { outcome: 'failure', reason: HUNG_STREAM_REASON };
  if (f.exitCode === 0 || f.timedOut) return { outcome: 'success', reason: null };
  const line = lastLines(f.tail)
    .filter((l) => !isTestRunnerLine(l))
    .find((l) => API_FAILURE.test(l));
  return line ? { outcome: 'failure', reason: `API failure: ${line.trim().slice(0, 200)}` } : { outcome: 'success', reason: null };
}
