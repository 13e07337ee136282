/**
 * What a long activity is doing right now, in its heartbeat details: the Temporal UI shows them
 * on the pending activity, and `vigil status` reads them from a describe of the run (the run
 * itself cannot know: an agent call carries its gate pass, which starts when the agent exits).
 * Plain TypeScript, no zod: the CLI's light path loads this module.
 */

/** The `step` of a gate pass's heartbeats (a `runGates` activity, or the pass an agent call carries). */
export const GATES_STEP = 'quality gates';

/** The heartbeat details a gate pass sends while one of its groups runs. */
export interface GatesStepDetails {
  step: typeof GATES_STEP;
  /** The gates of the group running now. */
  gates: string[];
}

/** The gates running now, when `details` are a gate pass's heartbeat; null otherwise. */
export function gatesRunning(details: unknown): string[] | null {
  if (typeof details !== 'object' || details === null) return null;
  const d = details as { step?: unknown; gates?: unknown };
  if (d.step !== GATES_STEP || !Array.isArray(d.gates)) return null;
  return d.gates.filter((g): g is string => typeof g === 'string').slice(0, 20);
}
