/**
 * Client-side operations on runs: start one (with the workflow's types and the knob schemas);
 * looking one up and sending it messages is steer.ts, which loads neither.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client, type Connection, type WorkflowHandle } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { ChecklistItem } from '../schemas/gates.js';
import type { TaskList } from '../schemas/tasks.js';
import { canonicalTasks } from '../schemas/authorization.js';
import type { Knobs } from '../schemas/knobs.js';
import { OUTCOME_STATUSES, type RunInput } from '../schemas/run.js';
import { RUN_STATUSES } from '../schemas/status.js';
import {
  SA_ITERATION,
  SA_PROVIDER,
  SA_RELEASE,
  SA_REPO,
  SA_STATUS,
  SEARCH_ATTRIBUTES,
  UPSERTED_SEARCH_ATTRIBUTES,
} from '../schemas/search-attributes.js';
import type { vigilRun } from '../workflows/run-workflow.js';
import { staticDetails, staticSummary } from '../rules/ui.js';
import { knobsGivenDigest, prdDigest, runSecret, signRun, startClaims } from '../lib/run-signing.js';
import { failoverChain } from '../rules/failover.js';
import { CliError, EXIT, missingSearchAttributes, type Endpoint } from './connection.js';
import { packageRelease } from './release-window.js';
import { idTakenError } from './run-id.js';
import type { Prd } from './prd.js';

export function checkRepo(repo: string): string {
  const abs = path.resolve(repo);
  if (!existsSync(abs) || !statSync(abs).isDirectory())
    throw new CliError(`--repo ${abs} does not exist or is not a directory`, EXIT.usage);
  try {
    const inside = execFileSync('git', ['rev-parse', '--is-inside-work-tree'], {
      cwd: abs,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    if (inside !== 'true') throw new Error('no');
  } catch {
    throw new CliError(`--repo ${abs} is not a git working tree; run \`git init\` there first`, EXIT.usage);
  }
  return abs;
}

/** The VigilStatus values `vigil list --status` takes: a run's status while it runs (a pausing run shows as paused), or its outcome. */
export const LIST_STATUSES: readonly string[] = [
  ...RUN_STATUSES.filter((st) => st !== 'pausing' && st !== 'finished'),
  ...OUTCOME_STATUSES,
];

/** A visibility query string literal: backslashes and quotes escaped. */
const literal = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * The visibility query of `vigil list`: Vigil's runs, with `status` their VigilStatus and `repo`
 * their VigilRepo (the absolute path, as `vigil start` records it: the last 255 characters).
 */
export function listQuery(filters: { status?: string; repo?: string }): string {
  // Runs with attempts (`vigil start --attempts K`) carry the same search attributes as a single run (those started
  // before they did carry none, and are listed only without a filter).
  const terms = ["(WorkflowType = 'vigilRun' OR WorkflowType = 'vigilAttempts')"];
  if (filters.status !== undefined) {
    const status = filters.status.trim().toLowerCase();
    if (!LIST_STATUSES.includes(status))
      throw new CliError(`--status ${filters.status}: use one of ${LIST_STATUSES.join(', ')}`, EXIT.usage);
    terms.push(`${SA_STATUS.name} = ${literal(status)}`);
  }
  if (filters.repo !== undefined) {
    if (filters.repo.trim() === '') throw new CliError('--repo is empty: give the repository folder, e.g. --repo .', EXIT.usage);
    terms.push(`${SA_REPO.name} = ${literal(path.resolve(filters.repo).slice(-255))}`);
  }
  return terms.join(' AND ');
}

export function defaultRunId(prd: Prd, now = new Date()): string {
  const slug =
    path
      .basename(prd.path)
      .replace(/\.[^.]*$/, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'run';
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `vigil-${slug}-${stamp}`;
}

export interface StartOptions {
  prd: Prd;
  repoPath: string;
  knobs: Knobs;
  workflowId: string;
  /** When a run with this id is already running: attach to it instead of failing. */
  attachIfRunning?: boolean;
  /**
   * A finished run's id may be taken again (`--replace`): without it, a start under the id of a
   * run that ended is refused (cli/run-id.ts), as one that would hide the old run is a mistake.
   */
  replace?: boolean;
  /** A checklist a person supplied (`--checklist FILE`), validated. */
  checklist?: ChecklistItem[];
  /** The knobs the person set (rules/complexity.ts `knobsGivenOf`): the task's complexity leaves them as they are. */
  knobsGiven?: string[];
  /** Tasks a person supplied (`--tasks FILE`), validated: with parallelStreams above 1, each a stream. */
  tasks?: TaskList;
  /** The host holding the repository (normalised): its workers run the repository-bound activities. */
  host?: string;
  /** A run from a goal (`vigil start --goal`): the discovery call writes the PRD at `prd.path` first. */
  goal?: string;
  /** A directive for the first prompt, delivered with the start (signal-with-start). */
  directive?: { directive: string; by: string };
}

export interface StartResult {
  handle: WorkflowHandle<typeof vigilRun>;
  attached: boolean;
  /**
   * Vigil's search attributes the run goes without: `missing` names the ones the namespace lacks
   * (empty: the run has them all); `refusal` is the server's reason when it refused them at start.
   */
  searchAttributes: { missing: string[]; refusal?: string };
}

/** The server refused a start because of a search attribute it does not know (INVALID_ARGUMENT). */
export function searchAttributeRefusal(err: unknown): string | null {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const message = cause instanceof Error ? cause.message : String(cause);
  return /search attribute/i.test(message) ? (message.replace(/^\d+ [A-Z_]+: /, '').split('\n')[0] ?? message) : null;
}

/**
 * Starts a run. Needs no admin rights: where the namespace lacks Vigil's search attributes (or
 * refuses them), the run starts without them, tells its workflow so (`searchAttributes: false`:
 * an upsert of an unknown attribute would fail every workflow task), and the result says which
 * are missing, for the caller to tell the person once.
 */
/**
 * The workflow input of a run. Where the installation's run secret is readable, the run is signed:
 * workers that require signed runs execute only what the operator's CLI started, with this PRD and
 * these knobs, once, within an hour. A scheduled run's signature covers every run of the schedule
 * (`<workflowId>-<scheduled time>`), each admitted once, with no expiry.
 */
export function runInputFor(
  opts: Pick<StartOptions, 'prd' | 'repoPath' | 'knobs' | 'workflowId' | 'checklist' | 'host' | 'tasks' | 'knobsGiven' | 'goal'>,
  scheduled = false,
): RunInput {
  const input: RunInput = {
    prdPath: opts.prd.path,
    prdTitle: opts.prd.title,
    repoPath: opts.repoPath,
    knobs: opts.knobs,
    notifyTriggers: true,
    ...(opts.knobsGiven ? { knobsGiven: opts.knobsGiven } : {}),
    ...(opts.checklist ? { checklist: opts.checklist } : {}),
    ...(opts.tasks ? { tasks: opts.tasks } : {}),
    ...(opts.host ? { host: opts.host } : {}),
    ...(opts.goal ? { goal: opts.goal } : {}),
    // The loop's small rules of this release (schemas/run.ts): runs started before have none.
    loopRules: 1,
  };
  const secret = runSecret();
  if (secret) {
    const k = opts.knobs;
    // The PRD as read here (a PRD on another host: by its path only), the knobs, a nonce and an expiry (none for a schedule).
    const prdSha256 = opts.prd.sha256 !== undefined ? opts.prd.sha256 : prdDigest(opts.prd.path);
    input.authorization = signRun(secret, {
      workflowId: opts.workflowId,
      repoPath: opts.repoPath,
      provider: k.provider,
      agentCommand: k.agentCommand,
      councilProvider: k.councilProvider || k.provider,
      testCommand: k.testCommand,
      failover: [
        ...failoverChain(k),
        ...(k.devilsAdvocateProvider ? [k.devilsAdvocateProvider] : []),
        ...(k.reviewProvider ? [k.reviewProvider] : []),
      ],
      ...(scheduled ? { scheduled: true } : {}),
      ...startClaims({ prdPath: opts.prd.path, prdSha256, knobs: k, scheduled }),
      ...(opts.tasks?.length ? { tasksSha256: createHash('sha256').update(canonicalTasks(opts.tasks)).digest('hex') } : {}),
      ...(opts.knobsGiven ? { knobsGivenSha256: knobsGivenDigest(opts.knobsGiven) } : {}),
    });
  }
  return input;
}

/**
 * The search attributes a run starts with, given those the namespace lacks: all of them, with the
 * release stamp (the package's version: docs/operations.md, Upgrading Vigil under open runs); all
 * but the stamp where only `VigilRelease` is missing; none where one the workflow upserts is
 * missing (`upserts` false: the run is told so, as an upsert of an unknown attribute would fail
 * every workflow task). Schedules start their runs with the same.
 */
export function startSearchAttributes(
  input: Pick<RunInput, 'repoPath' | 'knobs'>,
  missing: readonly string[],
): { upserts: boolean; typed: SearchAttributePair[] } {
  if (UPSERTED_SEARCH_ATTRIBUTES.some((k) => missing.includes(k.name))) return { upserts: false, typed: [] };
  return {
    upserts: true,
    typed: [
      { key: SA_STATUS, value: 'starting' },
      { key: SA_ITERATION, value: 0 },
      { key: SA_REPO, value: input.repoPath.slice(-255) },
      { key: SA_PROVIDER, value: input.knobs.provider },
      ...(missing.includes(SA_RELEASE.name) ? [] : [{ key: SA_RELEASE, value: packageRelease() }]),
    ],
  };
}

export async function startRun(client: Client, connection: Connection, ep: Endpoint, opts: StartOptions): Promise<StartResult> {
  const input = runInputFor(opts);
  if (opts.attachIfRunning) {
    const existing = client.workflow.getHandle<typeof vigilRun>(opts.workflowId);
    const desc = await existing.describe().catch(() => null);
    if (desc?.status.name === 'RUNNING') return { handle: existing, attached: true, searchAttributes: { missing: [] } };
  }
  // null: the server would not say (no right to list them); try with them, and without on refusal.
  const missing = await missingSearchAttributes(connection, ep.namespace);
  const start = (withSearchAttributes: boolean): Promise<WorkflowHandle<typeof vigilRun>> => {
    const attributes = withSearchAttributes ? startSearchAttributes(input, missing ?? []) : null;
    const args: RunInput = attributes?.upserts ? input : { ...input, searchAttributes: false };
    // By name: the CLI does not load the workflow code to start it.
    const common = {
      taskQueue: ep.taskQueue,
      workflowId: opts.workflowId,
      // The server holds the rule, so two starts racing for one id cannot both pass it.
      workflowIdReusePolicy: opts.replace ? WorkflowIdReusePolicy.ALLOW_DUPLICATE : WorkflowIdReusePolicy.REJECT_DUPLICATE,
      args: [args] as [RunInput],
      staticSummary: staticSummary(input),
      staticDetails: staticDetails(input),
      ...(attributes?.upserts ? { typedSearchAttributes: attributes.typed } : {}),
    };
    if (opts.directive) {
      // The directive is in history before the run's first workflow task, so the first prompt has it.
      // The `input` signal (workflows/messages.ts), by name for the same reason.
      return client.workflow.signalWithStart<typeof vigilRun, [unknown?]>('vigilRun', {
        ...common,
        signal: 'input',
        signalArgs: [opts.directive],
      });
    }
    return client.workflow.start<typeof vigilRun>('vigilRun', { ...common, workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL });
  };
  try {
    if (missing !== null && missing.length > 0) {
      const upserts = startSearchAttributes(input, missing).upserts;
      return { handle: await start(upserts), attached: false, searchAttributes: { missing } };
    }
    try {
      return { handle: await start(true), attached: false, searchAttributes: { missing: [] } };
    } catch (err) {
      const refusal = searchAttributeRefusal(err);
      if (refusal === null) throw err;
      return { handle: await start(false), attached: false, searchAttributes: { missing: SEARCH_ATTRIBUTES.map((k) => k.name), refusal } };
    }
  } catch (err) {
    if (err instanceof Error && /already (started|running)/i.test(err.message)) throw await idTakenError(client, opts.workflowId);
    throw err;
  }
}

// Looking runs up and steering them lives in steer.ts (the CLI's fast path); re-exported here.
export {
  exitCodeOf,
  finishedError,
  noWorkerError,
  queryStatus,
  sendMessage,
  viewRun,
  WORKER_ANSWER_MS,
  type MessageKind,
  type RunView,
} from './steer.js';
