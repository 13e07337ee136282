/**
 * The orchestration cap (`orchestrationBudgetShare`) with the fake claude CLI of
 * examples/agents/fake-cli, which reports what each call cost as the real one does: when what
 * reviewers, checklist roles and council members spent would pass their share of the budget, the
 * run pauses before its next completion check (the claim is held, no reviewer is asked), and a
 * raised budget lets the check go on. Default knobs otherwise.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { budgetUpdate, resumeUpdate, stopUpdate } from '../../workflows/messages.js';
import { fileWorker, makeRepo, ROOT, runInput, startRun, uniqueId, waitForStatus, writeScenario } from '../support/harness.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-fake-cli-'));
// Set before the worker starts: the fake CLIs it runs read them.
const shared = fileWorker('orchestration-cap', () => {
  // Call 0 is the checklist extraction ($0.50, an answer without a checklist); then the builder.
  writeFileSync(
    path.join(dir, 'scenario.json'),
    JSON.stringify({
      calls: [
        { text: 'no checklist here', costUsd: 0.5 },
        { writes: { 'a.txt': 'a\n' }, costUsd: 0.1 },
        { writes: { 'b.txt': 'b\n' }, costUsd: 0.1 },
        { writes: { 'c.txt': 'c\n' }, costUsd: 0.1, text: 'COMPLETION PROMISE FULFILLED' },
        { text: 'VERDICT: PASS\nVOTE: REJECT\nREASON: not yet\n', costUsd: 0.1 },
      ],
    }),
  );
  process.env.FAKE_CLI_SCENARIO = path.join(dir, 'scenario.json');
  process.env.FAKE_CLI_LOG = path.join(dir, 'calls.jsonl');
  process.env.VIGIL_SANDBOX_WRITABLE = dir;
});

const calls = (): number => readFileSync(path.join(dir, 'calls.jsonl'), 'utf8').split('\n').filter(Boolean).length;

it('pauses before the completion check that would pass the cap, and goes on once the budget is raised', async () => {
  const repo = makeRepo();
  const input = runInput(repo, writeScenario('', { version: 1, iterations: [] }), {
    provider: 'claude',
    agentCommand: [path.join(ROOT, 'examples/agents/fake-cli', 'claude')],
    providerBreaker: false,
    budgetUsd: 2,
    orchestrationBudgetShare: 0.2,
    maxIterations: 4,
    notifyDesktop: false,
  });
  const handle = await startRun(shared.env, shared.taskQueue, input, uniqueId('cap'));
  const s = await waitForStatus(handle, (x) => x.paused, 90_000);
  expect(s.iteration).toBe(3);
  expect(s.pause?.reason).toMatch(
    /^orchestration cap: reviewers, checklist roles and council members spent \$0\.50 of the \$0\.40 they may \(20 % of the \$2\.00 budget\)/,
  );
  expect(s.spend.orchestration).toEqual({ calls: 1, usd: 0.5 });
  // The checklist extraction and three builder calls: no reviewer, no council member.
  expect(calls()).toBe(4);
  // Raised to $10 the cap is $2: the held claim is checked after the resume.
  await handle.executeUpdate(budgetUpdate, { args: [{ usd: 10, by: 'cap-test' }] });
  await handle.executeUpdate(resumeUpdate, { args: [{ by: 'cap-test' }] });
  await waitForStatus(handle, (x) => (x.checks?.total ?? 0) >= 1, 90_000);
  expect(calls()).toBeGreaterThan(4);
  await handle.executeUpdate(stopUpdate, { args: [{ by: 'cap-test' }] });
  await handle.result();
});
