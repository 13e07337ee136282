/**
 * The console's "Pull request" section of a run page, and its line on an inbox card: the pull
 * request the run follows after delivering it (knob followPr), where it stands (waiting, checks
 * red, fixing, rebasing, waits for a person, merged, closed), the red checks and comments taken
 * (with their authors), the updates onto its moved base with their outcome, and the run's replies.
 * From the run's snapshot (rules/pr-life.ts), as `vigil status` and the UI card show it.
 */
import { html } from 'hono/html';
import type { StatusSnapshot } from '../../schemas/status.js';
import { prCountsLine, prLife, type PrLife } from '../../rules/pr-life.js';
import { redactSecrets } from '../../rules/scans.js';
import { neutraliseLine } from '../../lib/terminal-text.js';

type Html = ReturnType<typeof html>;
/** Text from the run or from other people (comments' authors, replies), safe to show: secrets redacted, controls visible. */
const line = (s: string): string => neutraliseLine(redactSecrets(s).text);

/** The pull request's link: its number and address (only an http(s) address is a link). */
function prLink(life: PrLife): Html {
  const name = life.number !== null ? `#${life.number}` : (life.url ?? life.branch);
  return life.url && /^https?:\/\//.test(life.url)
    ? html`<a class="pr-link" href="${life.url}" rel="noreferrer noopener">${name}</a>`
    : html`<span class="pr-link">${line(name)}</span>`;
}

/** The section (polled while the run runs: `/runs/<id>/fragments/pr`); nothing for a run that follows no pull request. */
export function prSection(s: StatusSnapshot | null, running: boolean): Html {
  const life = s ? prLife(s) : null;
  if (!s || !life) return html``;
  const body = html`<h2>Pull request ${prLink(life)}</h2>
    <p class="pr-state" data-state="${life.state}">${line(life.stateText)}</p>
    <dl class="facts">
      <dt>branch</dt>
      <dd>${line(life.branch)}${life.base ? ` → ${line(life.base)}` : ''}</dd>
      <dt>followed since</dt>
      <dd>${life.since}</dd>
      <dt>taken</dt>
      <dd class="pr-counts">${prCountsLine(life)}</dd>
    </dl>
    ${
      life.entries.length === 0
        ? html`<p class="muted">
            No event yet: red checks, a review that requests changes, a <code>/vigil</code> comment, the base moving, a merge or a close
            (\`vigil hooks\`, \`vigil pr-event\`).
          </p>`
        : html`<ol class="pr-events">
            ${life.entries.map((e) => html`<li data-kind="${e.kind}"><time>${e.at}</time> ${line(e.text)}</li>`)}
          </ol>`
    }`;
  return running
    ? html`<section id="pr" hx-get="/runs/${encodeURIComponent(s.workflowId)}/fragments/pr" hx-trigger="every 5s" hx-swap="outerHTML">
        ${body}
      </section>`
    : html`<section id="pr">${body}</section>`;
}

/** The pull request on an inbox card: which, and where it stands. */
export function prInboxLine(s: StatusSnapshot): Html {
  const life = prLife(s);
  return life ? html`<p class="pr-line">Pull request ${prLink(life)}: ${line(life.stateText)}</p>` : html``;
}
