/**
 * Encrypted history, on a real Temporal server: with a payload key, everything a run writes to
 * history (its input with the agent command and webhook URLs, activity inputs and results, the
 * tails of agent output) is AES-GCM ciphertext; the holder of the key reads it all back; and a
 * message encrypted with a key the worker lacks is listed as invalid instead of wedging the run;
 * a run reaching a worker without its key waits, says why, and goes on when a worker with the key
 * arrives.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmCodec, defaultKeyId, ENCRYPTED_ENCODING } from '../../workers/codec.js';
import { createVigilWorker } from '../../workers/worker.js';
import { statusQuery, stopUpdate } from '../../workflows/messages.js';
import { vigilRun } from '../../workflows/run-workflow.js';
import {
  assertBuilt,
  CLI,
  createTestEnv,
  makeRepo,
  NAMESPACE,
  loopInput,
  temporalAddress,
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

/** `vigil ARGS` with the payload key in its environment (the CLI then uses the SDK's client and its codec). */
const vigilWithKey = (key: Uint8Array, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
  promisify(execFile)(process.execPath, [CLI, ...args], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_NAMESPACE: NAMESPACE,
      VIGIL_CODEC_KEY: Buffer.from(key).toString('base64'),
    },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
  );

const keyOf = (): { id: string; key: Uint8Array } => {
  const key = new Uint8Array(randomBytes(32));
  return { id: defaultKeyId(key), key };
};

describe('payload encryption', () => {
  it("keeps a run's history encrypted end to end, readable with the key, and survives a message under a foreign key", async () => {
    const secret = keyOf();
    const codec = new AesGcmCodec(secret);
    const foreign = new AesGcmCodec(keyOf());
    const secretClient = new Client({ connection: env.connection, namespace: NAMESPACE, dataConverter: { payloadCodecs: [codec] } });
    const foreignClient = new Client({ connection: env.connection, namespace: NAMESPACE, dataConverter: { payloadCodecs: [foreign] } });
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [],
      default: { writes: { 'a.txt': 'a\n' }, output: 'PLAINTEXT-AGENT-OUTPUT-7731\n', sleepMs: 300 },
    });
    const tq = uniqueId('tq');
    // Heartbeats sent every 100 ms: the 300 ms agent calls heartbeat (encrypted details, which status reads).
    const worker = await createVigilWorker({
      connection: env.nativeConnection,
      namespace: NAMESPACE,
      taskQueue: tq,
      workflowBundle: env.bundle,
      codec,
      heartbeatSendMs: 100,
    });
    await worker.runUntil(async () => {
      const input = loopInput(repo, scenario, {
        maxIterations: 100,
        notifyWebhookUrl: 'https://hooks.example.invalid/T0/SECRET-HOOK-PATH',
        notifyDesktop: false,
        notifyTimeoutSeconds: 1,
      });
      const handle = await secretClient.workflow.start(vigilRun, { taskQueue: tq, workflowId: uniqueId('enc'), args: [input] });
      await waitForStatus(handle, (s) => s.iteration >= 2);

      // A client with another key: its signal cannot be decrypted by the worker, and is listed.
      await foreignClient.workflow.getHandle(handle.workflowId).signal('pause', { reason: 'from elsewhere' });
      const s = await waitForStatus(handle, (x) => x.invalidMessageCount >= 1);
      expect(s.paused).toBe(false);
      expect(s.invalidMessages[0]?.error).toMatch(/^pause: the payload could not be decoded \(Unknown encoding: binary\/encrypted\)/);

      // The CLI with the key: status reads the encrypted snapshot, input sends an encrypted directive.
      const st = await vigilWithKey(secret.key, ['status', handle.workflowId, '--json']);
      expect(st.code, st.stderr).toBe(0);
      // The agent's heartbeats are read through the codec too: no gate pass runs (the agent does).
      expect(JSON.parse(st.stdout)).toMatchObject({
        workflowId: handle.workflowId,
        repoPath: repo,
        workerAnswered: true,
        gatesRunning: null,
      });
      const inp = await vigilWithKey(secret.key, ['input', handle.workflowId, 'ENCRYPTED-DIRECTIVE-5521']);
      expect(inp.code, inp.stderr).toBe(0);
      expect(inp.stdout).toContain('directive queued');

      await handle.executeUpdate(stopUpdate, { args: [{ by: 'ops' }] });
      expect((await handle.result()).status).toBe('stopped');

      // What the server stores: no payload in the clear.
      const raw = await env.client.workflow.getHandle(handle.workflowId).fetchHistory();
      const payloads: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }[] = [];
      const walk = (v: unknown): void => {
        if (!v || typeof v !== 'object' || v instanceof Uint8Array) return;
        if ('payloads' in v && Array.isArray((v as { payloads: unknown }).payloads))
          payloads.push(...(v as { payloads: typeof payloads }).payloads);
        Object.values(v).forEach(walk);
      };
      walk(raw.events);
      expect(payloads.length).toBeGreaterThan(10);
      // Only the SDK's own patch markers stay readable (they name a code version, nothing else).
      const plain = payloads.filter((p) => new TextDecoder().decode(p.metadata?.encoding ?? new Uint8Array()) !== ENCRYPTED_ENCODING);
      for (const p of plain)
        expect(Buffer.from(p.data ?? new Uint8Array()).toString()).toMatch(/^\{"id":"vigil-[a-z-]+-v\d+","deprecated":(true|false)\}$/);
      // Nothing anywhere in the history (summaries and search attributes included) leaks output or URLs.
      const bytes: string[] = [];
      const all = (v: unknown): void => {
        if (v instanceof Uint8Array) bytes.push(Buffer.from(v).toString('latin1'));
        else if (v && typeof v === 'object') Object.values(v).forEach(all);
        else if (typeof v === 'string') bytes.push(v);
      };
      all(raw.events);
      expect(bytes.join('\n')).not.toContain('PLAINTEXT-AGENT-OUTPUT-7731');
      expect(bytes.join('\n')).not.toContain('SECRET-HOOK-PATH');
      const everything = payloads.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('latin1')).join('');
      expect(everything).not.toContain('PLAINTEXT-AGENT-OUTPUT-7731');
      expect(everything).not.toContain('SECRET-HOOK-PATH');
      expect(everything).not.toContain(repo);
      expect(everything).not.toContain('ENCRYPTED-DIRECTIVE-5521');

      // The key holder reads everything back.
      const status = await secretClient.workflow.getHandle(handle.workflowId).query(statusQuery);
      expect(status.repoPath).toBe(repo);
      expect(status.lastIteration?.exitCode).toBe(0);
    });
  });

  it('a run that reaches a worker without its key waits, says why, and completes on a worker that has it', async () => {
    const secret = keyOf();
    const codec = new AesGcmCodec(secret);
    const secretClient = new Client({ connection: env.connection, namespace: NAMESPACE, dataConverter: { payloadCodecs: [codec] } });
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'a.txt': 'a\n' }, output: 'done <promise>COMPLETION PROMISE FULFILLED</promise>\n' }],
      default: { writes: {}, output: 'idle\n' },
    });
    const tq = uniqueId('tq');
    const warnings: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    // Without a codec at all: the worker still recognises the ciphertext and names the key it lacks.
    const keyless = await createVigilWorker({
      connection: env.nativeConnection,
      namespace: NAMESPACE,
      taskQueue: tq,
      workflowBundle: env.bundle,
      codec: null,
    });
    const input = loopInput(repo, scenario, { maxIterations: 3 });
    const handle = await secretClient.workflow.start(vigilRun, { taskQueue: tq, workflowId: uniqueId('key'), args: [input] });
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      warnings.push(String(chunk));
      return original(chunk, ...rest);
    }) as typeof process.stderr.write;
    try {
      await keyless.runUntil(async () => {
        // The workflow task fails (and is retried) with what to do; the run itself stays open.
        for (let i = 0; i < 100; i++) {
          const events = (await handle.fetchHistory()).events ?? [];
          if (events.some((e) => e.workflowTaskFailedEventAttributes)) break;
          await new Promise((r) => setTimeout(r, 200));
        }
        const events = (await handle.fetchHistory()).events ?? [];
        const failed = events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes;
        expect(failed?.failure?.message).toMatch(
          new RegExp(`^this worker lacks the payload key "${secret.id}" that encrypted the run's input`),
        );
        expect((await handle.describe()).status.name).toBe('RUNNING');
        // Nothing can be read of it here: a status query this worker would answer fails too.
        await expect(handle.query(statusQuery)).rejects.toThrow();
        // `vigil status` says why from the run's last failed workflow task: this worker lacks the key.
        const lacks = new RegExp(`this worker lacks the payload key "${secret.id}" that encrypted the run's input.*\\(attempt \\d+\\)`);
        const text = await vigilWithKey(secret.key, ['status', handle.workflowId]);
        expect(text.code, text.stderr).toBe(4);
        expect(text.stdout).toMatch(new RegExp(`worker    : the run's workflow task keeps failing: ${lacks.source}`));
        const json = await vigilWithKey(secret.key, ['status', handle.workflowId, '--json']);
        expect(json.code, json.stderr).toBe(4);
        expect((JSON.parse(json.stdout) as { workflowTaskFailing: string | null }).workflowTaskFailing).toMatch(lacks);
      });
    } finally {
      process.stderr.write = original;
    }
    expect(warnings.join('')).toContain(`this worker lacks the payload key "${secret.id}" (it has no codec key at all)`);

    // A worker with the key takes the retried task: the run goes on and completes.
    const keyed = await createVigilWorker({
      connection: env.nativeConnection,
      namespace: NAMESPACE,
      taskQueue: tq,
      workflowBundle: env.bundle,
      codec,
    });
    const outcome = await keyed.runUntil(
      handle.result().catch((err: unknown) => {
        throw err instanceof WorkflowFailedError ? new Error(`the run failed: ${err.cause?.message ?? err.message}`) : err;
      }),
    );
    expect(outcome.status).toBe('completion_promise_fulfilled');
    // Bounded: a handful of events, not a loop of failed tasks in history.
    expect((await handle.fetchHistory()).events?.length ?? 0).toBeLessThan(120);
  });
});
