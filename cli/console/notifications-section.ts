/**
 * The console inbox's "Notifications" section: what runs told people that nobody has acknowledged
 * yet (`vigil notifications --new`, from the event store), each run's with an "Acknowledge"
 * button, and one for all of them. Polled with the inbox.
 */
import { html } from 'hono/html';
import type { NotificationsList } from '../../schemas/cli-output-reports.js';
import { neutraliseLine } from '../../lib/terminal-text.js';
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

/** How many of a run's notifications its page shows (the seed keeps the last 100). */
export const RUN_NOTIFICATIONS = 100;

/**
 * The run page's "Notifications": what this run told people, newest first (the last
 * RUN_NOTIFICATIONS), each new or acknowledged, with one "Acknowledge" button for its new ones.
 */
export function runNotificationsSection(run: string, answer: StoreAnswer<NotificationsList>): Html {
  const id = encodeURIComponent(run);
  return html`<section id="run-notifications" hx-get="/runs/${id}/fragments/notifications" hx-trigger="every 10s" hx-swap="outerHTML">
    <h2>Notifications</h2>
    ${answer.ok ? runBody(id, answer.value) : html`<p class="muted">Notifications read the event store: ${answer.why}.</p>`}
  </section>`;
}

function runBody(id: string, list: NotificationsList): Html {
  if (list.total === 0) return html`<p class="muted" id="run-notifications-none">This run has told nobody anything yet.</p>`;
  const shown = list.notifications.length < list.total ? ` (the newest ${list.notifications.length})` : '';
  return html`<p class="notifications-head">
      ${list.total} notification${list.total === 1 ? '' : 's'}${shown}, ${list.unacknowledged} new.
      ${
        list.unacknowledged > 0
          ? html`<form
              class="inline"
              method="post"
              action="/runs/${id}/notifications/ack"
              hx-post="/runs/${id}/notifications/ack"
              hx-target="#run-notifications"
              hx-swap="outerHTML"
            >
              <button type="submit" class="ack">Acknowledge</button>
            </form>`
          : ''
      }
    </p>
    <ul>
      ${list.notifications.map(
        (n) =>
          html`<li data-event="${n.event}" data-acknowledged="${n.acknowledged ? 'yes' : 'no'}">
            ${n.acknowledged ? html`<span class="muted">acknowledged${n.acknowledgedBy ? ` by ${n.acknowledgedBy}` : ''}</span>` : html`<strong>new</strong>`}
            <time datetime="${n.at}">${n.at.slice(0, 16).replace('T', ' ')}</time> ${n.event}${n.severity ? ` (${n.severity})` : ''}${
              n.title ? `: ${neutraliseLine(n.title)}` : ''
            }
            <span class="muted"
              >— ${n.failed === 0 ? `delivered to ${n.delivered} channel(s)` : `${n.delivered} delivered, ${n.failed} failed`}</span
            >
          </li>`,
      )}
    </ul>`;
}
