/**
 * Shared test helpers: a client and worker against the suite's real Temporal server, a workflow
 * bundle built once per file, throwaway git repositories, and scripted-agent scenarios.
 */
import { processesWithToken } from '../../lib/process-tree.js';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, inject } from 'vitest';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';
import { KNOB_PROFILES } from '../../schemas/knob-profiles.js';
import type { RunInput } from '../../schemas/run.js';
import type { ScenarioSchema } from '../../schemas/scenario.js';
import type { z } from 'zod';
import { statusQuery } from '../../workflows/messages.js';
import { breakerWorkflowId } from '../../schemas/provider-breaker.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { vigilRun } from '../../workflows/run-workflow.js';
import { createVigilWorker, workflowBundleOptions, type VigilWorkerOptions } from '../../workers/worker.js';
import { packageRoot } from '../../lib/paths.js';
import { patient } from './patience.js';

export const NAMESPACE = 'default';
export const ROOT = packageRoot();
export const SCRIPTED_AGENT = path.join(ROOT, 'examples/agents/scripted-agent/scripted-agent');
export const CLI = path.join(ROOT, 'bin/vigil.js');

export function temporalAddress(): string {
  return inject('temporalAddress');
}

export function assertBuilt(): void {
  if (!existsSync(path.join(ROOT, 'dist/examples/agents/scripted-agent/scripted-agent.bundle.js'))) {
    throw new Error('dist/ is missing: run `npm run build` (npm test does it for you)');
  }
}

export interface TestEnv {
  client: Client;
  connection: Connection;
  nativeConnection: NativeConnection;
  bundle: { code: string };
  close(): Promise<void>;
}

let runtimeInstalled = false;

export async function createTestEnv(): Promise<TestEnv> {
  if (!runtimeInstalled) {
    // Worker lifecycle chatter at INFO drowns test output; keep warnings and errors.
    Runtime.install({ logger: new DefaultLogger('WARN') });
    runtimeInstalled = true;
  }
  const address = temporalAddress();
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  // The suite's global setup bundled the workflows once (tests/support/global-setup.ts); a suite
  // with a setup of its own that does not bundles them here.
  const bundled = inject('workflowBundle');
  const bundle = bundled
    ? { code: readFileSync(bundled, 'utf8') }
    : await bundleWorkflowCode({ ...workflowBundleOptions(), logger: quietLogger });
  return {
    client: new Client({ connection, namespace: NAMESPACE }),
    connection,
    nativeConnection,
    bundle,
    async close() {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

const noop = (): void => {};
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: (m: string) => console.error(m), log: noop };

export async function makeWorker(
  env: TestEnv,
  taskQueue: string,
  options: Pick<VigilWorkerOptions, 'heartbeatSendMs'> = {},
): Promise<Worker> {
  return createVigilWorker({ connection: env.nativeConnection, namespace: NAMESPACE, taskQueue, workflowBundle: env.bundle, ...options });
}

let seq = 0;
/**
 * One test environment and one worker, on a queue of its own, for the whole test file: started
 * before its first test (after `before`, for settings the worker must inherit) and shut down
 * after its last. Read `env` and `taskQueue` inside the tests.
 */
export function fileWorker(prefix: string, before?: () => void): { readonly env: TestEnv; readonly taskQueue: string } {
  const shared = { env: undefined as unknown as TestEnv, taskQueue: uniqueId(prefix) };
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  beforeAll(async () => {
    assertBuilt();
    before?.();
    shared.env = await createTestEnv();
    worker = await makeWorker(shared.env, shared.taskQueue);
    running = worker.run();
  });
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await shared.env?.close();
  });
  return shared;
}

/**
 * A provider's circuit breaker is one workflow per provider on the whole server
 * (`vigil-provider-<name>`), served on the task queue of the run that asked it first. In
 * production every worker polls that queue; here each test file has a queue of its own, so an
 * entity left by a file whose worker is gone would never answer again (each ask waits out its
 * activity timeout, minutes). A file whose runs use a real provider with the breaker on calls this
 * before each run: an entity served on another queue is ended, and the next ask starts it on this
 * file's. Only one such file runs at a time (tests/support/tiers.ts).
 */
export async function claimBreaker(env: TestEnv, provider: string, taskQueue: string): Promise<void> {
  const handle = env.client.workflow.getHandle(breakerWorkflowId(provider));
  const d = await handle.describe().catch(() => null);
  if (d?.status.name === 'RUNNING' && d.taskQueue !== taskQueue)
    await handle.terminate(`test: served on ${d.taskQueue}, whose worker may be gone; the next ask starts it on ${taskQueue}`);
}

export function uniqueId(prefix: string): string {
  seq += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${seq}`;
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
  }).trim();
export { git };

/** A fresh git repository with one commit (README.md) unless `commit` is false. */
export function makeRepo(opts: { commit?: boolean; files?: Record<string, string> } = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-repo-'));
  git(dir, 'init', '-q', '-b', 'main');
  const files = opts.files ?? { 'README.md': '# sample\n' };
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  if (opts.commit !== false) {
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'initial');
  }
  return dir;
}

export type ScenarioInput = z.input<typeof ScenarioSchema>;

export function writeScenario(dir: string, scenario: ScenarioInput): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-scenario-')), 'scenario.json');
  writeFileSync(file, JSON.stringify(scenario, null, 2));
  void dir;
  return file;
}

export function writePrd(text = '# Sample PRD\n\nBuild the thing.\n'): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-prd-')), 'PRD.md');
  writeFileSync(file, text);
  return file;
}

/**
 * The time knobs every test shortens: they change how long a test waits, never what a run does
 * (backoff 1 s without jitter; a dead worker noticed within 5 s).
 */
const TEST_TIMING: Partial<Knobs> = { baseWaitSeconds: 1, backoffJitterSeconds: 0, heartbeatTimeoutSeconds: 5 };

/**
 * A run as users get it: every knob at the product's default (quality gates, code review, the PRD
 * checklist, the council, escalation and the tier ladder on), the scripted agent as the agent,
 * and only the test timing shortened. Workflow and e2e tests start here; a test that turns a knob
 * off says why.
 */
/**
 * A shell prefix for a test command that should act only on a tree the builder changed: on the
 * tree the run started with (the run's baseline test run, before the first agent call) it passes
 * at once. For tests whose suite marks or sleeps to catch a gate pass in the act.
 */
export const PASS_ON_START_TREE = `[ -z "$(git status --porcelain 2>/dev/null | grep -v ' .vigil/')" ] && { echo '1 passed'; exit 0; }; `;

export function runInput(repoPath: string, scenarioFile: string, knobs: Partial<Knobs> = {}): RunInput {
  return {
    prdPath: writePrd(),
    prdTitle: 'Sample PRD',
    repoPath,
    knobs: { ...defaultKnobs(), agentCommand: [SCRIPTED_AGENT, '--scenario', scenarioFile], ...TEST_TIMING, ...knobs },
    loopRules: 1,
  };
}

/**
 * The completion machinery switched off — council, quality gates, code review and the PRD
 * checklist — so that a claim is judged by the evidence gate alone: the `minimal` knob profile
 * (schemas/knob-profiles.ts), the same set a person gets with `--knob-profile minimal`.
 */
export const LOOP_ONLY: Readonly<Partial<Knobs>> = KNOB_PROFILES.minimal.knobs;

/**
 * For tests that pin the loop's own mechanics — messages, crashes, restarts, rollover, rewinds,
 * providers, hosts, the journal — where the completion machinery would only add agent calls and
 * time without touching what they check. Their claims are judged by the evidence gate alone
 * (`LOOP_ONLY`); a test turns any of it back on by passing the knob. How the safety nets behave
 * together is tested with the product's defaults (`runInput`, tests/workflow/default-knobs.test.ts).
 */
export function loopInput(repoPath: string, scenarioFile: string, knobs: Partial<Knobs> = {}): RunInput {
  return runInput(repoPath, scenarioFile, { ...LOOP_ONLY, ...knobs });
}

export async function startRun(
  env: TestEnv,
  taskQueue: string,
  input: RunInput,
  workflowId = uniqueId('run'),
): Promise<WorkflowHandle<typeof vigilRun>> {
  return env.client.workflow.start(vigilRun, { taskQueue, workflowId, args: [input] });
}

export async function status(handle: WorkflowHandle): Promise<StatusSnapshot> {
  return handle.query(statusQuery);
}

/** Polls `predicate` over the status query until it holds (or throws after `timeoutMs`). */
export async function waitForStatus(
  handle: WorkflowHandle,
  predicate: (s: StatusSnapshot) => boolean,
  timeoutMs = 60_000,
): Promise<StatusSnapshot> {
  timeoutMs = patient(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  let last: StatusSnapshot | undefined;
  while (Date.now() < deadline) {
    try {
      last = await status(handle);
      if (predicate(last)) return last;
    } catch {
      /* not queryable yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`status condition not met within ${timeoutMs} ms; last status: ${JSON.stringify(last)}`);
}

export interface AgentCall {
  role: string;
  iteration: number | null;
  /** Council member index (council calls only). */
  member: number | null;
  /** The pid the agent saw: inside the agent sandbox, a pid of its own pid namespace (use agentAlive). */
  pid: number;
  /** The call's process token (VIGIL_PROCESS_TOKEN). */
  token?: string;
}

/** The scripted agent's own record of every invocation in `repo`. */
export function agentCalls(repo: string): AgentCall[] {
  const file = path.join(repo, '.vigil/scripted-agent/calls.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AgentCall);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Whether any process of an agent call is still running, seen from the host: found by the call's
 * process token in its environment (the agent's own pid is that of the sandbox's pid namespace).
 */
export function agentAlive(call: AgentCall): boolean {
  if (call.token) return processesWithToken(call.token).length > 0;
  return pidAlive(call.pid);
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `vigil worker` processes started by a test (so a test can SIGKILL one), killed at the end. */
export class WorkerProcesses {
  private readonly children: ResultPromise[] = [];

  /** Starts `vigil worker` on `taskQueue` and waits until it polls. Wrapped in an object: an
   * execa child is a promise, and returning it bare from an async function would await its exit. */
  async spawn(
    taskQueue: string,
    address: string = temporalAddress(),
    extraEnv: Record<string, string> = {},
  ): Promise<{ child: ResultPromise }> {
    const child = execa('node', [CLI, 'worker'], {
      env: { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: NAMESPACE, VIGIL_TASK_QUEUE: taskQueue, ...extraEnv },
      reject: false,
      all: true,
    });
    this.children.push(child);
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`worker did not start: ${seen}`)), patient(60_000));
      child.all?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (seen.includes('polling')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void child.then(() => reject(new Error(`worker exited: ${seen}`)));
    });
    return { child };
  }

  killAll(): void {
    for (const c of this.children) c.kill('SIGKILL');
  }
}
