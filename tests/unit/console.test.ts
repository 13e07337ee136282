/**
 * The operator console's rules without a browser: which runs the inbox shows and why
 * (cli/console/model.ts `waitingFor`), the chart series from a status snapshot and from the event
 * store's report, the tokens kept under VIGIL_HOME, which requests are another site's, the
 * redirects, the messages an action sends (the CLI's own payloads and schemas,
 * cli/console/actions.ts), and a finished run's header with what done rested on.
 */
import { chmodSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { accessToken, consoleToken, fromAnotherSite, isLoopback, localPath, sameToken } from '../../cli/console/access.js';
import { stepsOf } from '../../cli/console/actions.js';
import { chartsFromReport, chartsFromSnapshot, pauseLengths, waitingFor } from '../../cli/console/model.js';
import { inboxCards, runSummary } from '../../cli/console/pages.js';
import type { RunRow } from '../../cli/console/sources.js';
import type { PauseEvent } from '../../cli/report.js';
import type { RunEvent } from '../../schemas/events.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { statusSnapshot } from '../support/status-snapshot.js';
import { type RunReport } from '../../lib/run-report.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const pause = (reason: string, by = 'vigil') => ({ reason, by, at: '2026-11-22T11:00:00Z' });
const base = { status: 'paused' as const, escalations: [], providerWait: null };

describe('waitingFor', () => {
  it('names each kind of pause Vigil makes, and leaves a person’s pause out', () => {
    const kind = (reason: string) => waitingFor({ ...base, pause: pause(reason) }, NOW)?.kind;
    expect(kind('escalation (agent request): Which database?')).toBe('escalation');
    expect(kind('escalation (dead letter): the same failure 3 times')).toBe('dead_letter');
    expect(kind('budget exceeded: $1.20 of $1.00; raise it with `vigil budget x --usd N`')).toBe('budget');
    expect(kind('the tests gate failed 3 times in a row (red); look at it')).toBe('gate');
    expect(kind('contract error, 3 checks in a row: council member 0 answered without a VOTE line')).toBe('contract');
    expect(kind('authentication failed for claude. Fix the credentials where the worker runs')).toBe('auth');
    expect(kind('repository unavailable: /src/app is gone')).toBe('repository');
    expect(kind('something else')).toBe('paused_by_vigil');
    expect(waitingFor({ ...base, pause: pause('escalation (agent request): x') }, NOW)).toMatchObject({
      since: '2026-11-22T11:00:00Z',
      why: 'escalation (agent request): x',
    });
    expect(waitingFor({ ...base, pause: pause('reviewing', 'alice') }, NOW)).toBeNull();
    expect(waitingFor({ ...base, status: 'finished', pause: pause('budget exceeded') }, NOW)).toBeNull();
  });

  it('puts a run whose parallel stream waits for a person in the inbox, naming the stream', () => {
    const stream = {
      task: 'api',
      title: 'The API',
      state: 'in_progress' as const,
      dependsOn: [],
      attempts: 1,
      childId: 'r--api',
      branch: 'vigil/r--api',
      merged: false,
      spendUsd: 0,
      outcome: null,
      deadLetter: null,
    };
    const running = { status: 'running' as const, pause: null, escalations: [], providerWait: null };
    expect(waitingFor({ ...running, streams: [stream] }, NOW)).toBeNull();
    expect(
      waitingFor(
        {
          ...running,
          streams: [
            stream,
            { ...stream, task: 'db', childId: 'r--db', waiting: { reason: 'escalation (dead letter): x', at: '2026-11-22T11:30:00Z' } },
          ],
        },
        NOW,
      ),
    ).toEqual({
      kind: 'stream',
      why: 'stream db (r--db): escalation (dead letter): x',
      since: '2026-11-22T11:30:00Z',
    });
  });

  it('shows a provider wait only past an hour', () => {
    const wait = (ms: number) =>
      waitingFor(
        {
          status: 'waiting_for_provider',
          pause: null,
          escalations: [],
          providerWait: { provider: 'claude', until: new Date(NOW.getTime() + ms).toISOString(), reason: 'rate_limit' },
        },
        NOW,
      );
    expect(wait(30 * 60_000)).toBeNull();
    expect(wait(2 * 3600_000)).toMatchObject({ kind: 'rate_limit', why: expect.stringContaining('waiting for claude until') });
  });
});

const iteration = (n: number, cost: number | null, files: number) => ({
  iteration: n,
  phase: 'ACT' as const,
  tier: 'development' as const,
  exitCode: 0,
  durationMs: 1000,
  logPath: '',
  attempts: 1,
  claimed: false,
  changed: true,
  filesChangedSinceStart: files,
  treeHash: null,
  at: NOW.toISOString(),
  costUsd: cost,
});

describe('charts', () => {
  it('from the status query: running cost, files, tests of the checkpoints, the pause going on', () => {
    const snap = {
      recentIterations: [iteration(1, 0.3, 1), iteration(2, 0.3, 2), iteration(3, 0.5, 2)],
      spend: { usd: 1.1, inputTokens: 0, outputTokens: 0, calls: 3 },
      budgetUsd: 1,
      pause: pause('budget exceeded'),
      lastTests: null,
      checkpoints: {
        kept: 200,
        lastTree: null,
        rewinds: [],
        list: [
          { iteration: 1, tests: 'fail' },
          { iteration: 2, tests: 'pass' },
        ],
      },
    } as unknown as StatusSnapshot;
    const c = chartsFromSnapshot(snap, NOW);
    expect(c).toMatchObject({
      source: 'status query',
      iterations: [1, 2, 3],
      costUsd: [0.3, 0.6, 1.1],
      budgetUsd: 1,
      filesChanged: [1, 2, 2],
      testsPassing: [0, 1, null],
      waits: { pauses: [1], minutes: [60] },
    });
    // Iterations the query no longer keeps: the running total starts from what they cost.
    const later = chartsFromSnapshot(
      { ...snap, recentIterations: [iteration(30, 0.5, 4)], spend: { ...snap.spend, usd: 10 }, pause: null } as StatusSnapshot,
      NOW,
    );
    expect(later).toMatchObject({ iterations: [30], costUsd: [10], waits: { pauses: [], minutes: [] } });
  });

  it('from the event store: every iteration, the spend events, every pause', () => {
    const report = {
      budgetUsd: 2,
      timeline: [
        { iteration: 1, costUsd: 0.25, tests: 'fail' },
        { iteration: 2, costUsd: 0.25, tests: 'pass' },
      ],
    } as unknown as RunReport;
    const at = (m: number): Date => new Date(NOW.getTime() - m * 60_000);
    const ev = (m: number, event: unknown): PauseEvent => ({ at: at(m), event: event as RunEvent });
    const pauses = [
      ev(50, { kind: 'escalation', paused: true }),
      ev(40, { kind: 'message', name: 'resume', accepted: true }),
      ev(10, { kind: 'message', name: 'pause', accepted: true }),
    ];
    expect(pauseLengths(pauses, NOW)).toEqual([10 * 60_000, 10 * 60_000]);
    const c = chartsFromReport(
      report,
      new Map([[2, 0.9]]),
      new Map([
        [1, 3],
        [2, 5],
      ]),
      pauses,
      NOW,
      null,
    );
    expect(c).toMatchObject({
      source: 'event store',
      iterations: [1, 2],
      costUsd: [0.25, 0.9],
      budgetUsd: 2,
      filesChanged: [3, 5],
      testsPassing: [0, 1],
      waits: { pauses: [1, 2], minutes: [10, 10] },
    });
  });
});

describe('access', () => {
  it('makes the token once, keeps it private, and compares it in constant time', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-console-'));
    const first = consoleToken(home);
    expect(first.created).toBe(true);
    expect(first.token.length).toBeGreaterThanOrEqual(40);
    expect(statSync(first.file).mode & 0o777).toBe(0o600);
    expect(readFileSync(first.file, 'utf8').trim()).toBe(first.token);
    const again = consoleToken(home);
    expect(again).toMatchObject({ token: first.token, created: false });
    expect(sameToken(first.token, first.token)).toBe(true);
    expect(sameToken(`${first.token}x`, first.token)).toBe(false);
    expect(sameToken(undefined, first.token)).toBe(false);
  });

  it('never reads a token through a link, makes a readable one private again, and replaces one too short', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-console-'));
    const elsewhere = path.join(mkdtempSync(path.join(os.tmpdir(), 'vigil-elsewhere-')), 'planted');
    writeFileSync(elsewhere, `${'x'.repeat(43)}\n`);
    symlinkSync(elsewhere, path.join(home, 'mcp-token'));
    expect(() => accessToken(home, 'mcp-token')).toThrow(/is a symbolic link.*remove it/);
    const made = accessToken(home, 'other-token');
    chmodSync(made.file, 0o644);
    expect(accessToken(home, 'other-token')).toMatchObject({ token: made.token, created: false });
    expect(statSync(made.file).mode & 0o777).toBe(0o600);
    writeFileSync(made.file, 'short\n');
    const replaced = accessToken(home, 'other-token');
    expect(replaced.created).toBe(true);
    expect(replaced.token).not.toBe('short');
    // The console's and the MCP server's tokens are two files.
    expect(consoleToken(home).token).not.toBe(replaced.token);
  });

  it("tells another site's request from the console's own, a person's navigation and a script", () => {
    const host = '127.0.0.1:8237';
    for (const h of [
      { site: 'cross-site', host },
      { site: 'same-site', host },
      { origin: 'http://evil.example', host },
      { origin: 'http://127.0.0.1:8238', host },
      { origin: 'null', host },
    ])
      expect(fromAnotherSite(h), JSON.stringify(h)).toBe(true);
    for (const h of [
      { site: 'same-origin', host },
      { site: 'none', host },
      { host },
      { origin: 'http://127.0.0.1:8237', host },
      { origin: 'https://127.0.0.1:8237', host },
    ])
      expect(fromAnotherSite(h), JSON.stringify(h)).toBe(false);
  });

  it('redirects only to a path of its own', () => {
    expect(localPath('/runs', '?status=paused')).toBe('/runs?status=paused');
    expect(localPath('/%2F%2Fevil.example')).toBe('/%2F%2Fevil.example');
    for (const p of ['//evil.example', '///evil.example', '/\\evil.example', 'http://evil.example/', 'evil'])
      expect(localPath(p), p).toBe('/');
  });

  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopback(h), h).toBe(true);
    for (const h of ['0.0.0.0', '192.168.1.5', '::', 'example.com']) expect(isLoopback(h), h).toBe(false);
  });
});

describe('actions', () => {
  it('send the CLI’s payloads, by the operator', () => {
    expect(stepsOf('input-resume', { directive: 'use SQLite' }, 'alice')).toEqual([
      // Every directive has an id, as `vigil input` gives one (a resend is taken once).
      { kind: 'input', payload: { directive: 'use SQLite', by: 'alice', id: expect.stringMatching(/^d-[0-9a-f]{12}$/) } },
      { kind: 'resume', payload: { by: 'alice' } },
    ]);
    expect(stepsOf('budget-resume', { usd: '12.50' }, 'alice')).toEqual([
      { kind: 'budget', payload: { usd: 12.5, by: 'alice' } },
      { kind: 'resume', payload: { by: 'alice' } },
    ]);
    expect(stepsOf('waive', { item: 'REQ-1', reason: 'done by hand' }, 'alice')).toEqual([
      { kind: 'waive', payload: { item: 'REQ-1', reason: 'done by hand', by: 'alice' } },
    ]);
    expect(stepsOf('review', { reason: '' }, 'alice')).toEqual([{ kind: 'forceReview', payload: { by: 'alice' } }]);
    expect(stepsOf('stop', { now: '1', reason: 'enough' }, 'alice')).toEqual([
      { kind: 'stop', payload: { reason: 'enough', now: true, by: 'alice' } },
    ]);
  });

  it('refuse bad input before anything is sent, as the CLI does', () => {
    expect(() => stepsOf('input', { directive: '  ' }, 'alice')).toThrow(/no directive/);
    expect(() => stepsOf('budget', { usd: 'lots' }, 'alice')).toThrow(/must be a number of dollars/);
    expect(() => stepsOf('waive', { item: '' }, 'alice')).toThrow(/choose the checklist item/);
  });
});

describe("a finished run's header", () => {
  const LINE =
    'evidence: baseline tests 2 of 2 passed (`python3 -m pytest -q`), integrity findings 0, gaming findings 0, tree abcdef012345';
  const finished = (status: 'council_approved' | 'max_iterations_reached', notes: string[]) => ({
    kind: 'finished' as const,
    workflowId: 'run-1',
    temporalStatus: 'COMPLETED',
    outcome: {
      status,
      reason: 'the reason',
      exitCode: status === 'council_approved' ? (0 as const) : (20 as const),
      iteration: 4,
      at: 't',
      notes,
    },
    snapshot: null,
    iteration: 4,
  });

  it('shows the evidence line a done run ended with, as status and the UI card do', async () => {
    const page = String(await runSummary(finished('council_approved', [LINE, 'delivered to branch vigil/run-1']), null, null, NOW));
    expect(page).toContain('<p class="evidence">evidence: baseline tests 2 of 2 passed (`python3 -m pytest -q`), integrity findings 0');
    expect(page).toContain('tree abcdef012345</p>');
  });

  it('shows none for a run that did not end done, and escapes what the line holds', async () => {
    const page = String(await runSummary(finished('max_iterations_reached', ['completion not independently verified']), null, null, NOW));
    expect(page).not.toContain('class="evidence"');
    const hostile = String(await runSummary(finished('council_approved', ['evidence: tests (`<script>x</script>`)']), null, null, NOW));
    expect(hostile).toContain('&lt;script&gt;');
    expect(hostile).not.toContain('<script>x');
  });
});

describe('an inbox card', () => {
  const question = 'escalation (agent request): Postgres or SQLite?';
  const card = (deadlines: NonNullable<StatusSnapshot['pause']>['deadlines']): string => {
    const snapshot = statusSnapshot({ status: 'paused', paused: true, pause: { ...pause(question), deadlines } });
    const waiting = waitingFor(snapshot, NOW);
    if (!waiting) throw new Error('an escalation waits for a person');
    return String(inboxCards([{ entry: { row: {} as RunRow, snapshot, waiting }, handoff: null }], NOW));
  };
  const timers = {
    remindAt: '2026-11-22T15:00:00Z',
    rerouteAt: '2026-11-23T11:00:00Z',
    deadlineAt: '2026-11-25T11:00:00Z',
    onDeadline: 'stop' as const,
    reminded: null,
    rerouted: null,
    answered: null,
  };

  it("says what happens if nobody answers, as status does: the reminder, the re-route, the deadline's action", () => {
    const text = card(timers);
    expect(text).toContain('<dt>if nobody answers</dt>');
    expect(text).toContain('<dd class="deadlines">reminder in 3 h; re-routed in 23 h; stops in 71 h</dd>');
    const later = card({ ...timers, reminded: '2026-11-22T10:00:00Z', onDeadline: 'default-answer' });
    expect(later).toContain('<dd class="deadlines">reminder sent 2 h ago; re-routed in 23 h; takes the default answer in 71 h</dd>');
  });

  it('says nothing of deadlines for a pause without them', () => {
    expect(card(null)).not.toContain('if nobody answers');
    expect(card(undefined)).not.toContain('if nobody answers');
  });
});
