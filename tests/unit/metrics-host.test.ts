/**
 * The worker's metrics endpoint answers only to names no other site's page can send
 * (workers/metrics-bind.ts metricsHostAllowed, workers/metrics-server.ts): a page that re-binds
 * its own name to the worker (DNS rebinding) sends that name in Host and gets 403, so it cannot
 * read run ids and spend. Prometheus keeps scraping: on loopback by a loopback name, on a
 * configured address by that address, on every interface by any IP address, and by the names
 * listed in VIGIL_METRICS_HOSTS (a compose service name) or this machine's name. Real servers
 * on free ports, plain HTTP requests with the Host a scraper or a page would send.
 */
import { request } from 'node:http';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../workers/dev-server.js';
import { MetricsBindError, metricsHostAllowed, parseMetricsHosts } from '../../workers/metrics-bind.js';
import { serveMetrics, type MetricsEndpoint } from '../../workers/metrics-server.js';

const open: MetricsEndpoint[] = [];
afterEach(async () => {
  for (const e of open.splice(0)) await e.close();
});

/** GET `path` from 127.0.0.1:port with this Host header. */
function get(port: number, host: string, path = '/healthz'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('metricsHostAllowed', () => {
  it('takes loopback names, the bind address, any IP on every interface, the listed names and this machine’s name', () => {
    const loopback = '127.0.0.1:9464';
    for (const h of ['127.0.0.1:9464', 'localhost:9464', 'LOCALHOST', '127.0.0.2:1', '[::1]:9464'])
      expect(metricsHostAllowed(h, loopback, []), h).toBe(true);
    expect(metricsHostAllowed('10.0.0.5:9464', '10.0.0.5:9464', [])).toBe(true);
    expect(metricsHostAllowed('10.0.0.6:9464', '10.0.0.5:9464', [])).toBe(false);
    expect(metricsHostAllowed('10.0.0.6:19464', '0.0.0.0:9464', [])).toBe(true);
    expect(metricsHostAllowed('[fd00::5]:9464', '[::]:9464', [])).toBe(true);
    expect(metricsHostAllowed('vigil-worker:9464', '0.0.0.0:9464', ['vigil-worker'])).toBe(true);
    expect(metricsHostAllowed('Worker-1:9464', '0.0.0.0:9464', [], 'worker-1')).toBe(true);
  });

  it('refuses a page’s own name (DNS rebinding), a name not listed, and Host headers that are not a host', () => {
    for (const h of ['evil.example:9464', 'evil.example', '127.0.0.1.evil.example:9464', 'localhost.evil.example', 'vigil-worker:9464'])
      expect(metricsHostAllowed(h, '0.0.0.0:9464', []), h).toBe(false);
    expect(metricsHostAllowed('evil.example:9464', '127.0.0.1:9464', ['vigil-worker'])).toBe(false);
    for (const h of [undefined, '', 'evil@127.0.0.1', '127.0.0.1/x', 'a b'])
      expect(metricsHostAllowed(h, '127.0.0.1:9464', []), String(h)).toBe(false);
  });

  it('reads VIGIL_METRICS_HOSTS as host names, refusing anything else', () => {
    expect(parseMetricsHosts(' vigil-worker, Metrics.Internal ,')).toEqual(['vigil-worker', 'metrics.internal']);
    expect(parseMetricsHosts(undefined)).toEqual([]);
    expect(() => parseMetricsHosts('vigil-worker,*')).toThrow(MetricsBindError);
    expect(() => parseMetricsHosts('http://x')).toThrow(/VIGIL_METRICS_HOSTS: "http:\/\/x" is not a host name/);
  });
});

describe('the metrics endpoint', () => {
  it('on loopback, answers loopback names and refuses a re-bound page (403, saying what to do)', async () => {
    const port = await freePort();
    open.push(await serveMetrics(`127.0.0.1:${port}`, undefined, ''));
    expect((await get(port, `127.0.0.1:${port}`)).status).toBe(200);
    expect((await get(port, `localhost:${port}`, '/metrics')).status).toBe(200);
    const page = await get(port, `evil.example:${port}`, '/metrics');
    expect(page.status).toBe(403);
    expect(page.body).toMatch(/^refused: Host "evil\.example:\d+" is not a name this endpoint answers to .*VIGIL_METRICS_HOSTS/);
    expect(page.body).not.toMatch(/vigil_/);
  });

  it('on every interface, Prometheus scrapes it by IP address, by a listed name and by this machine’s name', async () => {
    const port = await freePort();
    open.push(await serveMetrics(`0.0.0.0:${port}`, undefined, 'vigil-worker'));
    const scrape = await get(port, `10.9.8.7:${port}`, '/metrics');
    expect(scrape.status).toBe(200);
    expect(scrape.body).toMatch(/^# HELP vigil_/m);
    expect((await get(port, `vigil-worker:${port}`, '/metrics')).status).toBe(200);
    expect((await get(port, `${os.hostname()}:${port}`)).status).toBe(200);
    expect((await get(port, `attacker.example:${port}`, '/metrics')).status).toBe(403);
    expect((await get(port, `other-service:${port}`, '/metrics')).status).toBe(403);
  });

  it('refuses a bad VIGIL_METRICS_HOSTS before it listens (exit 2 in the CLI)', async () => {
    const port = await freePort();
    await expect(serveMetrics(`127.0.0.1:${port}`, undefined, 'good,bad name')).rejects.toThrow(MetricsBindError);
  });
});
