/**
 * `vigil notifications` and `vigil notifications ack` against a real Postgres: the journal's
 * notifications as the workflow records them (projected by the worker's own projection), listed
 * newest first with their titles, and acknowledged per run; a notification stored after an
 * acknowledgement is new again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeEventStore, projectEventsTo } from '../../lib/event-store.js';
import { CliError, EXIT } from '../../cli/connection.js';
import { ackCommand, notificationsCommand } from '../../cli/notifications.js';
import { NotificationsListSchema } from '../../schemas/cli-output-reports.js';
import { EventEnvelopeSchema, type EventEnvelope, type RunEvent } from '../../schemas/events.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

let tp: TestPostgres;
let url = '';

const T0 = Date.parse('2026-11-02T09:00:00.000Z');
const envelopes = (runId: string, first: number, events: [number, RunEvent][]): EventEnvelope[] =>
  events.map(([minutes, event], i) =>
    EventEnvelopeSchema.parse({ seq: first + i, runId, at: new Date(T0 + minutes * 60_000).toISOString(), event }),
  );

const capture = () => {
  let text = '';
  return { out: (t: string) => void (text += t), text: () => text };
};

beforeAll(async () => {
  tp = await startTestPostgres();
  url = await tp.freshDatabase('notifications');
  const alpha = envelopes('r-alpha', 1, [
    // Recorded before notifications carried their title: listed without one.
    [1, { kind: 'notification', event: 'escalation', delivered: 1, failed: 0 }],
    [
      5,
      {
        kind: 'notification',
        event: 'budget_warning',
        delivered: 1,
        failed: 1,
        title: 'Budget at 80%: $0.80 of $1.00',
        severity: 'warning',
      },
    ],
  ]);
  const beta = envelopes('r-beta', 1, [
    [
      3,
      { kind: 'notification', event: 'paused', delivered: 2, failed: 0, title: 'Paused: the council asks a person', severity: 'critical' },
    ],
  ]);
  expect((await projectEventsTo(url, { workflowId: 'run-alpha', events: alpha })).problem).toBeNull();
  expect((await projectEventsTo(url, { workflowId: 'run-beta', events: beta })).problem).toBeNull();
});

afterAll(async () => {
  await closeEventStore();
  await tp?.cleanup();
});

const list = async (flags: Parameters<typeof notificationsCommand>[0]) => {
  const c = capture();
  expect(await notificationsCommand({ ...flags, json: true }, { out: c.out, env: { DATABASE_URL: url } })).toBe(0);
  return NotificationsListSchema.parse(JSON.parse(c.text()));
};

describe('vigil notifications', () => {
  it('lists what runs told people, newest first, with titles where the journal has them, all new', async () => {
    const c = capture();
    expect(await notificationsCommand({}, { out: c.out, env: { DATABASE_URL: url } })).toBe(0);
    const lines = c.text().trimEnd().split('\n');
    expect(lines[0]).toBe('3 notification(s), 3 not acknowledged (vigil notifications ack <run>... | --all)');
    expect(lines.slice(1)).toEqual([
      'new 2026-11-02 09:05  run-alpha  budget_warning (warning): Budget at 80%: $0.80 of $1.00 — 1 delivered, 1 failed',
      'new 2026-11-02 09:03  run-beta  paused (critical): Paused: the council asks a person — delivered to 2 channel(s)',
      'new 2026-11-02 09:01  run-alpha  escalation — delivered to 1 channel(s)',
    ]);
    const one = await list({ run: 'run-beta' });
    expect(one).toMatchObject({ total: 1, unacknowledged: 1 });
    expect(one.notifications.map((n) => n.event)).toEqual(['paused']);
    const limited = capture();
    await notificationsCommand({ limit: '1' }, { out: limited.out, env: { DATABASE_URL: url } });
    expect(limited.text()).toContain('(the newest 1; --limit shows more)');
  });

  it('an acknowledgement covers a run up to now; a notification stored after it is new again', async () => {
    const c = capture();
    expect(await ackCommand(['run-alpha'], { by: 'alice' }, { out: c.out, env: { DATABASE_URL: url } })).toBe(0);
    expect(c.text()).toBe('acknowledged 2 notification(s) of run-alpha, as alice\n');
    const after = await list({});
    expect(after).toMatchObject({ total: 3, unacknowledged: 1 });
    expect(after.notifications.filter((n) => n.acknowledged).map((n) => [n.workflowId, n.acknowledgedBy])).toEqual([
      ['run-alpha', 'alice'],
      ['run-alpha', 'alice'],
    ]);
    expect((await list({ new: true })).notifications.map((n) => n.workflowId)).toEqual(['run-beta']);

    // The run goes on and tells people again: that one is new.
    const later = envelopes('r-alpha', 3, [
      [9, { kind: 'notification', event: 'run_finished', delivered: 1, failed: 0, title: 'Run finished: approved', severity: 'info' }],
    ]);
    expect((await projectEventsTo(url, { workflowId: 'run-alpha', events: later })).problem).toBeNull();
    const fresh = await list({ new: true });
    expect(fresh.notifications.map((n) => [n.workflowId, n.event])).toEqual([
      ['run-alpha', 'run_finished'],
      ['run-beta', 'paused'],
    ]);

    const all = capture();
    expect(await ackCommand([], { all: true, by: 'bob' }, { out: all.out, env: { DATABASE_URL: url } })).toBe(0);
    expect(all.text()).toBe('acknowledged 3 notification(s) of run-alpha, as bob\nacknowledged 1 notification(s) of run-beta, as bob\n');
    expect(await list({ new: true })).toMatchObject({ unacknowledged: 0, notifications: [] });
    const none = capture();
    await notificationsCommand({ new: true }, { out: none.out, env: { DATABASE_URL: url } });
    expect(none.text()).toBe('4 notification(s), 0 not acknowledged\nnone new\n');
  });

  it('bad input is refused with what to do, and changes nothing', async () => {
    const env = { DATABASE_URL: url };
    await expect(notificationsCommand({ limit: 'many' }, { out: () => undefined, env })).rejects.toMatchObject({
      exitCode: EXIT.usage,
      message: '--limit many: a whole number from 1 to 1000',
    });
    await expect(ackCommand([], {}, { out: () => undefined, env })).rejects.toBeInstanceOf(CliError);
    await expect(ackCommand(['run-alpha'], { all: true }, { out: () => undefined, env })).rejects.toMatchObject({ exitCode: EXIT.usage });
    const c = capture();
    expect(await ackCommand(['run-nobody'], { by: 'carol' }, { out: c.out, env })).toBe(EXIT.noSuchRun);
    expect(c.text()).toBe('run-nobody: the event store has no notification of this run\n');
    // Nothing acknowledged by carol.
    expect((await list({})).notifications.some((n) => n.acknowledgedBy === 'carol')).toBe(false);
  });
});
