/**
 * A worker SIGKILLed during the comparison round of a run with attempts (docs/attempts.md): two
 * attempts approved, the council's members in the run's own repository still answering (each sleeps
 * after its pick) when the only worker, a `vigil worker` process, is killed; a new worker takes
 * over. The comparison round is one activity that runs again: it re-attaches to the members' calls
 * under the supervisor, so each member is asked once; no attempt runs again (each attempt's run is
 * one execution, its builder's calls as many as before the kill); one winner is delivered.
 *
 * Knobs as tests/support/attempts.ts says (maxIterations 5, time only).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Outcome } from '../../schemas/run.js';
import { attemptsQuery } from '../../workflows/attempts-messages.js';
import { attemptsInput, attemptScenarios, attemptsRepo, CLEAN, FOUND } from '../support/attempts.js';
import { agentCalls, assertBuilt, createTestEnv, git, sleep, uniqueId, WorkerProcesses, type TestEnv } from '../support/harness.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
const workers = new WorkerProcesses();
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  workers.killAll();
  await env?.close();
});

const councilCalls = (repo: string) => agentCalls(repo).filter((c) => c.role === 'council');

describe('durability of the comparison round', () => {
  it(
    'a worker killed in the middle of it: each member asked once, no attempt run twice, one winner delivered',
    async () => {
      const repo = attemptsRepo();
      // Every member picks attempt 2 and is still running when the worker dies.
      const scenario = attemptScenarios({ council: { default: { output: 'PICK: 2\nREASON: no findings\n', sleepMs: 6000 } } }, [
        FOUND,
        CLEAN,
      ]);
      const tq = uniqueId('attempts-crash');
      const readable = { VIGIL_SANDBOX_READABLE: process.env.VIGIL_SANDBOX_READABLE ?? '' };
      const { child } = await workers.spawn(tq, undefined, readable);
      const runId = uniqueId('attempts-crash-run');
      const handle = await env.client.workflow.start('vigilAttempts', {
        taskQueue: tq,
        workflowId: runId,
        args: [attemptsInput(repo, scenario, 2)],
      });
      const deadline = Date.now() + patient(300_000);
      while (councilCalls(repo).length < 3) {
        if (Date.now() > deadline) throw new Error('the comparison round never began');
        await sleep(100);
      }
      const before = await handle.query(attemptsQuery);
      expect(before.phase).toBe('comparing');
      await sleep(1000);
      child.kill('SIGKILL');
      await child;
      await workers.spawn(tq, undefined, readable);
      const outcome = (await handle.result()) as Outcome;
      const s = await handle.query(attemptsQuery);

      expect(outcome).toMatchObject({ status: 'council_approved', exitCode: 0 });
      expect(s.winner).toBe(2);
      expect(s.comparison).toMatchObject({ decidedBy: 'council' });
      expect(s.comparison?.picks.map((p) => p.attempt)).toEqual([2, 2, 2]);
      // Each member once: the round's retry re-attached to the calls still running.
      expect([0, 1, 2].map((m) => councilCalls(repo).filter((c) => c.member === m).length)).toEqual([1, 1, 1]);
      // The round is one activity scheduled once, which ran again on the new worker.
      const events = (await handle.fetchHistory()).events ?? [];
      const rounds = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'compareAttempts');
      expect(rounds).toHaveLength(1);
      const started = events.find(
        (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '') === String(rounds[0]?.eventId),
      );
      expect(started?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThan(1);
      // No attempt ran twice: each is one execution, started once by the run.
      const children = events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
      expect(children).toHaveLength(2);
      for (const n of [1, 2]) {
        const runs = [];
        for await (const w of env.client.workflow.list({ query: `WorkflowId = '${runId}-attempt-${n}'` })) runs.push(w);
        expect(runs).toHaveLength(1);
      }
      expect(s.attempts.map((a) => a.iterations)).toEqual([3, 4]);
      // One winner on the run's branch.
      expect(git(repo, 'show', `vigil/${runId}:src/feature.js`)).toContain('The feature (clean)');
      expect(git(repo, 'branch', '--list', `vigil/${runId}-attempt-*`)).toBe('');
    },
    patient(600_000),
  );
});
