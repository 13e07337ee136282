/**
 * Reports and history from a real Postgres (the embedded one, started once for this file), checked
 * number by number against hand-built journals of known runs (tests/support/journals.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeEventStore, projectEventsTo } from '../../lib/event-store.js';
import { CliError, EXIT } from '../../cli/connection.js';
import { historyCommand, parseSince, reportAcrossRuns, reportCommand, waitingForPeople, type AcrossRunsReport } from '../../cli/report.js';
import { AcrossRunsReportSchema, HistoryLineSchema, RunReportSchema } from '../../schemas/cli-output-reports.js';
import { failedRun, REPORT_NOW, runningRun, scriptedRun } from '../support/journals.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';
import { exportHistory, reportRun, runMarkdown, spendWords } from '../../lib/run-report.js';
import { openPullRequest } from '../../activities/deliver.js';
import { fakeGh } from '../support/fake-gh.js';
import { makeRepo } from '../support/harness.js';

let tp: TestPostgres;
let db: pg.Pool;

beforeAll(async () => {
  tp = await startTestPostgres();
  for (const [workflowId, events] of [
    ['run-scripted', scriptedRun()],
    ['run-failed', failedRun()],
    ['run-running', runningRun()],
  ] as const) {
    // In two batches that overlap, as the workflow would after a failed projection.
    const half = Math.ceil(events.length / 2);
    expect((await projectEventsTo(tp.server.url, { workflowId, events: events.slice(0, half + 1) })).problem).toBeNull();
    expect((await projectEventsTo(tp.server.url, { workflowId, events: events.slice(half - 1) })).problem).toBeNull();
  }
  db = new pg.Pool({ connectionString: tp.server.url, max: 2 });
  db.on('error', () => undefined);
});

afterAll(async () => {
  await db?.end();
  await closeEventStore();
  await tp?.cleanup();
});

const MIN = 60_000;

describe('reportRun', () => {
  it('gives the scripted run its exact numbers and a timeline of iterations and decisions', async () => {
    const r = await reportRun(db, 'run-scripted', { now: REPORT_NOW });
    expect(r).not.toBeNull();
    expect(r).toMatchObject({
      workflowId: 'run-scripted',
      runIds: ['r-scripted-1', 'r-scripted-2'],
      prdTitle: 'Slugify helper',
      repo: '/repos/slugify',
      provider: 'claude',
      autonomyMode: 'supervised',
      maxIterations: 10,
      budgetUsd: 2,
      startedAt: '2026-01-05T10:00:00.000Z',
      finishedAt: '2026-01-05T10:49:00.000Z',
      outcome: { status: 'council_approved', exitCode: 0, reason: 'council approved at iteration 5 (round 2, 3 of 3)', iteration: 5 },
      iterations: 5,
      failedIterations: 1,
      councilRounds: 2,
      approvedRounds: 1,
      escalations: 1,
      tierClimbs: 1,
      spendUsd: 0.42,
      waitingMs: 40 * MIN,
      pauses: 2,
      pausedNow: false,
    });
    expect(r!.timeline.map((t) => [t.iteration, t.failed, t.tier, t.costUsd])).toEqual([
      [1, false, 'fast', 0.05],
      [2, false, 'fast', 0.07],
      [3, true, 'fast', 0.03],
      [4, false, 'development', 0.12],
      [5, false, 'development', 0.15],
    ]);
    expect(r!.timeline.map((t) => t.decisions.map((d) => d.kind))).toEqual([
      ['gate'],
      ['gate'],
      ['tier_change'],
      ['gate', 'review', 'council_round', 'escalation'],
      ['review', 'council_round'],
    ]);
    expect(r!.timeline[3]!.decisions[2]!.text).toBe('council round 1 (tests green): REJECTED, 1 of 3 approve, 2 needed');
    expect(r!.timeline[2]!.decisions[0]!.text).toBe('tier fast → development: 3 failures at LOW');
    expect(r!.notices.map((n) => n.kind)).toEqual([
      'run_started',
      'message',
      'message',
      'notification',
      'message',
      'outcome',
      'notification',
    ]);
  });

  it('is null for a run the store has never seen', async () => {
    expect(await reportRun(db, 'no-such-run')).toBeNull();
  });
});

describe('spendWords', () => {
  it('never prices calls that reported no cost at 0 USD', () => {
    expect(spendWords(0, 6, 6)).toBe('unpriced (6 call(s), none reported its cost)');
    expect(spendWords(0, 6, null)).toBe('unpriced (6 call(s), none reported its cost)');
    expect(spendWords(0.3, 1, 3)).toBe('0.3 USD + 1 unpriced call(s)');
    // Controls: priced calls read as money, a free priced call as 0 USD.
    expect(spendWords(0.42, 0, 5)).toBe('0.42 USD');
    expect(spendWords(0, 0, 2)).toBe('0 USD');
  });
});

describe('reportAcrossRuns', () => {
  it('over all runs: outcomes, exit codes, iterations to done, council, escalations, climbs, cost, waiting', async () => {
    const r = await reportAcrossRuns(db, { now: REPORT_NOW });
    expect(r).toEqual({
      since: null,
      repo: null,
      runs: 3,
      outcomes: [
        { status: 'council_approved', exitCode: 0, runs: 1 },
        { status: 'max_iterations_reached', exitCode: 20, runs: 1 },
        { status: 'running', exitCode: null, runs: 1 },
      ],
      exitCodes: [
        { exitCode: 0, runs: 1 },
        { exitCode: 20, runs: 1 },
        { exitCode: null, runs: 1 },
      ],
      iterationsToDone: { runs: 1, mean: 5, median: 5, min: 5, max: 5 },
      council: { rounds: 2, approved: 1, rejected: 1, blocked: 0, approvalRate: 0.5, votes: 6, approveVotes: 4, voteApprovalRate: 0.6667 },
      escalations: {
        total: 3,
        perRun: 1,
        byReason: [
          { reason: 'stuck', count: 1 },
          { reason: 'tier_ladder', count: 1 },
          { reason: 'uncertainty', count: 1 },
        ],
        runs: [
          { workflowId: 'run-failed', count: 2, reasons: ['stuck', 'tier_ladder'] },
          { workflowId: 'run-scripted', count: 1, reasons: ['uncertainty'] },
        ],
      },
      tierClimbs: {
        total: 2,
        runs: 2,
        byChange: [
          { from: 'LOW', to: 'MEDIUM', count: 1 },
          { from: 'fast', to: 'development', count: 1 },
        ],
      },
      // Fast: the scripted run's 1-3 (3 failed), the failed run's 1 and 3, the running run's 1;
      // development: the scripted run's 4 and 5, the failed run's 2. Two climbs in nine iterations;
      // the one done run climbed once, so no done run finished at its first tier.
      tiers: {
        byTier: [
          { tier: 'fast', iterations: 6, failed: 1, successRate: 0.8333, costUsd: 0.45, perIterationUsd: 0.075 },
          { tier: 'development', iterations: 3, failed: 0, successRate: 1, costUsd: 0.37, perIterationUsd: 0.123333 },
        ],
        escalationRate: 0.2222,
        firstTierSuccess: { doneRuns: 1, withoutClimb: 0, rate: 0 },
      },
      cost: { totalUsd: 0.82, perRunUsd: 0.273333, doneRuns: 1, perDoneRunUsd: 0.42, allSpendPerDoneRunUsd: 0.82, unpricedCalls: 1 },
      waitingForPeople: { totalMs: 55 * MIN, pauses: 3, perRunMs: (55 * MIN) / 3, pausedNow: ['run-running'] },
      perRun: [
        {
          workflowId: 'run-scripted',
          startedAt: '2026-01-05T10:00:00.000Z',
          finishedAt: '2026-01-05T10:49:00.000Z',
          prdTitle: 'Slugify helper',
          repo: '/repos/slugify',
          provider: 'claude',
          outcome: 'council_approved',
          exitCode: 0,
          iterations: 5,
          failedIterations: 1,
          councilRounds: 2,
          approvedRounds: 1,
          escalations: 1,
          tierClimbs: 1,
          spendUsd: 0.42,
          unpricedCalls: 0,
          waitingMs: 40 * MIN,
          pauses: 2,
          pausedNow: false,
        },
        expect.objectContaining({
          workflowId: 'run-failed',
          outcome: 'max_iterations_reached',
          exitCode: 20,
          iterations: 3,
          failedIterations: 0,
          escalations: 2,
          tierClimbs: 1,
          spendUsd: 0.3,
          unpricedCalls: 1,
          waitingMs: 0,
          pauses: 0,
        }),
        expect.objectContaining({
          workflowId: 'run-running',
          outcome: null,
          exitCode: null,
          finishedAt: null,
          iterations: 1,
          spendUsd: 0.1,
          waitingMs: 15 * MIN,
          pauses: 1,
          pausedNow: true,
        }),
      ] as unknown as AcrossRunsReport['perRun'],
    });
  });

  it('--repo and --since narrow the runs', async () => {
    const slug = await reportAcrossRuns(db, { repo: '/repos/slugify', now: REPORT_NOW });
    expect(slug.perRun.map((p) => p.workflowId)).toEqual(['run-scripted', 'run-running']);
    expect(slug.cost).toMatchObject({ totalUsd: 0.52, perRunUsd: 0.26, doneRuns: 1, perDoneRunUsd: 0.42, allSpendPerDoneRunUsd: 0.52 });
    expect(slug.escalations.total).toBe(1);

    const later = await reportAcrossRuns(db, { since: '2026-01-06T00:00:00Z', now: REPORT_NOW });
    expect(later.since).toBe('2026-01-06T00:00:00.000Z');
    expect(later.perRun.map((p) => p.workflowId)).toEqual(['run-failed', 'run-running']);
    expect(later.iterationsToDone).toEqual({ runs: 0, mean: null, median: null, min: null, max: null });
    expect(later.council.approvalRate).toBeNull();
    expect(later.cost.perDoneRunUsd).toBeNull();

    const none = await reportAcrossRuns(db, { repo: '/nowhere' });
    expect(none.runs).toBe(0);
    expect(none.cost.perRunUsd).toBeNull();
  });
});

describe('waitingForPeople', () => {
  const at = (m: number) => new Date(Date.UTC(2026, 0, 1) + m * MIN);
  it('a second pause while paused is not a new pause; refused messages do not count; the outcome ends a pause', () => {
    const w = waitingForPeople(
      [
        { at: at(0), event: { kind: 'message', name: 'pause', by: 'a', summary: '', accepted: true } },
        { at: at(1), event: { kind: 'escalation', iteration: 1, reason: 'stuck', detail: '', paused: true } },
        { at: at(2), event: { kind: 'message', name: 'resume', by: 'a', summary: '', accepted: false } },
        { at: at(10), event: { kind: 'message', name: 'resume', by: 'a', summary: '', accepted: true } },
        { at: at(11), event: { kind: 'message', name: 'pause', by: 'a', summary: '', accepted: false } },
        { at: at(20), event: { kind: 'escalation', iteration: 2, reason: 'stuck', detail: '', paused: true } },
        { at: at(25), event: { kind: 'outcome', status: 'stopped', exitCode: 0, reason: '', iteration: 2 } },
      ],
      at(100),
    );
    expect(w).toEqual({ ms: 15 * MIN, pauses: 2, pausedNow: false });
  });
});

describe('exportHistory', () => {
  it('jsonl parses back to the same envelopes, in seq order', async () => {
    const text = await exportHistory(db, 'run-scripted', 'jsonl');
    const lines = text!.trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(scriptedRun());
  });

  it('md has a summary and one line per iteration', async () => {
    const md = (await exportHistory(db, 'run-scripted', 'md', { now: REPORT_NOW }))!;
    expect(md.split('\n')[0]).toBe('# Run `run-scripted`: Slugify helper');
    const iterationLines = md.split('\n').filter((l) => /^- iteration \d+/.test(l));
    expect(iterationLines).toHaveLength(5);
    expect(iterationLines[3]).toContain('council round 1 (tests green): REJECTED');
    expect(iterationLines[3]).toContain('escalation (uncertainty), paused for a person');
    // Each member's vote and reason, under the iteration of its round.
    const lines = md.split('\n');
    const at = lines.indexOf(iterationLines[3]!);
    expect(lines.slice(at + 1, at + 4)).toEqual([
      '  - council round 1, member 1: APPROVE — PRD met',
      '  - council round 1, member 2: REJECT — README lacks docs',
      '  - council round 1, member 3: REJECT — README lacks docs',
    ]);
    expect(md).toContain('  - council round 2, member 3: APPROVE — PRD met');
    expect(md).toContain('- outcome: council_approved (exit 0) at iteration 5');
    expect(md).toContain('waiting for people: 40m 0s over 2 pause(s)');
    expect(md).toContain('spend: 0.42 USD (orchestration 7 call(s), 0.14 USD, 33%)');
  });

  it('is null for an unknown run', async () => {
    expect(await exportHistory(db, 'no-such-run', 'jsonl')).toBeNull();
  });
});

describe('the commands', () => {
  const capture = () => {
    const chunks: string[] = [];
    return { out: (t: string) => void chunks.push(t), text: () => chunks.join('') };
  };
  const env = () => ({ DATABASE_URL: tp.server.url });
  const rejection = async (p: Promise<unknown>): Promise<CliError> => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CliError);
    return err as CliError;
  };

  it('report --json prints the report across runs', async () => {
    const c = capture();
    expect(await reportCommand({ json: true, repo: '/repos/slugify' }, { out: c.out, env: env(), now: REPORT_NOW })).toBe(0);
    expect(JSON.parse(c.text())).toEqual(
      JSON.parse(JSON.stringify(await reportAcrossRuns(db, { repo: '/repos/slugify', now: REPORT_NOW }))),
    );
    // Its schema (schemas/cli-output-reports.ts) takes it as printed, across every run too.
    expect(AcrossRunsReportSchema.parse(JSON.parse(c.text()))).toMatchObject({ repo: '/repos/slugify' });
    const all = capture();
    expect(await reportCommand({ json: true }, { out: all.out, env: env(), now: REPORT_NOW })).toBe(0);
    expect(AcrossRunsReportSchema.parse(JSON.parse(all.text())).perRun.length).toBeGreaterThanOrEqual(3);
  });

  it('report prints text; report <id> the timeline; --since takes a duration', async () => {
    const c = capture();
    expect(await reportCommand({ since: '2d' }, { out: c.out, env: env(), now: new Date('2026-01-07T13:00:00Z') })).toBe(0);
    expect(c.text()).toMatch(/^runs: 2 \(since 2026-01-05T13:00:00\.000Z\)\n/);
    expect(c.text()).toContain('cost: 0.4 USD in all');
    expect(c.text()).toContain('tier escalation rate: ');
    const all = capture();
    expect(await reportCommand({}, { out: all.out, env: env(), now: REPORT_NOW })).toBe(0);
    expect(all.text()).toContain(
      'tiers: fast 6 (83% ok, 0.45 USD, 0.075 per priced iteration) · development 3 (100% ok, 0.37 USD, 0.123333 per priced iteration)\n' +
        'tier escalation rate: 22% of iterations climbed; first-tier success: 0 of 1 done run(s) never climbed (0%)\n',
    );
    const one = capture();
    expect(await reportCommand({ id: 'run-scripted' }, { out: one.out, env: env(), now: REPORT_NOW })).toBe(0);
    expect(one.text()).toContain('run run-scripted: Slugify helper');
    expect(
      one
        .text()
        .split('\n')
        .filter((l) => /^ {2}iteration \d/.test(l)),
    ).toHaveLength(5);
    const json = capture();
    expect(await reportCommand({ id: 'run-scripted', json: true }, { out: json.out, env: env(), now: REPORT_NOW })).toBe(0);
    expect(RunReportSchema.parse(JSON.parse(json.text()))).toMatchObject({
      workflowId: 'run-scripted',
      iterations: 5,
      spendUsd: 0.42,
      orchestration: { calls: 7, usd: 0.14 },
    });
    expect(parseSince('90m', new Date('2026-01-01T02:00:00Z')).toISOString()).toBe('2026-01-01T00:30:00.000Z');
  });

  it('history --format md|jsonl prints the history', async () => {
    const md = capture();
    expect(await historyCommand('run-failed', { format: 'md' }, { out: md.out, env: env() })).toBe(0);
    expect(
      md
        .text()
        .split('\n')
        .filter((l) => l.startsWith('- iteration ')),
    ).toHaveLength(3);
    const jsonl = capture();
    expect(await historyCommand('run-failed', {}, { out: jsonl.out, env: env() })).toBe(0);
    expect(jsonl.text().trimEnd().split('\n')).toHaveLength(failedRun().length);
    // Every line an event envelope of its schema, in seq order.
    const envelopes = jsonl
      .text()
      .trimEnd()
      .split('\n')
      .map((l) => HistoryLineSchema.parse(JSON.parse(l)));
    expect(envelopes.map((e) => e.seq)).toEqual(failedRun().map((_, i) => i + 1));
    expect(envelopes.every((e) => !('invalid' in e))).toBe(true);
  });

  it('usage errors exit 2, an unknown run 3', async () => {
    expect((await rejection(historyCommand('run-failed', { format: 'pdf' }, { env: env() }))).exitCode).toBe(EXIT.usage);
    expect((await rejection(reportCommand({ since: 'last tuesday' }, { env: env() }))).exitCode).toBe(EXIT.usage);
    expect((await rejection(reportCommand({ id: 'nope' }, { env: env() }))).exitCode).toBe(EXIT.noSuchRun);
    expect((await rejection(historyCommand('nope', { format: 'md' }, { env: env() }))).exitCode).toBe(EXIT.noSuchRun);
  });

  it('without DATABASE_URL, or with the store unreachable, exit 4 and say what to set', async () => {
    // No DATABASE_URL and no local store under VIGIL_HOME.
    const missing = await rejection(reportCommand({}, { env: { VIGIL_HOME: mkdtempSync(path.join(os.tmpdir(), 'vigil-home-')) } }));
    expect(missing.exitCode).toBe(EXIT.unreachable);
    expect(missing.message).toMatch(
      /DATABASE_URL is not set and there is no local store \(.*postgres\/url\)\. .*`vigil server` or `vigil up`/,
    );
    const down = await rejection(
      historyCommand('run-scripted', { format: 'jsonl' }, { env: { DATABASE_URL: 'postgres://vigil:hunter2@127.0.0.1:1/vigil_events' } }),
    );
    expect(down.exitCode).toBe(EXIT.unreachable);
    expect(down.message).toMatch(/^the event store at 127\.0\.0\.1:1\/vigil_events is unreachable: .*DATABASE_URL/s);
    expect(down.message).not.toContain('hunter2');
  });

  it('a report on an empty store migrates it and finds no run', async () => {
    const url = await tp.freshDatabase('empty_store');
    const c = capture();
    expect(await reportCommand({}, { out: c.out, env: { DATABASE_URL: url } })).toBe(0);
    expect(c.text()).toBe('runs: 0\n');
  });
});

describe('what done rested on', () => {
  const LINE =
    'evidence: baseline tests 2 of 2 passed (`python3 -m pytest -q`), integrity findings 0, gaming findings 0, tree abcdef012345';

  it('the outcome event keeps the evidence line, and report <id>, its --json and history md show it', async () => {
    // The scripted run again, its outcome journalled with the line (rules/journal.ts, outcomeEvent).
    const events = scriptedRun().map((e) => (e.event.kind === 'outcome' ? { ...e, event: { ...e.event, evidence: LINE } } : e));
    expect((await projectEventsTo(tp.server.url, { workflowId: 'run-evidence', events })).problem).toBeNull();
    const r = await reportRun(db, 'run-evidence', { now: REPORT_NOW });
    expect(r?.outcome).toEqual({
      status: 'council_approved',
      exitCode: 0,
      reason: 'council approved at iteration 5 (round 2, 3 of 3)',
      iteration: 5,
      evidence: LINE,
    });
    const chunks: string[] = [];
    expect(await reportCommand({ id: 'run-evidence' }, { out: (t) => void chunks.push(t), env: { DATABASE_URL: tp.server.url } })).toBe(0);
    expect(chunks.join('').split('\n')).toContain(`  ${LINE}`);
    const json: string[] = [];
    const env = { DATABASE_URL: tp.server.url };
    expect(await reportCommand({ id: 'run-evidence', json: true }, { out: (t) => void json.push(t), env })).toBe(0);
    expect(RunReportSchema.parse(JSON.parse(json.join(''))).outcome?.evidence).toBe(LINE);
    expect((await exportHistory(db, 'run-evidence', 'md', { now: REPORT_NOW }))?.split('\n')).toContain(`- ${LINE}`);
  });

  it('a run that did not end done, or was journalled before the line, says nothing of it', async () => {
    for (const id of ['run-failed', 'run-scripted']) {
      const r = await reportRun(db, id, { now: REPORT_NOW });
      expect(r?.outcome).not.toHaveProperty('evidence');
      expect((await exportHistory(db, id, 'md', { now: REPORT_NOW })) ?? '').not.toMatch(/^- evidence: /m);
    }
  });
});

describe("the delivery's pull request body", () => {
  // gh is faked (tests/support/fake-gh.ts: GitHub cannot run here); git, the push and the store are real.
  const withEnv = async <T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> => {
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    for (const [k, v] of Object.entries(vars))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    try {
      return await fn();
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  };
  const repoWithRemote = (): string => {
    const repo = makeRepo({ files: { 'README.md': '# r\n' } });
    const remote = mkdtempSync(path.join(os.tmpdir(), 'vigil-origin-'));
    execFileSync('git', ['init', '-q', '--bare'], { cwd: remote });
    execFileSync('git', ['remote', 'add', 'origin', remote], { cwd: repo });
    execFileSync('git', ['branch', 'vigil/run-scripted'], { cwd: repo });
    return repo;
  };
  const ask = (repo: string) => ({
    repoPath: repo,
    runId: 'run-scripted',
    branch: 'vigil/run-scripted',
    title: 'Slugify helper',
    body: 'the workflow’s own report',
    reportFromStore: true,
  });

  it("is the run's report from the worker's own store, as `vigil report <id> --format md` renders it", async () => {
    const { ghDir } = fakeGh();
    const repo = repoWithRemote();
    const r = await withEnv({ DATABASE_URL: tp.server.url, VIGIL_DATABASE_URL: undefined, PATH: `${ghDir}:${process.env.PATH}` }, () =>
      openPullRequest(ask(repo)),
    );
    expect(r.url).toBe('https://github.com/o/r/pull/7');
    const expected = runMarkdown((await reportRun(db, 'run-scripted'))!);
    expect(readFileSync(r.bodyPath!, 'utf8')).toBe(expected);
  });

  it('falls back to the workflow’s report, saying why, on a worker without a store', async () => {
    const { ghDir } = fakeGh();
    const repo = repoWithRemote();
    const r = await withEnv({ DATABASE_URL: undefined, VIGIL_DATABASE_URL: undefined, PATH: `${ghDir}:${process.env.PATH}` }, () =>
      openPullRequest(ask(repo)),
    );
    const body = readFileSync(r.bodyPath!, 'utf8');
    expect(body.startsWith('the workflow’s own report\n\n_The event store')).toBe(true);
    expect(body).toContain('DATABASE_URL is not set');
  });
});
