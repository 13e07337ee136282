#!/usr/bin/env node
/**
 * Owns the fake agent CLIs used by the provider tests: one plain-JavaScript program that behaves
 * like `claude`, `codex`, `gemini`, `aider` or `opencode` as far as Vigil can tell — the same
 * flags (unknown ones are refused, like an older CLI would), the same way of reading the prompt,
 * the same output format — with no model behind it. What each call does comes from a scenario.
 *
 *   fake-cli.mjs <provider> [the provider's own arguments]   (or the wrappers next to this file)
 *
 * Environment:
 *   FAKE_CLI_SCENARIO   JSON file { "calls": [ { "exit", "text", "costUsd", "inputTokens",
 *                       "outputTokens", "cacheReadTokens", "error": "auth"|"rate_limit"|null,
 *                       "errorText", "writes": {"path": "content"}, "sleepMs" } ] }; call n uses
 *                       calls[n], beyond the last the last. Without it every call succeeds.
 *   FAKE_CLI_LOG        append one JSON line per call: argv, cwd, prompt, relevant env.
 *   FAKE_CLI_STATE      file holding the call counter (default: "$FAKE_CLI_LOG.count"; without
 *                       either, every call is call 0).
 *   FAKE_CLI_HELP_OMIT  comma-separated flags (or subcommands) the CLI pretends not to have: left
 *                       out of --help and refused when passed ("error: unknown option").
 *
 * Sessions: claude/codex/gemini/opencode print a session id, and print the same id back when
 * asked to resume it (--resume, exec resume, --session) or to use it (--session-id).
 * Read-only modes (claude without --dangerously-skip-permissions, codex --sandbox read-only,
 * gemini without yolo, aider --dry-run, opencode with edits denied) do not perform `writes`;
 * the output shows the refused write instead.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';

const USAGE = 'usage: fake-cli.mjs <claude|codex|gemini|aider|opencode> [args...]';

// ---------------------------------------------------------------------------------------------
// What each CLI accepts. kind: 'bool' (no value), 'one' (one value), 'many' (values up to the
// next flag). The help text is rendered from this table, minus FAKE_CLI_HELP_OMIT.
// ---------------------------------------------------------------------------------------------

const opt = (flags, kind, arg, help) => ({ flags, kind, arg, help });

const CLIS = {
  claude: {
    version: '2.0.99 (Claude Code, fake)',
    header: [
      'Usage: claude [options] [command] [prompt]',
      '',
      'Claude Code - starts an interactive session by default, use -p/--print for non-interactive output',
      '',
      'Arguments:',
      '  prompt                                            Your prompt',
    ],
    options: [
      opt(['-d', '--debug'], 'bool', '', 'Enable debug mode'),
      opt(['--verbose'], 'bool', '', 'Override verbose mode setting from config'),
      opt(['-p', '--print'], 'bool', '', 'Print response and exit (useful for pipes)'),
      opt(
        ['--output-format'],
        'one',
        '<format>',
        'Output format (only works with --print): "text" (default), "json" (single result), or "stream-json" (realtime streaming)',
      ),
      opt(
        ['--include-partial-messages'],
        'bool',
        '',
        'Include partial message chunks as they arrive (only with --print and --output-format=stream-json)',
      ),
      opt(
        ['--dangerously-skip-permissions'],
        'bool',
        '',
        'Bypass all permission checks. Recommended only for sandboxes with no internet access.',
      ),
      opt(['--max-budget-usd'], 'one', '<amount>', 'Maximum dollar amount to spend on API calls (only works with --print)'),
      opt(
        ['--allowedTools', '--allowed-tools'],
        'many',
        '<tools...>',
        'Comma or space-separated list of tool names to allow (e.g. "Bash(git:*) Edit")',
      ),
      opt(
        ['--disallowedTools', '--disallowed-tools'],
        'many',
        '<tools...>',
        'Comma or space-separated list of tool names to deny (e.g. "Bash(git:*) Edit")',
      ),
      opt(['--append-system-prompt'], 'one', '<prompt>', 'Append a system prompt to the default system prompt'),
      opt(
        ['--permission-mode'],
        'one',
        '<mode>',
        'Permission mode to use for the session (choices: "acceptEdits", "bypassPermissions", "default", "dontAsk", "plan")',
      ),
      opt(['-c', '--continue'], 'bool', '', 'Continue the most recent conversation'),
      opt(['-r', '--resume'], 'one', '[value]', 'Resume a conversation by session ID'),
      opt(['--fork-session'], 'bool', '', 'When resuming, create a new session ID instead of reusing the original'),
      opt(['--model'], 'one', '<model>', "Model for the current session: an alias (e.g. 'sonnet' or 'opus') or a full name"),
      opt(['--effort'], 'one', '<level>', 'Effort level for the current session (low, medium, high, xhigh, max)'),
      opt(
        ['--fallback-model'],
        'one',
        '<model>',
        'Enable automatic fallback to specified model when default model is overloaded (only works with --print)',
      ),
      opt(['--settings'], 'one', '<file-or-json>', 'Path to a settings JSON file or a JSON string to load additional settings from'),
      opt(['--add-dir'], 'many', '<directories...>', 'Additional directories to allow tool access to'),
      opt(['--session-id'], 'one', '<uuid>', 'Use a specific session ID for the conversation (must be a valid UUID)'),
      opt(['--setting-sources'], 'one', '<sources>', 'Comma-separated list of setting sources to load (user, project, local)'),
      opt(
        ['--agents'],
        'one',
        '<json-or-file>',
        'JSON object defining custom agents, or a path to a JSON file (e.g. \'{"reviewer": {"description": "Reviews code", ' +
          '"prompt": "You are a code reviewer"}}\')',
      ),
      opt(
        ['--json-schema'],
        'one',
        '<schema>',
        'JSON Schema for structured output validation. Example: {"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}',
      ),
    ],
  },
  codex: {
    version: 'codex-cli 0.99.0 (fake)',
    top: [
      'Codex CLI',
      '',
      'Usage: codex [OPTIONS] [PROMPT]',
      '       codex [OPTIONS] <COMMAND> [ARGS]',
      '',
      'Commands:',
      '  exec        Run Codex non-interactively [aliases: e]',
      '  login       Manage login',
      '  logout      Remove stored authentication credentials',
      '  resume      Resume a previous interactive session',
      '  help        Print this message or the help of the given subcommand(s)',
    ],
    header: ['Run Codex non-interactively', '', 'Usage: codex exec [OPTIONS] [PROMPT]', '       codex exec [OPTIONS] <COMMAND> [ARGS]'],
    commands: [
      ['resume', 'Resume a previous session by id or pick the most recent with --last'],
      ['review', 'Run a code review against the current repository'],
      ['help', 'Print this message or the help of the given subcommand(s)'],
    ],
    arguments: [
      '  [PROMPT]',
      '          Initial instructions for the agent. If not provided as an argument (or if `-` is used), instructions are read from stdin',
    ],
    options: [
      opt(
        ['-c', '--config'],
        'one',
        '<key=value>',
        'Override a configuration value that would otherwise be loaded from `~/.codex/config.toml`',
      ),
      opt(['-i', '--image'], 'one', '<FILE>...', 'Optional image(s) to attach to the initial prompt'),
      opt(['-m', '--model'], 'one', '<MODEL>', 'Model the agent should use'),
      opt(
        ['-s', '--sandbox'],
        'one',
        '<SANDBOX_MODE>',
        'Select the sandbox policy to use when executing model-generated shell commands [possible values: read-only, workspace-write, danger-full-access]',
      ),
      opt(['-p', '--profile'], 'one', '<CONFIG_PROFILE>', 'Configuration profile from config.toml to specify default options'),
      opt(
        ['--dangerously-bypass-approvals-and-sandbox'],
        'bool',
        '',
        'Skip all confirmation prompts and execute commands without sandboxing',
      ),
      opt(['-C', '--cd'], 'one', '<DIR>', 'Tell the agent to use the specified directory as its working root'),
      opt(['--skip-git-repo-check'], 'bool', '', 'Allow running Codex outside a Git repository'),
      opt(['--ephemeral'], 'bool', '', 'Run without persisting session files to disk'),
      opt(['--output-schema'], 'one', '<FILE>', "Path to a JSON Schema file describing the model's final response shape"),
      opt(
        ['--color'],
        'one',
        '<COLOR>',
        'Specifies color settings for use in the output [default: auto] [possible values: always, never, auto]',
      ),
      opt(['--json', '--experimental-json'], 'bool', '', 'Print events to stdout as JSONL'),
      opt(['-o', '--output-last-message'], 'one', '<FILE>', 'Specifies file where the last message from the agent should be written'),
      opt(['--last'], 'bool', '', 'Resume the most recent recorded session (with resume)'),
    ],
  },
  gemini: {
    version: '0.99.0',
    header: [
      'Usage: gemini [options] [command]',
      '',
      'Gemini CLI - Launch an interactive CLI, use -p/--prompt for non-interactive mode',
      '',
      'Commands:',
      '  gemini [query..]             Launch Gemini CLI  [default]',
      '  gemini mcp                   Manage MCP servers',
      '  gemini extensions <command>  Manage Gemini CLI extensions.',
      '',
      'Positionals:',
      '  query  Positional prompt. Defaults to one-shot; use -i/--prompt-interactive for interactive.',
    ],
    options: [
      opt(['-d', '--debug'], 'bool', '', 'Run in debug mode?  [boolean] [default: false]'),
      opt(['-m', '--model'], 'one', '', 'Model  [string]'),
      opt(['-p', '--prompt'], 'one', '', 'Prompt. Appended to input on stdin (if any).  [string]'),
      opt(['-i', '--prompt-interactive'], 'one', '', 'Execute the provided prompt and continue in interactive mode  [string]'),
      opt(['-s', '--sandbox'], 'bool', '', 'Run in sandbox?  [boolean]'),
      opt(['-y', '--yolo'], 'bool', '', 'Automatically accept all actions (aka YOLO mode)  [boolean] [default: false]'),
      opt(
        ['--approval-mode'],
        'one',
        '',
        'Set the approval mode: default (prompt for approval), auto_edit (auto-approve edit tools), yolo (auto-approve all ' +
          'tools), plan (read-only mode)  [string] [choices: "default", "auto_edit", "yolo", "plan"]',
      ),
      opt(['--allowed-tools'], 'many', '', 'Tools that are allowed to run without confirmation  [array]'),
      opt(['-e', '--extensions'], 'many', '', 'A list of extensions to use. If not provided, all extensions are used.  [array]'),
      opt(
        ['-r', '--resume'],
        'one',
        '',
        'Resume a previous session. Use "latest" for most recent or index number (e.g. --resume 5)  [string]',
      ),
      opt(['--include-directories'], 'many', '', 'Additional directories to include in the workspace  [array]'),
      opt(['-o', '--output-format'], 'one', '', 'The format of the CLI output.  [string] [choices: "text", "json", "stream-json"]'),
    ],
  },
  aider: {
    version: 'aider 0.99.0',
    header: [
      'usage: aider [-h] [--model MODEL] [--message COMMAND] [--message-file MESSAGE_FILE] [options] [FILE ...]',
      '',
      'aider is AI pair programming in your terminal',
      '',
      'options:',
    ],
    options: [
      opt(['--model'], 'one', 'MODEL', 'Specify the model to use for the main chat [env var: AIDER_MODEL]'),
      opt(
        ['--message', '--msg', '-m'],
        'one',
        'COMMAND',
        'Specify a single message to send the LLM, process reply then exit (disables chat mode) [env var: AIDER_MESSAGE]',
      ),
      opt(
        ['--message-file', '-f'],
        'one',
        'MESSAGE_FILE',
        'Specify a file containing the message to send the LLM, process reply, then exit (disables chat mode) [env var: AIDER_MESSAGE_FILE]',
      ),
      opt(['--yes-always'], 'bool', '', 'Always say yes to every confirmation [env var: AIDER_YES_ALWAYS]'),
      opt(
        ['--auto-commits', '--no-auto-commits'],
        'bool',
        '',
        'Enable/disable auto commit of LLM changes (default: True) [env var: AIDER_AUTO_COMMITS]',
      ),
      opt(['--dry-run', '--no-dry-run'], 'bool', '', 'Perform a dry run without modifying files (default: False) [env var: AIDER_DRY_RUN]'),
      opt(
        ['--edit-format', '--chat-mode'],
        'one',
        'EDIT_FORMAT',
        'Specify what edit format the LLM should use (default depends on model) [env var: AIDER_EDIT_FORMAT]',
      ),
      opt(['--pretty', '--no-pretty'], 'bool', '', 'Enable/disable pretty, colorized output (default: True) [env var: AIDER_PRETTY]'),
      opt(['--stream', '--no-stream'], 'bool', '', 'Enable/disable streaming responses (default: True) [env var: AIDER_STREAM]'),
      opt(['--check-update', '--no-check-update'], 'bool', '', 'Check for new aider versions on launch [env var: AIDER_CHECK_UPDATE]'),
      opt(
        ['--show-release-notes', '--no-show-release-notes'],
        'bool',
        '',
        'Show release notes on first run of new version (default: None, ask user) [env var: AIDER_SHOW_RELEASE_NOTES]',
      ),
      opt(
        ['--analytics', '--no-analytics'],
        'bool',
        '',
        'Enable/disable analytics for current session (default: random) [env var: AIDER_ANALYTICS]',
      ),
      // The next four as aider 0.86.2's --help words them.
      opt(
        ['--map-tokens'],
        'one',
        'MAP_TOKENS',
        'Suggested number of tokens to use for repo map, use 0 to disable [env var: AIDER_MAP_TOKENS]',
      ),
      opt(
        ['--input-history-file'],
        'one',
        'INPUT_HISTORY_FILE',
        'Specify the chat input history file (default: .aider.input.history) [env var: AIDER_INPUT_HISTORY_FILE]',
      ),
      opt(
        ['--chat-history-file'],
        'one',
        'CHAT_HISTORY_FILE',
        'Specify the chat history file (default: .aider.chat.history.md) [env var: AIDER_CHAT_HISTORY_FILE]',
      ),
      opt(
        ['--gitignore', '--no-gitignore'],
        'bool',
        '',
        'Enable/disable adding .aider* to .gitignore (default: True) [env var: AIDER_GITIGNORE]',
      ),
    ],
  },
  opencode: {
    version: '0.99.0',
    top: [
      'Commands:',
      '  opencode [project]         start opencode tui                                  [default]',
      '  opencode run [message..]   run opencode with a message',
      '  opencode auth              manage credentials',
      '  opencode models            list all available models',
    ],
    header: [
      'opencode run [message..]',
      '',
      'run opencode with a message',
      '',
      'Positionals:',
      '  message  message to send                                         [array] [default: []]',
    ],
    options: [
      opt(['--print-logs'], 'bool', '', 'print logs to stderr  [boolean]'),
      opt(['--command'], 'one', '', 'the command to run, use message for args  [string]'),
      opt(['-c', '--continue'], 'bool', '', 'continue the last session  [boolean]'),
      opt(['-s', '--session'], 'one', '', 'session id to continue  [string]'),
      opt(['--share'], 'bool', '', 'share the session  [boolean]'),
      opt(['-m', '--model'], 'one', '', 'model to use in the format of provider/model  [string]'),
      opt(['--agent'], 'one', '', 'agent to use  [string]'),
      opt(
        ['--format'],
        'one',
        '',
        'format: default (formatted) or json (raw JSON events)  [string] [choices: "default", "json"] [default: "default"]',
      ),
      opt(['-f', '--file'], 'many', '', 'file(s) to attach to message  [array]'),
      opt(['--title'], 'one', '', 'title for the session (uses truncated prompt if no value provided)  [string]'),
      opt(['--variant'], 'one', '', 'model variant (provider-specific reasoning effort, e.g., high, max, minimal)  [string]'),
      opt(['--auto'], 'bool', '', 'auto-approve permissions that are not explicitly denied (dangerous!)  [boolean]'),
    ],
  },
};

/** Credentials each CLI would look at (only their presence is logged, never their values). */
const CREDENTIALS = {
  claude: ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  aider: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
  opencode: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
};

const CLAUDE_MODELS = { opus: 'claude-opus-4-1-20250805', sonnet: 'claude-sonnet-4-5-20250929', haiku: 'claude-haiku-4-5-20251001' };

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

class UsageError extends Error {}

const out = (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
const err = (s) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`);
const line = (obj) => out(JSON.stringify(obj));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sleepSync = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function omitted() {
  return new Set(
    (process.env.FAKE_CLI_HELP_OMIT ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

function liveOptions(cli) {
  const omit = omitted();
  return cli.options.filter((o) => !o.flags.some((f) => omit.has(f)));
}

function liveCommands(cli) {
  const omit = omitted();
  return (cli.commands ?? []).filter(([name]) => !omit.has(name));
}

function renderHelp(cli) {
  const lines = [...cli.header, ''];
  const commands = liveCommands(cli);
  if (commands.length > 0) {
    lines.push('Commands:');
    for (const [name, help] of commands) lines.push(`  ${name.padEnd(8)}${help}`);
    lines.push('');
  }
  if (cli.arguments) lines.push('Arguments:', ...cli.arguments, '');
  lines.push('Options:');
  for (const o of liveOptions(cli)) {
    const left = `  ${o.flags.join(', ')}${o.arg ? ` ${o.arg}` : ''}`;
    lines.push(left.length < 48 ? `${left.padEnd(48)}${o.help}` : `${left}\n${' '.repeat(48)}${o.help}`);
  }
  lines.push(`  ${'-h, --help'.padEnd(46)}Display help for command`, `  ${'--version'.padEnd(46)}Output the version number`);
  return `${lines.join('\n')}\n`;
}

/** Parses argv against the live options; an unknown or omitted flag is a usage error. */
function parseArgs(cli, args) {
  const byFlag = new Map();
  for (const o of liveOptions(cli)) for (const f of o.flags) byFlag.set(f, o);
  const opts = new Map();
  const positionals = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-' || !a.startsWith('-')) {
      positionals.push(a);
      continue;
    }
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const o = byFlag.get(flag);
    if (!o) throw new UsageError(`error: unknown option '${flag}'`);
    const key = o.flags.find((f) => f.startsWith('--')) ?? o.flags[0];
    if (o.kind === 'bool') {
      opts.set(flag.startsWith('--no-') ? `${flag}` : key, true);
    } else if (o.kind === 'one') {
      const v = eq > 0 ? a.slice(eq + 1) : args[++i];
      if (v === undefined) throw new UsageError(`error: option '${flag}' argument missing`);
      opts.set(key, v);
    } else {
      const vals = eq > 0 ? [a.slice(eq + 1)] : [];
      while (i + 1 < args.length && !args[i + 1].startsWith('-')) vals.push(args[++i]);
      opts.set(key, [...(opts.get(key) ?? []), ...vals]);
    }
  }
  return { opts, positionals };
}

function readStdin() {
  if (process.stdin.isTTY) return '';
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

/** Next call index, kept in a counter file under a lock (council members call in parallel). */
function nextCallIndex(counter = '') {
  const base = process.env.FAKE_CLI_STATE || (process.env.FAKE_CLI_LOG ? `${process.env.FAKE_CLI_LOG}.count` : '');
  const state = base && counter ? `${base}.${counter}` : base;
  if (!state) return 0;
  const lock = `${state}.lock`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (e) {
      if (e.code === 'ENOENT') mkdirSync(dirname(lock), { recursive: true });
      else if (Date.now() > deadline) throw new Error(`fake-cli: cannot lock ${lock}`);
      else sleepSync(10);
    }
  }
  try {
    let n = 0;
    try {
      n = Number.parseInt(readFileSync(state, 'utf8'), 10) || 0;
    } catch {
      n = 0;
    }
    writeFileSync(state, String(n + 1));
    return n;
  } finally {
    rmdirSync(lock);
  }
}

/** The scenario's answer for this call's Vigil role (`roles[VIGIL_ROLE]`, or the role named), or null: such a call takes no place in `calls`. */
function roleCall(role = process.env.VIGIL_ROLE) {
  const file = process.env.FAKE_CLI_SCENARIO;
  if (!file || !role) return null;
  let scenario;
  try {
    scenario = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null; // loadCall says why
  }
  const entry = scenario?.roles?.[role];
  // A list: the role's n-th call uses its n-th entry (counted per role), beyond the last the last.
  const call = Array.isArray(entry) && entry.length > 0 ? entry[Math.min(nextCallIndex(`role-${role}`), entry.length - 1)] : entry;
  return typeof call === 'object' && call !== null && !Array.isArray(call) ? call : null;
}

function loadCall(index) {
  const file = process.env.FAKE_CLI_SCENARIO;
  if (!file) return {};
  let scenario;
  try {
    scenario = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`fake-cli: cannot read scenario ${file}: ${e.message}`);
  }
  const calls = scenario?.calls;
  if (!Array.isArray(calls) || calls.length === 0) throw new UsageError(`fake-cli: scenario ${file}: "calls" must be a non-empty array`);
  const call = calls[Math.min(index, calls.length - 1)];
  if (typeof call !== 'object' || call === null) throw new UsageError(`fake-cli: scenario ${file}: calls[${index}] must be an object`);
  return call;
}

/** The call's numbers with defaults. */
function figures(call) {
  const n = (v, d) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : d);
  return {
    text: typeof call.text === 'string' ? call.text : 'fake agent: done',
    costUsd: call.costUsd === null ? null : n(call.costUsd, 0.01),
    input: Math.floor(n(call.inputTokens, 1000)),
    output: Math.floor(n(call.outputTokens, 200)),
    cached: Math.floor(n(call.cacheReadTokens, 0)),
    writes: typeof call.writes === 'object' && call.writes !== null ? Object.entries(call.writes) : [],
    sleepMs: Math.floor(n(call.sleepMs, 0)),
    error: call.error === 'auth' || call.error === 'rate_limit' ? call.error : null,
    errorText: typeof call.errorText === 'string' ? call.errorText : null,
    exit: typeof call.exit === 'number' ? call.exit : null,
    agents: typeof call.agents === 'object' && call.agents !== null ? call.agents : {},
    structuredOutput: call.structuredOutput !== false,
    dropFinding: call.dropFinding === true,
    skipFollowUp: call.skipFollowUp === true,
    fabricate: call.fabricate === true,
    // claude: `compact_boundary` records before the answer, and the model's window in the result's modelUsage.
    compactions: Math.floor(n(call.compactions, 0)),
    contextWindow: typeof call.contextWindow === 'number' ? call.contextWindow : null,
  };
}

/** The declared agents of a claude call (`--agents`: JSON, or a file holding it), or null. */
function declaredAgents(opts) {
  const v = opts.get('--agents');
  if (v === undefined) return null;
  let parsed;
  try {
    parsed = JSON.parse(v.trim().startsWith('{') ? v : readFileSync(v, 'utf8'));
  } catch (e) {
    throw new UsageError(`error: --agents: ${e.message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('error: --agents must be a JSON object');
  return parsed;
}

/**
 * What one declared agent answers: the call's `agents[<name>]` when given, else the first
 * `agents` key the name contains (e.g. "test-auditor"), else the call's `text`.
 */
function agentAnswer(f, name, role = null) {
  if (typeof f.agents[name] === 'string') return f.agents[name];
  const key = Object.keys(f.agents).find((k) => name.includes(k));
  if (key !== undefined) return String(f.agents[key]);
  // An agent of another role (the checklist verifier in a council round's call): that role's own answer in the scenario.
  const own = role === null ? null : roleCall(role);
  return typeof own?.text === 'string' ? own.text : f.text;
}

/** An agent's answer read into the finding the schema asks for (a vote, or a review verdict). */
function findingOf(name, answer, schema) {
  const props = schema?.properties?.findings?.items?.properties ?? {};
  if ('vote' in props) {
    const vote = /VOTE\s*:\s*(APPROVE|REJECT|CANNOT_VALIDATE)/.exec(answer)?.[1] ?? 'CANNOT_VALIDATE';
    const reason = /REASON\s*:\s*(.*)/.exec(answer)?.[1]?.trim() ?? '';
    const issues = [...answer.matchAll(/ISSUES\s*:\s*(CRITICAL|HIGH|MEDIUM|LOW)\s*:\s*(.*)/gi)].map((m) => ({
      severity: m[1].toLowerCase(),
      description: m[2].trim(),
    }));
    return { agent: name, vote, reason, issues };
  }
  const verdict = /^\s*[*#>]*\s*VERDICT\s*:\s*(PASS|FAIL)/im.exec(answer)?.[1]?.toUpperCase() ?? 'NONE';
  const findings = [...answer.matchAll(/\[(Critical|High|Medium|Low)\]\s*(.*)/gi)].map((m) => ({
    severity: m[1].toLowerCase(),
    text: m[2].trim(),
  }));
  return { agent: name, verdict, findings };
}

/** Performs the writes (relative paths only) unless read-only; returns what happened to each. */
function applyWrites(writes, readOnly) {
  return writes.map(([file, content]) => {
    const abs = resolve(process.cwd(), file);
    if (isAbsolute(file) || file.split(/[\\/]/).includes('..')) return { file, abs, ok: false, why: 'path outside the repository' };
    if (readOnly) return { file, abs, ok: false, why: 'permission denied (read-only)' };
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, String(content));
    return { file, abs, ok: true, why: null };
  });
}

function formatTokens(n) {
  if (n < 1000) return String(n);
  if (n < 10000) return `${(n / 1000).toFixed(1)}k`;
  return `${Math.round(n / 1000)}k`;
}

// ---------------------------------------------------------------------------------------------
// Per provider: how the prompt is read, whether the call is read-only, what is printed.
// ---------------------------------------------------------------------------------------------

function claude(ctx) {
  const { opts, positionals, f } = ctx;
  const prompt = positionals.length > 0 ? positionals.join(' ') : readStdin();
  const sessionId = opts.get('--resume') ?? opts.get('--session-id') ?? randomUUID();
  const alias = opts.get('--model') ?? 'sonnet';
  const model = CLAUDE_MODELS[alias] ?? alias;
  const readOnly = !opts.has('--dangerously-skip-permissions');
  const agents = declaredAgents(opts);
  let schema = null;
  if (opts.has('--json-schema')) {
    try {
      schema = JSON.parse(opts.get('--json-schema'));
    } catch (e) {
      throw new UsageError(`error: --json-schema: ${e.message}`);
    }
  }
  return {
    prompt,
    sessionId,
    readOnly,
    agents: agents === null ? null : Object.keys(agents),
    head() {
      if (opts.get('--output-format') !== 'stream-json') return;
      line({
        type: 'system',
        subtype: 'init',
        cwd: process.cwd(),
        session_id: sessionId,
        tools: ['Bash', 'Edit', 'Glob', 'Grep', 'Read', 'Write'],
        mcp_servers: [],
        model,
        permissionMode: readOnly ? (opts.get('--permission-mode') ?? 'default') : 'bypassPermissions',
        apiKeySource: process.env.ANTHROPIC_API_KEY ? 'ANTHROPIC_API_KEY' : 'none',
      });
    },
    tail(writes) {
      const usage = { input_tokens: f.input, cache_creation_input_tokens: 0, cache_read_input_tokens: f.cached, output_tokens: f.output };
      const assistant = (id, content, m = model) =>
        line({
          type: 'assistant',
          message: { id, type: 'message', role: 'assistant', model: m, content, usage },
          parent_tool_use_id: null,
          session_id: sessionId,
        });
      const result = (isError, text, turns) =>
        line({
          type: 'result',
          subtype: 'success',
          is_error: isError,
          duration_ms: 1234,
          duration_api_ms: 1100,
          num_turns: turns,
          result: text,
          session_id: sessionId,
          total_cost_usd: isError ? 0 : (f.costUsd ?? 0),
          usage: isError ? { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 } : usage,
          ...(f.contextWindow !== null
            ? {
                modelUsage: {
                  [model]: { inputTokens: f.input, outputTokens: f.output, cacheReadInputTokens: f.cached, contextWindow: f.contextWindow },
                },
              }
            : {}),
          permission_denials: writes.filter((w) => !w.ok).map((w) => ({ tool_name: 'Write', tool_input: { file_path: w.abs } })),
        });
      if (opts.get('--output-format') !== 'stream-json') {
        out(f.error ? errorText(ctx.provider, f) : f.text);
        return f.error ? 1 : 0;
      }
      if (f.error) {
        const text = errorText('claude', f);
        assistant('msg_fake_err', [{ type: 'text', text }], '<synthetic>');
        result(true, text, 1);
        return 1;
      }
      writes.forEach((w, i) => {
        assistant(`msg_fake_w${i}`, [
          { type: 'tool_use', id: `toolu_fake_${i}`, name: 'Write', input: { file_path: w.abs, content: '...' } },
        ]);
        line({
          type: 'user',
          message: {
            role: 'user',
            content: [
              {
                tool_use_id: `toolu_fake_${i}`,
                type: 'tool_result',
                content: w.ok
                  ? `File created successfully at: ${w.abs}`
                  : `Claude requested permissions to write to ${w.abs}, but you haven't granted it yet.`,
                is_error: !w.ok,
              },
            ],
          },
          session_id: sessionId,
        });
      });
      if (agents !== null) {
        // Every declared agent once, through the Agent tool; each answers in its own context (its messages carry the tool use as parent).
        const dispatch = (n, i, answer) => {
          line({
            type: 'assistant',
            message: {
              id: `msg_fake_sub_${i}`,
              type: 'message',
              role: 'assistant',
              model,
              content: [{ type: 'text', text: answer }],
              usage,
            },
            parent_tool_use_id: `toolu_fake_agent_${i}`,
            session_id: sessionId,
          });
          line({
            type: 'user',
            message: {
              role: 'user',
              content: [{ tool_use_id: `toolu_fake_agent_${i}`, type: 'tool_result', content: [{ type: 'text', text: answer }] }],
            },
            parent_tool_use_id: null,
            session_id: sessionId,
          });
        };
        const agentUse = (n, i) => ({
          type: 'tool_use',
          id: `toolu_fake_agent_${i}`,
          name: 'Agent',
          input: {
            subagent_type: n,
            description: `run ${n}`,
            prompt: 'Carry out your instructions on this repository and answer in the format they ask for.',
          },
        });
        // A council round that carries the PRD checklist verifier: the verifier first, and the members only when none of the items the prompt names fails.
        const verifierName = schema?.properties?.checklist?.properties?.agent?.enum?.[0] ?? null;
        let checklist = null;
        let stopped = false;
        if (verifierName !== null) {
          assistant('msg_fake_dispatch_verifier', [agentUse(verifierName, 'v')]);
          const answer = agentAnswer(f, verifierName, 'checklist-verifier');
          dispatch(verifierName, 'v', answer);
          const items = [...answer.matchAll(/ITEM\s+(\S+?)\s*:\s*(PASS|FAIL)\s*-?\s*(.*)/gi)].map((m) => ({
            id: m[1],
            verdict: m[2].toUpperCase(),
            evidence: m[3].trim(),
          }));
          checklist = { agent: verifierName, items };
          const stopIf = /for any of these items: (.+?) — run no other agent/.exec(prompt)?.[1]?.split(', ') ?? [];
          stopped = stopIf.some((id) => !items.some((it) => it.id === id && it.verdict === 'PASS'));
        }
        // The devil's advocate, when the call declares one: after the members, only when every one approved (passed).
        const followUpName = /run the agent (vigil-[a-z0-9-]+) once, the same way, and add its finding too/.exec(prompt)?.[1] ?? null;
        const names = Object.keys(agents).filter((n) => n !== verifierName && n !== followUpName && !stopped);
        if (names.length > 0)
          assistant(
            'msg_fake_dispatch',
            names.map((n, i) => agentUse(n, i)),
          );
        // `fabricate`: the main agent writes the last member's finding itself, without running it.
        const findings = names.map((n, i) => {
          const answer = agentAnswer(f, n);
          if (!(f.fabricate && i === names.length - 1)) dispatch(n, i, answer);
          return findingOf(n, answer, schema);
        });
        if (f.dropFinding) findings.pop();
        const unanimous = findings.length > 0 && findings.every((x) => x.vote === 'APPROVE' || x.verdict === 'PASS');
        if (followUpName !== null && unanimous && !f.skipFollowUp) {
          assistant('msg_fake_dispatch_followup', [agentUse(followUpName, 'd')]);
          const answer = agentAnswer(f, followUpName, 'devils-advocate');
          dispatch(followUpName, 'd', answer);
          findings.push(findingOf(followUpName, answer, schema));
        }
        const structured = schema !== null && f.structuredOutput ? { ...(checklist ? { checklist } : {}), findings } : null;
        if (structured)
          assistant('msg_fake_structured', [
            { type: 'tool_use', id: 'toolu_fake_structured', name: 'StructuredOutput', input: structured },
          ]);
        const text = structured ? 'Every agent answered.' : 'The agents answered, but I have nothing structured to give.';
        assistant('msg_fake_final', [{ type: 'text', text }]);
        line({
          type: 'result',
          subtype: 'success',
          is_error: false,
          num_turns: names.length + 2,
          result: text,
          session_id: sessionId,
          total_cost_usd: f.costUsd ?? 0,
          usage,
          ...(structured ? { structured_output: structured } : {}),
        });
        return 0;
      }
      for (let i = 0; i < f.compactions; i++)
        line({
          type: 'system',
          subtype: 'compact_boundary',
          session_id: sessionId,
          compact_metadata: { trigger: 'auto', pre_tokens: f.input },
        });
      assistant('msg_fake_final', [{ type: 'text', text: f.text }]);
      result(false, f.text, writes.length + 1);
      return 0;
    },
  };
}

function codex(ctx) {
  const { opts, positionals, f } = ctx;
  if (positionals[0] !== 'exec') throw new UsageError('fake codex: only `codex exec` is supported');
  let rest = positionals.slice(1);
  let sessionId = randomUUID();
  if (rest[0] === 'resume') {
    if (omitted().has('resume')) throw new UsageError("error: unexpected argument 'resume' found");
    if (!rest[1]) throw new UsageError('error: resume needs a SESSION_ID');
    sessionId = rest[1];
    rest = rest.slice(2);
  }
  const prompt = rest.length === 0 || rest[0] === '-' ? readStdin() : rest.join(' ');
  const sandbox = opts.get('--sandbox') ?? 'read-only';
  const readOnly = sandbox === 'read-only' && !opts.has('--dangerously-bypass-approvals-and-sandbox');
  const json = opts.has('--json');
  return {
    prompt,
    sessionId,
    readOnly,
    head() {
      if (!json) return;
      line({ type: 'thread.started', thread_id: sessionId });
      line({ type: 'turn.started' });
    },
    tail(writes) {
      if (f.error) {
        const text = errorText('codex', f);
        if (json) {
          line({ type: 'error', message: text });
          line({ type: 'turn.failed', error: { message: text } });
        } else err(`ERROR: ${text}`);
        return 1;
      }
      if (!json) {
        out(f.text);
        return 0;
      }
      let n = 0;
      line({
        type: 'item.started',
        item: {
          id: `item_${n}`,
          type: 'command_execution',
          command: 'bash -lc ls',
          aggregated_output: '',
          exit_code: null,
          status: 'in_progress',
        },
      });
      line({
        type: 'item.completed',
        item: {
          id: `item_${n++}`,
          type: 'command_execution',
          command: 'bash -lc ls',
          aggregated_output: 'README.md\n',
          exit_code: 0,
          status: 'completed',
        },
      });
      for (const w of writes) {
        line({
          type: 'item.completed',
          item: { id: `item_${n++}`, type: 'file_change', changes: [{ path: w.abs, kind: 'add' }], status: w.ok ? 'completed' : 'failed' },
        });
      }
      line({ type: 'item.completed', item: { id: `item_${n++}`, type: 'agent_message', text: f.text } });
      line({ type: 'turn.completed', usage: { input_tokens: f.input + f.cached, cached_input_tokens: f.cached, output_tokens: f.output } });
      return 0;
    },
  };
}

function gemini(ctx) {
  const { opts, positionals, f } = ctx;
  const stdin = readStdin();
  const arg = opts.get('--prompt') ?? positionals.join(' ');
  const prompt = [stdin, arg].filter((s) => s !== '').join('\n\n');
  const mode = opts.get('--approval-mode') ?? (opts.has('--yolo') ? 'yolo' : 'default');
  const sessionId = opts.get('--resume') ?? randomUUID();
  const model = opts.get('--model') ?? 'gemini-2.5-pro';
  const json = opts.get('--output-format') === 'json';
  return {
    prompt,
    sessionId,
    readOnly: mode !== 'yolo' && mode !== 'auto_edit',
    head() {
      err('Loaded cached credentials.');
    },
    tail(writes) {
      if (f.error) {
        const text = errorText('gemini', f);
        const code = f.error === 'auth' ? 41 : 1;
        if (json)
          out(
            JSON.stringify(
              { session_id: sessionId, error: { type: f.error === 'auth' ? 'FatalAuthenticationError' : 'Error', message: text, code } },
              null,
              2,
            ),
          );
        else err(text);
        return code;
      }
      if (!json) {
        out(f.text);
        return 0;
      }
      const byName =
        writes.length > 0
          ? {
              write_file: {
                count: writes.length,
                success: writes.filter((w) => w.ok).length,
                fail: writes.filter((w) => !w.ok).length,
                durationMs: 3,
              },
            }
          : {};
      const prompted = f.input + f.cached;
      out(
        JSON.stringify(
          {
            session_id: sessionId,
            response: f.text,
            stats: {
              models: {
                [model]: {
                  api: { totalRequests: 1, totalErrors: 0, totalLatencyMs: 1200 },
                  tokens: {
                    input: f.input,
                    prompt: prompted,
                    candidates: f.output,
                    total: prompted + f.output,
                    cached: f.cached,
                    thoughts: 0,
                    tool: 0,
                  },
                },
              },
              tools: {
                totalCalls: writes.length,
                totalSuccess: writes.filter((w) => w.ok).length,
                totalFail: writes.filter((w) => !w.ok).length,
                byName,
              },
              files: { totalLinesAdded: writes.filter((w) => w.ok).length, totalLinesRemoved: 0 },
            },
          },
          null,
          2,
        ),
      );
      return 0;
    },
  };
}

function aider(ctx) {
  const { opts, f } = ctx;
  let prompt;
  if (opts.has('--message')) prompt = opts.get('--message');
  else if (opts.has('--message-file')) {
    try {
      prompt = readFileSync(opts.get('--message-file'), 'utf8');
    } catch (e) {
      throw new UsageError(`aider: error: cannot read message file: ${e.message}`);
    }
  } else throw new UsageError('fake aider: needs --message or --message-file (the real one would start a chat)');
  const model = opts.get('--model') ?? 'sonnet';
  const dryRun = opts.has('--dry-run');
  return {
    prompt,
    sessionId: null,
    readOnly: dryRun,
    head() {
      out('Aider v0.99.0 (fake)');
      out(`Main model: ${model} with diff edit format, infinite output`);
      out('Git repo: .git with 3 files');
      out('Repo-map: using 4096 tokens, auto refresh');
      out('');
    },
    tail(writes) {
      if (f.error) {
        out(errorText('aider', f));
        return 1;
      }
      out(f.text);
      out('');
      for (const w of writes) out(w.ok ? `Applied edit to ${w.file}` : `Did not apply edit to ${w.file} (--dry-run)`);
      const tokens = `Tokens: ${formatTokens(f.input)} sent${f.cached ? `, ${formatTokens(f.cached)} cache hit` : ''}, ${formatTokens(f.output)} received.`;
      out(f.costUsd === null ? tokens : `${tokens} Cost: $${f.costUsd.toFixed(2)} message, $${f.costUsd.toFixed(2)} session.`);
      return 0;
    },
  };
}

function opencode(ctx) {
  const { opts, positionals, f } = ctx;
  if (positionals[0] !== 'run') throw new UsageError('fake opencode: only `opencode run` is supported');
  const message = positionals.slice(1).join(' ');
  const stdin = readStdin();
  const prompt = [message, stdin].filter((s) => s !== '').join('\n');
  if (prompt.trim() === '') throw new UsageError('Error: You must provide a message or a command');
  let permission = {};
  try {
    permission = JSON.parse(process.env.OPENCODE_PERMISSION ?? '{}') ?? {};
  } catch {
    permission = {};
  }
  const sessionId = opts.get('--session') ?? `ses_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  const json = opts.get('--format') === 'json';
  const event = (type, data) => line({ type, timestamp: Date.now(), sessionID: sessionId, ...data });
  return {
    prompt,
    sessionId,
    readOnly: permission.edit === 'deny' || opts.get('--agent') === 'plan',
    head() {
      if (json) event('step_start', { part: { id: 'prt_fake_0', sessionID: sessionId, messageID: 'msg_fake', type: 'step-start' } });
    },
    tail(writes) {
      if (f.error) {
        const text = errorText('opencode', f);
        if (json) event('error', { error: { name: f.error === 'auth' ? 'ProviderAuthError' : 'APIError', data: { message: text } } });
        else err(`Error: ${text}`);
        return 1;
      }
      if (!json) {
        out(f.text);
        return 0;
      }
      writes.forEach((w, i) => {
        event('tool_use', {
          part: {
            id: `prt_fake_t${i}`,
            type: 'tool',
            tool: 'write',
            callID: `call_${i}`,
            state: w.ok
              ? { status: 'completed', input: { filePath: w.abs, content: '...' }, output: '', title: w.file }
              : {
                  status: 'error',
                  input: { filePath: w.abs },
                  error: `The user has specified a rule which prevents you from using this specific tool call (${w.why})`,
                },
          },
        });
      });
      event('text', { part: { id: 'prt_fake_text', type: 'text', text: f.text, time: { start: Date.now(), end: Date.now() } } });
      event('step_finish', {
        part: {
          id: 'prt_fake_end',
          type: 'step-finish',
          reason: 'stop',
          cost: f.costUsd ?? 0,
          tokens: { input: f.input, output: f.output, reasoning: 0, cache: { read: f.cached, write: 0 } },
        },
      });
      return 0;
    },
  };
}

const PRINTERS = { claude, codex, gemini, aider, opencode };

/** The provider's own wording of an auth or rate-limit failure (matched by Vigil's detectors). */
function errorText(provider, f) {
  if (f.errorText) return f.errorText;
  const auth = {
    claude: 'Invalid API key · Please run /login',
    codex: 'unexpected status 401 Unauthorized: Missing bearer or basic authentication in header',
    gemini: 'API key not valid. Please pass a valid API key. (status 401 Unauthorized)',
    aider:
      'litellm.AuthenticationError: AnthropicException - {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    opencode: 'invalid x-api-key (HTTP 401 Unauthorized)',
  };
  const rate = {
    claude:
      'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit ' +
      'for your organization. Please try again later."}}',
    codex: 'exceeded retry limit, last status: 429 Too Many Requests',
    gemini: '[API Error: 429 Too Many Requests: Resource has been exhausted (e.g. check quota).]',
    aider: 'litellm.RateLimitError: AnthropicException - rate limit exceeded: too many requests',
    opencode: 'Rate limit exceeded: too many requests (HTTP 429)',
  };
  return (f.error === 'auth' ? auth : rate)[provider];
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main() {
  const [provider, ...args] = process.argv.slice(2);
  const cli = CLIS[provider];
  if (!cli) throw new UsageError(USAGE);
  if (args.includes('--version')) {
    out(cli.version);
    return 0;
  }
  if (args.includes('--help') || args.includes('-h')) {
    const sub = provider === 'codex' ? 'exec' : provider === 'opencode' ? 'run' : null;
    out(sub !== null && !args.includes(sub) ? cli.top.join('\n') : renderHelp(cli));
    return 0;
  }
  const { opts, positionals } = parseArgs(cli, args);
  const byRole = roleCall();
  const index = byRole ? null : nextCallIndex();
  const f = figures(byRole ?? loadCall(index));
  const run = PRINTERS[provider]({ provider, opts, positionals, f });

  if (process.env.FAKE_CLI_LOG) {
    const env = {};
    for (const [k, v] of Object.entries(process.env)) if (k.startsWith('VIGIL_') || k === 'OPENCODE_PERMISSION') env[k] = v;
    appendFileSync(
      process.env.FAKE_CLI_LOG,
      `${JSON.stringify({
        provider,
        call: index,
        argv: args,
        cwd: process.cwd(),
        prompt: run.prompt,
        sessionId: run.sessionId,
        readOnly: run.readOnly,
        ...(run.agents ? { agents: run.agents } : {}),
        env,
        credentials: CREDENTIALS[provider].filter((k) => process.env[k]),
        at: new Date().toISOString(),
      })}\n`,
    );
  }

  run.head();
  if (f.sleepMs > 0) await sleep(f.sleepMs);
  const writes = f.error ? [] : applyWrites(f.writes, run.readOnly);
  const code = run.tail(writes);
  return f.exit ?? code;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    err(e instanceof UsageError ? e.message : `fake-cli: ${e.stack ?? e}`);
    process.exitCode = 2;
  },
);
