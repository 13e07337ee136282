/**
 * How full an agent's context got in one call, where its CLI says so (claude's stream-json: the
 * tokens its last request sent, cached or not; its model's window from the result's `modelUsage`;
 * its `compact_boundary` records): the notification triggers read it (rules/notify-triggers.ts,
 * context 90 % and compactions). A CLI that does not say gives null, and they never fire.
 *
 * Sandbox-safe: imported by the workflow bundle (an agent call's result carries it).
 */
import { z } from 'zod';

export const CallContextSchema = z.object({
  usedTokens: z.number().min(0),
  /** The model's context window in tokens; null: the CLI did not say. */
  windowTokens: z.number().min(0).nullable(),
  compactions: z.number().int().min(0),
});
export type CallContext = z.infer<typeof CallContextSchema>;
