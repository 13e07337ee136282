/**
 * Hostile inputs and unlucky operators, against a real Temporal server: a full disk under the
 * repository, maximum-size directives, undecodable signals, a repository deleted or booby-trapped
 * mid-run, run ids that differ only in punctuation, a last iteration that fails, and a flood of
 * huge signals while the agent works, a forged carried state. Each case once wedged, killed or
 * leaked a run, or could have.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSecret, signRun, startClaims } from '../../lib/run-signing.js';
import type { RunInput } from '../../schemas/run.js';
import { inputUpdate, resumeUpdate, stopUpdate } from '../../workflows/messages.js';
import {
  agentCalls,
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  NAMESPACE,
  loopInput,
  startRun,
  status,
  uniqueId,
  waitForStatus,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
const mounts: string[] = [];
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  for (const m of mounts) {
    try {
      execFileSync('umount', ['-l', m]);
    } catch {
      /* already gone */
    }
  }
  await env?.close();
});

/** A real, tiny filesystem (tmpfs) so a disk can really fill up; needs root, as CI has. */
function smallDisk(bytes: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(`this test mounts a tiny tmpfs to fill a disk for real and needs root (CI runs as root): ${String(err)}`);
  }
  mounts.push(dir);
  return dir;
}

/** A signal whose payload the default converter cannot decode, sent as any raw client could. */
async function rawSignal(workflowId: string, name: string, encoding: string, data: string): Promise<void> {
  await env.client.workflowService.signalWorkflowExecution({
    namespace: NAMESPACE,
    workflowExecution: { workflowId },
    signalName: name,
    identity: 'hostile-test',
    input: { payloads: [{ metadata: { encoding: new TextEncoder().encode(encoding) }, data: new TextEncoder().encode(data) }] },
  });
}

/** Every payload of a run's history decoded as text, so a test can say what history holds. */
async function historyText(handle: { fetchHistory(): Promise<{ events?: unknown[] | null }> }): Promise<string> {
  const parts: string[] = [];
  const walk = (v: unknown): void => {
    if (v instanceof Uint8Array) parts.push(new TextDecoder().decode(v));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
    else if (typeof v === 'string') parts.push(v);
  };
  walk((await handle.fetchHistory()).events);
  return parts.join('\n');
}

describe('a run survives', () => {
  it('a full disk under the repository: the worker lives, the iteration fails with the reason, the run completes once space is back', async () => {
    const disk = smallDisk(1024 * 1024);
    const repo = path.join(disk, 'repo');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
    writeFileSync(path.join(repo, 'README.md'), '# r\n');
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        // 2 MiB of output into a 1 MiB disk: the iteration log hits ENOSPC mid-call.
        { output: `${'x'.repeat(100)}\n`.repeat(20_000), writes: { 'a.txt': 'a\n' } },
        { writes: { 'b.txt': 'b\n' } },
        { writes: { 'c.txt': 'c\n' }, claim: 'promise' },
      ],
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const outcome = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 10 }));
      // The iteration log filled the disk; git cannot store the tree either: the run pauses
      // (in every mode) and says why, instead of failing or killing the worker.
      const s = await waitForStatus(handle, (x) => x.paused, 60_000);
      expect(s.pause?.by).toBe('vigil');
      expect(s.pause?.reason).toMatch(/^disk full under the repository: .*No space left on device.*vigil resume/s);
      const log = readFileSync(
        path.join(repo, '.vigil/runs', readdirSync(path.join(repo, '.vigil/runs'))[0] as string, 'iteration-0001.log'),
      );
      expect(log.length).toBeLessThan(1024 * 1024);
      // An operator frees space and resumes: the run carries on.
      rmSync(path.join(repo, '.vigil/runs', readdirSync(path.join(repo, '.vigil/runs'))[0] as string, 'iteration-0001.log'));
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'ops' }] });
      return handle.result();
    });
    expect(outcome.status).toBe('completion_promise_fulfilled');
    expect(readFileSync(path.join(repo, 'c.txt'), 'utf8')).toBe('c\n');
  });

  it('maximum-size directives: the one that would overflow the next prompt is refused, the run and its queries keep working', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'a.txt': 'a\n' }, sleepMs: 2500 },
        { writes: { 'b.txt': 'b\n' }, claim: 'promise' },
      ],
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const big = 'd'.repeat(1024 * 1024 - 16);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 5 }));
      await waitForStatus(handle, (x) => x.agentRunning);
      const first = await handle.executeUpdate(inputUpdate, { args: [{ directive: `FIRST ${big}`, by: 'ops' }] });
      expect(first.changed).toBe(true);
      const refused = await handle.executeUpdate(inputUpdate, { args: [{ directive: `SECOND ${big}`, by: 'ops' }] }).then(
        () => null,
        (err: Error) => err,
      );
      expect((refused?.cause as Error | undefined)?.message).toMatch(
        /^input: pending directives would total \d+ bytes, over the 1048576 bytes \(1 MiB\)/,
      );
      await handle.signal('input', { directive: `THIRD ${big}` });
      const s = await waitForStatus(handle, (x) => x.invalidMessageCount >= 1);
      expect(s.pendingDirectives).toBe(1);
      expect(s.invalidMessages.at(-1)?.error).toMatch(/^input: pending directives would total \d+ bytes, over the 1048576 bytes \(1 MiB\)/);
      const outcome = await handle.result();
      expect(outcome.status).toBe('completion_promise_fulfilled');
    });
    const prompt = readFileSync(
      path.join(repo, '.vigil/runs', readdirSync(path.join(repo, '.vigil/runs'))[0] as string, 'iteration-0002.prompt.md'),
      'utf8',
    );
    expect(prompt).toContain('FIRST ddd');
    expect(prompt).not.toContain('SECOND');
    expect(prompt).not.toContain('THIRD');
  });

  it('undecodable signals (unknown encoding, broken JSON): listed as invalid, and a stop still gets through', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [],
      default: { writes: { 'a.txt': 'a\n' }, output: 'wrote a.txt\n', sleepMs: 300 },
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 1000 }));
      await waitForStatus(handle, (x) => x.iteration >= 1);
      await rawSignal(handle.workflowId, 'pause', 'x/y', 'whatever');
      await rawSignal(handle.workflowId, 'input', 'json/plain', '{"directive": not json');
      const s = await waitForStatus(handle, (x) => x.invalidMessageCount >= 2);
      expect(s.invalidMessages.map((m) => m.error)).toEqual([
        expect.stringMatching(/^pause: the payload could not be decoded \(.*x\/y.*\)/),
        expect.stringMatching(/^input: the payload could not be decoded/),
      ]);
      expect(s.paused).toBe(false);
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'ops', reason: 'done testing' }] });
      expect((await handle.result()).status).toBe('stopped');
    });
  });

  it('a repository deleted mid-run (perpetual): the run ends as repository_unavailable, exit 20', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' }, sleepMs: 1500 }] });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const outcome = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { autonomyMode: 'perpetual', notifyDesktop: false }));
      await waitForStatus(handle, (x) => x.agentRunning);
      // agentRunning is set when the call is scheduled: delete once the agent has really begun
      // (its first write), and retry a removal that races a file the agent or its log creates.
      const begun = Date.now() + 60_000;
      while (!existsSync(path.join(repo, 'a.txt')) && Date.now() < begun) await new Promise((r) => setTimeout(r, 50));
      rmSync(repo, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
      expect(existsSync(repo)).toBe(false);
      const o = await handle.result();
      const s = await status(handle);
      expect(s.status).toBe('finished');
      return o;
    });
    expect(outcome).toMatchObject({ status: 'repository_unavailable', exitCode: 20 });
    expect(outcome.reason).toMatch(/repository unavailable: .*(gone|not a git|does not exist)/);
  });

  it('a damaged .git (supervised): the run pauses and says how to go on; a stop ends it', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' }, sleepMs: 1500 }] });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { autonomyMode: 'supervised', notifyDesktop: false }));
      await waitForStatus(handle, (x) => x.agentRunning);
      rmSync(path.join(repo, '.git'), { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
      writeFileSync(path.join(repo, '.git'), 'gitdir: /nonexistent\n');
      const s = await waitForStatus(handle, (x) => x.paused, 60_000);
      expect(s.pause?.by).toBe('vigil');
      expect(s.pause?.reason).toMatch(/repository unavailable/);
      expect(s.pause?.reason).toContain(`vigil resume ${handle.workflowId}`);
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'ops' }] });
      expect((await handle.result()).status).toBe('stopped');
    });
  });

  it('a repository that cannot be prepared before the first iteration (supervised): the run waits quietly for a person; stop --now ends it', async () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), 'vigil-outside-'));
    const repo = makeRepo();
    symlinkSync(outside, path.join(repo, '.vigil'));
    const scenario = writeScenario(makeRepo(), { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' } }] });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { autonomyMode: 'supervised', notifyDesktop: false }));
      const s = await waitForStatus(handle, (x) => x.paused, 60_000);
      expect(s.pause?.by).toBe('vigil');
      expect(s.pause?.reason).toMatch(/\.vigil is a symbolic link/);
      // Paused means paused: no preparation is scheduled again while it waits.
      const events = async (): Promise<number> => (await handle.fetchHistory()).events?.length ?? 0;
      const before = await events();
      await new Promise((r) => setTimeout(r, 3000));
      expect(await events()).toBe(before);
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'ops', now: true }] });
      expect((await handle.result()).status).toBe('stopped');
      expect(await events()).toBeLessThan(80);
    });
    expect(readdirSync(outside)).toEqual([]);
  });

  it('links planted under .vigil/ are never followed: a linked .vigil ends the run, a linked signal file is removed unread', async () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), 'vigil-outside-'));
    const secretFile = path.join(outside, 'secret.txt');
    writeFileSync(secretFile, 'TOP-SECRET-CONTENT-4242\n');

    // 1. `.vigil` itself is a link committed in the repository.
    const trapped = makeRepo();
    symlinkSync(outside, path.join(trapped, '.vigil'));
    const s1 = writeScenario(trapped, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' } }] });
    // 2. A HUMAN_REVIEW_NEEDED link pointing at a secret.
    const repo = makeRepo();
    mkdirSync(path.join(repo, '.vigil/signals'), { recursive: true });
    symlinkSync(secretFile, path.join(repo, '.vigil/signals/HUMAN_REVIEW_NEEDED'));
    const notifyFile = path.join(outside, 'notifications.jsonl');
    const s2 = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a\n' } }, { writes: { 'b.txt': 'b\n' }, claim: 'promise' }],
    });

    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const h1 = await startRun(env, tq, loopInput(trapped, s1, { autonomyMode: 'perpetual', notifyDesktop: false }));
      const o1 = await h1.result();
      expect(o1).toMatchObject({ status: 'repository_unavailable', exitCode: 20 });
      expect(o1.reason).toMatch(/\.vigil is a symbolic link/);
      expect(readdirSync(outside).sort()).toEqual(['secret.txt']);

      const h2 = await startRun(env, tq, loopInput(repo, s2, { notifyFile, notifyDesktop: false }));
      expect((await h2.result()).status).toBe('completion_promise_fulfilled');
      const s = await status(h2);
      expect(s.escalations).toHaveLength(0);
      const history = await historyText(h2);
      expect(history).not.toContain('TOP-SECRET-CONTENT');
      expect(history).toContain('HUMAN_REVIEW_NEEDED was a symbolic link');
    });
    expect(existsSync(notifyFile) ? readFileSync(notifyFile, 'utf8') : '').not.toContain('TOP-SECRET-CONTENT');
    expect(readFileSync(secretFile, 'utf8')).toBe('TOP-SECRET-CONTENT-4242\n');
  });

  it("run ids that differ only in punctuation get their own folders: neither kills the other's agent", async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' }, sleepMs: 1500 }, { claim: 'promise' }] });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const base = uniqueId('pair');
    await worker.runUntil(async () => {
      const a = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 3 }), `${base}:1`);
      await waitForStatus(a, (x) => x.agentRunning);
      const b = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 3 }), `${base}_1`);
      const [oa, ob] = await Promise.all([a.result(), b.result()]);
      expect(oa.status).toBe('completion_promise_fulfilled');
      expect(ob.status).toBe('completion_promise_fulfilled');
    });
    const folders = readdirSync(path.join(repo, '.vigil/runs')).filter((f) => f.startsWith(base.slice(0, 4)));
    expect(folders.sort()).toEqual([`${base}%3A1`, `${base}_1`].sort());
    for (const f of folders) {
      const log = readFileSync(path.join(repo, '.vigil/runs', f, 'iteration-0001.log'), 'utf8');
      expect(log).toMatch(/=== vigil: exit 0 /);
      expect(log).not.toMatch(/attempt 2/);
    }
    expect(agentCalls(repo).filter((c) => c.iteration === 1)).toHaveLength(2);
  });

  it('a failed last allowed iteration ends the run at once instead of sitting out the backoff', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' } }, { exitCode: 1 }] });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const t0 = Date.now();
    const outcome = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 2, baseWaitSeconds: 600 }));
      return handle.result();
    });
    expect(outcome.status).toBe('max_iterations_reached');
    expect(Date.now() - t0).toBeLessThan(60_000);
  });

  it('a worker that requires signed runs refuses a run started by anyone else, and runs the signed one', async () => {
    const secretFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-run-secret-')), 'run-secret');
    const saved = { req: process.env.VIGIL_REQUIRE_SIGNED_RUNS, file: process.env.VIGIL_RUN_SECRET_FILE };
    process.env.VIGIL_REQUIRE_SIGNED_RUNS = '1';
    process.env.VIGIL_RUN_SECRET_FILE = secretFile;
    try {
      const secret = runSecret(process.env, true) as Buffer;
      const repo = makeRepo();
      const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' }, claim: 'promise' }] });
      const tq = uniqueId('tq');
      const worker = await makeWorker(env, tq);
      await worker.runUntil(async () => {
        const unsigned = await startRun(env, tq, loopInput(repo, scenario));
        const o1 = await unsigned.result();
        expect(o1).toMatchObject({ status: 'agent_not_runnable', exitCode: 20 });
        expect(o1.reason).toMatch(/this one is unsigned/);
        expect(agentCalls(repo)).toHaveLength(0);

        const id = uniqueId('signed');
        const input = loopInput(repo, scenario);
        const k = input.knobs;
        input.authorization = signRun(secret, {
          workflowId: id,
          repoPath: repo,
          provider: k.provider,
          agentCommand: k.agentCommand,
          councilProvider: k.provider,
          testCommand: k.testCommand,
          ...startClaims({ prdPath: input.prdPath, prdSha256: null, knobs: k, scheduled: false }),
        });
        const signed = await startRun(env, tq, input, id);
        expect((await signed.result()).status).toBe('completion_promise_fulfilled');
        expect(agentCalls(repo)).toHaveLength(1);
      });
    } finally {
      if (saved.req === undefined) delete process.env.VIGIL_REQUIRE_SIGNED_RUNS;
      else process.env.VIGIL_REQUIRE_SIGNED_RUNS = saved.req;
      if (saved.file === undefined) delete process.env.VIGIL_RUN_SECRET_FILE;
      else process.env.VIGIL_RUN_SECRET_FILE = saved.file;
    }
  });

  it('a forged carried state (a bad reference, a value bomb, not a run state) fails the run at once with what is wrong, before any agent call', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' }, claim: 'promise' }] });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    const bomb = Array.from({ length: 40 }, (_, i) => (i === 0 ? 'x' : [`~${(i - 1).toString(36)}`, `~${(i - 1).toString(36)}`]));
    await worker.runUntil(async () => {
      const forged: [NonNullable<RunInput['packedState']>, RegExp][] = [
        [{ format: 1, table: [], value: '~0' }, /packedState: the packed value has a bad reference "~0"/],
        [{ format: 1, table: bomb, value: `~${(39).toString(36)}` }, /packedState: the packed value unpacks to more than 4000000 values/],
        [
          { format: 1, table: ['~~x'], value: { iteration: '~0' } },
          /packedState is not a run state: iteration: Invalid input: expected number, received string; .*; and \d+ more$/,
        ],
      ];
      for (const [packedState, why] of forged) {
        const handle = await startRun(env, tq, { ...loopInput(repo, scenario), packedState });
        const err = await handle.result().then(
          () => null,
          (e: unknown) => e as WorkflowFailedError,
        );
        expect(err).toBeInstanceOf(WorkflowFailedError);
        expect(err?.cause).toMatchObject({ type: 'InvalidRunInput', message: expect.stringMatching(why) });
      }
    });
    expect(agentCalls(repo)).toHaveLength(0);
  });

  it('a flood of huge invalid signals while the agent works: the run rolls over before the history limit, and goes on', async () => {
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a\n' }, sleepMs: 120_000 }],
      default: { writes: { 'b.txt': 'b\n' }, output: 'wrote b.txt\n', sleepMs: 200 },
    });
    const tq = uniqueId('tq');
    const worker = await makeWorker(env, tq);
    await worker.runUntil(async () => {
      const handle = await startRun(env, tq, loopInput(repo, scenario, { maxIterations: 1000 }));
      await waitForStatus(handle, (x) => x.agentRunning);
      const junk = { nonsense: 'z'.repeat(1536 * 1024) };
      for (let i = 0; i < 16; i++) await handle.signal('pause', junk);
      const s = await waitForStatus(handle, (x) => x.generations >= 1 && (x.lastIteration?.iteration ?? 0) >= 2, 90_000);
      expect(s.invalidMessageCount).toBeGreaterThanOrEqual(1);
      expect(s.lastIteration?.iteration).toBeGreaterThanOrEqual(2);
      const desc = await handle.describe();
      expect(Number(desc.raw.workflowExecutionInfo?.historySizeBytes)).toBeLessThan(5 * 1024 * 1024);
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'ops', now: true }] });
      expect((await handle.result()).status).toBe('stopped');
    });
  });
});
