/**
 * The console's runs page: each run with what it is at (a running run's status, an ended run's
 * outcome), its cost in words that never price an unpriced call at $0.00, and the filter on both.
 * Server-rendered HTML (Hono's `html`: every interpolated value is HTML-escaped).
 */
import { html } from 'hono/html';
import { OUTCOME_STATUSES } from '../../schemas/run.js';
import { age } from './model.js';
import type { RunRow } from './sources.js';

type Html = ReturnType<typeof html>;
const enc = encodeURIComponent;
const usd = (x: number): string => `$${x.toFixed(2)}`;
const since = (iso: string | null | undefined, now: Date): string => (iso ? `${age(now.getTime() - Date.parse(iso))} ago` : '—');

/**
 * A run's cost in a few words: the priced calls' sum, with the calls that reported no cost apart
 * (a `command` agent's); calls that all went unpriced never read as $0.00. `calls` null: unknown
 * (then a sum of 0 with unpriced calls reads as all unpriced).
 */
export function costText(spentUsd: number, unpriced: number, calls: number | null): string {
  if (unpriced > 0 && (calls !== null ? unpriced >= calls : spentUsd === 0)) return `unpriced (${unpriced} call(s))`;
  return `${usd(spentUsd)}${unpriced > 0 ? ` + ${unpriced} unpriced call(s)` : ''}`;
}

export interface RunsFilter {
  status?: string;
  repo?: string;
  provider?: string;
}

/** The runs; `cost`: each run's cost as `costText` words, where known. */
export function runsTable(rows: RunRow[], cost: ReadonlyMap<string, string>, now: Date): Html {
  return html`<table id="runs-table">
      <thead>
        <tr>
          <th>run</th>
          <th>status</th>
          <th>repository</th>
          <th>provider</th>
          <th>iteration</th>
          <th>cost</th>
          <th>age</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) =>
            html`<tr data-run="${r.workflowId}">
              <td><a href="/runs/${enc(r.workflowId)}">${r.workflowId}</a></td>
              <td class="status-${r.status}" data-status="${r.status}">${r.status}</td>
              <td>${r.repo ?? '—'}</td>
              <td>${r.provider ?? '—'}</td>
              <td>${r.iteration ?? '—'}</td>
              <td>${cost.get(r.workflowId) ?? '—'}</td>
              <td>${since(r.startTime, now)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${rows.length === 0 ? html`<p class="muted">No run matches.</p>` : ''}`;
}

/** What the status filter offers: a running run's status, or how a run ended (its outcome; Temporal's word when Vigil gave none). */
export const RUNNING_FILTERS = ['running', 'paused', 'waiting_for_provider', 'backing_off'] as const;
export const ENDED_FILTERS = ['ended', ...OUTCOME_STATUSES, 'terminated', 'cancelled', 'timed_out', 'completed'] as const;

/** Whether a run's row passes the status filter: its status itself, `paused` with `pausing`, `ended` for any run that has ended. */
export function statusMatches(filter: string | undefined, row: Pick<RunRow, 'status' | 'temporalStatus'>): boolean {
  if (!filter) return true;
  if (filter === 'ended') return row.temporalStatus !== 'RUNNING';
  return row.status === filter || (filter === 'paused' && row.status === 'pausing');
}

export function runsPage(f: RunsFilter, table: Html): Html {
  const option = (s: string): Html =>
    html`<option value="${s}" ${s === (f.status ?? '') ? 'selected' : ''}>${s === 'ended' ? 'any ended' : s}</option>`;
  return html`<h1>Runs</h1>
    <form class="filters" hx-get="/fragments/runs" hx-target="#runs" hx-trigger="change, keyup changed delay:400ms, every 5s">
      <label
        >status
        <select name="status">
          <option value="" ${f.status ? '' : 'selected'}>any</option>
          <optgroup label="running">${RUNNING_FILTERS.map(option)}</optgroup>
          <optgroup label="ended">${ENDED_FILTERS.map(option)}</optgroup>
        </select></label
      >
      <label>repository <input name="repo" value="${f.repo ?? ''}" placeholder="part of the path" /></label>
      <label>provider <input name="provider" value="${f.provider ?? ''}" placeholder="claude, command, …" /></label>
    </form>
    <div id="runs">${table}</div>`;
}
