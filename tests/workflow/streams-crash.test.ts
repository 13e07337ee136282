/**
 * Parallel streams under a worker SIGKILL during the fan-out: the streams are child workflows with
 * ids derived from the run's, so the next worker starts none of them again; each stream's agent
 * runs its iterations once, and the run merges, judges and delivers as if nothing happened. And
 * under a SIGKILL during a merge: the next worker merges that task once.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import type { Outcome } from '../../schemas/run.js';
import type { TaskList } from '../../schemas/tasks.js';
import {
  assertBuilt,
  createTestEnv,
  git,
  makeRepo,
  ROOT,
  runInput,
  SCRIPTED_AGENT,
  sleep,
  startRun,
  status,
  uniqueId,
  WorkerProcesses,
  type ScenarioInput,
  type TestEnv,
} from '../support/harness.js';

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

const LOGS = mkdtempSync(path.join(os.tmpdir(), 'vigil-streams-crash-log-'));
// The scenarios live beside the wrapper: the sandbox shows the agent program's folder (read-only).
const WRAPPER = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-streams-crash-agent-')), 'stream-agent.cjs');
writeFileSync(
  WRAPPER,
  `#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const [agent, scenarios] = process.argv.slice(2);
const m = /[\\\\/]worktrees[\\\\/][^\\\\/]+[\\\\/]([^\\\\/]+)$/.exec(process.cwd());
// The log is named after the run's repository (a stream's worktree lies in it), in a folder the worker shows the sandbox writable.
const repo = process.cwd().replace(/[\\\\/]\\.vigil[\\\\/]worktrees[\\\\/].*$/, '');
const logFile = path.join(${JSON.stringify(LOGS)}, path.basename(repo) + '.jsonl');
const who = m ? m[1] : 'parent';
const start = Date.now();
const role = process.env.VIGIL_ROLE || 'iteration';
const iteration = process.env.VIGIL_ITERATION || null;
fs.appendFileSync(logFile, JSON.stringify({ who, role, iteration, at: 'start', t: start }) + '\\n');
const r = spawnSync(agent, ['--scenario', path.join(scenarios, who + '.json')], { stdio: 'inherit' });
fs.appendFileSync(logFile, JSON.stringify({ who, role, iteration, at: 'end', t: Date.now() }) + '\\n');
process.exit(r.status === null ? 1 : r.status);
`,
  { mode: 0o755 },
);

const ROLES = {
  checklist: { default: { output: '[{"id": "REQ-1", "title": "the work exists", "priority": "critical", "verify": "read the files"}]\n' } },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - it is there\n' } },
  reviewer: { default: { output: 'VERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
  council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } },
};
const builder = (files: Record<string, string>, ms = 0): ScenarioInput => ({
  version: 1,
  iterations: [{ writes: files, sleepMs: ms }, { appends: { 'notes.md': '' } }, { claim: 'file' }],
  default: { claim: 'file' },
  roles: ROLES,
});
const task = (id: string, dependsOn: string[] = []): TaskList[number] => ({
  id,
  title: `task ${id}`,
  items: [{ id: 'REQ-1', title: `${id}.txt exists`, priority: 'high', verify: '' }],
  dependsOn,
});

interface Mark {
  who: string;
  role: string;
  iteration: string | null;
  at: 'start' | 'end';
}

/**
 * What a crash must leave as if nothing happened: the run approved; each task done after one
 * stream and merged; each stream started once (one StartChildWorkflowExecutionInitiated per task
 * in the run's history); each stream's iterations run once each (the killed worker's agents were
 * re-attached to, not run again); each task's file (`<task>.txt`, its name in capitals) delivered.
 * The run's history, for more.
 */
async function expectUnharmed(
  handle: WorkflowHandle,
  id: string,
  repo: string,
  tasks: string[],
  marks: () => Mark[],
): Promise<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>> {
  const outcome = (await handle.result()) as Outcome;
  expect(outcome.status).toBe('council_approved');
  const s = await status(handle);
  expect(s.streams?.map((t) => [t.task, t.state, t.attempts, t.merged])).toEqual(tasks.map((t) => [t, 'done', 1, true]));
  const history = await handle.fetchHistory();
  const starts = (history.events ?? [])
    .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId)
    .filter((w): w is string => typeof w === 'string');
  expect(starts.sort()).toEqual(tasks.map((t) => `${id}--${t}`));
  for (const w of tasks) {
    const its = marks()
      .filter((m) => m.who === w && m.role === 'iteration' && m.at === 'start')
      .map((m) => m.iteration);
    expect(its).toEqual([...new Set(its)]);
  }
  expect(tasks.map((t) => git(repo, 'show', `vigil/${id}:${t}.txt`))).toEqual(tasks.map((t) => t.toUpperCase()));
  return history;
}

it(
  'a worker SIGKILLed while two streams run: no stream starts twice, ' +
    'each stream’s agent runs each iteration once, the run merges and delivers',
  async () => {
    const repo = makeRepo({ files: { 'README.md': '# s\n' } });
    const dir = mkdtempSync(path.join(path.dirname(WRAPPER), 'scenarios-'));
    const scenarios: Record<string, ScenarioInput> = {
      a: builder({ 'a.txt': 'A\n' }, 4000),
      b: builder({ 'b.txt': 'B\n' }, 4000),
      c: builder({ 'c.txt': 'C\n' }),
      parent: builder({}),
    };
    for (const [who, s] of Object.entries(scenarios)) writeFileSync(path.join(dir, `${who}.json`), JSON.stringify(s));
    const log = path.join(LOGS, `${path.basename(repo)}.jsonl`);
    const marks = (): Mark[] =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Mark)
        : [];
    const tq = uniqueId('streams-crash');
    // The worker shows the agent's sandbox the scripted agent's build (the wrapper runs it from an argument) and the call log.
    const workerEnv = { VIGIL_SANDBOX_WRITABLE: LOGS, VIGIL_SANDBOX_READABLE: ROOT };
    const { child: first } = await workers.spawn(tq, undefined, workerEnv);
    const id = uniqueId('streams-crash');
    // The speed knob heartbeatTimeoutSeconds is shortened so the lost worker is noticed in seconds.
    const input = {
      ...runInput(repo, path.join(dir, 'parent.json'), {
        parallelStreams: 2,
        maxIterations: 6,
        heartbeatTimeoutSeconds: 4,
        agentCommand: [WRAPPER, SCRIPTED_AGENT, dir],
      }),
      tasks: [task('a'), task('b'), task('c', ['a'])],
    };
    const handle = await startRun(env, tq, input, id);

    const deadline = Date.now() + 120_000;
    while (!['a', 'b'].every((w) => marks().some((m) => m.who === w && m.iteration === '1' && m.at === 'start'))) {
      if (Date.now() > deadline) throw new Error('the two streams did not start');
      await sleep(100);
    }
    first.kill('SIGKILL');
    await first;
    await workers.spawn(tq, undefined, workerEnv);
    await expectUnharmed(handle, id, repo, ['a', 'b', 'c'], marks);
  },
);

it('a worker SIGKILLed during a merge: the next one merges that task once, and the run delivers every task', async () => {
  // A git that takes its time over `merge-tree` (and says so), first on the worker's PATH: the
  // merge of the first done stream is where the worker dies.
  const shim = mkdtempSync(path.join(os.tmpdir(), 'vigil-slow-merge-'));
  const merging = path.join(shim, 'merging');
  const realGit = execFileSync('bash', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(
    path.join(shim, 'git'),
    `#!/bin/bash\nfor a in "$@"; do if [ "$a" = merge-tree ]; then echo "$$" >> ${JSON.stringify(merging)}; sleep 6; fi; ` +
      `done\nexec ${JSON.stringify(realGit)} "$@"\n`,
    { mode: 0o755 },
  );
  const repo = makeRepo({ files: { 'README.md': '# s\n' } });
  const dir = mkdtempSync(path.join(path.dirname(WRAPPER), 'scenarios-'));
  const scenarios: Record<string, ScenarioInput> = {
    a: builder({ 'a.txt': 'A\n' }),
    b: builder({ 'b.txt': 'B\n' }, 3000),
    parent: builder({}),
  };
  for (const [who, s] of Object.entries(scenarios)) writeFileSync(path.join(dir, `${who}.json`), JSON.stringify(s));
  const log = path.join(LOGS, `${path.basename(repo)}.jsonl`);
  const marks = (): Mark[] =>
    existsSync(log)
      ? readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Mark)
      : [];
  const tq = uniqueId('streams-merge-crash');
  const workerEnv = { VIGIL_SANDBOX_WRITABLE: LOGS, VIGIL_SANDBOX_READABLE: ROOT, PATH: `${shim}:${process.env.PATH ?? ''}` };
  const { child: first } = await workers.spawn(tq, undefined, workerEnv);
  const id = uniqueId('streams-merge-crash');
  const input = {
    ...runInput(repo, path.join(dir, 'parent.json'), {
      parallelStreams: 2,
      maxIterations: 6,
      heartbeatTimeoutSeconds: 4,
      agentCommand: [WRAPPER, SCRIPTED_AGENT, dir],
    }),
    tasks: [task('a'), task('b')],
  };
  const handle = await startRun(env, tq, input, id);

  const deadline = Date.now() + 180_000;
  while (!existsSync(merging)) {
    if (Date.now() > deadline) throw new Error('no merge started');
    await sleep(50);
  }
  first.kill('SIGKILL');
  await first;
  // Nothing was merged yet: the integration line is still the base.
  const line = `refs/vigil/streams/${id}`;
  expect(git(repo, 'rev-list', '--merges', '--count', line)).toBe('0');
  await workers.spawn(tq, undefined, workerEnv);
  const history = await expectUnharmed(handle, id, repo, ['a', 'b'], marks);
  // The killed merge was tried again (its activity started more than once), and each task is merged once.
  const merges = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'mergeStream');
  expect(merges).toHaveLength(2);
  const attempts = (history.events ?? []).map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 0);
  expect(Math.max(...attempts)).toBeGreaterThan(1);
  expect(git(repo, 'rev-list', '--merges', '--count', line)).toBe('2');
  expect(readFileSync(merging, 'utf8').trim().split('\n').length).toBeGreaterThanOrEqual(3);
});
