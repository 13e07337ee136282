/**
 * The console's pages as server-rendered HTML (Hono's `html` tagged template: every interpolated
 * value is HTML-escaped). What an agent or a person wrote (reasons, handoffs, directives, logs) is
 * also redacted (the secret redaction of the history and status output, rules/scans.ts)
 * and its control characters shown visibly (lib/terminal-text.ts), never interpreted. htmx
 * attributes make the parts live (polling) and the forms send Vigil messages.
 */
import { html } from 'hono/html';
import type { StatusSnapshot } from '../../schemas/status.js';
import { evidenceNote } from '../../rules/evidence-line.js';
import { deadlinesLine } from '../../rules/pause-deadlines.js';
import { redactSecrets } from '../../rules/scans.js';
import { spendText } from '../../rules/ui.js';
import { type RunReport } from '../../lib/run-report.js';
import type { RunView } from '../steer.js';
import { neutraliseLine, neutraliseText } from '../../lib/terminal-text.js';
import type { ActionResult } from './actions.js';
import { age, WAIT_LABELS, type ChartData, type Waiting } from './model.js';
import { costText } from './runs-list.js';
import { prInboxLine } from './pr-section.js';
import type { InboxEntry, RunRow, SentMessage, HostText } from './sources.js';

export type Html = ReturnType<typeof html>;

/** Text from a run, safe to show: secrets redacted, controls visible. */
export const shown = (s: string): string => neutraliseText(redactSecrets(s).text);
/** One line from a run, safe to show: secrets redacted, controls (newlines too) visible. */
export const line = (s: string): string => neutraliseLine(redactSecrets(s).text);
const enc = encodeURIComponent;
// Pieces of the run page, named to keep its lines short. Interpolated text is escaped as a whole,
// the same bytes as its parts escaped one by one (the words around them have nothing to escape).
const checkpointLabel = (c: { iteration: number; commit: string; filesSinceStart: number }): string =>
  `iteration ${c.iteration} · ${c.commit.slice(0, 10)} · ${c.filesSinceStart} file(s)`;
const rewindFields = (iteration: number): Html =>
  html`<input type="hidden" name="to" value="${iteration}" /><button name="action" value="rewind">Rewind here</button>`;
const rewoundWords = (r: { by: string; at: string; from: number; to: number; reason?: string | null; savedRef: string }): string =>
  `rewound by ${line(r.by)} at ${r.at}: iteration ${r.from} → ${r.to}${r.reason ? ` (${line(r.reason)})` : ''}; the tree before is kept as ${r.savedRef}`;
const usd = (x: number): string => `$${x.toFixed(2)}`;
const since = (iso: string | null | undefined, now: Date): string => (iso ? `${age(now.getTime() - Date.parse(iso))} ago` : '—');

const HTMX_CONFIG = JSON.stringify({
  // Every answer is swapped in: a rejection (4xx) is shown like an acknowledgement.
  responseHandling: [
    { code: '204', swap: false },
    { code: '...', swap: true },
  ],
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
});

export function layout(title: string, operator: string, body: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content="${HTMX_CONFIG}" />
        <title>${title} · Vigil console</title>
        <link rel="stylesheet" href="/assets/uPlot.min.css" />
        <link rel="stylesheet" href="/assets/console.css" />
        <script src="/assets/htmx.min.js"></script>
        <script src="/assets/sse.js"></script>
        <script src="/assets/uPlot.iife.min.js"></script>
        <script src="/assets/console.js"></script>
      </head>
      <body>
        <header>
          <a href="/">Vigil console</a>
          <a href="/">Inbox</a>
          <a href="/runs">Runs</a>
          <a href="/reports">Reports</a>
          <a href="/memory">Memory</a>
          <form class="who" method="post" action="/operator">
            acting as <input name="operator" value="${operator}" aria-label="operator name" maxlength="200" /> <button>set</button>
          </form>
        </header>
        <main>${body}</main>
      </body>
    </html>`;
}

export function ackHtml(id: string, r: ActionResult): Html {
  return html`<div class="ack ${r.ok ? 'ok' : 'rejected'}" data-ok="${String(r.ok)}">
    ${id}: ${r.lines.map((l) => line(l)).join(' · ')}
  </div>`;
}

/** The forms that send the run messages; results go to #acks. */
export function actionsPanel(s: StatusSnapshot, place: 'inbox' | 'run'): Html {
  const id = s.workflowId;
  const post = `/runs/${enc(id)}/actions`;
  const form = (cls: string, inner: Html): Html =>
    html`<form class="${cls}" hx-post="${post}" hx-target="#acks" hx-swap="afterbegin">${inner}</form>`;
  const checklist = (s.quality?.checklist ?? []).filter((c) => !c.waived);
  const checkpoints = s.checkpoints?.list ?? [];
  const suggested = Math.max(s.budgetUsd * 2, s.spend.usd + 5);
  return html`<div class="actions" id="actions-${place}-${id}" hx-preserve="true">
    ${form(
      'directive',
      html`<textarea name="directive" placeholder="A directive for the next prompt" aria-label="directive"></textarea>
        <button name="action" value="input-resume">Send and resume</button> <button name="action" value="input">Send only</button>`,
    )}
    ${form('resume', html`<button name="action" value="resume">Resume</button>`)}
    ${
      s.paused
        ? ''
        : form(
            'pause',
            html`${[
              html`<input name="reason" placeholder="why pause" aria-label="pause reason" />`,
              html`<button name="action" value="pause">Pause</button>`,
            ]}`,
          )
    }
    ${
      checklist.length
        ? form(
            'waive',
            html`<select name="item" aria-label="checklist item">
                ${checklist.map((c) => html`<option value="${c.id}">${c.id}: ${line(c.title).slice(0, 80)} (${c.status})</option>`)}
              </select>
              <input name="reason" placeholder="why waive" aria-label="waiver reason" /><button name="action" value="waive">Waive</button>`,
          )
        : ''
    }
    ${form(
      'budget',
      html`<span
          >budget ${s.budgetUsd > 0 ? usd(s.budgetUsd) : 'none'}, spent
          ${costText(s.spend.usd, s.spend.unpricedCalls ?? 0, s.spend.calls)}</span
        >
        <input name="usd" value="${suggested.toFixed(2)}" inputmode="decimal" size="7" aria-label="new budget in USD" />
        <button name="action" value="budget-resume">Raise and resume</button> <button name="action" value="budget">Set budget</button>`,
    )}
    ${form(
      'review',
      html`${[
        html`<input name="reason" placeholder="why ask the council" aria-label="review reason" />`,
        html`<button name="action" value="review">Ask the council</button>`,
      ]}`,
    )}
    ${
      checkpoints.length
        ? form(
            'rewind',
            html`<select name="to" aria-label="checkpoint">
                ${[...checkpoints].reverse().map((c) => html`<option value="${c.iteration}">${checkpointLabel(c)}</option>`)}
              </select>
              <input name="directive" placeholder="directive after the rewind (optional)" aria-label="rewind directive" /><button
                name="action"
                value="rewind"
              >
                Rewind
              </button>`,
          )
        : ''
    }
    ${form(
      'stop',
      html`${[
        html`<input name="reason" placeholder="why stop" aria-label="stop reason" />`,
        html`<label><input type="checkbox" name="now" value="1" /> now</label>`,
        html`<button name="action" value="stop">Stop</button>`,
      ]}`,
    )}
  </div>`;
}

function facts(s: StatusSnapshot, now: Date, waiting: Waiting | null): Html {
  const fact = (term: string, value: string, cls = ''): Html => html`<dt>${term}</dt><dd${cls ? html` class="${cls}"` : ''}>${value}</dd>`;
  // A pause that waits for a person: its reminder, re-route and deadline, as status says them.
  const deadlines = s.status === 'paused' ? deadlinesLine(s.pause?.deadlines, now.getTime()) : '';
  return html`<dl class="facts">
    ${waiting ? fact('waiting since', `${waiting.since} (${since(waiting.since, now)})`) : ''}
    ${deadlines ? fact('if nobody answers', deadlines, 'deadlines') : ''} ${fact('cost so far', spendText(s))}
    ${fact('iteration', `${s.iteration} of at most ${s.maxIterations}${s.phase ? ` (${s.phase})` : ''}`)}
    ${fact('tier', `${s.tier ?? '—'}${s.ladder ? ` (ladder ${s.ladder.level})` : ''}`)} ${fact('mode', s.autonomyMode)}
    ${fact('repository', `${s.repoPath}${s.host ? ` on ${s.host}` : ''}`)}
  </dl>`;
}

/** The latest handoff, open while the run may wait on it; an ended run's is an earlier moment of it, closed and said so. */
function handoffBlock(s: StatusSnapshot, doc: HostText | null, ended = false): Html {
  if (!s.latestHandoff) return html``;
  return html`<details class="handoff${ended ? ' earlier' : ''}" ${ended ? '' : 'open'}>
    <summary>
      ${ended ? 'Earlier handoff, before the run ended: ' : ''}Handoff of iteration ${s.latestHandoff.iteration}:
      ${line(s.latestHandoff.summary)}
    </summary>
    ${
      doc === null
        ? ''
        : doc.ok
          ? html`<pre class="handoff-text">${shown(doc.text)}</pre>`
          : html`<p class="muted">the handoff could not be read: ${line(doc.problem)}</p>`
    }
  </details>`;
}

export function inboxCards(entries: { entry: InboxEntry; handoff: HostText | null }[], now: Date, picks?: Html): Html {
  return html`<section id="inbox" hx-get="/fragments/inbox" hx-trigger="every 3s" hx-swap="outerHTML">
    ${entries.length === 0 && !picks ? html`<p class="muted" id="inbox-empty">No run waits for a person.</p>` : ''} ${picks ?? ''}
    ${entries.map(
      ({ entry: { snapshot: s, waiting: w }, handoff }) =>
        html`<article class="card" data-run="${s.workflowId}" data-kind="${w.kind}">
          <h2><a href="/runs/${enc(s.workflowId)}">${s.workflowId}</a><span class="kind">${WAIT_LABELS[w.kind]}</span></h2>
          <p class="why">${shown(w.why)}</p>
          ${prInboxLine(s)} ${facts(s, now, w)} ${handoffBlock(s, handoff)} ${actionsPanel(s, 'inbox')}
        </article>`,
    )}
  </section>`;
}

export function inboxPage(cards: Html): Html {
  return html`<h1>Inbox: runs waiting for a person</h1>
    <div id="acks" aria-live="polite"></div>
    ${cards}`;
}

/** The run's header: status, outcome, what it waits for. Polled. */
export function runSummary(view: RunView, row: RunRow | null, waiting: Waiting | null, now: Date): Html {
  const s = view.snapshot;
  const id = view.workflowId;
  const ended = view.kind === 'finished';
  const endedAs = ended ? (view.outcome?.status ?? view.temporalStatus.toLowerCase()) : null;
  // What done rested on, as the outcome says it (`vigil status` and the UI card show the same line).
  const evidence = ended ? evidenceNote(view.outcome?.notes) : null;
  const status = ended
    ? `finished${view.outcome ? `: ${view.outcome.status} (exit ${view.outcome.exitCode})` : ` (${view.temporalStatus.toLowerCase()})`}`
    : (s?.status ?? view.searchStatus ?? 'running');
  // An ended run shows its end: a pause it had when it ended is history (the timeline keeps it), not its state.
  return html`<section id="summary" hx-get="/runs/${enc(id)}/fragments/summary" hx-trigger="every 3s" hx-swap="outerHTML">
    <p>
      status
      <strong
        class="status-${endedAs ?? s?.status ?? 'unknown'}"
        data-status="${ended ? 'finished' : (s?.status ?? '')}"
        data-outcome="${endedAs ?? ''}"
        >${status}</strong
      >
      ${row ? html` · provider ${row.provider ?? '—'} · started ${since(row.startTime, now)}` : ''}
    </p>
    ${ended && view.outcome ? html`<p class="why outcome">Ended at iteration ${view.outcome.iteration}: ${shown(view.outcome.reason)}</p>` : ''}
    ${ended && evidence ? html`<p class="evidence">${line(evidence)}</p>` : ''}
    ${
      waiting
        ? html`<p class="why">Waiting for a person: ${WAIT_LABELS[waiting.kind]} — ${shown(waiting.why)}</p>`
        : !ended && s?.pause
          ? html`<p class="why">Paused by ${line(s.pause.by)}: ${shown(s.pause.reason)}</p>`
          : ''
    }
    ${s ? facts(s, now, waiting) : html`<p class="muted">No worker answered the run's status query.</p>`}
  </section>`;
}

export function chartsSection(id: string, charts: ChartData | null, note: string): Html {
  if (!charts) return html`<section id="charts"><p class="muted">No numbers to chart: ${note}</p></section>`;
  const json = JSON.stringify(charts);
  return html`<section id="charts" hx-get="/runs/${enc(id)}/fragments/charts" hx-trigger="every 10s" hx-swap="outerHTML">
    <p class="muted">From the ${charts.source}${charts.source === 'status query' ? ' (its latest iterations)' : ''}. ${note}</p>
    <div class="charts">
      <div class="chart" id="chart-cost" data-kind="cost" data-chart="${json}"></div>
      <div class="chart" id="chart-progress" data-kind="progress" data-chart="${json}"></div>
      <div class="chart" id="chart-waiting" data-kind="waiting" data-chart="${json}"></div>
    </div>
  </section>`;
}

export function checkpointsSection(s: StatusSnapshot | null, running: boolean): Html {
  const id = s?.workflowId ?? '';
  const list = s?.checkpoints?.list ?? [];
  return html`<section id="checkpoints" hx-get="/runs/${enc(id)}/fragments/checkpoints" hx-trigger="every 5s" hx-swap="outerHTML">
    <h2>Checkpoints</h2>
    ${list.length === 0 ? html`<p class="muted">None yet: a checkpoint is kept after every iteration that changes the tree.</p>` : ''}
    <table>
      ${
        list.length
          ? html`<thead>
              <tr>
                <th>iteration</th>
                <th>time</th>
                <th>commit</th>
                <th>files (since start)</th>
                <th>exit</th>
                <th>tests</th>
                <th>council</th>
                <th></th>
              </tr>
            </thead>`
          : ''
      }
      <tbody>
        ${[...list].reverse().map(
          (c) =>
            html`<tr data-iteration="${c.iteration}">
              <td>${c.iteration}</td>
              <td>${c.at}</td>
              <td>${c.commit.slice(0, 12)}</td>
              <td>${c.filesChanged} (${c.filesSinceStart})</td>
              <td>${c.exitCode}</td>
              <td>${c.tests ?? '—'}</td>
              <td>${c.verdict ?? '—'}</td>
              <td>
                ${
                  running
                    ? html`<form hx-post="/runs/${enc(id)}/actions" hx-target="#acks" hx-swap="afterbegin">
                        ${rewindFields(c.iteration)}
                      </form>`
                    : ''
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${(s?.checkpoints?.rewinds ?? []).map((r) => html`<p class="muted">${rewoundWords(r)}</p>`)}
  </section>`;
}

interface Entry {
  iteration: number;
  order: number;
  text: string;
  reasons: string[];
}

/** Iterations, gate passes, reviews and council rounds (with their reasons), escalations and rewinds. */
export function timelineSection(id: string, s: StatusSnapshot | null, report: RunReport | null): Html {
  const entries: Entry[] = [];
  if (report) {
    for (const t of report.timeline) {
      entries.push({ iteration: t.iteration, order: 0, text: t.text, reasons: [] });
      for (const d of t.decisions)
        if (d.kind !== 'council_round') entries.push({ iteration: t.iteration, order: 1, text: d.text, reasons: [] });
    }
  } else if (s) {
    for (const r of s.recentIterations) {
      entries.push({
        iteration: r.iteration,
        order: 0,
        text:
          `iteration ${r.iteration} · ${r.phase} · tier ${r.tier} · exit ${r.exitCode} · ${(r.durationMs / 1000).toFixed(1)} s · ` +
          `${r.changed ? 'changed' : 'no change'} · ${r.filesChangedSinceStart} file(s) vs ` +
          `start${r.claimed ? ' · claimed completion' : ''}${r.costUsd ? ` · ${usd(r.costUsd)}` : ''}`,
        reasons: [],
      });
    }
    const gates = s.quality?.gates ?? [];
    if (gates.length) {
      const it = Math.max(...gates.map((g) => g.iteration));
      entries.push({
        iteration: it,
        order: 1,
        text: `quality gates: ${gates.map((g) => `${g.gate} ${g.verdict}`).join(' · ')}`,
        reasons: gates.filter((g) => g.verdict !== 'pass' && g.reason).map((g) => `${g.gate}: ${g.reason}`),
      });
    }
    const rv = s.quality?.lastReview;
    if (rv)
      entries.push({
        iteration: rv.iteration,
        order: 2,
        text: `code review ${rv.round}: ${rv.result} · mergeability ${rv.mergeability}`,
        reasons: rv.reason ? [rv.reason] : [],
      });
    for (const e of s.escalations)
      entries.push({
        iteration: e.iteration,
        order: 4,
        text: `escalation (${e.reason.replace(/_/g, ' ')})${e.paused ? ', paused for a person' : ''}`,
        reasons: [e.detail, ...e.questions],
      });
  }
  for (const v of s?.council.verdicts ?? []) {
    entries.push({
      iteration: v.iteration,
      order: 3,
      text: `council round ${v.round} (${v.trigger.replace(/_/g, ' ')}): ${v.result} · ${v.approve} of ${v.size} approve, ${v.threshold} needed`,
      reasons: [
        ...v.votes.map((m) => `${m.role}: ${m.recorded}${m.overridden ? ' (overridden)' : ''} — ${m.reason}`),
        ...(v.devilsAdvocate?.triggered
          ? [
              `devil's advocate: ${v.devilsAdvocate.recorded}${v.devilsAdvocate.flipped ? ' (flipped the verdict)' : ''} — ${v.devilsAdvocate.reason}`,
            ]
          : []),
      ],
    });
  }
  if (s?.checks?.last && !s.checks.last.approved)
    entries.push({
      iteration: s.checks.last.iteration,
      order: 5,
      text: `completion check refused (${s.checks.last.cause ?? 'unknown'})`,
      reasons: [s.checks.last.reason],
    });
  entries.sort((a, b) => a.iteration - b.iteration || a.order - b.order);
  return html`<section id="timeline" hx-get="/runs/${enc(id)}/fragments/timeline" hx-trigger="every 5s" hx-swap="outerHTML">
    <h2>Timeline</h2>
    <p class="muted">
      ${report ? 'Every iteration and decision, from the event store; council reasons from the run.' : "From the run's status query (its latest iterations)."}
    </p>
    <ol class="timeline">
      ${entries.map(
        (e) =>
          html`<li data-iteration="${e.iteration}">
            ${line(e.text)}${
              e.reasons.length
                ? html`<ul>
                    ${e.reasons.map((r) => html`<li class="reason">${line(r)}</li>`)}
                  </ul>`
                : ''
            }
          </li>`,
      )}
    </ol>
  </section>`;
}

export function messagesSection(id: string, msgs: SentMessage[] | null, note: string): Html {
  return html`<section id="messages" hx-get="/runs/${enc(id)}/fragments/messages" hx-trigger="every 5s" hx-swap="outerHTML">
    <h2>Directives and messages</h2>
    ${msgs === null ? html`<p class="muted">${note}</p>` : msgs.length === 0 ? html`<p class="muted">No message yet.</p>` : ''}
    <table>
      <tbody>
        ${(msgs ?? []).map(
          (m) =>
            html`<tr data-message="${m.name}">
              <td>${m.at ?? '—'}</td>
              <td>${m.name}</td>
              <td>${m.by ?? '—'}</td>
              <td class="message-text">${shown(m.text)}</td>
              <td>${m.refused ? html`refused: ${line(m.refused)}` : m.via === 'signal' ? 'signal' : ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

export function runPage(
  id: string,
  summary: Html,
  actions: Html | null,
  handoff: Html,
  charts: Html,
  checkpoints: Html,
  timeline: Html,
  messages: Html,
  running: boolean,
  packages: Html = html``,
  pr: Html = html``,
): Html {
  return html`<h1>Run ${id}</h1>
    ${summary}
    <div id="acks" aria-live="polite"></div>
    ${actions ?? ''} ${pr} ${handoff} ${charts} ${checkpoints} ${packages} ${timeline} ${messages}
    <section id="log-section">
      <h2>Agent log</h2>
      <p class="muted">Live, read on the run's host as \`vigil logs -f\` reads it; escape sequences shown, credentials redacted.</p>
      <pre
        class="log"
        id="log"
        hx-ext="sse"
        sse-connect="/runs/${enc(id)}/log/stream"
        sse-swap="log"
        hx-swap="beforeend"
        sse-close="end"
      ></pre>
      ${running ? '' : html`<p class="muted">The run has finished.</p>`}
    </section>`;
}

/** The run page's handoff; `ended`: the run has ended, its handoff is an earlier moment (closed, below the run's end). */
export function handoffSection(s: StatusSnapshot | null, doc: HostText | null, ended = false): Html {
  return s ? handoffBlock(s, doc, ended) : html``;
}
