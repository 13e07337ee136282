/**
 * The state of a run before its first iteration: every field the run sets itself, the rest
 * (council, uncertainty, notifications, ...) at its schema default. Sandbox-safe: the caller
 * brings the start time (the workflow clock).
 */
import { RunStateSchema, type RunState } from '../schemas/run.js';
import { initialConvergence } from '../rules/convergence.js';

export function initialRunState(startedAtMs: number): RunState {
  return RunStateSchema.parse({
    iteration: 0,
    consecutiveFailures: 0,
    startedAtMs,
    runStart: null,
    convergence: initialConvergence(),
    pendingDirectives: [],
    pause: null,
    lastCompletion: null,
    lastFindings: null,
    recentIterations: [],
    invalidMessages: [],
    invalidMessageCount: 0,
    generations: 0,
  });
}
