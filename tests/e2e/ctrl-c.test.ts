/**
 * Ctrl+C where a run is followed (cli/ctrl-c.ts), end to end: real `vigil watch` and `vigil start
 * --wait` processes sent SIGINT as a terminal sends it, a `vigil worker` process, the default
 * knobs. The first Ctrl+C pauses the run and says so first; the second stops it at once (the
 * agent's call killed) and the command exits with the run's outcome code. (The third, which leaves
 * at once, is shown in tests/workflow/ctrl-c-steps.test.ts: signals sent together to a process
 * merge into one, so a third cannot be counted on while the second is being answered.)
 *
 * The agent blocks while it runs (it waits for a file the test never writes, up to three minutes),
 * so that every Ctrl+C lands during its call. Knobs this file changes, and why: the roles other
 * than the builder (the PRD checklist, gates, review, council) are off, so that the one agent call
 * is the builder's; what is tested is the command's answer to Ctrl+C, not the run's judges.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusSnapshot } from '../../schemas/status.js';
import { assertBuilt, CLI, makeRepo, temporalAddress, uniqueId, writePrd } from '../support/harness.js';
import { CLI_CWD, cleanEnv, runVigil, show, startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';
import { patient } from '../support/patience.js';

let taskQueue: string;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;
let client: Client;
const started = new Set<string>();

const baseEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: 'default',
  VIGIL_TASK_QUEUE: taskQueue,
});
const BUILDER_ONLY = [
  '--set',
  'councilEnabled=false',
  '--set',
  'qualityGates=false',
  '--set',
  'codeReview=false',
  '--set',
  'prdChecklist=false',
];
const query = (id: string): Promise<StatusSnapshot> => client.workflow.getHandle(id).query<StatusSnapshot>('status');

/** An agent that says it works and then blocks (a file nobody writes), for three minutes at most. */
function blockingAgent(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-ctrlc-agent-'));
  const script = path.join(dir, 'agent.sh');
  writeFileSync(
    script,
    `#!/bin/sh\ncat > /dev/null\necho "working on it"\ni=0\nwhile [ ! -f '${dir}/go' ] && [ $i -lt 1800 ]; do sleep 0.1; i=$((i+1)); done\n`,
  );
  chmodSync(script, 0o755);
  return script;
}

/** A `vigil` process left running, its output gathered as it comes. */
function spawnVigil(args: string[]): { child: ResultPromise; stdout: () => string; stderr: () => string } {
  const child = execa(process.execPath, [CLI, ...args], {
    env: cleanEnv(baseEnv()),
    extendEnv: false,
    cwd: CLI_CWD,
    stdin: 'ignore',
    reject: false,
    timeout: 180_000,
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (err += b.toString()));
  return { child, stdout: () => out, stderr: () => err };
}

const running = (id: string): Promise<boolean> => query(id).then((s) => s.iteration === 1 && s.agentRunning);

beforeAll(async () => {
  assertBuilt();
  taskQueue = uniqueId('ctrl-c-e2e');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: 'default' });
  worker = await startWorkerProcess(baseEnv());
});

afterAll(async () => {
  if (connection)
    await Promise.all(
      [...started].map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('ctrl-c e2e cleanup')
          .catch(() => undefined),
      ),
    );
  await worker?.stop();
  await connection?.close();
});

describe('Ctrl+C where a run is followed', () => {
  it(
    'vigil watch: the first pauses the run, the second stops it, each said first; watch exits with the outcome code',
    async () => {
      const id = uniqueId('ctrlc-watch');
      started.add(id);
      const r = await runVigil(
        ['start', writePrd(), '--repo', makeRepo(), '--agent-command', blockingAgent(), ...BUILDER_ONLY, '--id', id],
        baseEnv(),
      );
      expect(r.code, show(r)).toBe(0);
      await waitUntil('iteration 1 to run', () => running(id), 60_000);
      const watch = spawnVigil(['watch', id]);
      await waitUntil('watch to print', () => watch.stdout().includes(`watching ${id}`), 30_000);

      watch.child.kill('SIGINT');
      await waitUntil('the pause line', () => watch.stderr().includes(`Ctrl+C: pausing ${id} at its next boundary`), 10_000);
      const pausing = await waitUntil(
        'the pause to be asked',
        async () => ((await query(id)).pause?.by.endsWith('(Ctrl+C)') ? query(id) : null),
        30_000,
      );
      expect(['pausing', 'paused']).toContain(pausing.status);

      watch.child.kill('SIGINT');
      const done = await watch.child;
      expect(watch.stderr()).toContain(`Ctrl+C again: stopping ${id} now (its agent call is killed)`);
      const outcome = await client.workflow.getHandle(id).result();
      expect(outcome.status).toBe('stopped');
      expect(done.exitCode, `${watch.stdout()}\n${watch.stderr()}`).toBe(outcome.exitCode);
      expect(watch.stdout()).toMatch(/stopped/);
    },
    patient(180_000),
  );

  it(
    'vigil start --wait: the same, and start exits with the outcome code',
    async () => {
      const id = uniqueId('ctrlc-start');
      started.add(id);
      const start = spawnVigil([
        'start',
        writePrd(),
        '--repo',
        makeRepo(),
        '--agent-command',
        blockingAgent(),
        ...BUILDER_ONLY,
        '--id',
        id,
        '--wait',
      ]);
      await waitUntil('iteration 1 to run', () => running(id), 60_000);
      start.child.kill('SIGINT');
      await waitUntil('the pause line', () => start.stderr().includes(`Ctrl+C: pausing ${id}`), 10_000);
      await waitUntil('the pause to be asked', async () => (await query(id)).pause?.by.endsWith('(Ctrl+C)'), 30_000);
      start.child.kill('SIGINT');
      const done = await start.child;
      expect(start.stderr()).toContain(`Ctrl+C again: stopping ${id} now`);
      const outcome = await client.workflow.getHandle(id).result();
      expect(outcome.status).toBe('stopped');
      expect(done.exitCode, start.stderr()).toBe(outcome.exitCode);
    },
    patient(180_000),
  );
});
