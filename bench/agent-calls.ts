/**
 * What orchestration costs the user in agent calls (each a model call that costs money and
 * minutes): fixed scenarios run with the product's default knobs and the `command` provider (the
 * scripted agent, no model), and every call counted by role from the agent's own record
 * (`.vigil/scripted-agent/calls.jsonl`). Orchestration is every call but the builder's.
 *
 * Scenarios (the builder changes the tree every iteration unless said otherwise; tests pass):
 *   - short run to done: a claim at iteration 4, approved;
 *   - five refused claims, then done: claims at 3 to 7 refused by the council, the claim at 8 approved;
 *   - claims on an unchanged tree: the agent claims every iteration and changes nothing (force-stopped at 10);
 *   - long green run, no claim: 10 iterations with passing tests;
 *   - no tests: 10 iterations, no test runner, no claim;
 *   - a claim refused by the council: the claim at 4 refused, the one at 5 approved (against the
 *     short run, what one refused claim costs);
 * and, with the claude preset against the fake claude CLI (examples/agents/fake-cli), the short
 * run, the refused claim and the five refused claims, where each council round and code review is
 * one call for all its members (claude --agents): calls counted by role from the fake CLI's log.
 *
 * A change that adds calls shows here. Usage: node dist/bench/agent-calls.js [--json]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { defaultKnobs } from '../schemas/knobs.js';
import type { Outcome, RunInput } from '../schemas/run.js';
import type { ScenarioSchema } from '../schemas/scenario.js';
import type { z } from 'zod';
import { freePort, startDevServer } from '../workers/dev-server.js';
import { packageRoot } from '../lib/paths.js';
import { resolveTemporalCli } from '../workers/temporal-cli.js';
import { createVigilWorker } from '../workers/worker.js';
import { vigilRun } from '../workflows/run-workflow.js';
import { benchScratch } from './scratch.js';

const JSON_OUT = process.argv.includes('--json');
const SCRIPTED_AGENT = path.join(packageRoot(), 'examples/agents/scripted-agent/scripted-agent');
const SCRATCH = benchScratch('agent-calls');
type Scenario = z.input<typeof ScenarioSchema>;

const vote = (v: 'APPROVE' | 'REJECT') => ({ output: `VOTE: ${v}\nREASON: member says ${v.toLowerCase()}\n` });
const ROLES = {
  checklist: {
    default: { output: '[{"id": "REQ-1", "title": "notes.txt has the lines", "priority": "critical", "verify": "read notes.txt"}]\n' },
  },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - notes.txt has them\n' } },
  reviewer: { default: { output: 'VERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
};
const step = (n: number, claim = false) => ({ appends: { 'notes.txt': `line ${n}\n` }, ...(claim ? { claim: 'file' as const } : {}) });

interface Case {
  name: string;
  tests: boolean;
  maxIterations: number;
  scenario: Scenario;
  /** The claude preset against the fake claude CLI (examples/agents/fake-cli) with this scenario, instead of the scripted agent. */
  claude?: FakeScenario;
}

/** The fake claude CLI's scenario: the builder's calls in turn, the reviewing roles' answers by role (a list: in turn). */
interface FakeScenario {
  calls: Record<string, unknown>[];
  roles: Record<string, Record<string, unknown> | Record<string, unknown>[]>;
}

const FAKE_CLAUDE = path.join(packageRoot(), 'examples/agents/fake-cli/fake-cli.mjs');
/** The fake claude's wrappers, scenarios and call logs. */
const FAKE_DIR = SCRATCH.mkdir('claude-');
const notes = (n: number) => ({ 'notes.txt': Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('') });
/** The builder's call n (1-based) of the fake claude: notes.txt with n lines, a claim where asked. */
const fakeStep = (n: number, claim = false) => ({ writes: notes(n), ...(claim ? { text: 'COMPLETION PROMISE FULFILLED' } : {}) });
const fakeVote = (v: 'APPROVE' | 'REJECT') => ({ text: `VOTE: ${v}\nREASON: member says ${v.toLowerCase()}\n` });
const FAKE_ROLES = {
  checklist: { text: ROLES.checklist.default.output },
  'checklist-verifier': { text: ROLES['checklist-verifier'].default.output },
  reviewer: { text: ROLES.reviewer.default.output },
  'devils-advocate': { text: ROLES['devils-advocate'].default.output },
};

const CASES: Case[] = [
  {
    name: 'short run to done (claim at 4, approved)',
    tests: true,
    maxIterations: 10,
    scenario: {
      version: 1,
      iterations: [step(1), step(2), step(3), step(4, true)],
      default: step(9),
      roles: { ...ROLES, council: { default: vote('APPROVE') } },
    },
  },
  {
    name: 'five refused claims, then done',
    tests: true,
    maxIterations: 12,
    scenario: {
      version: 1,
      iterations: Array.from({ length: 8 }, (_, i) => step(i + 1, i >= 2)),
      default: step(99),
      // Rounds before the claims (early checks) and the five refused claims reject; then approve.
      roles: { ...ROLES, council: { rounds: Array.from({ length: 5 }, () => vote('REJECT')), default: vote('APPROVE') } },
    },
  },
  {
    name: 'a claim refused by the council, then done (claim at 4 refused, at 5 approved)',
    tests: true,
    maxIterations: 10,
    scenario: {
      version: 1,
      iterations: [step(1), step(2), step(3), step(4, true), step(5, true)],
      default: step(9),
      // The early check at 3 and the claim at 4 are refused, the claim at 5 approved.
      roles: { ...ROLES, council: { rounds: [vote('REJECT'), vote('REJECT')], default: vote('APPROVE') } },
    },
  },
  {
    name: 'claims on an unchanged tree',
    tests: true,
    maxIterations: 25,
    scenario: {
      version: 1,
      iterations: [],
      default: { output: 'done\n', claim: 'file' },
      roles: { ...ROLES, council: { default: vote('REJECT') } },
    },
  },
  {
    name: 'long green run, no claim (10 iterations)',
    tests: true,
    maxIterations: 10,
    scenario: { version: 1, iterations: [], default: step(0), roles: { ...ROLES, council: { default: vote('REJECT') } } },
  },
  {
    name: 'no tests, no claim (10 iterations)',
    tests: false,
    maxIterations: 10,
    scenario: { version: 1, iterations: [], default: step(0), roles: { ...ROLES, council: { default: vote('REJECT') } } },
  },
];

// The same runs with the claude preset, where a council round's members and a review's reviewers go out as one call each (claude --agents).
CASES.push(
  {
    name: 'claude: short run to done (claim at 4, approved)',
    tests: true,
    maxIterations: 10,
    scenario: { version: 1, iterations: [] },
    claude: { calls: [fakeStep(1), fakeStep(2), fakeStep(3), fakeStep(4, true)], roles: { ...FAKE_ROLES, council: fakeVote('APPROVE') } },
  },
  {
    name: 'claude: a claim refused by the council, then done',
    tests: true,
    maxIterations: 10,
    scenario: { version: 1, iterations: [] },
    claude: {
      calls: [fakeStep(1), fakeStep(2), fakeStep(3), fakeStep(4, true), fakeStep(5, true)],
      roles: { ...FAKE_ROLES, council: [fakeVote('REJECT'), fakeVote('REJECT'), fakeVote('APPROVE')] },
    },
  },
  {
    name: 'claude: five refused claims, then done',
    tests: true,
    maxIterations: 12,
    scenario: { version: 1, iterations: [] },
    claude: {
      calls: Array.from({ length: 8 }, (_, i) => fakeStep(i + 1, i >= 2)),
      roles: { ...FAKE_ROLES, council: [...Array.from({ length: 5 }, () => fakeVote('REJECT')), fakeVote('APPROVE')] },
    },
  },
);

/** A `claude` for one case: the fake CLI with the case's scenario and call log (the worker's environment is shared by every case). */
function fakeClaude(c: Case, scenario: FakeScenario): { binary: string; log: string } {
  // The wrapper in a folder of its own: the sandbox shows a program's folder read-only, and the log must stay writable.
  const dir = mkdtempSync(path.join(FAKE_DIR, 'case-'));
  writeFileSync(path.join(dir, 'scenario.json'), JSON.stringify(scenario));
  const binary = path.join(mkdtempSync(path.join(FAKE_DIR, 'bin-')), 'claude');
  const log = path.join(dir, 'calls.jsonl');
  writeFileSync(
    binary,
    `#!/bin/sh\n# ${c.name}\nFAKE_CLI_SCENARIO='${dir}/scenario.json' FAKE_CLI_LOG='${log}' exec node '${FAKE_CLAUDE}' claude "$@"\n`,
    { mode: 0o755 },
  );
  return { binary, log };
}

/** Calls by role from the fake CLI's log, and how many of them were batched rounds. */
function countFakeCalls(log: string): { byRole: Record<string, number>; batched: number } {
  const byRole: Record<string, number> = {};
  let batched = 0;
  if (!existsSync(log)) return { byRole, batched };
  for (const line of readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
    const call = JSON.parse(line) as { env: Record<string, string>; agents?: string[] };
    const role = call.env.VIGIL_ROLE ?? '?';
    byRole[role] = (byRole[role] ?? 0) + 1;
    if (call.agents) batched++;
  }
  return { byRole, batched };
}

const git = (cwd: string, ...args: string[]): void => {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' },
  });
};

function repoFor(c: Case): string {
  const dir = SCRATCH.mkdir('repo-');
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'README.md'), '# bench\n\nNotes, one line per step.\n');
  if (c.tests) {
    writeFileSync(path.join(dir, 'package.json'), '{"name":"bench","type":"module","private":true,"scripts":{"test":"node --test"}}\n');
    mkdirSync(path.join(dir, 'test'));
    writeFileSync(
      path.join(dir, 'test/ok.test.js'),
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('ok', () => assert.ok(true));\n",
    );
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench');
  return dir;
}

interface Counted {
  name: string;
  outcome: string;
  iterations: number;
  byRole: Record<string, number>;
  orchestration: number;
  /** Calls that asked a whole council round or code review at once (claude --agents). */
  batched: number;
}

function countCalls(repo: string): Record<string, number> {
  const file = path.join(repo, '.vigil/scripted-agent/calls.jsonl');
  const byRole: Record<string, number> = {};
  if (!existsSync(file)) return byRole;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const role = (JSON.parse(line) as { role: string }).role;
    byRole[role] = (byRole[role] ?? 0) + 1;
  }
  return byRole;
}

async function main(): Promise<void> {
  // The fake claude's wrappers and logs sit in the scratch folder, its program in the package: shown to the agent's sandbox.
  process.env.VIGIL_SANDBOX_READABLE = [process.env.VIGIL_SANDBOX_READABLE, path.dirname(FAKE_CLAUDE)].filter(Boolean).join(':');
  // (Its own folder: a writable folder above the repositories would be refused.)
  process.env.VIGIL_SANDBOX_WRITABLE = [process.env.VIGIL_SANDBOX_WRITABLE, FAKE_DIR].filter(Boolean).join(':');
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
  });
  const cli = await resolveTemporalCli();
  const server = await startDevServer({
    cliPath: cli.path,
    dbFile: path.join(SCRATCH.mkdir('server-'), 'temporal.db'),
    port: await freePort(),
    headless: true,
  });
  SCRATCH.server = server;
  const native = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  const results: Counted[] = [];
  try {
    const worker = await createVigilWorker({ connection: native, namespace: 'default', taskQueue: 'agent-calls', codec: null });
    await worker.runUntil(async () => {
      const client = new Client({ connection });
      await Promise.all(
        CASES.map(async (c, i) => {
          const repo = repoFor(c);
          const scenarioFile = path.join(SCRATCH.mkdir('scenario-'), 'scenario.json');
          writeFileSync(scenarioFile, JSON.stringify(c.scenario));
          const prdPath = path.join(SCRATCH.mkdir('prd-'), 'PRD.md');
          writeFileSync(prdPath, '# Notes\n\nAppend a line to notes.txt for every step.\n');
          const fake = c.claude ? fakeClaude(c, c.claude) : null;
          const agent = fake
            ? { provider: 'claude' as const, agentCommand: [fake.binary] }
            : { agentCommand: [SCRIPTED_AGENT, '--scenario', scenarioFile] };
          const input: RunInput = {
            prdPath,
            prdTitle: 'Notes',
            repoPath: repo,
            knobs: { ...defaultKnobs(), ...agent, maxIterations: c.maxIterations, ...(c.tests ? { testCommand: 'node --test' } : {}) },
          };
          const handle = await client.workflow.start(vigilRun, { taskQueue: 'agent-calls', workflowId: `agent-calls-${i}`, args: [input] });
          const outcome: Outcome = await handle.result();
          const { byRole, batched } = fake ? countFakeCalls(fake.log) : { byRole: countCalls(repo), batched: 0 };
          results[i] = {
            name: c.name,
            outcome: `${outcome.status} at ${outcome.iteration}`,
            iterations: outcome.iteration,
            byRole,
            batched,
            orchestration: Object.entries(byRole)
              .filter(([r]) => r !== 'iteration')
              .reduce((n, [, v]) => n + v, 0),
          };
        }),
      );
    });
  } finally {
    await connection.close();
    await native.close();
    await server.stop();
    SCRATCH.server = null;
  }
  if (JSON_OUT) {
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    return;
  }
  const roles = ['iteration', 'checklist', 'reviewer', 'devils-advocate', 'checklist-verifier', 'council'];
  console.log('agent calls by role, default knobs, command provider (claude: the claude preset, its rounds batched)');
  console.log(
    [
      'scenario'.padEnd(72),
      'outcome'.padEnd(28),
      ...roles.map((r) => r.padStart(9)),
      'orchestration'.padStart(14),
      'batched'.padStart(8),
    ].join(' '),
  );
  for (const r of results) {
    console.log(
      [
        r.name.padEnd(72),
        r.outcome.padEnd(28),
        ...roles.map((x) => String(r.byRole[x] ?? 0).padStart(9)),
        String(r.orchestration).padStart(14),
        String(r.batched).padStart(8),
      ].join(' '),
    );
  }
}

try {
  await main();
} finally {
  SCRATCH.remove();
}
