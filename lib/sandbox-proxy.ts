/**
 * The network proxy of one sandboxed call (docs/security.md, The agent's sandbox). The call runs
 * in a network namespace of its own, whose only way out is this proxy's unix socket, mounted into
 * the sandbox; the sandbox's bridge (sandbox-bridge.ts) makes it reachable there as an HTTP proxy
 * on loopback (the CLIs honour HTTPS_PROXY) and forwards direct connections to loopback ports
 * through it. It lets through exactly the endpoints of the call's allow-list: CONNECT tunnels
 * (https, and any TCP the bridge forwards) and plain-http requests in absolute form (a local model
 * server). Everything else is answered 403 and recorded as a denial, which the call's result
 * carries to the run's record. A connection to a package registry, let through or refused, is also
 * a line of the run's fetch log (rules/package-fetches.ts) and counted in the result.
 *
 * Started by the call's supervisor (supervised-call.ts), so it lives exactly as long as the call
 * and survives a worker crash with it. Node built-ins only: the supervisor must start fast. Node's
 * own http server parses the requests (CONNECT included): no hand-written HTTP parsing, no
 * dependency in the supervisor.
 */
import { chmodSync, closeSync, constants, openSync, rmSync, writeSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { addDenial, allowedTarget, endpointText, parseEndpoint, type Denial, type Endpoint } from './sandbox-net.js';
import { countFetches, fetchLogLine, type FetchCounts, type FetchEntry, type FetchRefusal } from '../rules/package-fetches.js';

/** The package registries as the call's proxy sees them: which endpoints are registries, whether the call may reach them, where fetches are logged. */
export interface PackagesSpec {
  /** Every registry endpoint (reachable or not: a refused one is logged with why). */
  endpoints: Endpoint[];
  /** Why a registry connection is refused when it is (the allow-list decides whether it is). */
  refusal: FetchRefusal;
  /** The run's fetch log (appended, one JSON line a fetch); null: counted only. */
  logPath: string | null;
  /** The call's name in the log. */
  call: string;
}

export interface SandboxProxySpec {
  /** The unix socket to listen on (its folder is mounted into the sandbox). */
  socketPath: string;
  allow: Endpoint[];
  /** The registries (absent: a proxy from before the fetch log, or a call with none). */
  packages?: PackagesSpec | null;
}

export interface SandboxProxy {
  /** The refused attempts so far. */
  denials(): Denial[];
  /** The package fetches so far (connections still open are not counted yet). */
  fetches(): FetchCounts;
  close(): void;
}

/** Appends `line` to the fetch log, refusing a link planted in its place. */
function appendLine(file: string, line: string): void {
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, line);
  } finally {
    closeSync(fd);
  }
}

/** Hop-by-hop headers, and the proxy's own, that are not forwarded. */
const HOP = new Set(['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']);

function refuse(socket: Duplex, target: string): void {
  const body = `vigil sandbox: ${target} is not an endpoint this call may reach (docs/security.md, The agent's sandbox)\n`;
  socket.end(
    `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Listens on `spec.socketPath` until closed. Never throws into the supervisor: a failure to listen leaves the call without a network. */
export function startSandboxProxy(spec: SandboxProxySpec, onError: (message: string) => void): SandboxProxy {
  const denied: Denial[] = [];
  const fetched: FetchEntry[] = [];
  let logFailed = false;
  const pkg = spec.packages ?? null;
  /** The registry endpoint `ep` is, or null when it is none. */
  const registry = (ep: Endpoint | null): Endpoint | null => (pkg && ep ? allowedTarget(ep.host, ep.port, pkg.endpoints) : null);
  const logFetch = (e: Omit<FetchEntry, 'at' | 'call'>): void => {
    if (!pkg) return;
    const entry: FetchEntry = { at: new Date().toISOString(), call: pkg.call.slice(0, 200), ...e, host: e.host.slice(0, 300) };
    fetched.push(entry);
    if (pkg.logPath === null || logFailed) return;
    try {
      appendLine(pkg.logPath, fetchLogLine(entry));
    } catch (err) {
      logFailed = true;
      onError(`the run's fetch log ${pkg.logPath} cannot be written (${(err as Error).message}); fetches are only counted`);
    }
  };
  const open = new Set<Socket | Duplex>();
  const pending = new Set<() => void>();
  const track = <T extends Socket | Duplex>(s: T): T => {
    open.add(s);
    s.once('close', () => open.delete(s));
    s.on('error', () => s.destroy());
    return s;
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('vigil sandbox: a proxy request needs an absolute http:// URL\n');
      return;
    }
    const ep = url.protocol === 'http:' ? parseEndpoint(`${url.protocol}//${url.host}`) : null;
    const target = ep ? allowedTarget(ep.host, ep.port, spec.allow) : null;
    const reg = registry(ep);
    const began = Date.now();
    if (!ep || !target) {
      const shown = ep ? endpointText(ep) : url.host || String(req.url).slice(0, 200);
      addDenial(denied, { kind: 'connect', target: shown });
      if (reg && pkg)
        logFetch({
          host: reg.host,
          port: reg.port,
          method: req.method ?? 'GET',
          url: url.href,
          bytesIn: 0,
          bytesOut: 0,
          ms: 0,
          refused: pkg.refusal,
        });
      res
        .writeHead(403, { 'content-type': 'text/plain', connection: 'close' })
        .end(`vigil sandbox: ${shown} is not an endpoint this call may reach\n`);
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k.toLowerCase())) headers[k] = v;
    let bytesIn = 0;
    let bytesOut = 0;
    req.on('data', (c: Buffer) => (bytesOut += c.length));
    if (reg)
      res.once('close', () =>
        logFetch({
          host: reg.host,
          port: reg.port,
          method: req.method ?? 'GET',
          url: url.href,
          bytesIn,
          bytesOut,
          ms: Date.now() - began,
          refused: null,
        }),
      );
    const upstream = httpRequest(
      { host: target.host, port: target.port, method: req.method, path: `${url.pathname}${url.search}`, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.on('data', (c: Buffer) => (bytesIn += c.length));
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`vigil sandbox: ${endpointText(target)}: ${err.message}\n`);
    });
    req.pipe(upstream);
  });

  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    const ep = parseEndpoint(req.url ?? '');
    const target = ep ? allowedTarget(ep.host, ep.port, spec.allow) : null;
    const reg = registry(ep);
    if (!ep || !target) {
      const shown = ep ? endpointText(ep) : String(req.url).slice(0, 200);
      addDenial(denied, { kind: 'connect', target: shown });
      if (reg && pkg)
        logFetch({ host: reg.host, port: reg.port, method: 'CONNECT', url: null, bytesIn: 0, bytesOut: 0, ms: 0, refused: pkg.refusal });
      refuse(client, shown);
      return;
    }
    const began = Date.now();
    let bytesIn = 0;
    let bytesOut = head.length;
    let connected = false;
    const upstream = track(connect(target.port, target.host));
    if (reg) {
      upstream.on('data', (c: Buffer) => (bytesIn += c.length));
      client.on('data', (c: Buffer) => (bytesOut += c.length));
      // Logged once, when the tunnel closes (or the proxy does, with the call), if it ever connected.
      const ended = (): void => {
        if (!pending.delete(ended) || !connected) return;
        logFetch({
          host: reg.host,
          port: reg.port,
          method: 'CONNECT',
          url: null,
          bytesIn,
          bytesOut,
          ms: Date.now() - began,
          refused: null,
        });
      };
      pending.add(ended);
      upstream.once('close', ended);
      client.once('close', ended);
    }
    upstream.once('connect', () => {
      connected = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('error', (err) => {
      if (client.writable)
        client.end(
          `HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nvigil sandbox: ${endpointText(target)}: ${err.message}\n`,
        );
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  server.on('connection', (s: Socket) => void track(s));
  server.on('clientError', (_err, socket: Duplex) => socket.destroy());
  server.on('error', (err) =>
    onError(`the sandbox's network proxy cannot listen on ${spec.socketPath}: ${err.message}; the call has no network`),
  );
  try {
    rmSync(spec.socketPath, { force: true });
  } catch {
    /* absent */
  }
  server.listen(spec.socketPath, () => {
    try {
      chmodSync(spec.socketPath, 0o600);
    } catch {
      /* gone already */
    }
  });

  return {
    denials: () => denied.map((d) => ({ ...d })),
    fetches: () => countFetches(fetched),
    close: () => {
      server.close();
      for (const end of [...pending]) end();
      for (const s of open) s.destroy();
      try {
        rmSync(spec.socketPath, { force: true });
      } catch {
        /* gone */
      }
    },
  };
}
