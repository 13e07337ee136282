/**
 * A full disk under the agent's log, on the suite's real server: the iteration is recorded as a
 * failure that says "disk full", in status and watch, not as exit 0 with a truncated log; the run
 * backs off and goes on. The fault seam: the first iteration's log is a character device that
 * fails every write with ENOSPC (/dev/full's numbers), which needs root, as CI runs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iterationLine } from '../../cli/follow.js';
import {
  assertBuilt,
  createTestEnv,
  loopInput,
  makeRepo,
  makeWorker,
  startRun,
  status,
  uniqueId,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

describe('a full disk under the agent log', () => {
  it.runIf(process.getuid?.() === 0)(
    'fails the iteration visibly (exit 74, "disk full: …" in status and watch), then the run goes on',
    async () => {
      const repo = makeRepo();
      const scenario = writeScenario(repo, {
        version: 1,
        iterations: [
          { writes: { 'a.txt': 'a\n' }, output: 'wrote a\n' },
          { writes: { 'b.txt': 'b\n' }, claim: 'promise' },
        ],
      });
      const id = uniqueId('disk-full');
      const runDir = path.join(repo, '.vigil', 'runs', id);
      mkdirSync(runDir, { recursive: true, mode: 0o700 });
      execFileSync('mknod', [path.join(runDir, 'iteration-0001.log'), 'c', '1', '7']);
      const tq = uniqueId('tq');
      const worker = await makeWorker(env, tq);
      // Loop only: what is checked is how the failed call is recorded; the completion machinery would only add calls.
      await worker.runUntil(async () => {
        const handle = await startRun(env, tq, loopInput(repo, scenario), id);
        expect((await handle.result()).status).toBe('completion_promise_fulfilled');
        const [first, second] = (await status(handle)).recentIterations;
        expect(first).toMatchObject({
          iteration: 1,
          exitCode: 74,
          ioError: expect.stringMatching(/^disk full: cannot write .*iteration-0001\.log: .*ENOSPC/),
        });
        expect(iterationLine(first!)).toMatch(
          /iteration 1 .* exit 74 .* disk full: cannot write .*\(the disk or quota is full: free space, the run carries on\)$/,
        );
        expect(second).toMatchObject({ iteration: 2, exitCode: 0 });
        expect(second?.ioError).toBeUndefined();
      });
    },
  );
});
