/**
 * The life of a followed pull request wherever a person looks, and GitHub's webhooks received by
 * the console's own server: a run delivers its pull request (deliver=pr, followPr on by default) and
 * waits; a `vigil console` process started with VIGIL_HOOKS_SECRET receives webhooks at /hooks:
 * one with a wrong signature is refused with 401 and nothing is signalled; a signed "changes
 * requested" review in GitHub's documented format reaches the run, which fixes, pushes and replies;
 * `vigil status` prints the pull request with where it stands, the review taken with its author
 * and the reply; the console's run page (in a real Chromium, playwright-core, as
 * tests/e2e/console.test.ts) shows its "Pull request" section; a signed `pull_request` closed and
 * merged ends the run merged; `vigil report <id>` then has its "pull request" section from the
 * event store (a real Postgres, written by the worker's own projection).
 *
 * Real git and a real bare remote (every push goes to it). `gh` is faked, and only gh
 * (tests/support/fake-gh.ts): it is the one part that talks to GitHub, which cannot run here.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ResultPromise } from 'execa';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fileWorker,
  makeRepo,
  ROOT,
  runInput,
  startRun,
  temporalAddress,
  uniqueId,
  waitForStatus,
  writeScenario,
} from '../support/harness.js';
import { fakeGh } from '../support/fake-gh.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { patient } from '../support/patience.js';
import { runVigil, show, startConsoleProcess, waitUntil } from './cli-helpers.js';

const CHROMIUM = process.env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'console');
const SECRET = 'the-webhook-secret-of-o-r-repository';
const PR = 'https://github.com/o/r/pull/7';

const { ghDir, ghCallsIn } = fakeGh(PR);
const shared = fileWorker('pr-life', () => {
  process.env.PATH = `${ghDir}${path.delimiter}${process.env.PATH ?? ''}`;
});
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

let tp: TestPostgres | undefined;
let storeUrl = '';
let browser: Browser | undefined;
let consoleProc: ResultPromise | undefined;
const before = process.env.DATABASE_URL;

beforeAll(async () => {
  execFileSync('bash', [path.join(ROOT, 'scripts/install-browser.sh')], { stdio: 'inherit', timeout: 600_000 });
  mkdirSync(ARTIFACTS, { recursive: true });
  tp = await startTestPostgres();
  storeUrl = await tp.freshDatabase('pr_life');
  // The worker of this file runs in this process: its projection writes the run's events here.
  process.env.DATABASE_URL = storeUrl;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}, patient(900_000));

afterAll(async () => {
  if (before === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = before;
  await browser?.close();
  consoleProc?.kill('SIGTERM');
  await consoleProc?.catch(() => undefined);
  await tp?.cleanup();
});

/** A POST to the console's webhook receiver, as GitHub sends one: its event, delivery id and signature (`sign`: the secret it is signed with). */
async function deliver(
  url: string,
  event: string,
  delivery: string,
  payload: unknown,
  sign = SECRET,
): Promise<{ status: number; text: string }> {
  const body = JSON.stringify(payload);
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/e2e',
      'x-github-event': event,
      'x-github-delivery': delivery,
      'x-hub-signature-256': `sha256=${createHmac('sha256', sign).update(body).digest('hex')}`,
    },
    body,
  });
  return { status: res.status, text: await res.text() };
}

describe('a followed pull request, everywhere a person looks', () => {
  it(
    'webhooks at the console: a wrong signature is refused; a review is fixed and replied to; status, the page and the report show it',
    async () => {
      const repo = makeRepo({ files: { 'README.md': '# s\n' } });
      const remote = mkdtempSync(path.join(os.tmpdir(), 'vigil-origin-'));
      git(remote, 'init', '-q', '--bare');
      git(repo, 'remote', 'add', 'origin', remote);
      git(repo, 'push', '-q', 'origin', 'main');
      const scenario = writeScenario(repo, {
        version: 1,
        iterations: [
          { writes: { 'a.txt': '1\n' } },
          { writes: { 'a.txt': '2\n' } },
          { writes: { 'a.txt': '3\n' }, claim: 'file' },
          // What the review asks: the next iteration writes it and claims again.
          { writes: { 'a.txt': '3\nrenamed as asked\n' }, claim: 'file' },
        ],
        roles: {
          checklist: {
            default: { output: '[{"id": "REQ-1", "title": "a.txt exists", "priority": "critical", "verify": "read a.txt"}]\n' },
          },
          'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - a.txt exists\n' } },
          reviewer: { default: { output: 'VERDICT: PASS\n' } },
          'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
          council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } },
        },
      });
      const id = uniqueId('pr-life');
      const branch = `vigil/${id}`;
      // eventStore on, as `vigil start` turns it on where a store is configured.
      const handle = await startRun(
        shared.env,
        shared.taskQueue,
        runInput(repo, scenario, { maxIterations: 8, deliver: 'pr', eventStore: true }),
        id,
      );
      await waitForStatus(handle, (s) => s.pullRequest?.waiting === true, 120_000);

      const env = {
        TEMPORAL_ADDRESS: temporalAddress(),
        TEMPORAL_NAMESPACE: 'default',
        VIGIL_TASK_QUEUE: shared.taskQueue,
        DATABASE_URL: storeUrl,
        USER: 'carol',
      };
      const c = await startConsoleProcess(['--port', '0'], { ...env, VIGIL_HOOKS_SECRET: SECRET });
      consoleProc = c.child;
      // Printed with the URL, in the same write; waited for all the same, as a log reader would.
      const hooksUrl = await waitUntil(
        'the console to say where it receives webhooks',
        () => /webhooks: (\S+) receives GitHub's webhooks/.exec(c.out())?.[1],
        10_000,
      );
      expect(hooksUrl, c.out()).toBe(new URL('hooks', c.url).toString());

      // "Changes requested", as GitHub documents pull_request_review (the fields Vigil reads, and a few more).
      const review = {
        action: 'submitted',
        review: { id: 80, state: 'changes_requested', body: 'Please say what was renamed in a.txt.', user: { login: 'alice' } },
        pull_request: { number: 7, html_url: PR, head: { ref: branch, sha: 'x' }, base: { ref: 'main' } },
        repository: { full_name: 'o/r', name: 'r', owner: { login: 'o' } },
        sender: { login: 'alice' },
      };
      // Signed with another secret: 401, and nothing reaches the run.
      const forged = await deliver(hooksUrl, 'pull_request_review', 'forged-1', review, 'not-the-secret-of-this-repository');
      expect(forged.status, forged.text).toBe(401);
      expect(forged.text).toContain('nothing signalled');
      const unsigned = await fetch(hooksUrl, { method: 'POST', headers: { 'x-github-event': 'ping' }, body: '{}' });
      expect(unsigned.status).toBe(401);
      const signals = async (): Promise<number> =>
        ((await handle.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'prEvent')
          .length;
      expect(await signals()).toBe(0);

      const taken = await deliver(hooksUrl, 'pull_request_review', 'review-delivery-1', review);
      expect(taken.status, taken.text).toBe(200);
      // Its id is the review's own (review-80), as the poller names the same review: taken once, whichever sees it first.
      expect(taken.text).toContain(`comment event review-80 sent to ${id}`);
      const fixed = await waitForStatus(
        handle,
        (s) => s.pullRequest?.waiting === true && s.iteration === 4 && (s.pullRequest.replies?.length ?? 0) === 1,
        180_000,
      );
      expect(fixed.pullRequest?.replies?.[0]).toMatchObject({ to: 'alice', posted: true });
      expect(git(remote, 'show', `${branch}:a.txt`)).toBe('3\nrenamed as asked');
      expect(ghCallsIn(repo).filter((a) => a[0] === 'pr' && a[1] === 'comment')).toHaveLength(1);

      // vigil status: the pull request, where it stands, the review taken with its author, the reply.
      const status = await runVigil(['status', id], env);
      expect(status.code, show(status)).toBe(0);
      expect(status.stdout).toMatch(new RegExp(`  PR        : #7 ${PR} \\(${branch} → main\\): waiting for its next event since `));
      expect(status.stdout).toContain('0 red check event(s) taken · 1 comment(s) taken · 0 update(s) onto its base · 1 reply');
      expect(status.stdout).toContain('changes requested by alice');
      expect(status.stdout).toMatch(/replied to alice: /);

      // The console's run page, in Chromium: the pull request section.
      const page = await (browser as Browser).newPage();
      try {
        await page.goto(`${c.url}runs/${encodeURIComponent(id)}`);
        const section = page.locator('section#pr');
        await expect.poll(() => section.count(), { timeout: patient(30_000) }).toBe(1);
        expect(await section.locator('h2 a.pr-link').getAttribute('href')).toBe(PR);
        expect(await section.locator('h2').textContent()).toContain('Pull request #7');
        expect(await section.locator('.pr-state').getAttribute('data-state')).toBe('waiting');
        expect(await section.locator('.pr-events li[data-kind="comment"]').textContent()).toContain('changes requested by alice');
        expect(await section.locator('.pr-events li[data-kind="reply"]').textContent()).toContain('replied to alice');
        expect(await section.isVisible()).toBe(true);
        await page.screenshot({ path: path.join(ARTIFACTS, 'pull-request.png'), fullPage: true });
      } finally {
        await page.close();
      }

      // Merged, as GitHub sends pull_request closed with merged true: the run ends merged.
      const merged = await deliver(hooksUrl, 'pull_request', 'merged-delivery-1', {
        action: 'closed',
        number: 7,
        pull_request: { number: 7, html_url: PR, merged: true, merge_commit_sha: 'c0ffee00', head: { ref: branch }, base: { ref: 'main' } },
        repository: { full_name: 'o/r' },
        sender: { login: 'bob' },
      });
      expect(merged.status, merged.text).toBe(200);
      expect(await handle.result()).toMatchObject({ status: 'merged', exitCode: 0, iteration: 4 });
      expect(await signals()).toBe(2);

      // vigil report: the pull request section, from the event store.
      // The run's last events reach the store just after its end (the worker's projection may spool them first).
      const report = await waitUntil(
        'the report to show the merge',
        async () => {
          const r = await runVigil(['report', id], env);
          return r.code === 0 && r.stdout.includes(': merged\n') ? r : null;
        },
        60_000,
        1000,
      );
      expect(report.stdout).toContain(`pull request:\n  #7 ${PR}: merged\n`);
      expect(report.stdout).toContain('0 red check event(s) taken · 1 comment(s) taken · 0 update(s) onto its base · 1 reply');
      expect(report.stdout).toContain('changes requested by alice');
      expect(report.stdout).toMatch(/replied to alice: /);
      expect(report.stdout).toMatch(/merged: pull request merged: https:\/\/github.com\/o\/r\/pull\/7 \(merge commit c0ffee00\)/);
    },
    patient(420_000),
  );
});
