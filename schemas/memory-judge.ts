/**
 * The activity `judgeMemory`'s input (docs/memory.md, Judgement): the run whose memory is judged
 * and the agent call it makes, as the run's other reviewing calls are made (its provider, CLI,
 * sandbox, signature and what is left of its budget). Sandbox-safe: the workflow builds it.
 */
import { z } from 'zod';
import { RunAgentInputSchema } from './activities.js';
import { shared } from './shared.js';

export const JudgeMemoryInputSchema = shared('schemas/memory-judge:JudgeMemoryInputSchema', () =>
  RunAgentInputSchema.pick({
    runId: true,
    repoPath: true,
    argv: true,
    provider: true,
    model: true,
    effort: true,
    fallbackModel: true,
    remainingBudgetUsd: true,
    authorization: true,
    sandbox: true,
    sandboxRegistries: true,
    sandboxLimits: true,
    iteration: true,
    timeoutSeconds: true,
    silenceSeconds: true,
    rateLimitRpm: true,
  }).strict(),
);
export type JudgeMemoryInput = z.input<typeof JudgeMemoryInputSchema>;
