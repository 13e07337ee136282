/**
 * Owns the `aider` preset (spec §1.5, §1.7): the argv of a one-shot
 * `aider --message-file <prompt file> --yes-always --no-auto-commits --model <m>` call (Vigil
 * commits, not aider; reviewing roles add --dry-run and --chat-mode ask when advertised), and the
 * reading of its plain-text output: usage from aider's report lines
 * `Tokens: 12k sent, 1.2k cache write, 3k cache hit, 1.2k received. Cost: $0.05 message, $0.20 session.`
 * (tokens summed over the reports, cost = the last session total), the model from
 * `Main model: <name> ...`.
 */
import { advertised, cleanText, isReadOnlyRole, plainTextOutput, resolveModel, withBase } from './common.js';
import type { Invocation, InvocationRequest, ParsedOutput, ProviderOutput, ProviderPreset, ProviderUsage } from './types.js';

/** aider's own aliases (Anthropic models; any litellm model name works as an override). */
const DEFAULT_MODELS = { planning: 'opus', development: 'sonnet', fast: 'haiku' } as const;
/** Passed when advertised, for every role: plain output, no update check or first-run prompts. */
const QUIET_FLAGS = ['--no-pretty', '--no-check-update', '--no-show-release-notes', '--no-analytics'];

function buildInvocation(req: InvocationRequest): Invocation {
  const args = ['--message-file', req.promptPath, '--yes-always', '--no-auto-commits', '--model', resolveModel(req, DEFAULT_MODELS)];
  for (const flag of QUIET_FLAGS) if (advertised(req, flag)) args.push(flag);
  if (isReadOnlyRole(req.role)) {
    if (advertised(req, '--dry-run')) args.push('--dry-run');
    if (advertised(req, '--chat-mode')) args.push('--chat-mode', 'ask');
  }
  return { argv: withBase(req, 'aider', args), stdin: null, env: {} };
}

const TOKEN = '([0-9][0-9,]*(?:\\.[0-9]+)?[kKmM]?)';
const TOKENS_LINE = new RegExp(`Tokens: ${TOKEN} sent(?:, ${TOKEN} cache write)?(?:, ${TOKEN} cache hit)?, ${TOKEN} received`, 'g');
const COST_LINE = /Cost: \$([0-9]+(?:\.[0-9]+)?) message, \$([0-9]+(?:\.[0-9]+)?) session/g;
const MODEL_LINE = /^(?:Main model|Model): (\S+)/m;
const API_ERROR = /\b(?:AuthenticationError|RateLimitError|APIConnectionError|NotFoundError|BadRequestError|PermissionDeniedError)\b/;

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

function parseOutput(out: ProviderOutput): ParsedOutput {
  const usage = aiderUsage(out.text, out.requestedModel);
  const parsed = plainTextOutput(out.text, out.exitCode, usage);
  // aider reports some API failures and still exits 0: no usage report plus an API error is a failure.
  if (usage === null && API_ERROR.test(parsed.transcript)) return { ...parsed, isError: true };
  return parsed;
}

export const aiderPreset: ProviderPreset = {
  name: 'aider',
  binary: 'aider',
  credentialEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
  installHint: 'python -m pip install aider-install && aider-install',
  helpArgs: ['--help'],
  optionalFlags: [...QUIET_FLAGS, '--dry-run', '--chat-mode'],
  defaultModels: DEFAULT_MODELS,
  defaultEfforts: null,
  buildInvocation,
  parseOutput,
};
