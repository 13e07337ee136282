/**
 * The agent's requests for a person (`HUMAN_REVIEW_NEEDED`) that did not pause the run (perpetual
 * mode, from `vigil-judges-see-changes-v1` on): the outcome lists them, so a run that went on
 * without an answer says what the agent asked. Pure.
 */
import type { EscalationRecord } from '../schemas/run.js';

/** At most this many requests are listed (the newest). */
const LISTED = 5;

/** One note per request that did not pause the run: `the agent asked for a person at iteration 3 (blocking), not answered: <why>`. */
export function agentRequestNotes(escalations: readonly EscalationRecord[]): string[] {
  const open = escalations.filter((e) => e.reason === 'agent_request' && !e.paused);
  return open
    .slice(-LISTED)
    .map((e) =>
      `the agent asked for a person at iteration ${e.iteration}, and the run went on (perpetual mode): ${e.detail}`.slice(0, 600),
    );
}
