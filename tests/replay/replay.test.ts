/**
 * Replay: the workflow code must replay every recorded history in `histories/` without a
 * determinism error, so a deploy can never strand a running run. Histories are version-stamped
 * (`<scenario>-v<package version>.json`) and never edited; a workflow change that alters history
 * goes behind `patched()` and keeps the old fixtures replaying.
 *
 * The suite also records a fresh run of the demo scenario (a failed iteration, a claim blocked by
 * the evidence gate, a backoff timer, a directive, a pause, three council rounds and the devil's
 * advocate) and replays that, so the current code replays
 * its own histories too, and a run rewound from iteration 4 to 2 with a directive (checkpoints, the
 * rewind update and its activity), and a run that continues as new with its state packed.
 * `VIGIL_RECORD_HISTORY=1` saves the first two fresh histories as new fixtures.
 *
 * Every era is pinned too: eras.ts names, for each patch id declared in workflows/, the
 * `before-<patch>*.json` histories recorded by the code from just before it, each replayed by a
 * test of its own; a patch id without an entry there fails the suite.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { inputUpdate, pauseUpdate, resumeUpdate, rewindUpdate } from '../../workflows/messages.js';
import { demoKnobs } from '../../cli/demo.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  ROOT,
  writeScenario,
  runInput,
  startRun,
  uniqueId,
  waitForStatus,
  type TestEnv,
} from '../support/harness.js';
import { patchIds } from './command-sequence.js';
import { eraFixtures, ERAS, RELEASE_FIXTURES } from './eras.js';

const HISTORIES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'histories');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

describe('replay', () => {
  it('replays every committed history', async () => {
    // The era fixtures (before-*.json) have a test each, below.
    const files = readdirSync(HISTORIES).filter((f) => f.endsWith('.json') && !f.startsWith('before-'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const history = JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')) as { events?: Record<string, unknown>[] };
      // Under the workflow id it ran as (a run's child workflows' ids derive from it).
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes as { workflowId?: string } | undefined;
      await expect(
        Worker.runReplayHistory({ workflowBundle: env.bundle }, history, started?.workflowId ?? file),
        file,
      ).resolves.toBeUndefined();
    }
  });

  it('replays a fresh recording of the demo scenario run', async () => {
    const repo = makeRepo({ files: { 'package.json': '{"name":"sample","type":"module","private":true}\n', 'README.md': '# sample\n' } });
    const knobs = demoKnobs(ROOT);
    const input = { ...runInput(repo, '', knobs), knobs: { ...knobs, baseWaitSeconds: 1 } };
    const tq = uniqueId('replay');
    const worker = await makeWorker(env, tq);
    const workflowId = uniqueId('demo-replay');
    const history = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, input, workflowId);
      await waitForStatus(handle, (s) => s.iteration >= 1 && s.agentRunning);
      await handle.executeUpdate(inputUpdate, { args: [{ directive: 'Keep the README short.', by: 'replay-test' }] });
      await waitForStatus(handle, (s) => s.iteration >= 4);
      await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'recording a pause', by: 'replay-test' }] });
      await waitForStatus(handle, (s) => s.paused && !s.agentRunning);
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'replay-test' }] });
      const outcome = await handle.result();
      expect(outcome.status).toBe('council_approved');
      return handle.fetchHistory();
    });
    await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, history, 'demo')).resolves.toBeUndefined();
    if (process.env.VIGIL_RECORD_HISTORY === '1') {
      // The official CLI's JSON export, the format the UI's download button gives too.
      const json = execFileSync(
        inject('temporalCli'),
        ['workflow', 'show', '--workflow-id', workflowId, '--address', inject('temporalAddress'), '--output', 'json'],
        { encoding: 'utf8' },
      );
      await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, JSON.parse(json), 'demo-json')).resolves.toBeUndefined();
      writeFileSync(path.join(HISTORIES, `demo-v${VERSION}.json`), json.endsWith('\n') ? json : `${json}\n`);
    }
  });

  it('replays a fresh recording of a rewound run', async () => {
    const repo = makeRepo();
    const step = (n: number) => ({ writes: { 'step.txt': `${n}\n` } });
    const scenario = writeScenario(repo, { version: 1, iterations: [step(1), step(2), step(3), { ...step(4), sleepMs: 2000 }, step(5)] });
    const tq = uniqueId('replay');
    const worker = await makeWorker(env, tq);
    const workflowId = uniqueId('rewind-replay');
    const history = await worker.runUntil(async () => {
      const handle = await startRun(env, tq, runInput(repo, scenario, { maxIterations: 4 }), workflowId);
      await waitForStatus(handle, (s) => s.iteration === 4 && s.agentRunning);
      await handle.executeUpdate(pauseUpdate, { args: [{ reason: 'recording a rewind', by: 'replay-test' }] });
      await waitForStatus(handle, (s) => s.paused && !s.agentRunning);
      await handle.executeUpdate(rewindUpdate, {
        args: [{ to: 2, by: 'replay-test', reason: 'back to 2', directive: 'Take another way.' }],
      });
      await handle.executeUpdate(resumeUpdate, { args: [{ by: 'replay-test' }] });
      const outcome = await handle.result();
      expect(outcome.status).toBe('max_iterations_reached');
      return handle.fetchHistory();
    });
    expect(history.events?.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'rewindRepo')).toBe(true);
    await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, history, 'rewind')).resolves.toBeUndefined();
    if (process.env.VIGIL_RECORD_HISTORY === '1') {
      const json = execFileSync(
        inject('temporalCli'),
        ['workflow', 'show', '--workflow-id', workflowId, '--address', inject('temporalAddress'), '--output', 'json'],
        { encoding: 'utf8' },
      );
      await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, JSON.parse(json), 'rewind-json')).resolves.toBeUndefined();
      writeFileSync(path.join(HISTORIES, `rewind-v${VERSION}.json`), json.endsWith('\n') ? json : `${json}\n`);
    }
  });

  it('replays a fresh recording of a run that continues as new: the execution that hands over its state packed, and the one that takes it', async () => {
    const repo = makeRepo();
    const step = (n: number) => ({ writes: { 'step.txt': `${n}\n` } });
    const scenario = writeScenario(repo, { version: 1, iterations: [step(1), step(2), step(3)] });
    const tq = uniqueId('replay');
    const worker = await makeWorker(env, tq);
    const histories = await worker.runUntil(async () => {
      const handle = await startRun(
        env,
        tq,
        runInput(repo, scenario, { maxIterations: 3, continueAsNewEvery: 2 }),
        uniqueId('carry-replay'),
      );
      const firstRunId = (await handle.describe()).runId;
      const outcome = await handle.result();
      expect(outcome.status).toBe('max_iterations_reached');
      const first = await env.client.workflow.getHandle(handle.workflowId, firstRunId).fetchHistory();
      return [first, await handle.fetchHistory()];
    });
    const [handing, taking] = histories as [(typeof histories)[number], (typeof histories)[number]];
    expect(handing.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
    const patches = (handing.events ?? []).map((e) =>
      Buffer.from(e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data ?? new Uint8Array()).toString('utf8'),
    );
    expect(patches.some((p) => p.includes('"vigil-packed-carry-v1"'))).toBe(true);
    await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, handing, 'carry-1')).resolves.toBeUndefined();
    await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, taking, 'carry-2')).resolves.toBeUndefined();
  });
});

/** The patch ids the workflow code declares (`export const X_PATCH = '...'`), read from its sources. */
function declaredPatchIds(): string[] {
  const ids: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts'))
        for (const m of readFileSync(p, 'utf8').matchAll(/\b[A-Z][A-Z0-9_]*_PATCH\s*=\s*'([^']+)'/g)) ids.push(m[1] as string);
    }
  };
  walk(path.join(ROOT, 'workflows'));
  return ids;
}

describe('replay of every era', () => {
  it('has a recorded history from before every patch the workflow declares, and every era fixture is in the table', () => {
    const declared = declaredPatchIds();
    expect(declared.length).toBeGreaterThan(10);
    const pinned = new Set(ERAS.filter((e) => e.fixtures.length > 0).map((e) => e.patch));
    expect(
      declared.filter((id) => !pinned.has(id)),
      'patch ids without a fixture in tests/replay/eras.ts',
    ).toEqual([]);
    const files = new Set(readdirSync(HISTORIES));
    const listed = eraFixtures().map(({ fixture }) => fixture.file);
    expect(
      listed.filter((f) => !files.has(f)),
      'fixtures named in eras.ts but missing from histories/',
    ).toEqual([]);
    expect(
      [...files].filter((f) => f.startsWith('before-') && !listed.includes(f)),
      'before-*.json files not in eras.ts',
    ).toEqual([]);
  });

  for (const { fixture, eras } of eraFixtures().filter(({ fixture }) => fixture.file.startsWith('before-'))) {
    it(`replays a run from before ${eras.map((e) => e.before).join(', ')}: ${fixture.pins} (${fixture.scenario}, ${fixture.commit})`, async () => {
      const history = JSON.parse(readFileSync(path.join(HISTORIES, fixture.file), 'utf8')) as { events?: Record<string, unknown>[] };
      // Recorded before the patch: its marker is nowhere in the history.
      expect(patchIds(history).filter((id) => eras.some((e) => e.patch === id))).toEqual([]);
      // Under the workflow id it ran as, where the history says it (a run's child workflows' ids derive from it).
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes as { workflowId?: string } | undefined;
      await expect(
        Worker.runReplayHistory({ workflowBundle: env.bundle }, history, started?.workflowId ?? fixture.file),
      ).resolves.toBeUndefined();
    });
  }
});

describe('the runs of this release, for the next one to replay', () => {
  it('every recording of the release is in the table, and the table names every one', () => {
    const files = readdirSync(HISTORIES).filter((f) => /^v\d+\.\d+\.\d+-/.test(f));
    expect(files.sort()).toEqual(RELEASE_FIXTURES.map((f) => f.file).sort());
  });

  for (const fixture of RELEASE_FIXTURES) {
    it(`${fixture.file} holds the markers it pins, as patched() records them: ${fixture.pins}`, () => {
      const history = JSON.parse(readFileSync(path.join(HISTORIES, fixture.file), 'utf8')) as { events?: Record<string, unknown>[] };
      const short = (id: string): string => id.replace(/^vigil-/, '').replace(/-v1$/, '');
      expect(patchIds(history).map(short)).toEqual(fixture.markers);
    });
  }
});
