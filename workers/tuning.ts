/**
 * How much a worker runs at once, and at what priority: flags of `vigil worker` and `vigil up`
 * (`--activity-slots N`, `--workflow-slots N`, `--local-activity-slots N`,
 * `--max-cached-workflows N`, `--git-niceness N`), else the environment (VIGIL_ACTIVITY_SLOTS,
 * VIGIL_WORKFLOW_SLOTS, VIGIL_LOCAL_ACTIVITY_SLOTS, VIGIL_MAX_CACHED_WORKFLOWS,
 * VIGIL_GIT_NICENESS), else the defaults below.
 *
 * Why these defaults: an activity slot is held for the whole of an agent call, which mostly waits
 * on a child process (the agent CLI, the model behind it), and a council round holds one slot per
 * member at once. Slots are therefore not a CPU budget but a cap on agent processes alive at once:
 * 200 lets 200 runs each have their agent call in flight on one worker (slot-bound throughput was
 * the limit at the old 8). Fixed sizes rather than the SDK's resource-based tuner: that tuner
 * gates new slots on the whole machine's CPU and memory, which the agents' own children fill, so
 * it would throttle the worker on load it cannot shed; a fixed cap is predictable. A workflow task
 * holds its slot from when the worker takes it until the server has taken its completion; the
 * workflow thread's own part is short, and on a loaded server the round trip is most of it. With
 * 8, 200 busy runs queued their tasks on the server (~0.8 s median) and a pause waited behind
 * them; 16 cut that wait to ~0.2 s and the pause median by a third, and 24 did no better. The
 * SDK's 40 let a burst of runs on a busy machine hold tasks past their timeout (the timeout runs
 * from when the worker took the task, and the retries fed the backlog)
 * (`npm run bench -- --knobs '' --concurrent N --workflow-slots S`). Local activities (the event-store projection,
 * small reads) also keep the SDK's 100. The workflow cache keeps the SDK's default (sized from
 * the heap, ~1,000 for a 2 GiB heap), so 200 busy runs stay cached rather than replayed.
 *
 * The git helper runs at niceness 10: at 200 busy runs on two cores its git work (a process per
 * git command, several per iteration) was a third of the machine's CPU, and the worker's workflow
 * tasks waited for CPU behind it. Niced, a pause at that load took ~50–80 ms instead of ~100–150,
 * at the same throughput; an idle machine sees no difference.
 */
import type { WorkerOptions } from '@temporalio/worker';

export interface WorkerTuning {
  /** Activity executions at once (agent calls, git, tests, gates, council rounds and code reviews). */
  activitySlots: number;
  /** Workflow tasks at once. */
  workflowSlots: number;
  /** Local activities at once. */
  localActivitySlots: number;
  /** Workflows kept in the cache; null: the SDK's default (from the heap size). */
  maxCachedWorkflows: number | null;
  /** The niceness of the git helper and the git commands it runs (0: the worker's own priority). */
  gitNiceness: number;
}

export const DEFAULT_TUNING: WorkerTuning = {
  activitySlots: 200,
  workflowSlots: 16,
  localActivitySlots: 100,
  maxCachedWorkflows: null,
  gitNiceness: 10,
};

interface TuningSpec {
  key: keyof WorkerTuning;
  flag: string;
  env: string;
  min: number;
  max: number;
}

export const TUNING_SPECS: readonly TuningSpec[] = [
  { key: 'activitySlots', flag: '--activity-slots', env: 'VIGIL_ACTIVITY_SLOTS', min: 1, max: 10_000 },
  { key: 'workflowSlots', flag: '--workflow-slots', env: 'VIGIL_WORKFLOW_SLOTS', min: 2, max: 10_000 },
  { key: 'localActivitySlots', flag: '--local-activity-slots', env: 'VIGIL_LOCAL_ACTIVITY_SLOTS', min: 1, max: 10_000 },
  { key: 'maxCachedWorkflows', flag: '--max-cached-workflows', env: 'VIGIL_MAX_CACHED_WORKFLOWS', min: 0, max: 100_000 },
  { key: 'gitNiceness', flag: '--git-niceness', env: 'VIGIL_GIT_NICENESS', min: 0, max: 19 },
];

/** A tuning value that is not allowed; the message names the flag or variable and the range. */
export class TuningError extends Error {
  override name = 'TuningError';
}

/** Raw flag values keyed by WorkerTuning key (strings as typed; undefined = not given). */
export type TuningFlags = Partial<Record<keyof WorkerTuning, string>>;

function parseOne(spec: TuningSpec, raw: string, from: string): number {
  const t = raw.trim();
  const n = /^\d+$/.test(t) ? Number(t) : NaN;
  if (!Number.isSafeInteger(n) || n < spec.min || n > spec.max) {
    throw new TuningError(`${from} must be an integer from ${spec.min} to ${spec.max}, got "${raw}"`);
  }
  return n;
}

/** Flags beat the environment, which beats the defaults. Throws TuningError on a bad value. */
export function resolveTuning(flags: TuningFlags, env: NodeJS.ProcessEnv): WorkerTuning {
  const given = (key: keyof WorkerTuning): number | undefined => {
    const spec = TUNING_SPECS.find((s) => s.key === key) as TuningSpec;
    const flag = flags[key];
    if (flag !== undefined) return parseOne(spec, flag, spec.flag);
    const fromEnv = env[spec.env];
    return fromEnv !== undefined && fromEnv.trim() !== '' ? parseOne(spec, fromEnv, spec.env) : undefined;
  };
  const t: WorkerTuning = {
    activitySlots: given('activitySlots') ?? DEFAULT_TUNING.activitySlots,
    workflowSlots: given('workflowSlots') ?? DEFAULT_TUNING.workflowSlots,
    localActivitySlots: given('localActivitySlots') ?? DEFAULT_TUNING.localActivitySlots,
    maxCachedWorkflows: given('maxCachedWorkflows') ?? DEFAULT_TUNING.maxCachedWorkflows,
    gitNiceness: given('gitNiceness') ?? DEFAULT_TUNING.gitNiceness,
  };
  if (t.maxCachedWorkflows !== null) {
    if (t.maxCachedWorkflows === 1) throw new TuningError('--max-cached-workflows must be 0 (no cache) or at least 2, got 1');
    if (t.maxCachedWorkflows > 0 && t.workflowSlots > t.maxCachedWorkflows) {
      throw new TuningError(
        `--workflow-slots (${t.workflowSlots}) cannot exceed --max-cached-workflows (${t.maxCachedWorkflows}); lower the one or raise the other`,
      );
    }
  }
  return t;
}

/** The SDK worker options for a tuning. */
export function tuningWorkerOptions(
  t: WorkerTuning,
): Pick<
  WorkerOptions,
  | 'maxConcurrentActivityTaskExecutions'
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'maxConcurrentLocalActivityExecutions'
  | 'maxCachedWorkflows'
> {
  return {
    maxConcurrentActivityTaskExecutions: t.activitySlots,
    maxConcurrentWorkflowTaskExecutions: t.workflowSlots,
    maxConcurrentLocalActivityExecutions: t.localActivitySlots,
    ...(t.maxCachedWorkflows !== null ? { maxCachedWorkflows: t.maxCachedWorkflows } : {}),
  };
}

/** One line for the worker's banner. */
export function describeTuning(t: WorkerTuning): string {
  return (
    `${t.activitySlots} activity slots, ${t.workflowSlots} workflow-task slots, ${t.localActivitySlots} local-activity slots, ` +
    `workflow cache ${t.maxCachedWorkflows ?? 'SDK default'}, git at niceness ${t.gitNiceness}`
  );
}
