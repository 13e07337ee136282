/**
 * Vigil's own metrics on a worker's endpoint, as Prometheus scrapes them: a `vigil worker
 * --metrics-bind` process against the suite's dev server, one run with the product's default knobs
 * that fails an iteration, then passes its gates, code review, checklist and council, and a second
 * run paused for a person. The endpoint is scraped while the second run waits: every Vigil series
 * (runs by status, runs waiting for a person and for how long, iterations by outcome, agent call
 * duration by provider and role, spend and tokens, gate and review results, council rounds, the
 * worker's readiness and last task) is checked against what the runs did, next to the SDK's own
 * metrics; /healthz and /readyz answer; the worker logs one structured line per agent call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { pauseUpdate, stopUpdate } from '../../workflows/messages.js';
import { freePort } from '../../workers/dev-server.js';
import {
  assertBuilt,
  createTestEnv,
  loopInput,
  makeRepo,
  NAMESPACE,
  runInput,
  startRun,
  temporalAddress,
  uniqueId,
  waitForStatus,
  writeScenario,
  type ScenarioInput,
  type TestEnv,
} from '../support/harness.js';
import { startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';

let env: TestEnv;
let worker: WorkerProcess;
let base = '';
const TQ = uniqueId('vigil-metrics');
const startedAt = Date.now();

beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  worker = await startWorkerProcess(
    {
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_NAMESPACE: NAMESPACE,
      VIGIL_TASK_QUEUE: TQ,
      VIGIL_HOME: mkdtempSync(path.join(os.tmpdir(), 'vigil-home-')),
    },
    90_000,
    ['--metrics-bind', `127.0.0.1:${port}`],
  );
});

afterAll(async () => {
  await worker?.stop();
  await env?.close();
});

/** Prometheus text as samples: `name{labels} value` lines (comments skipped). */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of the samples named `name` that carry every label in `labels`; null when none does. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number | null {
  const hit = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hit.length ? hit.reduce((a, s) => a + s.value, 0) : null;
}

const scrape = async (): Promise<{ text: string; samples: Sample[]; type: string | null }> => {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, samples: parseSamples(text), type: res.headers.get('content-type') };
};

const usage = (costUsd: number) => ({ '.vigil/signals/USAGE': JSON.stringify({ costUsd, inputTokens: 1000, outputTokens: 200 }) });
const vote = { output: 'Read the evidence.\nVOTE: APPROVE\nREASON: the feature is there and tested\n', writes: usage(0.01) };

/** A failed iteration, then the feature with a claim; every reviewing role answers in its format and approves. */
const FULL: ScenarioInput = {
  version: 1,
  iterations: [
    { stderr: 'fatal: the build tool crashed\n', exitCode: 1, writes: usage(0.05) },
    { writes: { 'src/feature.js': '/** The feature. */\nexport const feature = 1;\n', ...usage(0.25) }, claim: 'file' },
  ],
  roles: {
    checklist: {
      default: {
        output:
          '```json\n[{"id": "REQ-1", "title": "The feature exists in src/feature.js", "priority": "critical", "verify": "read src/feature.js"}]\n```\n',
      },
    },
    'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - src/feature.js has it\n' } },
    reviewer: { default: { output: 'Reviewed the diff.\nVERDICT: PASS\n' } },
    'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
    council: { default: vote },
  },
};

const REPO_FILES = {
  'README.md': '# sample\n\nA sample project.\n',
  'src/index.js': '/** Entry point. */\nexport const name = "sample";\n',
  'package.json': '{"name":"sample","type":"module","private":true,"scripts":{"test":"node --test"}}\n',
  'test/index.test.js':
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { name } from " +
    "'../src/index.js';\ntest('name', () => assert.equal(name, 'sample'));\n",
};

const CallLine = z.object({
  runId: z.string(),
  workflowId: z.string().nullable(),
  iteration: z.number().int(),
  role: z.string(),
  provider: z.string(),
  model: z.string().nullable(),
  exitCode: z.number().int().nullable(),
  outcome: z.string(),
  durationMs: z.number().min(0),
  costUsd: z.number().nullable(),
  attempt: z.number().int().nullable(),
});

describe('the worker metrics endpoint', () => {
  it('answers /healthz and /readyz, with the time of the last task', async () => {
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', pid: worker.pid });
    const ready = await waitUntil(
      'the worker to be ready',
      async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : null),
      30_000,
      250,
    );
    expect(ready).toBe(true);
    const body = (await (await fetch(`${base}/readyz`)).json()) as {
      ready: boolean;
      workers: { taskQueue: string; state: string; activityPoller: string }[];
      lastTaskAt: string | null;
    };
    expect(body.ready).toBe(true);
    // The shared queue and this machine's host queue, both polled.
    expect(body.workers.map((w) => w.taskQueue)[0]).toBe(TQ);
    expect(body.workers).toHaveLength(2);
    for (const w of body.workers) expect(w).toMatchObject({ state: 'RUNNING', activityPoller: 'POLLING' });
    expect((await fetch(`${base}/nothing`)).status).toBe(404);
  });

  it('carries every Vigil series during a run, derived from the runs and their calls, beside the SDK metrics', async () => {
    // A run as users get it: failed iteration, then gates, checklist, code review and council all pass.
    const repo = makeRepo({ files: REPO_FILES });
    const full = await startRun(env, TQ, runInput(repo, writeScenario(repo, FULL)), uniqueId('metrics-full'));
    const outcome = (await full.result()) as { status: string };
    expect(outcome.status).toBe('council_approved');

    // A run waiting for a person. Only its pause matters here, so the completion machinery is off
    // (loopInput); its agent keeps working without a change until the pause lands.
    const idleRepo = makeRepo();
    const idle = await startRun(
      env,
      TQ,
      loopInput(idleRepo, writeScenario(idleRepo, { version: 1, iterations: [], default: { sleepMs: 300, output: 'looking\n' } })),
      uniqueId('metrics-waiting'),
    );
    try {
      await idle.executeUpdate(pauseUpdate, { args: [{ reason: 'a person looks at it', by: 'alice' }] });
      await waitForStatus(idle, (s) => s.status === 'paused', 30_000);

      // The run gauges are cached for a few seconds: scrape until the paused run shows.
      const { samples, text, type } = await waitUntil(
        'the paused run in the run gauges',
        async () => {
          const s = await scrape();
          return (total(s.samples, 'vigil_run_waiting_for_person_seconds', { workflow_id: idle.workflowId }) ?? -1) >= 0 ? s : null;
        },
        30_000,
        500,
      );
      expect(type).toContain('text/plain');

      // Runs by Vigil status, and waiting for a person (the full run has finished: no longer open).
      expect(total(samples, 'vigil_runs', { status: 'paused' })).toBeGreaterThanOrEqual(1);
      expect(total(samples, 'vigil_runs', { status: 'running' })).not.toBeNull();
      expect(total(samples, 'vigil_runs_waiting_for_person', { paused_by: 'person' })).toBeGreaterThanOrEqual(1);
      expect(total(samples, 'vigil_runs_waiting_for_person', { paused_by: 'vigil' })).not.toBeNull();
      expect(total(samples, 'vigil_runs_waiting_for_person_longest_seconds')).toBeGreaterThanOrEqual(0);
      expect(total(samples, 'vigil_run_waiting_for_person_seconds', { workflow_id: idle.workflowId, paused_by: 'person' })).toBeLessThan(
        120,
      );
      expect(total(samples, 'vigil_open_runs_spend_usd')).not.toBeNull();
      // The namespace is the suite's: another file's run whose worker was killed on purpose is
      // rightly unreadable here. This file's runs were read (the waiting gauges above come from
      // the paused run's status query); the count itself is tested in worker-metrics.test.ts.
      expect(total(samples, 'vigil_runs_unreadable')).toBeGreaterThanOrEqual(0);

      // Iterations by outcome: one failed, one succeeded (the zero series are there for the rest).
      expect(total(samples, 'vigil_iterations_total', { outcome: 'failed' })).toBe(1);
      expect(total(samples, 'vigil_iterations_total', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
      expect(total(samples, 'vigil_iterations_total', { outcome: 'timed_out' })).toBe(0);

      // Agent calls and their duration by provider and role, including the in-process round members.
      for (const role of ['iteration', 'council', 'reviewer', 'checklist']) {
        expect(total(samples, 'vigil_agent_calls_total', { provider: 'command', role }), role).toBeGreaterThanOrEqual(1);
        expect(total(samples, 'vigil_agent_call_duration_seconds_count', { provider: 'command', role }), role).toBeGreaterThanOrEqual(1);
        expect(
          total(samples, 'vigil_agent_call_duration_seconds_bucket', { provider: 'command', role, le: '+Inf' }),
          role,
        ).toBeGreaterThanOrEqual(1);
      }
      expect(total(samples, 'vigil_agent_calls_total', { provider: 'command', role: 'iteration', outcome: 'failed' })).toBe(1);
      expect(
        total(samples, 'vigil_agent_calls_total', { provider: 'command', role: 'council', outcome: 'succeeded' }),
      ).toBeGreaterThanOrEqual(3);

      // Spend and tokens, as the calls reported them: 0.05 + 0.25 for the builder, 0.01 per member.
      expect(total(samples, 'vigil_agent_spend_usd_total', { provider: 'command', role: 'iteration' })).toBeCloseTo(0.3, 6);
      expect(total(samples, 'vigil_agent_spend_usd_total', { provider: 'command', role: 'council' })).toBeCloseTo(
        0.01 * (total(samples, 'vigil_agent_calls_total', { provider: 'command', role: 'council' }) ?? 0),
        6,
      );
      expect(total(samples, 'vigil_agent_tokens_total', { provider: 'command', role: 'iteration', kind: 'input' })).toBe(2000);
      expect(total(samples, 'vigil_agent_unpriced_calls_total', { provider: 'command', role: 'reviewer' })).toBeGreaterThanOrEqual(1);

      // Gate and review results, council rounds.
      const gates = samples.filter((s) => s.name === 'vigil_gate_results_total');
      expect(gates.length, text.slice(0, 3000)).toBeGreaterThan(0);
      expect(total(samples, 'vigil_gate_results_total', { gate: 'tests', verdict: 'pass' })).toBeGreaterThanOrEqual(1);
      expect(total(samples, 'vigil_gate_results_total', { gate: 'doc_coverage' })).toBeGreaterThanOrEqual(1);
      expect(total(samples, 'vigil_review_rounds_total', { result: 'pass' })).toBeGreaterThanOrEqual(1);
      expect(total(samples, 'vigil_reviewer_verdicts_total', { verdict: 'PASS' })).toBeGreaterThanOrEqual(1);
      expect(total(samples, 'vigil_council_rounds_total', { result: 'APPROVED' })).toBeGreaterThanOrEqual(1);

      // The worker: ready, and its last task during this test.
      expect(total(samples, 'vigil_worker_ready')).toBe(1);
      expect(total(samples, 'vigil_worker_last_task_timestamp_seconds')).toBeGreaterThan(startedAt / 1000);
      // The SDK's own metrics on the same endpoint.
      expect(
        total(samples, 'temporal_activity_execution_latency_count', { activity_type: 'runAgent', task_queue: TQ }),
      ).toBeGreaterThanOrEqual(1);

      const ready = (await (await fetch(`${base}/readyz`)).json()) as { lastTaskAt: string | null; lastTaskAgeSeconds: number | null };
      expect(Date.parse(ready.lastTaskAt ?? '')).toBeGreaterThan(startedAt);
      expect(ready.lastTaskAgeSeconds).toBeLessThan(120);

      // One structured line per agent call, with the run, iteration, role, provider, exit code, duration and cost.
      const calls = worker
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('agent call {'))
        .map((l) => CallLine.parse(JSON.parse(l.slice('agent call '.length))))
        .filter((c) => c.runId === full.workflowId);
      expect(calls.find((c) => c.role === 'iteration' && c.iteration === 1)).toMatchObject({
        provider: 'command',
        exitCode: 1,
        outcome: 'failed',
        costUsd: 0.05,
      });
      expect(calls.find((c) => c.role === 'iteration' && c.iteration === 2)).toMatchObject({
        exitCode: 0,
        outcome: 'succeeded',
        costUsd: 0.25,
      });
      expect(calls.filter((c) => c.role === 'council').length).toBe(
        total(samples, 'vigil_agent_calls_total', { provider: 'command', role: 'council' }),
      );
      expect(calls.every((c) => c.workflowId === full.workflowId && c.durationMs >= 0)).toBe(true);
    } finally {
      await idle.executeUpdate(stopUpdate, { args: [{ now: true, reason: 'test over', by: 'test' }] }).catch(() => undefined);
    }
  });
});
