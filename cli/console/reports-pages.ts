/**
 * The console's pages that read the event store rather than a run: the reports across runs (the
 * figures of `vigil report`) and the memory (docs/memory.md). Server-rendered as the other pages
 * (cli/console/pages.ts): every interpolated value HTML-escaped; what a run wrote redacted and its
 * control characters shown visibly.
 */
import { html } from 'hono/html';
import type { MemoryItem } from '../../lib/memory-reads.js';
import { type AcrossRunsReport } from '../report.js';
import { line, type Html } from './pages.js';
import { duration } from '../../lib/run-report.js';

const enc = encodeURIComponent;
const usd = (x: number): string => `$${x.toFixed(2)}`;

export function reportsPage(r: AcrossRunsReport | null, why: string): Html {
  if (!r)
    return html`<h1>Reports</h1>
      <p class="muted">${why}</p>`;
  const pct = (x: number | null): string => (x === null ? '—' : `${Math.round(x * 100)}%`);
  const d = r.iterationsToDone;
  const c = r.council;
  const k = r.cost;
  const w = r.waitingForPeople;
  return html`<h1>Reports across runs</h1>
    <p class="muted">The figures of \`vigil report\`, from the event store.</p>
    <dl class="facts" id="report-figures">
      <dt>runs</dt>
      <dd>${r.runs}</dd>
      <dt>outcomes</dt>
      <dd>${r.outcomes.map((o) => `${o.status} ${o.runs}${o.exitCode !== null ? ` (exit ${o.exitCode})` : ''}`).join(' · ') || '—'}</dd>
      <dt>iterations to done</dt>
      <dd>${d.runs ? `mean ${d.mean}, median ${d.median} (min ${d.min}, max ${d.max}) over ${d.runs} done run(s)` : 'no run done'}</dd>
      <dt>council</dt>
      <dd>
        ${c.rounds} round(s), ${c.approved} approved, ${c.rejected} rejected, ${c.blocked} blocked by a gate; approval rate
        ${pct(c.approvalRate)}; votes ${c.approveVotes} of ${c.votes} approve
      </dd>
      <dt>escalations</dt>
      <dd>
        ${r.escalations.total}${r.escalations.byReason.length ? ` — ${r.escalations.byReason.map((x) => `${x.reason} ${x.count}`).join(', ')}` : ''}
      </dd>
      <dt>tier climbs</dt>
      <dd>${r.tierClimbs.total} in ${r.tierClimbs.runs} run(s)</dd>
      <dt>cost</dt>
      <dd>
        ${usd(k.totalUsd)} in all, ${usd(k.perRunUsd ?? 0)} per run; ${k.doneRuns} done
        run(s)${k.doneRuns ? `, ${usd(k.perDoneRunUsd ?? 0)} each` : ''}${k.unpricedCalls ? `; ${k.unpricedCalls} unpriced call(s)` : ''}
      </dd>
      <dt>waiting for people</dt>
      <dd>${duration(w.totalMs)} over ${w.pauses} pause(s)${w.pausedNow.length ? `; paused now: ${w.pausedNow.join(', ')}` : ''}</dd>
    </dl>
    <table>
      <thead>
        <tr>
          <th>run</th>
          <th>started</th>
          <th>repository</th>
          <th>outcome</th>
          <th>iterations</th>
          <th>council</th>
          <th>escalations</th>
          <th>cost</th>
          <th>waited</th>
        </tr>
      </thead>
      <tbody>
        ${r.perRun.map(
          (p) =>
            html`<tr>
              <td><a href="/runs/${enc(p.workflowId)}">${p.workflowId}</a></td>
              <td>${p.startedAt ?? '—'}</td>
              <td>${p.repo ?? '—'}</td>
              <td>${p.outcome ?? 'running'}${p.exitCode !== null ? ` (exit ${p.exitCode})` : ''}</td>
              <td>${p.iterations} (${p.failedIterations} failed)</td>
              <td>${p.approvedRounds}/${p.councilRounds}</td>
              <td>${p.escalations}</td>
              <td>${usd(p.spendUsd)}</td>
              <td>${duration(p.waitingMs)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

/** The memory page (docs/memory.md): what earlier runs left, most important first, and a keyword search. */
export function memoryPage(
  items: readonly MemoryItem[] | null,
  query: string,
  hits: readonly (MemoryItem & { body: string })[] | null,
  why: string,
): Html {
  const head = html`<h1>Memory</h1>
    <p class="muted">
      What earlier runs left in the event store: patterns, anti-patterns and skills (\`vigil memory list\`). Each prompt carries the most
      relevant of them.
    </p>
    <form method="get" action="/memory" id="memory-search">
      <input name="q" value="${query}" aria-label="search the memory" maxlength="500" placeholder="words to look for" />
      <button>search</button>
    </form>`;
  if (!items)
    return html`${head}
      <p class="muted">${why}</p>`;
  const row = (i: MemoryItem): Html =>
    html`<tr>
      <td>${i.kind.replace('_', '-')}</td>
      <td>${i.id}</td>
      <td>${i.topic}</td>
      <td>${line(i.title)}</td>
      <td>${i.evidence}</td>
      <td>${i.importance.toFixed(2)}</td>
      <td>${i.accessCount}</td>
      <td>${i.repo ?? 'all repositories'}</td>
    </tr>`;
  const found = hits
    ? html`<h2>Matching "${line(query)}"</h2>
        ${
          hits.length
            ? html`<ul id="memory-hits">
                ${hits.map((h) => html`<li><strong>${h.kind.replace('_', '-')} ${h.id}</strong> ${line(h.body)}</li>`)}
              </ul>`
            : html`<p class="muted" id="memory-hits">nothing matches</p>`
        }`
    : html``;
  return html`${head}${found}
    <h2>All of it</h2>
    ${
      items.length
        ? html`<table id="memory-items">
            <thead>
              <tr>
                <th>kind</th>
                <th>id</th>
                <th>topic</th>
                <th>title</th>
                <th>evidence</th>
                <th>importance</th>
                <th>used</th>
                <th>repository</th>
              </tr>
            </thead>
            <tbody>
              ${items.map(row)}
            </tbody>
          </table>`
        : html`<p class="muted">No memory yet: runs that journal into the event store leave it when they end.</p>`
    }`;
}
