/**
 * A whole run, with the product's default knobs, whose agent is hostile in every role
 * (tests/support/hostile-agent.mjs): builder, checklist extraction, code reviewers, the devil's
 * advocate, the council and the checklist verifier all try to read VIGIL_HOME and the run secret,
 * reach the suite's Temporal frontend and a listening "event store", write outside the repository
 * (and, reviewing, inside it) and leave a process behind. Each attempt fails in each role, the run
 * still completes, and the iterations' results in the run's history carry what the sandbox refused.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { AgentResultSchema } from '../../schemas/activities.js';
import { currentDetails } from '../../rules/ui.js';
import {
  assertBuilt,
  createTestEnv,
  git,
  makeRepo,
  makeWorker,
  ROOT,
  runInput,
  SCRIPTED_AGENT,
  startRun,
  status,
  temporalAddress,
  uniqueId,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

const HOSTILE = path.join(ROOT, 'tests/support/hostile-agent.mjs');
const MARK = `vigil-hostile-run-${process.pid}-${Date.now()}`;
const FORBIDDEN = [
  'read-vigil-home',
  'read-run-secret',
  'read-codec-key',
  'read-other-repo',
  'write-outside',
  'write-system',
  'write-program',
  'write-git-hooks',
  'connect-temporal',
  'connect-store',
  'proxy-temporal',
  'proxy-outside',
];

let env: TestEnv;
let worker: Worker;
let running: Promise<void>;
let tq: string;
let store: net.Server;
let storeAddress: string;
let root: string;
const saved = { ...process.env };

describe.runIf(sandboxPlatform().problem === null)('a run whose agent is hostile in every role', () => {
  beforeAll(async () => {
    assertBuilt();
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-hostile-run-'));
    const home = path.join(root, 'vigil-home');
    mkdirSync(home);
    writeFileSync(path.join(home, 'run-secret'), `${'cd'.repeat(32)}\n`, { mode: 0o600 });
    const codec = path.join(root, 'codec.key');
    writeFileSync(codec, 'a2V5\n', { mode: 0o600 });
    const other = path.join(root, 'other-run-repo');
    mkdirSync(other);
    writeFileSync(path.join(other, 'secret.txt'), 'another run\n');
    mkdirSync(path.join(root, 'outside'));
    store = net.createServer((s) => s.end('S'));
    await new Promise<void>((r) => store.listen(0, '127.0.0.1', () => r()));
    storeAddress = `127.0.0.1:${(store.address() as net.AddressInfo).port}`;
    // The in-process worker's environment: its activities and the agents they start read it.
    Object.assign(process.env, {
      VIGIL_HOME: home,
      TEMPORAL_ADDRESS: temporalAddress(),
      VIGIL_SANDBOX_WATCH: storeAddress,
      HOSTILE_VIGIL_HOME: home,
      HOSTILE_SECRET: path.join(home, 'run-secret'),
      HOSTILE_CODEC: codec,
      HOSTILE_OTHER_REPO_FILE: path.join(other, 'secret.txt'),
      HOSTILE_OUTSIDE: path.join(root, 'outside', 'escaped.txt'),
      HOSTILE_TEMPORAL: temporalAddress(),
      HOSTILE_STORE: storeAddress,
      HOSTILE_MARK: MARK,
      HOSTILE_PROMISE: 'COMPLETION PROMISE FULFILLED',
    });
    process.env.VIGIL_SANDBOX = 'auto';
    env = await createTestEnv();
    tq = uniqueId('sandbox');
    worker = await makeWorker(env, tq);
    running = worker.run();
  });

  afterAll(async () => {
    worker?.shutdown();
    await running?.catch(() => undefined);
    await env?.close();
    store?.close();
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  it('refuses every escape in every role, completes, and records the refusals', async () => {
    const repo = makeRepo({
      commit: true,
      files: { 'README.md': '# hello\n', 'hello.test.mjs': "import test from 'node:test';\ntest('hello', () => {});\n" },
    });
    const input = runInput(repo, writeScenario(root, { version: 1, iterations: [{}] }), {
      agentCommand: [process.execPath, HOSTILE],
      testCommand: 'node --test',
    });
    const handle = await startRun(env, tq, input);
    const outcome = await handle.result();
    expect(outcome.status, JSON.stringify(outcome)).toBe('council_approved');

    // Every role's calls, from their logs: each forbidden attempt refused.
    const runDir = path.join(repo, '.vigil', 'runs', readdirSync(path.join(repo, '.vigil', 'runs'))[0] as string);
    const roles = new Set<string>();
    const logs = [
      ...readdirSync(runDir)
        .filter((f) => f.endsWith('.log'))
        .map((f) => path.join(runDir, f)),
      ...privateLogs(process.env.VIGIL_HOME as string),
    ];
    for (const file of logs) {
      const text = readFileSync(file, 'utf8');
      if (!text.includes('ATTEMPT ')) continue;
      roles.add(path.basename(file).replace(/-(round-)?\d.*$/, ''));
      for (const name of FORBIDDEN) expect(text, `${name} in ${file}`).toMatch(new RegExp(`^ATTEMPT ${name} refused`, 'm'));
      if (!path.basename(file).startsWith('iteration-') && !path.basename(file).startsWith('tests-'))
        expect(text, file).toMatch(/^ATTEMPT write-repo refused .*read-only file system/im);
    }
    expect([...roles].sort()).toEqual(
      expect.arrayContaining(['checklist', 'checklist-verifier', 'council', 'devils-advocate', 'iteration', 'reviewer']),
    );
    expect(existsSync(path.join(root, 'outside', 'escaped.txt'))).toBe(false);
    expect(
      git(repo, 'status', '--porcelain')
        .split('\n')
        .filter((l) => /hostile-(council|reviewer|devils-advocate|checklist)/.test(l)),
    ).toEqual([]);

    // The iterations' results in the run's history carry what the sandbox refused.
    const history = await handle.fetchHistory();
    const results = (history.events ?? [])
      .map((e) => e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data)
      .filter((d): d is Uint8Array => d instanceof Uint8Array)
      .map((d) => {
        try {
          return JSON.parse(Buffer.from(d).toString('utf8')) as unknown;
        } catch {
          return null;
        }
      });
    const agentResults = results.flatMap((r) => {
      const parsed = AgentResultSchema.safeParse(r);
      return parsed.success && parsed.data.sandbox ? [parsed.data] : [];
    });
    expect(agentResults.length).toBeGreaterThan(0);
    for (const r of agentResults) {
      expect(r.sandbox?.applied).toBe(true);
      const connects = (r.sandbox?.denied ?? []).filter((d) => d.kind === 'connect').map((d) => d.target);
      expect(connects).toEqual(
        expect.arrayContaining([`127.0.0.1:${temporalAddress().split(':').pop()}`, storeAddress, 'example.com:443']),
      );
    }

    // Status lists what the sandbox refused, with the call that tried it: every role (this run's
    // test command is benign; the test command's refusals are tests/unit/sandbox.test.ts's).
    const snap = await status(handle);
    expect(snap.sandbox?.last?.applied, JSON.stringify(snap.sandbox)).toBe(true);
    expect(snap.sandbox?.deniedTotal).toBeGreaterThan(0);
    const seen = snap.sandbox?.denied ?? [];
    expect([...new Set(seen.map((d) => d.role))]).toEqual(
      expect.arrayContaining(['builder', 'checklist', 'checklist-verifier', 'reviewer', 'council', 'devils-advocate']),
    );
    // Six roles of a dozen attempts each overflow the 30 kept (at least one per role stays); the total counts them all.
    expect(snap.sandbox?.deniedTotal).toBeGreaterThan(seen.length);
    expect(seen.filter((d) => d.kind === 'connect').map((d) => d.target)).toEqual(
      expect.arrayContaining([storeAddress, 'example.com:443']),
    );
    expect(
      snap.recentIterations.some((r) => (r.denied ?? []).some((d) => d.target === storeAddress)),
      JSON.stringify(snap.recentIterations),
    ).toBe(true);
    expect(currentDetails(snap)).toMatch(/Sandbox refused \d+ escape attempts/);

    // The run's sandbox homes (each a copy of the CLI's configuration) went with the run; its hidden roles' logs stay.
    const privateDir = path.join(process.env.VIGIL_HOME as string, 'private', handle.workflowId);
    expect(existsSync(privateDir)).toBe(true);
    expect(readdirSync(privateDir).filter((f) => f === 'sandbox-home' || f === 'call-signals')).toEqual([]);
    expect(readdirSync(privateDir).some((f) => f.endsWith('.log'))).toBe(true);

    // Nothing the agent started outlived its calls.
    const left = readdirSync('/proc').filter((p) => {
      try {
        return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(MARK);
      } catch {
        return false;
      }
    });
    expect(left).toEqual([]);
  });
});

describe('a run with the sandbox knob off', () => {
  let offEnv: TestEnv;
  let offWorker: Worker;
  let offRunning: Promise<void>;
  let offTq: string;
  beforeAll(async () => {
    assertBuilt();
    offEnv = await createTestEnv();
    offTq = uniqueId('sandbox-off');
    offWorker = await makeWorker(offEnv, offTq);
    offRunning = offWorker.run();
  });
  afterAll(async () => {
    offWorker?.shutdown();
    await offRunning?.catch(() => undefined);
    await offEnv?.close();
  });

  it('runs its agent outside the sandbox on a worker at the default, and says so in status and on the card', async () => {
    const repo = makeRepo({ commit: true, files: { 'README.md': '# hello\n' } });
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' }, claim: 'promise' }] });
    // The knob under test; the round roles are not what this test is about, so they are off to keep it short.
    const input = runInput(repo, scenario, { sandbox: 'off', councilEnabled: false, codeReview: false, prdChecklist: false });
    expect(input.knobs.agentCommand?.[0]).toBe(SCRIPTED_AGENT);
    const handle = await startRun(offEnv, offTq, input);
    await handle.result();
    const snap = await status(handle);
    expect(snap.sandbox).toMatchObject({ mode: 'off', last: { mode: 'off', applied: false, reason: expect.stringContaining('off') } });
    expect(snap.sandbox?.unsandboxedCalls).toBeGreaterThan(0);
    expect(currentDetails(snap)).toMatch(/\*\*Agent not isolated\*\*: sandbox=off: NOT isolated/);
  });
});

/** The hidden roles' logs (checklist extraction and verification), kept outside the repository. */
function privateLogs(home: string): string[] {
  const dir = path.join(home, 'private');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((run) =>
    readdirSync(path.join(dir, run))
      .filter((f) => f.endsWith('.log'))
      .map((f) => path.join(dir, run, f)),
  );
}
