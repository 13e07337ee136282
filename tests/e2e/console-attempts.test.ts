/**
 * The console's "pick an attempt" card in a real Chromium (playwright-core, as
 * tests/e2e/console.test.ts): a `vigil console` process and a `vigil worker` process against the
 * suite's server, and a supervised run with two attempts started with `vigil start --attempts 2`
 * (the scripted agent playing every role; tests/support/attempts.ts's scenarios: attempt 1 approved
 * with a review finding, attempt 2 approved clean). The comparison's council splits (one member
 * picks 1, one 2, one an attempt that does not exist), so the run waits for a person: the inbox
 * shows its card with a Pick button per attempt; "Pick attempt 1" delivers attempt 1 (the run ends
 * approved with it on the run's branch, picked by the console's operator). Attempt 1 is the one the
 * pick rule would not choose (it has a review finding, attempt 2 none), so only the person's pick can
 * have put it on the run's branch. A run with attempts that no worker serves (its task queue has
 * none) cannot say its status: the inbox says so, naming it, instead of leaving it out. What the
 * inbox says when the list itself fails: tests/unit/attempts-views.test.ts.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ResultPromise } from 'execa';
import type { AttemptsStatus } from '../../schemas/attempts.js';
import type { Outcome } from '../../schemas/run.js';
import type { ScenarioInput } from '../support/harness.js';
import { assertBuilt, git, ROOT, SCRIPTED_AGENT, temporalAddress, uniqueId, writePrd } from '../support/harness.js';
import { attemptsInput, attemptScenarios, attemptsRepo, CLEAN, FOUND } from '../support/attempts.js';
import { startConsoleProcess, runVigil, show, startWorkerProcess, waitUntil, type WorkerProcess } from './cli-helpers.js';
import { patient } from '../support/patience.js';

const CHROMIUM = process.env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';
const OPERATOR = 'console-picker';

let taskQueue: string;
let worker: WorkerProcess | undefined;
let connection: Connection | undefined;
let client: Client;
let browser: Browser | undefined;
const consoles: ResultPromise[] = [];
const started = new Set<string>();

const baseEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_NAMESPACE: 'default',
  VIGIL_TASK_QUEUE: taskQueue,
});

beforeAll(async () => {
  assertBuilt();
  execFileSync('bash', [path.join(ROOT, 'scripts/install-browser.sh')], { stdio: 'inherit', timeout: 600_000 });
  taskQueue = uniqueId('console-attempts');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: 'default' });
  // The scenarios' folder is readable in the sandbox (tests/support/attempts.ts), as an operator would set it.
  worker = await startWorkerProcess({ ...baseEnv(), VIGIL_SANDBOX_READABLE: process.env.VIGIL_SANDBOX_READABLE ?? '' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}, patient(900_000));

afterAll(async () => {
  if (connection)
    await Promise.all(
      [...started].map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('console attempts e2e cleanup')
          .catch(() => undefined),
      ),
    );
  await browser?.close();
  for (const c of consoles) c.kill('SIGTERM');
  await Promise.all(consoles.map((c) => c.catch(() => undefined)));
  await worker?.stop();
  await connection?.close();
});

/** The comparison's council splits: member 0 picks 1, member 1 picks 2, member 2 an attempt that does not exist. */
const SPLIT: NonNullable<ScenarioInput['roles']> = {
  council: {
    members: {
      '0': { default: { output: 'PICK: 1\nREASON: smaller change\n' } },
      '1': { default: { output: 'PICK: 2\nREASON: no findings\n' } },
      '2': { default: { output: 'PICK: 7\nREASON: confused\n' } },
    },
  },
};

it(
  "shows a supervised run whose council split in the inbox, and the card's Pick delivers that attempt",
  async () => {
    const c = await startConsoleProcess(['--port', '0', '--by', OPERATOR], baseEnv());
    consoles.push(c.child);
    const r = attemptsRepo();
    const runId = uniqueId('console-pick');
    started.add(runId);
    const knobs = ['maxIterations=5', 'baseWaitSeconds=1', 'backoffJitterSeconds=0', 'heartbeatTimeoutSeconds=5'].flatMap((k) => [
      '--set',
      k,
    ]);
    const prd = writePrd('# Feature\n\nsrc/feature.js exports feature = 1, and the tests pass.\n');
    const agent = `"${SCRIPTED_AGENT}" --scenario ${attemptScenarios(SPLIT, [FOUND, CLEAN])}`;
    const start = await runVigil(
      ['start', prd, '--repo', r, '--id', runId, '--attempts', '2', '--agent-command', agent, ...knobs, '--no-store'],
      baseEnv(),
    );
    expect(start.code, show(start)).toBe(0);
    const handle = client.workflow.getHandle(runId);
    // Ended instead of waiting is an answer too: the assertion below then says how it ended.
    const waiting = await waitUntil(
      'the run to wait for a pick',
      async () => {
        const s = await handle.query<AttemptsStatus>('attempts').catch(() => null);
        return s?.phase === 'waiting_for_pick' || s?.phase === 'ended' ? s : null;
      },
      600_000,
      500,
    );
    expect(waiting.phase, JSON.stringify(waiting.outcome)).toBe('waiting_for_pick');
    expect(waiting.comparison).toMatchObject({ split: true, pickFrom: [1, 2] });

    const page = await (browser as Browser).newPage({ viewport: { width: 1280, height: 1000 } });
    try {
      await page.goto(c.url);
      const card = page.locator(`article.card[data-run="${runId}"][data-kind="pick"]`);
      await card.waitFor({ timeout: patient(30_000) });
      // (Another file's run on the shared server may be unanswered; this one is not.)
      expect((await page.locator('#attempts-problem').allInnerTexts()).join(' ')).not.toContain(runId);
      expect(await card.locator('.kind').innerText()).toBe('pick an attempt');
      expect(await card.locator('.why').innerText()).toContain(`waiting for a person's pick: vigil pick ${runId} <1|2>`);
      // Both attempts, each with its outcome and a button.
      expect(await card.locator('#attempts-table tbody tr').count()).toBe(2);
      expect(await card.locator('button[data-attempt]').allInnerTexts()).toEqual(['Pick attempt 1', 'Pick attempt 2']);
      await page
        .screenshot({ path: path.join(ROOT, 'test-artifacts', 'console', 'inbox-pick.png'), fullPage: true })
        .catch(() => undefined);

      await card.locator('button[data-attempt="1"]').click();
      const ack = page.locator('#acks .ack').first();
      await ack.waitFor({ timeout: patient(30_000) });
      expect(await ack.getAttribute('data-ok'), (await ack.textContent()) ?? '').toBe('true');
      expect(await ack.innerText()).toContain(`attempt 1 picked by ${OPERATOR}`);

      const outcome = (await handle.result()) as Outcome;
      expect(outcome.status).toBe('council_approved');
      const s = await handle.query<AttemptsStatus>('attempts');
      expect(s.winner).toBe(1);
      expect(s.comparison).toMatchObject({ decidedBy: 'person', pickedBy: OPERATOR });
      expect(git(r, 'show', `vigil/${runId}:src/feature.js`)).toContain('The feature (with a finding)');
      // Delivered: the card leaves the inbox (polled every 3 s).
      await card.waitFor({ state: 'detached', timeout: patient(30_000) });
    } finally {
      await page.close();
    }
  },
  patient(900_000),
);

it(
  'says a run with attempts that no worker answers for could not be listed, naming it, instead of leaving it out',
  async () => {
    const c = await startConsoleProcess(['--port', '0', '--by', OPERATOR], baseEnv());
    consoles.push(c.child);
    const runId = uniqueId('console-unserved');
    started.add(runId);
    // A queue no worker polls: the run is running (visibility lists it), and nothing can answer its status.
    const r = attemptsRepo();
    await client.workflow.start('vigilAttempts', {
      taskQueue: uniqueId('nobody-polls'),
      workflowId: runId,
      args: [attemptsInput(r, attemptScenarios({}, [CLEAN, CLEAN]), 2)],
    });
    const page = await (browser as Browser).newPage();
    try {
      await page.goto(c.url);
      const problem = page.locator('#attempts-problem');
      await problem.waitFor({ timeout: patient(60_000) });
      expect(await problem.innerText()).toContain(`attempts could not be listed: ${runId}: `);
      // The rest of the inbox is there as ever.
      expect(await page.locator('#inbox').count()).toBe(1);
      expect(c.out()).toContain(`vigil console: attempts could not be listed: ${runId}`);
    } finally {
      await page.close();
    }
  },
  patient(120_000),
);
