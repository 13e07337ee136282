/**
 * An agent call's result as its caller uses it: the run workflow and the round drivers both read
 * compact results (`compact: true` in the call) with their defaults back.
 *
 * Sandbox-safe: deterministic, no I/O (it runs as workflow code and inside the round activities).
 */
import { AGENT_RESULT_NULL_DEFAULTS, AgentResultSchema, type AgentResult } from '../schemas/activities.js';

/** An agent call's result as the workflow uses it: a compact one (`compact: true` in the call) gets its defaults back. */
export function agentResultOf(r: AgentResult, compact: boolean | undefined): AgentResult {
  if (!compact) return r;
  const parsed = AgentResultSchema.safeParse(r);
  // A result the schema refuses (never expected) still gets its null fields back rather than failing the workflow task.
  return parsed.success
    ? parsed.data
    : { ...(Object.fromEntries(AGENT_RESULT_NULL_DEFAULTS.map((k) => [k, null])) as Partial<AgentResult>), ...r };
}
