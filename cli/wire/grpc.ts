/**
 * gRPC unary calls over node:http2, for the CLI's light Temporal client: one HTTP/2 session to the
 * server, plaintext or TLS (the server's CA or the system's roots, a client certificate and key, a
 * server name), an API key as `authorization: Bearer <key>`, the endpoint's gRPC metadata as
 * headers, a `grpc-timeout` deadline per call. Messages are framed as gRPC frames them (a 1-byte
 * compressed flag, a 4-byte big-endian length, the bytes); the status comes from the
 * `grpc-status` / `grpc-message` trailers, or from the headers of a trailers-only answer.
 * No dependencies beyond node.
 */
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import net from 'node:net';

/** gRPC status codes used by name. */
export const GRPC = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
const NAMES: Record<number, string> = {
  0: 'OK',
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  6: 'ALREADY_EXISTS',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  10: 'ABORTED',
  11: 'OUT_OF_RANGE',
  12: 'UNIMPLEMENTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  15: 'DATA_LOSS',
  16: 'UNAUTHENTICATED',
};

/** A call that ended with a status other than OK; the message reads as @grpc/grpc-js words it ("5 NOT_FOUND: ..."). */
export class GrpcError extends Error {
  override name = 'GrpcError';
  constructor(
    readonly code: number,
    readonly details: string,
    /** True when the session itself failed (nothing reached the server, or the connection broke). */
    readonly transport = false,
  ) {
    super(`${code} ${NAMES[code] ?? 'UNKNOWN'}: ${details}`);
  }
}

/** TLS as the SDK's `TLSConfig` has it (cli/connection.ts keeps the endpoint's in that shape). */
export interface TlsOptions {
  serverNameOverride?: string;
  serverRootCACertificate?: Uint8Array;
  clientCertPair?: { crt: Uint8Array; key: Uint8Array };
}

export interface ChannelOptions {
  /** host:port ([v6]:port); 7233 when no port is given. */
  address: string;
  /** Off when absent or false, unless an API key is given (as for the SDK); `true`: the system's roots. */
  tls?: TlsOptions | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
  /** How long the connection (TCP and TLS) may take. Default 5 s, the CLI's connect timeout. */
  connectTimeoutMs?: number;
}

function splitAddress(address: string): { host: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(address);
  const host = (m ? (m[1] as string) : address).replace(/^\[|\]$/g, '');
  return { host, port: m ? Number(m[2]) : 7233 };
}

const percentDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** A non-200 HTTP status as gRPC maps it (https://github.com/grpc/grpc/blob/master/doc/http-grpc-status-mapping.md). */
function httpToGrpc(status: number): number {
  if (status === 400) return GRPC.INTERNAL;
  if (status === 401) return GRPC.UNAUTHENTICATED;
  if (status === 403) return GRPC.PERMISSION_DENIED;
  if (status === 404) return GRPC.UNIMPLEMENTED;
  if (status === 429 || status === 502 || status === 503 || status === 504) return GRPC.UNAVAILABLE;
  return GRPC.UNKNOWN;
}

/** `grpc-timeout`: at most 8 digits and a unit. */
function grpcTimeout(ms: number): string {
  const n = Math.max(1, Math.ceil(ms));
  return n < 1e8 ? `${n}m` : `${Math.ceil(n / 1000)}S`;
}

/** The version of Temporal's TypeScript client this package uses (its package.json: one small read). */
function sdkVersion(): string {
  try {
    // Read, not imported: the light client loads nothing of Temporal's client.
    const file = createRequire(import.meta.url).resolve('@temporalio/client/package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/**
 * How early before its deadline a server's cancel of a call still counts as that deadline: the
 * server measures the `grpc-timeout` from when it read the headers, this side from when it sent
 * them, and the two timers round to the millisecond apart.
 */
export const DEADLINE_SLACK_MS = 50;

/** One HTTP/2 connection to a gRPC server, opened on the first call. */
export class GrpcChannel {
  private session: http2.ClientHttp2Session | null = null;
  private connected: Promise<http2.ClientHttp2Session> | null = null;
  private readonly headers: Record<string, string>;
  private readonly authority: string;

  constructor(private readonly opts: ChannelOptions) {
    const { host, port } = splitAddress(opts.address);
    const tls = this.tls();
    const name = tls && typeof tls === 'object' && tls.serverNameOverride ? tls.serverNameOverride : null;
    this.authority = name ?? `${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.headers = {};
    // As the SDK's client: the endpoint's headers (names in lower case, as HTTP/2 has them), the
    // client's name and version unless they name their own (the server's compatibility check and
    // metrics see the same client as from the full program), then the key.
    for (const [k, v] of Object.entries(opts.metadata ?? {})) this.headers[k.toLowerCase()] = v;
    this.headers['client-name'] ??= 'temporal-typescript';
    this.headers['client-version'] ??= sdkVersion();
    if (opts.apiKey) this.headers.authorization = `Bearer ${opts.apiKey}`;
  }

  /** TLS as the SDK resolves it: an API key turns it on unless it was turned off explicitly. */
  private tls(): TlsOptions | null {
    const t = this.opts.tls ?? (this.opts.apiKey !== undefined ? true : undefined);
    if (!t) return null;
    return t === true ? {} : t;
  }

  private connect(): Promise<http2.ClientHttp2Session> {
    if (this.connected) return this.connected;
    const { host, port } = splitAddress(this.opts.address);
    const tls = this.tls();
    const timeoutMs = this.opts.connectTimeoutMs ?? 5000;
    this.connected = new Promise((resolve, reject) => {
      const urlHost = host.includes(':') ? `[${host}]` : host;
      const servername = tls?.serverNameOverride ?? (net.isIP(host) ? undefined : host);
      const session = tls
        ? http2.connect(`https://${urlHost}:${port}`, {
            ...(tls.serverRootCACertificate ? { ca: Buffer.from(tls.serverRootCACertificate) } : {}),
            ...(tls.clientCertPair ? { cert: Buffer.from(tls.clientCertPair.crt), key: Buffer.from(tls.clientCertPair.key) } : {}),
            ...(servername ? { servername } : {}),
            ALPNProtocols: ['h2'],
          })
        : http2.connect(`http://${urlHost}:${port}`);
      this.session = session;
      const timer = setTimeout(() => {
        session.destroy();
        reject(new GrpcError(GRPC.UNAVAILABLE, `Failed to connect before the deadline (${timeoutMs / 1000} s)`, true));
      }, timeoutMs);
      session.once('connect', () => {
        clearTimeout(timer);
        resolve(session);
      });
      session.on('error', (err: Error) => {
        clearTimeout(timer);
        reject(new GrpcError(GRPC.UNAVAILABLE, err.message, true));
      });
    });
    // A failed connection is not retried: the next call fails the same way, at once.
    return this.connected;
  }

  /**
   * One unary call: `path` is `/package.Service/Method`, `request` the encoded message; resolves to
   * the encoded answer. `deadlineMs` (from now) is sent as `grpc-timeout` and enforced here too.
   */
  async unary(path: string, request: Buffer, deadlineMs?: number): Promise<Buffer> {
    const started = Date.now();
    const session = await this.connect();
    const left = deadlineMs === undefined ? undefined : deadlineMs - (Date.now() - started);
    if (left !== undefined && left <= 0) throw new GrpcError(GRPC.DEADLINE_EXCEEDED, 'Deadline exceeded before the call was sent');
    const sentAt = Date.now();
    return new Promise<Buffer>((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request({
          ':method': 'POST',
          ':path': path,
          ':authority': this.authority,
          'content-type': 'application/grpc',
          te: 'trailers',
          'grpc-accept-encoding': 'identity',
          ...(left !== undefined ? { 'grpc-timeout': grpcTimeout(left) } : {}),
          ...this.headers,
        });
      } catch (err) {
        reject(new GrpcError(GRPC.UNAVAILABLE, err instanceof Error ? err.message : String(err), true));
        return;
      }
      const chunks: Buffer[] = [];
      let httpStatus = 0;
      let status: number | null = null;
      let message = '';
      let settled = false;
      const timer =
        left !== undefined
          ? setTimeout(() => {
              finish(new GrpcError(GRPC.DEADLINE_EXCEEDED, `Deadline exceeded after ${(left / 1000).toFixed(3)}s`));
              stream.close(http2.constants.NGHTTP2_CANCEL);
            }, left)
          : undefined;
      const finish = (result: Buffer | GrpcError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (result instanceof GrpcError) reject(result);
        else resolve(result);
      };
      const readStatus = (h: http2.IncomingHttpHeaders): void => {
        const s = h['grpc-status'];
        if (s !== undefined) {
          status = Number(Array.isArray(s) ? s[0] : s);
          const m = h['grpc-message'];
          message = percentDecode(String((Array.isArray(m) ? m[0] : m) ?? ''));
        }
      };
      stream.on('response', (h) => {
        httpStatus = Number(h[':status'] ?? 0);
        readStatus(h); // a trailers-only answer carries its status in the headers
      });
      stream.on('trailers', readStatus);
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', (err: Error) => finish(new GrpcError(GRPC.UNAVAILABLE, err.message, true)));
      stream.on('close', () => {
        if (status === null) {
          if (httpStatus && httpStatus !== 200)
            return finish(new GrpcError(httpToGrpc(httpStatus), `Received HTTP status code ${httpStatus}`));
          const cancelled = stream.rstCode === http2.constants.NGHTTP2_CANCEL;
          // A server cancels a call at the deadline it was sent (Temporal's does, with RST_STREAM
          // CANCEL and no status); that cancel can arrive a moment before this side's own timer
          // fires. Either way the call ran out of time: said so, not "cannot reach the server".
          if (cancelled && left !== undefined && Date.now() - sentAt >= left - DEADLINE_SLACK_MS) {
            return finish(
              new GrpcError(
                GRPC.DEADLINE_EXCEEDED,
                `Deadline exceeded after ${(left / 1000).toFixed(3)}s (the server cancelled the call at its deadline)`,
              ),
            );
          }
          return finish(
            new GrpcError(
              cancelled ? GRPC.CANCELLED : GRPC.UNAVAILABLE,
              `the stream closed without a gRPC status (HTTP/2 code ${stream.rstCode})`,
              true,
            ),
          );
        }
        if (status !== GRPC.OK) return finish(new GrpcError(status, message));
        const body = Buffer.concat(chunks);
        if (body.length < 5) return finish(new GrpcError(GRPC.INTERNAL, 'an OK answer without a message'));
        if (body[0] !== 0) return finish(new GrpcError(GRPC.INTERNAL, 'a compressed answer (none was accepted)'));
        const len = body.readUInt32BE(1);
        if (body.length < 5 + len) return finish(new GrpcError(GRPC.INTERNAL, 'a truncated answer'));
        finish(body.subarray(5, 5 + len));
      });
      const frame = Buffer.alloc(5);
      frame.writeUInt8(0, 0);
      frame.writeUInt32BE(request.length, 1);
      stream.end(Buffer.concat([frame, request]));
    });
  }

  close(): void {
    this.session?.close();
    this.session = null;
  }
}
