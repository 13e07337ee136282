/**
 * Whether a provider can take a call on this worker: its CLI is installed (and answers --help)
 * and one of its credential variables is set. Used before failing over to it.
 */
import { PROVIDERS } from './providers/index.js';
import { credentialState, probeCached } from './providers/probe.js';

export async function providerHealth(input: { provider: string }): Promise<{ ok: boolean; problem: string | null }> {
  const preset = PROVIDERS[input.provider as keyof typeof PROVIDERS];
  if (!preset || preset.binary === null) return { ok: false, problem: `${input.provider} cannot take over a run` };
  // gemini can take 10+ s to print its help on a busy machine.
  const probe = await probeCached(preset, { timeoutMs: 30_000 });
  if (probe.binaryPath === null || probe.problem) return { ok: false, problem: probe.problem ?? `${preset.binary} not found` };
  if (!credentialState(preset).some((c) => c.set)) return { ok: false, problem: `none of ${preset.credentialEnv.join(', ')} is set` };
  return { ok: true, problem: null };
}
