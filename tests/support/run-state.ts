/**
 * A run state for unit tests: what a run holds before its first iteration (workflows/initial-state.ts,
 * started at time 0), with the fields a test needs changed.
 */
import { RunStateSchema, type RunState } from '../../schemas/run.js';
import { initialRunState } from '../../workflows/initial-state.js';

export const runState = (over: Record<string, unknown> = {}): RunState => RunStateSchema.parse({ ...initialRunState(0), ...over });
