/**
 * The payload converter of Vigil's workers (workflow sandbox and activities alike): the SDK's
 * default converter, except that a payload it cannot decode — an encoding it does not know
 * (`--input-meta encoding=x/y`, a client with a codec the worker lacks), or bytes that are not the
 * JSON they claim to be — becomes a marker value instead of an exception (naming the key of a
 * payload still encrypted). A signal carrying such a payload then reaches its handler, is rejected by message validation and listed under
 * `invalidMessages`, instead of failing every workflow task of the run forever (the signal is in
 * history, so each retry and replay would throw again). Encoding is unchanged, so histories replay.
 */
import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload, type PayloadConverter } from '@temporalio/common';
import { ENCRYPTED_WITH_KEY, UNDECODABLE_PAYLOAD } from '../schemas/messages.js';

/** The codec's encoding and key-id metadata (workers/codec.ts; not imported: worker-only code). */
const ENCRYPTED_ENCODING = 'binary/encrypted';
const ENCRYPTION_KEY_ID = 'encryption-key-id';

/** The text of an ASCII metadata value (an encoding name, a key id: ASCII by construction), or null. */
function decodeUtf8(bytes: Uint8Array | null | undefined): string | null {
  if (!bytes) return null;
  let out = '';
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
}

class TolerantPayloadConverter implements PayloadConverter {
  toPayload<T>(value: T, ...rest: unknown[]): Payload {
    return (defaultPayloadConverter.toPayload as (v: T, ...r: unknown[]) => Payload)(value, ...rest);
  }

  fromPayload<T>(payload: Payload, ...rest: unknown[]): T {
    try {
      return (defaultPayloadConverter.fromPayload as (p: Payload, ...r: unknown[]) => T)(payload, ...rest);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const encoding = decodeUtf8(payload.metadata?.[METADATA_ENCODING_KEY]);
      if (encoding !== ENCRYPTED_ENCODING) return { [UNDECODABLE_PAYLOAD]: why.slice(0, 300) } as T;
      // Still ciphertext: this worker lacks the key (rules/payload-key.ts).
      const keyId = decodeUtf8(payload.metadata?.[ENCRYPTION_KEY_ID]);
      return { [UNDECODABLE_PAYLOAD]: why.slice(0, 300), [ENCRYPTED_WITH_KEY]: keyId === null ? null : keyId.slice(0, 64) } as T;
    }
  }
}

export const payloadConverter: PayloadConverter = new TolerantPayloadConverter();
