/**
 * Attempts from the start (`vigil start --attempts K`): the `vigilAttempts` workflow's input and
 * what its `attempts` query answers (docs/attempts.md).
 */
import { z } from 'zod';
import { PROVIDERS } from './provider-names.js';
import { RunInputSchema } from './run.js';

export const MAX_ATTEMPTS = 9;

export const AttemptsInputSchema = z.object({
  /** The run every attempt is a copy of (its budget is shared between them). */
  run: RunInputSchema,
  attempts: z.number().int().min(2).max(MAX_ATTEMPTS),
  /** Agent CLIs (the provider knob) cycled over the attempts; empty: the run's. */
  agents: z.array(z.enum(PROVIDERS)).max(MAX_ATTEMPTS).default([]),
  /** Models (the model knob) cycled over the attempts; empty: the run's. */
  models: z.array(z.string().min(1).max(200)).max(MAX_ATTEMPTS).default([]),
  /** Keep the attempts' branches (`vigil/<run>-attempt-<n>`) after the pick; their worktrees go either way. */
  keepAttempts: z.boolean().default(false),
});
export type AttemptsInput = z.input<typeof AttemptsInputSchema>;

export const AttemptRowSchema = z.object({
  n: z.number().int(),
  workflowId: z.string(),
  provider: z.string(),
  model: z.string(),
  budgetUsd: z.number(),
  state: z.enum(['running', 'ended']),
  status: z.string().nullable(),
  reason: z.string().nullable(),
  findings: z.number().int().nullable(),
  iterations: z.number().int().nullable(),
  spendUsd: z.number().nullable(),
});
export type AttemptRow = z.infer<typeof AttemptRowSchema>;

export const AttemptsStatusSchema = z.object({
  runId: z.string(),
  phase: z.enum(['starting', 'running', 'picking', 'delivering', 'ended']),
  attempts: z.array(AttemptRowSchema),
  winner: z.number().int().nullable(),
  why: z.string().nullable(),
  branch: z.string().nullable(),
  outcome: z.object({ status: z.string(), reason: z.string(), exitCode: z.number().int() }).nullable(),
});
export type AttemptsStatus = z.infer<typeof AttemptsStatusSchema>;
