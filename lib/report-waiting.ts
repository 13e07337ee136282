/**
 * How long runs waited for people (`vigil report`, the console): the time between a pause (a
 * person's, or an escalation's) and the resume or the outcome that ended it.
 */
import type { Db } from '../lib/event-store.js';
import type { RunEvent } from '../schemas/events.js';

export interface PauseEvent {
  at: Date;
  event: RunEvent;
}

export interface Waiting {
  ms: number;
  pauses: number;
  /** Still paused at the end of the journal (counted until `now`). */
  pausedNow: boolean;
}

/** Time the run spent paused for a person, from its events in seq order. */
export function waitingForPeople(events: readonly PauseEvent[], now: Date): Waiting {
  let since: number | null = null;
  let ms = 0;
  let pauses = 0;
  const close = (at: Date): void => {
    if (since !== null) ms += Math.max(0, at.getTime() - since);
    since = null;
  };
  for (const { at, event: e } of events) {
    if ((e.kind === 'message' && e.name === 'pause' && e.accepted) || (e.kind === 'escalation' && e.paused)) {
      if (since === null) {
        since = at.getTime();
        pauses += 1;
      }
    } else if ((e.kind === 'message' && e.name === 'resume' && e.accepted) || e.kind === 'outcome') {
      close(at);
    }
  }
  const pausedNow = since !== null;
  close(now);
  return { ms, pauses, pausedNow };
}

/** The pause, resume, escalation and outcome events of some runs, by run, in seq order. */
export async function pauseEvents(db: Db, workflowIds: string[]): Promise<Map<string, PauseEvent[]>> {
  const rows = (
    await db.query<{ workflow_id: string; at: Date; data: RunEvent }>(
      `select workflow_id, at, data from run_events
       where workflow_id = any($1::text[]) and at is not null
         and (kind in ('escalation', 'outcome') or (kind = 'message' and data->>'name' in ('pause', 'resume')))
       order by workflow_id, seq, at`,
      [workflowIds],
    )
  ).rows;
  const by = new Map<string, PauseEvent[]>();
  for (const r of rows) {
    const list = by.get(r.workflow_id) ?? [];
    list.push({ at: r.at, event: r.data });
    by.set(r.workflow_id, list);
  }
  return by;
}
