/**
 * The operator console end to end, in a real Chromium (Debian's `chromium`, installed by
 * scripts/install-browser.sh when missing, driven by playwright-core): a `vigil console` process
 * and a `vigil worker` process against the suite's server, and one supervised run of the scripted
 * agent started with `vigil start`. The run asks for a person; the inbox shows it with its handoff;
 * a directive typed in the page and "Send and resume" reach the next prompt; the run exhausts its
 * budget; a checklist item is waived and the budget raised from the inbox (a bad amount is shown
 * refused); the run page draws the charts with the run's numbers, shows the timeline, the
 * directives with who sent them and the live agent log; "Rewind here" restores the tree of
 * checkpoint 1; Stop ends the run, whose page then shows its end (its outcome, not the pause it
 * was in; its handoff folded away). A second run, of a command agent that reports no cost, ends on
 * its iteration cap: its cost reads as unpriced, never $0.00; the runs list shows each run's
 * outcome (not Temporal's `completed`) and its status filter picks runs by outcome. A console bound to a non-loopback address refuses a request
 * without its token; a loopback one refuses a foreign Host. Screenshots of the inbox and the run
 * page are kept under test-artifacts/console/ (the test prints where).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { ResultPromise } from 'execa';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusSnapshot } from '../../schemas/status.js';
import type { ChartData } from '../../cli/console/model.js';
import { assertBuilt, makeRepo, ROOT, SCRIPTED_AGENT, temporalAddress, uniqueId, writePrd, writeScenario } from '../support/harness.js';
import {
  startConsoleProcess,
  type ConsoleProcess,
  runVigil,
  show,
  startWorkerProcess,
  waitUntil,
  type WorkerProcess,
} from './cli-helpers.js';
import { patient } from '../support/patience.js';

const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'console');
const OPERATOR = 'console-tester';
const CHROMIUM = process.env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';

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
const query = (id: string): Promise<StatusSnapshot> => client.workflow.getHandle(id).query<StatusSnapshot>('status');

/** Starts `vigil console ARGS` and resolves with what it printed once it serves. */
async function startConsole(args: string[], env: Record<string, string> = {}): Promise<ConsoleProcess> {
  const c = await startConsoleProcess(args, { ...baseEnv(), ...env });
  consoles.push(c.child);
  return c;
}

/** A plain HTTP request to the console (any Host header). */
function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

beforeAll(async () => {
  assertBuilt();
  // The browser, on a fresh machine: Debian's chromium through apt (the project's own script).
  execFileSync('bash', [path.join(ROOT, 'scripts/install-browser.sh')], { stdio: 'inherit', timeout: 600_000 });
  mkdirSync(ARTIFACTS, { recursive: true });
  console.log(`console screenshots: ${ARTIFACTS}`);
  taskQueue = uniqueId('console-e2e');
  connection = await Connection.connect({ address: temporalAddress() });
  client = new Client({ connection, namespace: 'default' });
  worker = await startWorkerProcess(baseEnv());
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}, patient(900_000));

afterAll(async () => {
  if (connection)
    await Promise.all(
      [...started].map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('console e2e cleanup')
          .catch(() => undefined),
      ),
    );
  await browser?.close();
  for (const c of consoles) c.kill('SIGTERM');
  await Promise.all(consoles.map((c) => c.catch(() => undefined)));
  await worker?.stop();
  await connection?.close();
});

const usage = (usd: number): string => JSON.stringify({ costUsd: usd, inputTokens: 1000, outputTokens: 100, model: 'scripted' });
const ASK = JSON.stringify({ reason: 'Which database should the cache use?', blocking: true, questions: ['Postgres or SQLite?'] });

/** The ack the last action printed (the newest is first). */
async function lastAck(page: Page, previous: number): Promise<{ ok: boolean; text: string }> {
  // (a locator, not waitForFunction: the page's Content-Security-Policy forbids evaluating strings)
  await expect.poll(() => page.locator('#acks .ack').count(), { timeout: patient(60_000) }).toBeGreaterThan(previous);
  const ack = page.locator('#acks .ack').first();
  return { ok: (await ack.getAttribute('data-ok')) === 'true', text: (await ack.textContent()) ?? '' };
}
const ackCount = (page: Page): Promise<number> => page.locator('#acks .ack').count();

describe('vigil console', () => {
  it('answers a run that waits for a person from the inbox and the run page', async () => {
    const { url } = await startConsole(['--port', '0', '--by', OPERATOR]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const repo = makeRepo();
    const scenario = writeScenario(repo, {
      version: 1,
      iterations: [
        { writes: { 'a.txt': 'a\n', '.vigil/signals/USAGE': usage(0.3) }, output: 'agent: wrote a.txt\n' },
        {
          writes: { 'b.txt': 'b\n', '.vigil/signals/USAGE': usage(0.3), '.vigil/signals/HUMAN_REVIEW_NEEDED': ASK },
          output: 'agent: asking a person\n',
        },
        { writes: { 'c.txt': 'c\n', '.vigil/signals/USAGE': usage(0.5) }, output: 'agent: wrote c.txt\n' },
        {
          writes: { 'd.txt': 'd\n', '.vigil/signals/USAGE': usage(0.1), '.vigil/signals/HUMAN_REVIEW_NEEDED': ASK },
          output: 'agent: iteration four, \u001b[2Jasking again\n',
        },
      ],
      default: { output: 'looked; nothing to change\n' },
    });
    const checklist = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-checklist-')), 'checklist.json');
    writeFileSync(
      checklist,
      JSON.stringify([
        { id: 'REQ-1', title: 'The cache stores entries' },
        { id: 'REQ-2', title: 'The cache expires entries' },
      ]),
    );
    const id = uniqueId('console-run');
    started.add(id);
    const r = await runVigil(
      [
        'start',
        writePrd(),
        '--repo',
        repo,
        '--agent-command',
        `${SCRIPTED_AGENT} --scenario ${scenario}`,
        '--checklist',
        checklist,
        '--id',
        id,
        '--set',
        'autonomyMode=supervised',
        '--set',
        'budgetUsd=1',
        '--set',
        'maxIterations=10',
        // What the console is tested for is the inbox, the messages and the pages: the council, the
        // tool gates and the code review would only add agent calls (no claim is made here).
        '--set',
        'councilEnabled=false',
        '--set',
        'qualityGates=false',
        '--set',
        'codeReview=false',
        '--set',
        'heartbeatTimeoutSeconds=5',
        '--set',
        'baseWaitSeconds=1',
        '--set',
        'backoffJitterSeconds=0',
        // A question that stops the run if nobody answers in 3 days: the inbox card says so.
        '--set',
        'escalationDeadline=3d',
      ],
      baseEnv(),
    );
    expect(r.code, show(r)).toBe(0);
    await waitUntil('the run to ask for a person', async () => (await query(id)).pause?.reason.startsWith('escalation'), 90_000, 250);

    const page = await (browser as Browser).newPage({ viewport: { width: 1280, height: 1000 } });
    const card = page.locator(`article.card[data-run="${id}"]`);
    // --- the inbox: why, since when, cost, iteration, the handoff
    await page.goto(url);
    await card.waitFor({ timeout: patient(30_000) });
    await expect
      .poll(async () => card.locator('.handoff-text').textContent(), { timeout: patient(30_000) })
      .toContain('Postgres or SQLite?');
    expect(await card.getAttribute('data-kind')).toBe('escalation');
    const cardText = (await card.textContent()) ?? '';
    expect(cardText).toContain('Which database should the cache use?');
    expect(cardText).toContain('escalated to a person');
    expect(cardText).toMatch(/iteration\s*2 of at most 10/);
    expect(cardText).toContain('$0.60');
    expect(cardText).toMatch(/if nobody answers\s*(reminder in 4 h; )?stops in 72 h/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'inbox.png'), fullPage: true });

    // --- a directive typed in the page, sent with the resume
    const directive = 'Use SQLite for the cache (answered from the console)';
    let n = await ackCount(page);
    await card.locator('textarea[name=directive]').fill(directive);
    await card.getByRole('button', { name: 'Send and resume' }).click();
    let ack = await lastAck(page, n);
    expect(ack.ok, ack.text).toBe(true);
    expect(ack.text).toMatch(/input: .*resume: /);

    // Iteration 3 takes the run over its budget: it pauses for a person again.
    const budgetPause = await waitUntil(
      'the budget pause',
      async () => {
        const s = await query(id);
        return s.pause?.reason.startsWith('budget exceeded') ? s : null;
      },
      90_000,
      250,
    );
    expect(budgetPause.iteration).toBe(3);
    const runDir = path.join(repo, '.vigil/runs', id);
    expect(readFileSync(path.join(runDir, 'iteration-0003.prompt.md'), 'utf8')).toContain(directive);
    await expect.poll(async () => card.getAttribute('data-kind'), { timeout: patient(30_000) }).toBe('budget');

    // --- a waiver, a refused amount, then the budget raised (and resumed)
    n = await ackCount(page);
    await card.locator('select[name=item]').selectOption('REQ-1');
    await card.locator('form.waive input[name=reason]').fill('covered by hand');
    await card.getByRole('button', { name: 'Waive' }).click();
    ack = await lastAck(page, n);
    expect(ack.ok, ack.text).toBe(true);
    expect(ack.text).toContain('REQ-1 waived');
    expect((await query(id)).quality?.checklist?.find((c) => c.id === 'REQ-1')?.waived).toBe(true);

    n = await ackCount(page);
    await card.locator('input[name=usd]').fill('lots');
    await card.getByRole('button', { name: 'Raise and resume' }).click();
    ack = await lastAck(page, n);
    expect(ack.ok).toBe(false);
    expect(ack.text).toContain('the amount must be a number of dollars');

    n = await ackCount(page);
    await card.locator('input[name=usd]').fill('5');
    await card.getByRole('button', { name: 'Raise and resume' }).click();
    ack = await lastAck(page, n);
    expect(ack.ok, ack.text).toBe(true);
    expect(ack.text).toContain('budget set to $5.00');
    const asked = await waitUntil(
      'the second request for a person',
      async () => {
        const s = await query(id);
        return s.iteration === 4 && s.pause?.reason.startsWith('escalation') ? s : null;
      },
      90_000,
      250,
    );
    expect(asked.budgetUsd).toBe(5);

    // --- the run page: charts with the run's numbers, timeline, messages, live log
    await page.goto(`${url}runs/${encodeURIComponent(id)}`);
    await page
      .locator('#chart-cost canvas')
      .first()
      .waitFor({ timeout: patient(30_000) });
    await page
      .locator('#chart-progress canvas')
      .first()
      .waitFor({ timeout: patient(30_000) });
    await page
      .locator('#chart-waiting canvas')
      .first()
      .waitFor({ timeout: patient(30_000) });
    const charts = JSON.parse((await page.locator('#chart-cost').getAttribute('data-chart')) ?? '{}') as ChartData;
    const snap = await query(id);
    expect(charts.iterations).toEqual(snap.recentIterations.map((i) => i.iteration));
    expect(charts.iterations).toEqual([1, 2, 3, 4]);
    expect(charts.costUsd).toEqual([0.3, 0.6, 1.1, 1.2]);
    expect(charts.costUsd.at(-1)).toBeCloseTo(snap.spend.usd);
    expect(charts.budgetUsd).toBe(5);
    expect(charts.filesChanged).toEqual(snap.recentIterations.map((i) => i.filesChangedSinceStart));
    expect(charts.filesChanged).toEqual([1, 2, 3, 4]);
    expect(charts.waits.pauses).toEqual([1]);
    // uPlot drew them: a canvas of the element's size, and its legend names the series.
    expect(
      await page
        .locator('#chart-cost canvas')
        .first()
        .evaluate((c) => (c as unknown as { width: number }).width),
    ).toBeGreaterThan(100);
    expect(await page.locator('#chart-cost').textContent()).toContain('budget');
    await expect
      .poll(async () => page.locator('#log').textContent(), { timeout: patient(30_000) })
      .toContain('agent: iteration four, ␛[2Jasking again');
    expect(await page.locator('#messages').textContent()).toContain(directive);
    const inputRow = page.locator('#messages tr[data-message=input]').first();
    expect(await inputRow.textContent()).toContain(OPERATOR);
    const timeline = (await page.locator('#timeline').textContent()) ?? '';
    expect(timeline).toContain('escalation (agent request), paused for a person');
    expect(timeline).toContain('Which database should the cache use?');
    await page.screenshot({ path: path.join(ARTIFACTS, 'run.png'), fullPage: true });

    // --- rewind from the run page: the tree of checkpoint 1
    for (const f of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) expect(existsSync(path.join(repo, f)), f).toBe(true);
    n = await ackCount(page);
    await page.locator('#checkpoints tr[data-iteration="1"]').getByRole('button', { name: 'Rewind here' }).click();
    ack = await lastAck(page, n);
    expect(ack.ok, ack.text).toBe(true);
    expect(ack.text).toMatch(/rewound|iteration 1/);
    expect(existsSync(path.join(repo, 'a.txt'))).toBe(true);
    for (const f of ['b.txt', 'c.txt', 'd.txt']) expect(existsSync(path.join(repo, f)), f).toBe(false);
    expect((await query(id)).checkpoints?.rewinds.at(-1)).toMatchObject({ to: 1, by: OPERATOR });
    // The rewind lifted the automatic pause; iteration 2 asks for a person again, and the run is stopped in that pause.
    await waitUntil(
      'the request for a person after the rewind',
      async () => {
        const s = await query(id);
        return s.iteration === 2 && s.pause?.reason.startsWith('escalation') ? s : null;
      },
      90_000,
      250,
    );

    // --- stop ends the run
    n = await ackCount(page);
    await page.locator('form.stop input[name=reason]').first().fill('answered enough');
    await page.locator('form.stop').first().getByRole('button', { name: 'Stop' }).click();
    ack = await lastAck(page, n);
    expect(ack.ok, ack.text).toBe(true);
    const outcome = await client.workflow.getHandle(id).result();
    expect(outcome).toMatchObject({ status: 'stopped' });
    await expect
      .poll(async () => page.locator('#summary [data-status]').getAttribute('data-status'), { timeout: patient(30_000) })
      .toBe('finished');
    // --- the ended run's page shows its end, not the pause it was in when it was stopped (its state still holds it)
    expect((await query(id)).pause).not.toBeNull();
    await page.reload();
    expect(await page.locator('#summary [data-outcome]').getAttribute('data-outcome')).toBe('stopped');
    const ended = (await page.locator('#summary').textContent()) ?? '';
    expect(ended).toContain('finished: stopped');
    expect(ended).toContain('answered enough');
    expect(ended).not.toContain('Paused by');
    expect(ended).not.toContain('Waiting for a person');
    // Its last handoff is an earlier moment: folded away, said so.
    const handoff = page.locator('details.handoff');
    expect(await handoff.getAttribute('open')).toBeNull();
    expect(await handoff.locator('summary').textContent()).toContain('Earlier handoff, before the run ended');
    await page.screenshot({ path: path.join(ARTIFACTS, 'run-ended.png'), fullPage: true });

    // --- a second run, of a command agent that reports no cost, ends another way: max_iterations_reached
    const repo2 = makeRepo();
    const id2 = uniqueId('console-run-max');
    started.add(id2);
    const r2 = await runVigil(
      [
        'start',
        writePrd(),
        '--repo',
        repo2,
        '--agent-command',
        `${SCRIPTED_AGENT} --scenario ${writeScenario(repo2, { version: 1, iterations: [{ writes: { 'a.txt': 'a\n' } }] })}`,
        '--checklist',
        checklist,
        '--id',
        id2,
        '--set',
        'maxIterations=1',
        '--set',
        'budgetUsd=2',
        // As above: the console's pages are tested here, not the judgement.
        '--set',
        'councilEnabled=false',
        '--set',
        'qualityGates=false',
        '--set',
        'codeReview=false',
      ],
      baseEnv(),
    );
    expect(r2.code, show(r2)).toBe(0);
    expect(await client.workflow.getHandle(id2).result()).toMatchObject({ status: 'max_iterations_reached' });
    // Its one call reported no cost: unpriced, never $0.00.
    await page.goto(`${url}runs/${encodeURIComponent(id2)}`);
    const cost = (await page.locator('#summary dl.facts').textContent()) ?? '';
    expect(cost).toContain('unpriced: 1 call(s), none reported its cost');
    expect(cost).toContain('the $2.00 budget cannot stop the run');
    expect(cost).not.toContain('$0.00');

    // --- the runs list shows each run's outcome, not Temporal's `completed`, and filters on it
    await page.goto(`${url}runs`);
    const row = (run: string) => page.locator(`#runs-table tr[data-run="${run}"]`);
    expect(await row(id).locator('td[data-status]').getAttribute('data-status')).toBe('stopped');
    expect(await row(id2).locator('td[data-status]').getAttribute('data-status')).toBe('max_iterations_reached');
    for (const run of [id, id2]) expect(await row(run).textContent()).not.toContain('completed');
    // (the select's change asks htmx for the filtered table; the polls below wait for it)
    const filterTo = (status: string): Promise<string[]> => page.locator('select[name=status]').selectOption(status);
    await filterTo('stopped');
    await expect.poll(async () => row(id).count(), { timeout: patient(30_000) }).toBe(1);
    await expect.poll(async () => row(id2).count(), { timeout: patient(30_000) }).toBe(0);
    await filterTo('max_iterations_reached');
    await expect.poll(async () => row(id2).count(), { timeout: patient(30_000) }).toBe(1);
    await expect.poll(async () => row(id).count(), { timeout: patient(30_000) }).toBe(0);
    await filterTo('ended');
    await expect.poll(async () => (await row(id).count()) + (await row(id2).count()), { timeout: patient(30_000) }).toBe(2);
    await filterTo('running');
    await expect.poll(async () => (await row(id).count()) + (await row(id2).count()), { timeout: patient(30_000) }).toBe(0);
    await page.close();
    expect(readdirSync(ARTIFACTS)).toEqual(expect.arrayContaining(['inbox.png', 'run.png']));
  });

  it('needs its token on a non-loopback address, and answers only to loopback names on loopback', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-console-home-'));
    const first = await startConsole(['--host', '0.0.0.0', '--port', '0'], { VIGIL_HOME: home });
    const m = /^console: http:\/\/0\.0\.0\.0:(\d+)\/\?token=(\S+)$/m.exec(first.out());
    expect(m, first.out()).not.toBeNull();
    const [, port, token] = m as unknown as [string, string, string];
    expect(first.out()).toContain(path.join(home, 'console-token'));
    expect(readFileSync(path.join(home, 'console-token'), 'utf8').trim()).toBe(token);
    const base = `http://127.0.0.1:${port}`;

    const refused = await request(`${base}/`);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('needs its token');
    expect(refused.body).not.toContain(token);
    expect((await request(`${base}/runs`)).status).toBe(401);
    expect((await request(`${base}/?token=wrong`)).status).toBe(401);
    expect((await request(`${base}/`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    expect(
      (
        await request(`${base}/runs/x/actions`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: base },
          body: 'action=stop',
        })
      ).status,
    ).toBe(401);

    const opened = await request(`${base}/?token=${token}`);
    expect(opened.status).toBe(303);
    expect(opened.headers.location).toBe('/');
    const cookie = String(opened.headers['set-cookie']);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect((await request(`${base}/`, { headers: { Cookie: cookie.split(';')[0] as string } })).status).toBe(200);
    expect((await request(`${base}/`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
    // A form posted from another site is refused (CSRF), even with the token.
    const forged = await request(`${base}/runs/x/actions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'http://evil.example' },
      body: 'action=stop',
    });
    expect(forged.status).toBe(403);

    // The token is printed once: a second console names the file only.
    const second = await startConsole(['--host', '0.0.0.0', '--port', '0'], { VIGIL_HOME: home });
    expect(second.out()).not.toContain(token);
    expect(second.out()).toContain(path.join(home, 'console-token'));

    // Loopback: no token, but a foreign Host (DNS rebinding) is refused.
    const local = await startConsole(['--port', '0'], { VIGIL_HOME: home });
    const localPort = new URL(local.url).port;
    expect((await request(local.url)).status).toBe(200);
    expect((await request(local.url, { headers: { Host: `evil.example:${localPort}` } })).status).toBe(403);
  });
});
