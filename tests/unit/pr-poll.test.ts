/**
 * The polling fallback of a followed pull request (activities/pr-poll.ts): what a poll's answer
 * makes of GitHub's view of the pull request, as the same events `vigil hooks` maps from webhooks,
 * with ids made from what they are about, so the next poll seeing the same thing is taken once.
 *
 * `gh` is faked (tests/support/fake-gh.ts), and only gh: it is the one part that talks to GitHub,
 * which cannot run here. The repository it runs in is a real git repository.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollEvents, pollPullRequest, POLL_QUERY } from '../../activities/pr-poll.js';
import { mapGithubEvent } from '../../cli/hooks.js';
import { receivePrEvent, newPullRequestState } from '../../rules/follow-pr.js';
import { PrEventSchema, type PrEvent } from '../../schemas/pr-event.js';
import { fakeGh, setFakePullRequest } from '../support/fake-gh.js';

const SINCE = '2026-01-10T00:00:00Z';
const HEAD = 'a'.repeat(40);
const BASE = 'b'.repeat(40);

const checkRun = (name: string, status: string, conclusion: string | null, id = 1): Record<string, unknown> => ({
  __typename: 'CheckRun',
  databaseId: id,
  name,
  status,
  conclusion,
  title: `${name}: ${conclusion ?? status}`,
  summary: 'FAIL a.test: expected "fixed"',
  text: null,
  detailsUrl: `https://github.com/o/r/runs/${id}`,
});

function openPr(over: Record<string, unknown> = {}, contexts: unknown[] = []): Record<string, unknown> {
  return {
    state: 'OPEN',
    merged: false,
    mergeCommit: null,
    mergeStateStatus: 'CLEAN',
    baseRefName: 'main',
    baseRefOid: BASE,
    headRefOid: HEAD,
    commits: { nodes: [{ commit: { oid: HEAD, statusCheckRollup: { contexts: { nodes: contexts } } } }] },
    reviews: { nodes: [] },
    comments: { nodes: [] },
    ...over,
  };
}

describe('what a poll makes of the pull request', () => {
  it('an open pull request, its checks green and nothing asked: no event', () => {
    expect(pollEvents(openPr({}, [checkRun('unit', 'COMPLETED', 'SUCCESS')]), SINCE)).toEqual([]);
  });

  it('checks finished red on the head: one event named by the head commit, with the red checks and their log tails', () => {
    const events = pollEvents(
      openPr({}, [
        checkRun('unit', 'COMPLETED', 'FAILURE', 1),
        checkRun('lint', 'COMPLETED', 'SUCCESS', 2),
        { __typename: 'StatusContext', context: 'ci/jenkins', state: 'ERROR', description: 'build broke', targetUrl: 'https://ci/1' },
      ]),
      SINCE,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'checks-failed', id: `checks-${HEAD}`, by: 'poll' });
    const checks = events[0]?.kind === 'checks-failed' ? events[0].checks : [];
    expect(checks.map((c) => c.name)).toEqual(['unit', 'ci/jenkins']);
    expect(checks[0]?.logTail).toContain('FAIL a.test: expected "fixed"');
    expect(checks[1]?.logTail).toContain('build broke');
  });

  it('a red check while another still runs is not an event yet (the checks have not finished)', () => {
    const running = openPr({}, [checkRun('unit', 'COMPLETED', 'FAILURE', 1), checkRun('e2e', 'IN_PROGRESS', null, 2)]);
    expect(pollEvents(running, SINCE)).toEqual([]);
  });

  it('merged: one merged event with the merge commit, before anything else; closed: closed', () => {
    const merged = pollEvents(
      openPr({ state: 'MERGED', merged: true, mergeCommit: { oid: 'c'.repeat(40) } }, [checkRun('unit', 'COMPLETED', 'FAILURE')]),
      SINCE,
    );
    expect(merged).toEqual([{ kind: 'merged', id: `merged-${'c'.repeat(40)}`, mergeCommit: 'c'.repeat(40), by: 'poll' }]);
    expect(pollEvents(openPr({ state: 'CLOSED' }), SINCE)).toEqual([{ kind: 'closed', id: 'closed', by: 'poll' }]);
  });

  it('the base moved and the branch conflicts (or must be up to date): a base-moved event named by the base commit', () => {
    expect(pollEvents(openPr({ mergeStateStatus: 'DIRTY' }), SINCE)).toEqual([{ kind: 'base-moved', id: `base-${BASE}`, by: 'poll' }]);
    expect(pollEvents(openPr({ mergeStateStatus: 'BEHIND' }), SINCE)[0]?.kind).toBe('base-moved');
    // Blocked by a rule, unknown while GitHub computes it, clean: not the base's doing.
    for (const m of ['BLOCKED', 'UNKNOWN', 'CLEAN', 'UNSTABLE']) expect(pollEvents(openPr({ mergeStateStatus: m }), SINCE)).toEqual([]);
  });

  it('reviews that request changes and comments addressed to the run since it follows: comments, oldest first, verbatim', () => {
    const events = pollEvents(
      openPr({
        reviews: {
          nodes: [
            { databaseId: 11, state: 'APPROVED', body: 'LGTM', submittedAt: '2026-01-11T00:00:00Z', author: { login: 'bo' } },
            {
              databaseId: 12,
              state: 'CHANGES_REQUESTED',
              body: 'Please keep the first line.',
              submittedAt: '2026-01-12T00:00:00Z',
              author: { login: 'ana' },
              comments: { nodes: [{ body: 'this line', path: 'a.txt', line: 2 }] },
            },
            // Before the run followed the pull request: not an event.
            { databaseId: 10, state: 'CHANGES_REQUESTED', body: 'old', submittedAt: '2026-01-01T00:00:00Z', author: { login: 'cy' } },
          ],
        },
        comments: {
          nodes: [
            { databaseId: 21, body: '/vigil add a test for b', createdAt: '2026-01-11T12:00:00Z', author: { login: 'dee' } },
            { databaseId: 22, body: 'nice, but ask /vigil later', createdAt: '2026-01-11T13:00:00Z', author: { login: 'eve' } },
            { databaseId: 23, body: '/vigilant is not the run', createdAt: '2026-01-11T14:00:00Z', author: { login: 'fay' } },
            { databaseId: 20, body: '/vigil too early', createdAt: '2026-01-09T00:00:00Z', author: { login: 'gus' } },
          ],
        },
      }),
      SINCE,
    );
    expect(events).toEqual([
      { kind: 'comment', id: 'comment-21', author: 'dee', text: 'add a test for b', commentKind: 'comment' },
      {
        kind: 'comment',
        id: 'review-12',
        author: 'ana',
        text: 'Please keep the first line.\n\na.txt:2: this line',
        commentKind: 'review',
      },
    ]);
  });

  it('the same view polled again makes the same ids: each event is received once, as a redelivered webhook', () => {
    const view = openPr({ mergeStateStatus: 'DIRTY' }, [checkRun('unit', 'COMPLETED', 'FAILURE')]);
    let pr = newPullRequestState('https://github.com/o/r/pull/7', 'vigil/r', SINCE);
    const received: string[] = [];
    for (let poll = 0; poll < 3; poll++)
      for (const e of pollEvents(view, SINCE)) {
        const got = receivePrEvent(pr, e);
        if (got.ok) {
          pr = got.state;
          received.push(e.id);
        }
      }
    expect(received).toEqual([`checks-${HEAD}`, `base-${BASE}`]);
    // A new head (the run pushed its fix) whose checks are red again is a new event.
    const next = pollEvents(openPr({ headRefOid: 'd'.repeat(40) }, [checkRun('unit', 'COMPLETED', 'FAILURE', 3)]), SINCE);
    expect(next.map((e) => e.id)).toEqual([`checks-${'d'.repeat(40)}`]);
    expect(receivePrEvent(pr, next[0] as (typeof next)[number]).ok).toBe(true);
  });

  it("a webhook and the poller seeing the same facts: each is taken once, whichever came first; another head's, another comment's are new", () => {
    const repository = { full_name: 'o/r' };
    const hook = (name: string, payload: Record<string, unknown>, delivery: string): PrEvent => {
      const m = mapGithubEvent(name, { repository, ...payload });
      if ('ignored' in m) throw new Error(m.ignored);
      return PrEventSchema.parse({ ...m.event, id: m.id ?? delivery });
    };
    const red = hook(
      'check_suite',
      { action: 'completed', check_suite: { conclusion: 'failure', head_sha: HEAD, head_branch: 'vigil/r' } },
      'g-1',
    );
    const asked = hook(
      'issue_comment',
      { action: 'created', issue: { pull_request: {} }, comment: { id: 21, body: '/vigil add a test for b', user: { login: 'dee' } } },
      'g-2',
    );
    const moved = hook('push', { ref: 'refs/heads/main', after: BASE }, 'g-3');
    const view = openPr(
      {
        mergeStateStatus: 'DIRTY',
        comments: {
          nodes: [{ databaseId: 21, body: '/vigil add a test for b', createdAt: '2026-01-11T00:00:00Z', author: { login: 'dee' } }],
        },
      },
      [checkRun('unit', 'COMPLETED', 'FAILURE')],
    );
    const polled = pollEvents(view, SINCE);
    let pr = newPullRequestState('https://github.com/o/r/pull/7', 'vigil/r', SINCE);
    const taken: string[] = [];
    // The webhooks first, then the poll (and the other way round below): three facts, three events taken.
    for (const e of [red, asked, moved, ...polled]) {
      const got = receivePrEvent(pr, e);
      if (got.ok) {
        pr = got.state;
        taken.push(e.id);
      } else expect(got.duplicate).toBe(true);
    }
    expect(taken).toEqual([`checks-${HEAD}`, 'comment-21', `base-${BASE}`]);
    let other = newPullRequestState('https://github.com/o/r/pull/7', 'vigil/r', SINCE);
    const takenOther: string[] = [];
    for (const e of [...polled, red, asked, moved]) {
      const got = receivePrEvent(other, e);
      if (got.ok) {
        other = got.state;
        takenOther.push(e.id);
      }
    }
    expect(takenOther.sort()).toEqual([`base-${BASE}`, `checks-${HEAD}`, 'comment-21']);
    // GitHub's redelivery of the same check suite (another delivery id) is the same fact; a new head's is not.
    expect(
      receivePrEvent(pr, hook('check_suite', { action: 'completed', check_suite: { conclusion: 'failure', head_sha: HEAD } }, 'g-4')).ok,
    ).toBe(false);
    const newHead = hook('check_suite', { action: 'completed', check_suite: { conclusion: 'failure', head_sha: 'd'.repeat(40) } }, 'g-5');
    expect(receivePrEvent(pr, newHead).ok).toBe(true);
  });
});

describe('a poll through gh (faked only where it talks to GitHub)', () => {
  const { ghDir, ghCallsIn } = fakeGh();
  const savedPath = process.env.PATH;
  const repo = mkdtempSync(path.join(os.tmpdir(), 'vigil-poll-repo-'));
  beforeAll(() => {
    execFileSync('git', ['init', '-q', repo]);
    process.env.PATH = `${ghDir}${path.delimiter}${savedPath ?? ''}`;
  });
  afterAll(() => {
    process.env.PATH = savedPath;
  });
  const input = { repoPath: repo, runId: 'r1', url: 'https://github.com/o/r/pull/7', since: SINCE };

  it('one gh api graphql call per poll, its answer made into events', async () => {
    setFakePullRequest(repo, openPr({}, [checkRun('unit', 'COMPLETED', 'FAILURE')]));
    const before = ghCallsIn(repo).length;
    const r = await pollPullRequest(input);
    expect(r.events.map((e) => e.id)).toEqual([`checks-${HEAD}`]);
    expect(r.note).toBe('polled https://github.com/o/r/pull/7: open, clean; 1 event(s)');
    const calls = ghCallsIn(repo).slice(before);
    expect(calls).toEqual([['api', 'graphql', '-f', `query=${POLL_QUERY}`, '-f', 'url=https://github.com/o/r/pull/7']]);
  });

  it('gh failing (GitHub unreachable) is no event and no throw: the note says why', async () => {
    const other = mkdtempSync(path.join(os.tmpdir(), 'vigil-poll-unreachable-'));
    execFileSync('git', ['init', '-q', other]);
    const r = await pollPullRequest({ ...input, repoPath: other });
    expect(r).toEqual({ events: [], note: 'gh api graphql failed: error connecting to api.github.com' });
  });
});
