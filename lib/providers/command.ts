/**
 * Owns the `command` preset: the user's own argv (the agentCommand knob), run as is with the
 * prompt on stdin — the behaviour of activities/agent.ts before presets existed. Vigil knows
 * nothing of the command's output format: the output is plain text, and the model, effort,
 * session and budget fields of the request are not passed (the command reads VIGIL_TIER etc.
 * from the environment the activity sets).
 */
import { plainTextOutput } from './common.js';
import type { Invocation, InvocationRequest, ParsedOutput, ProviderOutput, ProviderPreset } from './types.js';

export const commandPreset: ProviderPreset = {
  name: 'command',
  binary: null,
  credentialEnv: [],
  installHint: null,
  helpArgs: [],
  optionalFlags: [],
  // The command chooses its own model; Vigil passes only the tier (VIGIL_TIER).
  defaultModels: { planning: '', development: '', fast: '' },
  defaultEfforts: null,

  buildInvocation(req: InvocationRequest): Invocation {
    if (!req.baseArgv || req.baseArgv.length === 0) {
      throw new Error('the command provider needs an agent command (the agentCommand knob)');
    }
    return { argv: [...req.baseArgv], stdin: req.prompt, env: {} };
  },

  parseOutput(out: ProviderOutput): ParsedOutput {
    return plainTextOutput(out.text, out.exitCode, null);
  },
};
