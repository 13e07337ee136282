/**
 * Owns the tests of the payload codec (workers/codec.ts: AES-256-GCM over whole payloads, key
 * loading, codecFromEnv) and of the remote codec server for the Web UI and CLI
 * (workers/codec-server.ts), over real HTTP on 127.0.0.1 and against the suite's Temporal server
 * and CLI.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { JSONToPayload, payloadToJSON as sdkPayloadToJSON } from '@temporalio/common/lib/proto-utils.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  AesGcmCodec,
  CodecError,
  codecFromEnv,
  defaultKeyId,
  ENCRYPTED_ENCODING,
  loadCodecKey,
  METADATA_KEY_ID,
  type CodecKey,
} from '../../workers/codec.js';
import { payloadFromJSON, payloadToJSON, startCodecServer, type CodecServer, type JSONPayload } from '../../workers/codec-server.js';

const str = (b: Uint8Array | null | undefined): string => Buffer.from(b ?? new Uint8Array()).toString('utf8');
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const key = (id?: string): CodecKey => {
  const k = new Uint8Array(randomBytes(32));
  return { id: id ?? defaultKeyId(k), key: k };
};
const tmp = (): string => mkdtempSync(path.join(os.tmpdir(), 'vigil-codec-'));

/** Payloads of several shapes: JSON, binary, null, empty data, extra metadata. */
const samples = (): Payload[] => [
  defaultPayloadConverter.toPayload({ directive: 'ship it', secret: 'hunter2', n: 42 }),
  defaultPayloadConverter.toPayload(new Uint8Array([0, 1, 2, 255])),
  defaultPayloadConverter.toPayload(null),
  defaultPayloadConverter.toPayload('ünïcödé ✓'),
  { metadata: { encoding: new TextEncoder().encode('json/plain'), 'x-extra': new Uint8Array([7]) }, data: new Uint8Array() },
];

const plain = (p: Payload): { metadata: Record<string, string>; data: string } => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

describe('AesGcmCodec', () => {
  it('round-trips payloads of every shape and marks them encrypted with the key id', async () => {
    const k = key();
    const codec = new AesGcmCodec(k);
    const input = samples();
    const encoded = await codec.encode(input);
    expect(encoded).toHaveLength(input.length);
    for (const p of encoded) {
      expect(str(p.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
      expect(str(p.metadata?.[METADATA_KEY_ID])).toBe(k.id);
      expect(Object.keys(p.metadata ?? {})).toEqual(['encoding', METADATA_KEY_ID]); // the original metadata is inside
      expect(str(p.data)).not.toContain('hunter2');
    }
    const decoded = await codec.decode(encoded);
    expect(decoded.map(plain)).toEqual(input.map(plain));
    expect(defaultPayloadConverter.fromPayload(decoded[0] as Payload)).toEqual({ directive: 'ship it', secret: 'hunter2', n: 42 });
    expect(await codec.encode([])).toEqual([]);
  });

  it('uses a fresh nonce for every payload', async () => {
    const codec = new AesGcmCodec(key());
    const p = defaultPayloadConverter.toPayload('same');
    const [a, b] = await codec.encode([p, p]);
    expect(Buffer.from(a?.data ?? []).equals(Buffer.from(b?.data ?? []))).toBe(false);
  });

  it('passes payloads that are not binary/encrypted through decode untouched', async () => {
    const codec = new AesGcmCodec(key());
    const input = samples();
    const out = await codec.decode(input);
    input.forEach((p, i) => expect(out[i]).toBe(p));
  });

  it('fails clearly, naming the key id, when the key is unknown', async () => {
    const a = key('alpha');
    const encoded = await new AesGcmCodec(a).encode(samples());
    const other = new AesGcmCodec(key('beta'));
    await expect(other.decode(encoded)).rejects.toThrow(CodecError);
    await expect(other.decode(encoded)).rejects.toThrow(/key id "alpha", which this process does not have \(it has "beta"\)/);
    await expect(other.decode(encoded)).rejects.toThrow(/VIGIL_CODEC_KEY_FILE/);
  });

  it('fails clearly when a different key carries the same id, or the ciphertext was altered', async () => {
    const encoded = await new AesGcmCodec(key('k1')).encode(samples());
    await expect(new AesGcmCodec(key('k1')).decode(encoded)).rejects.toThrow(
      /cannot decrypt a payload with key id "k1": authentication failed/,
    );
    const k = key('k2');
    const codec = new AesGcmCodec(k);
    const [p] = await codec.encode(samples());
    const data = new Uint8Array(p?.data ?? []);
    data[20] = (data[20] as number) ^ 1;
    await expect(codec.decode([{ ...p, data }])).rejects.toThrow(/authentication failed/);
    await expect(codec.decode([{ ...p, data: data.subarray(0, 10) }])).rejects.toThrow(/too short/);
    await expect(codec.decode([{ metadata: { encoding: new TextEncoder().encode(ENCRYPTED_ENCODING) }, data }])).rejects.toThrow(
      /no "encryption-key-id"/,
    );
  });

  it('decodes with a rotated-out key and encodes with the active one', async () => {
    const old = key('old');
    const current = key('new');
    const oldPayloads = await new AesGcmCodec(old).encode(samples());
    const codec = new AesGcmCodec(current, [old]);
    expect((await codec.decode(oldPayloads)).map(plain)).toEqual(samples().map(plain));
    const [fresh] = await codec.encode(samples());
    expect(str(fresh?.metadata?.[METADATA_KEY_ID])).toBe('new');
  });

  it('rejects keys of the wrong size and bad ids', () => {
    expect(() => new AesGcmCodec({ id: 'a', key: new Uint8Array(16) })).toThrow(/16 bytes; AES-256 needs exactly 32/);
    expect(() => new AesGcmCodec({ id: 'has space', key: new Uint8Array(32) })).toThrow(/key id/);
    expect(() => new AesGcmCodec(key('same'), [key('same')])).toThrow(/two codec keys have the id "same"/);
  });
});

describe('loadCodecKey and codecFromEnv', () => {
  const raw = randomBytes(32);
  const sha8 = createHash('sha256').update(raw).digest('hex').slice(0, 8);

  it.each<[string, string]>([
    ['base64 with a newline (openssl rand -base64 32)', `${raw.toString('base64')}\n`],
    ['hex', raw.toString('hex')],
    ['upper-case hex with CRLF', `${raw.toString('hex').toUpperCase()}\r\n`],
    ['URL-safe base64 without padding', raw.toString('base64url')],
  ])('reads a key file: %s', (_label, content) => {
    const file = path.join(tmp(), 'key');
    writeFileSync(file, content);
    const k = loadCodecKey({ keyFile: file });
    expect(Buffer.from(k.key).equals(raw)).toBe(true);
    expect(k.id).toBe(sha8);
  });

  it('reads the key from the variable, and takes the id from VIGIL_CODEC_KEY_ID', () => {
    expect(loadCodecKey({ keyEnv: raw.toString('base64') }).id).toBe(sha8);
    expect(loadCodecKey({ keyEnv: raw.toString('hex'), keyId: 'prod-2025' })).toEqual({ id: 'prod-2025', key: new Uint8Array(raw) });
  });

  it.each<[string, () => void, RegExp]>([
    [
      'a missing file',
      () => loadCodecKey({ keyFile: path.join(tmp(), 'nope') }),
      /key file .*nope \(VIGIL_CODEC_KEY_FILE\) does not exist/,
    ],
    ['a directory', () => loadCodecKey({ keyFile: tmp() }), /is a directory/],
    [
      'an empty file',
      () =>
        loadCodecKey({
          keyFile: (() => {
            const f = path.join(tmp(), 'k');
            writeFileSync(f, '\n');
            return f;
          })(),
        }),
      /is empty/,
    ],
    [
      '16 bytes of base64',
      () => loadCodecKey({ keyEnv: randomBytes(16).toString('base64') }),
      /VIGIL_CODEC_KEY decodes \(as base64\) to 16 bytes; AES-256 needs exactly 32 bytes/,
    ],
    ['64 bytes of base64', () => loadCodecKey({ keyEnv: randomBytes(64).toString('base64') }), /to 64 bytes/],
    [
      'hex of the wrong length',
      () => loadCodecKey({ keyEnv: randomBytes(16).toString('hex') }),
      /looks like hex but has 32 characters; a 32-byte key is 64 hex characters/,
    ],
    [
      'neither base64 nor hex',
      () => loadCodecKey({ keyEnv: 'not a key!' }),
      /neither base64 nor hex \(character 10 is not a base64 character\)/,
    ],
    [
      'both sources',
      () => loadCodecKey({ keyEnv: raw.toString('hex'), keyFile: '/x' }),
      /both VIGIL_CODEC_KEY_FILE and VIGIL_CODEC_KEY are set/,
    ],
    ['no source', () => loadCodecKey({}), /no codec key: set VIGIL_CODEC_KEY_FILE/],
    [
      'a bad key id',
      () => loadCodecKey({ keyEnv: raw.toString('hex'), keyId: 'a b' }),
      /VIGIL_CODEC_KEY_ID: a key id is 1 to 64 characters/,
    ],
  ])('explains %s and how to make a key', (_label, load, message) => {
    expect(load).toThrow(CodecError);
    expect(load).toThrow(message);
    if (!/both|key id/.test(message.source)) expect(load).toThrow(/openssl rand -base64 32 > key/);
  });

  it('never puts the key in an error message', () => {
    const short = randomBytes(20).toString('base64');
    expect(() => loadCodecKey({ keyEnv: short })).toThrow(CodecError);
    try {
      loadCodecKey({ keyEnv: short });
    } catch (err) {
      expect((err as Error).message).not.toContain(short);
    }
  });

  it('codecFromEnv: null without a key, a codec with one, an error for a bad one', async () => {
    expect(codecFromEnv({})).toBeNull();
    expect(codecFromEnv({ VIGIL_CODEC_KEY: '  ', VIGIL_CODEC_KEY_FILE: '' })).toBeNull();
    const file = path.join(tmp(), 'key');
    writeFileSync(file, raw.toString('base64'));
    const fromFile = codecFromEnv({ VIGIL_CODEC_KEY_FILE: file });
    expect(fromFile?.keyId).toBe(sha8);
    const fromVar = codecFromEnv({ VIGIL_CODEC_KEY: raw.toString('hex'), VIGIL_CODEC_KEY_ID: 'k-1' });
    expect(fromVar?.keyId).toBe('k-1');
    // Same key bytes under another id: the id is what decode looks up.
    const encoded = (await fromFile?.encode(samples())) ?? [];
    await expect(
      new AesGcmCodec({ id: 'k-1', key: new Uint8Array(raw) }, [{ id: sha8, key: new Uint8Array(raw) }]).decode(encoded),
    ).resolves.toHaveLength(5);
    expect(() => codecFromEnv({ VIGIL_CODEC_KEY: 'short' })).toThrow(CodecError);
    expect(() => codecFromEnv({ VIGIL_CODEC_KEY_ID: 'x' })).toThrow(/VIGIL_CODEC_KEY_ID is set but no key is/);
  });
});

// ---------------------------------------------------------------------------------------------
// The codec server
// ---------------------------------------------------------------------------------------------

describe('payload JSON', () => {
  it("matches the SDK's proto3 JSON form of Payload both ways", () => {
    for (const p of samples()) {
      expect(payloadToJSON(p)).toEqual(sdkPayloadToJSON(p));
      expect(plain(payloadFromJSON(sdkPayloadToJSON(p)))).toEqual(plain(JSONToPayload(sdkPayloadToJSON(p))));
    }
  });

  it('keeps a "__proto__" metadata key as a key', () => {
    const p = payloadFromJSON(JSON.parse('{"metadata": {"__proto__": "AQ==", "encoding": "YQ=="}}'));
    expect(Object.keys(p.metadata ?? {})).toEqual(['__proto__', 'encoding']);
    expect(Object.getPrototypeOf(p.metadata)).toBe(Object.prototype);
  });
});

describe('startCodecServer', () => {
  const UI = 'http://localhost:8233';
  const k = key('srv');
  const codec = new AesGcmCodec(k);
  let server: CodecServer;

  beforeAll(async () => {
    server = await startCodecServer({ codec, port: 0, corsOrigins: [UI], maxBodyBytes: 1024 * 1024 });
  });
  afterAll(async () => {
    await server.close();
  });

  const post = (route: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${server.url}${route}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('listens on 127.0.0.1 by default', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('round-trips payloads over HTTP: /encode then /decode', async () => {
    const json = samples().map(payloadToJSON);
    const enc = await post('/encode', { payloads: json });
    expect(enc.status).toBe(200);
    expect(enc.headers.get('content-type')).toBe('application/json');
    const encoded = (await enc.json()) as { payloads: JSONPayload[] };
    expect(encoded.payloads).toHaveLength(json.length);
    for (const p of encoded.payloads) {
      expect(p.metadata?.encoding).toBe(b64(ENCRYPTED_ENCODING)); // base64, as proto3 JSON wants
      expect(p.metadata?.[METADATA_KEY_ID]).toBe(b64('srv'));
    }
    const dec = await post('/decode', encoded);
    expect(dec.status).toBe(200);
    expect(((await dec.json()) as { payloads: JSONPayload[] }).payloads).toEqual(json);
  });

  it('decodes what the codec encoded in-process, under a /{namespace}/ prefix too', async () => {
    const encoded = (await codec.encode(samples())).map(payloadToJSON);
    for (const route of ['/decode', '/default/decode', '/default/decode/']) {
      const res = await post(route, { payloads: encoded });
      expect(res.status, route).toBe(200);
      expect(((await res.json()) as { payloads: JSONPayload[] }).payloads).toEqual(samples().map(payloadToJSON));
    }
  });

  it('passes unencrypted payloads through /decode', async () => {
    const json = samples().map(payloadToJSON);
    const res = await post('/decode', { payloads: json });
    expect(((await res.json()) as { payloads: JSONPayload[] }).payloads).toEqual(json);
  });

  it('answers the CORS preflight of the Web UI', async () => {
    const res = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: UI,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-namespace,authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI);
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type, X-Namespace, Authorization');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('vary')).toBe('Origin');
  });

  it('sets CORS headers on the answer to an allowed origin, and refuses other origins', async () => {
    const ok = await post('/decode', { payloads: [] }, { Origin: UI, Authorization: 'Bearer t' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(UI);
    expect(await ok.json()).toEqual({ payloads: [] });
    const evil = await post('/decode', { payloads: [] }, { Origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    expect(((await evil.json()) as { error: string }).error).toMatch(/origin https:\/\/evil\.example is not allowed/);
    const preflight = await fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
    expect(preflight.status).toBe(403);
  });

  it.each<[string, string | object, RegExp]>([
    ['malformed JSON', '{"payloads": [', /^request body is not valid JSON: /],
    ['a body without payloads', { items: [] }, /request body must be \{"payloads": \[\.\.\.\]\}/],
    ['payloads that are not an array', { payloads: {} }, /must be \{"payloads"/],
    ['a payload that is not an object', { payloads: [42] }, /payloads\[0\]: expected an object/],
    ['data that is not base64', { payloads: [{ data: 'not base64!' }] }, /payloads\[0\]\.data: expected a base64 string/],
    [
      'metadata that is not base64',
      { payloads: [{}, { metadata: { encoding: 'json/plain; charset=utf-8' } }] },
      /payloads\[1\]\.metadata\.encoding: expected a base64 string/,
    ],
  ])('rejects %s with 400 and a message', async (_label, body, message) => {
    const res = await post('/decode', body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(message);
  });

  it('answers 400 naming the key id when a payload was encrypted with an unknown key', async () => {
    const foreign = (await new AesGcmCodec(key('elsewhere')).encode(samples())).map(payloadToJSON);
    const res = await post('/decode', { payloads: foreign });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/key id "elsewhere"/);
  });

  it('answers 404 for other paths, 405 for other methods, 413 for huge bodies', async () => {
    expect((await post('/other', { payloads: [] })).status).toBe(404);
    const get = await fetch(`${server.url}/decode`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, OPTIONS');
    const huge = await post('/encode', { payloads: [{ data: 'A'.repeat(2 * 1024 * 1024) }] });
    expect(huge.status).toBe(413);
  });
});

describe('against the real Temporal server and CLI', () => {
  it('a client with the codec stores encrypted input; `temporal workflow show --codec-endpoint` reads it through the server', async () => {
    const address = inject('temporalAddress');
    const codec = new AesGcmCodec(key('e2e'));
    const connection = await Connection.connect({ address });
    const server = await startCodecServer({ codec, port: 0, corsOrigins: [] });
    const workflowId = `codec-${process.pid}-${Date.now().toString(36)}`;
    try {
      const client = new Client({ connection, namespace: 'default', dataConverter: { payloadCodecs: [codec] } });
      const handle = await client.workflow.start('noSuchWorkflow', {
        taskQueue: `codec-test-${workflowId}`,
        workflowId,
        args: [{ token: 'plain-text-marker-7f3a' }],
      });
      const plainClient = new Client({ connection, namespace: 'default' });
      const history = await plainClient.workflow.getHandle(workflowId).fetchHistory();
      const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      expect(str(input?.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
      expect(str(input?.data)).not.toContain('plain-text-marker-7f3a');
      expect(await codec.decode([input as Payload]).then(([p]) => defaultPayloadConverter.fromPayload(p as Payload))).toEqual({
        token: 'plain-text-marker-7f3a',
      });

      // Asynchronously: the codec server answering the CLI runs in this process.
      const { stdout: shown } = await promisify(execFile)(
        inject('temporalCli'),
        ['workflow', 'show', '--workflow-id', workflowId, '--address', address, '--codec-endpoint', server.url, '--output', 'json'],
        { encoding: 'utf8', timeout: 60_000 },
      );
      // The CLI prints the decoded payloads in proto3 JSON: json/plain, data base64.
      expect(shown).toContain(b64(JSON.stringify({ token: 'plain-text-marker-7f3a' })));
      expect(shown).toContain(b64('json/plain'));
      expect(shown).not.toContain(b64(ENCRYPTED_ENCODING));
      await handle.terminate('test done');
    } finally {
      await server.close();
      await connection.close();
    }
  });
});
