/**
 * What a person does from the console, as the Vigil messages the CLI sends: the same payloads
 * (cli/steer-commands.ts PAYLOADS and the commander actions of cli/main.ts), checked by the same
 * schemas (schemas/messages.ts `parseMessage`, then the run's own update validators), sent through
 * the same function (`sendMessage`, cli/steer.ts, over the CLI's RunApi) — and a rewind through
 * `rewindCommand` (cli/checkpoints.ts), as `vigil rewind` does. `by` is the operator. Each action
 * answers with the run's acknowledgement or the rejection, in the CLI's words.
 */
import type { Client, Connection } from '@temporalio/client';
import { z } from 'zod';
import { parseMessage, type MessageName } from '../../schemas/messages.js';
import type { Endpoint } from '../endpoint.js';
import { CliError } from '../errors.js';
import { sdkRunApi } from '../sdk-run-api.js';
import { PAYLOADS } from '../steer-commands.js';
import { sendMessage, type MessageKind } from '../steer.js';

export const ACTIONS = [
  'input',
  'resume',
  'input-resume',
  'pause',
  'stop',
  'review',
  'budget',
  'budget-resume',
  'waive',
  'rewind',
] as const;
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

/** The messages an action sends, in order; bad input throws (a CliError, exit 2 in the CLI). */
export function stepsOf(action: Exclude<Action, 'rewind'>, form: ActionForm, by: string): Step[] {
  const o: Record<string, unknown> = { by, ...(text(form.reason) ? { reason: form.reason } : {}) };
  switch (action) {
    case 'input':
      return [{ kind: 'input', payload: PAYLOADS.input(o, form.directive) }];
    case 'input-resume':
      return [
        { kind: 'input', payload: PAYLOADS.input(o, form.directive) },
        { kind: 'resume', payload: PAYLOADS.resume(o) },
      ];
    case 'resume':
      return [{ kind: 'resume', payload: PAYLOADS.resume(o) }];
    case 'pause':
      return [{ kind: 'pause', payload: PAYLOADS.pause(o) }];
    case 'stop':
      return [{ kind: 'stop', payload: PAYLOADS.stop({ ...o, ...(form.now ? { now: true } : {}) }) }];
    case 'review':
      return [{ kind: 'forceReview', payload: { ...(text(form.reason) ? { reason: form.reason } : {}), by } }];
    case 'budget':
    case 'budget-resume': {
      const raw = (form.usd ?? '').trim();
      if (!/^\d+(\.\d+)?$/.test(raw))
        throw new CliError(`budget: the amount must be a number of dollars, e.g. 25 or 12.50, got "${raw}"`, 2);
      const steps: Step[] = [{ kind: 'budget', payload: { usd: Number(raw), by } }];
      if (action === 'budget-resume') steps.push({ kind: 'resume', payload: PAYLOADS.resume(o) });
      return steps;
    }
    case 'waive': {
      const item = (form.item ?? '').trim();
      if (!item) throw new CliError('waive: choose the checklist item to waive', 2);
      return [{ kind: 'waive', payload: { item, ...(text(form.reason) ? { reason: form.reason } : {}), by } }];
    }
  }
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
      const parsed = parseMessage(s.kind as MessageName, s.payload);
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
