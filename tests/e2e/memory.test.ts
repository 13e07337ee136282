/**
 * `vigil memory` as a person runs it (real `node bin/vigil.js` processes, a clean environment,
 * DATABASE_URL naming a real embedded Postgres): a run's journal and its agent calls' traces,
 * projected the way a worker projects them, consolidate when the outcome lands; `list`, `show`,
 * `search`, `export`, `import` into another store, `forget` (exit 3 for what is not there, exit 2 for
 * a bad kind) and `consolidate`; `import` refusing bad fields (named, exit 2, nothing written), a device, a
 * pipe, a folder and an oversized file; and the console's memory page in a real Chromium (Debian's
 * `chromium`, as tests/e2e/console.test.ts drives it), its search included.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ResultPromise } from 'execa';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeEventStore, projectEventsTo } from '../../lib/event-store.js';
import { recordTrace } from '../../lib/lasting-memory.js';
import { EventEnvelopeSchema, type RunEvent } from '../../schemas/events.js';
import type { MemoryExport } from '../../schemas/lasting-memory.js';
import { assertBuilt, ROOT, temporalAddress } from '../support/harness.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { startConsoleProcess, runVigil, show } from './cli-helpers.js';
import { patient } from '../support/patience.js';

const CHROMIUM = process.env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';
let store: TestPostgres;
let url = '';
let browser: Browser | undefined;
const consoles: ResultPromise[] = [];

beforeAll(async () => {
  assertBuilt();
  execFileSync('bash', [path.join(ROOT, 'scripts/install-browser.sh')], { stdio: 'inherit', timeout: 600_000 });
  store = await startTestPostgres();
  url = await store.freshDatabase('memory_cli');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}, patient(900_000));
afterAll(async () => {
  await browser?.close();
  for (const c of consoles) c.kill('SIGTERM');
  await Promise.all(consoles.map((c) => c.catch(() => undefined)));
  await closeEventStore();
  await store?.cleanup();
});

const REPO = '/srv/checkouts/calc';
const iter = (n: number, tests: 'pass' | null = null): RunEvent => ({
  kind: 'iteration',
  iteration: n,
  phase: 'ACT',
  tier: 'development',
  exitCode: 0,
  durationMs: 1,
  changed: true,
  filesChangedSinceStart: 1,
  claimed: n === 4,
  tests,
  provider: 'command',
  model: null,
  costUsd: null,
  attempts: 1,
});
const gate = (n: number, verdict: 'pass' | 'fail'): RunEvent => ({
  kind: 'gate',
  iteration: n,
  gate: 'tests',
  verdict,
  reason: verdict === 'fail' ? 'npm-test: 1 failed (exit 1); first: parses ISO dates' : 'npm-test: 4 passed',
  findings: verdict === 'fail' ? 1 : 0,
});

/** A run as a worker would leave it in the store: the test "parses ISO dates" fails three times for one reason, then passes. */
async function storeRun(db: string, workflowId: string, repo: string): Promise<void> {
  for (const n of [1, 2, 3, 4])
    await recordTrace(db, {
      workflowId,
      iteration: n,
      files: ['src/dates.js'],
      errors: [],
      testFailure: n < 4 ? 'RangeError: Invalid time value' : null,
      summary: n === 4 ? 'Parsed with Date.UTC.' : null,
    });
  const events: RunEvent[] = [
    {
      kind: 'run_started',
      prdPath: `${repo}/PRD.md`,
      prdTitle: 'Date parsing',
      repoPath: repo,
      provider: 'command',
      maxIterations: 10,
      budgetUsd: 0,
      autonomyMode: 'perpetual',
    },
    iter(1),
    gate(1, 'fail'),
    iter(2),
    gate(2, 'fail'),
    iter(3),
    gate(3, 'fail'),
    iter(4, 'pass'),
    gate(4, 'pass'),
    { kind: 'outcome', status: 'council_approved', exitCode: 0, reason: 'approved', iteration: 4 },
  ];
  const envelopes = events.map((event, i) =>
    EventEnvelopeSchema.parse({
      seq: i + 1,
      runId: 'r1',
      at: new Date(Date.parse('2026-04-01T08:00:00Z') + i * 60_000).toISOString(),
      event,
    }),
  );
  expect((await projectEventsTo(db, { workflowId, events: envelopes })).problem).toBeNull();
}

describe('vigil memory', () => {
  it(
    'list, show, search, export, import, forget and consolidate',
    async () => {
      await storeRun(url, 'wf-dates', REPO);
      const env = { DATABASE_URL: url };
      const list = await runVigil(['memory', 'list', '--json'], env);
      expect(list.code, show(list)).toBe(0);
      const items = (JSON.parse(list.stdout) as { items: { kind: string; id: number; title: string }[] }).items;
      expect(items.map((i) => i.kind).sort()).toEqual(['anti_pattern', 'pattern', 'skill']);
      const anti = items.find((i) => i.kind === 'anti_pattern') as { id: number; title: string };
      expect(anti.title).toBe('Test "parses ISO dates" failed 3 times for the same reason: RangeError: Invalid time value');

      const text = await runVigil(['memory', 'list', '--repo', REPO, '--episodes'], env);
      expect(text.code, show(text)).toBe(0);
      expect(text.stdout).toMatch(/^anti_pattern +\d+ +tests +×3 +imp \d\.\d\d used 0 +Test "parses ISO dates" failed 3 times/m);
      expect(text.stdout).toMatch(/^episode .*wf-dates iteration 1: failure \(test "parses ISO dates"/m);

      const shown = await runVigil(['memory', 'show', 'anti-pattern', String(anti.id)], env);
      expect(shown.code, show(shown)).toBe(0);
      expect(shown.stdout).toContain('signature: tests:parses ISO dates:RangeError: Invalid time value');
      expect(shown.stdout).toMatch(/^ {2}pattern \d+ derived_from episode \d+$/m);
      expect(shown.stdout).toMatch(/^ {2}pattern \d+ supersedes pattern \d+$/m);
      expect(shown.stdout).toMatch(new RegExp(`^ {2}pattern ${anti.id} superseded_by pattern \\d+$`, 'm'));

      // Each agent call's token economics: what it read from memory (nothing yet here) and what it added.
      const economics = await runVigil(['memory', 'economics', '--run', 'wf-dates'], env);
      expect(economics.code, show(economics)).toBe(0);
      expect(economics.stdout).toContain('token economics of 4 agent call(s) of wf-dates:');
      expect(economics.stdout).toMatch(/^ {2}wf-dates iteration 4: read 0 token\(s\), added \d+ \(ratio \d+(\.\d+)?\), saved 100 %/m);
      expect(economics.stdout).toMatch(/^in all: read 0 token\(s\), added \d+/m);
      const economicsJson = await runVigil(['memory', 'economics', '--run', 'wf-dates', '--json'], env);
      const report = JSON.parse(economicsJson.stdout) as { calls: { iteration: number }[]; totals: { calls: number } };
      expect(report.calls.map((c) => c.iteration)).toEqual([1, 2, 3, 4]);
      expect(report.totals.calls).toBe(4);
      const none = await runVigil(['memory', 'economics', '--run', 'wf-nothing'], env);
      expect(none.code, show(none)).toBe(0);
      expect(none.stdout).toContain('no agent call of wf-nothing has token economics');

      const search = await runVigil(['memory', 'search', 'invalid time', '--json'], env);
      expect(search.code, show(search)).toBe(0);
      expect((JSON.parse(search.stdout) as { hits: { id: number }[] }).hits[0]?.id).toBe(anti.id);

      // Export from this store, import into another under another checkout of the repository.
      const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-memory-')), 'calc-memory.json');
      const exported = await runVigil(['memory', 'export', '--repo', REPO, '--out', file], env);
      expect(exported.code, show(exported)).toBe(0);
      expect(exported.stderr).toContain('wrote 4 episode(s), 2 pattern(s), 1 skill(s)');
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ vigilMemory: 1, repo: REPO });
      const other = await store.freshDatabase('memory_cli_other');
      const imported = await runVigil(['memory', 'import', file, '--repo', '/home/ana/calc'], { DATABASE_URL: other });
      expect(imported.code, show(imported)).toBe(0);
      expect(imported.stdout).toBe('imported 4 episode(s), 2 pattern(s), 1 skill(s)');
      const there = await runVigil(['memory', 'search', 'parses dates', '--repo', '/home/ana/calc', '--json'], { DATABASE_URL: other });
      expect((JSON.parse(there.stdout) as { hits: { repo: string }[] }).hits[0]?.repo).toBe('/home/ana/calc');
      const notMemory = await runVigil(['memory', 'import', path.join(ROOT, 'package.json')], { DATABASE_URL: other });
      expect(notMemory.code, show(notMemory)).toBe(2);
      expect(notMemory.stderr).toContain('is not a memory file');

      // Forget for good: consolidating again does not bring it back.
      const forgot = await runVigil(['memory', 'forget', 'anti-pattern', String(anti.id)], env);
      expect(forgot.code, show(forgot)).toBe(0);
      expect(forgot.stdout).toContain(`forgot anti_pattern ${anti.id}: Test "parses ISO dates"`);
      const again = await runVigil(['memory', 'forget', 'pattern', String(anti.id)], env);
      expect(again.code, show(again)).toBe(3);
      const consolidated = await runVigil(['memory', 'consolidate'], env);
      expect(consolidated.code, show(consolidated)).toBe(0);
      // The fix's links: derived from its episode, and supporting the skill of the run that fixed it.
      expect(consolidated.stdout).toBe('consolidated 1 run(s): 4 episode(s) → 0 anti-pattern(s), 1 pattern(s), 1 skill(s), 2 link(s)');
      const bad = await runVigil(['memory', 'show', 'lesson', '1'], env);
      expect(bad.code, show(bad)).toBe(2);
      expect(bad.stderr).toContain('unknown memory kind "lesson"');
    },
    patient(180_000),
  );

  it(
    'import refuses a file with bad fields (exit 2, the fields named, nothing written), and what is not a regular file or too large',
    async () => {
      const from = await store.freshDatabase('memory_import_from');
      await storeRun(from, 'wf-import', REPO);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-memory-import-'));
      const good = path.join(dir, 'good.json');
      expect((await runVigil(['memory', 'export', '--out', good], { DATABASE_URL: from })).code).toBe(0);
      const into = { DATABASE_URL: await store.freshDatabase('memory_import_into') };
      const exported = JSON.parse(readFileSync(good, 'utf8')) as MemoryExport;
      const variant = (name: string, edit: (m: MemoryExport) => void): string => {
        const m = structuredClone(exported);
        edit(m);
        const file = path.join(dir, name);
        writeFileSync(file, JSON.stringify(m));
        return file;
      };
      const refused = async (file: string, ...want: (string | RegExp)[]): Promise<void> => {
        const r = await runVigil(['memory', 'import', file], into, { timeoutMs: 30_000 });
        expect(r.code, show(r)).toBe(2);
        for (const w of want) expect(r.stderr).toMatch(w);
        // No stack, no raw SQL error.
        expect(r.stderr).not.toMatch(/^\s+at /m);
        expect(r.stderr).not.toMatch(/invalid input syntax|out of range for type|unsupported Unicode/);
      };
      await refused(
        variant('bad-time.json', (m) => {
          (m.episodes[0] as { at: string | null }).at = 'yesterday';
          (m.patterns[0] as { evidence: number }).evidence = 3_000_000_000;
          (m.skills[0] as { title: string }).title = 'a\u0000b';
        }),
        /is not a memory file the event store can take .*nothing was imported/,
        /^ {2}episodes\[0\]\.at: "yesterday" is not an ISO 8601 date-time/m,
        /^ {2}patterns\[0\]\.evidence: 3000000000 is too large \(at most 2147483647\)/m,
        /^ {2}skills\[0\]\.title: contains a NUL character/m,
      );
      await refused(
        variant('bad-kind.json', (m) => {
          (m.patterns[0] as { kind: string }).kind = 'lesson';
        }),
        /^ {2}patterns\[0\]\.kind: /m,
      );
      await refused('/dev/zero', '/dev/zero is not a regular file');
      await refused(dir, `${dir} is not a regular file`);
      const fifo = path.join(dir, 'fifo');
      execFileSync('mkfifo', [fifo]);
      await refused(fifo, `${fifo} is not a regular file`);
      const huge = path.join(dir, 'huge.json');
      writeFileSync(huge, '');
      truncateSync(huge, 200 * 1024 * 1024);
      await refused(huge, /is 209715200 bytes, more than a memory file's 134217728: export one repository at a time/);
      await refused(path.join(dir, 'missing.json'), /cannot read the memory file .*missing\.json/);
      // Nothing of the refused files was written; the honest file imports whole.
      const before = await runVigil(['memory', 'list', '--json'], into);
      expect((JSON.parse(before.stdout) as { items: unknown[] }).items).toEqual([]);
      const ok = await runVigil(['memory', 'import', good], into);
      expect(ok.code, show(ok)).toBe(0);
      expect(ok.stdout).toBe('imported 4 episode(s), 2 pattern(s), 1 skill(s)');
    },
    patient(120_000),
  );

  it(
    "the console's memory page lists it and searches it",
    async () => {
      const db = await store.freshDatabase('memory_console');
      await storeRun(db, 'wf-console', REPO);
      const c = await startConsoleProcess(['--port', '0'], {
        DATABASE_URL: db,
        TEMPORAL_ADDRESS: temporalAddress(),
        TEMPORAL_NAMESPACE: 'default',
      });
      consoles.push(c.child);
      const base = c.url;
      const page = await (browser as Browser).newPage();
      await page.goto(`${base}memory`);
      // Every page's header leads here.
      expect(await page.locator('header a[href="/memory"]').count()).toBe(1);
      await expect.poll(() => page.locator('#memory-items tbody tr').count()).toBe(3);
      expect(await page.locator('#memory-items').textContent()).toContain('Test "parses ISO dates" failed 3 times for the same reason');
      await page.getByLabel('search the memory').fill('Date.UTC');
      await page.getByRole('button', { name: 'search' }).click();
      await expect.poll(() => page.locator('#memory-hits li').count()).toBeGreaterThan(0);
      expect(await page.locator('#memory-hits').textContent()).toContain('Parsed with Date.UTC.');
      await page.close();
    },
    patient(120_000),
  );
});
