/**
 * The environment the worker hands to what it starts for a run (an agent, a test run, a gate's
 * tools): its own, minus the worker's Temporal, codec and event-store settings (the store's URL
 * holds its password) and its secret.
 */

/** The worker's own settings, never handed to an agent, a test run or a gate's tools. */
const WORKER_ONLY = new Set(['VIGIL_WORKER_SECRET', 'DATABASE_URL', 'VIGIL_DATABASE_URL']);

/**
 * The worker's environment for a child, minus the worker's own Temporal, codec and event-store
 * settings (the store's URL holds its password).
 */
export function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('TEMPORAL_') && !k.startsWith('VIGIL_CODEC_') && !WORKER_ONLY.has(k)) env[k] = v;
  }
  return env;
}
