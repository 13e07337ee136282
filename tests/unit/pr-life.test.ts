/**
 * The life of a followed pull request wherever a person looks (rules/pr-life.ts and its readers):
 * where it stands from the status snapshot, `vigil status`'s text, the Temporal UI's card, the
 * console's run-page section and inbox line, and the report's "Pull request" section made from the
 * journalled events (lib/report-pr.ts). Snapshots as the `status` query answers them (parsed by its
 * schema); nothing is faked.
 */
import { describe, expect, it } from 'vitest';
import { prSection } from '../../cli/console/pr-section.js';
import { inboxCards } from '../../cli/console/pages.js';
import { waitingFor } from '../../cli/console/model.js';
import type { RunRow } from '../../cli/console/sources.js';
import { pullRequestLines, pullRequestReport } from '../../lib/report-pr.js';
import { runMarkdown, runText, type RunReport } from '../../lib/run-report.js';
import { printStatus } from '../../cli/status.js';
import { prLife, prLifeLines, prNumber, prState } from '../../rules/pr-life.js';
import type { RunEvent } from '../../schemas/events.js';
import type { StatusSnapshot } from '../../schemas/status.js';
import { currentDetails } from '../../rules/ui.js';
import { statusSnapshot } from '../support/status-snapshot.js';

const URL7 = 'https://github.com/o/r/pull/7';
const CONFLICT =
  'the base branch moved and vigil/r no longer applies cleanly (rebase stopped at a.txt); ' +
  'rebase it onto main yourself and push, or close the pull request; then resume the run';

/** A run following its pull request: two red checks events and a review taken, one rebase, one reply. */
const pullRequest = (over: Partial<NonNullable<StatusSnapshot['pullRequest']>> = {}): NonNullable<StatusSnapshot['pullRequest']> => ({
  url: URL7,
  branch: 'vigil/r',
  base: 'main',
  since: '2026-11-30T10:00:00.000Z',
  waiting: true,
  taken: [
    { id: 'd1', kind: 'checks-failed', at: '2026-11-30T10:05:00.000Z', summary: 'checks failed: CI / unit' },
    { id: 'd2', kind: 'comment', at: '2026-11-30T11:00:00.000Z', summary: 'changes requested by alice' },
    { id: 'd3', kind: 'base-moved', at: '2026-11-30T12:00:00.000Z', summary: 'the base branch moved' },
  ],
  updates: [
    { at: '2026-11-30T12:00:01.000Z', result: 'updated', mode: 'rebase', base: 'origin/main', commit: 'abcdef0123456789', note: 'rebased' },
  ],
  replies: [{ at: '2026-11-30T11:30:00.000Z', to: 'alice', posted: true, note: 'replied: 1 commit, a.txt changed' }],
  queued: 0,
  ...over,
});
const snap = (over: Partial<StatusSnapshot> = {}): StatusSnapshot =>
  statusSnapshot({ status: 'running', pullRequest: pullRequest(), ...over });

describe('where a followed pull request stands', () => {
  it('reads its number from its address', () => {
    expect(prNumber(URL7)).toBe(7);
    expect(prNumber('https://gitlab.example.com/g/p/-/merge_requests/12')).toBe(12);
    expect(prNumber('https://github.com/o/r/pull/7/files')).toBe(7);
    expect(prNumber(null)).toBeNull();
    expect(prNumber('https://github.com/o/r/pull/x')).toBeNull();
  });

  it('is waiting, queued, checks red, fixing, rebasing, waits for a person, merged, closed or no longer followed', () => {
    const taken = pullRequest().taken;
    expect(prState(snap())).toBe('waiting');
    expect(prState(snap({ pullRequest: pullRequest({ queued: 1 }) }))).toBe('queued');
    expect(prState(snap({ pullRequest: pullRequest({ waiting: false, taken: taken.slice(0, 1) }) }))).toBe('checks_red');
    expect(prState(snap({ pullRequest: pullRequest({ waiting: false, taken: taken.slice(0, 2) }) }))).toBe('fixing');
    expect(prState(snap({ pullRequest: pullRequest({ waiting: false }) }))).toBe('rebasing');
    expect(prState(snap({ status: 'paused', pause: { reason: CONFLICT, by: 'vigil', at: 't' } }))).toBe('needs_person');
    // A person's own pause is theirs to end: the pull request is still where it was.
    expect(prState(snap({ status: 'paused', pause: { reason: 'lunch', by: 'ana', at: 't' } }))).toBe('waiting');
    const ended = (status: string, exitCode: 0 | 20) =>
      prState(snap({ status: 'finished', outcome: { status: status as 'merged', reason: 'r', exitCode } }));
    expect(ended('merged', 0)).toBe('merged');
    expect(ended('pr_closed', 20)).toBe('closed');
    expect(ended('council_approved', 0)).toBe('ended');
    expect(prLife(statusSnapshot({}))).toBeNull();
  });

  it('names who the run answers, and lists what happened in time order with the counts', () => {
    const life = prLife(
      snap({
        pullRequest: pullRequest({ waiting: false, taken: pullRequest().taken.slice(0, 2), answering: { author: 'alice', review: true } }),
      }),
    );
    expect(life?.stateText).toBe('fixing what a review asked, from alice');
    const all = prLife(snap());
    expect(all).toMatchObject({ number: 7, checksTaken: 1, commentsTaken: 1, updates: 1, replies: 1 });
    expect(all?.entries.map((e) => e.text)).toEqual([
      'checks failed: CI / unit',
      'changes requested by alice',
      'replied to alice: replied: 1 commit, a.txt changed',
      'rebased onto origin/main (abcdef012345)',
    ]);
    const lines = prLifeLines(all as NonNullable<typeof all>, 2);
    expect(lines[0]).toBe(`#7 ${URL7} (vigil/r → main): waiting for its next event since 2026-11-30T12:00:00.000Z`);
    expect(lines[1]).toBe('1 red check event(s) taken · 1 comment(s) taken · 1 update(s) onto its base · 1 reply');
    expect(lines[2]).toBe('… 2 earlier');
    expect(lines).toHaveLength(5);
  });

  it('says a conflicting update and a failed one with their notes', () => {
    const life = prLife(
      snap({
        pullRequest: pullRequest({
          updates: [
            {
              at: '2026-11-30T12:00:01.000Z',
              result: 'conflict',
              mode: 'rebase',
              base: 'origin/main',
              commit: null,
              note: 'a.txt conflicts',
            },
            { at: '2026-11-30T13:00:01.000Z', result: 'failed', mode: 'merge', base: '', commit: null, note: 'the remote refused' },
          ],
        }),
      }),
    );
    expect(life?.entries.map((e) => e.text).slice(-2)).toEqual([
      'base moved: rebase conflicts onto origin/main; a person is asked: a.txt conflicts',
      'base moved: merge failed: the remote refused',
    ]);
  });
});

describe('vigil status and the UI card', () => {
  it('status prints the pull request, where it stands and what happened, terminal-safe', () => {
    const lines: string[] = [];
    const hostile = pullRequest({
      taken: [{ id: 'd9', kind: 'comment', at: '2026-11-30T11:00:00.000Z', summary: 'comment by mallory\u001b[2J' }],
      updates: [],
      replies: [],
    });
    const view = {
      kind: 'running' as const,
      workflowId: 'r',
      snapshot: snap({ pullRequest: hostile }),
      workerAnswered: true,
      iteration: 3,
      searchStatus: 'running',
      taskFailing: null,
    };
    printStatus(view, (l) => lines.push(l ?? ''));
    const text = lines.join('\n');
    expect(text).toContain(`  PR        : #7 ${URL7} (vigil/r → main): waiting for its next event since 2026-11-30T11:00:00.000Z`);
    expect(text).toContain('              0 red check event(s) taken · 1 comment(s) taken · 0 update(s) onto its base · 0 replies');
    expect(text).toContain('2026-11-30T11:00:00.000Z comment by mallory');
    expect(text).not.toContain('\u001b');
  });

  it('status of a run that follows none says nothing of a pull request', () => {
    const lines: string[] = [];
    printStatus(
      {
        kind: 'running',
        workflowId: 'r',
        snapshot: statusSnapshot({}),
        workerAnswered: true,
        iteration: 3,
        searchStatus: 'running',
        taskFailing: null,
      },
      (l) => lines.push(l ?? ''),
    );
    expect(lines.join('\n')).not.toContain('PR        :');
  });

  it('the card shows the pull request with where it stands and its latest events, a paused one with the pause', () => {
    const card = currentDetails(snap({ status: 'paused', pause: { reason: CONFLICT, by: 'vigil', at: '2026-11-30T12:00:02.000Z' } }));
    expect(card).toContain(`**Pull request** #7 ${URL7} (vigil/r → main): **waits for a person: the base branch moved`);
    expect(card).toContain('\n- 2026-11-30T12:00:01.000Z rebased onto origin/main (abcdef012345)');
    expect(card).toContain('\n- 2026-11-30T11:30:00.000Z replied to alice: replied: 1 commit, a.txt changed');
    expect(
      currentDetails(snap({ status: 'finished', outcome: { status: 'merged', reason: 'pull request merged', exitCode: 0 } })),
    ).toContain(': **merged** · 1 red check event(s) taken');
    expect(currentDetails(statusSnapshot({}))).not.toContain('Pull request');
  });
});

describe('the console', () => {
  it('the run page has a pull request section with a link, its state and its events, escaped', () => {
    const hostile = pullRequest({
      taken: [{ id: 'd9', kind: 'comment', at: '2026-11-30T11:00:00.000Z', summary: 'comment by <img src=x onerror=alert(1)>' }],
    });
    const page = String(prSection(snap({ pullRequest: hostile }), true));
    expect(page).toContain('<section id="pr" hx-get="/runs/vigil-todo-app-1/fragments/pr"');
    expect(page).toContain(`<a class="pr-link" href="${URL7}" rel="noreferrer noopener">#7</a>`);
    expect(page).toContain('<p class="pr-state" data-state="waiting">');
    expect(page).toContain('<li data-kind="update"><time>2026-11-30T12:00:01.000Z</time> rebased onto origin/main (abcdef012345)</li>');
    expect(page).toContain('comment by &lt;img src=x onerror=alert(1)&gt;');
    expect(page).not.toContain('<img');
    // An address that is not http(s) is no link.
    expect(String(prSection(snap({ pullRequest: pullRequest({ url: 'javascript:alert(1)' }) }), false))).not.toContain('href="javascript');
    expect(String(prSection(statusSnapshot({}), true))).toBe('');
  });

  it("the inbox lists a run whose pull request's branch conflicts with its moved base, with the pull request", () => {
    const s = snap({ status: 'paused', paused: true, pause: { reason: CONFLICT, by: 'vigil', at: '2026-11-30T12:00:02.000Z' } });
    const waiting = waitingFor(s, new Date('2026-11-30T13:00:00.000Z'));
    expect(waiting).toMatchObject({ kind: 'pull_request', since: '2026-11-30T12:00:02.000Z' });
    const card = String(
      inboxCards(
        [{ entry: { row: {} as RunRow, snapshot: s, waiting: waiting as NonNullable<typeof waiting> }, handoff: null }],
        new Date(),
      ),
    );
    expect(card).toContain('data-kind="pull_request"');
    expect(card).toContain('its pull request waits for a person');
    expect(card).toContain(`<p class="pr-line">Pull request <a class="pr-link" href="${URL7}"`);
    // A question the agent asks while it fixes the pull request is an escalation, shown with its pull request.
    const asked = snap({
      status: 'paused',
      paused: true,
      pause: { reason: 'escalation (agent request): which API?', by: 'vigil', at: 't' },
    });
    expect(waitingFor(asked, new Date())?.kind).toBe('escalation');
  });
});

describe('the report', () => {
  const at = (m: number): string => new Date(Date.parse('2026-11-30T10:00:00.000Z') + m * 60_000).toISOString();
  const msg = (m: number, by: string, summary: string, accepted = true): { at: string; event: RunEvent } => ({
    at: at(m),
    event: { kind: 'message', name: 'prEvent', by, summary, accepted },
  });
  const rows = [
    { at: at(0), event: { kind: 'message', name: 'pause', by: 'ana', summary: '', accepted: true } as RunEvent },
    msg(1, 'vigil', `following ${URL7}`),
    msg(5, 'signal', 'received d1'),
    msg(5, 'vigil', 'taken: checks failed: CI / unit'),
    msg(6, 'signal', 'prEvent: event d1 was already received; it is taken once', false),
    msg(20, 'vigil', `following ${URL7}`),
    msg(30, 'vigil', 'taken: changes requested by alice'),
    msg(40, 'vigil', 'replied to alice: replied: 1 commit'),
    msg(41, 'vigil', `following ${URL7}`),
    msg(50, 'vigil', 'taken: the base branch moved'),
    msg(50, 'vigil', 'base moved: rebased vigil/r onto origin/main'),
    msg(60, 'vigil', 'taken: merged (c0ffee)'),
    {
      at: at(60),
      event: { kind: 'outcome', status: 'merged', exitCode: 0, reason: `pull request merged: ${URL7}`, iteration: 5 } as RunEvent,
    },
  ];

  it('makes the section from the journalled events: what was taken, with authors, updates, replies, redeliveries, the end', () => {
    const p = pullRequestReport(rows);
    expect(p).toMatchObject({
      url: URL7,
      number: 7,
      state: 'merged',
      checksTaken: 1,
      commentsTaken: 1,
      updates: 1,
      replies: 1,
      redelivered: 1,
    });
    expect(pullRequestLines(p as NonNullable<typeof p>)).toEqual([
      `#7 ${URL7}: merged`,
      '1 red check event(s) taken · 1 comment(s) taken · 1 update(s) onto its base · 1 reply · 1 redelivered event(s) taken once',
      `${at(1)} following ${URL7}`,
      `${at(5)} checks failed: CI / unit`,
      `${at(6)} event d1 was already received; it is taken once`,
      `${at(20)} pushed again; following ${URL7}`,
      `${at(30)} changes requested by alice`,
      `${at(40)} replied to alice: replied: 1 commit`,
      `${at(41)} pushed again; following ${URL7}`,
      `${at(50)} base moved: rebased vigil/r onto origin/main`,
      `${at(60)} merged: pull request merged: ${URL7}`,
    ]);
  });

  it('says where a running one stands, and has no section for a run that followed none', () => {
    expect(pullRequestReport(rows.slice(0, 4))?.state).toBe('checks_red');
    expect(pullRequestReport(rows.slice(0, 7))?.state).toBe('fixing');
    expect(pullRequestReport(rows.slice(0, 9))?.state).toBe('waiting');
    expect(
      pullRequestReport([...rows.slice(0, 9), msg(50, 'vigil', 'base moved: rebase of vigil/r conflicts with origin/main')])?.state,
    ).toBe('needs_person');
    expect(pullRequestReport(rows.slice(0, 1))).toBeNull();
  });

  it('runText and runMarkdown carry it as a section', () => {
    const p = pullRequestReport(rows);
    const report = {
      workflowId: 'r',
      runIds: ['x'],
      prdTitle: 'T',
      prdPath: null,
      repo: '/repo',
      provider: 'claude',
      autonomyMode: 'autonomous',
      maxIterations: 8,
      budgetUsd: 5,
      startedAt: at(0),
      finishedAt: at(60),
      outcome: { status: 'merged', exitCode: 0, reason: 'merged', iteration: 5 },
      iterations: 0,
      failedIterations: 0,
      councilRounds: 0,
      approvedRounds: 0,
      escalations: 0,
      tierClimbs: 0,
      spendUsd: 0,
      calls: null,
      unpricedCalls: 0,
      orchestration: null,
      waitingMs: 0,
      pauses: 0,
      pausedNow: false,
      pullRequest: p ?? undefined,
      timeline: [],
      notices: [],
    } as RunReport;
    expect(runText(report)).toContain(`pull request:\n  #7 ${URL7}: merged\n  1 red check event(s) taken`);
    expect(runMarkdown(report)).toContain(`## Pull request\n\n- #7 ${URL7}: merged\n`);
    expect(runText({ ...report, pullRequest: undefined })).not.toContain('pull request:');
  });
});
