/**
 * The main job, as a newcomer runs it: `vigil demo` starts its own dev server (persistent
 * database under VIGIL_HOME) and worker, and drives the scripted agent over a sample repository
 * to completion. Interrupted half-way and started again, it carries on with the same run.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { beforeAll, expect, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { freePort } from '../../workers/dev-server.js';
import { assertBuilt, CLI } from '../support/harness.js';

beforeAll(() => assertBuilt());

async function demoEnv(): Promise<Record<string, string>> {
  const port = await freePort();
  return {
    VIGIL_HOME: mkdtempSync(path.join(os.tmpdir(), 'vigil-home-')),
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    VIGIL_TASK_QUEUE: 'vigil-demo-test',
  };
}

function demo(env: Record<string, string>): ResultPromise<{ all: true; reject: false }> {
  return execa('node', [CLI, 'demo', '--headless'], { env, all: true, reject: false, timeout: 240_000 });
}

function repoOf(output: string): string {
  const m = /repository : (\S+)/.exec(output);
  if (!m) throw new Error(`no repository line in:\n${output}`);
  return m[1] as string;
}

it('runs the demo to completion and leaves the scenario files in the repository', async () => {
  const env = await demoEnv();
  const r = await demo(env);
  expect(r.exitCode, r.all).toBe(0);
  expect(r.all).toMatch(/Temporal dev server .* is up/);
  expect(r.all).toMatch(/iteration 2 .*claimed completion/);
  expect(r.all).toMatch(/PRD checklist: 5 item\(s\), 1 held out from the agent/);
  expect(r.all).toMatch(
    new RegExp(
      [
        /quality gates on iteration 2: ✓ static analysis · ✓ secret scan · – build · ✗ tests /.source,
        /.*— tests: (?:full suite \([^)]*\): )?node-test: 2 failed, 1 passed/.source,
      ].join(''),
    ),
  );
  expect(r.all).toMatch(/completion at iteration 2 refused before the council was asked \(tests\)/);
  expect(r.all).toMatch(/iteration 3 .*exit 1/);
  expect(r.all).toMatch(
    new RegExp(
      [
        /code review 1 \(iteration 4\): PASS · requirements-verifier PASS, architecture-strategist PASS, maintain/.source,
        /er-mergeability PASS.* · devil's advocate PASS · mergeability 95/.source,
      ].join(''),
    ),
  );
  expect(r.all).toMatch(/council round 1 \(iteration 4, tests green\): REJECTED · 1 of 3 approve, 2 needed/);
  expect(r.all).toMatch(/council round 2 \(iteration 5, claim\): APPROVED · 3 of 3 approve, 2 needed · devil's advocate confirmed/);
  expect(r.all).toMatch(/finished: council_approved \(exit 0\)/);
  expect(r.all).toMatch(/Run vigil-demo completed after 5 iteration\(s\)/);
  const repo = repoOf(r.all);
  expect(readFileSync(path.join(repo, 'src/slugify.js'), 'utf8')).toContain("normalize('NFKD')");
  expect(existsSync(path.join(repo, 'test/slugify.test.js'))).toBe(true);
  expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toContain('## slugify');
  expect(existsSync(path.join(env.VIGIL_HOME as string, 'temporal.db'))).toBe(true);
  // Its agents ran in the sandbox where this machine can make one (the bootstrap installs bubblewrap), and it says which.
  expect(r.all).toMatch(
    sandboxPlatform().problem === null ? /Agents: sandbox=auto: bubblewrap [\d.]+; repository / : /Agents: sandbox=auto: NOT isolated — /,
  );

  // The run's events are in the embedded event store the demo started (and stopped again):
  // `vigil report` finds it under VIGIL_HOME without any setting.
  expect(r.all).toMatch(/event store {2}: 127\.0\.0\.1:\d+\/vigil_events \(embedded Postgres, started in [\d.]+ s/);
  expect(r.all).toContain('`vigil report vigil-demo` shows its timeline');
  const report = await execa('node', [CLI, 'report', 'vigil-demo'], { env, all: true, reject: false, timeout: 60_000 });
  expect(report.exitCode, report.all).toBe(0);
  expect(report.all).toMatch(/outcome: council_approved \(exit 0\) at iteration 5/);
  expect(report.all).toMatch(/iterations: 5 \(1 failed\) · council rounds: 2 \(1 approved\)/);
});

it('carries on with the same run when interrupted and started again', async () => {
  const env = await demoEnv();
  const first = demo(env);
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    first.all?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (/iteration 2 · /.test(seen)) resolve();
    });
    void first.then(() => reject(new Error(`demo ended early:\n${seen}`)));
  });
  first.kill('SIGINT');
  const r1 = await first;
  expect(r1.all).toMatch(/Interrupted\. The run lives on in Temporal/);

  const second = await demo(env);
  expect(second.exitCode, second.all).toBe(0);
  expect(second.all).toMatch(/Continuing the demo run already in progress: vigil-demo/);
  expect(second.all).toMatch(/Run vigil-demo completed after 5 iteration\(s\)/);
  const repo = repoOf(r1.all ?? '');
  expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toContain('## slugify');
  // The interrupted iteration was re-run at most once; no iteration ran more than twice.
  const calls = readFileSync(path.join(repo, '.vigil/scripted-agent/calls.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { role: string; iteration: number })
    .filter((c) => c.role === 'iteration')
    .map((c) => c.iteration);
  expect(new Set(calls)).toEqual(new Set([1, 2, 3, 4, 5]));
  for (const i of [1, 2, 3, 4, 5]) expect(calls.filter((c) => c === i).length).toBeLessThanOrEqual(2);
});
