/**
 * Owns the `gemini` preset (Gemini CLI headless mode): the argv of a `gemini -p ...
 * --output-format json` call — the prompt on stdin (the CLI prepends stdin to the `-p` text) and
 * `-p` pointing at the prompt file; `--approval-mode yolo` (or the older `--yolo`) for builders,
 * `--approval-mode default` for reviewing roles, under which headless Gemini offers no tool that
 * needs a confirmation (no edits, no shell) — and the reading of its single JSON object
 * `{ session_id, response, stats: { models: { <name>: { tokens } }, tools }, error }`.
 * The spec notes the original dropped Gemini (§1.5); the preset follows the CLI's own docs.
 * The error object's `code` is the HTTP status (400 for a key the API refuses, 429, 500, 503):
 * classified as an API failure that closes the transcript in the common form. gemini retries a
 * failing request itself, 10 attempts over about four minutes by default; only its settings file
 * (`general.maxAttempts`) bounds that, no flag or variable.
 */
import {
  UsageTotals,
  advertised,
  apiFailure,
  apiFailureLine,
  cleanText,
  count,
  findJsonObject,
  isReadOnlyRole,
  joinTranscript,
  nonEmpty,
  promptFileInstruction,
  rec,
  resolveModel,
  str,
  toolLine,
  usageLine,
  withBase,
} from './common.js';
import type { Invocation, InvocationRequest, ParsedOutput, ProviderOutput, ProviderPreset } from './types.js';

const DEFAULT_MODELS = { planning: 'gemini-2.5-pro', development: 'gemini-2.5-pro', fast: 'gemini-2.5-flash' } as const;

function buildInvocation(req: InvocationRequest): Invocation {
  const args = ['-p', promptFileInstruction(req.promptPath), '--output-format', 'json', '--model', resolveModel(req, DEFAULT_MODELS)];
  const modes = advertised(req, '--approval-mode');
  if (isReadOnlyRole(req.role)) {
    if (modes) args.push('--approval-mode', 'default');
  } else {
    args.push(...(modes ? ['--approval-mode', 'yolo'] : ['--yolo']));
  }
  const session = nonEmpty(req.sessionId);
  if (req.resume && session !== null && advertised(req, '--resume')) args.push('--resume', session);
  // Headless gemini refuses to act in a folder it has not been told to trust (and silently drops
  // the approval mode): the run's repository is trusted by the person who started the run.
  return { argv: withBase(req, 'gemini', args), stdin: req.prompt, env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' } };
}

function parseOutput(out: ProviderOutput): ParsedOutput {
  const found = findJsonObject(out.text);
  if (!found) {
    const transcript = cleanText(out.text).trim();
    // No JSON: the CLI died before writing its answer; its last error line says why.
    const failure = apiFailure(
      null,
      transcript
        .split('\n')
        .filter((l) => /error/i.test(l))
        .at(-1) ?? '',
    );
    return {
      usage: null,
      isError: true,
      apiFailure: failure,
      sessionId: null,
      resultText: null,
      transcript: [transcript || '[gemini: no JSON output]', failure ? apiFailureLine(failure) : null].filter((l) => l !== null).join('\n'),
    };
  }
  const text = cleanText(out.text);
  const before = text.slice(0, found.start).trim();
  const after = text.slice(found.end).trim();
  const v = found.value;
  const sessionId = str(v.session_id) ?? str(v.sessionId);
  const response = str(v.response);
  const error = rec(v.error);
  const stats = rec(v.stats);

  const totals = new UsageTotals();
  let mainModel: string | null = null;
  let mainTokens = -1;
  for (const [name, m] of Object.entries(rec(stats?.models) ?? {})) {
    const tokens = rec(rec(m)?.tokens);
    if (!tokens) continue;
    const cached = count(tokens.cached);
    // `prompt` counts cached tokens too; newer versions also report `input` (= prompt - cached).
    const prompt = tokens.prompt !== undefined ? count(tokens.prompt) : count(tokens.input) + cached;
    totals.add({
      inputTokens: Math.max(prompt - cached, 0),
      cacheReadTokens: Math.min(cached, prompt),
      outputTokens: count(tokens.candidates) + count(tokens.thoughts),
    });
    if (prompt > mainTokens) {
      mainTokens = prompt;
      mainModel = name;
    }
  }
  totals.setModel(mainModel);
  const usage = totals.result(out.requestedModel);

  const transcript: (string | null)[] = [];
  if (before) transcript.push(before);
  transcript.push(`[gemini session ${sessionId ?? '?'}${mainModel ? ` · model ${mainModel}` : ''}]`);
  for (const [name, t] of Object.entries(rec(rec(stats?.tools)?.byName) ?? {})) {
    const calls = count(rec(t)?.count);
    const failed = count(rec(t)?.fail);
    transcript.push(`${toolLine(name, null)} ×${calls}${failed ? ` (${failed} failed)` : ''}`);
  }
  if (response) transcript.push(response);
  if (error)
    transcript.push(
      `error: ${str(error.message) ?? str(error.type) ?? 'unknown'}${error.code !== undefined ? ` (code ${String(error.code)})` : ''}`,
    );
  transcript.push(usageLine(usage));
  if (after) transcript.push(after);
  const isError = out.exitCode !== 0 || error !== null;
  const code = typeof error?.code === 'number' ? error.code : null;
  const message = [str(error?.message), str(error?.type), str(error?.status)].filter((w) => w).join(' ');
  // "Suggested retry after 3s." (gemini's reading of the 429's RetryInfo)
  const wait = /\bretry (?:after|in) (\d+(?:\.\d+)?)\s*s\b/i.exec(message)?.[1];
  const failure =
    isError && error
      ? apiFailure(code !== null && code >= 400 && code <= 599 ? code : null, message, wait === undefined ? null : Math.ceil(Number(wait)))
      : null;
  if (failure) transcript.push(apiFailureLine(failure));

  return {
    usage,
    isError,
    apiFailure: failure,
    sessionId,
    resultText: response !== null && response.trim() !== '' ? response : null,
    transcript: joinTranscript(transcript),
  };
}

export const geminiPreset: ProviderPreset = {
  name: 'gemini',
  binary: 'gemini',
  credentialEnv: ['GEMINI_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_GENAI_USE_GCA'],
  installHint: 'npm install -g @google/gemini-cli',
  helpArgs: ['--help'],
  optionalFlags: ['--approval-mode', '--resume'],
  defaultModels: DEFAULT_MODELS,
  defaultEfforts: null,
  buildInvocation,
  parseOutput,
};
