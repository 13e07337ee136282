/**
 * `vigil notifications`: what runs told people, from the event store's journal, newest first, with
 * which a person has acknowledged; `vigil notifications ack <run...> | --all` acknowledges them.
 *
 * The journal records every notification a run sent to its channels, delivered or failed on every
 * one of them; a run with no channel configured sends none (`vigil doctor` and `vigil start` say
 * so). An acknowledgement is per run, up to the moment it is given (a notification stored later is
 * new again).
 */
import os from 'node:os';
import type pg from 'pg';
import { z } from 'zod';
import { NotificationsListSchema, type NotificationsList } from '../schemas/cli-output-reports.js';
import { CliError, EXIT } from './errors.js';
import { withEventStore } from './event-store-client.js';
import { neutraliseLine } from '../lib/terminal-text.js';

/** The most a listing shows: the seed keeps the last 100; `--limit` may ask for up to this many. */
export const NOTIFICATIONS_MAX = 1000;
export const NOTIFICATIONS_DEFAULT = 100;

export interface NotificationsFlags {
  run?: string;
  /** Only those nobody has acknowledged. */
  new?: boolean;
  limit?: string;
  json?: boolean;
}

export interface AckFlags {
  all?: boolean;
  by?: string;
  json?: boolean;
}

interface Io {
  out: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

const defaultIo = (): Io => ({ out: (t) => process.stdout.write(t), env: process.env });

const Limit = z.coerce.number().int().min(1).max(NOTIFICATIONS_MAX);

/** The notifications, newest first, within `limit`; and how many of all of them (in scope) are unacknowledged. */
export async function listNotifications(
  db: pg.ClientBase | pg.Pool,
  opts: { run?: string; onlyNew?: boolean; limit: number },
): Promise<NotificationsList> {
  const where: string[] = [];
  const args: unknown[] = [];
  if (opts.run) {
    args.push(opts.run);
    where.push(`n.workflow_id = $${args.length}`);
  }
  const acked = 'a.acked_through is not null and n.stored_at <= a.acked_through';
  const scope = where.length ? `where ${where.join(' and ')}` : '';
  const from = `from vigil_notifications n left join notification_acks a on a.workflow_id = n.workflow_id`;
  const counts = (
    await db.query<{ total: number; unacknowledged: number }>(
      `select count(*)::int as total, count(*) filter (where not (${acked}))::int as unacknowledged ${from} ${scope}`,
      args,
    )
  ).rows[0] ?? { total: 0, unacknowledged: 0 };
  const listed = opts.onlyNew ? `${scope ? `${scope} and` : 'where'} not (${acked})` : scope;
  args.push(opts.limit);
  const rows = (
    await db.query<{
      workflow_id: string;
      at: Date | null;
      stored_at: Date;
      event: string;
      title: string | null;
      severity: string | null;
      delivered: number;
      failed: number;
      acked: boolean;
      acked_by: string | null;
    }>(
      `select n.workflow_id, n.at, n.stored_at, n.event, n.title, n.severity, n.delivered, n.failed,
              (${acked}) as acked, case when ${acked} then a.acked_by end as acked_by
       ${from} ${listed}
       order by coalesce(n.at, n.stored_at) desc, n.workflow_id, n.run_id, n.seq desc
       limit $${args.length}`,
      args,
    )
  ).rows;
  return NotificationsListSchema.parse({
    total: counts.total,
    unacknowledged: counts.unacknowledged,
    notifications: rows.map((r) => ({
      workflowId: r.workflow_id,
      at: (r.at ?? r.stored_at).toISOString(),
      event: r.event,
      title: r.title,
      severity: r.severity,
      delivered: r.delivered,
      failed: r.failed,
      acknowledged: r.acked,
      acknowledgedBy: r.acked_by,
    })),
  });
}

/** Acknowledges every notification stored so far of each run (all runs with notifications when `runs` is null). Returns the runs acknowledged. */
export async function acknowledgeNotifications(
  db: pg.ClientBase | pg.Pool,
  runs: readonly string[] | null,
  by: string,
): Promise<{ workflowId: string; notifications: number }[]> {
  const scope = runs === null ? '' : 'where workflow_id = any($2)';
  const r = await db.query<{ workflow_id: string; notifications: number }>(
    `insert into notification_acks (workflow_id, acked_through, acked_by)
       select workflow_id, max(stored_at), $1 from vigil_notifications ${scope} group by workflow_id
     on conflict (workflow_id) do update set acked_through = excluded.acked_through, acked_at = now(), acked_by = excluded.acked_by
     returning workflow_id, (select count(*)::int from vigil_notifications v where v.workflow_id = notification_acks.workflow_id) as notifications`,
    runs === null ? [by] : [by, [...runs]],
  );
  return r.rows
    .map((x) => ({ workflowId: x.workflow_id, notifications: x.notifications }))
    .sort((a, b) => a.workflowId.localeCompare(b.workflowId));
}

/** `vigil notifications [--run ID] [--new] [--limit N] [--json]`. */
export async function notificationsCommand(flags: NotificationsFlags, io: Partial<Io> = {}): Promise<number> {
  const { out, env } = { ...defaultIo(), ...io };
  const limit = Limit.safeParse(flags.limit ?? NOTIFICATIONS_DEFAULT);
  if (!limit.success) throw new CliError(`--limit ${flags.limit}: a whole number from 1 to ${NOTIFICATIONS_MAX}`, EXIT.usage);
  const list = await withEventStore(env, (db) =>
    listNotifications(db, { ...(flags.run ? { run: flags.run } : {}), onlyNew: flags.new === true, limit: limit.data }),
  );
  out(flags.json ? `${JSON.stringify(list, null, 2)}\n` : notificationsText(list, flags));
  return 0;
}

/** `vigil notifications ack <run...> | --all [--by NAME] [--json]`. */
export async function ackCommand(runs: readonly string[], flags: AckFlags, io: Partial<Io> = {}): Promise<number> {
  const { out, env } = { ...defaultIo(), ...io };
  if (flags.all === true && runs.length > 0) throw new CliError('name runs or give --all, not both', EXIT.usage);
  if (flags.all !== true && runs.length === 0)
    throw new CliError('which runs? name them (vigil notifications ack <run>...) or give --all', EXIT.usage);
  const by = flags.by?.trim() || env.USER || os.userInfo().username || 'someone';
  const done = await withEventStore(env, (db) => acknowledgeNotifications(db, flags.all === true ? null : runs, by));
  const missing = runs.filter((r) => !done.some((d) => d.workflowId === r));
  if (flags.json) out(`${JSON.stringify({ acknowledged: done, withoutNotifications: missing }, null, 2)}\n`);
  else {
    const lines = done.map((d) => `acknowledged ${d.notifications} notification(s) of ${d.workflowId}, as ${by}`);
    for (const r of missing) lines.push(`${r}: the event store has no notification of this run`);
    if (lines.length === 0) lines.push('no notifications to acknowledge');
    out(`${lines.join('\n')}\n`);
  }
  return missing.length > 0 ? EXIT.noSuchRun : 0;
}

export function notificationsText(list: NotificationsList, flags: NotificationsFlags = {}): string {
  const scope = flags.run ? ` of ${flags.run}` : '';
  if (list.total === 0) return `no notifications${scope} in the event store\n`;
  const lines = [
    `${list.total} notification(s)${scope}, ${list.unacknowledged} not acknowledged${list.unacknowledged ? ' (vigil notifications ack <run>... | --all)' : ''}`,
  ];
  if (list.notifications.length === 0) lines.push('none new');
  for (const n of list.notifications) {
    const delivery = n.failed === 0 ? `delivered to ${n.delivered} channel(s)` : `${n.delivered} delivered, ${n.failed} failed`;
    const title = n.title ? `: ${neutraliseLine(n.title)}` : '';
    lines.push(
      `${n.acknowledged ? '   ' : 'new'} ${n.at.slice(0, 16).replace('T', ' ')}  ${n.workflowId}  ` +
        `${n.event}${n.severity ? ` (${n.severity})` : ''}${title} — ${delivery}`,
    );
  }
  if (list.notifications.length < (flags.new ? list.unacknowledged : list.total))
    lines.push(`(the newest ${list.notifications.length}; --limit shows more)`);
  return `${lines.join('\n')}\n`;
}
