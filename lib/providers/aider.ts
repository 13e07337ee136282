/**
 * Owns the `aider` preset (spec §1.5, §1.7): the argv of a one-shot
 * `aider --message-file <prompt file> --yes-always --no-auto-commits --model <m>` call (Vigil
 * commits, not aider), and the reading of its plain-text output: usage from aider's report lines
 * `Tokens: 12k sent, 1.2k cache write, 3k cache hit, 1.2k received. Cost: $0.05 message, $0.20 session.`
 * (tokens summed over the reports, cost = the last session total), the model from
 * `Main model: <name> ...`.
 *
 * aider writes into the repository unless told otherwise: its chat and input histories
 * (`.aider.chat.history.md`, `.aider.input.history`) go beside the call's prompt file instead
 * (outside the working tree Vigil hashes), and `--no-gitignore` keeps it from adding `.aider*` to
 * the user's .gitignore. Reviewing roles (checklist extraction included) add --dry-run, --chat-mode
 * ask and `--map-tokens 0`: no repository map, so no `.aider.tags.cache.v4/` written into the tree
 * they are judging (each flag when advertised).
 *
 * aider prints an API failure and still exits 0 (after its own retries, about a minute, which no
 * flag bounds): output with a litellm exception and no usage report is a failed call, classified
 * from the exception's name and the provider's error body (`overloaded_error`, ...).
 */
import { advertised, apiFailure, apiFailureLine, cleanText, isReadOnlyRole, plainTextOutput, resolveModel, withBase } from './common.js';
import type { ApiFailure, Invocation, InvocationRequest, ParsedOutput, ProviderOutput, ProviderPreset, ProviderUsage } from './types.js';

/** aider's own aliases (Anthropic models; any litellm model name works as an override). */
const DEFAULT_MODELS = { planning: 'opus', development: 'sonnet', fast: 'haiku' } as const;
/** Passed when advertised, for every role: plain output, no update check or first-run prompts. */
const QUIET_FLAGS = ['--no-pretty', '--no-check-update', '--no-show-release-notes', '--no-analytics'];

/** Passed when advertised, for every role: nothing of aider's own lands in the repository. */
const KEEP_OUT_FLAGS = ['--no-gitignore', '--chat-history-file', '--input-history-file'];

/** `<dir>/iteration-0001.prompt.md` → `<dir>/iteration-0001<suffix>`: aider's files beside the prompt. */
function besidePrompt(promptPath: string, suffix: string): string {
  return `${promptPath.replace(/\.prompt\.md$/, '').replace(/\.md$/, '')}${suffix}`;
}

function buildInvocation(req: InvocationRequest): Invocation {
  const args = ['--message-file', req.promptPath, '--yes-always', '--no-auto-commits', '--model', resolveModel(req, DEFAULT_MODELS)];
  for (const flag of QUIET_FLAGS) if (advertised(req, flag)) args.push(flag);
  if (advertised(req, '--no-gitignore')) args.push('--no-gitignore');
  if (advertised(req, '--chat-history-file')) args.push('--chat-history-file', besidePrompt(req.promptPath, '.aider.chat.history.md'));
  if (advertised(req, '--input-history-file')) args.push('--input-history-file', besidePrompt(req.promptPath, '.aider.input.history'));
  if (isReadOnlyRole(req.role)) {
    if (advertised(req, '--dry-run')) args.push('--dry-run');
    if (advertised(req, '--chat-mode')) args.push('--chat-mode', 'ask');
    if (advertised(req, '--map-tokens')) args.push('--map-tokens', '0');
  }
  return { argv: withBase(req, 'aider', args), stdin: null, env: {} };
}

const TOKEN = '([0-9][0-9,]*(?:\\.[0-9]+)?[kKmM]?)';
const TOKENS_LINE = new RegExp(`Tokens: ${TOKEN} sent(?:, ${TOKEN} cache write)?(?:, ${TOKEN} cache hit)?, ${TOKEN} received`, 'g');
const COST_LINE = /Cost: \$([0-9]+(?:\.[0-9]+)?) message, \$([0-9]+(?:\.[0-9]+)?) session/g;
const MODEL_LINE = /^(?:Main model|Model): (\S+)/m;
/** litellm's exceptions as aider prints them (`litellm.InternalServerError: AnthropicError - ...`). */
const API_ERROR = new RegExp(
  String.raw`\b(?:${[
    /AuthenticationError|RateLimitError|APIConnectionError|NotFoundError|BadRequestError|PermissionDeniedError/.source,
    /InternalServerError|ServiceUnavailableError|APIError|Timeout|ContextWindowExceededError/.source,
  ].join('|')})\b`,
);
const LITELLM_ERROR = new RegExp(
  String.raw`^(?:litellm\.)?(${[
    /AuthenticationError|RateLimitError|APIConnectionError|NotFoundError|BadRequestError|PermissionDeniedError/.source,
    /InternalServerError|ServiceUnavailableError|APIError|Timeout/.source,
  ].join('|')})\b:?(.*)$`,
);
/** The HTTP status each litellm exception stands for (an InternalServerError may be a 529: its body says). */
const ERROR_STATUS: Readonly<Record<string, number>> = {
  RateLimitError: 429,
  AuthenticationError: 401,
  PermissionDeniedError: 403,
  ServiceUnavailableError: 503,
};

/** `12k` → 12000, `1.2k` → 1200, `1,234` → 1234. */
function tokens(s: string | undefined): number {
  if (!s) return 0;
  const m = /^([0-9][0-9,]*(?:\.[0-9]+)?)([kKmM]?)$/.exec(s);
  if (!m) return 0;
  const base = Number((m[1] ?? '0').replace(/,/g, ''));
  const mult = m[2] === 'k' || m[2] === 'K' ? 1000 : m[2] === 'm' || m[2] === 'M' ? 1_000_000 : 1;
  return Number.isFinite(base) ? Math.round(base * mult) : 0;
}

export function aiderUsage(text: string, requestedModel: string | null | undefined): ProviderUsage | null {
  const clean = cleanText(text);
  let seen = false;
  const u: ProviderUsage = { costUsd: null, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, model: null };
  for (const m of clean.matchAll(TOKENS_LINE)) {
    seen = true;
    u.inputTokens += tokens(m[1]);
    u.cacheWriteTokens += tokens(m[2]);
    u.cacheReadTokens += tokens(m[3]);
    u.outputTokens += tokens(m[4]);
  }
  const costs = [...clean.matchAll(COST_LINE)];
  const lastSession = costs.at(-1)?.[2];
  if (lastSession !== undefined) {
    seen = true;
    const n = Number(lastSession);
    u.costUsd = Number.isFinite(n) ? n : null;
  }
  if (!seen) return null;
  u.model = MODEL_LINE.exec(clean)?.[1] ?? requestedModel ?? null;
  return u;
}

/** The last litellm exception in the output, with the lines after it (the provider's error body). */
export function aiderFailure(transcript: string): ApiFailure | null {
  const lines = transcript.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = LITELLM_ERROR.exec((lines[i] ?? '').trim());
    if (!m) continue;
    const name = m[1] ?? '';
    const body = [m[2] ?? '', ...lines.slice(i + 1, i + 5)].join(' ').replace(/\s+/g, ' ').trim();
    return apiFailure(ERROR_STATUS[name] ?? null, `${name}: ${body}`);
  }
  return null;
}

function parseOutput(out: ProviderOutput): ParsedOutput {
  const usage = aiderUsage(out.text, out.requestedModel);
  const parsed = plainTextOutput(out.text, out.exitCode, usage);
  // aider reports API failures and still exits 0: no usage report plus an API error is a failure.
  if (usage === null && API_ERROR.test(parsed.transcript)) {
    const failure = aiderFailure(parsed.transcript);
    return {
      ...parsed,
      isError: true,
      apiFailure: failure,
      transcript: failure ? `${parsed.transcript}\n${apiFailureLine(failure)}` : parsed.transcript,
    };
  }
  return parsed;
}

export const aiderPreset: ProviderPreset = {
  name: 'aider',
  binary: 'aider',
  credentialEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
  installHint: 'python -m pip install aider-install && aider-install',
  helpArgs: ['--help'],
  optionalFlags: [...QUIET_FLAGS, ...KEEP_OUT_FLAGS, '--dry-run', '--chat-mode', '--map-tokens'],
  defaultModels: DEFAULT_MODELS,
  defaultEfforts: null,
  buildInvocation,
  parseOutput,
};
