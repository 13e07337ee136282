/**
 * The agent activity: one call of the run's agent CLI in the repository, through its provider
 * preset (lib/providers/call.ts; `command` runs the configured argv as is). The prompt is
 * rendered here from its parts and written to a private file; output streams to the call's log
 * (a readable transcript next to it for CLIs that print JSON); facts come back: exit code,
 * duration, paths, a short redacted tail, whether completion was claimed (promise text in the
 * output, or the `.vigil/signals/COMPLETION_REQUESTED` file, consumed), usage and cost, the
 * session id, an auth error, a rate limit, whether the silence watchdog ended it as hung
 * (lib/call-silence.ts). A reviewing call that changes the working tree is reported, so its
 * vote can be voided.
 */
import { attemptOf } from '../rules/attempts.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { blankAgentResult, RunAgentInputSchema, type AgentResult, type RunAgentInput } from '../schemas/activities.js';
import { ensurePrivateRunDir, ensureRunDir, pad, repositoryGone, runDir, safeSegment, signalPath } from './artifacts.js';
import { notRunnableFailure } from './agent-failure.js';
import { reviewerRecord } from '../rules/review.js';
import { decideModelOverride, MODEL_OVERRIDE_PATH, type ModelOverride } from '../rules/model-override.js';
import { withApiItems } from '../rules/checklist/api-spec.js';
import { parseChecklistOutput } from '../rules/checklist/extraction.js';
import { readApiSpecs } from './api-specs.js';
import { parseVerifierOutput } from '../rules/checklist/verifier.js';
import { buildPrompt } from '../rules/prompt.js';
import { renderPromptSpec } from '../rules/call-prompt.js';
import { readPromptTemplate } from '../lib/prompt-template.js';
import type { PromptInput } from '../schemas/activities.js';
import { consumeFile, describeWriteError, isStorageError, readRegularFile, writePrivateFile } from '../lib/safe-files.js';
import { findDonePhrase, redactSecrets } from '../rules/scans.js';
import { parseVote } from '../rules/vote.js';
import { answerOf } from '../rules/contract.js';
import { parsePlannerAnswer } from '../rules/tasks.js';
import { runProcess } from './process.js';
import { interpretCall, prepareCall, SESSION_PATTERN } from '../lib/providers/call.js';
import { authorizeCall } from './run-authorization.js';
import { changedPaths, workingTreeHash } from './git.js';
import { callSignalPath, discardCallSignals, prepareSandbox, sandboxReport } from './sandbox.js';
import { workerStoreUrl } from '../lib/event-store.js';
import { keepFilesRead } from '../lib/files-read.js';
import { acceptancePrompt, freshDraftDir } from './acceptance-author.js';
import { freshDiscoveryFile, keepDiscoveredPrd } from './discovery.js';
import { privateRunDir } from '../lib/paths.js';
import { inheritedEnv } from '../lib/child-env.js';

const TAIL_CHARS = 2000;
/** Exit code of a call whose files could not be written: its prompt before the agent started, or its log while it ran (EX_IOERR). */
export const AGENT_IO_ERROR = 74;
/** How much of a council answer is read for the vote. */
const VOTE_TEXT_KEEP = 512 * 1024;
/** How much of a structured CLI's output is kept in memory to parse (its final record is in the tail anyway). */
const STRUCTURED_KEEP = 8 * 1024 * 1024;

// The acceptance role reads the repository as a reviewer does; it writes only into its own folder
// (activities/acceptance-author.ts); so does the discovery call, its PRD (activities/discovery.ts).
const REVIEWING_ROLES = new Set([
  'council',
  'devils-advocate',
  'reviewer',
  'checklist',
  'checklist-verifier',
  'planner',
  'memory',
  'acceptance',
  'discovery',
]);
const HIDDEN_ROLES = new Set(['checklist', 'checklist-verifier', 'memory', 'acceptance']);

/**
 * An iteration's prompt from its parts, with the run's template file when it has one; a template
 * that went bad since the run started is replaced by the built-in one (the log says why).
 */
export function renderIterationPrompt(p: PromptInput): string {
  if (!p.templatePath) return buildPrompt(p);
  const t = readPromptTemplate(p.templatePath);
  if (t.ok) return buildPrompt(p, t.template);
  try {
    Context.current().log.warn('prompt template unusable; the built-in template is used', { problems: t.errors.join('; ') });
  } catch {
    // Outside an activity (tests): nobody to tell.
  }
  return buildPrompt(p);
}

/**
 * The name of a call's files in the run folder (`<label>.prompt.md`, `.log`, `.transcript.md`):
 * an iteration's number, or a reviewing role with its round, member or reviewer, `-rerun` for a
 * reviewer asked again, `-batch` for a round's members asked in one call.
 */
/** `VIGIL_ATTEMPT` for a call of attempt n of a run with attempts; nothing otherwise. */
function attemptEnv(runId: string, repoPath: string): { VIGIL_ATTEMPT?: string } {
  const n = attemptOf(runId, repoPath);
  return n === null ? {} : { VIGIL_ATTEMPT: String(n) };
}

export function callLabel(input: { role: string; iteration: number; extraEnv: Record<string, string>; subAgents?: unknown }): string {
  if (input.role === 'iteration') return `iteration-${pad(input.iteration)}`;
  const round = input.extraEnv.VIGIL_COUNCIL_ROUND ?? input.extraEnv.VIGIL_REVIEW_ROUND;
  const member = input.extraEnv.VIGIL_MEMBER;
  const reviewer = input.extraEnv.VIGIL_REVIEWER;
  const checklistIteration = input.extraEnv.VIGIL_CHECKLIST_ITERATION;
  return (
    `${input.role}-${round ? `round-${pad(Number(round))}` : pad(input.iteration)}` +
    (member !== undefined && input.role === 'council' ? `-m${member}` : '') +
    (reviewer ? `-${safeSegment(reviewer)}` : '') +
    (input.extraEnv.VIGIL_REVIEW_RERUN ? '-rerun' : '') +
    (input.subAgents ? '-batch' : '') +
    (checklistIteration ? `-i${pad(Number(checklistIteration))}` : '')
  );
}

/** `cancelSignal`: what cancels the agent, when not the activity's cancellation alone (an iteration's call, activities/iteration.ts). */
export async function runAgent(raw: RunAgentInput, options: { cancelSignal?: AbortSignal } = {}): Promise<AgentResult> {
  const input = RunAgentInputSchema.parse(raw);
  const info = Context.current().info;
  const { attempt } = info;
  // The checklist's prompts and answers name held-out items: they are kept out of the repository,
  // where the builder could read them.
  const hidden = HIDDEN_ROLES.has(input.role) || input.privateFiles === true;
  const dir = hidden ? privateRunDir(input.runId) : runDir(input.repoPath, input.runId);
  const label = callLabel(input);
  const promptPath = path.join(dir, `${label}.prompt.md`);
  const logPath = path.join(dir, `${label}.log`);
  const given =
    input.prompt ??
    (input.promptSpec ? renderPromptSpec(input.promptSpec) : input.promptInput ? renderIterationPrompt(input.promptInput) : null);
  if (given === null)
    throw ApplicationFailure.nonRetryable('runAgent needs a prompt, a promptSpec or a promptInput', 'InvalidActivityInput');
  // The acceptance role and the discovery call: the map of the repository in the prompt, and a
  // fresh folder of its own to write the tests (the PRD) into.
  const authoring = input.role === 'acceptance';
  const prompt = authoring || input.role === 'discovery' ? await acceptancePrompt(given, input.repoPath) : given;
  const acceptanceDir = authoring ? freshDraftDir(input.runId) : null;
  const prdFile = input.role === 'discovery' ? freshDiscoveryFile(input.runId) : null;
  try {
    if (hidden) ensurePrivateRunDir(input.runId);
    else ensureRunDir(input.repoPath, input.runId);
    writePrivateFile(promptPath, prompt);
  } catch (err) {
    if (!isStorageError(err)) throw err;
    // A full disk fails this iteration with a clear reason; the run backs off and tries again.
    const why = describeWriteError(`cannot write the prompt file ${promptPath}`, err);
    return blankAgentResult({
      exitCode: AGENT_IO_ERROR,
      attempt,
      logPath,
      promptPath,
      provider: input.provider,
      tail: `vigil: ${why}; the agent was not started`,
      ioError: why,
    });
  }

  await authorizeCall(
    { runId: input.runId, repoPath: input.repoPath, kind: { agent: { provider: input.provider, argv: input.argv } } },
    input.authorization,
  );
  // A retry after a worker crash resumes the session the lost attempt started (from its heartbeats).
  // Only an iteration's: the calls of a round share their activity's heartbeats.
  const previous = input.role === 'iteration' ? (info.heartbeatDetails as { session?: unknown } | undefined)?.session : undefined;
  const override = modelOverrideOf(input);
  const tier = override && 'tier' in override ? override.tier : input.tier;
  const call = await prepareCall({
    provider: input.provider,
    argv: input.argv,
    prompt,
    promptPath,
    role: input.role,
    tier,
    model: override && 'tier' in override ? (override.model ?? input.model) : input.model,
    effort: input.effort,
    fallbackModel: input.fallbackModel,
    remainingBudgetUsd: input.remainingBudgetUsd,
    resumeSession: typeof previous === 'string' ? previous : null,
    fresh: input.extraEnv.VIGIL_FRESH_SESSION === '1',
    ...(input.subAgents ? { subAgents: { agents: input.subAgents.agents, schema: input.subAgents.schema } } : {}),
  }).catch(notRunnableFailure);
  const reviewing = REVIEWING_ROLES.has(input.role);
  // A reviewer's tree before and after its call (unknown where git cannot tell: not voided then).
  const treeBefore = reviewing ? (input.treeBefore ?? (await workingTreeHash(input.repoPath).catch(() => null))) : null;

  const [file, ...args] = call.argv;
  const env = {
    ...inheritedEnv(),
    ...call.env,
    ...input.extraEnv,
    VIGIL_ROLE: input.role,
    // The answer this call owes (docs/agent-contract.md): a command agent need not guess it from the prompt.
    VIGIL_ANSWER: answerOf(input),
    VIGIL_RUN_ID: input.runId,
    // Attempt n of a run with attempts (workflows/attempts-workflow.ts): read from where the attempt works.
    ...attemptEnv(input.runId, input.repoPath),
    VIGIL_ITERATION: String(input.iteration),
    VIGIL_PHASE: input.phase,
    VIGIL_TIER: tier,
    VIGIL_PROMPT_FILE: promptPath,
    ...(call.model ? { VIGIL_MODEL: call.model } : {}),
    ...(acceptanceDir ? { VIGIL_ACCEPTANCE_DIR: acceptanceDir } : {}),
    ...(prdFile ? { VIGIL_PRD_FILE: prdFile } : {}),
  };
  const keepHead = call.structured ? STRUCTURED_KEEP : input.parseVote || input.parse !== null ? VOTE_TEXT_KEEP : 0;
  // Every call in the sandbox (activities/sandbox.ts): the repository writable for the builder
  // only, the provider's model endpoints only, nothing of the worker's. PWD is the repository
  // (some CLIs read $PWD, not their working directory).
  const sandbox = prepareSandbox({
    kind: reviewing ? 'reviewer' : 'builder',
    runId: input.runId,
    repoPath: input.repoPath,
    cwd: input.repoPath,
    file: file as string,
    args,
    env,
    provider: input.provider,
    runMode: input.sandbox,
    registries: input.sandboxRegistries,
    limits: input.sandboxLimits,
    files: [
      promptPath,
      ...(input.extraEnv.VIGIL_EVIDENCE_FILE ? [input.extraEnv.VIGIL_EVIDENCE_FILE] : []),
      ...(input.extraEnv.VIGIL_MEMORY_SNAPSHOT ? [input.extraEnv.VIGIL_MEMORY_SNAPSHOT] : []),
    ],
    promptPath,
    // The acceptance role's folder: writable, under /run/vigil-files (VIGIL_ACCEPTANCE_DIR is renamed there).
    ...(acceptanceDir ? { reportDir: acceptanceDir } : prdFile ? { reportDir: path.dirname(prdFile) } : {}),
    storeUrl: workerStoreUrl().url,
  });
  const proc = await runProcess({
    file: sandbox.file,
    args: sandbox.args,
    cwd: input.repoPath,
    env: sandbox.env,
    sandboxProxy: sandbox.proxy,
    ...(sandbox.pidNamespace ? { ownPidNamespace: true } : {}),
    ...(sandbox.limits ? { limits: sandbox.limits } : {}),
    // A call that prints nothing and changes nothing in the repository for this long is hung (lib/call-silence.ts).
    ...(input.silenceSeconds > 0 ? { silence: { limitMs: input.silenceSeconds * 1000, root: input.repoPath } } : {}),
    stdin: call.stdin,
    timeoutMs: input.timeoutSeconds * 1000,
    logPath,
    pidFile: path.join(dir, `${label}.pid.json`),
    header:
      `=== vigil: ${input.role} ${input.iteration}, attempt ${attempt}, started ${new Date().toISOString()}: ` +
      `${call.argv.map((a) => (a === prompt ? '<prompt>' : a)).join(' ')} ===`,
    watchFor: input.completionPromise,
    ...(keepHead ? { keepHead } : {}),
    ...(call.sessionId ? { heartbeatDetails: { session: call.sessionId } } : {}),
    ...(call.structured ? { sessionPattern: SESSION_PATTERN } : {}),
    ...(options.cancelSignal ? { cancelSignal: options.cancelSignal } : {}),
  });
  const sandboxed = sandboxReport(
    sandbox,
    proc.sandboxDenials,
    proc.head.length < keepHead ? proc.head : `${proc.head}\n${proc.tail}`,
    proc.limits,
    proc.sandboxFetches,
  );
  if (proc.spawnError) {
    // The repository vanished under the call (its cwd is gone): the repository's trouble, not the agent's.
    if (!existsSync(input.repoPath)) repositoryGone(input.repoPath);
    throw ApplicationFailure.create({
      type: 'AgentNotRunnable',
      nonRetryable: true,
      message: `agent command cannot be started: ${proc.spawnError}. Check the provider and agentCommand knobs (vigil config --explain, vigil doctor).`,
    });
  }

  const output = proc.head.length < keepHead ? proc.head : keepHead ? `${proc.head}\n${proc.tail}` : proc.tail;
  const facts = interpretCall(input.provider, output, proc.exitCode, call.model, input.rateLimitRpm, Date.now());
  const parsed = facts.parsed;
  let readable = proc.tail;
  if (parsed) {
    // The JSON stream stays in the log; people read the transcript.
    readable = parsed.transcript;
    try {
      writePrivateFile(path.join(dir, `${label}.transcript.md`), `${parsed.transcript}\n`);
    } catch {
      /* the log holds the raw output; a missing transcript is not worth failing the call */
    }
  }

  // A claim by file is consumed when read: moved into the run folder as evidence (a link planted there is removed, never followed, and claims nothing).
  let claimSource: AgentResult['claimSource'] =
    proc.sawWatched || (input.completionPromise !== '' && parsed?.resultText?.includes(input.completionPromise)) ? 'promise' : null;
  if (
    input.role === 'iteration' &&
    consumeFile(signalPath(input.repoPath, 'COMPLETION_REQUESTED'), path.join(dir, `${label}.completion-requested`)) === 'moved'
  ) {
    claimSource ??= 'signal-file';
  }
  // A sandboxed reviewing call reports its cost in a signals folder of its own (no call can take another's report).
  const reported = consumeUsage(callSignalPath(sandbox, signalPath(input.repoPath, 'USAGE')), path.join(dir, `${label}.usage.json`));
  // What the agent read, for the memory's episode (lib/files-read.ts): beside the log, not in history.
  if (input.role === 'iteration')
    keepFilesRead({
      logPath,
      repoPath: input.repoPath,
      fromTranscript: parsed?.filesRead,
      signalFile: signalPath(input.repoPath, 'FILES_READ'),
    });
  discardCallSignals(sandbox);

  let reviewChangedTree: string[] | null = null;
  if (treeBefore !== null) {
    const after = await workingTreeHash(input.repoPath).catch(() => null);
    if (after !== null && after !== treeBefore)
      reviewChangedTree = (await changedPaths(input.repoPath, treeBefore, after).catch(() => ['(unknown paths)'])).slice(0, 50);
  }

  // Tails leave the activity (history, prompts, notifications) with credentials redacted; a
  // limit that ended the call, or a log that could not be written, is their last line.
  const note = [proc.logError, proc.limits?.reason, proc.silence].filter(Boolean).join('; ');
  const tailText = redactSecrets((note ? `${readable.slice(-(TAIL_CHARS - 400))}\nvigil: ${note}` : readable).slice(-TAIL_CHARS)).text;
  // A log that could not be written (a full disk) lost the call's output: the call failed, visibly
  // (exit AGENT_IO_ERROR, the tail ending with why), whatever the agent's own exit code said.
  const exitCode = proc.logError !== null && facts.exitCode === 0 && !proc.timedOut ? AGENT_IO_ERROR : facts.exitCode;
  return {
    exitCode,
    timedOut: proc.timedOut,
    durationMs: proc.durationMs,
    logPath,
    promptPath,
    tail: input.tailOnFailure && exitCode === 0 && !proc.timedOut ? '' : tailText,
    outputBytes: proc.outputBytes,
    ioError: proc.logError,
    claimed: claimSource !== null,
    claimSource,
    // Read against the diff by the iteration's activity, after its inspection (activities/iteration.ts).
    claimedFiles: null,
    attempt,
    donePhrase: findDonePhrase(readable),
    // The vote is the first VOTE line anywhere in the answer: read from the start of the output.
    vote: input.parseVote ? parseVote(parsed?.resultText ?? proc.head) : null,
    usage: facts.usage ?? reported,
    rateLimit: facts.rateLimit,
    provider: input.provider,
    // The model the CLI reports it used (a requested alias such as `sonnet` resolves to a full
    // name), else the one requested.
    model: (facts.usage ?? reported)?.model ?? call.model,
    sessionId: parsed?.sessionId ?? call.sessionId,
    modelOutput: parsed?.modelOutput ?? null,
    authError: facts.authError ? redactSecrets(facts.authError).text : null,
    hung: proc.silence,
    context: parsed?.context ?? null,
    reviewChangedTree,
    sandbox: sandboxed,
    discovered: prdFile ? keepDiscoveredPrd(prdFile, input.repoPath, input.runId, exitCode) : null,
    ...(override ? { modelOverride: override } : {}),
    ...readAnswer(
      input,
      parsed?.resultText ?? (proc.head.length < keepHead ? proc.head : `${proc.head}\n${proc.tail}`),
      facts.exitCode,
      logPath,
    ),
  };
}

/** An iteration's model-override file, read as the call starts (rules/model-override.ts); null: none. */
function modelOverrideOf(input: RunAgentInput): ModelOverride | null {
  if (input.role !== 'iteration' || !input.maxTier) return null;
  const read = readRegularFile(path.join(input.repoPath, MODEL_OVERRIDE_PATH), 200);
  if (read && !read.ok) return { ignored: `${MODEL_OVERRIDE_PATH}: ${read.problem}`.slice(0, 200) };
  return decideModelOverride(read ? read.text : null, input.provider ?? 'command', input.maxTier);
}

/** A reviewing call's answer, read where the text is (only the facts travel back). */
function readAnswer(
  input: {
    parse: 'review' | 'checklist' | 'verification' | 'tasks' | null;
    checklistIds: string[];
    extraEnv: Record<string, string>;
    role: string;
    repoPath: string;
    apiSpecsFrom?: string | undefined;
  },
  text: string,
  exitCode: number,
  logPath: string,
): Pick<AgentResult, 'review' | 'checklist' | 'plan' | 'verification'> {
  const none = { review: null, checklist: null, plan: null, verification: null };
  if (input.parse === 'review') {
    const rec = reviewerRecord({ reviewer: input.extraEnv.VIGIL_REVIEWER ?? input.role, exitCode, output: text, lost: false, logPath });
    return { ...none, review: { ...rec, findings: rec.findings.map((l) => redactSecrets(l).text.slice(0, 300)) } };
  }
  if (input.parse === 'checklist') {
    if (exitCode !== 0)
      return {
        ...none,
        checklist: { ok: false, items: [], dropped: 0, error: `the checklist agent exited with ${exitCode}`, apiProblems: [] },
      };
    const parsed = parseChecklistOutput(text);
    // The operations of the API descriptions the PRD names, each an item of its own (activities/api-specs.ts).
    const api = parsed.ok && input.apiSpecsFrom ? readApiSpecs(input.repoPath, input.apiSpecsFrom) : null;
    const r = parsed.ok && api ? { ...parsed, items: withApiItems(parsed.items, api.specs) } : parsed;
    const apiProblems = (api?.problems ?? []).map((l) => redactSecrets(l).text.slice(0, 400));
    if (r.ok) {
      // The whole checklist, held-out items and all, next to the extraction log (outside the repository).
      try {
        writePrivateFile(logPath.replace(/\.log$/, '.checklist.json'), `${JSON.stringify(r.items, null, 2)}\n`);
      } catch {
        /* the run state holds the checklist; the file is a convenience for people */
      }
    }
    return {
      ...none,
      checklist: r.ok
        ? { ok: true, items: r.items, dropped: r.dropped.length, error: null, apiProblems }
        : { ok: false, items: [], dropped: 0, error: r.error.slice(0, 500), apiProblems },
    };
  }
  if (input.parse === 'tasks') {
    if (exitCode !== 0) return { ...none, plan: { ok: false, tasks: [], error: `the planner exited with ${exitCode}` } };
    const r = parsePlannerAnswer(text, input.checklistIds);
    return {
      ...none,
      plan: r.ok ? { ok: true, tasks: r.tasks, error: null } : { ok: false, tasks: [], error: redactSecrets(r.error).text.slice(0, 500) },
    };
  }
  if (input.parse === 'verification') return { ...none, verification: exitCode === 0 ? parseVerifierOutput(text, input.checklistIds) : {} };
  return none;
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
    cacheReadTokens: Math.floor(num(raw.cacheReadTokens ?? raw.cache_read_tokens) ?? 0),
    cacheWriteTokens: Math.floor(num(raw.cacheWriteTokens ?? raw.cache_creation_tokens ?? raw.cache_write_tokens) ?? 0),
    model,
  };
}
