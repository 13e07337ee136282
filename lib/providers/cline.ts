/**
 * Owns the `cline` preset (spec §1.5, §1.7: `cline -y [-m <model>] "<prompt>"` in the original,
 * one externally configured model for every tier). The argv follows the Cline CLI of npm `cline`
 * 3.0.65 (its `--help`): the prompt is the positional argument (a short instruction pointing at
 * the prompt file; the full text also goes on stdin), act mode with tools auto-approved
 * (`--auto-approve true`) for builders and plan mode (`--plan`, no edits) for reviewing roles,
 * `--json` for one JSON record a line, `-m <model>` when one is named (else the model the CLI was
 * configured with: `cline auth`), `--thinking <effort>` and `--id <session>` to resume, each when
 * advertised.
 *
 * Its `--json` records: `hook_event` (agent_start, agent_error, ...), `agent_event` (the agent's
 * content and tool events, an `error` with the provider's message), and at the end `run_result`
 * (`finishReason` completed | max_iterations | aborted | mistake_limit | error, `usage` with
 * tokens and `totalCost` in USD, the final `text`, the `model`). A run whose finishReason is not
 * `completed` or `max_iterations` failed, whatever the exit code; an error's message is read for
 * the provider's health (rate limit, auth, overload) in the common form.
 *
 * The model is the configured one unless the run names it: the tiers' defaults are empty, as the
 * original's `LOKI_CLINE_MODEL` default was the CLI's own.
 */
import {
  advertised,
  apiFailure,
  apiFailureLine,
  clip,
  isReadOnlyRole,
  joinTranscript,
  jsonLines,
  nonEmpty,
  num,
  plainTextOutput,
  promptFileInstruction,
  rec,
  str,
  toolLine,
  usageLine,
  withBase,
} from './common.js';
import type { ApiFailure, Invocation, InvocationRequest, ParsedOutput, ProviderOutput, ProviderPreset, ProviderUsage } from './types.js';

/** The CLI's configured model for every tier (`cline auth` sets it); a run may name one with `model`. */
const DEFAULT_MODELS = { planning: '', development: '', fast: '' } as const;
/** Finish reasons of a run that did its work (the turn limit is the CLI's own end, not a failure of the provider). */
const FINISHED = new Set(['completed', 'max_iterations']);

function buildInvocation(req: InvocationRequest): Invocation {
  const args: string[] = [];
  if (isReadOnlyRole(req.role) || req.role === 'acceptance' || req.role === 'discovery') {
    // Reviewing roles only read: plan mode edits nothing.
    if (advertised(req, '--plan')) args.push('--plan');
  } else if (advertised(req, '--auto-approve')) {
    args.push('--auto-approve', 'true');
  }
  if (advertised(req, '--json')) args.push('--json');
  const model = nonEmpty(req.model);
  if (model !== null) args.push('-m', model);
  const effort = nonEmpty(req.effort);
  if (effort !== null && advertised(req, '--thinking')) args.push('--thinking', effort);
  const session = nonEmpty(req.sessionId);
  if (req.resume && session !== null && advertised(req, '--id')) args.push('--id', session);
  args.push(promptFileInstruction(req.promptPath));
  return { argv: withBase(req, 'cline', args), stdin: req.prompt, env: {} };
}

interface Reading {
  lines: string[];
  usage: ProviderUsage | null;
  finish: string | null;
  resultText: string | null;
  sessionId: string | null;
  errors: string[];
  modelOutput: boolean;
  records: number;
}

/** One `agent_event`'s contribution to the transcript, and whether the model produced it. */
function agentEvent(event: Record<string, unknown>, r: Reading): void {
  const type = str(event.type) ?? '';
  if (type === 'error') {
    const message = str(rec(event.error)?.message) ?? str(event.message) ?? 'unknown error';
    r.errors.push(message);
    r.lines.push(`error: ${clip(message, 400)}`);
    return;
  }
  if (type === 'iteration_start' || type === 'iteration_end') return;
  r.modelOutput = true;
  const text = str(event.text) ?? str(rec(event.content)?.text) ?? str(event.delta);
  if (type.startsWith('tool') && str(event.name)) r.lines.push(toolLine(str(event.name) ?? 'tool', event.input));
  else if (text && type !== 'content_update') r.lines.push(text);
}

function runResult(v: Record<string, unknown>, r: Reading, requestedModel: string | null | undefined): void {
  r.finish = str(v.finishReason);
  r.resultText = nonEmpty(str(v.text));
  const u = rec(v.aggregateUsage) ?? rec(v.usage);
  const model = str(rec(v.model)?.id) ?? requestedModel ?? null;
  if (u) {
    const cost = num(u.totalCost);
    r.usage = {
      costUsd: cost,
      inputTokens: num(u.inputTokens) ?? 0,
      outputTokens: num(u.outputTokens) ?? 0,
      cacheReadTokens: num(u.cacheReadTokens) ?? 0,
      cacheWriteTokens: num(u.cacheWriteTokens) ?? 0,
      model,
    };
  }
  r.lines.push(...[usageLine(r.usage), `[finished: ${r.finish ?? 'unknown'}]`].filter((l): l is string => l !== null));
}

function read(out: ProviderOutput): Reading {
  const r: Reading = {
    lines: [],
    usage: null,
    finish: null,
    resultText: null,
    sessionId: null,
    errors: [],
    modelOutput: false,
    records: 0,
  };
  for (const line of jsonLines(out.text)) {
    const v = line.value;
    const type = v ? str(v.type) : null;
    if (!v || !type) {
      r.lines.push(line.raw);
      continue;
    }
    r.records += 1;
    r.sessionId ??= str(v.taskId);
    if (type === 'agent_event') agentEvent(rec(v.event) ?? {}, r);
    else if (type === 'run_result') runResult(v, r, out.requestedModel);
  }
  return r;
}

/** The last error's API failure, when its words or status say what kind. */
function failureOf(errors: readonly string[]): ApiFailure | null {
  const message = errors.at(-1);
  if (message === undefined) return null;
  const status = /\b(?:status(?: code)?:?\s*|HTTP\s*)?(4\d\d|5\d\d)\b/.exec(message)?.[1];
  const retry = /retry[- ]after:?\s*(\d+)/i.exec(message)?.[1];
  return apiFailure(status ? Number(status) : null, message, retry ? Number(retry) : null);
}

function parseOutput(out: ProviderOutput): ParsedOutput {
  const r = read(out);
  // Without --json (a CLI that does not advertise it): plain text.
  if (r.records === 0) return plainTextOutput(out.text, out.exitCode, null);
  const isError = out.exitCode !== 0 || r.finish === null || !FINISHED.has(r.finish);
  const failure = isError ? failureOf(r.errors) : null;
  return {
    usage: r.usage,
    isError,
    apiFailure: failure,
    sessionId: r.sessionId,
    resultText: r.resultText,
    transcript: joinTranscript([...r.lines, failure ? apiFailureLine(failure) : null]),
    modelOutput: r.modelOutput,
  };
}

export const clinePreset: ProviderPreset = {
  name: 'cline',
  binary: 'cline',
  credentialEnv: ['CLINE_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
  installHint: 'npm install -g cline@3.0.65 && cline auth',
  helpArgs: ['--help'],
  optionalFlags: ['--plan', '--auto-approve', '--json', '--thinking', '--id'],
  defaultModels: DEFAULT_MODELS,
  defaultEfforts: null,
  buildInvocation,
  parseOutput,
};
