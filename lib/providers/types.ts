/**
 * Owns the shared shapes of the provider presets (activities/providers/*): what a preset is
 * asked to build (`InvocationRequest`), what it builds (`Invocation`: argv, stdin, extra env) and
 * what it reads back from the CLI's output (`ParsedOutput`). Plain TypeScript, no zod and no
 * I/O: presets are pure functions of these values.
 */
import type { CallContext } from '../../schemas/call-context.js';

export const PROVIDER_NAMES = ['command', 'claude', 'codex', 'gemini', 'aider', 'opencode', 'cline'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Model tier (same names as the `tier` knob and TierSchema). */
export type ProviderTier = 'planning' | 'development' | 'fast';

/** Who is calling the agent. The builders change the repository; every other role only reads. */
export type InvocationRole =
  | 'iteration'
  | 'council'
  | 'devils-advocate'
  | 'reviewer'
  | 'checklist'
  | 'checklist-verifier'
  | 'planner'
  | 'memory'
  | 'acceptance'
  | 'discovery';

export interface InvocationRequest {
  /** The full prompt text (also saved at `promptPath`). */
  prompt: string;
  /** Absolute path of the prompt file, for CLIs that read a file or are told to read it. */
  promptPath: string;
  role: InvocationRole;
  tier: ProviderTier;
  /** Model override; null uses the preset's `defaultModels[tier]`. */
  model: string | null;
  /** Reasoning effort override; null/absent uses the preset's per-tier default (claude, codex). */
  effort?: string | null;
  /** Flags the installed CLI's --help lists (see help.ts); null = not probed: no optional flag. */
  advertisedFlags: ReadonlySet<string> | null;
  /** What is left of the run's budget in USD; null = no budget or unknown. */
  remainingBudgetUsd: number | null;
  /** Session id to stamp (new session) or resume; null = let the CLI choose. */
  sessionId: string | null;
  /** Resume `sessionId` instead of starting a new session. */
  resume: boolean;
  appendSystemPrompt: string | null;
  fallbackModel: string | null;
  /** The user's override of the binary and leading args (e.g. ["npx", "claude"]). */
  baseArgv?: string[];
  /**
   * A batched round (claude): the sub-agents to declare (`--agents` JSON) and the schema of the
   * one structured answer (`--json-schema`); passed only when the CLI advertises both flags.
   */
  subAgents?: { agents: string; schema: string } | null;
}

export interface Invocation {
  /** argv[0] is the executable; run without a shell. */
  argv: string[];
  /** Text written to the child's stdin, or null for none (stdin closed / empty). */
  stdin: string | null;
  /** Extra environment for this call only (added to the inherited environment). */
  env: Record<string, string>;
}

export interface ProviderUsage {
  /** USD as the CLI reported it; null when it reports none (price from tokens). */
  costUsd: number | null;
  /** Input tokens not served from a cache. */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  model: string | null;
}

/**
 * How a call's API request failed, as the CLI reported it: `rate-limit` (429, quota), `auth` (401,
 * 403, a key refused), `overloaded` (529, 503, "at capacity", "high demand") or `server-error`
 * (500 and other 5xx). Read from the CLI's structured error record where it prints one.
 */
export type ApiFailureKind = 'rate-limit' | 'auth' | 'overloaded' | 'server-error';

export interface ApiFailure {
  kind: ApiFailureKind;
  /** The HTTP status the CLI reported, when it reported one. */
  status: number | null;
  /** The CLI's own words (one line, clipped). */
  message: string;
  /** How long the provider asked to wait (a 429's retry-after, as the CLI saw it), or null. */
  retryAfterSeconds: number | null;
}

export interface ParsedOutput {
  /** What the call used, or null when the output reports nothing. */
  usage: ProviderUsage | null;
  /** The call failed: non-zero exit, or the CLI said so in its output. */
  isError: boolean;
  /**
   * The call failed because the model API refused or failed it (never set on success). Its
   * canonical line (`apiFailureLine`) ends the transcript, where the provider-health reading of
   * the tail finds it.
   */
  apiFailure: ApiFailure | null;
  /** The session/thread id the CLI reported (to resume later), or null. */
  sessionId: string | null;
  /** The agent's final answer (vote parsing, completion-promise search), or null. */
  resultText: string | null;
  /** Human-readable rendering of the whole output, for the iteration log. */
  transcript: string;
  /**
   * Whether the output shows anything the model produced (a message, reasoning, a tool call, a
   * finished turn), beyond the CLI's own start-up records. Absent: the preset cannot tell (a CLI
   * that prints everything at the end, or plain text). A call killed at its timeout with `false`
   * never heard from the model: a hung stream, the provider's failure (provider-outcome.ts).
   */
  modelOutput?: boolean;
  /**
   * Files the agent read, where the output says so (a read or search tool's path, a command that
   * prints a file), in order, each once; absent: the output does not tell (docs/memory.md).
   */
  filesRead?: string[];
  /** The context of the call's last request and the compactions it made; absent: the CLI does not say. */
  context?: CallContext;
}

export interface ProviderOutput {
  /** Everything the CLI printed (stdout and stderr, interleaved). */
  text: string;
  exitCode: number;
  /** The model the call was made with, used when the output does not name one. */
  requestedModel?: string | null;
}

export interface ProviderPreset {
  readonly name: ProviderName;
  /** Default executable name; null for `command` (the user's argv). */
  readonly binary: string | null;
  /** Environment variables, any one of which authenticates the CLI. */
  readonly credentialEnv: string[];
  /** How to install the CLI; null for `command`. */
  readonly installHint: string | null;
  /** Arguments after the binary that print the help listing `optionalFlags`. */
  readonly helpArgs: string[];
  /** Flags (and subcommands) passed only when the installed CLI's help lists them. */
  readonly optionalFlags: string[];
  readonly defaultModels: Readonly<Record<ProviderTier, string>>;
  /** Reasoning effort per tier when the CLI takes one; null otherwise. */
  readonly defaultEfforts: Readonly<Record<ProviderTier, string>> | null;
  buildInvocation(req: InvocationRequest): Invocation;
  /** Total: returns a result for any input, never throws. */
  parseOutput(out: ProviderOutput): ParsedOutput;
}
