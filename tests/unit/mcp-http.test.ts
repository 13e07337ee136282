/**
 * `vigil mcp --http`'s front door (cli/mcp-http.ts), a real HTTP server on a loopback port with
 * Vigil's MCP server behind it, driven by the MCP SDK's own client and by plain requests (no
 * Temporal: the tools used here need none). Without the token every request is 401, with a wrong
 * one too; the token file is private (0600 in a 0700 folder), made once and kept; run as the user
 * `nobody` (where this test runs as root), another local user can neither read it nor get in.
 * With the token: a foreign Host (DNS rebinding), a web page's Origin or Sec-Fetch-Site is 403;
 * sessions are capped (503 beyond, a free slot once one ends) and an idle one expires (404 for
 * its id, the client starts another), while a session in use stays; an oversized body is 413.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveKnobs } from '../../cli/config.js';
import type { Endpoint } from '../../cli/endpoint.js';
import { buildMcpServer, Temporal, type McpDeps } from '../../cli/mcp.js';
import { MAX_MCP_BODY_BYTES, MCP_TOKEN_FILE, startMcpHttp, type RunningMcpHttp } from '../../cli/mcp-http.js';

const deps: McpDeps = {
  endpoint: (): Endpoint => {
    throw new Error('no Temporal in this test');
  },
  resolve: () => Promise.resolve(resolveKnobs({ flags: {}, sets: [], env: {}, cwd: process.cwd() })),
  validateId: (id) => id,
};

const running: RunningMcpHttp[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  for (const r of running.splice(0)) await r.close();
});

async function serve(
  opts: { home?: string; maxSessions?: number; idleMs?: number } = {},
): Promise<{ http: RunningMcpHttp; token: string; home: string }> {
  // Under a folder anyone may pass through, so `nobody` is stopped by the token file's own modes.
  const home = opts.home ?? path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-mcp-http-')), 'home');
  const http = await startMcpHttp({ port: 0, home, newServer: () => buildMcpServer(deps, new Temporal(deps.endpoint), 'http'), ...opts });
  running.push(http);
  return { http, token: readFileSync(path.join(home, MCP_TOKEN_FILE), 'utf8').trim(), home };
}

async function connect(url: string, token: string | null): Promise<Client> {
  const client = new Client({ name: 'unit', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
  );
  clients.push(client);
  return client;
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A raw initialize (or any body): status, a session id, the error message. */
async function post(
  url: string,
  headers: Record<string, string>,
  body = INIT,
): Promise<{ status: number; session: string | null; message: string }> {
  const res = await fetch(url, { method: 'POST', headers: { ...ACCEPT, ...headers }, body });
  const text = await res.text();
  const message = /"message":"((?:[^"\\]|\\.)*)"/.exec(text)?.[1] ?? '';
  return { status: res.status, session: res.headers.get('mcp-session-id'), message };
}

describe('vigil mcp --http: the token', () => {
  it('refuses every request without the token (401, naming the file), and with a wrong one; the MCP client gets in with it', async () => {
    const { http, token, home } = await serve();
    expect(http.tokenCreated).toBe(true);
    expect(http.tokenFile).toBe(path.join(home, MCP_TOKEN_FILE));
    const none = await post(http.url, {});
    expect(none.status).toBe(401);
    expect(none.message).toContain(`the token in ${http.tokenFile}`);
    expect(none.message).not.toContain(token);
    expect((await post(http.url, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(http.url, { authorization: token })).status).toBe(401);
    expect((await fetch(http.url, { headers: { accept: 'text/event-stream' } })).status).toBe(401);
    await expect(connect(http.url, null)).rejects.toThrow(/401|unauthorised/i);

    const client = await connect(http.url, token);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('vigil_start');
  });

  it('keeps the token private, makes it once and keeps it', async () => {
    const { http, token, home } = await serve();
    expect(statSync(http.tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await http.close();
    running.pop();
    const again = await serve({ home });
    expect(again.http.tokenCreated).toBe(false);
    expect(again.token).toBe(token);
  });

  it('is out of reach of another local user: `nobody` can neither read the token nor get in (as root, with setpriv)', async () => {
    const { http, token, home } = await serve();
    // The folder above the home lets anyone through: only the home's and the file's modes keep nobody out.
    execFileSync('chmod', ['0755', path.dirname(home)]);
    const asNobody = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');
    if (!asNobody) {
      // Not root here: the modes above are what keep another user out (checked in the test before).
      expect(statSync(http.tokenFile).mode & 0o077).toBe(0);
      return;
    }
    // Not spawnSync: the server answers from this process's event loop.
    const run = (args: string[]) =>
      execa('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', ...args], { reject: false, timeout: 30_000 });
    const cat = await run(['cat', http.tokenFile]);
    expect(cat.exitCode).not.toBe(0);
    expect(cat.stderr).toMatch(/Permission denied/);
    expect(cat.stdout).not.toContain(token);
    // nobody's own request (what a local process of another user sends): 401.
    const script =
      `fetch(${JSON.stringify(http.url)}, { method: 'POST', headers: ${JSON.stringify(ACCEPT)}, body: ` +
      `${JSON.stringify(INIT)} }).then((r) => console.log(r.status))`;
    const req = await run([process.execPath, '-e', script]);
    expect(req.stdout.trim(), req.stderr).toBe('401');
  });
});

describe('vigil mcp --http: Host, Origin, sessions, body size', () => {
  it('refuses a foreign Host and a web page, even with the token; a client of its own origin is fine', async () => {
    const { http, token } = await serve();
    const auth = { authorization: `Bearer ${token}` };
    const port = http.port;
    // DNS rebinding: the page's own name in Host.
    const rebound = await new Promise<number>((resolve, reject) => {
      import('node:http')
        .then(({ request }) => {
          const r = request(
            { host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { ...ACCEPT, ...auth, host: `evil.example:${port}` } },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          r.on('error', reject);
          r.end(INIT);
        })
        .catch(reject);
    });
    expect(rebound).toBe(403);
    const page = await post(http.url, { ...auth, origin: 'http://evil.example' });
    expect(page.status).toBe(403);
    expect(page.message).toMatch(/a request from a web page/);
    expect((await post(http.url, { ...auth, origin: `http://localhost:${port + 1}` })).status).toBe(403);
    expect((await post(http.url, { ...auth, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post(http.url, { ...auth, 'sec-fetch-site': 'same-site' })).status).toBe(403);
    // The honest controls: no Origin (an MCP client), or this server's own.
    expect((await post(http.url, auth)).status).toBe(200);
    expect((await post(http.url, { ...auth, origin: `http://127.0.0.1:${port}` })).status).toBe(200);
  });

  it('caps the sessions: one more is 503 until one ends', async () => {
    const { http, token } = await serve({ maxSessions: 3 });
    const auth = { authorization: `Bearer ${token}` };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await post(http.url, auth);
      expect(r.status).toBe(200);
      ids.push(r.session as string);
    }
    expect(http.sessions()).toBe(3);
    const over = await post(http.url, auth);
    expect(over.status).toBe(503);
    expect(over.message).toMatch(/too many sessions: at most 3 at once/);
    expect(http.sessions()).toBe(3);
    // A client that ends its session frees a place.
    const ended = await fetch(http.url, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': ids[0] as string } });
    expect(ended.status).toBe(200);
    expect(http.sessions()).toBe(2);
    expect((await post(http.url, auth)).status).toBe(200);
  });

  it('ends a session left idle (its id is then 404); one in use, or with its event stream open, stays', async () => {
    const { http, token } = await serve({ idleMs: 1500 });
    const auth = { authorization: `Bearer ${token}` };
    const idle = (await post(http.url, auth)).session as string;
    const busy = (await post(http.url, auth)).session as string;
    // The SDK's client holds a stream of server events open while it is connected: not idle.
    const connected = await connect(http.url, token);
    expect(http.sessions()).toBe(3);
    const ping = (session: string) =>
      post(http.url, { ...auth, 'mcp-session-id': session }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }));
    const until = Date.now() + 4500;
    while (Date.now() < until) {
      expect((await ping(busy)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(http.sessions()).toBe(2);
    const gone = await ping(idle);
    expect(gone.status).toBe(404);
    expect(gone.message).toMatch(/no such session .*initialize a new one/);
    expect((await ping(busy)).status).toBe(200);
    expect((await connected.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('refuses a body over the cap (413) without reading it whole', async () => {
    const { http, token } = await serve();
    const big = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"${'x'.repeat(MAX_MCP_BODY_BYTES)}"}}`;
    const r = await post(http.url, { authorization: `Bearer ${token}` }, big);
    expect(r.status).toBe(413);
    expect(r.message).toMatch(/request body too large/);
  });
});
