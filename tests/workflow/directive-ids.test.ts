/**
 * A directive resent with its id is taken once: `vigil input` gives every directive an id, and
 * when its update goes unanswered (exit 4) a person resends it with `--signal --id ID`; if the
 * update reaches the run too, the run queues the directive once. Directives without an id (older
 * tools, raw signals) are queued each time, as before.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputSignal, inputUpdate } from '../../workflows/messages.js';
import {
  assertBuilt,
  createTestEnv,
  loopInput,
  makeRepo,
  makeWorker,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

const count = (text: string, needle: string): number => text.split(needle).length - 1;

describe('directive ids', () => {
  it('a directive resent with its id (update, then signal, then update) reaches the next prompt once; one without an id each time', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'a.txt': 'a\n' }, sleepMs: 4000 },
        { writes: { 'b.txt': 'b\n' }, claim: 'promise' },
      ],
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    // Loop only: what is checked is the message handling and the next prompt; the completion machinery would only add calls.
    const id = uniqueId('directive-ids');
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario), id);
      await waitForStatus(handle, (s) => s.iteration >= 1 && s.agentRunning);
      const first = await handle.executeUpdate(inputUpdate, {
        args: [{ directive: 'Keep the README short.', by: 'ana', id: 'd-0a1b2c3d4e5f' }],
      });
      expect(first).toMatchObject({ changed: true, message: 'directive queued for the next prompt (id d-0a1b2c3d4e5f)' });
      await handle.signal(inputSignal, { directive: 'Keep the README short.', by: 'ana', id: 'd-0a1b2c3d4e5f' });
      const again = await handle.executeUpdate(inputUpdate, {
        args: [{ directive: 'Keep the README short.', by: 'ana', id: 'd-0a1b2c3d4e5f' }],
      });
      expect(again).toMatchObject({ changed: false, message: 'directive d-0a1b2c3d4e5f was already received; it is not queued again' });
      // Without an id, the same text twice is two directives.
      await handle.signal(inputSignal, { directive: 'Name the tests after what they check.', by: 'raw-tool' });
      await handle.signal(inputSignal, { directive: 'Name the tests after what they check.', by: 'raw-tool' });
      const s = await status(handle);
      expect(s.pendingDirectives).toBe(3);
      expect(s.invalidMessageCount).toBe(0);
      expect((await handle.result()).status).toBe('completion_promise_fulfilled');
    });
    const prompt = readFileSync(path.join(repo, '.vigil/runs', id, 'iteration-0002.prompt.md'), 'utf8');
    expect(count(prompt, 'Keep the README short.')).toBe(1);
    expect(count(prompt, 'Name the tests after what they check.')).toBe(2);
  });
});
