/**
 * A PRD checklist extraction the provider spoiled (here a 429 from the command agent, as the CLIs
 * print it) is not the end of the run's checklist: it is asked again once the wait is over, and
 * when the provider keeps failing, a supervised run pauses and says why instead of going on
 * silently without its checklist. Default knobs, with the council and the code review off in the
 * first case only because they would add calls without touching what it checks.
 */
import { describe, expect, it } from 'vitest';
import { stopUpdate } from '../../workflows/messages.js';
import {
  agentCalls,
  makeRepo,
  fileWorker,
  runInput,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
} from '../support/harness.js';

const shared = fileWorker('checklist-retry');

const LIMITED = { stderr: 'API Error: rate limit exceeded (HTTP 429). retry-after: 2\n', exitCode: 1 };
const CHECKLIST = { output: '[{"id": "REQ-1", "title": "a.txt exists", "priority": "critical", "verify": "read a.txt"}]\n' };
const write = (n: number, claim = false) => ({ writes: { 'a.txt': `${n}\n` }, sleepMs: 700, ...(claim ? { claim: 'file' as const } : {}) });

describe.concurrent('a checklist extraction the provider spoiled', () => {
  it('is asked again after the wait, and the run gets its checklist and verifies it', async () => {
    const repo = makeRepo({ files: { 'README.md': '# sample\n' } });
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [write(1), write(2), write(3), write(4), write(5, true)],
      roles: {
        checklist: { rounds: [LIMITED], default: CHECKLIST },
        'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - a.txt exists\n' } },
      },
    });
    const handle = await startRun(
      shared.env,
      shared.taskQueue,
      runInput(repo, scenario, { maxIterations: 5, councilEnabled: false, codeReview: false }),
      uniqueId('retry'),
    );
    const outcome = await handle.result();
    expect(outcome.status).toBe('completion_promise_fulfilled');
    const snap = await status(handle);
    expect(snap.quality?.checklist?.map((i) => i.id)).toEqual(['REQ-1']);
    expect(snap.quality?.checklistProblem).toBeNull();
    const roles = agentCalls(repo).map((c) => c.role);
    expect(roles.filter((r) => r === 'checklist')).toHaveLength(2);
    // The claim was checked against the checklist it got late.
    expect(roles).toContain('checklist-verifier');
  });

  it('pauses a supervised run that could not get one after three tries, and says why', async () => {
    const repo = makeRepo({ files: { 'README.md': '# sample\n' } });
    const scenario = writeScenario(repo, { version: 1, iterations: [], default: write(0), roles: { checklist: { default: LIMITED } } });
    const handle = await startRun(shared.env, shared.taskQueue, runInput(repo, scenario, { maxIterations: 30 }), uniqueId('give-up'));
    const snap = await waitForStatus(handle, (s) => s.paused, 90_000);
    expect(snap.pause?.reason).toMatch(
      /^No PRD checklist for this run: its extraction failed 3 times for a provider reason \(rate limited\).*Resume to go on without a checklist/,
    );
    expect(snap.quality?.checklistProblem).toMatch(/gave up after 3 attempts/);
    expect(agentCalls(repo).filter((c) => c.role === 'checklist')).toHaveLength(3);
    await handle.executeUpdate(stopUpdate, { args: [{ reason: 'test done', by: 'checklist-retry-test' }] });
    expect((await handle.result()).status).toBe('stopped');
  });
});
