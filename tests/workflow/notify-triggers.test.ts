/**
 * The notification triggers (rules/notify-triggers.ts) of a run as `vigil start` starts it
 * (`notifyTriggers` in its input), on a real Temporal server with the scripted agent and every
 * knob at the product's default, delivered to the file channel: the seed's rows quality-gate-fail
 * (on the gate's first failure, not the third), stuck-iteration (3 iterations without a change of
 * the tree) and sensitive-file. Each once per occasion. And the session-end HANDOFF.md in the run
 * folder, with the attempts it lists. The rows context-90 and compaction-freq with claude's
 * output (the fake claude CLI of examples/agents/fake-cli: its requests' usage, the model's window,
 * `compact_boundary` records). And the honest control: a run that changes ordinary files every
 * iteration and fails no gate tells nothing of the sort.
 *
 * Knobs this file changes, and why: the file channel (`notifyFile`, the behaviour under test), the
 * desktop channel off (no notify-send here: it would only report itself unavailable), and the
 * control's `maxIterations` (it ends the run instead of a stop, changing nothing of a pass). The
 * claude run is the loop alone (`loopInput`): the context facts are the builder's call's, and the
 * reviewing roles would be fake claude calls too, whose answers its scenario does not script.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopUpdate } from '../../workflows/messages.js';
import { patient } from '../support/patience.js';
import {
  assertBuilt,
  createTestEnv,
  loopInput,
  makeRepo,
  makeWorker,
  ROOT,
  runInput,
  startRun,
  status,
  uniqueId,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const BAD_SH = '#!/bin/sh\nif [ -f x ]; then\n  echo broken\n'; // no `fi`: bash -n fails

interface Line {
  event: string;
  title: string;
  message: string;
  severity: string;
  details: Record<string, unknown>;
  dedupeKey: string;
}
const lines = (file: string): Line[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line)
    : [];

async function until<T>(what: string, probe: () => T | null | undefined, ms: number): Promise<T> {
  const deadline = Date.now() + patient(ms);
  for (;;) {
    const v = probe();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const TRIGGERED = ['gate_failed', 'stuck', 'sensitive_file', 'context_high', 'compactions'];

describe('notification triggers, with the default knobs', () => {
  it(
    'seed rows quality-gate-fail (first failure), sensitive-file and stuck-iteration reach the file channel, once each',
    async () => {
      const repo = makeRepo();
      const notifyFile = path.join(repo, '..', `${path.basename(repo)}-notifications.jsonl`);
      // Iteration 1 writes a script that does not parse and a .env; then the agent talks and changes
      // nothing again (saying nothing at all would be an empty call, a failed one: rules/empty-call.ts).
      const scenario = writeScenario(repo, {
        version: 1,
        iterations: [{ writes: { 'scripts/deploy.sh': BAD_SH, '.env': 'DEBUG=1\n' } }],
        default: { output: 'Looked at the script again; nothing to change.\n' },
      });
      const tq = uniqueId('triggers');
      const worker = await makeWorker(env, tq);
      await worker.runUntil(async () => {
        const input = { ...runInput(repo, scenario, { notifyFile, notifyDesktop: false }), notifyTriggers: true };
        const handle = await startRun(env, tq, input);
        const stuck = await until('the stuck notification', () => lines(notifyFile).find((l) => l.event === 'stuck'), 180_000);
        await handle.executeUpdate(stopUpdate, { args: [{ by: 'tester', reason: 'seen' }] });
        await handle.result();
        const sent = lines(notifyFile);
        const gate = sent.filter((l) => l.event === 'gate_failed');
        // The static analysis gate failed at iteration 1 and stayed failing: told once, at its first failure.
        expect(gate.map((l) => l.details.gate)).toEqual(['static_analysis']);
        expect(gate[0]).toMatchObject({ severity: 'warning', details: { iteration: 1 } });
        expect(gate[0]?.dedupeKey).toMatch(/:gate_failed:static_analysis:1$/);
        expect(gate[0]?.message).toContain('scripts/deploy.sh');
        const sensitive = sent.filter((l) => l.event === 'sensitive_file');
        expect(sensitive).toHaveLength(1);
        expect(sensitive[0]).toMatchObject({ severity: 'critical', details: { paths: ['.env'], iteration: 1 } });
        // Iterations 2, 3 and 4 left the tree as iteration 1 made it.
        expect(stuck).toMatchObject({ details: { iteration: 4, consecutiveNoChange: 3 } });
        expect(sent.filter((l) => l.event === 'stuck')).toHaveLength(1);
        // The journal and status count what the run told (one line per delivery, the file the only channel).
        const s = await status(handle);
        expect(s.notifications.sent).toBe(sent.length);
        expect(s.notifications.failed).toBe(0);
        // The session-end handoff: in the run folder, how it ended and what was tried.
        const handoff = readFileSync(path.join(repo, '.vigil/runs', handle.workflowId, 'HANDOFF.md'), 'utf8');
        expect(handoff).toContain('The run has **ended**');
        expect(handoff).toContain('# Handoff: the run ended: stopped');
        expect(handoff).toMatch(/- iteration 1 \([^)]*\): exit 0; changed the tree/);
        expect(handoff).toMatch(/- iteration 4 \([^)]*\): exit 0; no change/);
      });
    },
    patient(300_000),
  );

  it(
    'the honest control: ordinary files changed every iteration, gates passing, nothing of the sort is told',
    async () => {
      const repo = makeRepo();
      const notifyFile = path.join(repo, '..', `${path.basename(repo)}-notifications.jsonl`);
      const scenario = writeScenario(repo, {
        version: 1,
        iterations: [
          { writes: { 'notes/one.md': '# One\n' } },
          { writes: { 'notes/two.md': '# Two\n' } },
          { writes: { 'notes/three.md': '# Three\n' } },
          { writes: { 'notes/four.md': '# Four\n' } },
        ],
        default: {},
      });
      const tq = uniqueId('triggers-honest');
      const worker = await makeWorker(env, tq);
      await worker.runUntil(async () => {
        const input = { ...runInput(repo, scenario, { notifyFile, notifyDesktop: false, maxIterations: 4 }), notifyTriggers: true };
        const handle = await startRun(env, tq, input);
        // However it ends (the cap, or a council that approves the notes): what matters is what it told.
        const outcome = await handle.result();
        expect(outcome.iteration).toBeGreaterThanOrEqual(3);
        const sent = lines(notifyFile);
        expect(sent.filter((l) => TRIGGERED.includes(l.event))).toEqual([]);
        // The channel works: the run's end reached it.
        expect(sent.map((l) => l.event)).toContain('run_finished');
      });
    },
    patient(240_000),
  );

  it(
    "seed rows context-90 and compaction-freq, from claude's output: the context 90 % full told at its call, the third compaction within the hour told once",
    async () => {
      const repo = makeRepo();
      const notifyFile = path.join(repo, '..', `${path.basename(repo)}-notifications.jsonl`);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-fake-cli-'));
      const window = { contextWindow: 200_000 };
      // Call 1: 1,000 + 185,000 cached of 200,000 (93 %) and two compactions; call 2: one more (the third); call 3: neither.
      const calls = [
        { writes: { 'a.txt': 'a\n' }, inputTokens: 1000, cacheReadTokens: 185_000, compactions: 2, ...window },
        { writes: { 'b.txt': 'b\n' }, inputTokens: 1000, compactions: 1, ...window },
        { writes: { 'c.txt': 'c\n' }, inputTokens: 1000, ...window },
      ];
      writeFileSync(path.join(dir, 'scenario.json'), JSON.stringify({ calls }));
      Object.assign(process.env, { FAKE_CLI_SCENARIO: path.join(dir, 'scenario.json'), FAKE_CLI_LOG: path.join(dir, 'calls.jsonl') });
      process.env.VIGIL_SANDBOX_WRITABLE = dir;
      const tq = uniqueId('triggers-claude');
      const worker = await makeWorker(env, tq);
      try {
        await worker.runUntil(async () => {
          const knobs = {
            provider: 'claude' as const,
            providerBreaker: false,
            tierLadder: false,
            maxIterations: 3,
            notifyFile,
            notifyDesktop: false,
          };
          const input = {
            ...loopInput(repo, '', { ...knobs, agentCommand: [path.join(ROOT, 'examples/agents/fake-cli/claude')] }),
            notifyTriggers: true,
          };
          const handle = await startRun(env, tq, input);
          await handle.result();
          const s = await status(handle);
          expect(s.recentIterations.map((r) => [r.iteration, r.compactions ?? 0])).toEqual([
            [1, 2],
            [2, 1],
            [3, 0],
          ]);
        });
      } finally {
        for (const k of ['FAKE_CLI_SCENARIO', 'FAKE_CLI_LOG', 'VIGIL_SANDBOX_WRITABLE']) delete process.env[k];
      }
      const sent = lines(notifyFile);
      const context = sent.filter((l) => l.event === 'context_high');
      expect(context).toHaveLength(1);
      expect(context[0]).toMatchObject({ severity: 'critical', details: { usedTokens: 186_000, windowTokens: 200_000, iteration: 1 } });
      expect(context[0]?.title).toBe("The agent's context is 93% full");
      const compacted = sent.filter((l) => l.event === 'compactions');
      expect(compacted).toHaveLength(1);
      expect(compacted[0]).toMatchObject({ details: { compactions: 3, iteration: 2 } });
    },
    patient(300_000),
  );
});
