import { defaultPayloadConverter, METADATA_ENCODING_KEY } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { parseMessage } from '../../schemas/messages.js';
import { missingPayloadKey } from '../../rules/payload-key.js';
import { payloadConverter } from '../../workflows/payload-converter.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const encrypted = (keyId?: string) => ({
  metadata: { [METADATA_ENCODING_KEY]: bytes('binary/encrypted'), ...(keyId ? { 'encryption-key-id': bytes(keyId) } : {}) },
  data: new Uint8Array([1, 2, 3, 4]),
});

describe('a run input this worker cannot decrypt', () => {
  it('names the key the input was encrypted with and what to do', () => {
    const input = payloadConverter.fromPayload(encrypted('k-2026'));
    const why = missingPayloadKey(input);
    expect(why).toMatch(/^this worker lacks the payload key "k-2026" that encrypted the run's input/);
    expect(why).toContain('VIGIL_CODEC_KEY_FILE');
    expect(why).toContain('waits');
  });

  it('still says so when the ciphertext names no key', () => {
    expect(missingPayloadKey(payloadConverter.fromPayload(encrypted()))).toMatch(/^this worker lacks the payload key that encrypted/);
  });

  it('is silent for a readable input and for a payload that is merely malformed', () => {
    expect(missingPayloadKey(payloadConverter.fromPayload(defaultPayloadConverter.toPayload({ prdPath: 'PRD.md' })))).toBeNull();
    const garbled = { metadata: { [METADATA_ENCODING_KEY]: bytes('json/plain') }, data: bytes('{not json') };
    expect(missingPayloadKey(payloadConverter.fromPayload(garbled))).toBeNull();
    expect(missingPayloadKey(null)).toBeNull();
  });

  it('leaves a message under a foreign key an invalid message, never a wedged run', () => {
    const parsed = parseMessage('pause', payloadConverter.fromPayload(encrypted('other')));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(/^pause: the payload could not be decoded \(Unknown encoding: binary\/encrypted\)/);
  });
});
