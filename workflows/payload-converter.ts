/**
 * The payload converter of Vigil's workers (workflow sandbox and activities alike): the SDK's
 * default converter, except that a payload it cannot decode — an encoding it does not know
 * (`--input-meta encoding=x/y`, a client with a codec the worker lacks), or bytes that are not the
 * JSON they claim to be — becomes a marker value instead of an exception. A signal carrying such
 * a payload then reaches its handler, is rejected by message validation and listed under
 * `invalidMessages`, instead of failing every workflow task of the run forever (the signal is in
 * history, so each retry and replay would throw again). Encoding is unchanged, so histories replay.
 */
import { defaultPayloadConverter, type Payload, type PayloadConverter } from '@temporalio/common';
import { UNDECODABLE_PAYLOAD } from '../schemas/messages.js';

class TolerantPayloadConverter implements PayloadConverter {
  toPayload<T>(value: T, ...rest: unknown[]): Payload {
    return (defaultPayloadConverter.toPayload as (v: T, ...r: unknown[]) => Payload)(value, ...rest);
  }

  fromPayload<T>(payload: Payload, ...rest: unknown[]): T {
    try {
      return (defaultPayloadConverter.fromPayload as (p: Payload, ...r: unknown[]) => T)(payload, ...rest);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return { [UNDECODABLE_PAYLOAD]: why.slice(0, 300) } as T;
    }
  }
}

export const payloadConverter: PayloadConverter = new TolerantPayloadConverter();
