/**
 * The run snapshot returned by the `status` query and printed by `vigil status --json`.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import {
  CompletionVerdictSchema,
  InvalidMessageSchema,
  IterationRecordSchema,
  OutcomeSchema,
  PauseInfoSchema,
  PhaseSchema,
  TierSchema,
} from './run.js';

export const RUN_STATUSES = ['starting', 'running', 'paused', 'backing_off', 'stopping', 'finished'] as const;
export const RunStatusSchema = z.enum(RUN_STATUSES);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const StatusSnapshotSchema = z.object({
  workflowId: z.string(),
  runId: z.string(),
  status: RunStatusSchema,
  iteration: z.number().int(),
  maxIterations: z.number().int(),
  phase: PhaseSchema.nullable(),
  tier: TierSchema.nullable(),
  paused: z.boolean(),
  pause: PauseInfoSchema.nullable(),
  consecutiveFailures: z.number().int(),
  consecutiveNoChange: z.number().int(),
  recentHashes: z.array(z.string()),
  runStartSha: z.string().nullable(),
  pendingDirectives: z.number().int(),
  backoffUntil: z.string().nullable(),
  agentRunning: z.boolean(),
  lastIteration: IterationRecordSchema.nullable(),
  recentIterations: z.array(IterationRecordSchema),
  lastCompletion: CompletionVerdictSchema.nullable(),
  outcome: OutcomeSchema.pick({ status: true, reason: true, exitCode: true }).nullable(),
  invalidMessages: z.array(InvalidMessageSchema),
  invalidMessageCount: z.number().int(),
  generations: z.number().int(),
  repoPath: z.string(),
  prdPath: z.string(),
});
export type StatusSnapshot = z.infer<typeof StatusSnapshotSchema>;
