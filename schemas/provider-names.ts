/**
 * The agent providers a run can name (knob `provider`). No dependencies: the CLI offers them as
 * choices without loading the knob schemas.
 */
export const PROVIDERS = ['command', 'claude', 'codex', 'gemini', 'aider', 'opencode', 'cline'] as const;
