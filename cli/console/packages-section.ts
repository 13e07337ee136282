/**
 * The console's "Packages" section of a run page: the package fetches its builder and test runs
 * made through the sandbox's proxy, by host (fetches and bytes), the refused ones with why and the
 * knob that opens the registries, and where each fetch is listed (the run's fetch log on its host).
 * From the run's snapshot: the counts its state keeps (docs/security.md, Package registries).
 */
import { html } from 'hono/html';
import type { StatusSnapshot } from '../../schemas/status.js';
import { fetchLogPath } from '../../schemas/paths.js';
import { byteText, packagesLines } from '../../rules/package-fetches.js';
import { neutraliseLine } from '../../lib/terminal-text.js';

type Html = ReturnType<typeof html>;

/** The section (polled while the run runs: `/runs/<id>/fragments/packages`). */
export function packagesSection(s: StatusSnapshot | null, running: boolean): Html {
  if (!s) return html``;
  const body = packagesBody(s);
  return running
    ? html`<section
        id="packages"
        hx-get="/runs/${encodeURIComponent(s.workflowId)}/fragments/packages"
        hx-trigger="every 5s"
        hx-swap="outerHTML"
      >
        ${body}
      </section>`
    : html`<section id="packages">${body}</section>`;
}

function packagesBody(s: StatusSnapshot): Html {
  const p = s.sandbox?.packages;
  if (!p)
    return html`<h2>Packages</h2>
      <p class="muted">
        No package fetch so far. The builder and the test runs reach the package registries through the sandbox's proxy unless the run sets
        sandboxRegistries=false; each fetch is counted here.
      </p>`;
  const log = fetchLogPath(s.repoPath, s.workflowId);
  const refused = packagesLines({ ...p, fetches: 0, hosts: [] }, null);
  return html`<h2>Packages</h2>
    <p>
      ${p.fetches} fetch${p.fetches === 1 ? '' : 'es'} from the package registries, ${byteText(p.bytes)} in all (each connection through the
      sandbox's proxy; each is a line of <code>${neutraliseLine(log)}</code> on the run's host).
    </p>
    ${
      p.hosts.length
        ? html`<table class="packages">
            <thead>
              <tr>
                <th>host</th>
                <th>fetches</th>
                <th>bytes</th>
              </tr>
            </thead>
            <tbody>
              ${p.hosts.map(
                (h) =>
                  html`<tr>
                    <td>${neutraliseLine(h.host)}</td>
                    <td>${h.fetches}</td>
                    <td>${byteText(h.bytes)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : ''
    }
    ${refused.map((l) => html`<p class="refused">${neutraliseLine(l)}</p>`)}`;
}
