/**
 * The address of a worker's Prometheus endpoint (`--metrics-bind HOST:PORT`, VIGIL_METRICS_BIND),
 * checked as the SDK core will take it, and the `Host` names the endpoint answers to
 * (VIGIL_METRICS_HOSTS; workers/metrics-server.ts refuses the others). No dependencies: the CLI
 * checks it before loading the SDK.
 */

/** A bad --metrics-bind (or the port is taken): the message says what to pass instead. */
export class MetricsBindError extends Error {
  override name = 'MetricsBindError';
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * `HOST:PORT` as the SDK core takes it (an IP literal and a port): `0.0.0.0:9464`,
 * `127.0.0.1:9464`, `[::]:9464`; `localhost` is taken as 127.0.0.1. Throws MetricsBindError.
 */
export function parseMetricsBind(raw: string, what = '--metrics-bind'): string {
  const s = raw.trim();
  const example = `e.g. ${what} 0.0.0.0:9464 (every interface) or 127.0.0.1:9464 (this machine only)`;
  const m = /^(\[[^\]]*\]|[^:[\]]*):(\d{1,5})$/.exec(s);
  if (!m) throw new MetricsBindError(`${what} "${raw}" is not HOST:PORT; ${example}`);
  let host = m[1] as string;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) throw new MetricsBindError(`${what} "${raw}": the port must be from 1 to 65535; ${example}`);
  if (host === 'localhost') host = '127.0.0.1';
  const v6 = host.startsWith('[') ? host.slice(1, -1) : null;
  const validV6 = v6 !== null && /^[0-9a-fA-F:.]+$/.test(v6) && v6.includes(':');
  if (!IPV4.test(host) && !validV6)
    throw new MetricsBindError(`${what} "${raw}": the host must be an IP address (or localhost); ${example}`);
  return `${host}:${port}`;
}

/** A host name as VIGIL_METRICS_HOSTS lists it: DNS labels (letters, digits, `-`), dot-separated. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * VIGIL_METRICS_HOSTS: the names (comma-separated) a scraper may reach the endpoint by besides
 * loopback names, IP addresses and this machine's name, e.g. a compose service name. Throws
 * MetricsBindError on anything that is not a host name.
 */
export function parseMetricsHosts(raw: string | undefined, what = 'VIGIL_METRICS_HOSTS'): string[] {
  const names = (raw ?? '')
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  for (const n of names)
    if (!HOST_NAME.test(n))
      throw new MetricsBindError(
        `${what}: "${n}" is not a host name; list the names Prometheus scrapes by, e.g. ${what}=vigil-worker,metrics.internal`,
      );
  return names;
}

/** The canonical form of a host as a URL carries it (IPv4 in dotted decimal, IPv6 compressed, in brackets), or null. */
function canonicalHost(host: string): string | null {
  try {
    return new URL(`http://${host}/`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

const isIpLiteral = (h: string): boolean => h.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(h);

/**
 * Whether a request's `Host` header names this endpoint in a way no other site's page can: a
 * loopback name (`localhost`, 127.x.x.x, [::1]), this machine's name, a name the operator listed
 * (VIGIL_METRICS_HOSTS), or the bind address — any IP address when bound to every interface
 * (0.0.0.0, [::]). A page that re-binds its own name to this machine (DNS rebinding) sends its own
 * name, and is refused; an IP address cannot be re-bound. The port is not compared (a published
 * container port may differ).
 */
export function metricsHostAllowed(hostHeader: string | undefined, bind: string, names: readonly string[], machine = ''): boolean {
  // A Host header is a name or an address and a port: nothing else (no user part) is read.
  if (!hostHeader || !/^[A-Za-z0-9.\-[\]:]+$/.test(hostHeader.trim())) return false;
  const host = canonicalHost(hostHeader.trim());
  if (!host) return false;
  if (host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)) return true;
  if (isIpLiteral(host)) {
    const bound = canonicalHost(bind.slice(0, bind.lastIndexOf(':')));
    return bound === '0.0.0.0' || bound === '[::]' || bound === host;
  }
  return names.includes(host) || (machine !== '' && host === machine.toLowerCase());
}
