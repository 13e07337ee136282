/**
 * Owns the `codex` preset (OpenAI Codex CLI, spec §1.5, §1.7): the argv of a headless
 * `codex exec --json` call — model, reasoning effort per tier as a `-c model_reasoning_effort=`
 * override, sandbox (workspace-write for builders, read-only for reviewing roles), the prompt read
 * from stdin (`-`), and `exec resume <id>` when the CLI lists the `resume` subcommand — and the
 * reading of its JSONL events (`thread.started`, `item.*`, `turn.completed` with usage,
 * `turn.failed`, `error`), tolerating the older `{"msg":{...}}` event shape too. A failed turn's
 * message says why (`exceeded retry limit, last status: 429 Too Many Requests`, `unexpected status
 * 401 Unauthorized: ...`, `Selected model is at capacity`, `We're currently experiencing high
 * demand`): it is classified as an API failure and closes the transcript in the common form.
 *
 * Codex retries a failed request itself (`Reconnecting... n/5` events). The built-in `openai`
 * provider's retry counts cannot be changed from the command line (codex refuses to override a
 * built-in provider), so the preset leaves them as they are.
 */
import {
  UsageTotals,
  advertised,
  apiFailure,
  apiFailureLine,
  clip,
  count,
  isReadOnlyRole,
  joinTranscript,
  jsonLines,
  nonEmpty,
  rec,
  resolveEffort,
  resolveModel,
  str,
  toolLine,
  toolResultLine,
  usageLine,
  withBase,
  type JsonRecord,
  commandReads,
  uniqueReads,
} from './common.js';
import type { ApiFailure, Invocation, InvocationRequest, ParsedOutput, ProviderOutput, ProviderPreset, ProviderUsage } from './types.js';

/** `Reconnecting... 2/5 (...)`: a retry codex makes itself, not the call's verdict. */
const RECONNECTING = /^Reconnecting\.\.\./;

/** The API failure a codex error message describes, with the status it names. */
export function codexFailure(message: string): ApiFailure | null {
  const status = /\b(?:last status|unexpected status|status(?: code)?)[:=]?\s*([1-5]\d\d)\b/i.exec(message)?.[1];
  const wait = /\btry again in (\d+(?:\.\d+)?)\s*s\b/i.exec(message)?.[1];
  return apiFailure(status === undefined ? null : Number(status), message, wait === undefined ? null : Math.ceil(Number(wait)));
}

/** The spec's price table names gpt-5.3-codex; the tier only changes the reasoning effort. */
const DEFAULT_MODELS = { planning: 'gpt-5.3-codex', development: 'gpt-5.3-codex', fast: 'gpt-5.3-codex' } as const;
/** Spec §1.5: the codex tier parameter is a reasoning effort. */
const DEFAULT_EFFORTS = { planning: 'xhigh', development: 'high', fast: 'low' } as const;

function buildInvocation(req: InvocationRequest): Invocation {
  const args = [
    'exec',
    '--json',
    '--model',
    resolveModel(req, DEFAULT_MODELS),
    '-c',
    `model_reasoning_effort=${resolveEffort(req, DEFAULT_EFFORTS)}`,
    '--sandbox',
    isReadOnlyRole(req.role) ? 'read-only' : 'workspace-write',
    '--skip-git-repo-check',
  ];
  const session = nonEmpty(req.sessionId);
  if (req.resume && session !== null && advertised(req, 'resume')) args.push('resume', session);
  args.push('-'); // the prompt is read from stdin
  return { argv: withBase(req, 'codex', args), stdin: req.prompt, env: {} };
}

/** Codex counts cached input inside input_tokens; Vigil keeps them apart. */
function usageOf(u: JsonRecord): Partial<ProviderUsage> {
  const input = count(u.input_tokens);
  const cached = Math.min(count(u.cached_input_tokens), input);
  return { inputTokens: input - cached, cacheReadTokens: cached, outputTokens: count(u.output_tokens) };
}

function commandText(v: unknown): string {
  return Array.isArray(v) ? v.map(String).join(' ') : (str(v) ?? '');
}

function parseOutput(out: ProviderOutput): ParsedOutput {
  const transcript: (string | null)[] = [];
  const totals = new UsageTotals();
  // One mutable record: the event handlers below are closures, which flow analysis does not follow.
  const st: {
    legacyTotal: JsonRecord | null;
    sessionId: string | null;
    model: string | null;
    lastMessage: string | null;
    turnCompleted: boolean;
    failed: boolean;
    sawError: boolean;
    /** The last error message that was not a retry notice. */
    errorMessage: string | null;
    /** An item (message, reasoning, command, edit) or a finished turn: the model answered something. */
    modelOutput: boolean;
  } = {
    legacyTotal: null,
    sessionId: null,
    model: null,
    lastMessage: null,
    turnCompleted: false,
    failed: false,
    sawError: false,
    errorMessage: null,
    modelOutput: false,
  };
  /** Commands started but not (yet) completed, by item id, rendered at the end if unfinished. */
  const running = new Map<string, string>();
  /** Files its commands printed or searched. */
  const reads: string[] = [];

  const item = (it: JsonRecord, done: boolean): void => {
    const id = str(it.id) ?? '';
    const type = str(it.type) ?? str(it.item_type);
    if (type === 'command_execution') {
      const cmd = commandText(it.command);
      if (!done) {
        running.set(id, cmd);
        return;
      }
      running.delete(id);
      transcript.push(toolLine('shell', cmd));
      reads.push(...commandReads(cmd));
      const exit = it.exit_code;
      transcript.push(toolResultLine(it.aggregated_output, (typeof exit === 'number' && exit !== 0) || it.status === 'failed'));
      return;
    }
    if (!done) return;
    if (type === 'agent_message' || type === 'assistant_message') {
      const text = str(it.text);
      if (text !== null) {
        st.lastMessage = text;
        transcript.push(text);
      }
    } else if (type === 'reasoning') {
      const text = str(it.text);
      if (text) transcript.push(`[reasoning] ${clip(text, 300)}`);
    } else if (type === 'file_change') {
      const changes = Array.isArray(it.changes) ? it.changes : [];
      for (const c of changes) {
        const change = rec(c);
        if (change) transcript.push(toolLine('edit', `${str(change.kind) ?? 'update'} ${str(change.path) ?? '?'}`));
      }
    } else if (type === 'mcp_tool_call') {
      transcript.push(toolLine(`${str(it.server) ?? 'mcp'}.${str(it.tool) ?? '?'}`, it.arguments));
    } else if (type === 'web_search') {
      transcript.push(toolLine('web_search', it.query));
    } else if (type === 'error') {
      transcript.push(`error: ${str(it.message) ?? '?'}`);
    }
  };

  /** The pre-2025-10 event shape: `{"id": "...", "msg": {"type": ..., ...}}`. */
  const legacy = (msg: JsonRecord): void => {
    if (/^(?:agent_|exec_command_|patch_apply_|task_complete)/.test(str(msg.type) ?? '')) st.modelOutput = true;
    switch (str(msg.type)) {
      case 'session_configured':
        st.sessionId = str(msg.session_id) ?? st.sessionId;
        st.model = str(msg.model) ?? st.model;
        transcript.push(`[codex session ${st.sessionId ?? '?'}${st.model ? ` · model ${st.model}` : ''}]`);
        break;
      case 'agent_message': {
        const text = str(msg.message);
        if (text !== null) {
          st.lastMessage = text;
          transcript.push(text);
        }
        break;
      }
      case 'agent_reasoning': {
        const text = str(msg.text);
        if (text) transcript.push(`[reasoning] ${clip(text, 300)}`);
        break;
      }
      case 'exec_command_begin':
        transcript.push(toolLine('shell', commandText(msg.command)));
        break;
      case 'exec_command_end': {
        const exit = msg.exit_code;
        transcript.push(toolResultLine(msg.aggregated_output ?? msg.stdout ?? msg.stderr, typeof exit === 'number' && exit !== 0));
        break;
      }
      case 'patch_apply_begin': {
        const changes = rec(msg.changes);
        for (const path of Object.keys(changes ?? {})) transcript.push(toolLine('edit', path));
        break;
      }
      case 'token_count': {
        const total = rec(rec(msg.info)?.total_token_usage);
        if (total)
          st.legacyTotal = total; // cumulative: the last one counts
        else if (msg.input_tokens !== undefined || msg.output_tokens !== undefined) totals.add(usageOf(msg));
        break;
      }
      case 'task_complete': {
        st.turnCompleted = true;
        const text = str(msg.last_agent_message);
        if (text !== null) st.lastMessage = text;
        break;
      }
      case 'error':
      case 'stream_error': {
        st.sawError = true;
        const m = str(msg.message) ?? '?';
        if (!RECONNECTING.test(m)) st.errorMessage = m;
        transcript.push(`error: ${m}`);
        break;
      }
      default:
        break;
    }
  };

  for (const { raw, value } of jsonLines(out.text)) {
    if (!value) {
      transcript.push(raw);
      continue;
    }
    const msg = rec(value.msg);
    if (msg) {
      legacy(msg);
      continue;
    }
    switch (str(value.type)) {
      case 'thread.started':
        st.sessionId = str(value.thread_id) ?? st.sessionId;
        transcript.push(`[codex thread ${st.sessionId ?? '?'}]`);
        break;
      case 'item.started':
      case 'item.completed': {
        const it = rec(value.item);
        if (it && str(it.type) !== 'error') st.modelOutput = true;
        if (it) item(it, value.type === 'item.completed');
        break;
      }
      case 'turn.completed': {
        st.turnCompleted = true;
        st.modelOutput = true;
        const u = rec(value.usage);
        if (u) totals.add(usageOf(u));
        break;
      }
      case 'turn.failed': {
        st.failed = true;
        const u = rec(value.usage);
        if (u) totals.add(usageOf(u));
        const m = str(rec(value.error)?.message);
        if (m !== null) st.errorMessage = m;
        transcript.push(`error: ${m ?? 'the turn failed'}`);
        break;
      }
      case 'error': {
        st.sawError = true;
        const m = str(value.message) ?? '?';
        if (!RECONNECTING.test(m)) st.errorMessage = m;
        transcript.push(`error: ${m}`);
        break;
      }
      default:
        break; // turn.started, item.updated, config echoes of old versions
    }
  }
  for (const cmd of running.values()) transcript.push(`${toolLine('shell', cmd)} (unfinished)`);
  if (st.legacyTotal) totals.add(usageOf(st.legacyTotal));
  totals.setModel(st.model);
  const usage = totals.result(out.requestedModel);
  transcript.push(usageLine(usage));

  const final: string | null = st.lastMessage;
  const isError = out.exitCode !== 0 || st.failed || (st.sawError && !st.turnCompleted) || (!st.turnCompleted && final === null);
  const failure = isError && st.errorMessage !== null ? codexFailure(st.errorMessage) : null;
  if (failure) transcript.push(apiFailureLine(failure));
  return {
    usage,
    isError,
    apiFailure: failure,
    sessionId: st.sessionId,
    resultText: final !== null && final.trim() !== '' ? final : null,
    transcript: joinTranscript(transcript),
    modelOutput: st.modelOutput,
    filesRead: uniqueReads(reads),
  };
}

export const codexPreset: ProviderPreset = {
  name: 'codex',
  binary: 'codex',
  credentialEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  installHint: 'npm install -g @openai/codex',
  helpArgs: ['exec', '--help'],
  optionalFlags: ['resume'],
  defaultModels: DEFAULT_MODELS,
  defaultEfforts: DEFAULT_EFFORTS,
  buildInvocation,
  parseOutput,
};
