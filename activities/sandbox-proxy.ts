/**
 * The network proxy of one sandboxed call (docs/security.md, The agent's sandbox). The call runs
 * in a network namespace of its own, whose only way out is this proxy's unix socket, mounted into
 * the sandbox; the sandbox's bridge (sandbox-bridge.ts) makes it reachable there as an HTTP proxy
 * on loopback (the CLIs honour HTTPS_PROXY) and forwards direct connections to loopback ports
 * through it. It lets through exactly the endpoints of the call's allow-list: CONNECT tunnels
 * (https, and any TCP the bridge forwards) and plain-http requests in absolute form (a local model
 * server). Everything else is answered 403 and recorded as a denial, which the call's result
 * carries to the run's record.
 *
 * Started by the call's supervisor (supervised-call.ts), so it lives exactly as long as the call
 * and survives a worker crash with it. Node built-ins only: the supervisor must start fast. Node's
 * own http server parses the requests (CONNECT included): no hand-written HTTP parsing, no
 * dependency in the supervisor.
 */
import { chmodSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { addDenial, allowedTarget, endpointText, parseEndpoint, type Denial, type Endpoint } from './sandbox-net.js';

export interface SandboxProxySpec {
  /** The unix socket to listen on (its folder is mounted into the sandbox). */
  socketPath: string;
  allow: Endpoint[];
}

export interface SandboxProxy {
  /** The refused attempts so far. */
  denials(): Denial[];
  close(): void;
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
  const open = new Set<Socket | Duplex>();
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
    if (!ep || !target) {
      const shown = ep ? endpointText(ep) : url.host || String(req.url).slice(0, 200);
      addDenial(denied, { kind: 'connect', target: shown });
      res
        .writeHead(403, { 'content-type': 'text/plain', connection: 'close' })
        .end(`vigil sandbox: ${shown} is not an endpoint this call may reach\n`);
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k.toLowerCase())) headers[k] = v;
    const upstream = httpRequest(
      { host: target.host, port: target.port, method: req.method, path: `${url.pathname}${url.search}`, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
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
    if (!ep || !target) {
      const shown = ep ? endpointText(ep) : String(req.url).slice(0, 200);
      addDenial(denied, { kind: 'connect', target: shown });
      refuse(client, shown);
      return;
    }
    const upstream = track(connect(target.port, target.host));
    upstream.once('connect', () => {
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
    close: () => {
      server.close();
      for (const s of open) s.destroy();
      try {
        rmSync(spec.socketPath, { force: true });
      } catch {
        /* gone */
      }
    },
  };
}
