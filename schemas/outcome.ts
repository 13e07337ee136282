/**
 * A run's outcome: its status, exit code (the process contract) and reason. Moved out of
 * schemas/run.ts, which re-exports it.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

export const OUTCOME_STATUSES = [
  'council_approved',
  'completion_promise_fulfilled',
  'already_satisfied',
  'force_stopped',
  'stopped',
  'max_iterations_reached',
  'max_duration_reached',
  'agent_not_runnable',
  'repository_unavailable',
  'gate_stuck',
  'contract_error',
  'failed',
  'merged',
  'pr_closed',
] as const;
export const OutcomeStatusSchema = shared('schemas/run:OutcomeStatusSchema', () => z.enum(OUTCOME_STATUSES));
export type OutcomeStatus = z.infer<typeof OutcomeStatusSchema>;

/** Exit codes of the process contract: 0 done or human-stopped, 20 deterministic terminal, 1 failed. */
export const OUTCOME_EXIT_CODES: Record<OutcomeStatus, 0 | 1 | 20> = {
  council_approved: 0,
  completion_promise_fulfilled: 0,
  already_satisfied: 0,
  force_stopped: 20,
  stopped: 0,
  max_iterations_reached: 20,
  max_duration_reached: 20,
  agent_not_runnable: 20,
  repository_unavailable: 20,
  gate_stuck: 20,
  contract_error: 20,
  failed: 1,
  // The pull request a run followed (knob followPr) was merged: the work landed.
  merged: 0,
  // Closed without merge: the work was not taken, so a script chaining on success must not go on.
  pr_closed: 20,
};

export const OutcomeSchema = shared('schemas/run:OutcomeSchema', () =>
  z.object({
    status: OutcomeStatusSchema,
    reason: z.string(),
    exitCode: z.union([z.literal(0), z.literal(1), z.literal(20)]),
    iteration: z.number().int().min(0),
    at: z.string(),
    /** What could not be verified independently (e.g. `no_test_runner`); empty when all was. */
    notes: z.array(z.string()).default([]),
    /** A stream's run (a task of a run split into parallel streams): what it spent, for the run that started it to sum. */
    spendUsd: z.number().min(0).optional(),
  }),
);
export type Outcome = z.infer<typeof OutcomeSchema>;
