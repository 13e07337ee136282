/**
 * One agent call through a provider preset (lib/providers/): before the call, which CLI
 * runs with which argv, stdin and environment — the installed CLI's --help probed once per binary
 * version so optional flags are passed only where they exist, and a session resumed when a
 * previous attempt of this same call (a crashed worker) recorded one; after the call, what its
 * output says — usage and cost, the final answer, the session, an auth error, a rate limit — and
 * a readable transcript. Facts only: the workflow decides what they mean for the run.
 */
import { randomUUID } from 'node:crypto';
import type { AgentResult, AgentRole } from '../../schemas/activities.js';
import type { Tier } from '../../schemas/run.js';
import { detectAuthError } from '../../rules/auth-error.js';
import { detectRateLimit, type RateLimitVerdict } from '../../rules/rate-limit.js';
import { PROVIDERS, type ParsedOutput, type ProviderName } from './index.js';
import { probeCached } from './probe.js';
import { apiFailureLine } from './common.js';

export interface CallRequest {
  provider: ProviderName;
  /** `command`: the argv; otherwise an optional override of the CLI's binary and leading words. */
  argv: string[];
  prompt: string;
  promptPath: string;
  role: AgentRole;
  tier: Tier;
  model: string | null;
  effort: string | null;
  fallbackModel: string | null;
  remainingBudgetUsd: number | null;
  /** A session the previous attempt of this call started (worker crash): resume it. */
  resumeSession: string | null;
  /** Start a fresh session whatever happened before (context clear). */
  fresh: boolean;
  /** A batched round's call (claude): its sub-agents and the schema of its answer. */
  subAgents?: { agents: string; schema: string } | null;
}

export interface PreparedCall {
  argv: [string, ...string[]];
  stdin: string;
  env: Record<string, string>;
  /** The model the call asks for (null: the CLI's or the command's own choice). */
  model: string | null;
  /** The session id chosen up front (claude --session-id) or being resumed; else null. */
  sessionId: string | null;
  /** The output is a structured stream to parse (every provider but `command`). */
  structured: boolean;
}

/**
 * The agent cannot be run as configured (no command, an empty command line): trying again changes
 * nothing. The agent activity turns it into a non-retryable failure of type agentNotRunnable.
 */
export class AgentNotRunnable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentNotRunnable';
  }
}

const notRunnable = (message: string): never => {
  throw new AgentNotRunnable(message);
};

export async function prepareCall(req: CallRequest): Promise<PreparedCall> {
  const preset = PROVIDERS[req.provider];
  if (req.provider === 'command') {
    const [file, ...args] = req.argv;
    if (file === undefined) return notRunnable('no agent command configured (knob agentCommand; or choose a --provider)');
    return { argv: [file, ...args], stdin: req.prompt, env: {}, model: req.model, sessionId: null, structured: false };
  }
  // A one-word override is a binary to probe; several words (`npx claude`) cannot be probed, so no
  // optional flag is passed to them.
  const base = req.argv.length > 0 ? req.argv : undefined;
  const binary = base === undefined ? preset.binary : base.length === 1 ? (base[0] as string) : null;
  let advertised: ReadonlySet<string> | null = null;
  if (binary !== null) {
    const probe = await probeCached(preset, { binary });
    if (probe.binaryPath === null) {
      notRunnable(
        `${binary}: command not found (provider ${req.provider}). Install it: ` +
          `${preset.installHint ?? 'see its documentation'}; or point agentCommand at the binary. \`vigil doctor --provider ` +
          `${req.provider}\` checks the setup.`,
      );
    }
    if (probe.helpOk) advertised = new Set(probe.advertised);
  }
  const resume = !req.fresh && req.resumeSession !== null;
  const sessionId = resume ? req.resumeSession : advertised?.has('--session-id') ? randomUUID() : null;
  const inv = preset.buildInvocation({
    prompt: req.prompt,
    promptPath: req.promptPath,
    role: req.role,
    tier: req.tier,
    model: req.model,
    effort: req.effort,
    advertisedFlags: advertised,
    remainingBudgetUsd: req.remainingBudgetUsd,
    sessionId,
    resume,
    appendSystemPrompt: null,
    fallbackModel: req.fallbackModel,
    ...(base ? { baseArgv: base } : {}),
    ...(req.subAgents ? { subAgents: req.subAgents } : {}),
  });
  const [file, ...args] = inv.argv;
  if (file === undefined) return notRunnable(`provider ${req.provider} built an empty command line`);
  return {
    argv: [file, ...args],
    stdin: inv.stdin ?? '',
    env: inv.env,
    model: req.model ?? preset.defaultModels[req.tier] ?? null,
    sessionId,
    structured: true,
  };
}

export interface CallFacts {
  parsed: ParsedOutput | null;
  usage: AgentResult['usage'];
  authError: string | null;
  rateLimit: RateLimitVerdict | null;
  /** The exit code the workflow should see: a CLI that reports an error with exit 0 failed. */
  exitCode: number;
}

/** What the output of a finished call says. `text` is the whole output (or its head and tail). */
export function interpretCall(
  provider: ProviderName,
  text: string,
  exitCode: number,
  model: string | null,
  rpm: number,
  nowMs: number,
): CallFacts {
  const parsed = provider === 'command' ? null : PROVIDERS[provider].parseOutput({ text, exitCode, requestedModel: model });
  const failed = exitCode !== 0 || parsed?.isError === true;
  // The preset's own reading of the CLI's error record comes first (its status, its retry-after);
  // the text patterns are the fallback for CLIs and failures the preset cannot read.
  const api = failed ? (parsed?.apiFailure ?? null) : null;
  const auth = api?.kind === 'auth' ? { evidence: apiFailureLine(api) } : failed && api === null ? detectAuthError(text, provider) : null;
  const rateText = api === null ? text : api.kind === 'rate-limit' ? apiFailureLine(api) : null;
  // The local zone only for a failed call (making an Intl.DateTimeFormat is not free).
  const rateLimit =
    failed && !auth && rateText !== null
      ? detectRateLimit(
          rateText,
          nowMs,
          new Date(nowMs).getTimezoneOffset(),
          rpm,
          provider,
          Intl.DateTimeFormat().resolvedOptions().timeZone,
        )
      : null;
  const u = parsed?.usage ?? null;
  return {
    parsed,
    usage: u
      ? {
          costUsd: u.costUsd,
          inputTokens: u.inputTokens,
          outputTokens: u.outputTokens,
          cacheReadTokens: u.cacheReadTokens,
          cacheWriteTokens: u.cacheWriteTokens,
          model: u.model,
        }
      : null,
    authError: auth ? auth.evidence.slice(0, 500) : null,
    rateLimit,
    exitCode: exitCode === 0 && parsed?.isError === true ? 1 : exitCode,
  };
}

/** Where a CLI prints its session or thread id in its stream (claude, codex, gemini, opencode). */
export const SESSION_PATTERN = /"(?:session_id|thread_id|sessionID|sessionId)"\s*:\s*"([A-Za-z0-9_.:-]{6,120})"/;
