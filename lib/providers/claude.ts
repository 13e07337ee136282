/**
 * Owns the `claude` preset (Claude Code CLI, spec §1.5, §1.7, §1.12): the argv of a headless
 * `claude -p --output-format stream-json --verbose` call with the prompt on stdin, and the reading
 * of its stream-json output (one JSON object per line: `system` init, `assistant` and `user`
 * messages, a final `result` with cost, usage and session id).
 *
 * The builder (iteration) runs with --dangerously-skip-permissions. Every reviewing role, checklist
 * extraction included, runs read-only: read tools and read-only git commands allowed, edit tools
 * disallowed (each flag only when advertised), else `--permission-mode plan` when advertised;
 * without either, headless mode still denies every tool that would need a permission prompt.
 *
 * The CLI's own retries of a failed API request are bounded (CLAUDE_CODE_MAX_RETRIES): by default
 * it retries a 401 or a 529 ten times over about three minutes before Vigil hears of it, and Vigil
 * has its own backoff, rate-limit waits and provider breaker for that. Usage is the result
 * record's `modelUsage` (every model the call used, the CLI's side requests included) when
 * present; an API failure is read from the result's `api_error_status` / `api_error_type` and the
 * last `api_retry` record (status, and the delay the provider asked for).
 */
import {
  UsageTotals,
  advertised,
  apiFailure,
  apiFailureLine,
  budgetArg,
  contentText,
  count,
  findJsonObject,
  isReadOnlyRole,
  joinTranscript,
  jsonLines,
  nonEmpty,
  num,
  rec,
  resolveEffort,
  resolveModel,
  str,
  toolLine,
  toolResultLine,
  usageLine,
  withBase,
  type JsonRecord,
  toolReads,
  uniqueReads,
} from './common.js';
import type { ApiFailure, Invocation, InvocationRequest, ParsedOutput, ProviderOutput, ProviderPreset, ProviderUsage } from './types.js';

/** Retries the CLI makes of a failed API request before it gives up and reports it. */
export const CLAUDE_MAX_RETRIES = 2;

/** Tools a reviewing role may use without a prompt: reading, searching, read-only git. */
export const CLAUDE_READ_ONLY_TOOLS = [
  'Read',
  'Grep',
  'Glob',
  'Bash(git diff:*)',
  'Bash(git log:*)',
  'Bash(git show:*)',
  'Bash(git status:*)',
];
/** What the main agent of a batched round uses besides reading: its declared agents, its structured answer. */
export const CLAUDE_BATCH_TOOLS = ['Agent', 'Task', 'StructuredOutput'];
/** Tools that change files: never available to a reviewing role. */
export const CLAUDE_WRITE_TOOLS = ['Edit', 'Write', 'NotebookEdit'];

const DEFAULT_MODELS = { planning: 'opus', development: 'sonnet', fast: 'haiku' } as const;
/** Spec §1.4 loki_effort_for_tier. */
const DEFAULT_EFFORTS = { planning: 'xhigh', development: 'high', fast: 'medium' } as const;

function buildInvocation(req: InvocationRequest): Invocation {
  const model = resolveModel(req, DEFAULT_MODELS);
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--model', model];

  const batch = req.subAgents && advertised(req, '--agents') && advertised(req, '--json-schema') ? req.subAgents : null;
  if (!isReadOnlyRole(req.role)) {
    args.push('--dangerously-skip-permissions');
  } else {
    const allow = advertised(req, '--allowedTools');
    const deny = advertised(req, '--disallowedTools');
    // A batched round's main agent also runs its declared agents (the Agent tool, Task before 2.1) and returns the structured answer.
    if (allow) args.push('--allowedTools', ...CLAUDE_READ_ONLY_TOOLS, ...(batch ? CLAUDE_BATCH_TOOLS : []));
    if (deny) args.push('--disallowedTools', ...CLAUDE_WRITE_TOOLS);
    if (!allow && !deny && advertised(req, '--permission-mode')) args.push('--permission-mode', 'plan');
  }

  const system = nonEmpty(req.appendSystemPrompt);
  if (system !== null && advertised(req, '--append-system-prompt')) args.push('--append-system-prompt', system);

  const session = nonEmpty(req.sessionId);
  if (session !== null) {
    // A resume the CLI cannot do starts a fresh session (reusing the id would be refused).
    if (req.resume) {
      if (advertised(req, '--resume')) args.push('--resume', session);
    } else if (advertised(req, '--session-id')) {
      args.push('--session-id', session);
    }
  }

  if (batch) args.push('--agents', batch.agents, '--json-schema', batch.schema);

  if (advertised(req, '--effort')) args.push('--effort', resolveEffort(req, DEFAULT_EFFORTS));

  const budget = budgetArg(req.remainingBudgetUsd);
  if (budget !== null && advertised(req, '--max-budget-usd')) args.push('--max-budget-usd', budget);

  const fallback = nonEmpty(req.fallbackModel);
  if (fallback !== null && fallback !== model && advertised(req, '--fallback-model')) args.push('--fallback-model', fallback);

  return { argv: withBase(req, 'claude', args), stdin: req.prompt, env: { CLAUDE_CODE_MAX_RETRIES: String(CLAUDE_MAX_RETRIES) } };
}

function usageOf(u: JsonRecord | null): Partial<ProviderUsage> {
  return {
    inputTokens: count(u?.input_tokens),
    outputTokens: count(u?.output_tokens),
    cacheReadTokens: count(u?.cache_read_input_tokens),
    cacheWriteTokens: count(u?.cache_creation_input_tokens),
  };
}

function parseOutput(out: ProviderOutput): ParsedOutput {
  const transcript: (string | null)[] = [];
  // Files its read and search tools read.
  const reads: string[] = [];
  const texts: string[] = [];
  /** Usage per API message id: a message split over several events repeats its usage. */
  const messageUsage = new Map<string, Partial<ProviderUsage>>();
  let sessionId: string | null = null;
  let model: string | null = null;
  let result: JsonRecord | null = null;
  /** The last `system` / `api_retry` record: the status of the failing request and the delay asked. */
  let retry: JsonRecord | null = null;
  /** An `assistant` record or the result: the model answered something (init and retry records are the CLI's own). */
  let modelOutput = false;
  /** What the latest request sent (its input, cached or not) and the compactions (`compact_boundary` records). */
  let contextTokens: number | null = null;
  let compactions = 0;

  for (const { raw, value } of jsonLines(out.text)) {
    if (!value) {
      transcript.push(raw);
      continue;
    }
    const type = str(value.type);
    sessionId = str(value.session_id) ?? sessionId;
    if (type === 'system') {
      if (value.subtype === 'init') {
        model = str(value.model) ?? model;
        transcript.push(`[claude session ${str(value.session_id) ?? '?'} · model ${str(value.model) ?? '?'}]`);
      } else if (value.subtype === 'compact_boundary') {
        compactions++;
        transcript.push(`[context compacted (${str(rec(value.compact_metadata)?.trigger) ?? '?'})]`);
      } else if (value.subtype === 'api_retry') {
        retry = value;
        const delay = num(value.retry_delay_ms);
        transcript.push(
          (
            `[api retry ${num(value.attempt) ?? '?'}/${num(value.max_retries) ?? '?'}${delay === null ? '' : ` in ${(delay / 1000).toFixed(1)}s`}: ` +
            `${num(value.error_status) ?? '?'} ${str(value.error) ?? ''}]`
          ).replace(' ]', ']'),
        );
      }
    } else if (type === 'assistant' || type === 'user') {
      const message = rec(value.message);
      const content = message?.content;
      if (type === 'assistant') {
        modelOutput = true;
        const id = str(message?.id);
        const usage = rec(message?.usage);
        if (usage) messageUsage.set(id ?? `#${messageUsage.size}`, { ...usageOf(usage), model: str(message?.model) });
        if (usage)
          contextTokens = count(usage.input_tokens) + count(usage.cache_read_input_tokens) + count(usage.cache_creation_input_tokens);
      }
      if (typeof content === 'string') {
        if (type === 'assistant' && content.trim()) {
          texts.push(content);
          transcript.push(content);
        }
        continue;
      }
      if (!Array.isArray(content)) continue;
      for (const block of content) {
        const b = rec(block);
        if (!b) continue;
        if (b.type === 'text' && typeof b.text === 'string' && type === 'assistant') {
          texts.push(b.text);
          transcript.push(b.text);
        } else if (b.type === 'tool_use') {
          transcript.push(toolLine(str(b.name) ?? '?', b.input));
          reads.push(...toolReads(str(b.name) ?? '', b.input));
        } else if (b.type === 'tool_result') {
          transcript.push(toolResultLine(b.content, b.is_error === true));
        }
      }
    } else if (type === 'result') {
      result = value;
      modelOutput ||= result.is_error !== true;
    } else if (type === null) {
      transcript.push(raw);
    }
  }

  const totals = new UsageTotals();
  const perModel = Object.entries(rec(result?.modelUsage) ?? {}).flatMap(([name, v]) => {
    const m = rec(v);
    return m ? [{ name, m }] : [];
  });
  if (result && perModel.length > 0) {
    // Every model the call used: the result's `usage` leaves out the CLI's side requests.
    for (const { m } of perModel) {
      totals.add({
        inputTokens: count(m.inputTokens),
        outputTokens: count(m.outputTokens),
        cacheReadTokens: count(m.cacheReadInputTokens),
        cacheWriteTokens: count(m.cacheCreationInputTokens),
      });
    }
    totals.add({ costUsd: num(result.total_cost_usd) ?? perModel.reduce((sum, { m }) => sum + (num(m.costUSD) ?? 0), 0) });
  } else if (result && (result.total_cost_usd !== undefined || rec(result.usage))) {
    totals.add({ ...usageOf(rec(result.usage)), costUsd: num(result.total_cost_usd) });
  } else {
    for (const u of messageUsage.values()) totals.add(u);
  }
  // The model the CLI says it ran (init record), else the one that did most of the work.
  const busiest =
    [...perModel].sort((a, b) => count(b.m.inputTokens) + count(b.m.outputTokens) - (count(a.m.inputTokens) + count(a.m.outputTokens)))[0]
      ?.name ?? null;
  totals.setModel(model !== null && model !== '<synthetic>' ? model : busiest);
  const usage = totals.result(out.requestedModel);

  const subtype = str(result?.subtype) ?? '';
  const isError = out.exitCode !== 0 || result === null || result.is_error === true || subtype.startsWith('error');
  const failure = isError ? failureOf(result, retry) : null;
  const finalText = str(result?.result);
  if (result) {
    const turns = num(result.num_turns);
    transcript.push(`[result: ${subtype || '?'}${result.is_error === true ? ' (error)' : ''}${turns === null ? '' : ` · ${turns} turns`}]`);
    if (result.is_error === true && finalText) transcript.push(`error: ${finalText}`);
  } else {
    transcript.push('[no result record: the output ended early]');
  }
  transcript.push(usageLine(usage));
  if (failure) transcript.push(apiFailureLine(failure));

  const joined = texts.join('\n\n').trim();
  // The window of the model that did the call's work (the result's modelUsage says it per model).
  const windowTokens = num((perModel.find((p) => p.name === usage?.model) ?? perModel[0])?.m.contextWindow);
  return {
    usage,
    isError,
    apiFailure: failure,
    sessionId,
    resultText: finalText !== null && finalText.trim() !== '' ? finalText : joined === '' ? null : joined,
    transcript: joinTranscript(transcript),
    modelOutput,
    filesRead: uniqueReads(reads),
    ...(contextTokens !== null || compactions > 0 ? { context: { usedTokens: contextTokens ?? 0, windowTokens, compactions } } : {}),
  };
}

/**
 * The API failure behind a failed call: the result record's status and error type when it has
 * them (`api_error_status`, `api_error_type`), else the last retry record's; the retry record's
 * delay is what the provider asked to wait (its retry-after, as the CLI honoured it).
 */
function failureOf(result: JsonRecord | null, retry: JsonRecord | null): ApiFailure | null {
  const status = num(result?.api_error_status) ?? num(retry?.error_status);
  const text = str(result?.result);
  // The error type ("overloaded_error", "rate_limit_error") helps classify a record without a status.
  const words = [str(result?.api_error_type), str(retry?.error)].filter((w): w is string => w !== null && w !== '').join(' ');
  if (status === null && words === '' && text === null) return null;
  const message = text ?? `${str(retry?.error) ?? 'API error'} (the call ended while the CLI was retrying)`;
  const f = apiFailure(status, status === null ? `${message} ${words}` : message);
  if (f === null) return null;
  const delay = num(retry?.retry_delay_ms);
  return { ...f, retryAfterSeconds: f.kind === 'rate-limit' && delay !== null ? Math.ceil(delay / 1000) : null };
}

export const claudePreset: ProviderPreset = {
  name: 'claude',
  binary: 'claude',
  credentialEnv: ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'],
  installHint: 'npm install -g @anthropic-ai/claude-code',
  helpArgs: ['--help'],
  optionalFlags: [
    '--max-budget-usd',
    '--append-system-prompt',
    '--fallback-model',
    '--effort',
    '--session-id',
    '--resume',
    '--allowedTools',
    '--disallowedTools',
    '--permission-mode',
    '--agents',
    '--json-schema',
  ],
  defaultModels: DEFAULT_MODELS,
  defaultEfforts: DEFAULT_EFFORTS,
  buildInvocation,
  parseOutput,
};

/** What the stream of a batched round's call (`--agents`, `--json-schema`) holds beyond a call's usual output. */
export interface BatchStream {
  /**
   * The structured answer: the result's `structured_output`, else the input of the StructuredOutput tool call, else the
   * result text as JSON; null when none.
   */
  structured: unknown;
  /** Per declared agent (the Agent tool's `subagent_type`): its part of the transcript, and its own final report. */
  agents: Record<string, { transcript: string[]; report: string | null }>;
}

/** Reads a batched call's stream-json output: the structured answer and each sub-agent's part of it. Total: never throws. */
export function readBatchStream(text: string): BatchStream {
  const byToolUse = new Map<string, string>();
  const agents: BatchStream['agents'] = {};
  let structured: unknown = null;
  let toolAnswer: unknown = null;
  let resultText: string | null = null;
  const partOf = (name: string) => (agents[name] ??= { transcript: [], report: null });
  for (const { value } of jsonLines(text)) {
    if (!value) continue;
    const type = str(value.type);
    if (type === 'result') {
      if (value.structured_output !== undefined && value.structured_output !== null) structured = value.structured_output;
      resultText = str(value.result);
      continue;
    }
    if (type !== 'assistant' && type !== 'user') continue;
    const parent = str(value.parent_tool_use_id);
    const owner = parent === null ? null : (byToolUse.get(parent) ?? null);
    const content = rec(value.message)?.content;
    const blocks = Array.isArray(content)
      ? content.map(rec).filter((b): b is JsonRecord => b !== null)
      : typeof content === 'string'
        ? [{ type: 'text', text: content }]
        : [];
    for (const b of blocks) {
      if (b.type === 'tool_use' && owner === null) {
        const input = rec(b.input);
        const name = str(b.name);
        if ((name === 'Agent' || name === 'Task') && str(b.id) !== null && str(input?.subagent_type) !== null)
          byToolUse.set(str(b.id) as string, str(input?.subagent_type) as string);
        if (name === 'StructuredOutput' && input) toolAnswer = input;
        continue;
      }
      if (b.type === 'tool_result' && owner === null) {
        // The sub-agent's own final report, as the main agent received it.
        const agent = byToolUse.get(str(b.tool_use_id) ?? '');
        if (agent !== undefined) partOf(agent).report = contentText(b.content);
        continue;
      }
      if (owner === null) continue;
      const part = partOf(owner).transcript;
      if (b.type === 'text' && typeof b.text === 'string' && type === 'assistant') part.push(b.text);
      else if (b.type === 'tool_use') part.push(toolLine(str(b.name) ?? '?', b.input));
      else if (b.type === 'tool_result') part.push(toolResultLine(b.content, b.is_error === true));
    }
  }
  if (structured === null) structured = toolAnswer;
  if (structured === null && resultText !== null) structured = findJsonObject(resultText)?.value ?? null;
  return { structured, agents };
}
