/**
 * Where the client finds Temporal and Vigil's task queue (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * VIGIL_TASK_QUEUE, VIGIL_UI_URL), connecting with an error that says what to do, and making sure
 * Vigil's search attributes exist on the server.
 */
import { codecFromEnv } from '../workers/codec.js';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../schemas/search-attributes.js';
import { DEFAULT_TASK_QUEUE } from '../workers/worker.js';

export interface Endpoint {
  address: string;
  namespace: string;
  taskQueue: string;
  uiUrl: string;
}

export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** CLI exit codes beyond the run outcome codes (0 done/stopped, 1 failed, 20 terminal). */
export const EXIT = {
  usage: 2,
  noSuchRun: 3,
  unreachable: 4,
  notReached: 5,
  timeout: 124,
} as const;

export function endpointFromEnv(env: NodeJS.ProcessEnv = process.env): Endpoint {
  const address = env.TEMPORAL_ADDRESS?.trim() || '127.0.0.1:7233';
  const [host, port] = splitHostPort(address);
  return {
    address,
    namespace: env.TEMPORAL_NAMESPACE?.trim() || 'default',
    taskQueue: env.VIGIL_TASK_QUEUE?.trim() || DEFAULT_TASK_QUEUE,
    uiUrl: (env.VIGIL_UI_URL?.trim() || `http://${host === '0.0.0.0' ? 'localhost' : host}:${port + 1000}`).replace(/\/+$/, ''),
  };
}

export function splitHostPort(address: string): [string, number] {
  const m = /^(.*):(\d+)$/.exec(address);
  if (!m) return [address, 7233];
  return [(m[1] as string).replace(/^\[|\]$/g, ''), Number(m[2])];
}

export function runUrl(ep: Endpoint, workflowId: string): string {
  return `${ep.uiUrl}/namespaces/${encodeURIComponent(ep.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

export async function connect(ep: Endpoint): Promise<{ client: Client; connection: Connection }> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ address: ep.address, connectTimeout: 5000 });
    await connection.withDeadline(Date.now() + 5000, () => connection.workflowService.getSystemInfo({}));
  } catch (err) {
    throw new CliError(
      `cannot reach Temporal at ${ep.address} (${err instanceof Error ? err.message.split('\n')[0] : String(err)}).\n` +
        'Start a server with `vigil server` (or `vigil up`), or set TEMPORAL_ADDRESS.',
      EXIT.unreachable,
    );
  }
  // With a codec key configured, what the CLI sends is encrypted and what it reads decrypted.
  const codec = codecFromEnv();
  return { client: new Client({ connection, namespace: ep.namespace, ...(codec ? { dataConverter: { payloadCodecs: [codec] } } : {}) }), connection };
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

/** Registers Vigil's search attributes in the namespace when they are missing (idempotent). */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const have = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = SEARCH_ATTRIBUTES.filter((k) => !have.has(k.name));
  if (missing.length === 0) return [];
  const T = proto.temporal.api.enums.v1.IndexedValueType;
  const protoType: Record<string, proto.temporal.api.enums.v1.IndexedValueType> = {
    KEYWORD: T.INDEXED_VALUE_TYPE_KEYWORD,
    INT: T.INDEXED_VALUE_TYPE_INT,
    TEXT: T.INDEXED_VALUE_TYPE_TEXT,
    BOOL: T.INDEXED_VALUE_TYPE_BOOL,
    DOUBLE: T.INDEXED_VALUE_TYPE_DOUBLE,
    DATETIME: T.INDEXED_VALUE_TYPE_DATETIME,
    KEYWORD_LIST: T.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  };
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((k) => [k.name, protoType[k.type] as proto.temporal.api.enums.v1.IndexedValueType])),
  });
  return missing.map((k) => k.name);
}
