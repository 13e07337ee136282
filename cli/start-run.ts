/**
 * The one start path of a run, shared by `vigil start` (cli/start-command.ts) and MCP's
 * `vigil_start` (cli/mcp-start.ts). Each surface reads and checks its inputs by its own rules for
 * files (the CLI reads what its user names; the MCP tool reads nothing outside the repository),
 * then hands the run here: it starts (cli/runs.ts, the rules for a taken id of cli/run-id.ts),
 * and comes back as `vigil start --json`'s document with what both surfaces then say — the search
 * attributes the namespace lacks, no worker polling the run's host, and the start warnings
 * (cli/start-checks.ts). Loaded by the action, with what it loads.
 */
import type { Client, Connection } from '@temporalio/client';
import { hostTaskQueue } from '../schemas/host-names.js';
import type { StartedJson } from '../schemas/cli-output.js';
import { runUrl, searchAttributeHint, type Endpoint } from './connection.js';
import { hostPollers, noHostWorkerHint } from './hosts.js';
import { startRun, type StartOptions } from './runs.js';
import { sdkRunApi } from './sdk-run-api.js';
import { notifySendHere, startWarnings } from './start-checks.js';

export interface ReadyStart extends Pick<
  StartOptions,
  'prd' | 'repoPath' | 'knobs' | 'knobsGiven' | 'workflowId' | 'checklist' | 'tasks' | 'goal'
> {
  host: string;
  /** The run's host is another machine: its PRD and repository are there, unchecked from here. */
  remote: boolean;
  replace: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface Launched {
  started: StartedJson;
  /** The namespace lacks Vigil's search attributes: what to do (null when it has them). */
  searchAttributesHint: string | null;
  /** No worker polls the run's host: what to start there (null when one does, or it is unknown). */
  noHostWorkerHint: string | null;
  /** What will not work as one might expect (no notification channel, a budget no agent reports against). */
  warnings: string[];
}

/** Starts a run whose inputs the surface has checked; its `--json` document and what to say about it. */
export async function launchRun(client: Client, connection: Connection, ep: Endpoint, s: ReadyStart): Promise<Launched> {
  const { prd, repoPath, host, workflowId } = s;
  const { searchAttributes } = await startRun(client, connection, ep, {
    prd,
    repoPath,
    knobs: s.knobs,
    workflowId,
    host,
    replace: s.replace,
    ...(s.checklist ? { checklist: s.checklist } : {}),
    ...(s.tasks ? { tasks: s.tasks } : {}),
    ...(s.knobsGiven ? { knobsGiven: s.knobsGiven } : {}),
    ...(s.goal ? { goal: s.goal } : {}),
  });
  // Cheap to ask, and the one mistake that leaves a fresh run waiting silently.
  const pollers = await hostPollers(sdkRunApi(client), ep.taskQueue, host);
  const started: StartedJson = {
    kind: 'started',
    workflowId,
    prd: { path: prd.path, title: prd.title },
    repoPath,
    host,
    hostTaskQueue: hostTaskQueue(ep.taskQueue, host),
    remote: s.remote,
    historyUrl: runUrl(ep, workflowId),
    missingSearchAttributes: [...searchAttributes.missing],
    hostWorkerMissing: pollers === null ? null : pollers.length === 0,
  };
  return {
    started,
    searchAttributesHint: searchAttributes.missing.length
      ? searchAttributeHint(searchAttributes.missing, ep, searchAttributes.refusal)
      : null,
    noHostWorkerHint: pollers?.length === 0 ? noHostWorkerHint(ep.taskQueue, host, repoPath) : null,
    // notify-send is the worker's: looked for here when the run is here.
    warnings: startWarnings(s.knobs, s.remote ? '(on the host)' : notifySendHere(s.env ?? process.env)),
  };
}
