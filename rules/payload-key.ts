/**
 * A run whose input reached the workflow still encrypted: the worker that took its task lacks the
 * payload key the client encrypted it with (no VIGIL_CODEC_KEY_FILE, or another key). Nothing of
 * the run can be read on this worker, so nothing may be decided here: the workflow task fails
 * with this message (the worker's log shows it, status queries answer with it) and Temporal
 * retries it until a worker that holds the key takes it. A run never fails for a worker's
 * missing key, before its first iteration or in the middle of one (where, replayed without the
 * key, its history would otherwise look like another workflow's).
 *
 * Messages are different: a signal or update under a key no worker has is listed as invalid
 * (workflows/payload-converter.ts), so that no sender can wedge a run.
 */
import { encryptedWithKey } from '../schemas/messages.js';

/** What a person must do when the run's input is ciphertext this worker cannot read; null when the input was readable. */
export function missingPayloadKey(input: unknown): string | null {
  const keyId = encryptedWithKey(input);
  if (keyId === undefined) return null;
  const key = keyId === null ? 'the payload key' : `the payload key "${keyId}"`;
  return (
    `this worker lacks ${key} that encrypted the run's input, so it cannot read the run: ` +
    `start the worker with VIGIL_CODEC_KEY_FILE (or VIGIL_CODEC_KEY) set to that key. ` +
    `The run waits, untouched, until a worker that has the key takes it.`
  );
}
