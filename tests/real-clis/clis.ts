/**
 * Owns where the real-CLI suite finds the real agent CLIs and how it points each at the local
 * model server: the pins (scripts/real-clis.pins, the one place versions are named), the cache
 * scripts/install-real-clis.sh installs them into, and per CLI the environment and config files
 * that send its API calls to the server with a fake key, in a HOME of the suite's own.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { ProviderName } from '../../lib/providers/index.js';
import { ROOT } from '../support/harness.js';

export const REAL_CLI_NAMES = ['claude', 'codex', 'aider', 'gemini', 'opencode'] as const satisfies readonly ProviderName[];
export type RealCliName = (typeof REAL_CLI_NAMES)[number];

const PinSchema = z.object({
  provider: z.enum(REAL_CLI_NAMES),
  registry: z.enum(['npm', 'pypi']),
  package: z.string().min(1),
  version: z.string().min(1),
  binary: z.string().min(1),
});
export type Pin = z.infer<typeof PinSchema>;

export function readPins(file = path.join(ROOT, 'scripts/real-clis.pins')): Pin[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [provider, registry, pkg, version, binary] = l.split(/\s+/);
      return PinSchema.parse({ provider, registry, package: pkg, version, binary });
    });
}

export function cacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return process.env.VIGIL_REAL_CLIS_DIR || path.join(xdg, 'vigil', 'real-clis');
}

/** The installed binary of a pinned CLI, or null when install-real-clis.sh has not installed it. */
export function installedBinary(pin: Pin, dir = cacheDir()): string | null {
  const home = path.join(dir, `${pin.provider}-${pin.version}`);
  const bin = path.join(home, 'bin', pin.binary);
  return existsSync(path.join(home, '.installed')) && existsSync(bin) ? bin : null;
}

export const FAKE_KEY = 'sk-vigil-real-cli-test-key';

/**
 * The environment that points every CLI at the model server, and their config files written into
 * `home` (used as HOME, so nothing of the person's own configuration or credentials is read).
 */
export function cliEnvironment(serverUrl: string, home: string): Record<string, string> {
  mkdirSync(path.join(home, '.codex'), { recursive: true });
  // codex ignores OPENAI_BASE_URL and will not let the built-in `openai` provider be redefined:
  // a provider of its own, served over HTTP (no websocket), with its own retries kept short.
  writeFileSync(
    path.join(home, '.codex', 'config.toml'),
    [
      'model_provider = "vigil-test"',
      '',
      '[model_providers.vigil-test]',
      'name = "Vigil test model server"',
      `base_url = "${serverUrl}/v1"`,
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      'supports_websockets = false',
      'request_max_retries = 1',
      'stream_max_retries = 1',
      'stream_idle_timeout_ms = 120000',
      '',
    ].join('\n'),
  );
  // gemini: with GOOGLE_GEMINI_BASE_URL alone it picks a "gateway" auth it then refuses in headless mode.
  mkdirSync(path.join(home, '.gemini'), { recursive: true });
  // general.maxAttempts: gemini's own retries of a failing request (10 by default, no flag or variable for it).
  writeFileSync(
    path.join(home, '.gemini', 'settings.json'),
    `${JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, general: { maxAttempts: 2 } })}\n`,
  );
  mkdirSync(path.join(home, '.config', 'opencode'), { recursive: true });
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    provider: { anthropic: { options: { baseURL: `${serverUrl}/v1`, apiKey: FAKE_KEY } } },
  };
  writeFileSync(path.join(home, '.config', 'opencode', 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
  return {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    // claude, and aider through litellm (Anthropic models by default)
    ANTHROPIC_BASE_URL: serverUrl,
    ANTHROPIC_API_KEY: FAKE_KEY,
    // claude refuses --dangerously-skip-permissions as root unless told it runs in a sandbox (CI runs as root).
    IS_SANDBOX: '1',
    DISABLE_AUTOUPDATER: '1',
    // codex
    OPENAI_API_KEY: FAKE_KEY,
    // gemini
    GEMINI_API_KEY: FAKE_KEY,
    GOOGLE_GEMINI_BASE_URL: serverUrl,
    GEMINI_CLI_NO_RELAUNCH: 'true',
    // opencode: no models.dev download, no update check
    OPENCODE_DISABLE_MODELS_FETCH: 'true',
    OPENCODE_DISABLE_AUTOUPDATE: 'true',
    NO_COLOR: '1',
    // The agent sandbox lets the CLIs reach the model server: ANTHROPIC_BASE_URL and
    // GOOGLE_GEMINI_BASE_URL name it, but codex and opencode read it from their own configuration
    // files, so the worker names it as an endpoint (docs/security.md, The agent's sandbox).
    VIGIL_SANDBOX_ALLOW: serverUrl,
  };
}
