/**
 * What `vigil start` refuses and warns about, end to end: real `node bin/vigil.js` processes against
 * the suite's Temporal dev server and a `vigil worker` child process, the scripted agent doing the
 * work, with the default knobs but for the checks that would slow the runs down (FAST).
 *
 * - `--id` of a run that ended is refused (exit 2, nothing started: the server's run is still the
 *   old one) unless `--replace` asks for a new run under it; a running run's id is refused even so.
 * - `--tasks FILE` without parallelStreams above 1 is refused before anything starts (the run would
 *   ignore the file); with parallelStreams=2 the same file is taken.
 * - No notification channel, and a budget over a `command` agent that reports no cost, are each
 *   warned about once on stderr; a start with a channel and no budget warns about nothing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { notifySendHere } from '../../cli/start-checks.js';
import {
  assertBuilt,
  makeRepo,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  writePrd,
  writeScenario,
  type ScenarioInput,
} from '../support/harness.js';
import { runVigil, show, startWorkerProcess, type CliResult, type VigilOptions, type WorkerProcess } from './cli-helpers.js';

const NAMESPACE = 'default';
const FAST = [
  '--set',
  'baseWaitSeconds=1',
  '--set',
  'backoffJitterSeconds=0',
  '--set',
  'councilEnabled=false',
  '--set',
  'qualityGates=false',
  '--set',
  'codeReview=false',
  '--set',
  'prdChecklist=false',
];
// A change, then a claim the evidence gate accepts (a claim over no change is refused).
const DONE: ScenarioInput = {
  version: 1,
  iterations: [
    { writes: { 'src/a.txt': 'a\n' }, commit: 'add a' },
    { output: 'all done\n', claim: 'promise' },
  ],
};
const LONG: ScenarioInput = { version: 1, iterations: [], default: { sleepBeforeMs: 2000, output: 'working\n' } };

let taskQueue: string;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;
let client: Client;
const started = new Set<string>();

const baseEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: NAMESPACE,
  VIGIL_TASK_QUEUE: taskQueue,
});
const vigil = (args: string[], opts: VigilOptions = {}): Promise<CliResult> => runVigil(args, baseEnv(), opts);

/** `vigil start` of a fresh repository with this scenario, under `id`. */
function startArgs(id: string, scenario: ScenarioInput, extra: string[] = []): string[] {
  const repo = makeRepo();
  started.add(id);
  const agent = `"${SCRIPTED_AGENT}" --scenario "${writeScenario(repo, scenario)}"`;
  return ['start', writePrd(), '--repo', repo, '--agent-command', agent, ...FAST, '--id', id, ...extra];
}

const runIdOf = async (id: string): Promise<string | null> =>
  (
    await client.workflow
      .getHandle(id)
      .describe()
      .catch(() => null)
  )?.runId ?? null;

const terminate = (id: string): Promise<unknown> =>
  client.workflow
    .getHandle(id)
    .terminate('vigil start-rules e2e cleanup')
    .catch(() => undefined);

const warnings = (r: CliResult): string[] => r.stderr.split('\n').filter((l) => l.startsWith('vigil: warning: '));

beforeAll(async () => {
  assertBuilt();
  taskQueue = uniqueId('start-rules');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: NAMESPACE });
  worker = await startWorkerProcess(baseEnv());
});

afterAll(async () => {
  if (connection) await Promise.all([...started].map(terminate));
  await worker?.stop();
  await connection?.close();
});

describe.concurrent('vigil start refuses what it would hide or ignore', () => {
  it("refuses a finished run's id without --replace, starts a new run under it with --replace, and never replaces a running run", async ({
    expect,
  }) => {
    const id = uniqueId('start-finished');
    const first = await vigil(startArgs(id, DONE, ['--wait']), { timeoutMs: 120_000 });
    expect(first.code, show(first)).toBe(0);
    const old = await runIdOf(id);
    expect(old).not.toBeNull();

    const again = await vigil(startArgs(id, DONE));
    expect(again.code, show(again)).toBe(2);
    expect(again.stderr).toMatch(new RegExp(`run "${id}" already ran \\(it ended completed at [^)]+\\); nothing was started`));
    expect(again.stderr).toContain('pass --replace');
    expect(again.stdout).not.toContain('started run');
    // Nothing started: the id still names the run that ended, and `vigil status` shows it.
    expect(await runIdOf(id)).toBe(old);
    const st = await vigil(['status', id, '--json']);
    expect(JSON.parse(st.stdout)).toMatchObject({ runId: old, outcome: { status: 'completion_promise_fulfilled' } });

    const replaced = await vigil(startArgs(id, DONE, ['--replace', '--wait']), { timeoutMs: 120_000 });
    expect(replaced.code, show(replaced)).toBe(0);
    expect(replaced.stdout).toContain(`started run ${id}`);
    const now = await runIdOf(id);
    expect(now).not.toBeNull();
    expect(now).not.toBe(old);

    // A running run's id: refused, --replace or not.
    const busy = uniqueId('start-running');
    const r = await vigil(startArgs(busy, LONG, ['--set', 'maxIterations=50']));
    expect(r.code, show(r)).toBe(0);
    try {
      const running = await runIdOf(busy);
      for (const extra of [[], ['--replace']]) {
        const twice = await vigil(startArgs(busy, LONG, extra));
        expect(twice.code, show(twice)).toBe(2);
        expect(twice.stderr).toContain(
          `a run with id "${busy}" is already running; choose another --id or follow it with \`vigil watch ${busy}\``,
        );
      }
      expect(await runIdOf(busy)).toBe(running);
    } finally {
      await terminate(busy);
    }
  });

  it('refuses --tasks without parallelStreams above 1 before anything starts, and takes it with parallelStreams=2', async ({ expect }) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-start-tasks-'));
    const tasks = path.join(dir, 'tasks.md');
    writeFileSync(tasks, '## api: The API\n\n## cli: The CLI\nDepends on: api\n');
    const id = uniqueId('start-tasks');
    const r = await vigil(startArgs(id, DONE, ['--tasks', tasks]));
    expect(r.code, show(r)).toBe(2);
    expect(r.stderr).toContain(`--tasks ${tasks}: a task list splits the run into parallel streams, and parallelStreams is 1`);
    expect(r.stderr).toContain('Add --set parallelStreams=N');
    expect(await runIdOf(id)).toBeNull();

    const streams = uniqueId('start-tasks-2');
    const ok = await vigil(startArgs(streams, DONE, ['--tasks', tasks, '--set', 'parallelStreams=2']));
    expect(ok.code, show(ok)).toBe(0);
    expect(await runIdOf(streams)).not.toBeNull();
    await terminate(streams);
  });

  it('warns once when no notification channel is set and when a budget cannot see a command agent’s cost; not when neither is so', async ({
    expect,
  }) => {
    // This machine's desktop channel: the warning depends on whether notify-send is installed.
    const desktop = notifySendHere({ PATH: process.env.PATH ?? '' }) !== null;
    const [defaults, noDesktop, budget, quiet] = await Promise.all([
      vigil(startArgs(uniqueId('warn-default'), DONE)),
      vigil(startArgs(uniqueId('warn-no-desktop'), DONE, ['--set', 'notifyDesktop=false'])),
      vigil(startArgs(uniqueId('warn-budget'), DONE, ['--set', 'notifyDesktop=false', '--set', 'budgetUsd=5', '--json'])),
      vigil(startArgs(uniqueId('warn-none'), DONE, ['--set', `notifyFile=${path.join(os.tmpdir(), `${uniqueId('notes')}.jsonl`)}`])),
    ]);
    for (const r of [defaults, noDesktop, budget, quiet]) expect(r.code, show(r)).toBe(0);

    const channel = (r: CliResult): string[] => warnings(r).filter((w) => w.includes('no notification channel is configured'));
    expect(channel(defaults), show(defaults)).toHaveLength(desktop ? 0 : 1);
    if (!desktop) expect(channel(defaults)[0]).toContain('notify-send is not installed here');
    expect(channel(noDesktop), show(noDesktop)).toHaveLength(1);
    expect(channel(noDesktop)[0]).toContain('notifyDesktop is off');
    expect(channel(noDesktop)[0]).toContain('--set notifyFile=PATH');
    expect(warnings(noDesktop).filter((w) => w.includes('budgetUsd'))).toEqual([]);

    const spend = warnings(budget).filter((w) => w.includes('budgetUsd=5'));
    expect(spend, show(budget)).toHaveLength(1);
    expect(spend[0]).toContain('a `command` agent reports no cost unless it writes .vigil/signals/USAGE');
    expect(spend[0]).toContain('may never be reached');
    expect(channel(budget)).toHaveLength(1);
    // --json: stdout stays one JSON line; the warnings are on stderr.
    expect(JSON.parse(budget.stdout)).toMatchObject({ kind: 'started' });

    expect(warnings(quiet), show(quiet)).toEqual([]);
  });
});
