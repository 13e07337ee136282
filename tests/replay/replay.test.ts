/**
 * Replay: the workflow code must replay every recorded history in `histories/` without a
 * determinism error, so a deploy can never strand a running run. The fixtures and what each pins
 * are in eras.ts: the runs of the release before this one (`RELEASE_FIXTURES`, `v<release>-*.json`,
 * which hold the marker of every deprecated patch where that release asked it), and, per live
 * patch, histories recorded just before it (`ERAS`, `before-<patch>*.json`). Each is replayed in a
 * test of its own; a history no table lists, a listed one that is missing, or a retired one left
 * behind fails the suite. Fixtures are never edited.
 *
 * The suite also records a fresh run of the demo scenario (a failed iteration, a claim blocked by
 * the evidence gate, a backoff timer, a directive, a pause, three council rounds and the devil's
 * advocate) and replays that, so the current code replays its own histories too, and a run
 * rewound from iteration 4 to 2 with a directive (checkpoints, the rewind update and its
 * activity), and a run that continues as new with its state packed. `VIGIL_RECORD_HISTORY=1`
 * saves the first two as `v<package version>-demo.json` and `-rewind.json` (the recordings a
 * release leaves for the next one; never over a file that exists).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
import { DEPRECATED_PATCHES, PATCH_IDS } from '../../workflows/run/eras.js';
import { commandSequence, patchIds } from './command-sequence.js';
import { eraFixtures, RELEASE_FIXTURES, RETIRED } from './eras.js';

const HISTORIES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'histories');

/** Saves a fresh recording as a fixture, never over one that exists (a fixture is never edited). */
function saveFixture(name: string, json: string): void {
  const file = path.join(HISTORIES, name);
  if (existsSync(file)) throw new Error(`${name} exists: a fixture is never edited (record at the release's tag, into a fresh name)`);
  writeFileSync(file, json.endsWith('\n') ? json : `${json}\n`);
}
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => env?.close());

describe('replay', () => {
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
      saveFixture(`v${VERSION}-demo.json`, json);
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
      saveFixture(`v${VERSION}-rewind.json`, json);
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
    // The carry's patch (vigil-packed-carry-v1), deprecated by 0.5.0, lost its call in 0.6.0: no marker where the run
    // continues as new (v0.5.0-carry-1.json holds it, deprecated, and replays without it).
    expect(patchIds(handing)).not.toContain('vigil-packed-carry-v1');
    await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, handing, 'carry-1')).resolves.toBeUndefined();
    await expect(Worker.runReplayHistory({ workflowBundle: env.bundle }, taking, 'carry-2')).resolves.toBeUndefined();
  });
});

type History = { events?: Record<string, unknown>[] };
const readHistory = (file: string): History => JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')) as History;
/** A patch id as the tables write it: `vigil-` and `-v1` left out. */
const short = (id: string): string => id.replace(/^vigil-/, '').replace(/-v1$/, '');
/** Replays `history` under the workflow id it ran as, where the history says it (a run's child workflows' ids derive from it). */
async function replay(history: History, fallback: string): Promise<void> {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes as { workflowId?: string } | undefined;
  await Worker.runReplayHistory({ workflowBundle: env.bundle }, history, started?.workflowId ?? fallback);
}

describe('the fixture tables', () => {
  it('list every history of histories/, each once, and no retired one is left', () => {
    const files = readdirSync(HISTORIES).filter((f) => f.endsWith('.json'));
    const listed = [...RELEASE_FIXTURES.map((f) => f.file), ...eraFixtures().map(({ fixture }) => fixture.file)];
    expect(new Set(listed).size, 'a fixture listed twice').toBe(listed.length);
    expect(
      files.filter((f) => !listed.includes(f)),
      'histories/ files no table lists',
    ).toEqual([]);
    expect(
      listed.filter((f) => !files.includes(f)),
      'fixtures listed but missing from histories/',
    ).toEqual([]);
    expect(
      RETIRED.map((r) => r.file).filter((f) => files.includes(f)),
      'retired fixtures still in histories/',
    ).toEqual([]);
  });

  it('hold the marker of every deprecated patch, each where the release before asked it, and live patches have their own', () => {
    const held = new Set(RELEASE_FIXTURES.flatMap((f) => f.markers));
    expect(
      DEPRECATED_PATCHES.map((p) => short(p.id)).filter((id) => !held.has(id)),
      'deprecated patches whose marker no recording of the release before holds',
    ).toEqual([]);
    const pinned = new Set(eraFixtures().flatMap(({ eras }) => eras.map((e) => e.patch)));
    expect(
      PATCH_IDS.filter((id) => !pinned.has(id)),
      'live patches without a fixture from before them',
    ).toEqual([]);
  });
});

describe('replay of the runs of the release before', () => {
  for (const fixture of RELEASE_FIXTURES) {
    it(`replays ${fixture.file}: ${fixture.pins} (${fixture.source} at ${fixture.release})`, async () => {
      const history = readHistory(fixture.file);
      const lines = commandSequence(history).filter((l) => l.startsWith('MarkerRecorded patch '));
      const ids = (deprecated: boolean) =>
        lines.filter((l) => l.endsWith(' (deprecated)') === deprecated).map((l) => short(l.split(' ')[2] as string));
      // Asked with patched() by the release before: the markers the table says, in that order.
      expect(ids(false)).toEqual(fixture.markers);
      // Asked with deprecatePatch() by the release before: patches whose calls this release deleted (none live or deprecated here).
      const asked = [...PATCH_IDS, ...DEPRECATED_PATCHES.map((p) => p.id)].map(short);
      expect(ids(true).filter((id) => asked.includes(id))).toEqual([]);
      await expect(replay(history, fixture.file)).resolves.toBeUndefined();
    });
  }
});

// Per live patch, its runs from before it (none in 0.5.0, where every patch of 0.4.0 was deprecated).
const liveEraFixtures = eraFixtures();
if (liveEraFixtures.length > 0)
  describe('replay of every live era', () => {
    for (const { fixture, eras } of liveEraFixtures) {
      it(`replays a run from before ${eras.map((e) => e.before).join(', ')}: ${fixture.pins} (${fixture.scenario}, ${fixture.commit})`, async () => {
        const history = readHistory(fixture.file);
        // Recorded before the patch: its marker is nowhere in the history.
        expect(patchIds(history).filter((id) => eras.some((e) => e.patch === id))).toEqual([]);
        await expect(replay(history, fixture.file)).resolves.toBeUndefined();
      });
    }
  });
