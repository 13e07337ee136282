/**
 * Payloads of the messages people and ops tools send to a run. Each message exists as an Update
 * (validated; the caller gets a clear error) and as a Signal of the same name (for tools that can
 * only signal; an invalid payload is ignored and reported in status).
 *
 * Sandbox-safe: imported by the workflow bundle.
 */
import { z } from 'zod';
import { shared } from './shared.js';
import { ActorSchema, LIMITS } from './run.js';
import { utf8Length } from './utf8.js';
import type { MessageName } from './message-verbs.js';

const Reason = shared('schemas/messages:Reason', () => z.string().max(2000));

export const PausePayloadSchema = shared('schemas/messages:PausePayloadSchema', () =>
  z.strictObject({ reason: Reason.optional(), by: ActorSchema.optional() }),
);
export const ResumePayloadSchema = shared('schemas/messages:ResumePayloadSchema', () => z.strictObject({ by: ActorSchema.optional() }));
export const StopPayloadSchema = shared('schemas/messages:StopPayloadSchema', () =>
  z.strictObject({
    reason: Reason.optional(),
    by: ActorSchema.optional(),
    /** Cancel the running agent call (its whole process tree) instead of letting it finish. */
    now: z.boolean().optional(),
  }),
);

export { utf8Length } from './utf8.js';

export const InputPayloadSchema = shared('schemas/messages:InputPayloadSchema', () =>
  z.strictObject({
    directive: z
      .string()
      .refine((s) => s.trim().length > 0, { message: 'must not be empty' })
      .refine((s) => utf8Length(s) <= LIMITS.directiveBytes, {
        message: `must be at most ${LIMITS.directiveBytes} bytes (1 MiB)`,
      }),
    by: ActorSchema.optional(),
    /**
     * The directive's id (`vigil input` makes one and prints it): the run queues a directive with an
     * id it has seen once, so resending it (with --signal after an unanswered update) never delivers it twice.
     */
    id: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,100}$/, 'letters, digits, . _ : - only, at most 100')
      .optional(),
  }),
);

export const BudgetPayloadSchema = shared('schemas/messages:BudgetPayloadSchema', () =>
  z.strictObject({
    /** The new spend limit in USD for the whole run (0 removes the budget). */
    usd: z.number().min(0).max(1_000_000),
    by: ActorSchema.optional(),
  }),
);
export type BudgetPayload = z.infer<typeof BudgetPayloadSchema>;

export const ForceReviewPayloadSchema = shared('schemas/messages:ForceReviewPayloadSchema', () =>
  z.strictObject({ reason: Reason.optional(), by: ActorSchema.optional() }),
);

export const WaivePayloadSchema = shared('schemas/messages:WaivePayloadSchema', () =>
  z.strictObject({
    /** A checklist item id (`REQ-3`) or a held-out item's label from status (`held-out-1`). */
    item: z.string().min(1).max(64),
    reason: z.string().max(500).optional(),
    by: ActorSchema.optional(),
  }),
);
export type WaivePayload = z.infer<typeof WaivePayloadSchema>;

/**
 * Take the run back to just after iteration `to`: its working tree restored to that checkpoint (the
 * current tree saved as a checkpoint first) and its state as it was then; `directive` goes into the
 * next prompt. `force` saves changes a person made to the tree since the last inspection instead
 * of refusing the rewind.
 */
export const RewindPayloadSchema = shared('schemas/messages:RewindPayloadSchema', () =>
  z.strictObject({
    to: z.number().int().min(1).max(100_000_000),
    reason: Reason.optional(),
    directive: InputPayloadSchema.shape.directive.optional(),
    force: z.boolean().optional(),
    by: ActorSchema.optional(),
  }),
);
export type RewindPayload = z.infer<typeof RewindPayloadSchema>;

export type ForceReviewPayload = z.infer<typeof ForceReviewPayloadSchema>;
export type PausePayload = z.infer<typeof PausePayloadSchema>;
export type ResumePayload = z.infer<typeof ResumePayloadSchema>;
export type StopPayload = z.infer<typeof StopPayloadSchema>;
export type InputPayload = z.infer<typeof InputPayloadSchema>;

/** The payload schema of each message of the table (schemas/message-verbs.ts): one per row, no other. */
export const MESSAGE_SCHEMAS = {
  pause: PausePayloadSchema,
  resume: ResumePayloadSchema,
  stop: StopPayloadSchema,
  input: InputPayloadSchema,
  forceReview: ForceReviewPayloadSchema,
  budget: BudgetPayloadSchema,
  waive: WaivePayloadSchema,
  rewind: RewindPayloadSchema,
} as const satisfies { [K in MessageName]: z.ZodType };
/** A message's name: a row of the message table (schemas/message-verbs.ts), whose payload schema is above. */
export type { MessageName };

/**
 * Key of the marker value the workers' payload converter returns for a payload it cannot decode
 * (unknown encoding, malformed JSON): the message is then invalid, never a failed workflow task.
 */
export const UNDECODABLE_PAYLOAD = '__vigilUndecodablePayload';

/**
 * Beside the marker, for a payload still encrypted (`binary/encrypted`) when it reached the
 * workflow: the id of the key that encrypted it (its `encryption-key-id` metadata; null when it
 * has none). Such a payload means this worker lacks that key (workers/codec.ts).
 */
export const ENCRYPTED_WITH_KEY = '__vigilEncryptedWithKey';

/** The key id of a payload the worker could not decrypt (`undefined` when it was not encrypted, null when the id is unknown). */
export function encryptedWithKey(payload: unknown): string | null | undefined {
  if (typeof payload !== 'object' || payload === null || !(UNDECODABLE_PAYLOAD in payload) || !(ENCRYPTED_WITH_KEY in payload))
    return undefined;
  const id = (payload as Record<string, unknown>)[ENCRYPTED_WITH_KEY];
  return typeof id === 'string' ? id : null;
}

function undecodable(payload: unknown): string | null {
  if (typeof payload !== 'object' || payload === null || !(UNDECODABLE_PAYLOAD in payload)) return null;
  const why = (payload as Record<string, unknown>)[UNDECODABLE_PAYLOAD];
  return typeof why === 'string' ? why : 'unknown reason';
}

/**
 * Validates a message payload. A missing payload counts as `{}`. Returns the parsed payload or an
 * error that names each bad field, e.g. `pause: field "reason": expected string, received number`.
 */
export function parseMessage<N extends MessageName>(
  name: N,
  payload: unknown,
): { ok: true; value: z.infer<(typeof MESSAGE_SCHEMAS)[N]> } | { ok: false; error: string } {
  const notDecoded = undecodable(payload);
  if (notDecoded !== null)
    return { ok: false, error: `${name}: the payload could not be decoded (${notDecoded}); send JSON (encoding json/plain)` };
  const result = MESSAGE_SCHEMAS[name].safeParse(payload === undefined || payload === null ? {} : payload);
  if (result.success) return { ok: true, value: result.data as z.infer<(typeof MESSAGE_SCHEMAS)[N]> };
  const parts = result.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    const path = issue.path.length ? issue.path.join('.') : '(payload)';
    return `field "${path}": ${issue.message}`;
  });
  return { ok: false, error: `${name}: ${parts.join('; ')}` };
}

/**
 * What a cancellation of the running agent call means (asked by the call when it is cancelled):
 * `kill` the agent (STOP --now, a rewind, a rollover, a cancelled workflow), or only `skipGates`,
 * the gate pass the call carries (a PAUSE, a STOP that lets the call finish).
 */
export type CallCancel = 'kill' | 'skipGates';
/** The name of the run's query that answers a CallCancel (workflows/messages.ts `callCancelQuery`; the agent call asks it by name). */
export const CALL_CANCEL_QUERY = 'vigil.callCancel';
