/**
 * Owns the `opencode` preset (spec §1.5, §1.7): the argv of an `opencode run --model
 * <provider/model>` call — the prompt on stdin (opencode appends piped stdin to the message) and a
 * message pointing at the prompt file; `--format json` for raw JSON events, `--auto` for builders
 * and `--agent plan` for reviewing roles, each when advertised; tool permissions set for the call
 * through OPENCODE_PERMISSION (everything allowed for builders, no edits and read-only git for
 * reviewers, since `run` rejects permission prompts) — and the reading of its output: JSON events
 * (`text`, `tool_use`, `step_finish` with cost and tokens, `error`) or, without --format json,
 * plain text. PWD is set to `.` for the call (OPENCODE_PWD says why). An `error` event's APIError (status, the provider's body, its retry-after header)
 * is classified as an API failure and closes the transcript in the common form. opencode retries a
 * failing request itself (about a minute and a half for a 5xx); no flag or variable bounds it.
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
  num,
  plainTextOutput,
  promptFileInstruction,
  rec,
  resolveModel,
  str,
  toolLine,
  toolResultLine,
  usageLine,
  withBase,
  type JsonLine,
  commandReads,
  toolReads,
  uniqueReads,
} from './common.js';
import type { Invocation, InvocationRequest, ParsedOutput, ProviderOutput, ProviderPreset } from './types.js';

const DEFAULT_MODELS = {
  planning: 'anthropic/claude-opus-4-1',
  development: 'anthropic/claude-sonnet-4-5',
  fast: 'anthropic/claude-haiku-4-5',
} as const;

/**
 * opencode takes the project it works in from PWD before its working directory. PWD is inherited
 * from the worker (the folder the worker was started in), not the repository the call runs in:
 * opencode 1.18.33 wrote the builder's files there. `.` makes it resolve to its working directory.
 */
export const OPENCODE_PWD = '.';

export const OPENCODE_BUILDER_PERMISSION = JSON.stringify({ edit: 'allow', bash: 'allow', webfetch: 'allow' });
export const OPENCODE_READ_ONLY_PERMISSION = JSON.stringify({
  edit: 'deny',
  bash: { '*': 'deny', 'git diff*': 'allow', 'git log*': 'allow', 'git show*': 'allow', 'git status*': 'allow' },
  webfetch: 'deny',
});

function buildInvocation(req: InvocationRequest): Invocation {
  const readOnly = isReadOnlyRole(req.role);
  const args = ['run', '--model', resolveModel(req, DEFAULT_MODELS)];
  if (advertised(req, '--format')) args.push('--format', 'json');
  if (readOnly) {
    if (advertised(req, '--agent')) args.push('--agent', 'plan');
  } else if (advertised(req, '--auto')) {
    args.push('--auto');
  }
  const session = nonEmpty(req.sessionId);
  if (req.resume && session !== null && advertised(req, '--session')) args.push('--session', session);
  const effort = nonEmpty(req.effort);
  if (effort !== null && advertised(req, '--variant')) args.push('--variant', effort);
  args.push(promptFileInstruction(req.promptPath));
  return {
    argv: withBase(req, 'opencode', args),
    stdin: req.prompt,
    env: { OPENCODE_PERMISSION: readOnly ? OPENCODE_READ_ONLY_PERMISSION : OPENCODE_BUILDER_PERMISSION, PWD: OPENCODE_PWD },
  };
}

const EVENT_TYPES = new Set(['step_start', 'step_finish', 'text', 'reasoning', 'tool_use', 'error', 'done']);

function isEvent(l: JsonLine): boolean {
  return l.value !== null && EVENT_TYPES.has(str(l.value.type) ?? '');
}

function parseOutput(out: ProviderOutput): ParsedOutput {
  const lines = jsonLines(out.text);
  if (!lines.some(isEvent)) return plainTextOutput(out.text, out.exitCode, null);

  const transcript: (string | null)[] = [];
  // Files its read and search tools, and its shell commands, read.
  const reads: string[] = [];
  const totals = new UsageTotals();
  let sessionId: string | null = null;
  let sawError = false;
  let failure: ReturnType<typeof apiFailure> = null;
  let stepTexts: string[] = [];
  let finalTexts: string[] = [];
  /** Text, reasoning, a tool call or a finished step: the model answered something (step_start is opencode's own). */
  let modelOutput = false;

  for (const line of lines) {
    const v = line.value;
    if (!v || !isEvent(line)) {
      if (!v) transcript.push(line.raw);
      continue;
    }
    sessionId = str(v.sessionID) ?? sessionId;
    const part = rec(v.part);
    if (['text', 'reasoning', 'tool_use', 'step_finish'].includes(str(v.type) ?? '')) modelOutput = true;
    switch (str(v.type)) {
      case 'step_start':
        stepTexts = [];
        break;
      case 'text': {
        const text = str(part?.text);
        if (text !== null && text.trim() !== '') {
          stepTexts.push(text);
          transcript.push(text);
        }
        break;
      }
      case 'reasoning': {
        const text = str(part?.text);
        if (text) transcript.push(`[reasoning] ${clip(text, 300)}`);
        break;
      }
      case 'tool_use': {
        const state = rec(part?.state);
        transcript.push(toolLine(str(part?.tool) ?? '?', state?.input));
        reads.push(
          ...(str(part?.tool) === 'bash'
            ? commandReads(str(rec(state?.input)?.command) ?? '')
            : toolReads(str(part?.tool) ?? '', state?.input)),
        );
        const failed = state?.status === 'error';
        transcript.push(toolResultLine(failed ? state?.error : state?.output, failed));
        break;
      }
      case 'step_finish': {
        const tokens = rec(part?.tokens);
        const cache = rec(tokens?.cache);
        totals.add({
          costUsd: num(part?.cost),
          inputTokens: count(tokens?.input),
          outputTokens: count(tokens?.output) + count(tokens?.reasoning),
          cacheReadTokens: count(cache?.read),
          cacheWriteTokens: count(cache?.write),
        });
        if (stepTexts.length > 0) finalTexts = stepTexts;
        break;
      }
      case 'error': {
        sawError = true;
        const err = rec(v.error);
        const data = rec(err?.data);
        const message = str(data?.message) ?? str(err?.message) ?? str(err?.name) ?? 'unknown';
        transcript.push(`error: ${message}`);
        // The AI SDK's APIError: the HTTP status, the provider's body and headers (retry-after).
        const status = typeof data?.statusCode === 'number' ? data.statusCode : null;
        const retryAfter = Number(str(rec(data?.responseHeaders)?.['retry-after']) ?? Number.NaN);
        failure =
          apiFailure(
            status,
            `${message} ${str(data?.responseBody) ?? ''}`.trim(),
            Number.isFinite(retryAfter) && retryAfter >= 0 ? Math.ceil(retryAfter) : null,
          ) ?? failure;
        break;
      }
      default:
        break; // done
    }
  }
  const usage = totals.result(out.requestedModel);
  transcript.unshift(`[opencode session ${sessionId ?? '?'}]`);
  transcript.push(usageLine(usage));
  // The last step that said something: the current one, else the last finished one that did.
  const final = (stepTexts.length > 0 ? stepTexts : finalTexts).join('\n\n').trim();
  const isError = out.exitCode !== 0 || sawError;
  if (!isError) failure = null;
  if (failure) transcript.push(apiFailureLine(failure));
  return {
    usage,
    isError,
    apiFailure: failure,
    sessionId,
    resultText: final === '' ? null : final,
    transcript: joinTranscript(transcript),
    modelOutput,
    filesRead: uniqueReads(reads),
  };
}

export const opencodePreset: ProviderPreset = {
  name: 'opencode',
  binary: 'opencode',
  credentialEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
  installHint: 'npm install -g opencode-ai',
  helpArgs: ['run', '--help'],
  optionalFlags: ['--format', '--auto', '--agent', '--session', '--variant'],
  defaultModels: DEFAULT_MODELS,
  defaultEfforts: null,
  buildInvocation,
  parseOutput,
};
