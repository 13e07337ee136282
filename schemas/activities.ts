/**
 * Inputs and outputs of activities. Outputs carry facts, paths and short tails only (a few KiB),
 * never transcripts: history stays small however long the run.
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { PhaseSchema, TierSchema } from './run.js';

export const AGENT_ROLES = ['iteration', 'council', 'devils-advocate', 'reviewer'] as const;
export const AgentRoleSchema = z.enum(AGENT_ROLES);
export type AgentRole = z.infer<typeof AgentRoleSchema>;

export const PrepareRunInputSchema = z.object({ repoPath: z.string(), runId: z.string() });
export type PrepareRunInput = z.infer<typeof PrepareRunInputSchema>;

export const PrepareRunResultSchema = z.object({
  /** HEAD at run start; null when the repository has no commits yet. */
  sha: z.string().nullable(),
  /** Tree hash of the working tree at run start (see inspectRepo). */
  treeHash: z.string(),
  artifactDir: z.string(),
});
export type PrepareRunResult = z.infer<typeof PrepareRunResultSchema>;

export const RunAgentInputSchema = z.object({
  runId: z.string(),
  repoPath: z.string(),
  argv: z.array(z.string()).min(1),
  prompt: z.string(),
  role: AgentRoleSchema,
  iteration: z.number().int().min(1),
  phase: PhaseSchema,
  tier: TierSchema,
  timeoutSeconds: z.number().int().min(1),
  completionPromise: z.string(),
  /** Extra environment for the agent (e.g. VIGIL_MEMBER for council members). */
  extraEnv: z.record(z.string(), z.string()).default({}),
});
export type RunAgentInput = z.infer<typeof RunAgentInputSchema>;

export const AgentResultSchema = z.object({
  exitCode: z.number().int(),
  /** True when the agent was killed for exceeding its timeout (exit code 124). */
  timedOut: z.boolean(),
  durationMs: z.number().int().min(0),
  logPath: z.string(),
  promptPath: z.string(),
  /** Last lines of the output, at most ~2 KiB. */
  tail: z.string(),
  outputBytes: z.number().int().min(0),
  /** Completion claimed by promise text in the output or by the signal file (consumed). */
  claimed: z.boolean(),
  claimSource: z.enum(['promise', 'signal-file']).nullable(),
  /** Which attempt of this activity produced the result (> 1 after a worker crash). */
  attempt: z.number().int().min(1),
});
export type AgentResult = z.infer<typeof AgentResultSchema>;

export const InspectRepoInputSchema = z.object({
  repoPath: z.string(),
  runStartSha: z.string().nullable(),
});
export type InspectRepoInput = z.infer<typeof InspectRepoInputSchema>;

export const RepoSnapshotSchema = z.object({
  /** Git tree id of the working tree as `git add -A` would stage it (committed, staged, unstaged,
   * untracked-not-ignored), excluding `.vigil/`. Content-addressed: commits alone do not change it. */
  treeHash: z.string(),
  head: z.string().nullable(),
  /** Files that differ from the run-start commit (first 50), and the totals. */
  changedFiles: z.array(z.string()).max(50),
  changedCount: z.number().int().min(0),
  insertions: z.number().int().min(0),
  deletions: z.number().int().min(0),
});
export type RepoSnapshot = z.infer<typeof RepoSnapshotSchema>;

export const RunTestsInputSchema = z.object({
  runId: z.string(),
  repoPath: z.string(),
  command: z.string().min(1),
  iteration: z.number().int().min(0),
  timeoutSeconds: z.number().int().min(1),
});
export type RunTestsInput = z.infer<typeof RunTestsInputSchema>;

export const TestResultSchema = z.object({
  passed: z.boolean(),
  exitCode: z.number().int(),
  timedOut: z.boolean(),
  durationMs: z.number().int().min(0),
  logPath: z.string(),
  tail: z.string(),
});
export type TestResult = z.infer<typeof TestResultSchema>;

/** Failure types thrown by activities as non-retryable ApplicationFailures. */
export const FAILURE_TYPES = {
  agentNotRunnable: 'AgentNotRunnable',
  notAGitRepository: 'NotAGitRepository',
} as const;
