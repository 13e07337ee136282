/**
 * The console's inbox lists the notifications nobody has acknowledged, in a real Chromium
 * (playwright-core, as tests/e2e/console.test.ts): a `vigil console` process against the suite's
 * server and a real Postgres holding two runs' journals, projected by the worker's own projection
 * (`projectEventsTo`), as a worker writes them when runs notify. "Acknowledge" on one run's card
 * acknowledges its notifications (as the console's operator, in the store) and the section no
 * longer lists them; "Acknowledge all" empties it; `vigil notifications` then says none is new.
 *
 * And a run's page lists what that run told people, new or acknowledged: a run started with
 * `vigil start` (every knob at its default but the file channel and the iteration cap) on a
 * `vigil worker` journaling into the same store, whose first iteration leaves a script that does
 * not parse: the static analysis gate's first failure is told (`gate_failed`), then the run's end.
 * "Acknowledge" on the run page acknowledges them as the console's operator.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { ResultPromise } from 'execa';
import pg from 'pg';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeEventStore, projectEventsTo } from '../../lib/event-store.js';
import { EventEnvelopeSchema, type EventEnvelope, type RunEvent } from '../../schemas/events.js';
import { assertBuilt, makeRepo, ROOT, SCRIPTED_AGENT, temporalAddress, uniqueId, writePrd, writeScenario } from '../support/harness.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { patient } from '../support/patience.js';
import { startConsoleProcess, runVigil, show, startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';

const CHROMIUM = process.env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';

let tp: TestPostgres;
let url = '';
let browser: Browser | undefined;
let consoleProc: ResultPromise | undefined;
let consoleUrl = '';
let worker: WorkerProcess | undefined;

const T0 = Date.parse('2026-11-02T09:00:00.000Z');
const envelopes = (runId: string, events: [number, RunEvent][]): EventEnvelope[] =>
  events.map(([minutes, event], i) =>
    EventEnvelopeSchema.parse({ seq: i + 1, runId, at: new Date(T0 + minutes * 60_000).toISOString(), event }),
  );

const env = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: 'default',
  VIGIL_TASK_QUEUE: uniqueId('console-notifications'),
  DATABASE_URL: url,
});

beforeAll(async () => {
  assertBuilt();
  execFileSync('bash', [path.join(ROOT, 'scripts/install-browser.sh')], { stdio: 'inherit', timeout: 600_000 });
  tp = await startTestPostgres();
  url = await tp.freshDatabase('console_notifications');
  const budget = envelopes('r-budget', [
    [
      2,
      {
        kind: 'notification',
        event: 'budget_warning',
        delivered: 1,
        failed: 0,
        title: 'Budget at 80%: $0.80 of $1.00',
        severity: 'warning',
      },
    ],
    [
      4,
      { kind: 'notification', event: 'budget_exceeded', delivered: 0, failed: 1, title: 'Budget exceeded: paused', severity: 'critical' },
    ],
  ]);
  const escalated = envelopes('r-escalated', [
    [
      3,
      {
        kind: 'notification',
        event: 'escalation',
        delivered: 1,
        failed: 0,
        title: 'The run asks a person: which date format?',
        severity: 'critical',
      },
    ],
  ]);
  expect((await projectEventsTo(url, { workflowId: 'run-budget', events: budget })).problem).toBeNull();
  expect((await projectEventsTo(url, { workflowId: 'run-escalated', events: escalated })).problem).toBeNull();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const c = await startConsoleProcess(['--port', '0', '--by', 'console-tester'], env());
  consoleProc = c.child;
  consoleUrl = c.url;
}, patient(900_000));

afterAll(async () => {
  await worker?.stop();
  await browser?.close();
  consoleProc?.kill('SIGTERM');
  await closeEventStore();
  await tp?.cleanup();
});

it(
  "lists the notifications nobody acknowledged, and acknowledges a run's, then all, as the console's operator",
  async () => {
    const page = await browser!.newPage();
    try {
      await page.goto(consoleUrl);
      const section = page.locator('#notifications');
      await section.getByText('3 new notifications').waitFor({ timeout: patient(15_000) });
      const budgetCard = section.locator('article[data-run="run-budget"]');
      expect(await budgetCard.locator('li').allInnerTexts()).toEqual([
        expect.stringContaining('budget_exceeded (critical): Budget exceeded: paused — 0 delivered, 1 failed'),
        expect.stringContaining('budget_warning (warning): Budget at 80%: $0.80 of $1.00 — delivered to 1 channel(s)'),
      ]);
      await expect(section.locator('article[data-run="run-escalated"] li').innerText()).resolves.toContain(
        'escalation (critical): The run asks a person: which date format?',
      );

      await budgetCard.getByRole('button', { name: 'Acknowledge' }).click();
      await section.getByText('1 new notification.').waitFor({ timeout: patient(15_000) });
      expect(await section.locator('article[data-run="run-budget"]').count()).toBe(0);
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        expect((await db.query('select workflow_id, acked_by from notification_acks')).rows).toEqual([
          { workflow_id: 'run-budget', acked_by: 'console-tester' },
        ]);
      } finally {
        await db.end();
      }

      await section.getByRole('button', { name: 'Acknowledge all' }).click();
      await page.locator('#notifications-none').waitFor({ timeout: patient(15_000) });
      expect(await page.locator('#notifications-none').innerText()).toContain('No new notification (3 acknowledged');
      const cli = await runVigil(['notifications', '--new'], env());
      expect(cli.code).toBe(0);
      expect(cli.stdout.trimEnd()).toBe('3 notification(s), 0 not acknowledged\nnone new');
    } finally {
      await page.close();
    }
  },
  patient(120_000),
);

it(
  "a run's page lists what it told people, new and acknowledged, and acknowledges them (seed: notifications kept for acknowledgement)",
  async () => {
    const tq = uniqueId('console-run-notifications');
    const runEnv = { ...env(), VIGIL_TASK_QUEUE: tq };
    worker = await startWorkerProcess(runEnv);
    const repo = makeRepo();
    const notifyFile = path.join(repo, '..', `${path.basename(repo)}-notifications.jsonl`);
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [{ writes: { 'scripts/deploy.sh': '#!/bin/sh\nif [ -f x ]; then\n  echo broken\n' } }],
      default: {},
    });
    const id = uniqueId('run-told');
    const started = await runVigil(
      [
        'start',
        writePrd(),
        '--repo',
        repo,
        '--agent-command',
        `${SCRIPTED_AGENT} --scenario ${scenario}`,
        '--id',
        id,
        '--set',
        `notifyFile=${notifyFile}`,
        // No notify-send here: the desktop channel would only report itself unavailable.
        '--set',
        'notifyDesktop=false',
        '--set',
        'maxIterations=2',
        '--set',
        'heartbeatTimeoutSeconds=5',
        '--set',
        'baseWaitSeconds=1',
      ],
      runEnv,
    );
    expect(started.code, show(started)).toBe(0);
    // The run's end is journaled last: then every notification of the run is in the store.
    await waitUntil(
      'the run to finish and its notifications to reach the store',
      async () => {
        const r = await runVigil(['notifications', '--run', id, '--json'], runEnv);
        const list = JSON.parse(r.stdout) as { notifications: { event: string }[] };
        return list.notifications.some((n) => n.event === 'run_finished') ? list : null;
      },
      180_000,
      1000,
    );
    const page = await browser!.newPage();
    try {
      await page.goto(`${consoleUrl}runs/${encodeURIComponent(id)}`);
      const section = page.locator('#run-notifications');
      await section.waitFor({ timeout: patient(15_000) });
      const gate = section.locator('li[data-event="gate_failed"]');
      expect(await gate.getAttribute('data-acknowledged')).toBe('no');
      expect(await gate.innerText()).toMatch(/new .*gate_failed \(warning\): Quality gate static analysis failed at iteration 1/);
      expect(await section.locator('li[data-event="run_finished"]').getAttribute('data-acknowledged')).toBe('no');
      const total = await section.locator('li').count();
      await expect(section.locator('.notifications-head').innerText()).resolves.toContain(`${total} notifications, ${total} new.`);

      await section.getByRole('button', { name: 'Acknowledge' }).click();
      await section
        .locator('li[data-acknowledged="yes"]')
        .nth(total - 1)
        .waitFor({ timeout: patient(15_000) });
      expect(await section.locator('li[data-acknowledged="no"]').count()).toBe(0);
      expect(await gate.innerText()).toContain('acknowledged by console-tester');
      expect(await section.getByRole('button', { name: 'Acknowledge' }).count()).toBe(0);
      const cli = await runVigil(['notifications', '--run', id], runEnv);
      expect(cli.stdout.split('\n')[0]).toBe(`${total} notification(s) of ${id}, 0 not acknowledged`);
    } finally {
      await page.close();
    }
  },
  patient(300_000),
);
