/**
 * `vigil mcp --http`: the MCP server over streamable HTTP (the SDK's StreamableHTTPServerTransport)
 * on 127.0.0.1, for the operator's MCP clients only. Whoever is let in acts as the operator — the
 * runs they start are signed with the operator's run secret, which workers that require signed
 * runs admit — so every request must show it comes from the operator:
 *
 * - **The token.** `Authorization: Bearer <token>`, the token kept in `$VIGIL_HOME/mcp-token`
 *   (made once, 32 random bytes, mode 0600 in a 0700 folder: readable by the operator's account
 *   only), made and kept as the console's is (cli/console/access.ts `accessToken`), in a file of
 *   its own: the console's token, which a person may hand to a colleague for a console on the
 *   network, does not start runs, and either is changed without the other. Anything else is 401.
 * - **Host and Origin**, before the token: the Host header must name 127.0.0.1 or localhost with
 *   the port (a page that re-binds its own name to 127.0.0.1 sends its own), and a request a
 *   browser marks as another site's (Origin, Sec-Fetch-Site) is refused: MCP clients are programs,
 *   not web pages. Both are 403.
 * - **Sessions** are capped (MAX_SESSIONS; one more is 503 until one ends) and one idle for
 *   SESSION_IDLE_MS with no request open is closed (its client starts a new one, as MCP says a
 *   client does on 404).
 * - A request body is at most 4 MiB (a directive is at most 1 MiB): 413 beyond.
 *
 * The token check lets a request through as the operator (`req.auth`, which the SDK hands each
 * tool call as `authInfo`): the tools that start runs refuse a call without it (cli/mcp.ts).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { accessToken, bearerOf, fromAnotherSite, sameToken } from './console/access.js';
import { CliError, EXIT } from './errors.js';

export const MCP_TOKEN_FILE = 'mcp-token';
/** Sessions open at once (an MCP client holds one while it is connected). */
export const MAX_SESSIONS = 16;
/** A session with no request for this long, and none open, is closed. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** The largest request body read. */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/** Who a request that passed the token check is: the operator, whose tools may start signed runs. */
export const OPERATOR_CLIENT = 'vigil-operator';
export const OPERATOR_SCOPE = 'vigil:operator';
const OPERATOR_AUTH: AuthInfo = { token: 'mcp-token', clientId: OPERATOR_CLIENT, scopes: [OPERATOR_SCOPE] };

/** True when a tool call came with the operator's token (the HTTP front door set it). */
export function isOperator(auth: AuthInfo | undefined): boolean {
  return auth?.clientId === OPERATOR_CLIENT && auth.scopes.includes(OPERATOR_SCOPE);
}

export interface McpHttpOptions {
  /** 0: any free port. */
  port: number;
  /** VIGIL_HOME: where the token is kept. */
  home: string;
  /** A new MCP server for a session. */
  newServer: () => McpServer;
  maxSessions?: number;
  idleMs?: number;
}

export interface RunningMcpHttp {
  url: string;
  port: number;
  tokenFile: string;
  /** Made now (the first start). */
  tokenCreated: boolean;
  sessions(): number;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  lastSeen: number;
  /** Requests of this session still open (a stream of server events counts while it is open). */
  open: number;
}

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** A request's JSON body (at most MAX_MCP_BODY_BYTES). */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  const tooLarge = `request body too large: at most ${MAX_MCP_BODY_BYTES} bytes (a directive is at most 1 MiB)`;
  if (declared > MAX_MCP_BODY_BYTES) throw new HttpRefusal(413, tooLarge);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_MCP_BODY_BYTES) throw new HttpRefusal(413, tooLarge);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    throw new HttpRefusal(400, 'the body is not JSON');
  }
}

/** Serves MCP at http://127.0.0.1:PORT/mcp for the holder of the token; resolves once it listens. */
export async function startMcpHttp(opts: McpHttpOptions): Promise<RunningMcpHttp> {
  const maxSessions = opts.maxSessions ?? MAX_SESSIONS;
  const idleMs = opts.idleMs ?? SESSION_IDLE_MS;
  const { token, file: tokenFile, created } = accessToken(opts.home, MCP_TOKEN_FILE);
  const sessions = new Map<string, Session>();
  let starting = 0;
  let bound = 0;
  let allowedHosts: string[] = [];
  let allowedOrigins: string[] = [];

  const end = async (id: string, s: Session): Promise<void> => {
    sessions.delete(id);
    await s.transport.close().catch(() => undefined);
    await s.server.close().catch(() => undefined);
  };
  const sweep = (now = Date.now()): void => {
    for (const [id, s] of sessions) if (s.open === 0 && now - s.lastSeen > idleMs) void end(id, s);
  };
  const sweeper = setInterval(sweep, Math.max(1000, Math.min(idleMs / 2, 60_000)));
  sweeper.unref();

  /** Checks every request must pass, in order: Host, another site, the path, the token. Null: let in. */
  const gate = (req: IncomingMessage): { status: number; message: string; headers?: Record<string, string> } | null => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts.includes(host))
      return {
        status: 403,
        message: `refused: this server answers only to 127.0.0.1:${bound} or localhost:${bound} (Host "${host.slice(0, 100)}")`,
      };
    const site = req.headers['sec-fetch-site'];
    const origin = req.headers.origin;
    if (fromAnotherSite({ site: typeof site === 'string' ? site : undefined, origin, host }))
      return {
        status: 403,
        message: `refused: a request from a web page (Origin "${(origin ?? '').slice(0, 100)}"); this server serves MCP clients, not browsers`,
      };
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp')
      return { status: 404, message: 'not found: the MCP endpoint is /mcp' };
    if (!sameToken(bearerOf(req.headers.authorization), token))
      return {
        status: 401,
        message:
          `unauthorised: send "Authorization: Bearer <token>" with the token in ${tokenFile} (readable by the account that runs ` +
          `vigil mcp only; see docs/mcp.md)`,
        headers: { 'www-authenticate': 'Bearer realm="vigil mcp"' },
      };
    return null;
  };

  async function handle(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse): Promise<void> {
    const refused = gate(req);
    if (refused) return refuse(res, refused.status, refused.message, refused.headers);
    req.auth = OPERATOR_AUTH;
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) {
      existing.lastSeen = Date.now();
      existing.open++;
      res.once('close', () => {
        existing.open--;
        existing.lastSeen = Date.now();
      });
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      return await existing.transport.handleRequest(req, res, body);
    }
    if (typeof sessionId === 'string')
      return refuse(res, 404, 'no such session (it ended, or expired after being idle): initialize a new one');
    if (req.method !== 'POST') return refuse(res, 400, 'no session: initialize first');
    const body = await readJson(req);
    if (!isInitializeRequest(body)) return refuse(res, 400, 'no session: initialize first');
    if (sessions.size + starting >= maxSessions) {
      sweep();
      if (sessions.size + starting >= maxSessions)
        return refuse(
          res,
          503,
          `too many sessions: at most ${maxSessions} at once. A client ends its session when it disconnects; an idle one ends ` +
            `after ${Math.round(idleMs / 60_000)} minute(s)`,
          { 'retry-after': '60' },
        );
    }
    starting++;
    try {
      const server = opts.newServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // Checked above too; kept here so the transport never answers another Host or a web page.
        enableDnsRebindingProtection: true,
        allowedHosts,
        allowedOrigins,
        onsessioninitialized: (id) => void sessions.set(id, { transport, server, lastSeen: Date.now(), open: 0 }),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      starting--;
    }
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      const status = err instanceof HttpRefusal ? err.status : 400;
      refuse(res, status, err instanceof Error ? err.message : String(err), status === 413 ? { connection: 'close' } : {});
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new CliError(`vigil mcp: port ${opts.port} on 127.0.0.1 is in use; choose another with --port (0: any free one)`, EXIT.usage)
          : err,
      ),
    );
    http.listen(opts.port, '127.0.0.1', () => resolve());
  });
  bound = (http.address() as AddressInfo).port;
  allowedHosts = [`127.0.0.1:${bound}`, `localhost:${bound}`];
  allowedOrigins = [`http://127.0.0.1:${bound}`, `http://localhost:${bound}`];
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    tokenFile,
    tokenCreated: created,
    sessions: () => sessions.size,
    close: async () => {
      clearInterval(sweeper);
      for (const [id, s] of [...sessions]) await end(id, s);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
