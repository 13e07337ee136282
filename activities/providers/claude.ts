/**
 * Owns the `claude` preset (Claude Code CLI, spec §1.5, §1.7, §1.12): the argv of a headless
 * `claude -p --output-format stream-json --verbose` call with the prompt on stdin, and the reading
 * of its stream-json output (one JSON object per line: `system` init, `assistant` and `user`
 * messages, a final `result` with cost, usage and session id).
 *
 * Builders (iteration, checklist) run with --dangerously-skip-permissions. Reviewing roles run
 * read-only: read tools and read-only git commands allowed, edit tools disallowed (each flag only
 * when advertised), else `--permission-mode plan` when advertised; without either, headless mode
 * still denies every tool that would need a permission prompt.
 */
import {
  UsageTotals,
  advertised,
  budgetArg,
  count,
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
} from './common.js';
import type { Invocation, InvocationRequest, ParsedOutput, ProviderOutput, ProviderPreset, ProviderUsage } from './types.js';

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
/** Tools that change files: never available to a reviewing role. */
export const CLAUDE_WRITE_TOOLS = ['Edit', 'Write', 'NotebookEdit'];

const DEFAULT_MODELS = { planning: 'opus', development: 'sonnet', fast: 'haiku' } as const;
/** Spec §1.4 loki_effort_for_tier. */
const DEFAULT_EFFORTS = { planning: 'xhigh', development: 'high', fast: 'medium' } as const;

function buildInvocation(req: InvocationRequest): Invocation {
  const model = resolveModel(req, DEFAULT_MODELS);
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--model', model];

  if (!isReadOnlyRole(req.role)) {
    args.push('--dangerously-skip-permissions');
  } else {
    const allow = advertised(req, '--allowedTools');
    const deny = advertised(req, '--disallowedTools');
    if (allow) args.push('--allowedTools', ...CLAUDE_READ_ONLY_TOOLS);
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

  if (advertised(req, '--effort')) args.push('--effort', resolveEffort(req, DEFAULT_EFFORTS));

  const budget = budgetArg(req.remainingBudgetUsd);
  if (budget !== null && advertised(req, '--max-budget-usd')) args.push('--max-budget-usd', budget);

  const fallback = nonEmpty(req.fallbackModel);
  if (fallback !== null && fallback !== model && advertised(req, '--fallback-model')) args.push('--fallback-model', fallback);

  return { argv: withBase(req, 'claude', args), stdin: req.prompt, env: {} };
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
  const texts: string[] = [];
  /** Usage per API message id: a message split over several events repeats its usage. */
  const messageUsage = new Map<string, Partial<ProviderUsage>>();
  let sessionId: string | null = null;
  let model: string | null = null;
  let result: JsonRecord | null = null;

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
      }
    } else if (type === 'assistant' || type === 'user') {
      const message = rec(value.message);
      const content = message?.content;
      if (type === 'assistant') {
        const id = str(message?.id);
        const usage = rec(message?.usage);
        if (usage) messageUsage.set(id ?? `#${messageUsage.size}`, { ...usageOf(usage), model: str(message?.model) });
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
        } else if (b.type === 'tool_result') {
          transcript.push(toolResultLine(b.content, b.is_error === true));
        }
      }
    } else if (type === 'result') {
      result = value;
    } else if (type === null) {
      transcript.push(raw);
    }
  }

  const totals = new UsageTotals();
  if (result && (result.total_cost_usd !== undefined || rec(result.usage))) {
    totals.add({ ...usageOf(rec(result.usage)), costUsd: num(result.total_cost_usd) });
  } else {
    for (const u of messageUsage.values()) totals.add(u);
  }
  totals.setModel(model);
  const usage = totals.result(out.requestedModel);

  const subtype = str(result?.subtype) ?? '';
  const isError = out.exitCode !== 0 || result === null || result.is_error === true || subtype.startsWith('error');
  const finalText = str(result?.result);
  if (result) {
    const turns = num(result.num_turns);
    transcript.push(`[result: ${subtype || '?'}${result.is_error === true ? ' (error)' : ''}${turns === null ? '' : ` · ${turns} turns`}]`);
    if (result.is_error === true && finalText) transcript.push(`error: ${finalText}`);
  } else {
    transcript.push('[no result record: the output ended early]');
  }
  transcript.push(usageLine(usage));

  const joined = texts.join('\n\n').trim();
  return {
    usage,
    isError,
    sessionId,
    resultText: finalText !== null && finalText.trim() !== '' ? finalText : joined === '' ? null : joined,
    transcript: joinTranscript(transcript),
  };
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
  ],
  defaultModels: DEFAULT_MODELS,
  defaultEfforts: DEFAULT_EFFORTS,
  buildInvocation,
  parseOutput,
};
