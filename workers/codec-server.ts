/**
 * Owns the remote codec server for the Temporal Web UI and CLI (Temporal's codec server
 * protocol): `POST /encode` and `POST /decode` (also under a prefix such as `/{namespace}/decode`,
 * for the CLI's `--codec-endpoint` templating) take `{"payloads": [...]}` in the proto3 JSON form
 * of Payload (`metadata` values and `data` base64) and answer the same shape, run through a
 * `PayloadCodec`. CORS for the UI's origin: OPTIONS preflight, `Content-Type`, `X-Namespace` and
 * `Authorization` allowed, credentials allowed for listed origins. Binds 127.0.0.1 by default: the
 * server decrypts anything it is sent, so only expose it behind access control.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { CodecError } from './codec.js';

/** A Payload in proto3 JSON: each metadata value and `data` base64. */
export interface JSONPayload {
  metadata?: Record<string, string>;
  data?: string;
  externalPayloads?: { sizeBytes?: string }[];
}

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port (see `url`). */
  port: number;
  /** Origins allowed to call from a browser, e.g. `http://localhost:8233` (the Web UI); `*`
   * allows any origin, without credentials. */
  corsOrigins: readonly string[];
  /** Largest request body accepted; default 32 MiB. */
  maxBodyBytes?: number;
}

export interface CodecServer {
  /** `http://host:port`, the endpoint to give the Web UI (Settings, Codec Server) or the CLI. */
  url: string;
  close(): Promise<void>;
}

/** A request the server refuses, with its HTTP status. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const ExternalPayloadDetails = proto.temporal.api.common.v1.Payload.ExternalPayloadDetails;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const ALLOW_HEADERS = 'Content-Type, X-Namespace, Authorization';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function base64(value: unknown, where: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value) || value.replace(/=+$/, '').length % 4 === 1) {
    throw new HttpError(400, `${where}: expected a base64 string`);
  }
  return new Uint8Array(Buffer.from(value, 'base64'));
}

/** A Payload from its proto3 JSON form; throws (status 400) naming the bad field. */
export function payloadFromJSON(json: unknown, where = 'payload'): Payload {
  if (!isRecord(json)) throw new HttpError(400, `${where}: expected an object`);
  const payload: Payload = {};
  if (json.metadata !== undefined && json.metadata !== null) {
    if (!isRecord(json.metadata)) throw new HttpError(400, `${where}.metadata: expected an object of base64 strings`);
    // fromEntries defines own properties: a "__proto__" key stays a key.
    payload.metadata = Object.fromEntries(Object.entries(json.metadata).map(([k, v]) => [k, base64(v, `${where}.metadata.${k}`)]));
  }
  if (json.data !== undefined && json.data !== null) payload.data = base64(json.data, `${where}.data`);
  if (json.externalPayloads !== undefined && json.externalPayloads !== null) {
    if (!Array.isArray(json.externalPayloads)) throw new HttpError(400, `${where}.externalPayloads: expected an array`);
    payload.externalPayloads = json.externalPayloads.map((d: unknown, i) => {
      const size = isRecord(d) ? d.sizeBytes : undefined;
      if (
        !isRecord(d) ||
        !(
          size === undefined ||
          (typeof size === 'string' && /^[0-9]{1,19}$/.test(size)) ||
          (typeof size === 'number' && Number.isSafeInteger(size) && size >= 0)
        )
      ) {
        throw new HttpError(400, `${where}.externalPayloads[${i}]: expected {"sizeBytes": "<integer>"}`);
      }
      return ExternalPayloadDetails.fromObject(size === undefined ? {} : { sizeBytes: size });
    });
  }
  return payload;
}

/** The proto3 JSON form of a Payload (empty fields left out). */
export function payloadToJSON(payload: Payload): JSONPayload {
  const json: JSONPayload = {};
  const entries = Object.entries(payload.metadata ?? {});
  if (entries.length) json.metadata = Object.fromEntries(entries.map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  if (payload.data && payload.data.length) json.data = Buffer.from(payload.data).toString('base64');
  if (payload.externalPayloads?.length) {
    json.externalPayloads = payload.externalPayloads.map(
      (d) => ExternalPayloadDetails.toObject(ExternalPayloadDetails.fromObject(d), { longs: String }) as { sizeBytes?: string },
    );
  }
  return json;
}

function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= max) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.resume(); // drain the rest unread; the connection is closed after the answer
      reject(new HttpError(413, `request body is larger than ${max} bytes`));
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

const normalizeOrigin = (o: string): string => o.trim().replace(/\/+$/, '').toLowerCase();

export async function startCodecServer(opts: CodecServerOptions): Promise<CodecServer> {
  const host = opts.host ?? '127.0.0.1';
  const maxBody = opts.maxBodyBytes ?? 32 * 1024 * 1024;
  const anyOrigin = opts.corsOrigins.includes('*');
  const origins = new Set(opts.corsOrigins.filter((o) => o !== '*').map(normalizeOrigin));

  /** Sets the CORS headers; false when the request comes from a browser origin not allowed. */
  const cors = (req: IncomingMessage, res: ServerResponse): boolean => {
    const origin = req.headers.origin;
    res.setHeader('Vary', 'Origin');
    if (origin === undefined) return true; // not a browser (CLI, curl)
    if (origins.has(normalizeOrigin(origin))) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    } else if (anyOrigin) {
      res.setHeader('Access-Control-Allow-Origin', '*');
    } else {
      return false;
    }
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
    res.setHeader('Access-Control-Max-Age', '600');
    return true;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const pathname = new URL(req.url ?? '/', 'http://codec.invalid').pathname.replace(/\/+$/, '');
    const route = /\/(encode|decode)$/.exec(pathname)?.[1] as 'encode' | 'decode' | undefined;
    if (!cors(req, res))
      throw new HttpError(403, `origin ${req.headers.origin} is not allowed; allowed: ${[...origins].join(', ') || '(none)'}`);
    if (!route) throw new HttpError(404, `no such endpoint ${pathname || '/'}: use POST /encode or POST /decode`);
    if (req.method === 'OPTIONS') return send(res, 204);
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST, OPTIONS');
      throw new HttpError(405, `${req.method ?? '?'} is not allowed: use POST /${route}`);
    }
    const raw = await readBody(req, maxBody);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      throw new HttpError(400, `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!isRecord(body) || !Array.isArray(body.payloads)) throw new HttpError(400, 'request body must be {"payloads": [...]}');
    const payloads = body.payloads.map((p: unknown, i) => payloadFromJSON(p, `payloads[${i}]`));
    let out: Payload[];
    try {
      out = await (route === 'encode' ? opts.codec.encode(payloads) : opts.codec.decode(payloads));
    } catch (err) {
      if (err instanceof CodecError) throw new HttpError(400, err.message);
      throw err;
    }
    send(res, 200, { payloads: out.map(payloadToJSON) });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (status === 413) res.setHeader('Connection', 'close');
      send(res, status, { error: status === 500 ? `codec failed: ${message}` : message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
