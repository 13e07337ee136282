/**
 * The endpoint as the CLI uses it, without the settings machinery: its type, addresses and URLs,
 * how it is described in messages, "cannot reach Temporal", and the plain endpoint of an
 * environment that names at most an address and a namespace (resolved here without loading
 * @temporalio/envconfig; everything else goes through `endpointFromEnv` in cli/connection.ts).
 * No dependencies beyond node and cli/errors.ts, lib/logging.ts, lib/paths.ts.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { logLine } from '../lib/logging.js';
import { DEFAULT_TASK_QUEUE } from '../lib/paths.js';
import { CliError, EXIT } from './errors.js';

export const DEFAULT_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_NAMESPACE = 'default';

export interface Endpoint {
  address: string;
  namespace: string;
  taskQueue: string;
  uiUrl: string;
  /** TLS: off when absent or false; `true` with the system's roots; or a server CA, client cert and key, server name. */
  tls?: TLSConfig | boolean;
  /** Sent as a bearer token (TLS is on with it unless TLS was turned off explicitly). */
  apiKey?: string;
  /** gRPC headers sent with every call (TEMPORAL_GRPC_META_*, `grpc_meta` of a profile). */
  metadata?: Record<string, string>;
  /** The profile named by `--profile` (hints repeat it to the `temporal` CLI; TEMPORAL_PROFILE needs no repeating). */
  profile?: string;
  /** What the settings ask for that Vigil cannot do; said once, on stderr, when connecting. */
  warnings?: string[];
}

export interface EndpointOptions {
  /** `--profile NAME`: beats TEMPORAL_PROFILE. */
  profile?: string;
}

/** Where envconfig looks for temporal.toml when TEMPORAL_CONFIG_FILE is unset (for messages). */
export function configFileFor(env: Record<string, string>): string {
  if (env.TEMPORAL_CONFIG_FILE) return env.TEMPORAL_CONFIG_FILE;
  const home = env.HOME ?? os.homedir();
  if (process.platform === 'win32') return path.join(env.APPDATA ?? home, 'temporalio', 'temporal.toml');
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'temporalio', 'temporal.toml');
  const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  return path.join(xdg, 'temporalio', 'temporal.toml');
}

/** The Web UI for an address: VIGIL_UI_URL, Temporal Cloud's UI for a Cloud endpoint, else the dev server's (port + 1000). */
export function uiUrlFor(address: string, env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.VIGIL_UI_URL?.trim();
  if (explicit) return explicit.replace(/\/+$/, '');
  const [host, port] = splitHostPort(address);
  if (/\.tmprl\.cloud$/i.test(host)) return 'https://cloud.temporal.io';
  return `http://${host === '0.0.0.0' ? 'localhost' : host.includes(':') ? `[${host}]` : host}:${port + 1000}`;
}

export function splitHostPort(address: string): [string, number] {
  const m = /^(.*):(\d+)$/.exec(address);
  if (!m) return [address.replace(/^\[|\]$/g, ''), 7233];
  return [(m[1] as string).replace(/^\[|\]$/g, ''), Number(m[2])];
}

export function joinHostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function runUrl(ep: Endpoint, workflowId: string): string {
  return `${ep.uiUrl}/namespaces/${encodeURIComponent(ep.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** The address with what secures it, for messages (never the key itself). */
export function describeEndpoint(ep: Endpoint): string {
  const how = [ep.tls ? 'TLS' : null, ep.apiKey ? 'API key' : null, ep.profile ? `profile ${ep.profile}` : null].filter(Boolean);
  return how.length ? `${ep.address} (${how.join(', ')})` : ep.address;
}

const warned = new Set<string>();
/** Says each of the endpoint's warnings once per process, on stderr. */
export function sayWarnings(ep: Endpoint): void {
  for (const w of ep.warnings ?? []) {
    if (warned.has(w)) continue;
    warned.add(w);
    logLine('WARN', `vigil: warning: ${w}`);
  }
}

export function unreachable(ep: Endpoint, err: unknown): CliError {
  return new CliError(
    `cannot reach Temporal at ${describeEndpoint(ep)} (${err instanceof Error ? err.message.split('\n')[0] : String(err)}).\n` +
      'Start a server with `vigil server` (or `vigil up`), or point Vigil at yours: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, ' +
      'or a temporal.toml profile (--profile NAME, TEMPORAL_PROFILE), as for the temporal CLI.',
    EXIT.unreachable,
  );
}

/**
 * The endpoint of an environment with no profile (no --profile, TEMPORAL_PROFILE or
 * TEMPORAL_CONFIG_FILE, no temporal.toml at the default location) and no TEMPORAL_* setting but
 * TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE: exactly what `endpointFromEnv` makes of it, without
 * loading envconfig. Null for anything else (TLS, API key, headers, profiles): ask `endpointFromEnv`.
 */
export function plainEndpoint(env: NodeJS.ProcessEnv = process.env, profile?: string): Endpoint | null {
  if (profile?.trim()) return null;
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith('TEMPORAL_') || v === undefined || k === 'TEMPORAL_ADDRESS' || k === 'TEMPORAL_NAMESPACE') continue;
    // envconfig keeps a header setting even when empty (it removes the header); any other blank setting counts as unset.
    if (k.startsWith('TEMPORAL_GRPC_META_') || v.trim() !== '') return null;
  }
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) vars[k] = v;
  if (existsSync(configFileFor(vars))) return null;
  const address = env.TEMPORAL_ADDRESS?.trim() || DEFAULT_ADDRESS;
  return {
    address,
    namespace: env.TEMPORAL_NAMESPACE?.trim() || DEFAULT_NAMESPACE,
    taskQueue: env.VIGIL_TASK_QUEUE?.trim() || DEFAULT_TASK_QUEUE,
    uiUrl: uiUrlFor(address, env),
  };
}
