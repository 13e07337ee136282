/**
 * `vigil_task_complete` (cli/mcp.ts): an agent inside a run claims completion with a summary,
 * evidence and a confidence. The claim is the one the run already knows (docs/agent-contract.md):
 * the file `.vigil/signals/COMPLETION_REQUESTED` in the run's repository, which the agent call's
 * activity consumes when the call ends (activities/agent.ts), keeping the body as evidence in the
 * run's folder (`iteration-NNNN.completion-requested`). The run judges it as any claim: gates,
 * code review, the PRD checklist and the council, never the confidence.
 *
 * The server knows its run from the variables Vigil sets for every agent call: VIGIL_RUN_ID,
 * VIGIL_ROLE, VIGIL_ITERATION and VIGIL_PROMPT_FILE. No variable names the repository; the prompt
 * file does: an iteration's prompt is `<repo>/.vigil/runs/<run>/iteration-NNNN.prompt.md`, so
 * the repository is the folder that path is under, checked against the run id and iteration.
 */
import { lstatSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir, writePrivateFile } from '../lib/safe-files.js';
import type { McpTaskCompleteOutput, TaskCompleteClaim } from '../schemas/mcp.js';
import { runDirPath, VIGIL_DIR } from '../schemas/paths.js';
import { CliError, EXIT } from './errors.js';

export interface ClaimInput {
  summary: string;
  evidence: string[];
  confidence: number;
}

/** Where the run's claim goes: the repository and iteration of the agent call this process serves. */
export interface ClaimTarget {
  runId: string;
  iteration: number;
  repoPath: string;
}

const NOT_IN_A_RUN =
  'vigil_task_complete claims completion for the run whose agent call started this server, and this server was not started by one: VIGIL_RUN_ID is not set. ' +
  'A person asks for a completion check with `vigil review <id>` instead.';

/**
 * The run, iteration and repository of the agent call this process runs under; refuses anything
 * else. `tool`: the tool asking (the builder's tools that write to the run's signals).
 */
export function claimTarget(env: NodeJS.ProcessEnv, tool = 'vigil_task_complete'): ClaimTarget {
  const runId = env.VIGIL_RUN_ID;
  if (!runId) throw new CliError(NOT_IN_A_RUN, EXIT.usage);
  const role = env.VIGIL_ROLE;
  if (role !== 'iteration') {
    // Only the builder's call reads a claim: one left by a reviewer would be taken as the next iteration's.
    throw new CliError(
      `${tool} is for the builder (VIGIL_ROLE=iteration); this agent call is the run's ` +
        `${role ? `"${role}"` : 'unnamed role'}, whose answer is its verdict or vote (docs/agent-contract.md)`,
      EXIT.usage,
    );
  }
  const iteration = Number(env.VIGIL_ITERATION);
  if (!Number.isInteger(iteration) || iteration < 1)
    throw new CliError(
      `VIGIL_ITERATION is "${env.VIGIL_ITERATION ?? ''}", not an iteration: this server was not started by an agent call of run "${runId}"`,
      EXIT.usage,
    );
  const prompt = env.VIGIL_PROMPT_FILE;
  if (!prompt || !path.isAbsolute(prompt))
    throw new CliError(`VIGIL_PROMPT_FILE is "${prompt ?? ''}": the repository of run "${runId}" cannot be told from it`, EXIT.usage);
  const runFolder = path.dirname(prompt);
  const runsFolder = path.dirname(runFolder);
  const repoPath = path.dirname(path.dirname(runsFolder));
  const expected = `iteration-${String(iteration).padStart(4, '0')}.prompt.md`;
  if (
    path.basename(prompt) !== expected ||
    path.normalize(runDirPath(repoPath, runId)) !== runFolder ||
    path.basename(path.dirname(runsFolder)) !== VIGIL_DIR
  ) {
    throw new CliError(
      `VIGIL_PROMPT_FILE (${prompt}) is not the prompt of iteration ${iteration} of run "${runId}" ` +
        `(<repo>/${VIGIL_DIR}/runs/<run>/${expected}): the claim's repository cannot be told`,
      EXIT.usage,
    );
  }
  return { runId, iteration, repoPath };
}

/** Writes the claim for `target` (atomically: the run never reads half a claim) and says where. */
export function writeClaim(target: ClaimTarget, input: ClaimInput, now: Date = new Date()): McpTaskCompleteOutput {
  const signals = path.join(target.repoPath, VIGIL_DIR, 'signals');
  try {
    ensurePrivateDir(path.resolve(target.repoPath), signals);
  } catch (err) {
    throw new CliError(`cannot write the claim of run "${target.runId}": ${err instanceof Error ? err.message : String(err)}`, EXIT.usage);
  }
  const file = path.join(signals, 'COMPLETION_REQUESTED');
  let replaced = false;
  try {
    replaced = lstatSync(file).isFile();
  } catch {
    /* none yet */
  }
  const claim: TaskCompleteClaim = {
    by: 'vigil_task_complete',
    runId: target.runId,
    role: 'iteration',
    iteration: target.iteration,
    at: now.toISOString(),
    summary: input.summary,
    evidence: input.evidence,
    confidence: input.confidence,
  };
  const temp = path.join(signals, `.COMPLETION_REQUESTED.${process.pid}.tmp`);
  try {
    writePrivateFile(temp, `${JSON.stringify(claim, null, 2)}\n`);
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw new CliError(
      `cannot write the claim of run "${target.runId}" to ${file}: ${err instanceof Error ? err.message : String(err)}`,
      EXIT.usage,
    );
  }
  return {
    claimed: true,
    runId: target.runId,
    iteration: target.iteration,
    path: file,
    replaced,
    note:
      `iteration ${target.iteration} claims completion: Vigil reads the claim when this agent call ends and judges it with its ` +
      `own checks (gates, code review, the PRD checklist, the council); the confidence does not decide it`,
  };
}
