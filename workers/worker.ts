/**
 * Builds the Vigil worker: the `vigilRun` workflow plus every activity, with options for long,
 * cancellable agent calls, its concurrency (workers/tuning.ts) and optional tracing
 * (workers/tracing.ts, loaded by the caller only when on).
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  NativeConnection,
  Worker,
  type ActivityInterceptorsFactory,
  type InjectedSinks,
  type WorkerOptions,
} from '@temporalio/worker';
import type { PayloadCodec } from '@temporalio/common';
import * as activities from '../activities/index.js';
import { catchUpJournals } from '../lib/event-journal.js';
import { configureGitHelper } from '../lib/git-helper.js';
import { HEARTBEAT_SEND_MS, setHeartbeatSendMs } from '../activities/heartbeat.js';
import { cancelRunningCalls } from '../lib/running-calls.js';
import type { RunningCallSinks } from '../workflows/running-call.js';
import { codecFromEnv, tolerantDecoding } from './codec.js';
import { logLine } from '../lib/logging.js';
import type { Tracing } from './tracing.js';
import { DEFAULT_TUNING, tuningWorkerOptions, type WorkerTuning } from './tuning.js';
import { checkPrebuiltBundle } from './workflow-bundle.js';

export { DEFAULT_TASK_QUEUE } from '../lib/paths.js';

/** How often a running activity's heartbeats are sent to Temporal (see createVigilWorker). */
export { HEARTBEAT_SEND_MS };

/** A module of this package next to this file (`.ts` under vitest, `.js` in dist/). */
function ownModule(folder: 'workflows' | 'schemas', name: string): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return path.resolve(here, '..', folder, `${name}${ext}`);
}

/** The workflow entry point. */
export const workflowsPath = (): string => ownModule('workflows', 'index');

/** The payload converter (tolerant of undecodable payloads): bundle it with the workflows and give it to the worker. */
export const payloadConverterPath = (): string => ownModule('workflows', 'payload-converter');

/**
 * What every bundle of Vigil's workflows is made of: the entry point, the payload converter, and
 * the one module the workflows share (schemas/shared.ts: the schemas are built once per worker,
 * not once per run).
 */
export function workflowBundleOptions(): { workflowsPath: string; payloadConverterPath: string; preloadModules: string[] } {
  return { workflowsPath: workflowsPath(), payloadConverterPath: payloadConverterPath(), preloadModules: [ownModule('schemas', 'shared')] };
}

export interface VigilWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /**
   * A prebuilt bundle (tests bundle once per file); default: the bundle `npm run build` wrote next
   * to the compiled code when it still matches it, else bundle `workflowsPath()` with
   * `payloadConverterPath()` now.
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Slots and cache (default DEFAULT_TUNING: 200 activity slots, so agent calls and rounds never queue behind each other). */
  tuning?: WorkerTuning;
  /** Default workerIdentity(). */
  identity?: string;
  /** Payload encryption; default from the environment (null: none). */
  codec?: PayloadCodec | null;
  /** OpenTelemetry interceptors and sinks (workers/tracing.ts); the workflows are then bundled with its workflow interceptors. */
  tracing?: Tracing | null;
  /** False: activities only (a host's queue, see host-workers.ts); no workflow bundle is loaded. */
  workflows?: boolean;
  /** How often a running activity's heartbeats are sent to Temporal; default HEARTBEAT_SEND_MS. */
  heartbeatSendMs?: number;
  /** More activity interceptors, inside the tracing ones (workers/activity-observer.ts: metrics, the per-call log line, span attributes). */
  activityInterceptors?: ActivityInterceptorsFactory[];
}

/**
 * The worker's identity as Temporal shows it (UI, `temporal task-queue describe`, and on every
 * task it starts): `vigil-worker:<pid>@<host>`, the host being the one the worker serves runs for
 * (`--host`), else this machine's name.
 */
export function workerIdentity(host: string = os.hostname(), pid: number = process.pid): string {
  return `vigil-worker:${pid}@${host}`;
}

/**
 * The run's word that it has cancelled its agent call (workflows/running-call.ts) reaches the call
 * when it runs in this process, without waiting for the call's next heartbeat.
 */
const runningCallSinks: InjectedSinks<RunningCallSinks> = {
  vigilRunningCall: { cancelled: { fn: (info, meant) => void cancelRunningCalls(info, meant), callDuringReplay: false } },
};

const quiet = (): void => {};
/** The bundler's progress chatter is noise in a worker's log; its errors are not. */
const bundlerLogger = {
  trace: quiet,
  debug: quiet,
  info: quiet,
  warn: (m: string) => logLine('WARN', m),
  error: (m: string) => logLine('ERROR', m),
  log: quiet,
};

/**
 * The workflow bundle a worker started from this code uses: the prebuilt `dist/workflow-bundle.js`
 * when it sits next to the compiled code this process runs and was built from exactly that code
 * (see workflow-bundle.ts), else a fresh bundle of `workflowsPath()` with `payloadConverterPath()`.
 * Running from sources (`.ts`, under vitest) always bundles.
 */
export async function defaultWorkflowBundle(
  log: (line: string) => void = (m) => logLine('WARN', m),
  workflowInterceptorModules: readonly string[] = [],
): Promise<NonNullable<WorkerOptions['workflowBundle']>> {
  const entry = workflowsPath();
  // Workflow interceptors (tracing) are not in the prebuilt bundle: bundle with them.
  if (workflowInterceptorModules.length) {
    return bundleWorkflowCode({
      ...workflowBundleOptions(),
      workflowInterceptorModules: [...workflowInterceptorModules],
      logger: bundlerLogger,
    });
  }
  if (entry.endsWith('.js')) {
    const check = checkPrebuiltBundle(path.resolve(path.dirname(entry), '..'));
    if (check.ok) return { codePath: check.codePath };
    if (check.reason)
      log(
        `vigil worker: not using the prebuilt workflow bundle (${check.reason}); bundling the workflows now — \`npm run build\` refreshes it`,
      );
  }
  return bundleWorkflowCode({ ...workflowBundleOptions(), logger: bundlerLogger });
}

export async function createVigilWorker(opts: VigilWorkerOptions): Promise<Worker> {
  const codec = opts.codec === undefined ? codecFromEnv() : opts.codec;
  const heartbeatSendMs = opts.heartbeatSendMs ?? HEARTBEAT_SEND_MS;
  // The activities wait one send interval before their first beat (activities/heartbeat.ts).
  setHeartbeatSendMs(opts.taskQueue, heartbeatSendMs);
  const tuning = opts.tuning ?? DEFAULT_TUNING;
  configureGitHelper({ niceness: tuning.gitNiceness });
  // The journals of runs that ended while the store was down, spooled by any worker of this store.
  catchUpJournals();
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    // The bundle carries the tolerant payload converter (workflows/payload-converter.ts): the
    // workflow sandbox is where an undecodable signal would otherwise fail every task. Activities
    // only ever see payloads Vigil's own workflow wrote, with the default converter.
    ...(opts.workflows === false
      ? {}
      : { workflowBundle: opts.workflowBundle ?? (await defaultWorkflowBundle(undefined, opts.tracing?.workflowInterceptorModules)) }),
    activities,
    ...(opts.tracing || opts.activityInterceptors?.length
      ? {
          interceptors: {
            ...opts.tracing?.interceptors,
            activity: [...(opts.tracing?.interceptors.activity ?? []), ...(opts.activityInterceptors ?? [])],
          },
        }
      : {}),
    sinks: { ...runningCallSinks, ...opts.tracing?.sinks },
    // Payloads encrypted when a codec key is configured (VIGIL_CODEC_KEY_FILE / VIGIL_CODEC_KEY);
    // without one, encrypted payloads are still recognised, and the key the worker lacks named.
    dataConverter: { payloadCodecs: [tolerantDecoding(codec, (m) => logLine('WARN', m))] },
    identity: opts.identity ?? workerIdentity(),
    ...tuningWorkerOptions(tuning),
    // A running call's heartbeats reach Temporal at most every HEARTBEAT_SEND_MS: they prove the
    // worker alive (the heartbeat timeout, 30 s by default, notices a dead one) and bring back a
    // cancellation. At two a second, 200 busy runs sent 400 heartbeats a second, which kept the
    // server and this worker too busy to answer the runs' own workflow tasks (status and pause
    // took seconds). A STOP --now does not wait for them: the run tells the worker that hosts its
    // call at once (workflows/running-call.ts); only a call on another worker (a host's) hears it
    // with its next heartbeat.
    maxHeartbeatThrottleInterval: heartbeatSendMs,
    defaultHeartbeatThrottleInterval: heartbeatSendMs,
    // On SIGINT/SIGTERM, running agent calls are cancelled (their trees killed) and reported
    // before the process exits; Temporal re-runs the interrupted call on the next worker.
    shutdownGraceTime: '10s',
  });
}
