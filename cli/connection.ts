/**
 * Where the CLI and the worker find Temporal, resolved exactly as the `temporal` CLI resolves it
 * (@temporalio/envconfig): a profile of temporal.toml (`--profile`, else TEMPORAL_PROFILE, else
 * `default`; the file from TEMPORAL_CONFIG_FILE or the default location), overridden by
 * TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS* and TEMPORAL_GRPC_META_*;
 * defaults 127.0.0.1:7233 and namespace `default`. Plus Vigil's own VIGIL_TASK_QUEUE and
 * VIGIL_UI_URL. Every connection, client or worker, takes its options from `connectionOptions`.
 * Also: Vigil's search attributes, which only an explicit step registers (`vigil setup
 * --search-attributes`; `vigil server` registers them in its own dev server).
 *
 * Light to import (the CLI resolves the endpoint at startup): the client library, the protos
 * and the codec are loaded when a connection is made. What needs no envconfig (the Endpoint type,
 * addresses, messages, the plain local endpoint) is in cli/endpoint.ts.
 */
import type { Client, Connection, TLSConfig } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { loadClientConfigProfile, toClientOptions, type ClientConfigProfile, type ClientConnectConfig } from '@temporalio/envconfig';
import { DEFAULT_TASK_QUEUE } from '../lib/paths.js';
import {
  configFileFor,
  DEFAULT_ADDRESS,
  DEFAULT_NAMESPACE,
  sayWarnings,
  unreachable,
  uiUrlFor,
  type Endpoint,
  type EndpointOptions,
} from './endpoint.js';
import { CliError, EXIT } from './errors.js';

export {
  configFileFor,
  DEFAULT_ADDRESS,
  DEFAULT_NAMESPACE,
  describeEndpoint,
  joinHostPort,
  runUrl,
  sayWarnings,
  splitHostPort,
  uiUrlFor,
  unreachable,
  type Endpoint,
  type EndpointOptions,
} from './endpoint.js';

export { CliError, EXIT } from './errors.js';

/**
 * The environment as envconfig reads it: defined values only, and a TEMPORAL_* setting that is
 * empty or blank counts as unset (as it always did for Vigil), not as an empty address.
 */
function configEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (k.startsWith('TEMPORAL_') && !k.startsWith('TEMPORAL_GRPC_META_')) {
      if (v.trim() === '') continue;
      out[k] = k.endsWith('_DATA') ? v : v.trim();
    } else {
      out[k] = v;
    }
  }
  return out;
}

const truthy = (v: string | undefined): boolean => v === '1' || v === 'true';

export function endpointFromEnv(env: NodeJS.ProcessEnv = process.env, opts: EndpointOptions = {}): Endpoint {
  const vars = configEnv(env);
  const profileName = opts.profile?.trim() || undefined;
  let profile: ClientConfigProfile;
  let config: ClientConnectConfig;
  try {
    profile = loadClientConfigProfile({ ...(profileName ? { profile: profileName } : {}), overrideEnvVars: vars });
    // TLS files are read here: a missing CA or key is a settings error before anything connects.
    config = toClientOptions(profile);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const where = /profile '.*' not found/i.test(message)
      ? ` (config file: ${configFileFor(vars)}; set TEMPORAL_CONFIG_FILE to use another)`
      : '';
    throw new CliError(`Temporal connection settings: ${message}${where}`, EXIT.usage);
  }
  const co = config.connectionOptions;
  const address = co.address || DEFAULT_ADDRESS;
  const warnings: string[] = [];
  if (truthy(vars.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION)) {
    warnings.push(
      "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by Temporal's TypeScript SDK: Vigil still checks the server's host name; " +
        "set TEMPORAL_TLS_SERVER_NAME to a name in the server's certificate instead",
    );
  }
  return {
    address,
    namespace: config.namespace || DEFAULT_NAMESPACE,
    taskQueue: vars.VIGIL_TASK_QUEUE?.trim() || DEFAULT_TASK_QUEUE,
    uiUrl: uiUrlFor(address, vars),
    ...(co.tls !== undefined && co.tls !== null ? { tls: co.tls } : {}),
    ...(co.apiKey ? { apiKey: co.apiKey } : {}),
    ...(profile.grpcMeta && Object.keys(profile.grpcMeta).length ? { metadata: profile.grpcMeta } : {}),
    ...(profileName ? { profile: profileName } : {}),
    ...(warnings.length ? { warnings } : {}),
  };
}

/**
 * The endpoint of a plain local dev server at `address` (one Vigil started, or one flags named):
 * no TLS, API key or headers meant for another server, the namespace and task queue kept.
 */
export function localEndpoint(ep: Endpoint, address: string, uiUrl?: string | null): Endpoint {
  return {
    address,
    namespace: ep.namespace,
    taskQueue: ep.taskQueue,
    uiUrl: uiUrl && !process.env.VIGIL_UI_URL?.trim() ? uiUrl : uiUrlFor(address),
  };
}

/** Options shared by the client's `Connection.connect` and the worker's `NativeConnection.connect`. */
export interface ConnectOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** The one place connection options come from: every client and worker connection uses this. */
export function connectionOptions(ep: Endpoint): ConnectOptions {
  return {
    address: ep.address,
    ...(ep.tls !== undefined ? { tls: ep.tls } : {}),
    ...(ep.apiKey ? { apiKey: ep.apiKey } : {}),
    ...(ep.metadata ? { metadata: { ...ep.metadata } } : {}),
  };
}

export async function connect(ep: Endpoint): Promise<{ client: Client; connection: Connection }> {
  sayWarnings(ep);
  const { Client, Connection } = await import('@temporalio/client');
  let connection: Connection;
  try {
    // Connecting asks the server for its system info once: the one round trip that says it answers.
    connection = await Connection.connect({ ...connectionOptions(ep), connectTimeout: 5000 });
  } catch (err) {
    throw unreachable(ep, err);
  }
  // With a codec key configured, what the CLI sends is encrypted and what it reads decrypted.
  const codec =
    process.env.VIGIL_CODEC_KEY_FILE || process.env.VIGIL_CODEC_KEY ? (await import('../workers/codec.js')).codecFromEnv() : null;
  return {
    client: new Client({ connection, namespace: ep.namespace, ...(codec ? { dataConverter: { payloadCodecs: [codec] } } : {}) }),
    connection,
  };
}

/** Runs `fn` with a connected client and closes the connection afterwards, whatever happens. */
export async function withClient<T>(ep: Endpoint, fn: (client: Client, connection: Connection) => Promise<T>): Promise<T> {
  const { client, connection } = await connect(ep);
  try {
    return await fn(client, connection);
  } finally {
    await connection.close();
  }
}

/** Vigil's search attributes the namespace lacks; null when the server does not say (e.g. no right to list them). */
export async function missingSearchAttributes(connection: Connection, namespace: string): Promise<string[] | null> {
  const { SEARCH_ATTRIBUTES } = await import('../schemas/search-attributes.js');
  try {
    const existing = await connection.withDeadline(Date.now() + 10_000, () =>
      connection.operatorService.listSearchAttributes({ namespace }),
    );
    const have = new Set(Object.keys(existing.customAttributes ?? {}));
    return SEARCH_ATTRIBUTES.filter((k) => !have.has(k.name)).map((k) => k.name);
  } catch {
    return null;
  }
}

/** Temporal's names of the search attribute types (as `temporal operator search-attribute create --type` takes them). */
type IndexedValueType = temporal.api.enums.v1.IndexedValueType;

const SA_TYPES: Record<string, string> = {
  VigilStatus: 'Keyword',
  VigilIteration: 'Int',
  VigilRepo: 'Keyword',
  VigilProvider: 'Keyword',
  VigilRelease: 'Keyword',
};

/** The commands that add `names` to the endpoint's namespace: the temporal CLI's, one per attribute, then Temporal Cloud's. */
export function searchAttributeCommands(names: readonly string[], ep: Endpoint): { temporal: string[]; cloud: string } {
  const profile = ep.profile ? ` --profile ${ep.profile}` : '';
  return {
    temporal: names.map(
      (n) =>
        `temporal operator search-attribute create${profile} --namespace ${ep.namespace} --name ${n} --type ${SA_TYPES[n] ?? 'Keyword'}`,
    ),
    cloud:
      `tcld namespace search-attributes add --namespace ` +
      `${ep.namespace} ${names.map((n) => `--search-attribute ${n}=${SA_TYPES[n] ?? 'Keyword'}`).join(' ')}`,
  };
}

/** What `vigil start` says, once, when the run started without Vigil's search attributes. */
export function searchAttributeHint(missing: readonly string[], ep: Endpoint, refusal?: string): string {
  const cmds = searchAttributeCommands(missing, ep);
  // Only the release stamp missing: the run has the others, not the release that started it.
  const stampOnly = !refusal && missing.length === 1 && missing[0] === 'VigilRelease';
  return [
    stampOnly
      ? `vigil: namespace "${ep.namespace}" lacks Vigil's search attribute VigilRelease; the run started without its release stamp, ` +
        'so `vigil doctor` and `vigil worker` cannot tell which release started it (docs/operations.md, Upgrading Vigil under open runs).'
      : `vigil: namespace "${ep.namespace}" ` +
        `${refusal ? `refused Vigil's search attributes (${refusal})` : `lacks Vigil's search attributes ${missing.join(', ')}`}; ` +
        'the run started without them, so `vigil list` and the Web UI cannot show or filter runs by status.',
    `Someone allowed to change the namespace adds them once, with \`vigil setup --search-attributes${ep.profile ? ` --profile ${ep.profile}` : ''}\`, or:`,
    ...cmds.temporal.map((c) => `  ${c}`),
    'or, on Temporal Cloud:',
    `  ${cmds.cloud}`,
  ].join('\n');
}

/**
 * Registers Vigil's search attributes in the namespace when they are missing (idempotent); the
 * names it added. Needs the right to change the namespace: without it, says how else to add them.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string, ep?: Endpoint): Promise<string[]> {
  const [{ SEARCH_ATTRIBUTES }, { default: proto }] = await Promise.all([
    import('../schemas/search-attributes.js'),
    import('@temporalio/proto'),
  ]);
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const have = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = SEARCH_ATTRIBUTES.filter((k) => !have.has(k.name));
  if (missing.length === 0) return [];
  const T = proto.temporal.api.enums.v1.IndexedValueType;
  const protoType: Record<string, IndexedValueType> = {
    KEYWORD: T.INDEXED_VALUE_TYPE_KEYWORD,
    INT: T.INDEXED_VALUE_TYPE_INT,
    TEXT: T.INDEXED_VALUE_TYPE_TEXT,
    BOOL: T.INDEXED_VALUE_TYPE_BOOL,
    DOUBLE: T.INDEXED_VALUE_TYPE_DOUBLE,
    DATETIME: T.INDEXED_VALUE_TYPE_DATETIME,
    KEYWORD_LIST: T.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  };
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, protoType[k.type] as IndexedValueType])),
    });
  } catch (err) {
    const names = missing.map((k) => k.name);
    const cmds = searchAttributeCommands(names, ep ?? { address: '', namespace, taskQueue: '', uiUrl: '' });
    throw new CliError(
      `cannot add the search attributes ${names.join(', ')} to namespace "${namespace}": ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n` +
        `Someone allowed to change the namespace adds them with:\n${cmds.temporal.map((c) => `  ${c}`).join('\n')}\nor, on ` +
        `Temporal Cloud (Cloud UI, or):\n  ${cmds.cloud}`,
      1,
    );
  }
  return missing.map((k) => k.name);
}
