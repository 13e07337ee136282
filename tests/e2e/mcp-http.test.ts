/**
 * `vigil mcp --http` as the operator's MCP client and as everyone else on the machine meet it: a
 * `vigil mcp --http` process beside a `vigil worker --require-signed-runs` (the same VIGIL_HOME, so
 * the same run secret; the token is made by the server in it). Without the token every request is
 * 401, and as the user `nobody` the token file cannot be read; with it, the tools are served, but a
 * foreign Host or a web page's Origin is 403; sessions are capped; a PRD outside the repository is
 * refused; a run it starts is signed and the signed-runs worker runs it, while the same run without
 * the signature (what one who reaches Temporal but has no token can start) is refused by the worker.
 * The front door's details (expiry, body size, every header) are in tests/unit/mcp-http.test.ts.
 */
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { execa, type ResultPromise } from 'execa';
import type { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpReportOutputSchema, McpStatusOutputSchema } from '../../schemas/mcp.js';
import {
  assertBuilt,
  CLI,
  makeRepo,
  ROOT,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  writePrd,
  writeScenario,
} from '../support/harness.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { CLI_CWD, cleanEnv, startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';
import { patient } from '../support/patience.js';
import { MCP_TOOLS } from '../support/mcp-tools.js';

let pg: TestPostgres | undefined;
const AGENT_DIR = mkdtempSync(path.join(os.tmpdir(), 'vigil-mcp-http-agent-'));
const TOOLS = MCP_TOOLS;
const text = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** One raw request to the HTTP server (any Host, any headers): status and the error message. */
function raw(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; session: string | null; message: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(u.port),
        path: u.pathname,
        method: opts.method ?? 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...opts.headers },
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => {
          const header = res.headers['mcp-session-id'];
          resolve({
            status: res.statusCode ?? 0,
            session: typeof header === 'string' ? header : null,
            message: /"message":"((?:[^"\\]|\\.)*)"/.exec(body)?.[1] ?? '',
          });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/**
 * `vigil mcp --http` as the operator and as everyone else on the machine, beside a worker that
 * requires signed runs (both with the same VIGIL_HOME: the run secret, the token).
 */
describe('vigil mcp --http', () => {
  let server: ResultPromise | undefined;
  let signedWorker: WorkerProcess | undefined;
  let url = '';
  let token = '';
  let httpEnv: Record<string, string> = {};
  const home = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-mcp-home-')), 'home');
  const clients: Client[] = [];
  const connectWith = async (auth: string | null): Promise<Client> => {
    const client = new Client({ name: 'vigil-e2e-http', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), auth ? { requestInit: { headers: { Authorization: `Bearer ${auth}` } } } : {}),
    );
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    assertBuilt();
    pg = await startTestPostgres();
    // A store configured (vigil_report reads it); the agent's scripts and the scripted agent are
    // shown to the sandbox read-only, as docs/security.md says for tools outside PATH.
    httpEnv = {
      TEMPORAL_ADDRESS: temporalAddress(),
      VIGIL_TASK_QUEUE: uniqueId('mcp-signed'),
      VIGIL_DATABASE_URL: await pg.freshDatabase('vigil_mcp_http'),
      VIGIL_SANDBOX_READABLE: [AGENT_DIR, ROOT].join(':'),
      VIGIL_HOME: home,
    };
    signedWorker = await startWorkerProcess(httpEnv, 90_000, ['--require-signed-runs']);
    server = execa(process.execPath, [CLI, 'mcp', '--http', '--port', '0'], {
      env: cleanEnv(httpEnv),
      extendEnv: false,
      cwd: CLI_CWD,
      reject: false,
      buffer: false,
      stdin: 'ignore',
    });
    let err = '';
    server.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    url = await waitUntil('the HTTP address', () => /streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)?.[1], 30_000, 100);
    // The documented way: the token from $VIGIL_HOME/mcp-token, made now (the server says so, not the token).
    expect(err).toContain(`the token in ${path.join(home, 'mcp-token')} (made now, readable by this account only)`);
    token = readFileSync(path.join(home, 'mcp-token'), 'utf8').trim();
    expect(err).not.toContain(token);
  }, patient(180_000));

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    server?.kill('SIGTERM');
    await server?.catch(() => undefined);
    await signedWorker?.stop();
    await pg?.cleanup();
  });

  it("refuses everyone without the token (401): another local user cannot start or steer the operator's runs", async () => {
    const none = await raw(url, { body: INIT });
    expect(none.status).toBe(401);
    expect(none.message).toContain(`the token in ${path.join(home, 'mcp-token')}`);
    await expect(connectWith(null)).rejects.toThrow(/401|unauthori[sz]ed/i);
    await expect(connectWith('not-the-token')).rejects.toThrow(/401|unauthori[sz]ed/i);
    // A tool call with a made-up session: refused before any session is looked at; no run exists.
    const id = uniqueId('mcp-no-token');
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'vigil_start', arguments: { prd: 'PRD.md', id } },
    });
    expect((await raw(url, { body: call, headers: { 'mcp-session-id': 'guess' } })).status).toBe(401);
    const conn = await Connection.connect({ address: temporalAddress() });
    try {
      await expect(new TemporalClient({ connection: conn }).workflow.getHandle(id).describe()).rejects.toThrow(/not found/i);
    } finally {
      await conn.close();
    }
    // The token file is the operator's alone: 0600 in a 0700 folder; as `nobody` (this test runs as root) it cannot be read.
    expect(statSync(path.join(home, 'mcp-token')).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    if (process.getuid?.() === 0) {
      chmodSync(path.dirname(home), 0o755);
      const cat = await execa(
        'setpriv',
        ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', 'cat', path.join(home, 'mcp-token')],
        {
          reject: false,
        },
      );
      expect(cat.exitCode).not.toBe(0);
      expect(cat.stderr).toMatch(/Permission denied/);
    }
  });

  it('serves the same tools with the token; refuses a foreign Host and a web page, even with it', async () => {
    const client = await connectWith(token);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    const r = (await client.callTool({ name: 'vigil_status', arguments: { id: 'no-such-run-http' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toBe('no such run: "no-such-run-http" (list runs with `vigil list`)');
    const across = McpReportOutputSchema.parse((await client.callTool({ name: 'vigil_report', arguments: {} })).structuredContent);
    expect(across.acrossRuns).toBeDefined();

    const auth = { authorization: `Bearer ${token}` };
    const port = new URL(url).port;
    // DNS rebinding: a page that resolves its own name to 127.0.0.1 sends its own Host header.
    expect((await raw(url, { body: INIT, headers: { ...auth, host: `evil.example:${port}` } })).status).toBe(403);
    const page = await raw(url, { body: INIT, headers: { ...auth, origin: 'https://evil.example' } });
    expect(page.status).toBe(403);
    expect(page.message).toMatch(/a request from a web page/);
    expect((await raw(url, { body: INIT, headers: { ...auth, 'sec-fetch-site': 'cross-site' } })).status).toBe(403);
  });

  it('caps its sessions', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const opened: string[] = [];
    try {
      for (;;) {
        const r = await raw(url, { body: INIT, headers: auth });
        if (r.status !== 200) {
          expect(r.status).toBe(503);
          expect(r.message).toMatch(/^too many sessions: at most 16 at once/);
          break;
        }
        opened.push(r.session as string);
        expect(opened.length).toBeLessThanOrEqual(16);
      }
      // With the clients of the other tests still connected, 16 in all.
      expect(opened.length + clients.length).toBe(16);
    } finally {
      for (const id of opened) await raw(url, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': id } });
    }
    expect((await raw(url, { body: INIT, headers: auth })).status).toBe(200);
  });

  it('refuses a PRD outside the repository over HTTP too', async () => {
    const client = await connectWith(token);
    const repo = makeRepo();
    const secret = writePrd('# the first line of a file of the operator\n');
    const r = (await client.callTool({
      name: 'vigil_start',
      arguments: { prd: secret, repo, provider: 'command', agentCommand: SCRIPTED_AGENT },
    })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^the PRD \S+ is outside the repository .*vigil_start reads only files inside the repository/);
    expect(text(r)).not.toContain('first line of a file');
  });

  it(
    'starts a run the signed-runs worker admits, with the token; a run started without it is refused by the worker',
    async () => {
      const client = await connectWith(token);
      const scenario = writeScenario(AGENT_DIR, {
        version: 1,
        iterations: [{ writes: { 'src/signed.js': 'export const signed = 1;\n' }, sleepMs: 20_000 }],
        default: { appends: { 'src/signed.js': '// more\n' } },
      });
      const agent = path.join(AGENT_DIR, 'signed-agent.sh');
      writeFileSync(agent, `#!/bin/sh\nexec ${JSON.stringify(SCRIPTED_AGENT)} --scenario ${JSON.stringify(scenario)}\n`);
      chmodSync(agent, 0o755);
      const repo = makeRepo({ files: { 'README.md': '# signed\n', 'PRD.md': '# Signed PRD\n\nWrite src/signed.js.\n' } });
      const id = uniqueId('mcp-signed');
      const started = await client.callTool({
        name: 'vigil_start',
        arguments: { prd: path.join(repo, 'PRD.md'), repo, provider: 'command', agentCommand: agent, id, set: ['baseWaitSeconds=1'] },
      });
      expect(started.isError ?? false, text(started as CallToolResult)).toBe(false);
      const status = async (): Promise<z.infer<typeof McpStatusOutputSchema>['run']> =>
        McpStatusOutputSchema.parse((await client.callTool({ name: 'vigil_status', arguments: { id } })).structuredContent).run;
      // Admitted: the worker that executes only signed runs runs its agent.
      const running = await waitUntil(
        'the signed run to reach its first iteration',
        async () => {
          const s = await status();
          if (s.status === 'finished') throw new Error(`the run finished: ${JSON.stringify(s)}`);
          return s.workerAnswered && s.iteration >= 1 ? s : null;
        },
        120_000,
        500,
      );
      expect(running.iteration).toBeGreaterThanOrEqual(1);
      await client.callTool({ name: 'vigil_stop', arguments: { id, now: true, reason: 'admitted: enough' } });

      // The same run without the signature (what anyone who reaches Temporal but not the token can start): refused.
      const conn = await Connection.connect({ address: temporalAddress() });
      try {
        const temporal = new TemporalClient({ connection: conn });
        const history = await temporal.workflow.getHandle(id).fetchHistory();
        const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
        const input = defaultPayloadConverter.fromPayload<Record<string, unknown>>(payload as Payload);
        expect(input.authorization).toBeDefined();
        const unsignedId = `${id}-unsigned`;
        const { authorization: _signature, ...unsigned } = input;
        const handle = await temporal.workflow.start('vigilRun', {
          taskQueue: httpEnv.VIGIL_TASK_QUEUE as string,
          workflowId: unsignedId,
          args: [unsigned],
        });
        const outcome = (await handle.result()) as { status: string; reason: string };
        expect(outcome).toMatchObject({ status: 'agent_not_runnable' });
        expect(outcome.reason).toMatch(/unsigned/);
      } finally {
        await conn.close();
      }
    },
    patient(240_000),
  );
});
