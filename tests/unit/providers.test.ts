/**
 * Tests of the provider presets (activities/providers): the exact argv each preset builds per role,
 * tier and advertised flags; model choice; the parsers against the documented-format fixtures in
 * tests/fixtures/providers and against garbage (they must never throw); the --help flag reader;
 * and each fake CLI (examples/agents/fake-cli) run end to end through its preset.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAUDE_READ_ONLY_TOOLS, CLAUDE_WRITE_TOOLS } from '../../lib/providers/claude.js';
import { promptFileInstruction } from '../../lib/providers/common.js';
import { advertisedFlags } from '../../lib/providers/help.js';
import {
  PROVIDER_NAMES,
  PROVIDERS,
  isProviderName,
  type InvocationRequest,
  type InvocationRole,
  type ParsedOutput,
  type ProviderName,
  type ProviderPreset,
} from '../../lib/providers/index.js';
import type { Usage } from '../../rules/budget.js';
import { isRateLimited } from '../../rules/rate-limit.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURES = path.join(ROOT, 'tests/fixtures/providers');
const FAKE_CLI = path.join(ROOT, 'examples/agents/fake-cli');
const PROMPT_PATH = '/runs/r1/iteration-001.prompt.md';
const SESSION = '6f0c8f5e-1d7a-4c9b-9a57-2f1f3c2b8e11';

// Checklist extraction only reads the PRD: a reading role (tests/unit/provider-real-outputs.test.ts).
const READ_ONLY_ROLES: InvocationRole[] = ['council', 'devils-advocate', 'reviewer', 'checklist', 'checklist-verifier'];
const BUILDER_ROLES: InvocationRole[] = ['iteration'];

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

/** Every optional flag of the preset, optionally minus some. */
function all(p: ProviderPreset, ...except: string[]): Set<string> {
  return new Set(p.optionalFlags.filter((f) => !except.includes(f)));
}

const argv = (name: ProviderName, overrides: Partial<InvocationRequest> = {}): string[] =>
  PROVIDERS[name].buildInvocation(req(overrides)).argv;

function fixture(provider: string, file: string): string {
  return readFileSync(path.join(FIXTURES, provider, file), 'utf8');
}

function parse(name: ProviderName, text: string, exitCode = 0, requestedModel: string | null = null): ParsedOutput {
  return PROVIDERS[name].parseOutput({ text, exitCode, requestedModel });
}

describe('registry', () => {
  it('has one preset per provider name, each named after its key', () => {
    expect([...PROVIDER_NAMES].sort()).toEqual(['aider', 'claude', 'cline', 'codex', 'command', 'gemini', 'opencode']);
    for (const name of PROVIDER_NAMES) expect(PROVIDERS[name].name).toBe(name);
    expect(isProviderName('claude')).toBe(true);
    expect(isProviderName('clines')).toBe(false);
  });

  it('describes each CLI: binary, credentials, install hint, a model per tier', () => {
    expect(PROVIDERS.claude.credentialEnv).toEqual(['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN']);
    expect(PROVIDERS.codex.credentialEnv).toEqual(['OPENAI_API_KEY', 'CODEX_API_KEY']);
    expect(PROVIDERS.gemini.credentialEnv).toEqual(['GEMINI_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_GENAI_USE_GCA']);
    expect(PROVIDERS.claude.installHint).toBe('npm install -g @anthropic-ai/claude-code');
    expect(PROVIDERS.command.binary).toBeNull();
    for (const name of PROVIDER_NAMES.filter((n) => n !== 'command')) {
      const p = PROVIDERS[name];
      expect(p.binary).toBe(name);
      expect(p.installHint).toBeTruthy();
      expect(p.credentialEnv.length).toBeGreaterThan(0);
      // cline runs the model its `cline auth` configured unless the run names one (the original's LOKI_CLINE_MODEL).
      if (name === 'cline') continue;
      for (const tier of ['planning', 'development', 'fast'] as const) expect(p.defaultModels[tier]).not.toBe('');
    }
  });
});

describe('advertisedFlags', () => {
  const help = [
    'Usage: tool [options]',
    '',
    'Commands:',
    '  resume  Resume a previous session',
    '',
    'Options:',
    '  -r, --resume-session <id>   Resume a session (to resume a session, see above)',
    '  --allowedTools, --allowed-tools <tools...>  Tools',
    '  --effort <level>            Effort',
    '  --max-budget-usd=<amount>   Budget',
    '  --model                     Model  [string]',
  ].join('\n');

  it('finds the candidates the help lists as flags', () => {
    expect(advertisedFlags(help, ['--effort', '--allowedTools', '--allowed-tools', '--max-budget-usd', '--model'])).toEqual(
      new Set(['--effort', '--allowedTools', '--allowed-tools', '--max-budget-usd', '--model']),
    );
  });

  it('matches whole flags only: --resume is not --resume-session, -r is not part of --resume', () => {
    expect(advertisedFlags(help, ['--resume', '--fallback-model', '--effor', '-e'])).toEqual(new Set());
    expect(advertisedFlags(help, ['-r', '--resume-session'])).toEqual(new Set(['-r', '--resume-session']));
    expect(advertisedFlags('  --resume <id>  Resume', ['--resume'])).toEqual(new Set(['--resume']));
  });

  it('matches a subcommand only where commands are listed, not in prose', () => {
    expect(advertisedFlags(help, ['resume'])).toEqual(new Set(['resume']));
    expect(advertisedFlags('Options:\n  --last  to resume the newest session', ['resume'])).toEqual(new Set());
  });

  it('reads colored help and returns nothing for empty or garbage text', () => {
    expect(advertisedFlags('\u001b[1m  --effort\u001b[0m <level>', ['--effort'])).toEqual(new Set(['--effort']));
    expect(advertisedFlags('', ['--effort'])).toEqual(new Set());
    expect(advertisedFlags('\u0000\u00ff\ufffd{{{', ['--effort', 'resume', ''])).toEqual(new Set());
  });
});

describe('claude invocation', () => {
  const claude = PROVIDERS.claude;
  const base = ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--model'];

  it('builds the headless stream-json call with the prompt on stdin and no optional flag when not probed', () => {
    const inv = claude.buildInvocation(
      req({ remainingBudgetUsd: 10, sessionId: SESSION, appendSystemPrompt: 'be brief', fallbackModel: 'haiku', effort: 'low' }),
    );
    expect(inv).toEqual({
      argv: [...base, 'sonnet', '--dangerously-skip-permissions'],
      stdin: 'PROMPT',
      env: { CLAUDE_CODE_MAX_RETRIES: '2' },
    });
  });

  it('picks opus / sonnet / haiku per tier, and the override over the tier', () => {
    expect(argv('claude', { tier: 'planning' })).toEqual([...base, 'opus', '--dangerously-skip-permissions']);
    expect(argv('claude', { tier: 'development' })).toEqual([...base, 'sonnet', '--dangerously-skip-permissions']);
    expect(argv('claude', { tier: 'fast' })).toEqual([...base, 'haiku', '--dangerously-skip-permissions']);
    expect(argv('claude', { tier: 'fast', model: 'claude-opus-4-1' })).toEqual([
      ...base,
      'claude-opus-4-1',
      '--dangerously-skip-permissions',
    ]);
  });

  it('passes every advertised optional flag, in order', () => {
    expect(
      argv('claude', {
        tier: 'planning',
        advertisedFlags: all(claude),
        remainingBudgetUsd: 12.349,
        sessionId: SESSION,
        appendSystemPrompt: 'Vigil rules',
        fallbackModel: 'sonnet',
      }),
    ).toEqual([
      ...base,
      'opus',
      '--dangerously-skip-permissions',
      '--append-system-prompt',
      'Vigil rules',
      '--session-id',
      SESSION,
      '--effort',
      'xhigh',
      '--max-budget-usd',
      '12.34',
      '--fallback-model',
      'sonnet',
    ]);
  });

  it('leaves out each optional flag the CLI does not advertise', () => {
    const full = { remainingBudgetUsd: 5, sessionId: SESSION, appendSystemPrompt: 'x', fallbackModel: 'haiku' };
    for (const flag of ['--max-budget-usd', '--append-system-prompt', '--fallback-model', '--effort', '--session-id']) {
      const got = argv('claude', { ...full, advertisedFlags: all(claude, flag) });
      expect(got).not.toContain(flag);
      const others = ['--max-budget-usd', '--append-system-prompt', '--fallback-model', '--effort', '--session-id'].filter(
        (f) => f !== flag,
      );
      for (const other of others) expect(got).toContain(other);
    }
  });

  it('uses the effort per tier (xhigh / high / medium) unless overridden', () => {
    const effortOf = (o: Partial<InvocationRequest>): string | undefined => {
      const a = argv('claude', { advertisedFlags: new Set(['--effort']), ...o });
      return a[a.indexOf('--effort') + 1];
    };
    expect(effortOf({ tier: 'planning' })).toBe('xhigh');
    expect(effortOf({ tier: 'development' })).toBe('high');
    expect(effortOf({ tier: 'fast' })).toBe('medium');
    expect(effortOf({ tier: 'fast', effort: 'max' })).toBe('max');
  });

  it('passes a budget only when it is known and positive, and no fallback equal to the model', () => {
    const flags = all(claude);
    expect(argv('claude', { advertisedFlags: flags, remainingBudgetUsd: null })).not.toContain('--max-budget-usd');
    expect(argv('claude', { advertisedFlags: flags, remainingBudgetUsd: 0 })).not.toContain('--max-budget-usd');
    expect(argv('claude', { advertisedFlags: flags, remainingBudgetUsd: 0.004 })).not.toContain('--max-budget-usd');
    expect(argv('claude', { advertisedFlags: flags, remainingBudgetUsd: -3 })).not.toContain('--max-budget-usd');
    expect(argv('claude', { advertisedFlags: flags, fallbackModel: 'sonnet' })).not.toContain('--fallback-model');
    expect(argv('claude', { advertisedFlags: flags, appendSystemPrompt: '   ' })).not.toContain('--append-system-prompt');
  });

  it('resumes with --resume when advertised, else starts a fresh session', () => {
    const resumed = argv('claude', { advertisedFlags: all(claude), sessionId: SESSION, resume: true });
    expect(resumed.slice(resumed.indexOf('--resume'), resumed.indexOf('--resume') + 2)).toEqual(['--resume', SESSION]);
    expect(resumed).not.toContain('--session-id');
    const fresh = argv('claude', { advertisedFlags: all(claude, '--resume'), sessionId: SESSION, resume: true });
    expect(fresh).not.toContain('--resume');
    expect(fresh).not.toContain('--session-id');
  });

  it('runs reviewing roles read-only: tool lists when advertised, else plan mode, else nothing', () => {
    for (const role of READ_ONLY_ROLES) {
      expect(argv('claude', { role, advertisedFlags: all(claude) })).toEqual([
        ...base,
        'sonnet',
        '--allowedTools',
        ...CLAUDE_READ_ONLY_TOOLS,
        '--disallowedTools',
        ...CLAUDE_WRITE_TOOLS,
        '--effort',
        'high',
      ]);
      expect(argv('claude', { role, advertisedFlags: new Set(['--permission-mode']) })).toEqual([
        ...base,
        'sonnet',
        '--permission-mode',
        'plan',
      ]);
      expect(argv('claude', { role })).toEqual([...base, 'sonnet']);
    }
    expect(CLAUDE_READ_ONLY_TOOLS).toEqual(expect.arrayContaining(['Read', 'Grep', 'Glob', 'Bash(git diff:*)']));
    expect(CLAUDE_WRITE_TOOLS).toEqual(expect.arrayContaining(['Edit', 'Write', 'NotebookEdit']));
    for (const role of BUILDER_ROLES)
      expect(argv('claude', { role, advertisedFlags: all(claude) })).toContain('--dangerously-skip-permissions');
  });

  it('puts its arguments after a base argv override', () => {
    expect(argv('claude', { baseArgv: ['npx', 'claude'] })).toEqual([
      'npx',
      'claude',
      ...base.slice(1),
      'sonnet',
      '--dangerously-skip-permissions',
    ]);
    expect(argv('claude', { baseArgv: ['/opt/bin/claude'] })[0]).toBe('/opt/bin/claude');
    expect(argv('claude', { baseArgv: [] })[0]).toBe('claude');
  });
});

describe('codex invocation', () => {
  const codex = PROVIDERS.codex;
  const tail = ['--sandbox', 'workspace-write', '--skip-git-repo-check', '-'];

  it('builds `codex exec --json` with model, effort per tier, sandbox, and the prompt from stdin', () => {
    expect(codex.buildInvocation(req())).toEqual({
      argv: ['codex', 'exec', '--json', '--model', 'gpt-5.3-codex', '-c', 'model_reasoning_effort=high', ...tail],
      stdin: 'PROMPT',
      env: {},
    });
    expect(argv('codex', { tier: 'planning' })).toContain('model_reasoning_effort=xhigh');
    expect(argv('codex', { tier: 'fast' })).toContain('model_reasoning_effort=low');
    expect(argv('codex', { tier: 'fast', effort: 'medium' })).toContain('model_reasoning_effort=medium');
    expect(argv('codex', { model: 'gpt-5.6-terra' })).toEqual([
      'codex',
      'exec',
      '--json',
      '--model',
      'gpt-5.6-terra',
      '-c',
      'model_reasoning_effort=high',
      ...tail,
    ]);
  });

  it('runs reviewing roles in the read-only sandbox', () => {
    for (const role of READ_ONLY_ROLES) {
      const a = argv('codex', { role });
      expect(a.slice(a.indexOf('--sandbox'), a.indexOf('--sandbox') + 2)).toEqual(['--sandbox', 'read-only']);
    }
    for (const role of BUILDER_ROLES) expect(argv('codex', { role })).toContain('workspace-write');
  });

  it('resumes with `exec resume <id>` only when the CLI lists the subcommand', () => {
    expect(argv('codex', { advertisedFlags: all(codex), sessionId: 'th-1', resume: true }).slice(-3)).toEqual(['resume', 'th-1', '-']);
    expect(argv('codex', { advertisedFlags: null, sessionId: 'th-1', resume: true })).not.toContain('resume');
    expect(argv('codex', { advertisedFlags: new Set(), sessionId: 'th-1', resume: true })).not.toContain('resume');
    expect(argv('codex', { advertisedFlags: all(codex), sessionId: 'th-1', resume: false })).not.toContain('resume');
  });

  it('puts its arguments after a base argv override', () => {
    expect(argv('codex', { baseArgv: ['npx', '@openai/codex'] }).slice(0, 4)).toEqual(['npx', '@openai/codex', 'exec', '--json']);
  });
});

describe('gemini invocation', () => {
  const gemini = PROVIDERS.gemini;
  const head = ['gemini', '-p', promptFileInstruction(PROMPT_PATH), '--output-format', 'json', '--model'];

  it('builds the headless JSON call: prompt on stdin, -p pointing at the prompt file, yolo for builders', () => {
    expect(gemini.buildInvocation(req())).toEqual({
      argv: [...head, 'gemini-2.5-pro', '--yolo'],
      stdin: 'PROMPT',
      env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    });
    expect(promptFileInstruction(PROMPT_PATH)).toContain(PROMPT_PATH);
    expect(argv('gemini', { advertisedFlags: all(gemini) })).toEqual([...head, 'gemini-2.5-pro', '--approval-mode', 'yolo']);
    expect(argv('gemini', { tier: 'fast' })).toEqual([...head, 'gemini-2.5-flash', '--yolo']);
    expect(argv('gemini', { tier: 'planning', model: 'gemini-3-pro-preview' })).toEqual([...head, 'gemini-3-pro-preview', '--yolo']);
  });

  it('runs reviewing roles without yolo, in the default approval mode when advertised', () => {
    for (const role of READ_ONLY_ROLES) {
      expect(argv('gemini', { role, advertisedFlags: all(gemini) })).toEqual([...head, 'gemini-2.5-pro', '--approval-mode', 'default']);
      expect(argv('gemini', { role })).toEqual([...head, 'gemini-2.5-pro']);
    }
  });

  it('resumes with --resume only when advertised', () => {
    expect(argv('gemini', { advertisedFlags: all(gemini), sessionId: 's1', resume: true }).slice(-2)).toEqual(['--resume', 's1']);
    expect(argv('gemini', { advertisedFlags: all(gemini, '--resume'), sessionId: 's1', resume: true })).not.toContain('--resume');
  });
});

describe('aider invocation', () => {
  const aider = PROVIDERS.aider;
  const head = ['aider', '--message-file', PROMPT_PATH, '--yes-always', '--no-auto-commits', '--model'];

  it('builds the one-shot call from the prompt file, no stdin, no auto commits', () => {
    expect(aider.buildInvocation(req())).toEqual({ argv: [...head, 'sonnet'], stdin: null, env: {} });
    expect(argv('aider', { tier: 'planning' })).toEqual([...head, 'opus']);
    expect(argv('aider', { tier: 'fast', model: 'openrouter/deepseek/deepseek-v3.2' })).toEqual([
      ...head,
      'openrouter/deepseek/deepseek-v3.2',
    ]);
    const keepOut = [
      '--no-gitignore',
      '--chat-history-file',
      '/runs/r1/iteration-001.aider.chat.history.md',
      '--input-history-file',
      '/runs/r1/iteration-001.aider.input.history',
    ];
    expect(argv('aider', { advertisedFlags: all(aider) })).toEqual([
      ...head,
      'sonnet',
      '--no-pretty',
      '--no-check-update',
      '--no-show-release-notes',
      '--no-analytics',
      ...keepOut,
    ]);
    expect(
      argv('aider', {
        advertisedFlags: all(aider, '--no-analytics', '--no-pretty', '--no-gitignore', '--chat-history-file', '--input-history-file'),
      }),
    ).toEqual([...head, 'sonnet', '--no-check-update', '--no-show-release-notes']);
  });

  it('runs reviewing roles as a dry run in ask mode, when advertised', () => {
    for (const role of READ_ONLY_ROLES) {
      expect(argv('aider', { role, advertisedFlags: new Set(['--dry-run', '--chat-mode']) })).toEqual([
        ...head,
        'sonnet',
        '--dry-run',
        '--chat-mode',
        'ask',
      ]);
      expect(argv('aider', { role })).toEqual([...head, 'sonnet']);
    }
    expect(argv('aider', { role: 'iteration', advertisedFlags: all(aider) })).not.toContain('--dry-run');
  });
});

describe('opencode invocation', () => {
  const opencode = PROVIDERS.opencode;
  const instruction = promptFileInstruction(PROMPT_PATH);

  it('builds `opencode run` with the prompt on stdin and the permissions in the environment', () => {
    const inv = opencode.buildInvocation(req());
    expect(inv.argv).toEqual(['opencode', 'run', '--model', 'anthropic/claude-sonnet-4-5', instruction]);
    expect(inv.stdin).toBe('PROMPT');
    expect(JSON.parse(inv.env.OPENCODE_PERMISSION ?? '{}')).toMatchObject({ edit: 'allow', bash: 'allow' });
    expect(argv('opencode', { advertisedFlags: all(opencode) })).toEqual([
      'opencode',
      'run',
      '--model',
      'anthropic/claude-sonnet-4-5',
      '--format',
      'json',
      '--auto',
      instruction,
    ]);
    expect(argv('opencode', { tier: 'planning' })[3]).toBe('anthropic/claude-opus-4-1');
    expect(argv('opencode', { tier: 'fast', model: 'openai/gpt-5' })[3]).toBe('openai/gpt-5');
  });

  it('runs reviewing roles with the plan agent and edits denied', () => {
    for (const role of READ_ONLY_ROLES) {
      const inv = opencode.buildInvocation(req({ role, advertisedFlags: all(opencode) }));
      expect(inv.argv).toEqual([
        'opencode',
        'run',
        '--model',
        'anthropic/claude-sonnet-4-5',
        '--format',
        'json',
        '--agent',
        'plan',
        instruction,
      ]);
      const perm = JSON.parse(inv.env.OPENCODE_PERMISSION ?? '{}') as { edit: string; bash: Record<string, string> };
      expect(perm.edit).toBe('deny');
      expect(perm.bash['*']).toBe('deny');
      expect(perm.bash['git diff*']).toBe('allow');
    }
  });

  it('resumes with --session and passes an effort as --variant, each only when advertised', () => {
    expect(argv('opencode', { advertisedFlags: all(opencode), sessionId: 'ses_1', resume: true, effort: 'high' }).slice(-5)).toEqual([
      '--session',
      'ses_1',
      '--variant',
      'high',
      instruction,
    ]);
    expect(argv('opencode', { sessionId: 'ses_1', resume: true, effort: 'high' })).toEqual([
      'opencode',
      'run',
      '--model',
      'anthropic/claude-sonnet-4-5',
      instruction,
    ]);
  });
});

describe('command invocation', () => {
  it('runs the user argv as is with the prompt on stdin', () => {
    const inv = PROVIDERS.command.buildInvocation(
      req({ baseArgv: ['./agent.sh', '--fast'], model: 'ignored', advertisedFlags: new Set(['--effort']) }),
    );
    expect(inv).toEqual({ argv: ['./agent.sh', '--fast'], stdin: 'PROMPT', env: {} });
  });

  it('refuses to build without an agent command', () => {
    expect(() => PROVIDERS.command.buildInvocation(req())).toThrow(/agent command/);
  });
});

describe('claude output', () => {
  it('reads a successful stream-json run: usage, cost, session, result and tool calls', () => {
    const out = parse('claude', fixture('claude', 'success.jsonl'));
    expect(out.usage).toEqual({
      costUsd: 0.0734,
      inputTokens: 18,
      outputTokens: 169,
      cacheReadTokens: 43540,
      cacheWriteTokens: 5620,
      model: 'claude-sonnet-4-5-20250929',
    });
    expect(out.isError).toBe(false);
    expect(out.sessionId).toBe(SESSION);
    expect(out.resultText).toBe('Fixed the off-by-one in add(); all tests pass now.\nCOMPLETION PROMISE FULFILLED');
    expect(out.transcript).toContain('> tool Bash: npm test');
    expect(out.transcript).toContain('> tool Edit: /work/repo/src/add.js');
    expect(out.transcript).toContain('  < error: FAIL tests/add.test.js (3 lines)');
    expect(out.transcript).toContain("I'll run the tests first");
    expect(out.transcript).toContain('[result: success · 5 turns]');
    expect(parse('claude', fixture('claude', 'success.jsonl'), 1).isError).toBe(true);
  });

  it("reads how full the context got: the last request's tokens, the model's window, the compactions (notify triggers)", () => {
    const line = (v: Record<string, unknown>): string => JSON.stringify(v);
    const usage = (input: number, cached: number) => ({
      input_tokens: input,
      cache_read_input_tokens: cached,
      cache_creation_input_tokens: 100,
      output_tokens: 20,
    });
    const text = [
      line({ type: 'system', subtype: 'init', session_id: SESSION, model: 'claude-sonnet-4-5' }),
      line({
        type: 'assistant',
        message: { id: 'm1', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'a' }], usage: usage(50, 150_000) },
      }),
      line({
        type: 'system',
        subtype: 'compact_boundary',
        session_id: SESSION,
        compact_metadata: { trigger: 'auto', pre_tokens: 190_000 },
      }),
      line({
        type: 'assistant',
        message: { id: 'm2', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'b' }], usage: usage(30, 181_000) },
      }),
      line({
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: 'done',
        session_id: SESSION,
        total_cost_usd: 0.5,
        modelUsage: { 'claude-sonnet-4-5': { inputTokens: 80, outputTokens: 40, cacheReadInputTokens: 331_000, contextWindow: 200_000 } },
      }),
    ].join('\n');
    const out = parse('claude', text);
    // The last request: 30 + 181,000 + 100, of a 200,000-token window; one compaction.
    expect(out.context).toEqual({ usedTokens: 181_130, windowTokens: 200_000, compactions: 1 });
    expect(out.transcript).toContain('[context compacted (auto)]');
    // A run of the CLI's that says none of it (an older CLI: no window): the tokens, no window.
    expect(parse('claude', fixture('claude', 'success.jsonl')).context).toMatchObject({ windowTokens: null, compactions: 0 });
    // The command provider does not say: no context.
    expect(parse('command', 'all done\n').context).toBeUndefined();
  });

  it('reports usage in the shape the budget reads', () => {
    const usage: Usage | null = parse('claude', fixture('claude', 'success.jsonl')).usage;
    expect(usage?.costUsd).toBe(0.0734);
  });

  it('reads an auth failure as an error whose text names it', () => {
    const out = parse('claude', fixture('claude', 'error-auth.jsonl'), 0);
    expect(out.isError).toBe(true);
    expect(out.resultText).toBe('Invalid API key · Please run /login');
    expect(out.transcript).toContain('error: Invalid API key · Please run /login');
    expect(out.usage?.costUsd).toBe(0);
  });

  it('reads an error subtype as an error, keeping its cost', () => {
    const out = parse('claude', fixture('claude', 'budget-exceeded.jsonl'), 0);
    expect(out.isError).toBe(true);
    expect(out.usage?.costUsd).toBe(0.51);
    expect(out.transcript).toContain('[result: error_max_budget_usd (error) · 2 turns]');
    expect(out.transcript).toContain('> tool Read: /work/repo/PRD.md');
  });

  it('reads a truncated run: an error, usage from the messages (each message once), no cost', () => {
    const out = parse('claude', fixture('claude', 'truncated.jsonl'), 137);
    expect(out.isError).toBe(true);
    expect(out.usage).toEqual({
      costUsd: null,
      inputTokens: 4,
      outputTokens: 9,
      cacheReadTokens: 11000,
      cacheWriteTokens: 5120,
      model: 'claude-sonnet-4-5-20250929',
    });
    expect(out.sessionId).toBe(SESSION);
    expect(out.resultText).toBe("I'll run the tests first to see what fails.");
    expect(out.transcript).toContain('> tool Bash: npm test');
    expect(out.transcript).toContain('Killed');
    expect(out.transcript).toContain('[no result record');
  });
});

describe('codex output', () => {
  it('reads a successful exec --json run', () => {
    const out = parse('codex', fixture('codex', 'success.jsonl'), 0, 'gpt-5.3-codex');
    expect(out.usage).toEqual({
      costUsd: null,
      inputTokens: 315,
      outputTokens: 122,
      cacheReadTokens: 24448,
      cacheWriteTokens: 0,
      model: 'gpt-5.3-codex',
    });
    expect(out.isError).toBe(false);
    expect(out.sessionId).toBe('0199a213-81c0-7800-8aa1-bbab2a035a53');
    expect(out.resultText).toBe('Fixed add(): the tests pass.\nVOTE: APPROVE\nREASON: every requirement is implemented');
    expect(out.transcript).toContain("> tool shell: bash -lc 'npm test'");
    expect(out.transcript).toContain('  < error: FAIL tests/add.test.js (2 lines)');
    expect(out.transcript).toContain('  < ok: Tests: 5 passed');
    expect(out.transcript).toContain('> tool edit: update /work/repo/src/add.js');
    expect(out.transcript).toContain('[reasoning] **Looking for the failing test**');
    expect(out.transcript).not.toContain('(unfinished)');
  });

  it('reads a failed turn as an error a rate-limit check recognises', () => {
    const out = parse('codex', fixture('codex', 'turn-failed.jsonl'), 0);
    expect(out.isError).toBe(true);
    expect(out.usage).toBeNull();
    expect(out.resultText).toBeNull();
    expect(out.sessionId).toBe('0199b000-0000-7000-8000-00000000beef');
    expect(isRateLimited(out.transcript)).toBe(true);
  });

  it('reads the older msg-style events', () => {
    const out = parse('codex', fixture('codex', 'legacy.jsonl'), 0, 'gpt-5.3-codex');
    expect(out.sessionId).toBe('5973b6c0-94b8-487b-a530-2aeb6098ae0e');
    expect(out.usage).toEqual({
      costUsd: null,
      inputTokens: 10000,
      outputTokens: 400,
      cacheReadTokens: 2000,
      cacheWriteTokens: 0,
      model: 'gpt-5-codex',
    });
    expect(out.isError).toBe(false);
    expect(out.resultText).toBe('Done: add() fixed.');
    expect(out.transcript).toContain('> tool shell: bash -lc npm test');
    expect(out.transcript).toContain('> tool edit: /work/repo/src/add.js');
  });

  it('shows a command that never finished', () => {
    const text =
      '{"type":"thread.started","thread_id":"t"}\n{"type":"item.started","item":{"id":"i1","type":"command_execution","command' +
      '":"sleep 100","status":"in_progress"}}\n';
    const out = parse('codex', text, 143);
    expect(out.isError).toBe(true);
    expect(out.transcript).toContain('> tool shell: sleep 100 (unfinished)');
  });
});

describe('gemini output', () => {
  it('reads the JSON result: response, tokens of every model, tool counts', () => {
    const out = parse('gemini', fixture('gemini', 'success.json'));
    expect(out.usage).toEqual({
      costUsd: null,
      inputTokens: 3676 + 900,
      outputTokens: 320 + 154 + 12,
      cacheReadTokens: 21263,
      cacheWriteTokens: 0,
      model: 'gemini-2.5-pro',
    });
    expect(out.isError).toBe(false);
    expect(out.sessionId).toBe('c3a1f5d2-7b1e-4d4a-9c55-1e2f3a4b5c6d');
    expect(out.resultText).toBe('VOTE: REJECT\nREASON: the CLI flag --verbose is not implemented\nISSUES: HIGH:--verbose missing');
    expect(out.transcript).toContain('> tool read_file ×2');
    expect(out.transcript).toContain('> tool glob ×1');
  });

  it('finds the JSON among other output lines', () => {
    const text = `Loaded cached credentials.\n${fixture('gemini', 'success.json')}\nData collection is disabled.\n`;
    const out = parse('gemini', text);
    expect(out.resultText).toContain('VOTE: REJECT');
    expect(out.usage?.cacheReadTokens).toBe(21263);
    expect(out.transcript.startsWith('Loaded cached credentials.')).toBe(true);
    expect(out.transcript).toContain('Data collection is disabled.');
  });

  it('reads an error object as an error', () => {
    const out = parse('gemini', fixture('gemini', 'error-auth.json'), 41);
    expect(out.isError).toBe(true);
    expect(out.resultText).toBeNull();
    expect(out.sessionId).toBe('d4e5f6a7-0000-4000-8000-0000000000aa');
    expect(out.transcript).toContain('error: API key not valid. Please pass a valid API key. (status 401 Unauthorized) (code 41)');
    expect(parse('gemini', fixture('gemini', 'error-auth.json'), 0).isError).toBe(true);
  });
});

describe('aider output', () => {
  it('sums the token reports and takes the last session cost', () => {
    const out = parse('aider', fixture('aider', 'success.txt'));
    expect(out.usage).toEqual({
      costUsd: 0.07,
      inputTokens: 15500,
      outputTokens: 1510,
      cacheReadTokens: 2400,
      cacheWriteTokens: 1200,
      model: 'anthropic/claude-sonnet-4-20250514',
    });
    expect(out.isError).toBe(false);
    expect(out.sessionId).toBeNull();
    expect(out.resultText).toContain('COMPLETION PROMISE FULFILLED');
    expect(out.transcript).toContain('Applied edit to src/add.js');
  });

  it('reads a report without cost (an unpriced model)', () => {
    const out = parse('aider', fixture('aider', 'no-cost.txt'), 0, 'fallback');
    expect(out.usage).toEqual({
      costUsd: null,
      inputTokens: 2345,
      outputTokens: 120,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      model: 'ollama_chat/qwen2.5-coder:32b',
    });
    expect(out.resultText).toContain('VOTE: APPROVE');
  });

  it('reads an API error without a usage report as an error, even with exit 0', () => {
    const out = parse('aider', fixture('aider', 'error-auth.txt'), 0);
    expect(out.isError).toBe(true);
    expect(out.usage).toBeNull();
    expect(out.transcript).toContain('authentication_error');
  });
});

describe('opencode output', () => {
  it('reads --format json events: steps, tools, usage, final text', () => {
    const out = parse('opencode', fixture('opencode', 'success.jsonl'), 0, 'anthropic/claude-sonnet-4-5');
    expect(out.usage).toEqual({
      costUsd: 0.0123 + 0.0045,
      inputTokens: 9200,
      outputTokens: 140,
      cacheReadTokens: 11000,
      cacheWriteTokens: 500,
      model: 'anthropic/claude-sonnet-4-5',
    });
    expect(out.isError).toBe(false);
    expect(out.sessionId).toBe('ses_494719016ffe85dkDMj0FPRbHK');
    expect(out.resultText).toBe('All tests pass; nothing left to change.\nCOMPLETION PROMISE FULFILLED');
    expect(out.transcript).toContain('> tool bash: npm test');
    expect(out.transcript).toContain('> tool edit: /work/repo/src/add.js');
    expect(out.transcript).toContain('  < error: File /work/repo/src/add.js has been modified since it was last read');
    expect(out.transcript).toContain('Let me run the tests.');
  });

  it('reads an error event as an error', () => {
    const out = parse('opencode', fixture('opencode', 'error.jsonl'), 1);
    expect(out.isError).toBe(true);
    expect(out.sessionId).toBe('ses_4947aa016ffe85dkDMj0FPRbZZ');
    expect(isRateLimited(out.transcript)).toBe(true);
  });

  it('reads plain text when json was not asked for', () => {
    const out = parse('opencode', fixture('opencode', 'plain.txt'));
    expect(out).toMatchObject({
      usage: null,
      isError: false,
      sessionId: null,
      resultText: 'VOTE: APPROVE\nREASON: every requirement is implemented and tested',
    });
  });
});

describe('command output', () => {
  it('is plain text: no usage, error only on a failed exit or no output', () => {
    expect(parse('command', 'hello\nCOMPLETION PROMISE FULFILLED\n')).toEqual({
      usage: null,
      isError: false,
      apiFailure: null,
      sessionId: null,
      resultText: 'hello\nCOMPLETION PROMISE FULFILLED',
      transcript: 'hello\nCOMPLETION PROMISE FULFILLED',
    });
    expect(parse('command', 'boom', 2).isError).toBe(true);
  });
});

describe('parser totality', () => {
  const NASTY = [
    '',
    '\n\n\n',
    '{',
    '{"type":"result"',
    '{"type":"result","usage":"bad","total_cost_usd":"1","is_error":"yes","num_turns":-4}',
    '{"type":"assistant","message":{"content":"plain string","usage":{"input_tokens":-5,"output_tokens":1e400}}}',
    '{"type":"assistant","message":{"content":[null,1,"x",{"type":"tool_use"},{"type":"text","text":7}]}}',
    '{"type":"user","message":{"content":[{"type":"tool_result","content":{"weird":true}}]}}',
    '{"type":"system","subtype":"init","session_id":42,"model":["x"]}',
    '{"msg":null}\n{"msg":{"type":"token_count","info":{"total_token_usage":"x"}}}\n{"msg":{"type":"patch_apply_begin","changes":[1,2]}}',
    '{"type":"item.completed","item":[1]}\n{"type":"item.completed","item":{"type":"file_change","changes":"x"}}\n{"type":"turn.completed","usage":null}',
    '{"stats":{"models":[]},"response":5}',
    '{"stats":{"models":{"m":{"tokens":{"prompt":"a","cached":1e9}}},"tools":{"byName":{"t":null}}}}',
    '{"type":"step_finish","part":{"tokens":{"input":"x","cache":7},"cost":-1}}\n{"type":"tool_use","part":{"state":"x"}}\n{"type":"error","error":"x"}',
    'Tokens: 12k sent, received. Cost: $ message',
    'Tokens: 1e999k sent, 9999999999999999999999m received. Cost: $1.2.3 message, $4 session.',
    '[1,2,3]\nnull\ntrue\n"string"\n12',
    '\u0000\u0001\u0002\u001b[31mred\u001b[0m\ufffd\ud800',
    `${'{'.repeat(5000)}${'}'.repeat(10)}`,
    '{"type":"result","result":"x"}'.repeat(200),
  ];

  function wellFormed(out: ParsedOutput): void {
    expect(typeof out.isError).toBe('boolean');
    expect(typeof out.transcript).toBe('string');
    expect(out.sessionId === null || typeof out.sessionId === 'string').toBe(true);
    expect(out.resultText === null || typeof out.resultText === 'string').toBe(true);
    if (out.usage !== null) {
      for (const n of [out.usage.inputTokens, out.usage.outputTokens, out.usage.cacheReadTokens, out.usage.cacheWriteTokens]) {
        expect(Number.isFinite(n) && n >= 0).toBe(true);
      }
      expect(out.usage.costUsd === null || (Number.isFinite(out.usage.costUsd) && out.usage.costUsd >= 0)).toBe(true);
    }
  }

  it('returns a well-formed result for truncated, garbage and binary input', () => {
    for (const name of PROVIDER_NAMES) {
      for (const text of NASTY) for (const exitCode of [0, 1, 137]) wellFormed(parse(name, text, exitCode));
      const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)).toString('latin1');
      wellFormed(parse(name, noise, 0));
      wellFormed(parse(name, Buffer.from(noise, 'latin1').toString('utf8'), 0));
    }
  });

  it('calls empty output with exit 0 a failure, for every provider', () => {
    for (const name of PROVIDER_NAMES) expect(parse(name, '', 0).isError).toBe(true);
  });

  it('never throws on random text (property)', () => {
    const lineArb = fc.oneof(
      fc.string(),
      fc.json(),
      fc.jsonValue().map((v) => JSON.stringify({ type: 'result', usage: v, total_cost_usd: v, result: v })),
      fc.jsonValue().map((v) => JSON.stringify({ type: 'item.completed', item: v })),
      fc.jsonValue().map((v) => JSON.stringify({ msg: v })),
      fc.jsonValue().map((v) => JSON.stringify({ type: 'step_finish', part: v })),
      fc.jsonValue().map((v) => JSON.stringify({ response: v, stats: v, error: v })),
    );
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 12 }), fc.integer({ min: -1, max: 255 }), (lines, exitCode) => {
        const text = lines.join('\n');
        for (const name of PROVIDER_NAMES) wellFormed(parse(name, text, exitCode));
      }),
      { numRuns: 200 },
    );
  });
});

describe('fake CLIs through their presets', () => {
  let dir: string;
  let logFile: string;
  let scenarioFile: string;

  const CLIS = ['claude', 'codex', 'gemini', 'aider', 'opencode'] as const;
  type Cli = (typeof CLIS)[number];

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-fake-cli-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh repo folder, log and scenario for one test. */
  function setup(name: string, calls: object[]): string {
    const repo = path.join(dir, name);
    rmSync(repo, { recursive: true, force: true });
    writeFileSync(path.join(dir, `${name}.prompt.md`), 'PROMPT TEXT\n');
    logFile = path.join(dir, `${name}.log.jsonl`);
    rmSync(logFile, { force: true });
    rmSync(`${logFile}.count`, { force: true });
    scenarioFile = path.join(dir, `${name}.scenario.json`);
    writeFileSync(scenarioFile, JSON.stringify({ calls }));
    return repo;
  }

  async function run(
    argv: string[],
    opts: { cwd: string; stdin?: string | null; env?: Record<string, string> },
  ): Promise<{ text: string; exitCode: number; stdout: string }> {
    mkdirSync(opts.cwd, { recursive: true });
    const r = await execa(argv[0] ?? '', argv.slice(1), {
      cwd: opts.cwd,
      env: { FAKE_CLI_LOG: logFile, FAKE_CLI_SCENARIO: scenarioFile, ...opts.env },
      input: opts.stdin ?? '',
      reject: false,
      all: true,
      timeout: 30_000,
    });
    return { text: r.all ?? '', exitCode: r.exitCode ?? -1, stdout: r.stdout };
  }

  async function probe(cli: Cli, omit = ''): Promise<Set<string>> {
    const preset = PROVIDERS[cli];
    const help = await run([path.join(FAKE_CLI, cli), ...preset.helpArgs], { cwd: dir, env: { FAKE_CLI_HELP_OMIT: omit } });
    expect(help.exitCode).toBe(0);
    return advertisedFlags(help.stdout, preset.optionalFlags);
  }

  async function call(
    cli: Cli,
    repo: string,
    overrides: Partial<InvocationRequest>,
    env: Record<string, string> = {},
  ): Promise<{ parsed: ParsedOutput; exitCode: number; text: string }> {
    const preset = PROVIDERS[cli];
    const inv = preset.buildInvocation(
      req({
        prompt: 'PROMPT TEXT\n',
        promptPath: path.join(dir, `${path.basename(repo)}.prompt.md`),
        baseArgv: [path.join(FAKE_CLI, cli)],
        ...overrides,
      }),
    );
    const r = await run(inv.argv, { cwd: repo, stdin: inv.stdin, env: { ...inv.env, ...env } });
    return {
      parsed: preset.parseOutput({ text: r.text, exitCode: r.exitCode, requestedModel: inv.argv[inv.argv.indexOf('--model') + 1] ?? null }),
      exitCode: r.exitCode,
      text: r.text,
    };
  }

  function logLines(): { argv: string[]; prompt: string; call: number; readOnly: boolean; sessionId: string | null }[] {
    return readFileSync(logFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; prompt: string; call: number; readOnly: boolean; sessionId: string | null });
  }

  it.each(CLIS)('%s: --help advertises every optional flag, and one call parses with the preset', async (cli) => {
    const flags = await probe(cli);
    expect(flags).toEqual(new Set(PROVIDERS[cli].optionalFlags));
    const repo = setup(`ok-${cli}`, [
      { text: 'VOTE: APPROVE\nREASON: done', costUsd: 0.25, inputTokens: 4000, outputTokens: 300, writes: { 'src/out.txt': 'made\n' } },
    ]);
    const { parsed, exitCode, text } = await call(cli, repo, {
      advertisedFlags: flags,
      remainingBudgetUsd: 3,
      sessionId: cli === 'claude' ? SESSION : null,
      appendSystemPrompt: 'rules',
      fallbackModel: 'haiku',
    });
    expect(exitCode, text).toBe(0);
    expect(parsed.isError, parsed.transcript).toBe(false);
    expect(parsed.resultText).toContain('VOTE: APPROVE');
    expect(parsed.usage?.inputTokens).toBe(4000);
    expect(parsed.usage?.outputTokens).toBe(300);
    if (cli === 'claude' || cli === 'aider' || cli === 'opencode') expect(parsed.usage?.costUsd).toBe(0.25);
    if (cli !== 'aider') expect(parsed.sessionId).toBeTruthy();
    if (cli === 'claude') expect(parsed.sessionId).toBe(SESSION);
    expect(readFileSync(path.join(repo, 'src/out.txt'), 'utf8')).toBe('made\n');
    const [logged] = logLines();
    expect(logged?.prompt).toContain('PROMPT TEXT');
    expect(logged?.readOnly).toBe(false);
  });

  it.each(CLIS)('%s: a reviewing role runs read-only (the scenario write does not happen)', async (cli) => {
    const flags = await probe(cli);
    const repo = setup(`ro-${cli}`, [{ text: 'VOTE: REJECT\nREASON: gaps', writes: { 'hack.txt': 'no\n' } }]);
    const { parsed } = await call(cli, repo, { role: 'council', advertisedFlags: flags });
    expect(parsed.resultText).toContain('VOTE: REJECT');
    expect(existsSync(path.join(repo, 'hack.txt'))).toBe(false);
    expect(logLines()[0]?.readOnly).toBe(true);
  });

  it('omitted flags are not advertised, not passed, and refused when passed anyway', async () => {
    const flags = await probe('claude', '--effort,--fallback-model');
    expect(flags.has('--effort')).toBe(false);
    expect(flags.has('--fallback-model')).toBe(false);
    expect(flags.has('--max-budget-usd')).toBe(true);
    const repo = setup('omit-claude', [{ text: 'ok' }]);
    const env = { FAKE_CLI_HELP_OMIT: '--effort,--fallback-model' };
    const { parsed, exitCode } = await call('claude', repo, { advertisedFlags: flags, fallbackModel: 'haiku', remainingBudgetUsd: 2 }, env);
    expect(exitCode).toBe(0);
    expect(parsed.isError).toBe(false);
    const logged = logLines()[0]?.argv ?? [];
    expect(logged).not.toContain('--effort');
    expect(logged).not.toContain('--fallback-model');
    expect(logged).toContain('--max-budget-usd');
    const refused = await run([path.join(FAKE_CLI, 'claude'), '-p', '--effort', 'high'], { cwd: repo, env });
    expect(refused.exitCode).toBe(2);
    expect(refused.text).toContain("unknown option '--effort'");
  });

  it('codex without the resume subcommand starts a new thread; with it, resumes the same one', async () => {
    const repo = setup('resume-codex', [{ text: 'again' }]);
    const without = await probe('codex', 'resume');
    expect(without.has('resume')).toBe(false);
    const fresh = await call(
      'codex',
      repo,
      { advertisedFlags: without, sessionId: 'th-keep', resume: true },
      { FAKE_CLI_HELP_OMIT: 'resume' },
    );
    expect(fresh.parsed.isError).toBe(false);
    expect(fresh.parsed.sessionId).not.toBe('th-keep');
    const resumed = await call('codex', repo, { advertisedFlags: await probe('codex'), sessionId: 'th-keep', resume: true });
    expect(resumed.parsed.sessionId).toBe('th-keep');
  });

  it('claude resumes a session and reports the same id', async () => {
    const repo = setup('resume-claude', [{ text: 'continued' }]);
    const { parsed } = await call('claude', repo, { advertisedFlags: await probe('claude'), sessionId: SESSION, resume: true });
    expect(parsed.sessionId).toBe(SESSION);
    expect(logLines()[0]?.argv).toEqual(expect.arrayContaining(['--resume', SESSION]));
  });

  it('walks the scenario calls in order, repeating the last, with errors the detectors recognise', async () => {
    const repo = setup('calls-claude', [{ text: 'first' }, { error: 'rate_limit' }, { error: 'auth' }]);
    const first = await call('claude', repo, {});
    const second = await call('claude', repo, {});
    const third = await call('claude', repo, {});
    const fourth = await call('claude', repo, {});
    expect(first.parsed.resultText).toBe('first');
    expect(second.exitCode).toBe(1);
    expect(second.parsed.isError).toBe(true);
    expect(isRateLimited(second.parsed.transcript)).toBe(true);
    expect(third.parsed.isError).toBe(true);
    expect(third.parsed.resultText).toContain('Invalid API key');
    expect(fourth.parsed.resultText).toContain('Invalid API key');
    expect(logLines().map((l) => l.call)).toEqual([0, 1, 2, 3]);
  });

  it('counts parallel calls without losing one', async () => {
    const repo = setup('parallel-claude', [{ text: 'a' }, { text: 'b' }, { text: 'c' }]);
    const results = await Promise.all([0, 1, 2].map(() => call('claude', repo, { role: 'council' })));
    expect(results.map((r) => r.parsed.resultText).sort()).toEqual(['a', 'b', 'c']);
    expect(
      logLines()
        .map((l) => l.call)
        .sort(),
    ).toEqual([0, 1, 2]);
  });

  it('gemini reports an auth failure with its exit code 41', async () => {
    const repo = setup('auth-gemini', [{ error: 'auth' }]);
    const { parsed, exitCode } = await call('gemini', repo, {});
    expect(exitCode).toBe(41);
    expect(parsed.isError).toBe(true);
    expect(parsed.transcript).toContain('API key not valid');
  });
});
