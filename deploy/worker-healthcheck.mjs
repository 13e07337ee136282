// Health check of a Vigil worker container (the image's HEALTHCHECK): healthy while the Temporal
// frontend at TEMPORAL_ADDRESS accepts a connection from here. A worker process that fails ends
// the container by itself (and the restart policy brings it back), so what a probe can add is
// whether the worker reaches its server: a wrong address, DNS or network trouble show as unhealthy.
import net from 'node:net';

const address = process.env.TEMPORAL_ADDRESS?.trim() || '127.0.0.1:7233';
const m = /^(.*):(\d+)$/.exec(address);
const host = m ? m[1].replace(/^\[|\]$/g, '') : address;
const port = m ? Number(m[2]) : 7233;

const fail = (why) => {
  process.stderr.write(`Temporal at ${address} not reachable: ${why}\n`);
  process.exit(1);
};
const socket = net.connect({ host, port, timeout: 3000 });
socket.on('connect', () => {
  socket.destroy();
  process.exit(0);
});
socket.on('timeout', () => fail('timed out after 3 s'));
socket.on('error', (err) => fail(err.message));
