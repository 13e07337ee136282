/**
 * The search attributes of a run with attempts (workflows/attempts-workflow.ts): the client starts
 * it with those a single run starts with (cli/attempts.ts: status, iteration, repository, provider,
 * release), and the run keeps `VigilStatus` (rules/attempts.ts `attemptsSearchStatus`) and, once
 * ended, `VigilIteration` (its winner's iterations) as it goes, so `vigil list --status/--repo`
 * and the Temporal UI find it as they find a single run.
 *
 * Keyed on the input's `searchAttributes` (absent in runs started before, and where the namespace
 * lacks the attributes): those upsert nothing, so their histories replay unchanged; no patch is asked.
 *
 * Workflow code: deterministic, no I/O.
 */
import type { SearchAttributePair } from '@temporalio/common';
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { AttemptsStatus } from '../schemas/attempts.js';
import { SA_ITERATION, SA_STATUS } from '../schemas/search-attributes.js';
import { attemptsSearchStatus } from '../rules/attempts.js';

/** Upserts what changed since the last call (the start's `starting` and 0 first); a no-op where `enabled` is false. */
export function searchPublisher(enabled: boolean, status: AttemptsStatus): (iteration?: number) => void {
  const published = { status: 'starting', iteration: 0 };
  return (iteration) => {
    if (!enabled) return;
    const st = attemptsSearchStatus(status);
    const updates: SearchAttributePair[] = [];
    if (st !== published.status) updates.push({ key: SA_STATUS, value: st });
    if (iteration !== undefined && iteration !== published.iteration) updates.push({ key: SA_ITERATION, value: iteration });
    if (!updates.length) return;
    upsertSearchAttributes(updates);
    published.status = st;
    if (iteration !== undefined) published.iteration = iteration;
  };
}
