/**
 * The package fetches of a sandboxed call: what the sandbox's proxy (lib/sandbox-proxy.ts) lets
 * through to a package registry, or refuses there, one JSON line each in the run's fetch log
 * (`.vigil/runs/<run>/packages.jsonl`), and the counts a call's report carries to the run
 * (schemas/sandbox.ts, PackageFetchesSchema). A fetch is one connection through the proxy: an
 * https tunnel (whose requests the proxy cannot see; npm and pip keep one open for many) or a
 * plain-http request. Pure, and imports nothing: the supervisor that runs the proxy starts fast,
 * and the workflow adds the counts up (rules/sandbox.ts, noteSandbox).
 */

/** Why a registry connection was refused: the run closed the registries, or the call is a reviewing role's (never online). */
export type FetchRefusal = 'closed' | 'reviewing';

/** One line of the fetch log. */
export interface FetchEntry {
  /** When the connection ended (ISO). */
  at: string;
  /** The call that made it (its log's name: `iteration-0003`, `tests-0003`...). */
  call: string;
  host: string;
  port: number;
  /** CONNECT for a tunnel, else the plain-http request's method. */
  method: string;
  /** A plain-http request's URL (a tunnel's path is not visible); null for a tunnel. */
  url: string | null;
  /** Bytes from the registry to the call, and from the call to the registry. */
  bytesIn: number;
  bytesOut: number;
  /** How long the connection lasted. */
  ms: number;
  /** Why the proxy refused it, or null when it went through. */
  refused: FetchRefusal | null;
}

/** What the run's record keeps of a call's (or a run's) fetches: counts, by host. */
export interface FetchCounts {
  fetches: number;
  bytes: number;
  hosts: { host: string; fetches: number; bytes: number }[];
  refused: number;
  refusedHosts: string[];
  /** Why fetches were refused: 'closed' once one was because the run closed the registries, else why the latest was (null: none was). */
  refusedWhy: FetchRefusal | null;
}

/** Hosts listed at most (a run's fetches beyond them are still counted). */
export const MAX_FETCH_HOSTS = 12;

export const emptyFetchCounts = (): FetchCounts => ({ fetches: 0, bytes: 0, hosts: [], refused: 0, refusedHosts: [], refusedWhy: null });

/** `counts` with `more` added (hosts merged, at most MAX_FETCH_HOSTS of each list kept, the first seen). */
export function addFetchCounts(counts: FetchCounts, more: FetchCounts): FetchCounts {
  const hosts = counts.hosts.map((h) => ({ ...h }));
  for (const h of more.hosts) {
    const same = hosts.find((x) => x.host === h.host);
    if (same) {
      same.fetches += h.fetches;
      same.bytes += h.bytes;
    } else if (hosts.length < MAX_FETCH_HOSTS) hosts.push({ ...h });
  }
  const refusedHosts = [...counts.refusedHosts];
  for (const h of more.refusedHosts) if (!refusedHosts.includes(h) && refusedHosts.length < MAX_FETCH_HOSTS) refusedHosts.push(h);
  return {
    fetches: counts.fetches + more.fetches,
    bytes: counts.bytes + more.bytes,
    hosts,
    refused: counts.refused + more.refused,
    refusedHosts,
    // 'closed' stays once a fetch was refused because the run closed the registries: that is what a person must change.
    refusedWhy: counts.refusedWhy === 'closed' ? 'closed' : (more.refusedWhy ?? counts.refusedWhy),
  };
}

/** The counts of some fetch log entries. */
export function countFetches(entries: readonly FetchEntry[]): FetchCounts {
  let out = emptyFetchCounts();
  for (const e of entries) {
    const bytes = e.bytesIn + e.bytesOut;
    out = addFetchCounts(
      out,
      e.refused
        ? { fetches: 0, bytes: 0, hosts: [], refused: 1, refusedHosts: [e.host], refusedWhy: e.refused }
        : { fetches: 1, bytes, hosts: [{ host: e.host, fetches: 1, bytes }], refused: 0, refusedHosts: [], refusedWhy: null },
    );
  }
  return out;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isText = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

/** One fetch log line as an entry, or null when it is not one (a torn or foreign line). */
export function parseFetchLine(line: string): FetchEntry | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (!isText(o.at, 40) || Number.isNaN(Date.parse(o.at)) || !isText(o.call, 200) || !isText(o.host, 300) || !isText(o.method, 20))
    return null;
  if (!isCount(o.port) || o.port === 0 || o.port > 65535 || !isCount(o.bytesIn) || !isCount(o.bytesOut) || !isCount(o.ms)) return null;
  if (o.url !== null && !isText(o.url, 2000)) return null;
  if (o.refused !== null && o.refused !== 'closed' && o.refused !== 'reviewing') return null;
  return {
    at: o.at,
    call: o.call,
    host: o.host,
    port: o.port,
    method: o.method,
    url: o.url,
    bytesIn: o.bytesIn,
    bytesOut: o.bytesOut,
    ms: o.ms,
    refused: o.refused,
  };
}

/** A fetch log's entries, in order, and how many lines were not entries (a line torn by a crash mid-write). */
export function parseFetchLog(text: string): { entries: FetchEntry[]; skipped: number } {
  const entries: FetchEntry[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const e = parseFetchLine(line);
    if (e) entries.push(e);
    else skipped++;
  }
  return { entries, skipped };
}

/** The log line of an entry (JSON, newline-terminated; the URL shortened to 2000 characters). */
export function fetchLogLine(e: FetchEntry): string {
  return `${JSON.stringify({ ...e, url: e.url === null ? null : e.url.slice(0, 2000) })}\n`;
}

/** Bytes in a person's units (B, kB, MB, GB; powers of 1000, as npm and pip print them). */
export function byteText(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = -1;
  // 999,999 B is 1.0 MB, not "1000 kB".
  while ((v >= 1000 || (u >= 0 && Math.round(v) >= 1000)) && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

/** The run's closing knob, as a person sets it (docs/knobs.md). */
const OPEN_HOW = 'sandboxRegistries=true (`--set sandboxRegistries=true`, VIGIL_SANDBOX_REGISTRIES=1 or vigil.config.json; the default)';

/**
 * What `vigil status` and the console say of a run's package fetches: how many, from which hosts,
 * and the refused ones with why and what opens them ("14 fetch(es) from registry.npmjs.org (9,
 * 1.2 MB), pypi.org (5, 300 kB)"). `log`: where each fetch is listed, when known.
 */
export function packagesLines(c: FetchCounts, log: string | null): string[] {
  const lines: string[] = [];
  const plural = (n: number): string => `${n} fetch${n === 1 ? '' : 'es'}`;
  if (c.fetches > 0) {
    const listed = c.hosts.reduce((n, h) => n + h.fetches, 0);
    const hosts = c.hosts.map((h) => `${h.host} (${h.fetches}, ${byteText(h.bytes)})`).join(', ');
    const others = c.fetches > listed ? `, ${c.fetches - listed} from other hosts` : '';
    lines.push(`${plural(c.fetches)} from ${hosts}${others}; ${byteText(c.bytes)} in all${log ? `; each in ${log}` : ''}`);
  }
  if (c.refused > 0) {
    const where = c.refusedHosts.join(', ');
    const why =
      c.refusedWhy === 'closed'
        ? `the package registries are closed for this run (sandboxRegistries=false), so an install fails; ${OPEN_HOW} opens them ` +
          `for the builder and the test runs of a new run`
        : 'reviewing roles (reviewers, council, checklist, verifier) never reach the package registries, whatever sandboxRegistries says';
    lines.push(`${plural(c.refused)} to ${where} refused: ${why}`);
  }
  return lines;
}
