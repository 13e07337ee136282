// Health check of a Vigil worker container (the image's HEALTHCHECK, and the compose service's):
// healthy while the worker's /readyz answers 200, that is while every worker of the process is
// running and polling its task queues (workers/metrics-server.ts). /readyz is served on the
// metrics endpoint, VIGIL_METRICS_BIND (the image sets 0.0.0.0:9464; asked here on the loopback
// when it binds every interface). A worker that cannot reach Temporal, has stopped polling or is
// still starting shows as unhealthy; its last task time is printed with the answer.
//
// Without VIGIL_METRICS_BIND (a worker run without a metrics endpoint) there is no /readyz: the
// check then only says whether the Temporal frontend at TEMPORAL_ADDRESS accepts a connection.
/* global fetch, AbortSignal */
import net from 'node:net';

const fail = (why) => {
  process.stderr.write(`${why}\n`);
  process.exit(1);
};

const bind = process.env.VIGIL_METRICS_BIND?.trim();
if (bind) {
  const m = /^(\[[^\]]*\]|[^:[\]]*):(\d+)$/.exec(bind);
  if (!m) fail(`VIGIL_METRICS_BIND "${bind}" is not HOST:PORT`);
  const host = ['0.0.0.0', '[::]', ''].includes(m[1]) ? '127.0.0.1' : m[1];
  const url = `http://${host}:${m[2]}/readyz`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    const body = await res.text();
    if (res.status !== 200) fail(`${url} answered ${res.status}: ${body.trim()}`);
    process.stdout.write(body);
    process.exit(0);
  } catch (err) {
    fail(`${url} did not answer: ${err instanceof Error ? err.message : String(err)}`);
  }
} else {
  const address = process.env.TEMPORAL_ADDRESS?.trim() || '127.0.0.1:7233';
  const m = /^(.*):(\d+)$/.exec(address);
  const host = m ? m[1].replace(/^\[|\]$/g, '') : address;
  const port = m ? Number(m[2]) : 7233;
  const socket = net.connect({ host, port, timeout: 3000 });
  socket.on('connect', () => {
    socket.destroy();
    process.exit(0);
  });
  socket.on('timeout', () => fail(`Temporal at ${address} not reachable: timed out after 3 s`));
  socket.on('error', (err) => fail(`Temporal at ${address} not reachable: ${err.message}`));
}
