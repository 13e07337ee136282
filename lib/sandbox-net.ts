/**
 * The sandbox network's pure rules, shared by the policy (lib/sandbox-policy.ts) and the
 * proxy the supervisor runs for a sandboxed call (lib/sandbox-proxy.ts, which starts fast:
 * so this module imports nothing). An endpoint is a host and a port; the allow-list matches them
 * exactly, and loopback names (127.0.0.1, localhost, ::1) as one host.
 */

export interface Endpoint {
  host: string;
  port: number;
}

/** One refused attempt, counted (schemas/sandbox.ts SandboxDenialSchema). */
export interface Denial {
  kind: 'connect' | 'write' | 'access';
  target: string;
  count: number;
}

/** Distinct denials kept per call (MAX_SANDBOX_DENIALS in schemas/sandbox.ts). */
export const MAX_DENIALS = 30;

export function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

export function isLoopbackHost(host: string): boolean {
  const h = normalHost(host);
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** `host:port`, `[v6]:port` or an http(s) URL as an endpoint (a URL without a port: 80 or 443); null when it is neither. */
export function parseEndpoint(text: string): Endpoint | null {
  const t = text.trim();
  if (/^https?:\/\//i.test(t)) {
    try {
      const u = new URL(t);
      const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
      return u.hostname ? { host: normalHost(u.hostname), port } : null;
    } catch {
      return null;
    }
  }
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(t);
  if (!m) return null;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: normalHost(m[1] as string), port } : null;
}

export const endpointText = (e: Endpoint): string => (e.host.includes(':') ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`);

/**
 * The allowed endpoint a connection to `host:port` may go to, or null: the same host and port, or
 * for a loopback name any allowed loopback endpoint of that port (the sandbox's bridge only knows
 * the port a local connection was made to).
 */
export function allowedTarget(host: string, port: number, allow: readonly Endpoint[]): Endpoint | null {
  const h = normalHost(host);
  const exact = allow.find((e) => e.port === port && e.host === h);
  if (exact) return exact;
  if (isLoopbackHost(h)) return allow.find((e) => e.port === port && isLoopbackHost(e.host)) ?? null;
  return null;
}

/** Adds `d` to `list` (counting repeats), keeping at most MAX_DENIALS distinct ones. */
export function addDenial(list: Denial[], d: { kind: Denial['kind']; target: string; count?: number }): void {
  const found = list.find((x) => x.kind === d.kind && x.target === d.target);
  if (found) found.count += d.count ?? 1;
  else if (list.length < MAX_DENIALS) list.push({ kind: d.kind, target: d.target.slice(0, 300), count: d.count ?? 1 });
}
