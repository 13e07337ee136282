/**
 * Runs inside the sandbox, in its network namespace (loopback only), in front of the sandboxed
 * command: the one way out is the proxy's unix socket (sandbox-proxy.ts) mounted at
 * /run/vigil-proxy/proxy.sock. It listens on 127.0.0.1:<proxy-port> and passes every connection
 * to the proxy as is (the command's HTTPS_PROXY), and on each of the given loopback ports, whose
 * connections it tunnels through the proxy with CONNECT 127.0.0.1:<port> — so a CLI that talks to
 * a local model server directly reaches it when it is allowed, and a connection to one of the
 * worker's own services (the Temporal frontend, the event store) is refused by the proxy and
 * recorded. The bridge has no policy of its own. Then it runs the command, passes signals on and
 * exits as it exits.
 *
 * Usage: node sandbox-bridge.js <socket> <proxy-port> <port,port,...> -- <file> [args...]
 * Node built-ins only. Nothing may import this module: importing it runs the bridge.
 */
import { spawn } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';

const [socketPath, proxyPortText, portsText, sep, file, ...args] = process.argv.slice(2);
if (!socketPath || !proxyPortText || portsText === undefined || sep !== '--' || !file) {
  process.stderr.write('usage: sandbox-bridge.js <socket> <proxy-port> <port,port,...> -- <file> [args...]\n');
  process.exit(64);
}
const proxyPort = Number(proxyPortText);
const ports = portsText
  ? portsText
      .split(',')
      .map(Number)
      .filter((p) => p > 0 && p < 65536)
  : [];

/** Connects to the proxy; the supervisor starts it as the sandbox starts, so a first attempt may come early. */
function toProxy(done: (s: Socket | null) => void, triesLeft = 60): void {
  const s = connect(socketPath as string);
  s.once('connect', () => done(s));
  s.once('error', (err: NodeJS.ErrnoException) => {
    s.destroy();
    if ((err.code === 'ENOENT' || err.code === 'ECONNREFUSED') && triesLeft > 0) setTimeout(() => toProxy(done, triesLeft - 1), 50);
    else done(null);
  });
}

function pipeBoth(a: Socket, b: Socket): void {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.once('close', () => b.destroy());
  b.once('close', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

/** A connection to the proxy port: passed through unchanged. */
function passThrough(client: Socket): void {
  client.pause();
  client.on('error', () => client.destroy());
  toProxy((up) => {
    if (!up) return void client.destroy();
    pipeBoth(client, up);
    client.resume();
  });
}

/** A connection to a loopback port: tunnelled through the proxy as CONNECT 127.0.0.1:<port>; refused, it is closed. */
function tunnel(client: Socket, port: number): void {
  client.pause();
  client.on('error', () => client.destroy());
  toProxy((up) => {
    if (!up) return void client.destroy();
    up.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    let got = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      got = Buffer.concat([got, chunk]);
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) {
        if (got.length > 8192) up.destroy();
        return;
      }
      up.off('data', onData);
      if (!/^HTTP\/1\.[01] 200/.test(got.subarray(0, end).toString('latin1'))) {
        up.destroy();
        client.destroy();
        return;
      }
      const rest = got.subarray(end + 4);
      if (rest.length) client.write(rest);
      pipeBoth(client, up);
      client.resume();
    };
    up.on('data', onData);
    up.once('error', () => client.destroy());
    up.once('close', () => client.destroy());
  });
}

function listen(port: number, host: string, onConn: (s: Socket) => void): Promise<Server | null> {
  return new Promise((resolve) => {
    const server = createServer(onConn);
    server.once('error', () => resolve(null));
    server.listen(port, host, () => resolve(server));
  });
}

async function main(): Promise<void> {
  const proxy = await listen(proxyPort, '127.0.0.1', passThrough);
  if (!proxy) process.stderr.write(`vigil sandbox: cannot listen on 127.0.0.1:${proxyPort}; the command has no network\n`);
  for (const port of ports) {
    await listen(port, '127.0.0.1', (s) => tunnel(s, port));
    await listen(port, '::1', (s) => tunnel(s, port)); // where the namespace has IPv6
  }
  // The command's NODE_EXTRA_CA_CERTS, which the bridge started without (sandbox-bridge-choice.ts, bridgeEnv).
  const ca = process.env.VIGIL_BRIDGE_EXTRA_CA_CERTS;
  if (ca !== undefined) {
    process.env.NODE_EXTRA_CA_CERTS = ca;
    delete process.env.VIGIL_BRIDGE_EXTRA_CA_CERTS;
  }
  // Listening before the command starts, as the Go bridge does: a signal that came between the two
  // would end the bridge alone and leave the command running, holding the call's output open.
  // (A handler runs on a later turn of the loop, after spawn() has returned: the child is there.)
  let child: ReturnType<typeof spawn> | null = null;
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(sig, () => {
      try {
        child?.kill(sig);
      } catch {
        /* gone */
      }
    });
  }
  child = spawn(file as string, args, { stdio: 'inherit' });
  child.once('error', (err: NodeJS.ErrnoException) => {
    process.stderr.write(
      `${file}: ${err.code === 'ENOENT' ? 'command not found' : err.code === 'EACCES' ? 'permission denied' : err.message}\n`,
    );
    process.exit(err.code === 'ENOENT' ? 127 : 126);
  });
  child.once('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}

void main();
