/**
 * The iteration's agent activity as the worker registers it (`runAgent`): the agent call of
 * activities/agent.ts with, for iterations of lean runs, what keeps an iteration to one activity
 * and its history small:
 *
 * - long prompt parts by reference: a part of at least PROMPT_PART_MIN_CHARS characters that
 *   arrives as text is stored under the run folder (`prompt-parts/<sha256>.md`); a later call may
 *   name it by its sha256 (`promptRefs`) instead of carrying it again. A reference that is not
 *   stored here fails the call before the agent starts (PromptPartMissing: the workflow sends the
 *   text);
 * - the run memory by reference (`memoryRef`, activities/prompt-memory.ts): the activity renders
 *   "the run so far" and adds the agent's notes, so the prompt is the one the workflow would send;
 * - after the agent: the repository's inspection (one round trip to the git helper) and the agent's
 *   signal files (`inspect`), returned with the result; a failure there is reported in the result
 *   (`inspection.problem`), never as a failed agent call;
 * - the output's tail only when the call failed (a good call's tail is in its log);
 * - after a good agent run that changed the tree, the gate pass the call carries (`gates`, from
 *   `vigil-gates-with-call-v1` on), on the tree the inspection hashed. A cancellation asks the run
 *   what it means (`vigil.callCancel`): kill the agent, or let it finish and skip or cut short
 *   the pass. The run also says so at once to the worker that processes its workflow task
 *   (workflows/running-call.ts): when that is this process, the call hears it before Temporal's
 *   cancellation arrives with its next heartbeat, and an agent killed that way ends the call with
 *   a CallKilledByRun failure, which the workflow takes for the call's cancellation.
 *
 * Also `inspectIteration`: the same inspection as an activity of its own, for an iteration whose
 * agent activity could not inspect (its failures are the repository's, handled as such).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { beatWhileRunning } from './heartbeat.js';
import { ApplicationFailure, ApplicationFailureCategory, CancelledFailure } from '@temporalio/common';
import {
  AGENT_RESULT_NULL_DEFAULTS,
  FAILURE_TYPES,
  IterationInspectionInputSchema,
  PROMPT_PART_MIN_CHARS,
  PROMPT_PART_MISSING,
  PROMPT_PART_NAMES,
  type AgentResult,
  type AgentSignals,
  type IterationInspection,
  type IterationInspectionInput,
  type PromptInput,
  type RepoSnapshot,
  type RunAgentInput,
  type RunGatesResult,
} from '../schemas/activities.js';
import { CALL_CANCEL_QUERY, type CallCancel } from '../schemas/messages.js';
import { runAgent as callAgent } from './agent.js';
import { runGates, type KnownChanges } from './gates/index.js';
import { promptPartsDir, resolvePromptMemory } from './prompt-memory.js';
import { inspectRepoChanges } from './repo.js';
import { isStorageError, readRegularFile, writePrivateFile } from '../lib/safe-files.js';
import { listenForRunCancel } from '../lib/running-calls.js';
import { readAgentSignals } from './signals.js';
import { workerStoreUrl } from '../lib/event-store.js';
import { bestEffort, failureLine, recordTrace, retrieveForPrompt, taskText } from '../lib/lasting-memory.js';
import { writeMemorySnapshot } from '../lib/memory-reads.js';
import { filesReadOf } from '../lib/files-read.js';
import { ingestMemorySignals, ingestSummary } from '../lib/memory-agent.js';
import { claimedPaths, claimFileTexts, claimsNotInDiff } from '../rules/claimed-files.js';
import { taskTypeOf } from '../rules/memory-retrieval.js';
import { keepLastError, withSelfHeal } from './last-error.js';
import { clearRateLimited, markRateLimited } from './loop-signals.js';
import { EMPTY_CALL_EXIT, emptyCall, signalledOf, treeChangedOf } from '../rules/empty-call.js';
import { ensurePrivateRunDir } from './artifacts.js';

const MAX_PART_BYTES = 256 * 1024;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The prompt input with every referenced part read back, and every long inline part stored for later references. */
export function resolvePromptParts(input: RunAgentInput): RunAgentInput {
  const p = input.promptInput;
  if (!p) return input;
  const refs = input.promptRefs ?? {};
  const resolved: PromptInput = { ...p };
  let dir: string | null = null;
  const folder = (): string => (dir ??= promptPartsDir(input.repoPath, input.runId));
  for (const name of PROMPT_PART_NAMES) {
    const ref = refs[name];
    if (ref) {
      const r = readRegularFile(path.join(folder(), `${ref}.md`), MAX_PART_BYTES);
      if (!r?.ok || sha256(r.text) !== ref) {
        // Benign: the run sends the part whole and calls again (a part stored by another worker, or lost).
        throw ApplicationFailure.create({
          type: PROMPT_PART_MISSING,
          nonRetryable: true,
          category: ApplicationFailureCategory.BENIGN,
          message: `prompt part ${name} (${ref.slice(0, 12)}) is not stored for run ${input.runId}`,
        });
      }
      resolved[name] = r.text;
      continue;
    }
    const text = p[name];
    if (typeof text === 'string' && text.length >= PROMPT_PART_MIN_CHARS) {
      try {
        writePrivateFile(path.join(folder(), `${sha256(text)}.md`), text);
      } catch (err) {
        // Not stored: the next call finds it missing and gets the text again.
        if (!isStorageError(err)) throw err;
      }
    }
  }
  // The run memory by reference (runs from vigil-lean-prompt-v1 on): rendered here, as the workflow would have.
  if (input.memoryRef) resolved.memory = resolvePromptMemory(input.runId, input.repoPath, input.memoryRef);
  return { ...input, promptInput: resolved };
}

/** The repository after an iteration and the agent's signal files (read once, consumed). */
export async function inspectAfterAgent(
  base: { runId: string; repoPath: string; iteration: number },
  raw: IterationInspectionInput,
): Promise<{ snapshot: RepoSnapshot; signals: AgentSignals | null }> {
  const { snapshot, signals } = await inspectWithChanges(base, raw);
  return { snapshot, signals };
}

/** The inspection and the signal files side by side, with the paths changed since the previous tree (for the gate pass). */
async function inspectWithChanges(
  base: { runId: string; repoPath: string; iteration: number },
  raw: IterationInspectionInput,
): Promise<{ snapshot: RepoSnapshot; signals: AgentSignals | null; changes: KnownChanges | null; sinceStart: string[] }> {
  const i = IterationInspectionInputSchema.parse(raw);
  const [{ snapshot, sinceLastPaths, sinceStartPaths }, signals] = await Promise.all([
    inspectRepoChanges({
      repoPath: base.repoPath,
      runStartSha: i.runStartSha,
      previousTree: i.previousTree,
      ...(i.checkpoint ? { checkpoint: i.checkpoint } : {}),
    }),
    i.signals
      ? readAgentSignals({
          runId: base.runId,
          repoPath: base.repoPath,
          iteration: base.iteration,
          ...(i.notes ? { notes: true } : {}),
          ...(i.notesByRef ? { notesByRef: true } : {}),
        })
      : null,
  ]);
  return {
    snapshot,
    signals,
    changes: i.previousTree && sinceLastPaths ? { since: i.previousTree, paths: sinceLastPaths } : null,
    sinceStart: sinceStartPaths,
  };
}

/**
 * The files a claim says it changed, and those the diff since the run's start does not hold
 * (rules/claimed-files.ts): read from the claim file the call left (kept beside its
 * log) and the output's tail, the claim's own words. Null when the call claimed nothing or named no file.
 */
export function claimedFilesOf(result: AgentResult, sinceStart: readonly string[] | null): AgentResult['claimedFiles'] {
  if (!result.claimed) return null;
  const texts: string[] = [];
  if (result.logPath.endsWith('.log')) {
    const body = readRegularFile(result.logPath.replace(/\.log$/, '.completion-requested'), 64 * 1024);
    if (body?.ok) texts.push(...claimFileTexts(body.text));
  }
  if (result.tail) texts.push(result.tail);
  const named = claimedPaths(texts);
  if (named.length === 0) return null;
  return { named, notInDiff: sinceStart ? claimsNotInDiff(named, sinceStart) : null };
}

/** The `runAgent` activity (see the file comment); a compact result leaves out the fields at their default. */
export async function runAgent(raw: RunAgentInput): Promise<AgentResult> {
  const result = await runAgentCall(raw);
  return raw.compact ? compactAgentResult(result) : result;
}

/** The result without its null defaults (the workflow parses it back with AgentResultSchema). */
export function compactAgentResult(r: AgentResult): AgentResult {
  const out: Record<string, unknown> = { ...r };
  for (const k of AGENT_RESULT_NULL_DEFAULTS) if (out[k] === null) delete out[k];
  return out as AgentResult; // the wire form: AgentResultSchema.parse restores the defaults
}

/** How often a call whose cancellation only skipped its gates asks again (a STOP --now may follow). */
const CANCEL_RECHECK_MS = 2000;

/**
 * What the workflow means by cancelling this call (its `vigil.callCancel` query). Asked outside
 * the activity's own abort signal, which has fired; when the workflow cannot say, the agent is
 * killed (a stop must never be lost).
 */
async function cancellationMeant(ctx: Context): Promise<CallCancel> {
  try {
    const run = ctx.info.workflowExecution;
    if (!run) return 'kill';
    const client = ctx.client;
    return await client.connection.withAbortSignal(AbortSignal.timeout(10_000), () =>
      client.workflow.getHandle(run.workflowId, run.runId).query<CallCancel>(CALL_CANCEL_QUERY),
    );
  } catch (err) {
    ctx.log.warn('the workflow could not say what the cancellation of the agent call means: the agent is stopped', {
      error: err instanceof Error ? err.message : String(err),
    });
    return 'kill';
  }
}

/**
 * What the run has said about cancelling this call, in this process (lib/running-calls.ts):
 * `killed` aborts when it means to kill the agent; `skipGates` when only the gate pass is off.
 */
interface RunWord {
  killed: AbortSignal;
  skipGates: () => boolean;
}

/**
 * The agent of a call that carries a gate pass, cancelled only when the workflow means it: a
 * cancellation that is for the gates alone (a PAUSE, a STOP that lets the call finish) lets the
 * agent finish and skips the pass; the workflow is asked again every few seconds meanwhile.
 */
async function agentCarryingGates(raw: RunAgentInput, word: RunWord): Promise<{ result: AgentResult; skipGates: boolean }> {
  const ctx = Context.current();
  const kill = new AbortController();
  let skipGates = false;
  let recheck: NodeJS.Timeout | undefined;
  const ask = (): void => {
    // (Called from the abort event, outside the activity's context: the context is passed.)
    void cancellationMeant(ctx).then((meant) => {
      if (meant === 'kill') kill.abort();
      else if (!kill.signal.aborted) recheck = setTimeout(ask, CANCEL_RECHECK_MS);
    });
  };
  const onCancel = (): void => {
    skipGates = true;
    ask();
  };
  const onKilled = (): void => kill.abort();
  ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
  word.killed.addEventListener('abort', onKilled, { once: true });
  if (ctx.cancellationSignal.aborted) onCancel();
  if (word.killed.aborted) onKilled();
  try {
    const result = await callAgent(raw, { cancelSignal: kill.signal });
    return { result, skipGates: skipGates || word.skipGates() };
  } finally {
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
    word.killed.removeEventListener('abort', onKilled);
    clearTimeout(recheck);
    kill.abort(); // stops the asking (the call is over)
  }
}

/**
 * An iteration's call hears the run's word in this process; a call the run killed that way
 * before Temporal's cancellation arrived ends with CallKilledByRun (not retried).
 */
async function withRunWord<T>(raw: RunAgentInput, call: (word: RunWord) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const run = ctx.info.workflowExecution;
  const killed = new AbortController();
  let skipGates = false;
  const stop =
    raw.role === 'iteration' && run
      ? listenForRunCancel(run, (meant) => {
          if (meant === 'kill') killed.abort();
          else skipGates = true;
        })
      : null;
  try {
    return await call({ killed: killed.signal, skipGates: () => skipGates });
  } catch (err) {
    if (err instanceof CancelledFailure && killed.signal.aborted && !ctx.cancellationSignal.aborted) {
      // Benign: what the run asked for, not a failure (the worker logs it at DEBUG, not as a failed activity).
      throw ApplicationFailure.create({
        type: FAILURE_TYPES.callKilledByRun,
        nonRetryable: true,
        category: ApplicationFailureCategory.BENIGN,
        message: 'the run killed its agent call (STOP --now, a rewind or a rollover)',
      });
    }
    throw err;
  } finally {
    stop?.();
  }
}

async function runAgentCall(raw: RunAgentInput): Promise<AgentResult> {
  return withRunWord(raw, (word) => runAgentCallHearing(raw, word));
}

async function runAgentCallHearing(raw: RunAgentInput, word: RunWord): Promise<AgentResult> {
  const lean = raw.role === 'iteration' && raw.inspect !== undefined && raw.inspect !== null;
  // The last failure's hint heads the findings (activities/last-error.ts); a rate limit's wait is over.
  if (raw.role === 'iteration') clearRateLimited(raw.repoPath);
  const resolved = withSelfHeal(await withEarlierRuns(lean || raw.promptRefs || raw.memoryRef ? resolvePromptParts(raw) : raw));
  const carried = lean && raw.gates ? raw.gates : null;
  const ctx = Context.current();
  const called = carried
    ? await agentCarryingGates(resolved, word)
    : { result: await callAgent(resolved, { cancelSignal: AbortSignal.any([ctx.cancellationSignal, word.killed]) }), skipGates: false };
  const { skipGates } = called;
  let { result } = called;
  if (!lean || !raw.inspect) return result;
  const stopBeats = beatWhileRunning(() => ctx.heartbeat(), ctx);
  let inspection: IterationInspection;
  let changes: KnownChanges | null = null;
  let claimedFiles: AgentResult['claimedFiles'] = null;
  try {
    const inspected = await inspectWithChanges({ runId: raw.runId, repoPath: raw.repoPath, iteration: raw.iteration }, raw.inspect);
    inspection = { snapshot: inspected.snapshot, signals: inspected.signals };
    changes = inspected.changes;
    claimedFiles = claimedFilesOf(result, inspected.sinceStart);
  } catch (err) {
    // A repository whose git the agent changed is refused for good: the run pauses or ends over it.
    if (err instanceof ApplicationFailure && err.type === FAILURE_TYPES.unsafeRepository) throw err;
    inspection = { problem: (err instanceof Error ? err.message : String(err)).slice(0, 1000) };
  } finally {
    stopBeats();
  }
  // An empty call of a command agent is a failed call (rules/empty-call.ts). Inside this
  // activity's result, no patch: a run's history holds the result it recorded.
  const empty = emptyCall({
    provider: raw.provider ?? null,
    role: raw.role,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    outputBytes: result.outputBytes,
    tail: result.tail,
    claimed: result.claimed,
    signalled: signalledOf('signals' in inspection ? inspection.signals : null),
    treeChanged: treeChangedOf(
      raw.inspect.previousTree ?? null,
      raw.inspect.runStartSha ?? null,
      'snapshot' in inspection ? inspection.snapshot : null,
    ),
  });
  if (empty) result = { ...result, exitCode: EMPTY_CALL_EXIT, tail: empty };
  keepLastError(raw, result, empty !== null);
  // RATE_LIMITED while the run waits the limit out; the agent's own is not taken (activities/loop-signals.ts).
  if (result.rateLimit) markRateLimited(raw.repoPath, result.rateLimit.waitSeconds, Date.now());
  else clearRateLimited(raw.repoPath);
  const failed = result.exitCode !== 0 || result.timedOut;
  // The carried gate pass, on the tree the call left: after a good call that changed it, unless a
  // cancellation came first (the pass runs again later).
  let gates: RunGatesResult | null = null;
  const tree = 'snapshot' in inspection ? inspection.snapshot.treeHash : null;
  const cancelled = skipGates || word.skipGates() || word.killed.aborted || ctx.cancellationSignal.aborted;
  if (carried && !failed && tree !== null && tree !== carried.lastTree && !cancelled) {
    gates = await runGates({ ...carried.pass, tests: tree === carried.knownTestsTree ? null : carried.pass.tests }, tree, changes);
  }
  await traceForMemory(raw, result, inspection, gates);
  return { ...result, tail: failed ? result.tail : '', claimedFiles, inspection, ...(gates ? { gates } : {}) };
}

/**
 * The memory from earlier runs in an iteration's prompt (lib/lasting-memory.ts), when the
 * run asked for it and this worker has an event store: best effort, within a few seconds.
 */
async function withEarlierRuns(input: RunAgentInput): Promise<RunAgentInput> {
  const p = input.promptInput;
  const layers = input.memoryLayers;
  if (input.role !== 'iteration' || !p || !layers || layers.indexTokens + layers.timelineTokens + layers.entriesTokens === 0) return input;
  const url = workerStoreUrl().url;
  if (!url) return input;
  const got = await bestEffort(() =>
    retrieveForPrompt(url, {
      workflowId: input.runId,
      iteration: input.iteration,
      repoPath: input.repoPath,
      task: taskText(p),
      taskType: taskTypeOf({ iteration: input.iteration, gateFindings: p.gateFindings, prdTitle: p.prdTitle }),
      budgets: layers,
    }),
  );
  // The memory the agent's own vigil_memory_search reads where its sandbox refuses the store (docs/memory.md).
  const snapshot = await bestEffort(() =>
    writeMemorySnapshot(url, input.runId, input.repoPath, path.join(ensurePrivateRunDir(input.runId), 'memory-snapshot.json')),
  );
  const withSnapshot = snapshot ? { ...input, extraEnv: { ...input.extraEnv, VIGIL_MEMORY_SNAPSHOT: snapshot } } : input;
  return got?.text ? { ...withSnapshot, promptInput: { ...p, earlierRuns: got.text } } : withSnapshot;
}

/** What the journal does not hold of this iteration, for its episode (best effort). */
async function traceForMemory(
  raw: RunAgentInput,
  result: AgentResult,
  inspection: IterationInspection,
  gates: RunGatesResult | null,
): Promise<void> {
  // What the builder's vigil mcp asked of the memory (lib/memory-agent.ts): this activity's own work, nothing new in history.
  let storedChars = 0;
  if (raw.role === 'iteration') {
    const store = raw.memoryLayers ? workerStoreUrl().url : null;
    const c = { runId: raw.runId, iteration: raw.iteration, repoPath: raw.repoPath, logPath: result.logPath };
    const got = await bestEffort(() => ingestMemorySignals(store, c));
    storedChars = (got?.stored ?? []).reduce((n, s) => n + s.chars, 0);
    const asked = ingestSummary(got);
    if (asked) Context.current().log.info(`memory asked by the agent: ${asked}`, { runId: raw.runId, iteration: raw.iteration });
  }
  if (!raw.memoryLayers) return;
  const url = workerStoreUrl().url;
  if (!url) return;
  const snapshot = 'snapshot' in inspection ? inspection.snapshot : null;
  const signals = 'signals' in inspection ? inspection.signals : null;
  const failed = result.exitCode !== 0 || result.timedOut;
  const errorsSeen = failed
    ? [
        failureLine(result.tail) ??
          result.tail
            .split('\n')
            .filter((l) => l.trim())
            .slice(-1)[0] ??
          `exit ${result.exitCode}`,
      ]
    : [];
  const tests = gates?.tests ?? null;
  await bestEffort(() =>
    recordTrace(url, {
      workflowId: raw.runId,
      iteration: raw.iteration,
      files: snapshot?.sinceLast?.paths ?? [],
      errors: errorsSeen,
      testFailure: tests && !tests.passed ? failureLine(tests.tail) : null,
      summary: signals?.summary ?? null,
      filesRead: filesReadOf(result.logPath, raw.repoPath),
      storedChars,
    }),
  );
}

/** The inspection as an activity of its own (when the agent activity could not make it). */
export async function inspectIteration(raw: {
  runId: string;
  repoPath: string;
  iteration: number;
  inspect: IterationInspectionInput;
}): Promise<{ snapshot: RepoSnapshot; signals: AgentSignals | null }> {
  return inspectAfterAgent(raw, raw.inspect);
}
