/**
 * The provider presets against what the real CLIs printed (tests/fixtures/providers/<cli>/real-*,
 * captured from Claude Code 2.1.332, Codex 0.171.0, aider 0.86.2, Gemini CLI 0.61.0 and OpenCode
 * 1.18.33 talking to the local model
 * server of tests/support/model-server): a success, and each API fault the server plays — 429,
 * 401, overloaded (529/503), 500 — read as the right failure, never as a successful call, with a
 * closing line the provider-health reading counts against the provider. Also the preset defects
 * the real CLIs showed: checklist extraction with write permissions, aider's files in the
 * repository, claude's unbounded retries and its side requests missing from the token count.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { aiderFailure } from '../../lib/providers/aider.js';
import { CLAUDE_MAX_RETRIES } from '../../lib/providers/claude.js';
import { codexFailure } from '../../lib/providers/codex.js';
import { apiFailureKind, apiFailureLine } from '../../lib/providers/common.js';
import { PROVIDERS, type InvocationRequest, type InvocationRole, type ParsedOutput, type ProviderName } from '../../lib/providers/index.js';
import { detectAuthError } from '../../rules/auth-error.js';
import { providerOutcome } from '../../rules/provider-outcome.js';
import { isRateLimited } from '../../rules/rate-limit.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/providers');
const fixture = (cli: string, name: string): string => readFileSync(path.join(FIXTURES, cli, name), 'utf8');
const PROMPT_PATH = '/home/u/repo/.vigil/runs/r1/council-round-0001-m0.prompt.md';

function req(overrides: Partial<InvocationRequest> = {}): InvocationRequest {
  return {
    prompt: 'PROMPT',
    promptPath: PROMPT_PATH,
    role: 'iteration',
    tier: 'development',
    model: null,
    advertisedFlags: null,
    remainingBudgetUsd: null,
    sessionId: null,
    resume: false,
    appendSystemPrompt: null,
    fallbackModel: null,
    ...overrides,
  };
}
const all = (name: ProviderName): Set<string> => new Set(PROVIDERS[name].optionalFlags);

/** What the breaker hears of a call, read as the workflow reads it (the transcript's tail). */
function breakerSees(provider: ProviderName, raw: string, out: ParsedOutput, exitCode: number): 'success' | 'failure' {
  const failed = exitCode !== 0 || out.isError;
  return providerOutcome({
    exitCode: failed ? Math.max(exitCode, 1) : 0,
    timedOut: false,
    rateLimited: failed && isRateLimited(raw, provider),
    authError: failed && detectAuthError(raw, provider) !== null,
    tail: out.transcript.split('\n').slice(-40).join('\n'),
  }).outcome;
}

const FAULTS = [
  { name: 'rate-limit', kind: 'rate-limit' },
  { name: 'auth', kind: 'auth' },
  { name: 'overloaded', kind: 'overloaded' },
  { name: 'server-error', kind: 'server-error' },
] as const;

describe('claude 2.1.332, real output', () => {
  const parse = (text: string, exitCode: number): ParsedOutput =>
    PROVIDERS.claude.parseOutput({ text, exitCode, requestedModel: 'sonnet' });

  it('reads a builder run: the model the CLI ran, tokens and cost, session, the answer', () => {
    const out = parse(fixture('claude', 'real-2.1.332-success.jsonl'), 0);
    expect(out.isError).toBe(false);
    expect(out.apiFailure).toBeNull();
    expect(out.sessionId).toBe('c3634531-fafc-4747-be19-2a9c47f1bcc3');
    expect(out.usage).toEqual({
      costUsd: 0.050058000000000005,
      inputTokens: 24804,
      outputTokens: 45,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      model: 'claude-sonnet-5-5',
    });
    expect(out.resultText).toBe('I created real-cli-proof.txt. COMPLETION PROMISE FULFILLED');
    expect(out.transcript).toContain('> tool Write: real-cli-proof.txt');
  });

  it("counts the CLI's side requests: modelUsage over every model, the main model named", () => {
    const lines = fixture('claude', 'real-2.1.332-success.jsonl').trimEnd().split('\n');
    const result = JSON.parse(lines.at(-1) as string) as Record<string, unknown>;
    const main = (result.modelUsage as Record<string, unknown>)['claude-sonnet-5-5'];
    result.modelUsage = {
      'claude-haiku-4-5': { inputTokens: 600, outputTokens: 20, cacheReadInputTokens: 7, cacheCreationInputTokens: 3, costUSD: 0.001 },
      'claude-sonnet-5-5': main,
    };
    const out = parse([...lines.slice(0, -1), JSON.stringify(result)].join('\n'), 0);
    expect(out.usage).toMatchObject({
      inputTokens: 24804 + 600,
      outputTokens: 45 + 20,
      cacheReadTokens: 7,
      cacheWriteTokens: 3,
      model: 'claude-sonnet-5-5',
      costUsd: 0.050058000000000005,
    });
  });

  for (const f of FAULTS) {
    it(`reads the ${f.name} answer as a failed call with a ${f.kind} API failure`, () => {
      const raw = fixture('claude', `real-2.1.332-${f.name}.jsonl`);
      const out = parse(raw, 1);
      expect(out.isError).toBe(true);
      expect(out.apiFailure?.kind).toBe(f.kind);
      expect(out.transcript.trimEnd().split('\n').at(-1)).toBe(apiFailureLine(out.apiFailure as NonNullable<ParsedOutput['apiFailure']>));
      expect(out.transcript).toMatch(/\[api retry 1\/1 in \d+\.\ds: \d{3} \w+\]/);
      expect(breakerSees('claude', raw, out, 1)).toBe('failure');
    });
  }

  it('takes the status from api_error_status and the wait of a 429 from the retry record', () => {
    expect(parse(fixture('claude', 'real-2.1.332-rate-limit.jsonl'), 1).apiFailure).toMatchObject({
      kind: 'rate-limit',
      status: 429,
      retryAfterSeconds: 9,
    });
    expect(parse(fixture('claude', 'real-2.1.332-overloaded.jsonl'), 1).apiFailure).toMatchObject({
      kind: 'overloaded',
      status: 529,
      retryAfterSeconds: null,
    });
    expect(parse(fixture('claude', 'real-2.1.332-server-error.jsonl'), 1).apiFailure).toMatchObject({ status: 500 });
    const auth = fixture('claude', 'real-2.1.332-auth.jsonl');
    expect(parse(auth, 1).apiFailure).toMatchObject({ kind: 'auth', status: 401 });
    expect(detectAuthError(auth, 'claude')).not.toBeNull();
    expect(isRateLimited(fixture('claude', 'real-2.1.332-rate-limit.jsonl'), 'claude')).toBe(true);
  });

  it('reads a call killed while the CLI was retrying (no result record) as the failure it was retrying', () => {
    const raw = fixture('claude', 'real-2.1.332-overloaded.jsonl')
      .split('\n')
      .filter((l) => !l.includes('"type":"result"') && !l.includes('"type":"assistant"'))
      .join('\n');
    const out = parse(raw, 143);
    expect(out.isError).toBe(true);
    expect(out.apiFailure).toMatchObject({ kind: 'overloaded', status: 529 });
  });

  it("bounds the CLI's own retries of a failed request for every role", () => {
    for (const role of ['iteration', 'council', 'checklist'] as InvocationRole[]) {
      expect(PROVIDERS.claude.buildInvocation(req({ role })).env).toEqual({ CLAUDE_CODE_MAX_RETRIES: String(CLAUDE_MAX_RETRIES) });
    }
    expect(CLAUDE_MAX_RETRIES).toBeLessThanOrEqual(3);
  });
});

/** codex words a 500 as "We're currently experiencing high demand": an overload, as far as it says. */
const CODEX_KINDS: Readonly<Record<string, string>> = {
  'rate-limit': 'rate-limit',
  auth: 'auth',
  overloaded: 'overloaded',
  'server-error': 'overloaded',
};

describe('codex 0.171.0, real output', () => {
  const parse = (text: string, exitCode: number): ParsedOutput =>
    PROVIDERS.codex.parseOutput({ text, exitCode, requestedModel: 'gpt-5.3-codex' });

  it('reads a builder run: thread, tokens, the answer, the command it ran', () => {
    const out = parse(fixture('codex', 'real-0.171.0-success.jsonl'), 0);
    expect(out.isError).toBe(false);
    expect(out.apiFailure).toBeNull();
    expect(out.sessionId).toBe('01a2192e-667d-7992-8064-3c4bc3b5dfe6');
    expect(out.usage).toMatchObject({ inputTokens: 20677, outputTokens: 45, model: 'gpt-5.3-codex' });
    expect(out.resultText).toBe('I created real-cli-proof.txt. COMPLETION PROMISE FULFILLED');
  });

  for (const f of FAULTS) {
    it(`reads a ${f.name} answer as a failed call with a ${CODEX_KINDS[f.name]} API failure the breaker counts`, () => {
      const raw = fixture('codex', `real-0.171.0-${f.name}.jsonl`);
      const out = parse(raw, 1);
      expect(out.isError).toBe(true);
      expect(out.apiFailure?.kind).toBe(CODEX_KINDS[f.name]);
      expect(out.apiFailure?.message).not.toMatch(/^Reconnecting/);
      expect(breakerSees('codex', raw, out, 1)).toBe('failure');
    });
  }

  it("reads the status codex names: 'last status: 429', 'unexpected status 401'", () => {
    expect(codexFailure('exceeded retry limit, last status: 429 Too Many Requests')).toMatchObject({ kind: 'rate-limit', status: 429 });
    expect(codexFailure('unexpected status 401 Unauthorized: Incorrect API key provided')).toMatchObject({ kind: 'auth', status: 401 });
    expect(codexFailure('Selected model is at capacity. Please try a different model.')).toMatchObject({
      kind: 'overloaded',
      status: null,
    });
    expect(codexFailure('We’re currently experiencing high demand, which may cause temporary errors.')).toMatchObject({
      kind: 'overloaded',
    });
    expect(codexFailure('Rate limit reached for requests. Please try again in 20s.')).toMatchObject({
      kind: 'rate-limit',
      retryAfterSeconds: 20,
    });
    expect(codexFailure('the sandbox denied the command')).toBeNull();
  });
});

describe('aider 0.86.2, real output', () => {
  const parse = (text: string, exitCode: number): ParsedOutput => PROVIDERS.aider.parseOutput({ text, exitCode, requestedModel: 'sonnet' });

  it('reads a builder run: usage, the model aider names, no failure', () => {
    const out = parse(fixture('aider', 'real-0.86.2-success.txt'), 0);
    expect(out.isError).toBe(false);
    expect(out.apiFailure).toBeNull();
    expect(out.usage).toMatchObject({ inputTokens: 2700, outputTokens: 54, costUsd: 0.009, model: 'claude-sonnet-4-5' });
  });

  it('reads "servers are down or overloaded" after exit 0 as a failed call the breaker counts', () => {
    const raw = fixture('aider', 'real-0.86.2-overloaded.txt');
    const out = parse(raw, 0);
    expect(out.isError).toBe(true);
    expect(out.apiFailure).toMatchObject({ kind: 'overloaded' });
    expect(breakerSees('aider', raw, out, 0)).toBe('failure');
  });

  it("classifies each litellm exception aider prints, from its name and the provider's body", () => {
    const body = (type: string, message: string): string => `b'{"type":"error","error":{"type":"${type}","message":"${message}"}}'`;
    expect(
      aiderFailure(
        `litellm.AuthenticationError: AnthropicException - \n${body('authentication_error', 'invalid \nx-api-key')}\nThe API ` +
          `provider is not able to authenticate you. Check your API key.`,
      ),
    ).toMatchObject({ kind: 'auth', status: 401 });
    expect(aiderFailure(`litellm.RateLimitError: AnthropicException - \n${body('rate_limit_error', 'slow down')}`)).toMatchObject({
      kind: 'rate-limit',
      status: 429,
    });
    expect(aiderFailure(`litellm.InternalServerError: AnthropicException - \n${body('api_error', 'Internal server error')}`)).toMatchObject(
      { kind: 'server-error' },
    );
    expect(aiderFailure(`litellm.InternalServerError: AnthropicError - \n${body('overloaded_error', 'Overloaded')}`)).toMatchObject({
      kind: 'overloaded',
    });
    expect(aiderFailure('litellm.ServiceUnavailableError: OpenAIException - The server is overloaded')).toMatchObject({
      kind: 'overloaded',
      status: 503,
    });
    expect(aiderFailure('Applied edit to a.txt')).toBeNull();
    // Every such failure is a failed call, exit 0 or not.
    for (const text of [
      'litellm.InternalServerError: AnthropicException - Internal server error',
      'litellm.Timeout: Connection timed out after 600 seconds',
    ]) {
      expect(parse(`Aider v0.86.2\nMain model: sonnet\n${text}\n`, 0).isError).toBe(true);
    }
  });

  it("keeps aider's histories beside the prompt and the .gitignore untouched, for every role", () => {
    for (const role of ['iteration', 'council', 'checklist'] as InvocationRole[]) {
      const argv = PROVIDERS.aider.buildInvocation(req({ role, advertisedFlags: all('aider') })).argv;
      expect(argv).toContain('--no-gitignore');
      expect(argv[argv.indexOf('--chat-history-file') + 1]).toBe('/home/u/repo/.vigil/runs/r1/council-round-0001-m0.aider.chat.history.md');
      expect(argv[argv.indexOf('--input-history-file') + 1]).toBe('/home/u/repo/.vigil/runs/r1/council-round-0001-m0.aider.input.history');
    }
  });

  it('runs reviewing roles without a repository map, so no tags cache is written into the tree they judge', () => {
    const reviewing = PROVIDERS.aider.buildInvocation(req({ role: 'reviewer', advertisedFlags: all('aider') })).argv;
    expect(reviewing.slice(reviewing.indexOf('--map-tokens'), reviewing.indexOf('--map-tokens') + 2)).toEqual(['--map-tokens', '0']);
    expect(PROVIDERS.aider.buildInvocation(req({ role: 'iteration', advertisedFlags: all('aider') })).argv).not.toContain('--map-tokens');
  });
});

describe('gemini 0.61.0, real output', () => {
  const parse = (text: string, exitCode: number): ParsedOutput =>
    PROVIDERS.gemini.parseOutput({ text, exitCode, requestedModel: 'gemini-2.5-pro' });

  it('reads a builder run among the banner lines: session, tokens, the tool it used, the answer', () => {
    const out = parse(fixture('gemini', 'real-0.61.0-success.txt'), 0);
    expect(out.isError).toBe(false);
    expect(out.apiFailure).toBeNull();
    expect(out.sessionId).toBe('5f8585b7-c8e1-4273-afaa-cafbf5c9e13b');
    expect(out.usage).toMatchObject({ inputTokens: 24549, outputTokens: 45, model: 'gemini-2.5-pro' });
    expect(out.transcript).toContain('> tool write_file ×1');
  });

  const GEMINI = [
    ['auth', 'auth', 400, null],
    ['rate-limit', 'rate-limit', 429, 3],
    ['overloaded', 'overloaded', 503, null],
    ['server-error', 'server-error', 500, null],
  ] as const;
  for (const [name, kind, status, wait] of GEMINI) {
    it(`reads the ${name} answer (after the CLI's own retries) as a ${kind} API failure with status ${status}`, () => {
      const raw = fixture('gemini', `real-0.61.0-${name}.txt`);
      const out = parse(raw, 1);
      expect(out.isError).toBe(true);
      expect(out.apiFailure).toMatchObject({ kind, status, retryAfterSeconds: wait });
      expect(breakerSees('gemini', raw, out, 1)).toBe('failure');
    });
  }
});

describe('opencode 1.18.33, real output', () => {
  const parse = (text: string, exitCode: number): ParsedOutput =>
    PROVIDERS.opencode.parseOutput({ text, exitCode, requestedModel: 'anthropic/claude-sonnet-4-5' });

  it("reads a builder run: session, the steps' tokens and cost, the final text", () => {
    const out = parse(fixture('opencode', 'real-1.18.33-success.jsonl'), 0);
    expect(out.isError).toBe(false);
    expect(out.apiFailure).toBeNull();
    expect(out.sessionId).toBe('ses_de6bc23dfffeyQaDFwc55c8aEn');
    expect(out.usage).toMatchObject({ inputTokens: 7639 + 7744, outputTokens: 32 + 15, costUsd: 0.023397 + 0.023457 });
    expect(out.resultText).toBe('I created real-cli-proof.txt. COMPLETION PROMISE FULFILLED');
  });

  const OPENCODE = [
    ['auth', 'auth', 401, null],
    ['rate-limit', 'rate-limit', 429, 3],
    ['overloaded', 'overloaded', 529, null],
    ['server-error', 'server-error', 500, null],
  ] as const;
  for (const [name, kind, status, wait] of OPENCODE) {
    it(`reads the ${name} error event as a ${kind} API failure: status ${status}, the provider's retry-after`, () => {
      const raw = fixture('opencode', `real-1.18.33-${name}.jsonl`);
      const out = parse(raw, 1);
      expect(out.isError).toBe(true);
      expect(out.apiFailure).toMatchObject({ kind, status, retryAfterSeconds: wait });
      expect(breakerSees('opencode', raw, out, 1)).toBe('failure');
    });
  }
});

describe('opencode works in the repository it is started in', () => {
  it('does not take its project from the PWD the worker passes down', () => {
    for (const role of ['iteration', 'council'] as InvocationRole[])
      expect(PROVIDERS.opencode.buildInvocation(req({ role })).env.PWD).toBe('.');
  });
});

describe('checklist extraction is a reading role', () => {
  it('runs without write permissions in every preset', () => {
    const checklist = (name: ProviderName): string[] =>
      PROVIDERS[name].buildInvocation(req({ role: 'checklist', advertisedFlags: all(name) })).argv;
    expect(checklist('claude')).not.toContain('--dangerously-skip-permissions');
    expect(checklist('claude')).toContain('--disallowedTools');
    const codex = checklist('codex');
    expect(codex[codex.indexOf('--sandbox') + 1]).toBe('read-only');
    expect(checklist('aider')).toEqual(expect.arrayContaining(['--dry-run', '--chat-mode', 'ask']));
    expect(checklist('gemini')).not.toContain('yolo');
    expect(checklist('opencode')).toEqual(expect.arrayContaining(['--agent', 'plan']));
    expect(
      PROVIDERS.opencode.buildInvocation(req({ role: 'checklist', advertisedFlags: all('opencode') })).env.OPENCODE_PERMISSION,
    ).toContain('"edit":"deny"');
  });
});

describe('apiFailureKind', () => {
  it('lets a status decide, and reads the words without one', () => {
    expect(apiFailureKind(429, 'whatever')).toBe('rate-limit');
    expect(apiFailureKind(403, '')).toBe('auth');
    expect(apiFailureKind(529, '')).toBe('overloaded');
    expect(apiFailureKind(503, '')).toBe('overloaded');
    expect(apiFailureKind(502, 'bad gateway')).toBe('server-error');
    expect(apiFailureKind(null, 'RESOURCE_EXHAUSTED: quota')).toBe('rate-limit');
    expect(apiFailureKind(null, 'API key not valid. Please pass a valid API key.')).toBe('auth');
    expect(apiFailureKind(null, 'UNAVAILABLE: The model is overloaded.')).toBe('overloaded');
    expect(apiFailureKind(null, '500 INTERNAL: An internal error has occurred.')).toBe('server-error');
    expect(apiFailureKind(null, 'the tests are unavailable for internal modules')).toBeNull();
    expect(apiFailureKind(400, 'prompt is too long')).toBeNull();
  });

  it('writes the failure in the form the provider-health reading counts', () => {
    for (const f of [
      { kind: 'overloaded', status: 503, message: 'at capacity', retryAfterSeconds: null },
      { kind: 'server-error', status: null, message: 'high demand', retryAfterSeconds: null },
    ] as const) {
      expect(
        providerOutcome({ exitCode: 1, timedOut: false, rateLimited: false, authError: false, tail: `some output\n${apiFailureLine(f)}` })
          .outcome,
      ).toBe('failure');
    }
    expect(apiFailureLine({ kind: 'rate-limit', status: 429, message: 'slow down', retryAfterSeconds: 9 })).toBe(
      'API Error: 429 rate limit exceeded (retry-after: 9): slow down',
    );
  });
});

describe('a hung stream: the real outputs up to the first word of the model', () => {
  // What each CLI had printed when the model's stream stopped before its first event (the CLI's
  // own start-up records), and the whole output of a call that went on: a call killed at its
  // timeout with the former is the provider's failure (a hung stream), with the latter the agent's.
  const cases: { cli: ProviderName; file: string; startupLines: number }[] = [
    { cli: 'claude', file: 'real-2.1.332-success.jsonl', startupLines: 1 },
    // The warning, thread.started, codex's own error item (model metadata) and turn.started.
    { cli: 'codex', file: 'real-0.171.0-success.jsonl', startupLines: 4 },
    // step_start (opencode's own, as the response begins); with no event at all opencode's output reads as plain text, which cannot tell.
    { cli: 'opencode', file: 'real-1.18.33-success.jsonl', startupLines: 1 },
  ];
  for (const { cli, file, startupLines } of cases) {
    it(`${cli}: start-up records are no answer from the model; a message or tool call is`, () => {
      const lines = fixture(cli, file).split('\n');
      const hung = PROVIDERS[cli].parseOutput({ text: lines.slice(0, startupLines).join('\n'), exitCode: 124, requestedModel: null });
      expect(hung.modelOutput).toBe(false);
      expect(
        providerOutcome({
          exitCode: 124,
          timedOut: true,
          rateLimited: false,
          authError: false,
          tail: hung.transcript,
          modelOutput: hung.modelOutput,
        }).outcome,
      ).toBe('failure');
      const answered = PROVIDERS[cli].parseOutput({
        text: lines.slice(0, startupLines + 2).join('\n'),
        exitCode: 124,
        requestedModel: null,
      });
      expect(answered.modelOutput).toBe(true);
      expect(
        providerOutcome({
          exitCode: 124,
          timedOut: true,
          rateLimited: false,
          authError: false,
          tail: answered.transcript,
          modelOutput: answered.modelOutput,
        }).outcome,
      ).toBe('success');
    });
  }
  it('gemini and aider print their answer at the end (or as plain text): they cannot tell, so a timeout is never blamed on the provider', () => {
    expect(PROVIDERS.gemini.parseOutput({ text: '', exitCode: 124, requestedModel: null }).modelOutput).toBeUndefined();
    expect(PROVIDERS.aider.parseOutput({ text: '', exitCode: 124, requestedModel: null }).modelOutput).toBeUndefined();
  });
});
