/**
 * Attempts from a stuck point (knob `onStuck=fork`, docs/attempts.md): the record a run keeps of
 * its fork (in its state and its status), and what a fork's own run is told of it (its input's
 * `forkOf`). Both are absent in runs that never forked, and in every run started before them.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';

/** One fork: its run, what it ran with, and how it ended (null while it runs). */
export const ForkAttemptSchema = shared('schemas/fork:ForkAttemptSchema', () =>
  z.object({
    n: z.number().int().min(1).max(9),
    workflowId: z.string().max(400),
    provider: z.string().max(40),
    model: z.string().max(200),
    tier: z.enum(['planning', 'development', 'fast']),
    budgetUsd: z.number().min(0),
    status: z.string().max(60).nullable(),
    reason: z.string().max(500).nullable(),
    iterations: z.number().int().min(0).nullable(),
    findings: z.number().int().min(0).nullable(),
    spendUsd: z.number().min(0).nullable(),
  }),
);
export type ForkAttempt = z.infer<typeof ForkAttemptSchema>;

/** The fork of a run that got stuck: where, from which checkpoint, its attempts, and which one won. */
export const ForkStateSchema = shared('schemas/fork:ForkStateSchema', () =>
  z.object({
    /** The run's iteration where the valve would have force-stopped it, and the valve's reason. */
    stuckAt: z.number().int().min(0),
    stuck: z.string().max(1000),
    /** The checkpoint the forks start from (iteration 0: the run start), its commit and tree. */
    from: z.object({ iteration: z.number().int().min(0), commit: z.string().max(64).nullable(), tree: z.string().max(64) }),
    /** The commit each fork's worktree starts at: the checkpoint's tree on the run start's HEAD. */
    base: z.string().max(64),
    phase: z.enum(['running', 'ended']),
    attempts: z.array(ForkAttemptSchema).max(9),
    /** The fork that continues the run (null: none yet, or none approved), and the evidence line its run ended with. */
    winner: z.number().int().min(1).nullable(),
    evidence: z.string().max(2000).nullable(),
    /** The winner's tree, written into the run's working tree. */
    tree: z.string().max(64).nullable(),
  }),
);
export type ForkState = z.infer<typeof ForkStateSchema>;

/** In a fork's own input: the run it forks, its number, and what its first prompt says of the stuck point. */
export const ForkOfSchema = shared('schemas/fork:ForkOfSchema', () =>
  z.object({ parentId: z.string().max(300), n: z.number().int().min(1).max(9), directive: z.string().max(4000) }),
);
export type ForkOf = z.infer<typeof ForkOfSchema>;
