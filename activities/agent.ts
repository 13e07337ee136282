/**
 * The `command` agent provider: runs the configured argv (no shell) in the repository with the
 * prompt on stdin and VIGIL_* variables, streams output to a per-iteration log, and reports facts:
 * exit code, duration, log path, a short tail and whether completion was claimed (promise text in
 * the output, or the `.vigil/signals/COMPLETION_REQUESTED` file, which is consumed).
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES, RunAgentInputSchema, type AgentResult, type RunAgentInput } from '../schemas/activities.js';
import { ensureRunDir, pad, runDir, signalPath } from './artifacts.js';
import { buildPrompt } from '../workflows/decisions/prompt.js';
import { consumeFile, describeWriteError, isStorageError, readRegularFile, writePrivateFile } from './safe-files.js';
import { detectRateLimit } from '../workflows/decisions/rate-limit.js';
import { findDonePhrase } from '../workflows/decisions/scans.js';
import { parseVote } from '../workflows/decisions/vote.js';
import { inheritedEnv, runProcess } from './process.js';

const TAIL_CHARS = 2000;
/** Exit code of an iteration whose files could not be written before the agent started (EX_IOERR). */
export const AGENT_IO_ERROR = 74;
/** How much of a council answer is read for the vote. */
const VOTE_TEXT_KEEP = 512 * 1024;

export async function runAgent(raw: RunAgentInput): Promise<AgentResult> {
  const input = RunAgentInputSchema.parse(raw);
  const { attempt } = Context.current().info;
  const dir = runDir(input.repoPath, input.runId);
  const round = input.extraEnv.VIGIL_COUNCIL_ROUND;
  const member = input.extraEnv.VIGIL_MEMBER;
  const label =
    input.role === 'iteration'
      ? `iteration-${pad(input.iteration)}`
      : `${input.role}-${round ? `round-${pad(Number(round))}` : pad(input.iteration)}${member !== undefined && input.role === 'council' ? `-m${member}` : ''}`;
  const promptPath = path.join(dir, `${label}.prompt.md`);
  const logPath = path.join(dir, `${label}.log`);
  const prompt = input.prompt ?? (input.promptInput ? buildPrompt(input.promptInput) : null);
  if (prompt === null) throw ApplicationFailure.nonRetryable('runAgent needs a prompt or promptInput', 'InvalidActivityInput');
  try {
    ensureRunDir(input.repoPath, input.runId);
    writePrivateFile(promptPath, prompt);
  } catch (err) {
    if (!isStorageError(err)) throw err;
    // A full disk fails this iteration with a clear reason; the run backs off and tries again.
    const why = describeWriteError(`cannot write the prompt file ${promptPath}`, err);
    return { ...failedBeforeStart(attempt, logPath, promptPath), tail: `vigil: ${why}; the agent was not started`, ioError: why };
  }

  const [file, ...args] = input.argv as [string, ...string[]];
  const env = {
    ...inheritedEnv(),
    ...input.extraEnv,
    VIGIL_ROLE: input.role,
    VIGIL_RUN_ID: input.runId,
    VIGIL_ITERATION: String(input.iteration),
    VIGIL_PHASE: input.phase,
    VIGIL_TIER: input.tier,
    VIGIL_PROMPT_FILE: promptPath,
  };
  const proc = await runProcess({
    file,
    args,
    cwd: input.repoPath,
    env,
    stdin: prompt,
    timeoutMs: input.timeoutSeconds * 1000,
    logPath,
    pidFile: path.join(dir, `${label}.pid.json`),
    header: `=== vigil: ${input.role} ${input.iteration}, attempt ${attempt}, started ${new Date().toISOString()}: ${input.argv.join(' ')} ===`,
    watchFor: input.completionPromise,
    ...(input.parseVote ? { keepHead: VOTE_TEXT_KEEP } : {}),
  });
  if (proc.spawnError) {
    throw ApplicationFailure.create({
      type: FAILURE_TYPES.agentNotRunnable,
      nonRetryable: true,
      message: `agent command cannot be started: ${proc.spawnError}. Check the agentCommand knob (vigil config --explain).`,
    });
  }

  // A claim by file is consumed when read: moved into the run folder as evidence. (A link
  // planted there is removed, never followed, and claims nothing.)
  let claimSource: AgentResult['claimSource'] = proc.sawWatched ? 'promise' : null;
  if (input.role === 'iteration' && consumeFile(signalPath(input.repoPath, 'COMPLETION_REQUESTED'), path.join(dir, `${label}.completion-requested`)) === 'moved') {
    claimSource ??= 'signal-file';
  }

  const usage = consumeUsage(signalPath(input.repoPath, 'USAGE'), path.join(dir, `${label}.usage.json`));

  return {
    exitCode: proc.exitCode,
    timedOut: proc.timedOut,
    durationMs: proc.durationMs,
    logPath,
    promptPath,
    tail: (proc.logError ? `${proc.tail.slice(-(TAIL_CHARS - 300))}\nvigil: ${proc.logError}` : proc.tail).slice(-TAIL_CHARS),
    outputBytes: proc.outputBytes,
    ioError: proc.logError,
    claimed: claimSource !== null,
    claimSource,
    attempt,
    donePhrase: findDonePhrase(proc.tail),
    // The vote is the first VOTE line anywhere in the answer: read from the start of the output.
    vote: input.parseVote ? parseVote(proc.head) : null,
    usage,
    rateLimit: proc.exitCode !== 0 ? detectRateLimit(proc.tail, Date.now(), new Date().getTimezoneOffset(), input.rateLimitRpm) : null,
  };
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/**
 * The agent's own report of what the call cost, `.vigil/signals/USAGE`: JSON with `costUsd` (or
 * `cost_usd`), `inputTokens`/`input_tokens`, `outputTokens`/`output_tokens`, `model`. Consumed:
 * moved next to the call's log. Unreadable reports count as no report.
 */
function consumeUsage(file: string, keepAs: string): AgentResult['usage'] {
  if (consumeFile(file, keepAs) !== 'moved') return null;
  const read = readRegularFile(keepAs, 64 * 1024);
  if (!read?.ok) return null;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(read.text) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const model = typeof raw.model === 'string' ? raw.model.slice(0, 200) : null;
  return {
    costUsd: num(raw.costUsd ?? raw.cost_usd),
    inputTokens: Math.floor(num(raw.inputTokens ?? raw.input_tokens) ?? 0),
    outputTokens: Math.floor(num(raw.outputTokens ?? raw.output_tokens) ?? 0),
    model,
  };
}

/** The result of a call that failed before the agent could start (its files could not be written). */
function failedBeforeStart(attempt: number, logPath: string, promptPath: string): AgentResult {
  return {
    exitCode: AGENT_IO_ERROR,
    timedOut: false,
    durationMs: 0,
    logPath,
    promptPath,
    tail: '',
    outputBytes: 0,
    ioError: null,
    claimed: false,
    claimSource: null,
    attempt,
    donePhrase: null,
    vote: null,
    usage: null,
    rateLimit: null,
  };
}
