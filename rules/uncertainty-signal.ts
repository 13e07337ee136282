/**
 * An `UNCERTAINTY_ESCALATION` file consumed after an iteration (activities/signals.ts): Vigil
 * writes one with the handoff of an uncertainty escalation (activities/loop-signals.ts,
 * `"by": "vigil"`), which the agent's next call sees and its inspection consumes: nothing to act
 * on. Any other is the agent's own report that it is unsure how to go on (the original's empty
 * marker, a line of text, or JSON with a `reason`): read as a request for a person.
 */

const DEFAULT_REASON = 'the agent reported that it is unsure how to go on (UNCERTAINTY_ESCALATION)';

/** The agent's words, or null for Vigil's own marker. */
export function agentUncertainty(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed) return DEFAULT_REASON;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return trimmed.slice(0, 900);
  }
  if (parsed === null || typeof parsed !== 'object') return trimmed.slice(0, 900);
  const o = parsed as { by?: unknown; reason?: unknown };
  if (o.by === 'vigil') return null;
  return typeof o.reason === 'string' && o.reason.trim() ? o.reason.trim().slice(0, 900) : DEFAULT_REASON;
}
