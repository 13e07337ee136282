/**
 * What the files of whole runs against a scripted builder share (tests/workflow/cheat-corpus.test.ts,
 * tests/workflow/build-gate.test.ts): a worker of their own on the suite's Temporal server, with
 * the default sandbox on (`auto`) and VIGIL_HOME in a fresh folder, the project's node_modules
 * shown to the sandbox read-only (a vitest repository links it); and the run's status as one text
 * for a failure to show.
 */
import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll } from 'vitest';
import type { StatusSnapshot } from '../../schemas/status.js';
import { assertBuilt, createTestEnv, makeWorker, ROOT, uniqueId, type TestEnv } from './harness.js';

export interface WholeRuns {
  /** The suite's Temporal server. */
  readonly env: TestEnv;
  /** The worker's task queue. */
  readonly tq: string;
  /** A fresh folder for the file's repositories and scenarios (VIGIL_HOME is under it). */
  readonly root: string;
}

/** Starts the worker before the file's tests (call inside its describe) and stops it after; the environment is put back. */
export function useWholeRuns(name: string): WholeRuns {
  const saved = { ...process.env };
  let env: TestEnv | undefined;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let root = '';
  const tq = uniqueId(name);
  beforeAll(async () => {
    assertBuilt();
    root = mkdtempSync(path.join(os.tmpdir(), `vigil-${name}-`));
    Object.assign(process.env, {
      VIGIL_HOME: path.join(root, 'vigil-home'),
      VIGIL_SANDBOX: 'auto',
      VIGIL_SANDBOX_READABLE: realpathSync(path.join(ROOT, 'node_modules')),
    });
    env = await createTestEnv();
    worker = await makeWorker(env, tq);
    running = worker.run();
  });
  afterAll(async () => {
    worker?.shutdown();
    await running?.catch(() => undefined);
    await env?.close();
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });
  return {
    get env(): TestEnv {
      if (!env) throw new Error('useWholeRuns: the worker starts in beforeAll; ask for env inside a test');
      return env;
    },
    tq,
    get root(): string {
      return root;
    },
  };
}

/**
 * A run's status as one text: first what it came to (a failure's summary line shows only this
 * one), then its tests, each gate's verdict, reason and findings, its pause, its last check and
 * its outcome.
 */
export const shownRun = (s: StatusSnapshot): string =>
  [
    `outcome ${s.outcome?.status ?? 'none'}${s.pause ? `, paused (${s.pause.reason})` : ''}, iteration ${s.iteration}`,
    s.lastTests?.reason ?? '',
    ...(s.quality?.gates ?? []).flatMap((g) => [
      `${g.gate}: ${g.verdict}: ${g.reason ?? ''}`,
      ...(g.findings ?? []).map((f) => `${f.file ?? ''}:${f.line ?? ''} ${f.message}`),
    ]),
    s.pause?.reason ?? '',
    s.checks?.last?.reason ?? '',
    s.outcome?.reason ?? '',
  ].join('\n');
