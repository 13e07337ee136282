/**
 * Owns the release stamp of the runs a client starts (the package's version, stamped into the
 * `VigilRelease` search attribute) and the listing of open runs against the release window
 * (rules/release-window.ts): `vigil doctor` shows it as a check, `vigil worker`
 * as one line at start (docs/operations.md, Upgrading Vigil under open runs).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { SA_RELEASE } from '../schemas/search-attributes.js';
import {
  LAST_UNSTAMPED_RELEASE,
  nextRelease,
  OLDEST_REPLAYED_RELEASE,
  type OpenRun,
  type WindowReport,
  windowReport,
} from '../rules/release-window.js';
import { packageRoot } from '../lib/paths.js';

let release: string | null = null;

/** The release this package is (its version): what a run started here is stamped with. */
export function packageRelease(): string {
  release ??= (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  return release;
}

/** How many open runs a listing reads at most (the window report says when it stopped there). */
export const OPEN_RUNS_READ = 5000;

/** The open Vigil runs of the client's namespace and the release each was stamped with (streams among them). */
export async function openRuns(client: Client, limit = OPEN_RUNS_READ): Promise<OpenRun[]> {
  const runs: OpenRun[] = [];
  for await (const wf of client.workflow.list({ query: "WorkflowType = 'vigilRun' AND ExecutionStatus = 'Running'" })) {
    runs.push({ workflowId: wf.workflowId, release: wf.typedSearchAttributes.get(SA_RELEASE) ?? null });
    if (runs.length >= limit) break;
  }
  return runs;
}

const DOC = 'docs/operations.md (Upgrading Vigil under open runs)';
const WINDOW = `this release replays runs started by ${OLDEST_REPLAYED_RELEASE} or later`;
const shown = (ids: readonly string[], n = 5): string =>
  `${ids.slice(0, n).join(', ')}${ids.length > n ? `, and ${ids.length - n} more` : ''}`;

/** What to do about runs started before the window. */
export const OUTSIDE_FIX =
  'let them finish (or stop them) on workers of the release that started them before upgrading those, ' +
  `or end them with \`temporal workflow terminate --workflow-id <id>\`; see ${DOC}`;

/** The window report as a doctor check: ✗ (not required) when a run certainly started before the window. */
export function windowCheck(r: WindowReport): { ok: boolean; detail: string; fix: string | null } {
  const certain = r.outside.filter((o) => o.certain);
  const unstamped = r.outside.filter((o) => !o.certain);
  const after = nextRelease(nextRelease(OLDEST_REPLAYED_RELEASE) ?? '') ?? 'the next release';
  const parts: string[] = [];
  if (r.open === 0) parts.push('no open runs');
  else if (certain.length === 0) parts.push(`${r.open} open run${r.open === 1 ? '' : 's'}, none started before the window (${WINDOW})`);
  else
    parts.push(
      `${certain.length} of ${r.open} open runs started before the window (${WINDOW}) and may fail to replay: ` +
        `${shown(certain.map((o) => `${o.workflowId} (${o.release})`))}`,
    );
  if (unstamped.length > 0)
    parts.push(
      `${unstamped.length} carry no release stamp (${shown(
        unstamped.map((o) => o.workflowId),
        3,
      )}): started by ${LAST_UNSTAMPED_RELEASE}, which this release replays, or by an earlier build, which it may not`,
    );
  if (r.finishBeforeNext > 0) parts.push(`${r.finishBeforeNext} must finish or be stopped before ${after}`);
  if (r.unknown.length > 0)
    parts.push(
      `${r.unknown.length} with a stamp that names no release (${shown(
        r.unknown.map((u) => `${u.workflowId}: ${u.release}`),
        3,
      )})`,
    );
  if (r.open >= OPEN_RUNS_READ) parts.push(`only the first ${OPEN_RUNS_READ} open runs were read`);
  return { ok: certain.length === 0, detail: parts.join('; '), fix: certain.length === 0 ? null : OUTSIDE_FIX };
}

/** The window report as the one line `vigil worker` says at start. */
export function windowLine(r: WindowReport): string {
  const c = windowCheck(r);
  return `open runs: ${c.detail}${c.fix ? ` — ${c.fix}` : ''}`;
}

/** Lists the open runs and reports them against the window; never throws (a listing the server refuses says so). */
export async function openRunsReport(client: Client): Promise<WindowReport | { problem: string }> {
  try {
    return windowReport(await openRuns(client));
  } catch (err) {
    return { problem: (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'the listing failed' };
  }
}
