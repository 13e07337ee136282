/**
 * The event store by default, as a user meets it: `vigil up` on a fresh VIGIL_HOME starts the
 * embedded Postgres next to its worker; `vigil start` (no DATABASE_URL anywhere) journals the run
 * into it, `vigil config --explain` says why, `--no-store` opts a run out; `vigil report` and
 * `vigil history` read it, also after `up` has stopped it (starting it for their own length).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, expect, inject, it } from 'vitest';
import {
  assertBuilt,
  CLI,
  makeRepo,
  pidAlive,
  SCRIPTED_AGENT,
  temporalAddress,
  uniqueId,
  writePrd,
  writeScenario,
} from '../support/harness.js';
import { cleanEnv, runVigil, show, waitUntil } from './cli-helpers.js';

beforeAll(() => assertBuilt());

it('vigil up starts the embedded store; runs started with vigil start land in it; report and history read it without DATABASE_URL', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-home-'));
  const env = {
    VIGIL_HOME: home,
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_CLI: inject('temporalCli'),
    VIGIL_TASK_QUEUE: uniqueId('store'),
  };
  const up = execa(process.execPath, [CLI, 'up'], { env: cleanEnv(env), extendEnv: false, all: true, reject: false, buffer: false });
  let out = '';
  up.all?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  let stopped = false;
  let postgresPid = 0;
  try {
    await waitUntil('vigil up to poll', () => out.includes('polling') || up.exitCode !== null, 120_000, 200);
    expect(out).toMatch(/event store {2}: 127\.0\.0\.1:\d+\/vigil_events \(embedded Postgres, started in [\d.]+ s; data in .*postgres\)/);
    const urlFile = path.join(home, 'postgres', 'url');
    expect(existsSync(urlFile)).toBe(true);
    const server = JSON.parse(readFileSync(path.join(home, 'postgres', 'server.json'), 'utf8')) as { pid: number; owner: number };
    postgresPid = server.pid;
    expect(server.owner).toBe(up.pid);

    const explain = await runVigil(['config', '--explain'], env);
    expect(explain.stdout).toMatch(/^eventStore +true +default: local store \(…[^ ]*postgres\/url\)$/m);

    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ appends: { 'a.txt': '1\n' } }, { appends: { 'a.txt': '2\n' }, claim: 'file' }],
    });
    const prd = writePrd('# Store PRD\n\nTwo steps.\n');
    const knobs = [
      '--set',
      'councilEnabled=false',
      '--set',
      'qualityGates=false',
      '--set',
      'codeReview=false',
      '--set',
      'prdChecklist=false',
      '--set',
      'baseWaitSeconds=1',
    ];
    const agent = ['--agent-command', `${SCRIPTED_AGENT} --scenario ${scenario}`];
    const id = uniqueId('stored');
    const started = await runVigil(['start', prd, '--repo', repo, ...agent, ...knobs, '--id', id, '--wait'], env, { timeoutMs: 120_000 });
    expect(started.code, show(started)).toBe(0);
    const status = await runVigil(['status', id, '--json'], env);
    expect(JSON.parse(status.stdout).eventStore, status.stdout).toMatchObject({ pending: 0, dropped: 0, problem: null });

    const report = await runVigil(['report', id], env);
    expect(report.code, show(report)).toBe(0);
    expect(report.stdout).toContain(`run ${id}: Store PRD`);
    expect(report.stdout).toMatch(/outcome: completion_promise_fulfilled \(exit 0\) at iteration 2/);
    expect(report.stdout).toMatch(/iteration 1 · ACT/);
    expect(report.stdout).toMatch(/iteration 2 · REFLECT .*claimed completion/);

    // Opted out: the run works, nothing lands.
    const repo2 = makeRepo();
    const id2 = uniqueId('unstored');
    const scenario2 = writeScenario(repo2, { version: 1, iterations: [{ appends: { 'b.txt': '1\n' }, claim: 'file' }] });
    const off = await runVigil(
      [
        'start',
        prd,
        '--repo',
        repo2,
        '--agent-command',
        `${SCRIPTED_AGENT} --scenario ${scenario2}`,
        ...knobs,
        '--id',
        id2,
        '--no-store',
        '--wait',
      ],
      env,
      { timeoutMs: 120_000 },
    );
    expect(off.code, show(off)).toBe(0);
    expect((await runVigil(['report', id2], env)).code).toBe(3);

    // Ctrl+C: the worker stops, then the store it started.
    up.kill('SIGINT');
    const done = await up;
    stopped = true;
    expect(done.exitCode, out).toBe(0);
    expect(pidAlive(server.pid)).toBe(false);
    expect(existsSync(urlFile)).toBe(true);

    // Still readable: report and history start the store for their own length.
    const later = await runVigil(['history', id, '--format', 'jsonl'], env);
    expect(later.code, show(later)).toBe(0);
    const kinds = later.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { event: { kind: string } }).event.kind);
    expect(kinds[0]).toBe('run_started');
    expect(kinds.filter((k) => k === 'iteration')).toHaveLength(2);
    expect(kinds).toContain('outcome');
    expect(existsSync(path.join(home, 'postgres', 'server.json'))).toBe(false);
  } finally {
    if (!stopped) {
      up.kill('SIGKILL');
      await up;
      if (postgresPid && pidAlive(postgresPid)) process.kill(postgresPid, 'SIGKILL');
    }
  }
});
