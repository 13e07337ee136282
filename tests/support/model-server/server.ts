/**
 * Owns the local model server the real-CLI suite (tests/real-clis) points the agent CLIs at: an
 * HTTP server on 127.0.0.1 (a free port) that speaks the vendors' APIs (wire.ts) and plays the
 * scripted sessions of script.ts, with faults switchable while it runs (`fail`/`clearFaults`, or
 * `POST /_vigil/faults` with the same JSON from outside the process).
 *
 * Built on node:http rather than a framework: four POST routes and SSE need nothing more, it adds
 * no dependency to the project, and a hung stream or a raw status with vendor headers is written
 * exactly as meant, with nothing in between to buffer, retry or reformat it.
 *
 * Every request is recorded (API, path, model, role, status, fault, tokens) so a test can check
 * what reached the "vendor" and what the CLI reported against it; with `logFile`, requests and
 * their bodies also go to a JSONL file for reading what a CLI sent.
 */
import { appendFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { reply, ROLES, unmetVerification, type Conversation, type ScriptRole } from './script.js';
import {
  anthropicConversation,
  anthropicJson,
  anthropicStream,
  chatConversation,
  chatJson,
  chatStream,
  errorResponse,
  FAULT_KINDS,
  geminiConversation,
  geminiJson,
  geminiStream,
  responsesConversation,
  responsesStream,
  usageFor,
  type Api,
  type FaultKind,
} from './wire.js';

export const FaultSchema = z.object({
  kind: z.enum(FAULT_KINDS),
  /** How many requests it answers; absent: every matching request until cleared. */
  times: z.number().int().positive().optional(),
  /** What 429 answers say to wait (retry-after, reset headers, the message). */
  retryAfterSeconds: z.number().int().nonnegative().default(30),
  /** Only requests of these roles; absent: every role but the CLIs' own side requests. */
  roles: z.array(z.enum(ROLES)).optional(),
});
export type Fault = z.input<typeof FaultSchema>;
type ActiveFault = z.infer<typeof FaultSchema> & { used: number };

export interface RecordedRequest {
  api: Api;
  method: string;
  path: string;
  model: string;
  role: ScriptRole | null;
  status: number;
  fault: FaultKind | null;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  /** Headers that tell which client sent it (user-agent) and how it authenticated (names only). */
  userAgent: string;
  at: number;
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  fail(fault: Fault): void;
  /** The next `times` checklist verifications answer FAIL for every item (the work judged not done); cleared with the faults. */
  failChecklist(times: number): void;
  clearFaults(): void;
  requests(): RecordedRequest[];
  /**
   * Tokens the server answered with (model requests without a fault): for one role, or every
   * role, the CLIs' own side requests (titles) included unless `includeSide` is false.
   */
  tokens(role?: ScriptRole, includeSide?: boolean): { input: number; output: number; requests: number };
  close(): Promise<void>;
}

const GEMINI_PATH = /^\/v1(?:beta|alpha|)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

export async function startModelServer(opts: { logFile?: string; port?: number } = {}): Promise<ModelServer> {
  let faults: ActiveFault[] = [];
  let unmetChecklists = 0;
  const recorded: RecordedRequest[] = [];
  const open = new Set<ServerResponse>();

  const log = (entry: Record<string, unknown>): void => {
    if (opts.logFile) appendFileSync(opts.logFile, `${JSON.stringify(entry)}\n`);
  };

  const takeFault = (role: ScriptRole): ActiveFault | null => {
    const f = faults.find((x) => (x.roles ? x.roles.includes(role) : role !== 'side') && (x.times === undefined || x.used < x.times));
    if (f) f.used++;
    return f ?? null;
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = raw ? JSON.parse(raw) : {};
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      /* not JSON: routes below answer 400 where a body is needed */
    }
    const path = url.pathname.replace(/^\/api\/v1\//, '/v1/');
    log({
      at: new Date().toISOString(),
      method: req.method,
      path: url.pathname + url.search,
      headers: { 'user-agent': req.headers['user-agent'] },
      body,
    });

    if (req.method === 'POST' && path === '/_vigil/faults') {
      const f = FaultSchema.safeParse(body);
      if (!f.success) return send(res, 400, { error: f.error.message });
      server.fail(f.data);
      return send(res, 200, { ok: true });
    }
    if (req.method === 'DELETE' && path === '/_vigil/faults') {
      server.clearFaults();
      return send(res, 200, { ok: true });
    }
    if (req.method === 'GET' && /^\/v1(beta)?\/models\/?$/.test(path)) {
      return send(res, 200, path.includes('beta') ? { models: [] } : { object: 'list', data: [], models: [] });
    }

    let api: Api;
    let conversation: Conversation;
    let stream = body.stream === true;
    let gemini: RegExpExecArray | null = null;
    if (req.method === 'POST' && (path === '/v1/messages' || path === '/messages')) {
      api = 'anthropic';
      conversation = anthropicConversation(body);
    } else if (req.method === 'POST' && (path === '/v1/messages/count_tokens' || path === '/messages/count_tokens')) {
      return send(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
    } else if (req.method === 'POST' && (path === '/v1/responses' || path === '/responses')) {
      api = 'responses';
      conversation = responsesConversation(body);
    } else if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
      api = 'chat';
      conversation = chatConversation(body);
    } else if (req.method === 'POST' && (gemini = GEMINI_PATH.exec(path)) !== null) {
      api = 'gemini';
      const [, model = '', method] = gemini;
      if (method === 'countTokens') return send(res, 200, { totalTokens: Math.ceil(raw.length / 4) });
      stream = method === 'streamGenerateContent';
      conversation = geminiConversation(body, model);
    } else {
      return send(res, 404, {
        error: { message: `the model server does not serve ${req.method ?? '?'} ${url.pathname}`, type: 'not_found_error' },
      });
    }

    let answer = reply(conversation);
    if (answer.role === 'checklist-verifier' && unmetChecklists > 0) {
      unmetChecklists--;
      answer = unmetVerification(answer);
    }
    const model = conversation.model || 'model';
    const usage = usageFor(raw, answer);
    const fault = takeFault(answer.role);
    const record: RecordedRequest = {
      api,
      method: req.method ?? '',
      path: url.pathname,
      model,
      role: answer.role,
      status: 200,
      fault: fault?.kind ?? null,
      stream,
      inputTokens: fault ? 0 : usage.input,
      outputTokens: fault ? 0 : usage.output,
      userAgent: String(req.headers['user-agent'] ?? ''),
      at: Date.now(),
    };
    recorded.push(record);

    if (fault && fault.kind !== 'hang') {
      const e = errorResponse(api, fault.kind, fault.retryAfterSeconds);
      record.status = e.status;
      return send(res, e.status, e.body, e.headers);
    }

    if (!stream) {
      const out =
        api === 'anthropic'
          ? anthropicJson(answer, model, usage)
          : api === 'gemini'
            ? geminiJson(answer, model, usage)
            : api === 'chat'
              ? chatJson(answer, model, usage)
              : null;
      if (out === null)
        return send(res, 400, { error: { message: 'the Responses API is served as a stream only', type: 'invalid_request_error' } });
      if (fault?.kind === 'hang') {
        open.add(res); // never answered: held until the client gives up or the server closes
        res.on('close', () => open.delete(res));
        return;
      }
      return send(res, 200, out);
    }

    const events =
      api === 'anthropic'
        ? anthropicStream(answer, model, usage)
        : api === 'responses'
          ? responsesStream(answer, model, usage, conversation.tools)
          : api === 'chat'
            ? chatStream(answer, model, usage, (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true)
            : geminiStream(answer, model, usage);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    if (fault?.kind === 'hang') {
      // The stream starts and then says nothing more: the CLI's own idle timeout, or Vigil's, ends it.
      if (api !== 'gemini' && api !== 'chat') res.write(events[0] ?? '');
      open.add(res);
      res.on('close', () => open.delete(res));
      return;
    }
    for (const e of events) res.write(e);
    res.end();
  };

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: { message: `model server: ${err instanceof Error ? err.message : String(err)}` } });
      else res.destroy();
    });
  });
  httpServer.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => httpServer.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;

  const server: ModelServer = {
    url: `http://127.0.0.1:${port}`,
    fail(fault) {
      faults.push({ ...FaultSchema.parse(fault), used: 0 });
    },
    failChecklist(times) {
      unmetChecklists = times;
    },
    clearFaults() {
      faults = [];
      unmetChecklists = 0;
    },
    requests: () => [...recorded],
    tokens(role, includeSide = true) {
      const rs = recorded.filter(
        (r) => r.role !== null && r.fault === null && (role === undefined ? includeSide || r.role !== 'side' : r.role === role),
      );
      return { input: rs.reduce((a, r) => a + r.inputTokens, 0), output: rs.reduce((a, r) => a + r.outputTokens, 0), requests: rs.length };
    },
    async close() {
      for (const res of open) res.destroy();
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
  return server;
}
