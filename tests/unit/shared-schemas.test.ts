/**
 * The schemas are built once per worker, not once per run: inside the SDK's reusable workflow
 * sandbox, two runs created one after the other get the very same schema objects (schemas/shared.ts,
 * preloaded by the bundle), while their workflow modules stay their own; and the shared schemas
 * keep working for the second run (the SDK's freezing of preloaded modules does not reach them).
 *
 * Drives the SDK's own sandbox (ReusableVMWorkflowCreator, what a worker runs workflows in) with
 * the prebuilt bundle, as a worker's workflow thread does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseWorkflowCode } from '@temporalio/worker/lib/worker.js';
import { ReusableVMWorkflowCreator } from '@temporalio/worker/lib/workflow/reusable-vm.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shared } from '../../schemas/shared.js';
import { assertBuilt, ROOT } from '../support/harness.js';

type Modules = Map<string, { exports: Record<string, unknown> }>;

let creator: ReusableVMWorkflowCreator;
const created: { dispose(): Promise<void> }[] = [];
beforeAll(async () => {
  assertBuilt();
  const codePath = path.join(ROOT, 'dist', 'workflow-bundle.js');
  creator = await ReusableVMWorkflowCreator.create(
    parseWorkflowCode(readFileSync(codePath, 'utf8'), codePath),
    10_000,
    new Set(['runAgent']),
    undefined,
  );
});
afterAll(async () => {
  for (const w of created) await w.dispose();
  await creator?.destroy();
});

let n = 0;
/** Creates a workflow in the sandbox, as the worker does for a run it takes up; its module cache. */
async function createRun(): Promise<Modules> {
  n += 1;
  const now = Date.now();
  const workflow = await creator.createWorkflow({
    info: {
      workflowId: `shared-${n}`,
      runId: `run-${n}`,
      workflowType: 'vigilRun',
      searchAttributes: {},
      taskQueue: 'q',
      namespace: 'default',
      firstExecutionRunId: `run-${n}`,
      originalExecutionRunId: `run-${n}`,
      startTime: new Date(now),
      runStartTime: new Date(now),
      taskTimeoutMs: 10_000,
      attempt: 1,
      historyLength: 1,
      historySize: 0,
      continueAsNewSuggested: false,
      currentBuildId: '',
      unsafe: { now: () => Date.now(), isReplaying: false, isReplayingHistoryEvents: false },
    } as never,
    randomnessSeed: [1, 2, 3, 4] as never,
    now,
    showStackTraceSources: false,
  } as never);
  created.push(workflow);
  // The sandbox's context (protected in the SDK's types) holds the activator of the workflow just created.
  const activator = (creator as unknown as { context: { __TEMPORAL_ACTIVATOR__: { moduleCache: Modules } } }).context
    .__TEMPORAL_ACTIVATOR__;
  return activator.moduleCache;
}

const exportsOf = (modules: Modules, file: string): Record<string, unknown> => {
  const key = [...modules.keys()].find((k) => k.endsWith(file));
  if (!key) throw new Error(`${file} is not in the run's modules`);
  return (modules.get(key) as { exports: Record<string, unknown> }).exports;
};

describe('schemas in the workflow sandbox', () => {
  it('two runs share the schema objects and keep their own workflow modules', async () => {
    const first = await createRun();
    const second = await createRun();
    for (const [file, name] of [
      ['schemas/run.js', 'RunInputSchema'],
      ['schemas/run.js', 'RunStateSchema'],
      ['schemas/knobs.js', 'KnobsSchema'],
      ['schemas/messages.js', 'PausePayloadSchema'],
      ['schemas/activities.js', 'AgentResultSchema'],
    ] as const) {
      expect(exportsOf(second, file)[name], `${file} ${name}`).toBeDefined();
      expect(exportsOf(second, file)[name], `${file} ${name}`).toBe(exportsOf(first, file)[name]);
    }
    // The workflow's own modules are evaluated for each run: no state is shared.
    expect(exportsOf(second, 'workflows/run-workflow.js').vigilRun).not.toBe(exportsOf(first, 'workflows/run-workflow.js').vigilRun);
  });

  it('a schema shared with an earlier run still parses (the freezing of preloaded modules does not reach it)', async () => {
    await createRun();
    const later = await createRun();
    const knobs = exportsOf(later, 'schemas/knobs.js').KnobsSchema as {
      safeParse(v: unknown): { success: boolean; data?: Record<string, unknown> };
    };
    const ok = knobs.safeParse({ maxIterations: 3 });
    expect(ok.success).toBe(true);
    expect(ok.data?.maxIterations).toBe(3);
    expect(knobs.safeParse({ maxIterations: -1 }).success).toBe(false);
    expect(Object.isFrozen(knobs)).toBe(false);
  });
});

describe('shared', () => {
  it('builds a value once per key', () => {
    let builds = 0;
    const make = (): { n: number } => ({ n: ++builds });
    const a = shared('test:once', make);
    expect(shared('test:once', make)).toBe(a);
    expect(builds).toBe(1);
    expect(shared('test:other', make)).not.toBe(a);
    expect(builds).toBe(2);
  });
});
