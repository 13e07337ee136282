/**
 * Opens the RunApi (cli/run-api.ts) a fast-path command talks to Temporal through: the light
 * client (cli/wire/client.ts) unless a payload codec key is configured, then the SDK's client
 * (cli/sdk-run-api.ts). Both load only when chosen; no dependencies at load time.
 */
import type { Endpoint } from './endpoint.js';
import type { RunApi } from './run-api.js';

/** True when payloads are encrypted: the light client cannot read or write them. */
export const codecConfigured = (env: NodeJS.ProcessEnv = process.env): boolean => Boolean(env.VIGIL_CODEC_KEY_FILE || env.VIGIL_CODEC_KEY);

/**
 * Runs `fn` with a RunApi for the endpoint and closes it afterwards. The light client unless a
 * payload codec key is configured; then the full client (with its codec), as `connect` makes it.
 */
export async function withRunApi<T>(ep: Endpoint, fn: (api: RunApi) => Promise<T>): Promise<T> {
  let api: RunApi;
  if (codecConfigured()) {
    const [{ connect }, { sdkRunApi }] = await Promise.all([import('./connection.js'), import('./sdk-run-api.js')]);
    const { client, connection } = await connect(ep);
    api = sdkRunApi(client, () => connection.close());
  } else {
    const [{ lightRunApi }, { sayWarnings }] = await Promise.all([import('./wire/client.js'), import('./endpoint.js')]);
    sayWarnings(ep);
    api = lightRunApi(ep);
  }
  try {
    return await fn(api);
  } finally {
    await api.close();
  }
}
