/**
 * Owns the registry of provider presets: `PROVIDERS` maps each provider name to its pure preset
 * (argv building and output parsing; see types.ts), `PROVIDER_NAMES` lists them, and the shared
 * types and the --help reader are re-exported so callers import from one place.
 */
import { aiderPreset } from './aider.js';
import { clinePreset } from './cline.js';
import { claudePreset } from './claude.js';
import { codexPreset } from './codex.js';
import { commandPreset } from './command.js';
import { geminiPreset } from './gemini.js';
import { opencodePreset } from './opencode.js';
import { PROVIDER_NAMES, type ProviderName, type ProviderPreset } from './types.js';

export const PROVIDERS: Readonly<Record<ProviderName, ProviderPreset>> = {
  command: commandPreset,
  claude: claudePreset,
  codex: codexPreset,
  gemini: geminiPreset,
  aider: aiderPreset,
  opencode: opencodePreset,
  cline: clinePreset,
};

export function isProviderName(s: string): s is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(s);
}

export { PROVIDER_NAMES };
export { advertisedFlags } from './help.js';
export type {
  ApiFailure,
  ApiFailureKind,
  Invocation,
  InvocationRequest,
  InvocationRole,
  ParsedOutput,
  ProviderName,
  ProviderOutput,
  ProviderPreset,
  ProviderTier,
  ProviderUsage,
} from './types.js';
