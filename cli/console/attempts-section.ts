/**
 * Runs with attempts (`vigil start --attempts K`, docs/attempts.md) in the console: their row in
 * the runs list (the phase, the winner, a pick waited for), their page (each attempt with its
 * outcome and a link to its own run page, the comparison, the winner), and an inbox card for each
 * one that waits for a person's pick ("pick an attempt"), whose buttons send the run's `pick`
 * update as `vigil pick` does. Read from the run's `attempts` query; server-rendered HTML (Hono's
 * `html`: every interpolated value is HTML-escaped).
 */
import type { Client } from '@temporalio/client';
import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { AttemptsStatus } from '../../schemas/attempts.js';
import { pickFailure } from '../pick-command.js';
import { shown } from './pages.js';

type Html = ReturnType<typeof html>;
const enc = encodeURIComponent;
const usd = (x: number | null): string => (x === null ? '—' : `$${x.toFixed(2)}`);
export const ATTEMPTS_TYPE = 'vigilAttempts';

/** A run with attempts' `attempts` status, or null (not such a run, no worker answered within 5 s). */
export async function attemptsStatus(client: Client, workflowId: string): Promise<AttemptsStatus | null> {
  return Promise.race([
    client.workflow
      .getHandle(workflowId)
      .query<AttemptsStatus>('attempts')
      .catch(() => null),
    new Promise<null>((ok) => setTimeout(() => ok(null), 5000).unref()),
  ]);
}

/** What the runs list says of a run with attempts. */
export function attemptsRowStatus(s: AttemptsStatus | null): string {
  if (!s) return 'attempts (no worker answered)';
  if (s.phase === 'waiting_for_pick') return `${s.attempts.length} attempts: pick an attempt`;
  if (s.phase === 'ended')
    return `${s.attempts.length} attempts: ${s.outcome?.status ?? 'ended'}${s.winner ? ` (attempt ${s.winner})` : ''}`;
  return `${s.attempts.length} attempts: ${s.phase}${s.stopping ? ', stopping' : s.paused ? ', paused' : ''}`;
}

/** The pick buttons of a run that waits for one (each posts the run's `pick` update). */
function pickForm(s: AttemptsStatus): Html {
  const from = s.comparison?.pickFrom ?? [];
  if (s.phase !== 'waiting_for_pick' || !from.length) return html``;
  return html`<form class="pick" hx-post="/runs/${enc(s.runId)}/pick" hx-target="#acks" hx-swap="afterbegin">
    ${from.map((n) => html`<button name="attempt" value="${String(n)}" data-attempt="${String(n)}">Pick attempt ${n}</button>`)}
  </form>`;
}

/** The attempts as a table: outcome, iterations, findings, spend, agent, each linked to its run page. */
function attemptsTable(s: AttemptsStatus): Html {
  return html`<table id="attempts-table">
    <thead>
      <tr>
        <th>attempt</th>
        <th>state</th>
        <th>iterations</th>
        <th>review findings</th>
        <th>spend</th>
        <th>agent</th>
      </tr>
    </thead>
    <tbody>
      ${s.attempts.map(
        (a) =>
          html`<tr data-attempt="${String(a.n)}">
            <td><a href="/runs/${enc(a.workflowId)}">${a.n}${s.winner === a.n ? ' (winner)' : ''}</a></td>
            <td>${a.state === 'ended' ? (a.status ?? '?') : 'running'}</td>
            <td>${a.iterations ?? '—'}</td>
            <td>${a.findings ?? '—'}</td>
            <td>${usd(a.spendUsd)}</td>
            <td>${a.provider}${a.model ? ` ${a.model}` : ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The page of a run with attempts. */
export function attemptsPage(s: AttemptsStatus): Html {
  return html`<h1>${s.runId}</h1>
    <div id="acks" aria-live="polite"></div>
    ${attemptsSection(s)}`;
}

/** The attempts, the comparison, the pick (buttons while one is waited for) and the end. Polled. */
export function attemptsSection(s: AttemptsStatus): Html {
  const by = s.comparison ? { council: 'the council', rule: 'the pick rule', person: 'a person' }[s.comparison.decidedBy] : null;
  return html`<section id="attempts" hx-get="/runs/${enc(s.runId)}/fragments/attempts" hx-trigger="every 3s" hx-swap="outerHTML">
    <p>
      a run with ${s.attempts.length} attempts · phase <strong class="phase" data-phase="${s.phase}">${s.phase}</strong>
      ${s.paused ? html` · paused by ${s.paused.by}` : ''} ${s.stopping ? html` · stopping (by ${s.stopping.by})` : ''}
    </p>
    ${attemptsTable(s)}
    ${
      s.comparison
        ? html`<p class="comparison">
            compared: decided by ${by}${s.comparison.split ? ' (the council split)' : ''}; picks:
            ${s.comparison.picks.map((p) => `member ${p.member}: ${p.attempt ?? 'none'}`).join(', ')}
          </p>`
        : ''
    }
    ${s.why ? html`<p class="why">${shown(s.why)}</p>` : ''} ${pickForm(s)}
    ${s.branch ? html`<p>delivered on <code>${s.branch}</code></p>` : ''} ${s.pullRequest ? html`<p>${shown(s.pullRequest.note)}</p>` : ''}
    ${s.outcome ? html`<p>outcome: ${s.outcome.status} (exit ${s.outcome.exitCode}): ${shown(s.outcome.reason)}</p>` : ''}
  </section>`;
}

/** The inbox cards of the runs with attempts that wait for a person's pick. */
export function pickCards(waiting: AttemptsStatus[]): Html {
  return html`${waiting.map(
    (s) =>
      html`<article class="card" data-run="${s.runId}" data-kind="pick">
        <h2><a href="/runs/${enc(s.runId)}">${s.runId}</a><span class="kind">pick an attempt</span></h2>
        <p class="why">${shown(s.why ?? '')}</p>
        ${attemptsTable(s)} ${pickForm(s)}
      </article>`,
  )}`;
}

/** The running runs with attempts, each with its status. */
export async function runningAttempts(client: Client): Promise<AttemptsStatus[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = '${ATTEMPTS_TYPE}' AND ExecutionStatus = 'Running'` })) {
    ids.push(wf.workflowId);
    if (ids.length >= 100) break;
  }
  return (await Promise.all(ids.map((id) => attemptsStatus(client, id)))).filter((s): s is AttemptsStatus => s !== null);
}

/**
 * The routes of runs with attempts: their page (answered before the ordinary run page, which a run
 * with attempts does not have), its polled part, and a person's pick from the console.
 */
export function registerAttempts(
  app: Hono,
  client: Client,
  o: { page: (c: Context, title: string, body: Html) => Response | Promise<Response>; operator: (c: Context) => string },
): void {
  app.get('/runs/:id', async (c, next) => {
    const id = c.req.param('id');
    const type = await client.workflow
      .getHandle(id)
      .describe()
      .then((d) => d.type)
      .catch(() => null);
    if (type !== ATTEMPTS_TYPE) return next();
    const s = await attemptsStatus(client, id);
    if (!s)
      return o.page(
        c,
        id,
        html`<h1>${id}</h1>
          <p class="muted">a run with attempts; no worker answered its status.</p>`,
      );
    return o.page(c, id, attemptsPage(s));
  });
  app.get('/runs/:id/fragments/attempts', async (c) => {
    const s = await attemptsStatus(client, c.req.param('id'));
    if (!s) return c.html(html`<p class="muted">no worker answered</p>`, 404);
    return c.html(attemptsSection(s));
  });
  app.post('/runs/:id/pick', async (c) => {
    const id = c.req.param('id');
    const body = await c.req.parseBody();
    const attempt = Number(body.attempt);
    const handle = client.workflow.getHandle(id);
    try {
      const said = await handle.executeUpdate<string, [{ attempt: number; by: string }]>('pick', {
        args: [{ attempt, by: o.operator(c) }],
      });
      return c.html(html`<div class="ack ok" data-ok="true">${id}: ${said}</div>`);
    } catch (err) {
      const d = await handle.describe().catch(() => null);
      const why = pickFailure(id, d ? { type: d.type, running: d.status.name === 'RUNNING' } : null, err).message;
      return c.html(html`<div class="ack rejected" data-ok="false">${id}: ${why}</div>`, 422);
    }
  });
}
