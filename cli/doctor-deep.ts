/**
 * Owns what `vigil doctor` says about each provider's model endpoint and key. Offline (the
 * default) it sends nothing and says so: which endpoint a call would reach and with which key
 * variable, not checked. With `--deep` it sends one request for a single output token to that
 * endpoint, with the user's key, and reads the answer: 2xx → the endpoint answers and the key is
 * accepted; 401/403 (Gemini: 400 API_KEY_INVALID) → the key is refused; 429 → the key is accepted
 * but rate limited now; 529/503/5xx → the endpoint is there but failing; no connection →
 * unreachable. Where a call goes is read as the CLI reads it:
 *
 * - claude, aider (Anthropic models by default, through litellm): `ANTHROPIC_BASE_URL` or
 *   api.anthropic.com, `ANTHROPIC_API_KEY`;
 * - codex: its `config.toml` (`$CODEX_HOME`, default `~/.codex`): the provider `model_provider`
 *   names in `[model_providers.<id>]` (`base_url`, `env_key`, `wire_api`), else the built-in
 *   `openai` provider at `openai_base_url` or api.openai.com. codex ignores `OPENAI_BASE_URL`, so
 *   a set `OPENAI_BASE_URL` that differs from where codex goes is a ✗ of its own;
 * - gemini: `GOOGLE_GEMINI_BASE_URL` or generativelanguage.googleapis.com, `GEMINI_API_KEY`;
 * - opencode: the `anthropic` provider's `options.baseURL` / `options.apiKey` in its
 *   `opencode.json`, else not checked (other providers and `opencode auth login` are its own).
 *
 * What this cannot see is listed as not checked (`NOT_CHECKED`): OAuth logins and keychains, the
 * models a run will ask for beyond the one-token request, tool use, quotas beyond this request.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { ProviderName } from '../lib/providers/index.js';

/** The shape of the doctor's check lines (cli/doctor.ts). */
export interface EndpointCheck {
  name: string;
  ok: boolean;
  required: boolean;
  detail: string;
  fix: string | null;
}

export type EndpointApi = 'anthropic' | 'responses' | 'chat' | 'gemini';

/** Where a provider's calls go, as its CLI reads its configuration here. */
export interface EndpointTarget {
  provider: ProviderName;
  api: EndpointApi;
  /** The base URL requests are made under (anthropic and gemini: the root; responses and chat: the `/v1` base). */
  baseUrl: string;
  /** Where the base URL came from, for the line (`ANTHROPIC_BASE_URL`, `~/.codex/config.toml [model_providers.x]`, the default). */
  urlSource: string;
  /** The variable (or config entry) the key is read from, and the key (never printed). */
  keySource: string;
  key: string | null;
  model: string;
}

export type EndpointVerdict = 'ok' | 'key-refused' | 'rate-limited' | 'failing' | 'refused-request' | 'unreachable';

export interface EndpointAnswer {
  verdict: EndpointVerdict;
  status: number | null;
  /** The endpoint's own words (its error message), or the connection error, one line. */
  message: string;
  ms: number;
}

/** What `vigil doctor --deep` cannot check, said plainly in its report. */
export const NOT_CHECKED = [
  'OAuth logins and keychain credentials (claude /login, CLAUDE_CODE_OAUTH_TOKEN, codex login, gemini ' +
    'and opencode auth): only API keys in the environment or the CLI’s config are tried',
  'the models a run asks for (each tier’s): only one small model answered one token',
  'tool use, streaming and long calls: the request asks for one output token',
  'quotas and spend limits beyond this one request',
  'the agent sandbox’s proxy: the request is made from here, not from inside a sandboxed call',
];

const DEFAULTS = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  gemini: 'https://generativelanguage.googleapis.com',
} as const;

const nonBlank = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
const rec = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** codex's config file: `$CODEX_HOME/config.toml`, default `~/.codex/config.toml`. */
export function codexConfigPath(env: NodeJS.ProcessEnv): string {
  return path.join(nonBlank(env.CODEX_HOME) ?? path.join(nonBlank(env.HOME) ?? os.homedir(), '.codex'), 'config.toml');
}

function anthropicTarget(provider: ProviderName, env: NodeJS.ProcessEnv): EndpointTarget {
  const url = nonBlank(env.ANTHROPIC_BASE_URL);
  return {
    provider,
    api: 'anthropic',
    baseUrl: url ?? DEFAULTS.anthropic,
    urlSource: url ? 'ANTHROPIC_BASE_URL' : 'the default',
    keySource: 'ANTHROPIC_API_KEY',
    key: nonBlank(env.ANTHROPIC_API_KEY),
    model: nonBlank(env.ANTHROPIC_DEFAULT_HAIKU_MODEL) ?? nonBlank(env.ANTHROPIC_SMALL_FAST_MODEL) ?? 'claude-haiku-4-5',
  };
}

/**
 * Where codex's calls go, read from its config.toml as codex reads it, and a ✗ for what Vigil
 * would otherwise assume wrongly (OPENAI_BASE_URL set but ignored, a provider named but not
 * declared, a config that does not parse).
 */
export function codexTarget(env: NodeJS.ProcessEnv): { target: EndpointTarget | null; problems: EndpointCheck[]; configLine: string } {
  const file = codexConfigPath(env);
  let config: Record<string, unknown> = {};
  const problems: EndpointCheck[] = [];
  if (existsSync(file)) {
    try {
      config = parseToml(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      const why = err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
      problems.push({
        name: 'codex.config',
        ok: false,
        required: false,
        detail: `${file} does not parse: ${why}`,
        fix: 'fix the TOML: codex refuses to start with it',
      });
      return { target: null, problems, configLine: `${file} (unreadable)` };
    }
  }
  const chosen = nonBlank(config.model_provider);
  const declared = rec(rec(config.model_providers)?.[chosen ?? '']);
  const model = nonBlank(config.model) ?? 'gpt-5.3-codex';
  const envUrl = nonBlank(env.OPENAI_BASE_URL);
  let target: EndpointTarget;
  let configLine: string;
  if (chosen !== null && chosen !== 'openai' && declared === null) {
    problems.push({
      name: 'codex.config',
      ok: false,
      required: false,
      detail: `${file} chooses model_provider = "${chosen}" but declares no [model_providers.${chosen}]`,
      fix: `declare it (base_url, env_key, wire_api) or remove model_provider`,
    });
    return { target: null, problems, configLine: `${file}: provider ${chosen} (not declared)` };
  }
  if (chosen !== null && declared !== null && chosen !== 'openai') {
    const base = nonBlank(declared.base_url) ?? DEFAULTS.openai;
    const keyVar = nonBlank(declared.env_key);
    target = {
      provider: 'codex',
      api: nonBlank(declared.wire_api) === 'chat' ? 'chat' : 'responses',
      baseUrl: base,
      urlSource: `${file} [model_providers.${chosen}]`,
      keySource: keyVar ?? `(no env_key in [model_providers.${chosen}])`,
      key: keyVar ? nonBlank(env[keyVar]) : null,
      model,
    };
    const retries = [declared.request_max_retries, declared.stream_max_retries].map((v) =>
      typeof v === 'number' || typeof v === 'bigint' ? Number(v) : null,
    );
    configLine =
      `${file}: provider ${chosen} at ${base}, request_max_retries ${retries[0] ?? 'unset (codex default)'}, stream_max_retries ` +
      `${retries[1] ?? 'unset (codex default)'}`;
  } else {
    const base = nonBlank(config.openai_base_url);
    target = {
      provider: 'codex',
      api: 'responses',
      baseUrl: base ?? DEFAULTS.openai,
      urlSource: base ? `${file} openai_base_url` : 'the built-in openai provider',
      keySource: nonBlank(env.CODEX_API_KEY) ? 'CODEX_API_KEY' : 'OPENAI_API_KEY',
      key: nonBlank(env.CODEX_API_KEY) ?? nonBlank(env.OPENAI_API_KEY),
      model,
    };
    configLine = `${existsSync(file) ? file : `no ${file}`}: the built-in openai provider at ${target.baseUrl}`;
  }
  if (envUrl !== null && envUrl.replace(/\/+$/, '') !== target.baseUrl.replace(/\/+$/, '')) {
    problems.push({
      name: 'codex.base-url',
      ok: false,
      required: false,
      detail: `OPENAI_BASE_URL is ${envUrl}, but codex ignores it and goes to ${target.baseUrl} (${target.urlSource})`,
      fix:
        `name the endpoint in ${file}: openai_base_url = "${envUrl}" (the built-in provider), or model_provider = "mine" and ` +
        `[model_providers.mine] with base_url = "${envUrl}", env_key = "OPENAI_API_KEY", wire_api = "responses", ` +
        `request_max_retries = 2`,
    });
  }
  return { target, problems, configLine };
}

function opencodeTarget(env: NodeJS.ProcessEnv): EndpointTarget | string {
  const dir = path.join(nonBlank(env.XDG_CONFIG_HOME) ?? path.join(nonBlank(env.HOME) ?? os.homedir(), '.config'), 'opencode');
  const file = ['opencode.json', 'opencode.jsonc', 'config.json'].map((f) => path.join(dir, f)).find((f) => existsSync(f));
  if (file === undefined)
    return `no opencode.json in ${dir}: opencode's provider (its own defaults or \`opencode auth login\`) is not checked`;
  let config: Record<string, unknown> | null = null;
  try {
    config = rec(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return `${file} is not plain JSON (comments?): opencode's provider is not checked`;
  }
  const options = rec(rec(rec(config?.provider)?.anthropic)?.options);
  const base = nonBlank(options?.baseURL);
  if (base === null)
    return `${file} sets no anthropic baseURL: opencode's provider (its own defaults or \`opencode auth login\`) is not checked`;
  const key = nonBlank(options?.apiKey);
  return {
    provider: 'opencode',
    api: 'anthropic',
    // opencode's baseURL ends in /v1; the request path below adds /v1/messages to a root.
    baseUrl: base.replace(/\/v1\/?$/, ''),
    urlSource: `${file} provider.anthropic.options.baseURL`,
    keySource: key ? `${file} provider.anthropic.options.apiKey` : 'ANTHROPIC_API_KEY',
    key: key ?? nonBlank(env.ANTHROPIC_API_KEY),
    model: 'claude-haiku-4-5',
  };
}

/** Where `provider`'s calls go here, or why that cannot be told; plus ✗ lines about its configuration. */
export function endpointTarget(
  provider: ProviderName,
  env: NodeJS.ProcessEnv,
): { target: EndpointTarget | null; why: string | null; problems: EndpointCheck[]; configLine: string | null } {
  switch (provider) {
    case 'claude':
    case 'aider':
      return { target: anthropicTarget(provider, env), why: null, problems: [], configLine: null };
    case 'codex': {
      const c = codexTarget(env);
      return {
        target: c.target,
        why: c.target ? null : 'codex’s configuration names no usable provider',
        problems: c.problems,
        configLine: c.configLine,
      };
    }
    case 'gemini': {
      const url = nonBlank(env.GOOGLE_GEMINI_BASE_URL);
      return {
        target: {
          provider,
          api: 'gemini',
          baseUrl: url ?? DEFAULTS.gemini,
          urlSource: url ? 'GOOGLE_GEMINI_BASE_URL' : 'the default',
          keySource: 'GEMINI_API_KEY',
          key: nonBlank(env.GEMINI_API_KEY),
          model: 'gemini-2.5-flash',
        },
        why: null,
        problems: [],
        configLine: null,
      };
    }
    case 'opencode': {
      const t = opencodeTarget(env);
      return typeof t === 'string'
        ? { target: null, why: t, problems: [], configLine: null }
        : { target: t, why: null, problems: [], configLine: null };
    }
    default:
      return { target: null, why: 'the command provider has no endpoint of its own', problems: [], configLine: null };
  }
}

const trim = (u: string): string => u.replace(/\/+$/, '');

function request(t: EndpointTarget, key: string): { url: string; headers: Record<string, string>; body: unknown } {
  const json = { 'content-type': 'application/json' };
  switch (t.api) {
    case 'anthropic':
      return {
        url: `${trim(t.baseUrl)}/v1/messages`,
        headers: { ...json, 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: { model: t.model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] },
      };
    case 'responses':
      // The Responses API's smallest output bound is 16 tokens; streamed, as codex calls it.
      return {
        url: `${trim(t.baseUrl)}/responses`,
        headers: { ...json, authorization: `Bearer ${key}` },
        body: { model: t.model, input: 'ping', max_output_tokens: 16, stream: true, store: false },
      };
    case 'chat':
      return {
        url: `${trim(t.baseUrl)}/chat/completions`,
        headers: { ...json, authorization: `Bearer ${key}` },
        body: { model: t.model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] },
      };
    case 'gemini':
      return {
        url: `${trim(t.baseUrl)}/v1beta/models/${encodeURIComponent(t.model)}:generateContent`,
        headers: { ...json, 'x-goog-api-key': key },
        body: { contents: [{ role: 'user', parts: [{ text: 'ping' }] }], generationConfig: { maxOutputTokens: 1 } },
      };
  }
}

/** The endpoint's error message, from the vendors' error bodies (`{error: {message}}`), one line. */
function errorMessage(text: string): string {
  try {
    const body = rec(JSON.parse(text));
    const err = body?.error;
    const m = nonBlank(rec(err)?.message) ?? nonBlank(err) ?? nonBlank(body?.message);
    if (m) return m.split('\n')[0]?.slice(0, 200) ?? m;
  } catch {
    /* not JSON */
  }
  return text.trim().split('\n')[0]?.slice(0, 200) ?? '';
}

/** Reads an answer's status into a verdict. */
export function verdictOf(api: EndpointApi, status: number, message: string): EndpointVerdict {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 401 || status === 403) return 'key-refused';
  if (api === 'gemini' && status === 400 && /API[_ ]KEY[_ ]INVALID|API key not valid|API key expired/i.test(message)) return 'key-refused';
  if (status === 429) return 'rate-limited';
  if (status >= 500) return 'failing';
  return 'refused-request';
}

/** Sends the one-token request and reads the answer. Never throws. */
export async function probeEndpoint(t: EndpointTarget, key: string, timeoutMs = 20_000): Promise<EndpointAnswer> {
  const r = request(t, key);
  const started = Date.now();
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    const res = await fetch(r.url, { method: 'POST', headers: r.headers, body: JSON.stringify(r.body), signal: ctl.signal });
    // A stream's status is all that is asked: its body is not waited for.
    const text = res.ok ? '' : await res.text().catch(() => '');
    if (res.ok) await res.body?.cancel().catch(() => undefined);
    return {
      verdict: verdictOf(t.api, res.status, errorMessage(text)),
      status: res.status,
      message: res.ok ? '' : errorMessage(text),
      ms: Date.now() - started,
    };
  } catch (err) {
    const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
    const why = ctl.signal.aborted
      ? `no answer within ${timeoutMs / 1000} s`
      : (cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)));
    return { verdict: 'unreachable', status: null, message: why, ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** The `<provider>.endpoint` line for an answer (or for not asking). */
export function endpointLine(t: EndpointTarget, a: EndpointAnswer | null, required: boolean): EndpointCheck {
  const where = `${t.baseUrl} (${t.urlSource})`;
  const name = `${t.provider}.endpoint`;
  if (a === null) {
    return {
      name,
      ok: true,
      required: false,
      detail: `not checked (offline): calls go to ${where} with ${t.keySource}; \`vigil doctor --deep\` sends a one-token request`,
      fix: null,
    };
  }
  const said = a.message ? `: ${a.message}` : '';
  switch (a.verdict) {
    case 'ok':
      return {
        name,
        ok: true,
        required,
        detail: `${where} answered a one-token request (${t.model}) in ${a.ms} ms: the key in ${t.keySource} is accepted`,
        fix: null,
      };
    case 'rate-limited':
      return {
        name,
        ok: true,
        required,
        detail: `${where} accepted the key in ${t.keySource} but is rate limiting it now (429${said})`,
        fix: null,
      };
    case 'key-refused':
      return {
        name,
        ok: false,
        required,
        detail: `${where}: key refused (${a.status}${said})`,
        fix: `set a valid key in ${t.keySource} where the worker runs`,
      };
    case 'failing':
      return {
        name,
        ok: false,
        required: false,
        detail: `${where} is failing now (${a.status}${said}); the key is not verified`,
        fix: 'retry later; runs wait for the provider meanwhile',
      };
    case 'refused-request':
      return {
        name,
        ok: true,
        required,
        detail: `${where} accepted the key in ${t.keySource} but refused the test request (${a.status}${said}): model ${t.model} may not exist there`,
        fix: null,
      };
    case 'unreachable':
      return {
        name,
        ok: false,
        required,
        detail: `${where} is unreachable (${a.message})`,
        fix: `check the URL (${t.urlSource}) and the network from the worker's machine`,
      };
  }
}
