/**
 * The run page's "Notifications" (cli/console/notifications-section.ts): what the run told people,
 * each new or acknowledged (and by whom), one "Acknowledge" button while any is new, and what the
 * page says without an event store. The browser test is tests/e2e/console-notifications.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { runNotificationsSection } from '../../cli/console/notifications-section.js';
import type { NotificationsList } from '../../schemas/cli-output-reports.js';

const n = (event: string, acknowledged: boolean, title: string) => ({
  workflowId: 'run-1',
  at: '2026-11-02T09:03:00.000Z',
  event,
  title,
  severity: 'warning',
  delivered: 1,
  failed: 0,
  acknowledged,
  acknowledgedBy: acknowledged ? 'ana' : null,
});
const render = (list: NotificationsList) => String(runNotificationsSection('run-1', { ok: true, value: list, where: 'x' }));

describe("the run page's notifications", () => {
  it('marks each new or acknowledged, and offers the button while any is new', () => {
    const page = render({
      total: 2,
      unacknowledged: 1,
      notifications: [n('gate_failed', false, 'Quality gate <b>x</b> failed'), n('stuck', true, 'No change for 3 iterations')],
    });
    expect(page).toContain('2 notifications, 1 new.');
    expect(page).toContain('data-event="gate_failed" data-acknowledged="no"');
    expect(page).toContain('data-event="stuck" data-acknowledged="yes"');
    expect(page).toContain('acknowledged by ana');
    expect(page).toContain('hx-post="/runs/run-1/notifications/ack"');
    expect(page).not.toContain('<b>x</b>'); // a title is text, never markup
    const allSeen = render({ total: 1, unacknowledged: 0, notifications: [n('stuck', true, 'No change')] });
    expect(allSeen).not.toContain('notifications/ack');
  });

  it('says when the run told nothing, and when there is no store to read', () => {
    expect(render({ total: 0, unacknowledged: 0, notifications: [] })).toContain('This run has told nobody anything yet.');
    expect(String(runNotificationsSection('run-1', { ok: false, why: 'no event store: DATABASE_URL is not set' }))).toContain(
      'Notifications read the event store: no event store: DATABASE_URL is not set.',
    );
  });
});
