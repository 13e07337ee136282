/**
 * The address of a worker's Prometheus endpoint (`--metrics-bind HOST:PORT`, VIGIL_METRICS_BIND),
 * checked as the SDK core will take it. No dependencies: the CLI checks it before loading the SDK.
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
