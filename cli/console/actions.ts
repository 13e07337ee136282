/**
 * What a person does from the console, as the Vigil messages the CLI sends: the actions of the
 * message table (schemas/message-verbs.ts), the same payloads (cli/steer-commands.ts PAYLOADS), checked by the same
 * schemas (schemas/messages.ts `parseMessage`, then the run's own update validators), sent through
 * the same function (`sendMessage`, cli/steer.ts, over the CLI's RunApi) — and a rewind through
 * `rewindCommand` (cli/checkpoints.ts), as `vigil rewind` does. `by` is the operator. Each action
 * answers with the run's acknowledgement or the rejection, in the CLI's words.
 */
import type { Client, Connection } from '@temporalio/client';
import { z } from 'zod';
import { MESSAGE_NAMES, MESSAGE_VERBS, type MessageName } from '../../schemas/message-verbs.js';
import { parseMessage } from '../../schemas/messages.js';
import type { Endpoint } from '../endpoint.js';
import { CliError } from '../errors.js';
import { sdkRunApi } from '../sdk-run-api.js';
import { PAYLOADS } from '../steer-commands.js';
import { sendMessage, type MessageKind } from '../steer.js';

/** The console's actions: those of the message table's rows (schemas/message-verbs.ts), in its order. */
export const ACTIONS = MESSAGE_NAMES.flatMap((n) => MESSAGE_VERBS[n].console) as [ConsoleAction, ...ConsoleAction[]];
type ConsoleAction = (typeof MESSAGE_VERBS)[MessageName]['console'][number];
export const ActionSchema = z.enum(ACTIONS);
export type Action = z.infer<typeof ActionSchema>;

/** The form fields an action reads (all text, as a browser sends them). */
export const ActionFormSchema = z.object({
  directive: z.string().optional(),
  reason: z.string().optional(),
  usd: z.string().optional(),
  item: z.string().optional(),
  to: z.string().optional(),
  now: z.string().optional(),
  force: z.string().optional(),
});
export type ActionForm = z.infer<typeof ActionFormSchema>;

export interface ActionResult {
  ok: boolean;
  /** One line per message sent: its acknowledgement, or why it was refused. */
  lines: string[];
}

export interface ActionContext {
  client: Client;
  connection: Connection;
  ep: Endpoint;
  by: string;
}

const text = (v: string | undefined): string | undefined => (v !== undefined && v.trim() !== '' ? v : undefined);

/** One step: the payload as the CLI builds it, then the schema, then the update. */
type Step = { kind: MessageKind; payload: Record<string, unknown> };

/** The row of the message table an action sends, and whether a resume follows it (`input-resume`). */
function rowOf(action: Action): { name: MessageName; thenResume: boolean } {
  for (const name of MESSAGE_NAMES)
    if ((MESSAGE_VERBS[name].console as readonly string[]).includes(action)) return { name, thenResume: action.endsWith('-resume') };
  throw new CliError(`no such action: ${action}`, 2);
}

/** The messages an action sends, in order, their payloads as the CLI builds them (PAYLOADS); bad input throws (a CliError, exit 2 in the CLI). */
export function stepsOf(action: Exclude<Action, 'rewind'>, form: ActionForm, by: string): Step[] {
  const o: Record<string, unknown> = {
    by,
    ...(text(form.reason) ? { reason: form.reason } : {}),
    ...(form.now ? { now: true } : {}),
    ...(form.usd !== undefined ? { usd: form.usd.trim() } : {}),
  };
  const { name, thenResume } = rowOf(action);
  if (name === 'rewind') throw new CliError('rewind is not a message of its own here', 2);
  // The row's arguments from the form fields of the same key (input's directive, waive's item).
  const args = MESSAGE_VERBS[name].args.map((a) => {
    const v = form[a.key as keyof ActionForm];
    return a.key === 'directive' ? v : v?.trim();
  });
  const steps: Step[] = [{ kind: name, payload: PAYLOADS[name](o, ...args) }];
  if (thenResume) steps.push({ kind: 'resume', payload: PAYLOADS.resume(o) });
  return steps;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n').join(' ');

/** Performs an action on run `id`; never throws for a refusal (the result says it). */
export async function perform(ctx: ActionContext, id: string, action: Action, form: ActionForm): Promise<ActionResult> {
  if (action === 'rewind') {
    const to = Number((form.to ?? '').trim());
    if (!Number.isInteger(to) || to < 1) return { ok: false, lines: ['rewind rejected: choose the checkpoint (iteration) to go back to'] };
    const { rewindCommand } = await import('../checkpoints.js');
    try {
      const lines = await rewindCommand(ctx.client, ctx.connection, ctx.ep, id, {
        to,
        ...(text(form.reason) ? { reason: form.reason as string } : {}),
        ...(text(form.directive) ? { directive: form.directive as string } : {}),
        force: Boolean(form.force),
        fork: false,
        by: ctx.by,
      });
      return { ok: true, lines: lines.slice(0, 1).map((l) => l.replace(`${id}: `, 'rewind: ')) };
    } catch (err) {
      return { ok: false, lines: [message(err)] };
    }
  }
  let steps: Step[];
  try {
    steps = stepsOf(action, form, ctx.by);
    for (const s of steps) {
      // The CLI's schema first: a bad payload is refused here, as `vigil <verb>` refuses it (exit 2).
      const parsed = parseMessage(s.kind, s.payload);
      if (!parsed.ok) throw new CliError(`${s.kind} rejected: ${parsed.error}`, 2);
    }
  } catch (err) {
    return { ok: false, lines: [message(err)] };
  }
  const api = sdkRunApi(ctx.client);
  const lines: string[] = [];
  for (const s of steps) {
    try {
      const ack = await sendMessage(api, ctx.ep, id, s.kind, s.payload);
      lines.push(ack ? `${s.kind}: ${ack.message} (status ${ack.status}, iteration ${ack.iteration})` : `${s.kind}: recorded`);
    } catch (err) {
      lines.push(message(err));
      return { ok: false, lines };
    }
  }
  return { ok: true, lines };
}
