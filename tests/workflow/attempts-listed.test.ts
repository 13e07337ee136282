/**
 * A run with attempts carries the search attributes a single run carries
 * (workflows/attempts-search.ts, cli/attempts.ts, docs/attempts.md), on a real Temporal server (the
 * suite's, which has Vigil's search attributes), every knob at the product's default but time
 * (tests/support/attempts.ts), the sandbox on, the scripted agent playing every role of every
 * attempt: `vigil start --attempts` starts it with them, `vigil list --repo R` finds it, a list of
 * another repository does not, and `--status` follows it from running to paused to stopped (its
 * `VigilStatus` upserted as it goes). Started as a person would (the CLI), served as a person's is
 * (a `vigil worker` process, which also polls the run's host queue).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Outcome } from '../../schemas/run.js';
import { SA_REPO, SA_STATUS } from '../../schemas/search-attributes.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  WorkerProcesses,
  writePrd,
  type TestEnv,
} from '../support/harness.js';
import { attemptScenarios, attemptsRepo, type Script } from '../support/attempts.js';
import { runVigil, show } from '../e2e/cli-helpers.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
const workers = new WorkerProcesses();
const cli = (tq: string): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  VIGIL_TASK_QUEUE: tq,
  PATH: process.env.PATH ?? '',
});
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  workers.killAll();
  await env?.close();
});

/** Never right and never claiming done: keeps iterating until told otherwise. */
const WANDERING: Script = {
  iterations: [],
  default: { appends: { 'src/feature.js': '/** The feature (wandering). */\nexport const feature = 2;\n' } },
};

async function until<T>(what: string, ask: () => Promise<T>, ok: (v: T) => boolean, ms = 300_000): Promise<T> {
  const deadline = Date.now() + patient(ms);
  let v = await ask();
  while (!ok(v)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)?.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 300));
    v = await ask();
  }
  return v;
}

describe('a run with attempts in `vigil list --status/--repo`', () => {
  it(
    '`vigil list --repo R` finds a run with attempts, and --status follows it from running to paused to stopped',
    async () => {
      const r = attemptsRepo();
      const other = makeRepo();
      const tq = uniqueId('attempts-list');
      await workers.spawn(tq, undefined, { VIGIL_SANDBOX_READABLE: process.env.VIGIL_SANDBOX_READABLE ?? '' });
      const runId = uniqueId('listed-run');
      const scenario = attemptScenarios({}, [WANDERING, WANDERING]);
      const knobs = ['maxIterations=50', 'baseWaitSeconds=1', 'backoffJitterSeconds=0', 'heartbeatTimeoutSeconds=5'].flatMap((k) => [
        '--set',
        k,
      ]);
      const prd = writePrd('# Feature\n\nsrc/feature.js exports feature = 1, and the tests pass.\n');
      const agent = `"${SCRIPTED_AGENT}" --scenario ${scenario}`;
      const started = await runVigil(
        ['start', prd, '--repo', r, '--id', runId, '--attempts', '2', '--agent-command', agent, ...knobs, '--no-store'],
        cli(tq),
      );
      expect(started.code, show(started)).toBe(0);
      // No hint about missing search attributes: the suite's server has them, and the run got them.
      expect(started.stderr).not.toMatch(/search attribute/i);
      const handle = env.client.workflow.getHandle(runId);
      expect((await handle.describe()).typedSearchAttributes.get(SA_REPO)).toBe(r);

      const listed = async (...filters: string[]): Promise<string[]> => {
        const res = await runVigil(['list', '--json', '--limit', '1000', ...filters], cli(tq));
        expect(res.code, show(res)).toBe(0);
        return res.stdout.trim().startsWith('[') ? (JSON.parse(res.stdout) as { workflowId: string }[]).map((x) => x.workflowId) : [];
      };
      // Visibility follows the run within moments: asked until it says so.
      await until(
        'listed as running on its repository',
        () => listed('--repo', r, '--status', 'running'),
        (ids) => ids.includes(runId),
      );
      expect(await listed('--repo', r)).toContain(runId);
      expect(await listed('--repo', other)).not.toContain(runId);

      const paused = await runVigil(['pause', runId, '--by', 'alice'], cli(tq));
      expect(paused.code, show(paused)).toBe(0);
      await until(
        'listed as paused',
        () => listed('--repo', r, '--status', 'paused'),
        (ids) => ids.includes(runId),
      );
      expect(await listed('--repo', r, '--status', 'running')).not.toContain(runId);

      const stopped = await runVigil(['stop', runId, '--by', 'alice'], cli(tq));
      expect(stopped.code, show(stopped)).toBe(0);
      expect(((await handle.result()) as Outcome).status).toBe('stopped');
      await until(
        'listed as stopped',
        () => listed('--repo', r, '--status', 'stopped'),
        (ids) => ids.includes(runId),
      );
      expect((await handle.describe()).typedSearchAttributes.get(SA_STATUS)).toBe('stopped');
    },
    patient(600_000),
  );
});
