/**
 * Owns payload encryption for Vigil's Temporal clients and workers: an AES-256-GCM
 * `PayloadCodec` that encrypts each whole payload (metadata included, serialized with the
 * Payload protobuf) into a payload marked `encoding: binary/encrypted` and
 * `encryption-key-id: <id>`; loading the 32-byte key from a file or the environment
 * (VIGIL_CODEC_KEY_FILE, VIGIL_CODEC_KEY, VIGIL_CODEC_KEY_ID); and `codecFromEnv`.
 *
 * Ciphertext layout (`data` of an encrypted payload): 12-byte random nonce, ciphertext, 16-byte
 * GCM tag, no additional data; the same layout as Temporal's Go and Python encryption samples.
 * The HTTP codec server for the Web UI is in codec-server.ts.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_KEY_ID = 'encryption-key-id';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const HOW_TO_MAKE_A_KEY = 'Make a key with: openssl rand -base64 32 > key (then VIGIL_CODEC_KEY_FILE=key)';

/** What is wrong with a key, a key id or an encrypted payload; the message says what to do. */
export class CodecError extends Error {
  override name = 'CodecError';
}

/** A 32-byte AES-256 key and the id written next to every payload it encrypts. */
export interface CodecKey {
  id: string;
  key: Uint8Array;
}

const PayloadProto = proto.temporal.api.common.v1.Payload;
const utf8 = new TextEncoder();
const fromUtf8 = (b: Uint8Array | null | undefined): string | null => (b ? Buffer.from(b).toString('utf8') : null);

const KEY_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;

function checkKeyId(id: string, source: string): string {
  if (!KEY_ID_RE.test(id)) {
    throw new CodecError(
      `${source}: a key id is 1 to 64 characters among letters, digits and . _ : - (got ${JSON.stringify(id.slice(0, 80))})`,
    );
  }
  return id;
}

/** The default key id: the first 8 hex characters of sha256(key). */
export function defaultKeyId(key: Uint8Array): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/**
 * AES-256-GCM over whole payloads. Encodes with `active`; decodes payloads encrypted with
 * `active` or any of `others` (keys being rotated out), and passes every payload that is not
 * `binary/encrypted` through untouched.
 */
export class AesGcmCodec implements PayloadCodec {
  readonly keyId: string;
  private readonly active: Buffer;
  private readonly keys = new Map<string, Buffer>();

  constructor(active: CodecKey, others: readonly CodecKey[] = []) {
    for (const k of [active, ...others]) {
      checkKeyId(k.id, 'codec key');
      if (k.key.length !== KEY_BYTES)
        throw new CodecError(`codec key "${k.id}" has ${k.key.length} bytes; AES-256 needs exactly ${KEY_BYTES}. ${HOW_TO_MAKE_A_KEY}`);
      if (this.keys.has(k.id)) throw new CodecError(`two codec keys have the id "${k.id}"; give each key its own id`);
      this.keys.set(k.id, Buffer.from(k.key));
    }
    this.keyId = active.id;
    this.active = this.keys.get(active.id) as Buffer;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const plain = PayloadProto.encode(payload).finish();
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', this.active, nonce);
      const data = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { [METADATA_ENCODING_KEY]: utf8.encode(ENCRYPTED_ENCODING), [METADATA_KEY_ID]: utf8.encode(this.keyId) },
        data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decodeOne(payload));
  }

  private decodeOne(payload: Payload): Payload {
    if (fromUtf8(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return payload;
    const keyId = fromUtf8(payload.metadata?.[METADATA_KEY_ID]);
    if (keyId === null) throw new CodecError(`an encrypted payload has no "${METADATA_KEY_ID}" metadata: it was not written by this codec`);
    const key = this.keys.get(keyId);
    if (!key) {
      throw new CodecError(
        `a payload is encrypted with key id "${keyId}", which this process does not have (it has ${[...this.keys.keys()].map((k) => `"${k}"`).join(', ')}). ` +
          'Point VIGIL_CODEC_KEY_FILE (or VIGIL_CODEC_KEY) at the key with that id.',
      );
    }
    const data = payload.data ?? new Uint8Array(0);
    if (data.length < NONCE_BYTES + TAG_BYTES)
      throw new CodecError(`an encrypted payload (key id "${keyId}") is ${data.length} bytes: too short to be AES-256-GCM output`);
    const nonce = data.subarray(0, NONCE_BYTES);
    const tag = data.subarray(data.length - TAG_BYTES);
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, nonce);
      decipher.setAuthTag(tag);
      plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new CodecError(
        `cannot decrypt a payload with key id "${keyId}": authentication failed. The key this process has under that id is not ` +
          `the one that encrypted it (two keys with one id?), or the payload was altered.`,
      );
    }
    try {
      return PayloadProto.decode(plain);
    } catch (err) {
      throw new CodecError(
        `a payload decrypted with key id "${keyId}" is not a Payload protobuf: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------

/** A 32-byte key written as 64 hex characters or as base64 (standard or URL-safe, padded or
 * not, line breaks allowed). `source` names where it came from, for the error message. */
export function parseCodecKey(text: string, source: string): Uint8Array {
  const t = text.replace(/\s+/g, '');
  if (t === '') throw new CodecError(`${source} is empty. ${HOW_TO_MAKE_A_KEY}`);
  if (/^[0-9a-fA-F]+$/.test(t)) {
    if (t.length !== KEY_BYTES * 2) {
      throw new CodecError(
        `${source} looks like hex but has ${t.length} characters; a 32-byte key is 64 hex characters (or 44 base64 characters). ${HOW_TO_MAKE_A_KEY}`,
      );
    }
    return new Uint8Array(Buffer.from(t, 'hex'));
  }
  const bad = text.search(/[^A-Za-z0-9+/_=\s-]/);
  if (bad !== -1 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(t) || t.length % 4 === 1) {
    throw new CodecError(
      `${source} is neither base64 nor hex${bad !== -1 ? ` (character ${bad + 1} is not a base64 character)` : ''}. ${HOW_TO_MAKE_A_KEY}`,
    );
  }
  const key = Buffer.from(t, 'base64');
  if (key.length !== KEY_BYTES) {
    throw new CodecError(
      `${source} decodes (as base64) to ${key.length} bytes; AES-256 needs exactly 32 bytes (44 base64 characters or 64 hex characters). ${HOW_TO_MAKE_A_KEY}`,
    );
  }
  return new Uint8Array(key);
}

export interface LoadCodecKeyOptions {
  /** A file holding the key (VIGIL_CODEC_KEY_FILE). */
  keyFile?: string;
  /** The key itself (VIGIL_CODEC_KEY). */
  keyEnv?: string;
  /** The key id (VIGIL_CODEC_KEY_ID); default: the first 8 hex characters of sha256(key). */
  keyId?: string;
}

/** Reads the key from `keyFile` or `keyEnv` (exactly one of them). Throws a `CodecError` that
 * says what is wrong and how to make a key. */
export function loadCodecKey(opts: LoadCodecKeyOptions): CodecKey {
  const { keyFile, keyEnv } = opts;
  if (keyFile && keyEnv) throw new CodecError('both VIGIL_CODEC_KEY_FILE and VIGIL_CODEC_KEY are set: set only one of them');
  let key: Uint8Array;
  if (keyFile) {
    let text: string;
    try {
      text = readFileSync(keyFile, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOENT'
          ? 'does not exist'
          : code === 'EACCES' || code === 'EPERM'
            ? 'cannot be read (permission denied)'
            : code === 'EISDIR'
              ? 'is a directory, not a file'
              : `cannot be read (${code ?? String(err)})`;
      throw new CodecError(`the codec key file ${keyFile} (VIGIL_CODEC_KEY_FILE) ${why}. ${HOW_TO_MAKE_A_KEY}`);
    }
    key = parseCodecKey(text, `the codec key file ${keyFile} (VIGIL_CODEC_KEY_FILE)`);
  } else if (keyEnv) {
    key = parseCodecKey(keyEnv, 'VIGIL_CODEC_KEY');
  } else {
    throw new CodecError(
      `no codec key: set VIGIL_CODEC_KEY_FILE to a file holding a 32-byte key, or VIGIL_CODEC_KEY to the key itself. ${HOW_TO_MAKE_A_KEY}`,
    );
  }
  const id = opts.keyId ? checkKeyId(opts.keyId, 'VIGIL_CODEC_KEY_ID') : defaultKeyId(key);
  return { id, key };
}

/**
 * The codec the environment asks for: null when neither VIGIL_CODEC_KEY_FILE nor VIGIL_CODEC_KEY
 * is set (payloads stay plain JSON), else an `AesGcmCodec` with that key and VIGIL_CODEC_KEY_ID.
 * Throws a `CodecError` when a key is configured but unusable: never silently unencrypted.
 */
export function codecFromEnv(env: NodeJS.ProcessEnv = process.env): AesGcmCodec | null {
  const keyFile = env.VIGIL_CODEC_KEY_FILE?.trim() || undefined;
  const keyEnv = env.VIGIL_CODEC_KEY?.trim() || undefined;
  if (!keyFile && !keyEnv) {
    if (env.VIGIL_CODEC_KEY_ID)
      throw new CodecError('VIGIL_CODEC_KEY_ID is set but no key is: set VIGIL_CODEC_KEY_FILE or VIGIL_CODEC_KEY too');
    return null;
  }
  return new AesGcmCodec(loadCodecKey({ keyFile, keyEnv, keyId: env.VIGIL_CODEC_KEY_ID?.trim() || undefined }));
}

/**
 * The worker's view of a codec (or of none): a payload it cannot decrypt (a key it lacks, a
 * tampered payload) stays as it is, so the workflow's tolerant payload converter turns it into a
 * marker naming the key: an invalid message for a signal or update, a run that waits for a worker
 * with the key for the run's input (rules/payload-key.ts), instead of a workflow
 * task that fails on every retry with a misleading error. Each key this worker lacks is named
 * once in its log, with what to do. A worker without any codec still gets this view, so that it
 * says why it cannot read an encrypted run.
 */
export function tolerantDecoding(
  codec: PayloadCodec | null,
  warn: (line: string) => void = (m) => process.stderr.write(`${m}\n`),
): PayloadCodec {
  const named = new Set<string>();
  const lacks = (p: Payload, why: string): void => {
    const keyId = fromUtf8(p.metadata?.[METADATA_KEY_ID]) ?? '(none)';
    if (named.has(keyId) || named.size >= 16) return;
    named.add(keyId);
    warn(
      `vigil worker: this worker lacks the payload key "${keyId.slice(0, 64)}" (${why}): runs encrypted with it wait for a worker that has it, ` +
        'and messages under it are listed as invalid. Start the worker with VIGIL_CODEC_KEY_FILE (or VIGIL_CODEC_KEY) set to that key.',
    );
  };
  return {
    encode: (payloads) => (codec ? codec.encode(payloads) : Promise.resolve(payloads)),
    decode: async (payloads) =>
      Promise.all(
        payloads.map(async (p) => {
          if (fromUtf8(p.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return p;
          if (!codec) {
            lacks(p, 'it has no codec key at all');
            return p;
          }
          try {
            return ((await codec.decode([p])) as Payload[])[0] ?? p;
          } catch (err) {
            lacks(p, err instanceof Error ? err.message.slice(0, 200) : String(err));
            return p;
          }
        }),
      ),
  };
}
