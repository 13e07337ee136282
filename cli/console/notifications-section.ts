/**
 * The console inbox's "Notifications" section: what runs told people that nobody has acknowledged
 * yet (`vigil notifications --new`, from the event store), each run's with an "Acknowledge"
 * button, and one for all of them. Polled with the inbox.
 */
import { html } from 'hono/html';
import type { NotificationsList } from '../../schemas/cli-output-reports.js';
import { neutraliseLine } from '../terminal-text.js';
import type { StoreAnswer } from './sources.js';

type Html = ReturnType<typeof html>;

/** How many of the new notifications the inbox shows (the rest: `vigil notifications --new`). */
export const INBOX_NOTIFICATIONS = 20;

export function notificationsSection(answer: StoreAnswer<NotificationsList>): Html {
  return html`<section id="notifications" hx-get="/fragments/notifications" hx-trigger="every 5s" hx-swap="outerHTML">
    <h2>Notifications</h2>
    ${answer.ok ? body(answer.value) : html`<p class="muted">Notifications read the event store: ${answer.why}.</p>`}
  </section>`;
}

function body(list: NotificationsList): Html {
  if (list.unacknowledged === 0)
    return html`<p class="muted" id="notifications-none">
      No new notification${list.total ? html` (${list.total} acknowledged: <code>vigil notifications</code>)` : ''}.
    </p>`;
  const runs = [...new Set(list.notifications.map((n) => n.workflowId))];
  return html`<div class="notifications-head">
      ${list.unacknowledged} new
      notification${list.unacknowledged === 1 ? '' : 's'}${
        list.unacknowledged > list.notifications.length
          ? html` (the newest ${list.notifications.length} here; <code>vigil notifications --new</code> lists all)`
          : ''
      }.
      <form
        class="inline"
        method="post"
        action="/notifications/ack"
        hx-post="/notifications/ack"
        hx-target="#notifications"
        hx-swap="outerHTML"
      >
        <input type="hidden" name="all" value="1" /><button type="submit" id="ack-all">Acknowledge all</button>
      </form>
    </div>
    ${runs.map(
      (run) =>
        html`<article class="card notification" data-run="${run}">
          <h3><a href="/runs/${encodeURIComponent(run)}">${run}</a></h3>
          <ul>
            ${list.notifications
              .filter((n) => n.workflowId === run)
              .map(
                (n) =>
                  html`<li data-event="${n.event}">
                    <time datetime="${n.at}">${n.at.slice(0, 16).replace('T', ' ')}</time> <strong>${n.event}</strong>${
                      n.severity ? ` (${n.severity})` : ''
                    }${n.title ? `: ${neutraliseLine(n.title)}` : ''}
                    <span class="muted"
                      >— ${n.failed === 0 ? `delivered to ${n.delivered} channel(s)` : `${n.delivered} delivered, ${n.failed} failed`}</span
                    >
                  </li>`,
              )}
          </ul>
          <form method="post" action="/notifications/ack" hx-post="/notifications/ack" hx-target="#notifications" hx-swap="outerHTML">
            <input type="hidden" name="run" value="${run}" /><button type="submit" class="ack">Acknowledge</button>
          </form>
        </article>`,
    )}`;
}
