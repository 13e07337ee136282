/**
 * Who the operator console answers, as an attacker on the same machine or a web page would try it:
 * `vigil console` processes against the suite's server, plain HTTP requests with the headers a
 * browser or a script sends, and a real Chromium (Debian's `chromium`, as tests/e2e/console.test.ts
 * drives it) on a page of another site.
 *
 * - A body over the cap is 413, before it is read whole: the console's memory stays flat while
 *   200 MB are streamed at it (a 700 MB POST used to grow it by gigabytes).
 * - Another site's requests are refused, GETs included (Sec-Fetch-Site, Origin); the console's
 *   own pages, a person's navigation and a script without those headers are served. In Chromium,
 *   another site's image, fetch and EventSource get 403, and a link from it leads to a page with a
 *   link to click here, which then opens the console.
 * - The live log of a run that does not exist is 404 at once; of a run that exists, a stream.
 * - A script with the bearer token and no Origin sends an action; a browser's cookie without
 *   same-origin proof does not, nor the token from another site's Origin.
 * - After `?token=` (and after naming the operator) the redirect is to a path here, never to
 *   `//other.site`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { ResultPromise } from 'execa';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT, temporalAddress, uniqueId } from '../support/harness.js';
import { startConsoleProcess, type ConsoleProcess } from './cli-helpers.js';
import { patient } from '../support/patience.js';

const CHROMIUM = process.env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';
const consoles: ResultPromise[] = [];
let connection: Connection;
let client: Client;
let browser: Browser | undefined;
const started: string[] = [];

beforeAll(async () => {
  assertBuilt();
  execFileSync('bash', [path.join(ROOT, 'scripts/install-browser.sh')], { stdio: 'inherit', timeout: 600_000 });
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: 'default' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}, patient(900_000));

afterAll(async () => {
  await Promise.all(
    started.map((id) =>
      client.workflow
        .getHandle(id)
        .terminate('console access test')
        .catch(() => undefined),
    ),
  );
  await browser?.close();
  for (const c of consoles) c.kill('SIGTERM');
  await Promise.all(consoles.map((c) => c.catch(() => undefined)));
  await connection?.close();
});

/** `vigil console --port 0 ARGS`, once it serves: its URL, its pid and what it printed. */
async function startConsole(args: string[], env: Record<string, string> = {}): Promise<ConsoleProcess> {
  const c = await startConsoleProcess(['--port', '0', ...args], {
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_NAMESPACE: 'default',
    VIGIL_TASK_QUEUE: uniqueId('console-access'),
    ...env,
  });
  consoles.push(c.child);
  return c;
}

type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

/** One request with exactly these headers (and this raw path). */
function request(
  url: string,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: opts.path ?? `${u.pathname}${u.search}`,
        method: opts.method ?? 'GET',
        headers: opts.headers ?? {},
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const rssKiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

/** Streams `total` bytes of a form at `url` without a length (chunked); resolves with the status once answered. */
function streamBody(url: string, total: number): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: u.origin },
      },
      (res) => {
        answered = true;
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    // Once the console has answered and closed, the rest of the upload fails: expected.
    req.on('error', (err) => (answered ? undefined : reject(err)));
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    let sent = 0;
    const pump = (): void => {
      while (sent < total && !answered && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered && !req.destroyed) req.end();
    };
    req.write('directive=');
    pump();
  });
}

describe('the console', () => {
  it('refuses a body over the cap with 413, before reading it whole', async () => {
    const c = await startConsole([]);
    const action = `${c.url}runs/x/actions`;
    const declared = await request(action, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(c.url).origin,
        'content-length': String(700 * 1024 * 1024),
      },
    }).catch((err: unknown) => ({ status: -1, headers: {}, body: String(err) }));
    expect(declared.status, declared.body).toBe(413);
    expect(declared.body).toMatch(/^refused: a request body here is at most 4 MiB/);
    const before = rssKiB(c.pid);
    expect(await streamBody(action, 200 * 1024 * 1024)).toBe(413);
    const grown = rssKiB(c.pid) - before;
    console.log(`console RSS: ${before} KiB before 200 MB streamed at it, grown by ${grown} KiB`);
    expect(grown).toBeLessThan(64 * 1024);
    // The honest control: an action's form within the cap is read and answered.
    const small = await request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(c.url).origin },
      body: 'action=stop',
    });
    expect(small.status).toBe(422);
    expect(small.body).toContain('no such run');
  });

  it("refuses another site's requests, GETs included; serves its own pages, a person's navigation and a script", async () => {
    const c = await startConsole([]);
    const page = `${c.url}runs`;
    const adversaries: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' },
      { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' },
      { origin: 'http://evil.example' },
      { origin: 'null' },
    ];
    for (const headers of adversaries) {
      const r = await request(`${c.url}fragments/inbox`, { headers });
      expect(r.status, JSON.stringify(headers)).toBe(403);
      expect(r.body).toBe('refused: this console does not answer requests from other sites');
    }
    const followed = await request(`${page}?status=paused`, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } });
    expect(followed.status).toBe(403);
    expect(followed.body).toContain('<a href="/runs?status=paused">');
    const honest: Record<string, string>[] = [
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' },
      { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' },
      {},
      { origin: new URL(c.url).origin },
    ];
    for (const headers of honest) expect((await request(page, { headers })).status, JSON.stringify(headers)).toBe(200);
  });

  it('in Chromium, a page of another site gets 403 for its image, fetch and EventSource; its link leads to a link to click here', async () => {
    const c = await startConsole([]);
    // "Another site": the console is http://127.0.0.1:P; the page is served from http://localhost:Q.
    const other = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><img src="${c.url}fragments/inbox"><a id="go" href="${c.url}runs?status=paused">console</a>
        <script>fetch(${JSON.stringify(`${c.url}fragments/runs`)}, { mode: 'no-cors' }).catch(() => {});
        new EventSource(${JSON.stringify(`${c.url}runs/x/log/stream`)});</script>`);
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    const port = (other.address() as { port: number }).port;
    const tab = await (browser as Browser).newPage();
    try {
      // What the console answered, from the browser's network layer (Chromium then blocks these
      // opaque answers from the page, so Playwright's own events never see their status).
      const cdp = await tab.context().newCDPSession(tab);
      await cdp.send('Network.enable');
      const urls = new Map<string, string>();
      const seen = new Map<string, number>();
      const sites = new Map<string, string>();
      cdp.on('Network.requestWillBeSent', (e) => void urls.set(e.requestId, e.request.url));
      cdp.on('Network.requestWillBeSentExtraInfo', (e) => {
        const site = e.headers['Sec-Fetch-Site'] ?? e.headers['sec-fetch-site'];
        if (site) sites.set(e.requestId, site);
      });
      cdp.on('Network.responseReceivedExtraInfo', (e) => {
        const url = urls.get(e.requestId);
        if (url?.startsWith(c.url) && e.statusCode) seen.set(`${new URL(url).pathname} (${sites.get(e.requestId) ?? '?'})`, e.statusCode);
      });
      await tab.goto(`http://localhost:${port}/`);
      await expect.poll(() => seen.size, { timeout: patient(15_000) }).toBe(3);
      expect(Object.fromEntries(seen)).toEqual({
        '/fragments/inbox (cross-site)': 403,
        '/fragments/runs (cross-site)': 403,
        '/runs/x/log/stream (cross-site)': 403,
      });
      await tab.click('#go');
      await tab.waitForURL(`${c.url}runs?status=paused`);
      expect(await tab.locator('body').textContent()).toContain('does not answer pages of other sites');
      await tab.click('a[href="/runs?status=paused"]');
      await expect.poll(() => tab.title(), { timeout: patient(15_000) }).toMatch(/Runs/);
    } finally {
      await tab.close();
      other.close();
    }
  });

  it('ends the live log of a run that does not exist with 404; a run that exists gets its stream', async () => {
    const c = await startConsole([]);
    const t0 = Date.now();
    const missing = await request(`${c.url}runs/no-such-run-console/log/stream`);
    expect(missing.status).toBe(404);
    expect(missing.body).toBe('no such run: "no-such-run-console" (list runs with `vigil list`)');
    expect(Date.now() - t0).toBeLessThan(15_000);
    // A run that exists (no worker polls its queue, so it waits): an event stream, kept open.
    const id = uniqueId('console-stream');
    await client.workflow.start('vigilRun', { taskQueue: uniqueId('nobody-polls'), workflowId: id, args: [] });
    started.push(id);
    const status = await new Promise<{ status: number; type: string }>((resolve, reject) => {
      const req = http.get(`${c.url}runs/${id}/log/stream`, (res) => {
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']) });
        req.destroy();
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    });
    expect(status).toEqual({ status: 200, type: 'text/event-stream' });
  });
});

describe('the console with its token', () => {
  it("admits a script's action with the bearer token and no Origin; not a cookie without same-origin proof, nor another site's", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-console-home-'));
    const c = await startConsole(['--host', '0.0.0.0'], { VIGIL_HOME: home });
    const token = readFileSync(path.join(home, 'console-token'), 'utf8').trim();
    const base = `http://127.0.0.1:${new URL(c.url).port}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const script = await request(`${base}/runs/x/actions`, {
      method: 'POST',
      headers: { ...form, authorization: `Bearer ${token}` },
      body: 'action=stop',
    });
    expect(script.status, script.body).toBe(422);
    expect(script.body).toContain('no such run');
    const cookie = await request(`${base}/runs/x/actions`, {
      method: 'POST',
      headers: { ...form, cookie: `vigil_console=${token}` },
      body: 'action=stop',
    });
    expect(cookie.status).toBe(403);
    const cookieSameOrigin = await request(`${base}/runs/x/actions`, {
      method: 'POST',
      headers: { ...form, cookie: `vigil_console=${token}`, origin: base },
      body: 'action=stop',
    });
    expect(cookieSameOrigin.status).toBe(422);
    const forged = await request(`${base}/runs/x/actions`, {
      method: 'POST',
      headers: { ...form, authorization: `Bearer ${token}`, origin: 'http://evil.example' },
      body: 'action=stop',
    });
    expect(forged.status).toBe(403);
  });

  it('redirects after ?token= and after naming the operator to a path here only', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-console-home-'));
    const c = await startConsole(['--host', '0.0.0.0'], { VIGIL_HOME: home });
    const token = readFileSync(path.join(home, 'console-token'), 'utf8').trim();
    const base = `http://127.0.0.1:${new URL(c.url).port}`;
    for (const raw of [`//evil.example/?token=${token}`, `//evil.example?token=${token}`, `///evil.example/x?token=${token}`]) {
      const r = await request(base, { path: raw });
      expect(r.status, raw).toBe(303);
      expect(r.headers.location, raw).toBe('/');
    }
    const honest = await request(base, { path: `/runs?token=${token}&status=paused` });
    expect(honest.status).toBe(303);
    expect(honest.headers.location).toBe('/runs?status=paused');
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded', origin: base };
    const named = await request(`${base}/operator`, {
      method: 'POST',
      headers: { ...auth, referer: `${base}//evil.example/` },
      body: 'operator=ana',
    });
    expect(named.headers.location).toBe('/');
    const back = await request(`${base}/operator`, { method: 'POST', headers: { ...auth, referer: `${base}/runs` }, body: 'operator=ana' });
    expect(back.headers.location).toBe('/runs');
  });
});
