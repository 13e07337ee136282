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

/** How long the console waits for a run's answer to its `attempts` query. */
const ANSWER_MS = 5000;

/** A run with attempts' `attempts` status, or why there is none (the query failed, or no worker answered within 5 s). */
export async function askAttempts(client: Client, workflowId: string): Promise<AttemptsStatus | { unanswered: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      client.workflow
        .getHandle(workflowId)
        .query<AttemptsStatus>('attempts')
        .catch((err: unknown) => ({ unanswered: `${workflowId}: ${firstLine(err)}` })),
      new Promise<{ unanswered: string }>((ok) => {
        timer = setTimeout(
          () =>
            ok({
              // A run waiting for a pick needs no worker, but its status is a query: one must be running to answer it.
              unanswered: `${workflowId}: no worker answered its status within ${ANSWER_MS / 1000} s (start \`vigil worker\` on its task queue)`,
            }),
          ANSWER_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const firstLine = (err: unknown): string => ((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '').slice(0, 300);

/** A run with attempts' `attempts` status, or null (not such a run, no worker answered within 5 s). */
export async function attemptsStatus(client: Client, workflowId: string): Promise<AttemptsStatus | null> {
  const s = await askAttempts(client, workflowId);
  return 'unanswered' in s ? null : s;
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

/**
 * The inbox cards of the runs with attempts that wait for a person's pick, and, when the running
 * ones could not all be listed (visibility refused the list, a run did not answer its status), a
 * line that says so: a card that cannot be shown is never silently missing.
 */
export function pickCards(waiting: AttemptsStatus[], problem: string | null = null): Html {
  return html`${problem ? html`<p class="problem" id="attempts-problem">attempts could not be listed: ${problem}</p>` : ''}${waiting.map(
    (s) =>
      html`<article class="card" data-run="${s.runId}" data-kind="pick">
        <h2><a href="/runs/${enc(s.runId)}">${s.runId}</a><span class="kind">pick an attempt</span></h2>
        <p class="why">${shown(s.why ?? '')}</p>
        ${attemptsTable(s)} ${pickForm(s)}
      </article>`,
  )}`;
}

/**
 * The running runs with attempts, each with its status, and what could not be listed: a failed
 * visibility list (then no status at all), and each run that did not answer, with why.
 */
export async function runningAttempts(client: Client): Promise<{ statuses: AttemptsStatus[]; problem: string | null }> {
  const ids: string[] = [];
  try {
    for await (const wf of client.workflow.list({ query: `WorkflowType = '${ATTEMPTS_TYPE}' AND ExecutionStatus = 'Running'` })) {
      ids.push(wf.workflowId);
      if (ids.length >= 100) break;
    }
  } catch (err) {
    return { statuses: [], problem: `the list of running runs failed: ${firstLine(err)}` };
  }
  const answers = await Promise.all(ids.map((id) => askAttempts(client, id)));
  const statuses = answers.filter((a): a is AttemptsStatus => !('unanswered' in a));
  const whys = answers.flatMap((a) => ('unanswered' in a ? [a.unanswered] : []));
  return { statuses, problem: whys.length ? whys.join('; ').slice(0, 2000) : null };
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
