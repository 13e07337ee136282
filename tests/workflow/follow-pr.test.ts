/**
 * After delivery the run follows its pull request (knob followPr, on by default with deliver=pr):
 * it waits for the `prEvent` signal and ends `merged` or `pr_closed`, or takes red checks as a
 * normal iteration whose prompt carries them, judged again and pushed to the same branch; a
 * redelivered event is taken once.
 *
 * Real git and a real bare remote: every push goes to it. `gh` is faked, and only gh (tests/support/fake-gh.ts): it is the
 * one part that talks to GitHub, which cannot run here. The fake records its calls, answers as an
 * installed, logged-in gh, and remembers the pull requests it "opened" so that `gh pr list
 * --head B` finds them, as GitHub would.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import {
  fileWorker,
  makeRepo,
  runInput,
  type ScenarioInput,
  startRun,
  uniqueId,
  waitForStatus,
  WorkerProcesses,
  writeScenario,
} from '../support/harness.js';
import { patient } from '../support/patience.js';
import { fakeGh, setFakePullRequest } from '../support/fake-gh.js';
import type { Knobs } from '../../schemas/knobs.js';
import { patchIds } from '../replay/command-sequence.js';
import { startHooks } from '../../cli/hooks-command.js';
import { stopUpdate } from '../../workflows/messages.js';

const { ghDir, ghCallsIn } = fakeGh();
const shared = fileWorker('follow-pr', () => {
  process.env.PATH = `${ghDir}${path.delimiter}${process.env.PATH ?? ''}`;
});
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

const ROLES = {
  checklist: { default: { output: '[{"id": "REQ-1", "title": "a.txt exists", "priority": "critical", "verify": "read a.txt"}]\n' } },
  'checklist-verifier': { default: { output: 'ITEM REQ-1: PASS - a.txt exists\n' } },
  reviewer: { default: { output: 'VERDICT: PASS\n' } },
  'devils-advocate': { default: { output: 'VERDICT: PASS\nVOTE: APPROVE\nREASON: found nothing\n' } },
  council: { default: { output: 'VOTE: APPROVE\nREASON: done\n' } },
};

/**
 * A repository with a bare remote, and a run on it (deliver=pr, every other knob its default) that the council approves at iteration 3,
 * on this file's worker (or on `taskQueue`, served by worker processes).
 */
async function followedRun(
  prefix: string,
  fix: boolean | NonNullable<ScenarioInput['iterations']>[number],
  taskQueue = shared.taskQueue,
  base = 'main',
  opts: { knobs?: Partial<Knobs>; detached?: boolean } = {},
): Promise<{ repo: string; remote: string; id: string; handle: WorkflowHandle }> {
  const repo = makeRepo({ files: { 'README.md': '# s\n\nNotes.\n' } });
  const remote = mkdtempSync(path.join(os.tmpdir(), 'vigil-origin-'));
  git(remote, 'init', '-q', '--bare');
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '-q', 'origin', 'main');
  // A base of its own: a push to it concerns this run alone (every run of this file follows the same fake pull request address).
  if (base !== 'main') {
    git(repo, 'checkout', '-q', '-b', base);
    git(repo, 'push', '-q', 'origin', base);
  }
  // The person is on no branch: the pull request is opened without --base (into the remote's default, its HEAD).
  if (opts.detached) {
    git(remote, 'symbolic-ref', 'HEAD', `refs/heads/${base}`);
    git(repo, 'checkout', '-q', '--detach');
  }
  const iterations: ScenarioInput['iterations'] = [
    { writes: { 'a.txt': '1\n' } },
    { writes: { 'a.txt': '2\n' } },
    { writes: { 'a.txt': '3\n' }, claim: 'file' },
  ];
  // The fix the red checks ask for: the next iteration writes it and claims again.
  if (fix === true) iterations.push({ writes: { 'a.txt': '3\nfixed\n' }, claim: 'file' });
  else if (fix) iterations.push(fix);
  const scenario = writeScenario(repo, { version: 1, iterations, roles: ROLES });
  const id = uniqueId(prefix);
  const input = runInput(repo, scenario, { maxIterations: 8, deliver: 'pr', ...opts.knobs });
  const handle = await startRun(shared.env, taskQueue, input, id);
  await waitForStatus(handle, (s) => s.pullRequest?.waiting === true, 120_000);
  return { repo, remote, id, handle };
}

/** Another clone of the remote moves its main: a commit adding `file`, pushed. Answers the new tip. */
function moveBase(remote: string, file: string, text: string, base = 'main'): string {
  const other = mkdtempSync(path.join(os.tmpdir(), 'vigil-other-clone-'));
  git(other, 'clone', '-q', '-b', base, remote, '.');
  writeFileSync(path.join(other, file), text);
  git(other, 'add', file);
  git(other, '-c', 'user.name=Other', '-c', 'user.email=other@example.com', 'commit', '-q', '-m', `the base moves: ${file}`);
  git(other, 'push', '-q', 'origin', base);
  return git(other, 'rev-parse', 'HEAD');
}

/** Waits until the remote's run branch stands on `base`; answers its tip. */
async function pushedOnto(remote: string, branch: string, base: string): Promise<string> {
  const deadline = Date.now() + patient(120_000);
  for (;;) {
    const tip = git(remote, 'rev-parse', branch);
    if (spawnSync('git', ['merge-base', '--is-ancestor', base, tip], { cwd: remote }).status === 0) return tip;
    if (Date.now() > deadline) throw new Error(`${branch} was not pushed onto ${base} in time`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The activity types the history scheduled, in order. */
async function activities(handle: WorkflowHandle): Promise<string[]> {
  return ((await handle.fetchHistory()).events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter((n): n is string => typeof n === 'string');
}

/** Waits until the run's history holds `n` prEvent signals and a workflow task completed after the last of them. */
async function handled(handle: WorkflowHandle, n: number): Promise<void> {
  const deadline = Date.now() + patient(30_000);
  for (;;) {
    const events = (await handle.fetchHistory()).events ?? [];
    const at = events.map((e, i) => (e.workflowExecutionSignaledEventAttributes?.signalName === 'prEvent' ? i : -1)).filter((i) => i >= 0);
    if (at.length >= n && events.slice((at[n - 1] ?? 0) + 1).some((e) => e.workflowTaskCompletedEventAttributes)) return;
    if (Date.now() > deadline) throw new Error(`the run did not handle ${n} prEvent signals in time`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.concurrent('following the pull request after delivery', () => {
  it(
    'merged: the run ends merged (exit 0) with the merge commit; a redelivered event is taken once',
    async () => {
      const { repo, remote, id, handle } = await followedRun('follow-merged', false);
      expect(git(remote, 'rev-parse', `vigil/${id}`)).toBe(git(repo, 'rev-parse', `vigil/${id}`));
      const merged = { kind: 'merged', id: 'delivery-1', mergeCommit: 'abc123def456' };
      await handle.signal('prEvent', merged);
      await handle.signal('prEvent', merged);
      const outcome = (await handle.result()) as { status: string; exitCode: number; reason: string; notes: string[] };
      expect(outcome.status).toBe('merged');
      expect(outcome.exitCode).toBe(0);
      expect(outcome.reason).toMatch(/^pull request merged: https:\/\/github.com\/o\/r\/pull\/7 \(merge commit abc123def456\)/);
      expect(outcome.notes).toContain('pull request opened: https://github.com/o/r/pull/7');
      const history = await handle.fetchHistory();
      const signals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'prEvent');
      expect(signals).toHaveLength(2);
    },
    patient(240_000),
  );

  it(
    'closed without merge: the run ends pr_closed (exit 20)',
    async () => {
      const { handle } = await followedRun('follow-closed', false);
      await handle.signal('prEvent', { kind: 'closed', id: 'delivery-9' });
      const outcome = (await handle.result()) as { status: string; exitCode: number };
      expect(outcome).toMatchObject({ status: 'pr_closed', exitCode: 20 });
    },
    patient(240_000),
  );

  it(
    'red checks: an iteration whose prompt carries them fixes the work, judged again, pushed to the same branch; the redelivery is taken once',
    async () => {
      const { repo, remote, id, handle } = await followedRun('follow-checks', true);
      const branch = `vigil/${id}`;
      const first = git(remote, 'rev-parse', branch);
      const red = { kind: 'checks-failed', id: 'delivery-2', checks: [{ name: 'unit tests', logTail: 'FAIL a.test: expected "fixed"' }] };
      await handle.signal('prEvent', red);
      const again = await waitForStatus(handle, (s) => s.pullRequest?.waiting === true && s.iteration >= 4, 120_000);
      expect(again.pullRequest?.taken.map((t) => t.summary)).toEqual(['checks failed: unit tests']);
      // The same event redelivered, once the run has handled it: taken once (no second iteration, nothing queued, the run still waits).
      await handle.signal('prEvent', red);
      await handled(handle, 2);
      const after = await waitForStatus(handle, () => true);
      expect(after).toMatchObject({ iteration: 4, invalidMessageCount: 0, pullRequest: { waiting: true, queued: 0 } });
      expect(after.pullRequest?.taken).toHaveLength(1);
      const prompt = readFileSync(path.join(repo, '.vigil/runs', id, 'iteration-0004.prompt.md'), 'utf8');
      expect(prompt).toContain('The checks on the pull request https://github.com/o/r/pull/7 finished red.');
      expect(prompt).toContain('FAIL a.test: expected "fixed"');
      // Pushed to the same branch, a fast-forward on top of the first delivery; one pull request, opened once.
      const second = git(remote, 'rev-parse', branch);
      expect(second).not.toBe(first);
      expect(git(remote, 'rev-parse', `${second}^`)).toBe(first);
      expect(git(remote, 'show', `${branch}:a.txt`)).toBe('3\nfixed');
      expect(ghCallsIn(repo).filter((a) => a[1] === 'create')).toHaveLength(1);
      await handle.signal('prEvent', { kind: 'merged', id: 'delivery-3' });
      const outcome = (await handle.result()) as { status: string; iteration: number };
      expect(outcome).toMatchObject({ status: 'merged', iteration: 4 });
      // The new waits replay: the recording (two waits, three events, one of them redelivered) with the patch's marker.
      const history = await handle.fetchHistory();
      expect(patchIds(history)).toContain('vigil-follow-pr-v1');
      await expect(Worker.runReplayHistory({ workflowBundle: shared.env.bundle }, history, id)).resolves.toBeUndefined();
    },
    patient(300_000),
  );

  it(
    'webhooks: a wrong signature is refused with 401 and nothing signalled; a signed "closed, merged" ends the run merged',
    async () => {
      const { id, handle } = await followedRun('follow-hooks', false);
      const secret = 'a-webhook-secret-of-the-repository';
      const hooks = await startHooks(shared.env.client, { host: '127.0.0.1', port: 0, secret });
      try {
        // pull_request "closed" as GitHub documents it (the fields Vigil reads, and a few more).
        const body = JSON.stringify({
          action: 'closed',
          number: 7,
          pull_request: {
            number: 7,
            html_url: 'https://github.com/o/r/pull/7',
            merged: true,
            merge_commit_sha: 'f00dfacef00dfacef00dfacef00dfacef00dface',
            head: { ref: `vigil/${id}`, sha: '0'.repeat(40) },
            base: { ref: 'main' },
          },
          repository: { full_name: 'o/r', name: 'r', owner: { login: 'o' } },
          sender: { login: 'maintainer' },
        });
        const post = (signature: string): Promise<Response> =>
          fetch(hooks.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-github-event': 'pull_request',
              'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
              'x-hub-signature-256': signature,
            },
            body,
          });
        const sign = (key: string): string => `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
        const refused = await post(sign('not-the-secret'));
        expect(refused.status).toBe(401);
        expect((await post('')).status).toBe(401);
        const history = await handle.fetchHistory();
        expect((history.events ?? []).some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'prEvent')).toBe(false);
        const sent = await post(sign(secret));
        expect(sent.status).toBe(200);
        // Named by its merge commit, as the poller names the same merge (not by the delivery's id).
        expect(await sent.text()).toMatch(new RegExp(`merged event merged-f00dface(f00dface){4} sent to ${id}`));
        const outcome = (await handle.result()) as { status: string; exitCode: number; reason: string };
        expect(outcome).toMatchObject({ status: 'merged', exitCode: 0 });
        expect(outcome.reason).toContain('merge commit f00dfacef00dfacef00dfacef00dfacef00dface');
      } finally {
        await hooks.close();
      }
    },
    patient(240_000),
  );

  it(
    "webhooks: a review that requests changes is an iteration whose prompt carries it verbatim, as its author's directive; the " +
      'run replies with what it changed',
    async () => {
      const { repo, id, handle } = await followedRun('follow-review', true);
      const secret = 'another-webhook-secret-of-the-repo';
      const hooks = await startHooks(shared.env.client, { host: '127.0.0.1', port: 0, secret });
      try {
        const send = async (event: string, delivery: string, payload: unknown): Promise<Response> => {
          const body = JSON.stringify(payload);
          return fetch(hooks.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-github-event': event,
              'x-github-delivery': delivery,
              'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
            },
            body,
          });
        };
        const pull_request = { number: 7, html_url: 'https://github.com/o/r/pull/7', head: { ref: `vigil/${id}` }, base: { ref: 'main' } };
        const repository = { full_name: 'o/r' };
        const text = 'Please end a.txt with a line saying "fixed".\nAnd keep the first line as it is.';
        // An approval is no request for changes: ignored, nothing signalled.
        const approved = await send('pull_request_review', 'd-approve', {
          action: 'submitted',
          review: { state: 'approved', body: 'LGTM', user: { login: 'bo' } },
          pull_request,
          repository,
        });
        expect(approved.status).toBe(202);
        const review = await send('pull_request_review', 'd-review', {
          action: 'submitted',
          review: { state: 'changes_requested', body: text, user: { login: 'ana' } },
          pull_request,
          repository,
        });
        expect(review.status, await review.clone().text()).toBe(200);
        const answered = await waitForStatus(handle, (s) => s.pullRequest?.waiting === true && s.iteration >= 4, 120_000);
        const prompt = readFileSync(path.join(repo, '.vigil/runs', id, 'iteration-0004.prompt.md'), 'utf8');
        expect(prompt).toContain(
          `A review requested changes on the pull request https://github.com/o/r/pull/7, from ana, verbatim:\n\n${text}`,
        );
        // The run replies on the pull request with what it changed (gh faked: `gh pr comment` is GitHub's side; the reply's file is ours).
        const reply = ghCallsIn(repo).find((a) => a[0] === 'pr' && a[1] === 'comment') ?? [];
        expect(reply.slice(0, 4)).toEqual(['pr', 'comment', 'https://github.com/o/r/pull/7', '--body-file']);
        const said = readFileSync(reply[4] ?? '', 'utf8');
        expect(said).toContain(`Vigil run \`${id}\` answered the review by @ana that requested changes.`);
        expect(said).toMatch(new RegExp(`Pushed \`[0-9a-f]{12}\` to \`vigil/${id}\`: 1 file\\(s\\) changed\\.\n\n- \`a\\.txt\``));
        expect(said).toContain('Judged before the push: council approved at iteration 4');
        expect(said).toContain(`<!-- vigil-reply:${id}:d-review -->`);
        expect(answered.pullRequest?.replies).toMatchObject([
          { to: 'ana', posted: true, note: 'replied on https://github.com/o/r/pull/7' },
        ]);
        const merged = await send('pull_request', 'd-merged', {
          action: 'closed',
          pull_request: { ...pull_request, merged: true },
          repository,
        });
        expect(merged.status).toBe(200);
        expect(await handle.result()).toMatchObject({ status: 'merged', iteration: 4 });
      } finally {
        await hooks.close();
      }
    },
    patient(300_000),
  );

  it(
    'the base moved (a signed push webhook): rebased onto it, judged again on the new tree without an agent call, pushed with a lease',
    async () => {
      const { repo, remote, id, handle } = await followedRun('follow-base', false, shared.taskQueue, 'release');
      const branch = `vigil/${id}`;
      const before = git(remote, 'rev-parse', branch);
      const base = moveBase(remote, 'b.txt', 'from the base\n', 'release');
      const secret = 'a-third-webhook-secret-of-the-repo';
      const hooks = await startHooks(shared.env.client, { host: '127.0.0.1', port: 0, secret });
      try {
        // push as GitHub documents it (the fields Vigil reads, and a few more).
        const body = JSON.stringify({
          ref: 'refs/heads/release',
          before: before,
          after: base,
          created: false,
          deleted: false,
          repository: { full_name: 'o/r', name: 'r', owner: { login: 'o' } },
          pusher: { name: 'other' },
          sender: { login: 'other' },
        });
        const res = await fetch(hooks.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-github-event': 'push',
            'x-github-delivery': 'push-delivery-1',
            'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
          },
          body,
        });
        expect(res.status, await res.clone().text()).toBe(200);
        // Named by the base's new tip, as the poller names the same move.
        expect(await res.text()).toContain(`base-moved event base-${base} sent to ${id}`);
      } finally {
        await hooks.close();
      }
      const tip = await pushedOnto(remote, branch, base);
      // Rebased: the run's one commit on the new base, the old tip replaced on the remote (a forced push).
      expect(git(remote, 'rev-parse', `${tip}^`)).toBe(base);
      expect(spawnSync('git', ['merge-base', '--is-ancestor', before, tip], { cwd: remote }).status).not.toBe(0);
      expect(git(remote, 'show', `${tip}:a.txt`)).toBe('3');
      expect(git(remote, 'show', `${tip}:b.txt`)).toBe('from the base');
      expect(git(repo, 'rev-parse', branch)).toBe(tip);
      // The run's working tree is the new tree, where the evidence ran.
      expect(readFileSync(path.join(repo, 'b.txt'), 'utf8')).toBe('from the base\n');
      const s = await waitForStatus(handle, (x) => x.pullRequest?.waiting === true && (x.pullRequest.updates?.length ?? 0) === 1, 60_000);
      expect(s.pullRequest?.updates?.[0]).toMatchObject({ result: 'updated', mode: 'rebase', base: 'release', commit: tip });
      expect(s.pullRequest?.base).toBe('release');
      expect(s.iteration).toBe(3);
      // The evidence again on the new tree before the push: the gates and a council round after the rebase, then the delivery; no agent call.
      const acts = await activities(handle);
      const after = acts.slice(acts.lastIndexOf('updatePrBranch'));
      expect(after).toContain('runGates');
      expect(after.indexOf('councilRound')).toBeGreaterThan(0);
      expect(after.indexOf('councilRound')).toBeLessThan(after.indexOf('openPullRequest'));
      expect(after).not.toContain('runAgent');
      expect(ghCallsIn(repo).filter((a) => a[1] === 'create')).toHaveLength(1);
      await handle.signal('prEvent', { kind: 'merged', id: 'merged-after-rebase' });
      expect(await handle.result()).toMatchObject({ status: 'merged', iteration: 3 });
      const history = await handle.fetchHistory();
      expect(patchIds(history)).toContain('vigil-pr-update-v1');
      await expect(Worker.runReplayHistory({ workflowBundle: shared.env.bundle }, history, id)).resolves.toBeUndefined();
    },
    patient(300_000),
  );

  it(
    'the base moved and the branch conflicts with it: nothing moves or is pushed, the run pauses for a person and says where',
    async () => {
      const { repo, remote, id, handle } = await followedRun('follow-conflict', false);
      const branch = `vigil/${id}`;
      const before = git(remote, 'rev-parse', branch);
      moveBase(remote, 'a.txt', 'the base wrote this\n');
      await handle.signal('prEvent', { kind: 'base-moved', id: 'push-conflict' });
      const s = await waitForStatus(handle, (x) => x.paused && (x.pullRequest?.updates?.length ?? 0) === 1, 60_000);
      expect(s.pause?.reason).toMatch(/no longer applies cleanly \(rebase onto origin\/main: conflicts in a\.txt\)/);
      expect(s.pullRequest?.updates?.[0]).toMatchObject({ result: 'conflict', commit: before });
      expect(git(remote, 'rev-parse', branch)).toBe(before);
      expect(git(repo, 'rev-parse', branch)).toBe(before);
      expect(readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('3\n');
      await handle.executeUpdate(stopUpdate, { args: [{ by: 'tester' }] });
      expect(await handle.result()).toMatchObject({ status: 'stopped' });
    },
    patient(240_000),
  );

  it(
    'the branch conflicts with its moved base and nobody answers: the pause keeps its deadline, and the run stops, saying so',
    async () => {
      // escalationDeadline at 6 s, not off (its default): the deadline is what this test is about.
      const { remote, id, handle } = await followedRun('follow-deadline', false, shared.taskQueue, 'main', {
        knobs: { escalationDeadline: 6 },
      });
      const before = git(remote, 'rev-parse', `vigil/${id}`);
      moveBase(remote, 'a.txt', 'the base wrote this\n');
      await handle.signal('prEvent', { kind: 'base-moved', id: 'push-deadline' });
      const s = await waitForStatus(handle, (x) => x.paused && (x.pullRequest?.updates?.length ?? 0) === 1, 60_000);
      expect(s.pause?.deadlines).toMatchObject({
        onDeadline: 'stop',
        deadlineAt: new Date(Date.parse(s.pause?.at ?? '') + 6000).toISOString(),
      });
      const outcome = (await handle.result()) as { status: string; reason: string };
      expect(outcome).toMatchObject({ status: 'stopped', reason: 'stopped by vigil: nobody answered in 6 s: stopped' });
      expect(git(remote, 'rev-parse', `vigil/${id}`)).toBe(before);
    },
    patient(240_000),
  );

  it(
    'without a webhook, the poller (one gh api graphql call per interval) takes red checks once: fixed, pushed; then the merge',
    async () => {
      // prPollEvery at 2 s, not its 10 min: the test would otherwise wait ten minutes for the first poll.
      const { repo, remote, id, handle } = await followedRun('follow-poll', true, shared.taskQueue, 'main', { knobs: { prPollEvery: 2 } });
      const branch = `vigil/${id}`;
      const first = git(remote, 'rev-parse', branch);
      // What GitHub says of the pull request (gh faked: its GraphQL answer): open, its head's unit tests finished red.
      const red = {
        __typename: 'CheckRun',
        databaseId: 101,
        name: 'unit tests',
        status: 'COMPLETED',
        conclusion: 'FAILURE',
        title: '1 test failed',
        summary: 'FAIL a.test: expected "fixed"',
        text: null,
        detailsUrl: 'https://github.com/o/r/runs/101',
      };
      const pull = (over: Record<string, unknown>): Record<string, unknown> => ({
        state: 'OPEN',
        merged: false,
        mergeCommit: null,
        mergeStateStatus: 'UNSTABLE',
        baseRefName: 'main',
        baseRefOid: git(remote, 'rev-parse', 'main'),
        headRefOid: first,
        commits: { nodes: [{ commit: { oid: first, statusCheckRollup: { contexts: { nodes: [red] } } } }] },
        reviews: { nodes: [] },
        comments: { nodes: [] },
        ...over,
      });
      setFakePullRequest(repo, pull({}));
      const again = await waitForStatus(handle, (s) => s.pullRequest?.waiting === true && s.iteration >= 4, 120_000);
      expect(again.pullRequest?.taken.map((t) => [t.id, t.summary])).toEqual([[`checks-${first}`, 'checks failed: unit tests']]);
      const prompt = readFileSync(path.join(repo, '.vigil/runs', id, 'iteration-0004.prompt.md'), 'utf8');
      expect(prompt).toContain('The checks on the pull request https://github.com/o/r/pull/7 finished red.');
      expect(prompt).toContain('FAIL a.test: expected "fixed"');
      const second = git(remote, 'rev-parse', branch);
      expect(git(remote, 'rev-parse', `${second}^`)).toBe(first);
      // GitHub still shows the old head's red checks (the answer is unchanged): the next polls see them again, and take nothing.
      const polls = (await activities(handle)).filter((a) => a === 'pollPullRequest').length;
      const deadline = Date.now() + patient(60_000);
      while ((await activities(handle)).filter((a) => a === 'pollPullRequest').length < polls + 2) {
        if (Date.now() > deadline) throw new Error('the run did not poll twice more in time');
        await new Promise((r) => setTimeout(r, 500));
      }
      const after = await waitForStatus(handle, () => true);
      expect(after).toMatchObject({ iteration: 4, pullRequest: { waiting: true, queued: 0 } });
      expect(after.pullRequest?.taken).toHaveLength(1);
      expect(after.pullRequest?.polled?.note).toMatch(/^polled https:\/\/github.com\/o\/r\/pull\/7: open, unstable; 1 event\(s\)$/);
      setFakePullRequest(repo, pull({ state: 'MERGED', merged: true, mergeCommit: { oid: 'f'.repeat(40) } }));
      const outcome = (await handle.result()) as { status: string; exitCode: number; reason: string; iteration: number };
      expect(outcome).toMatchObject({ status: 'merged', exitCode: 0, iteration: 4 });
      expect(outcome.reason).toContain(`merge commit ${'f'.repeat(40)}`);
      // Its cost: one gh call per poll, and nothing else of GitHub's asked by it.
      const history = await handle.fetchHistory();
      const scheduled = (await activities(handle)).filter((a) => a === 'pollPullRequest').length;
      expect(ghCallsIn(repo).filter((a) => a[0] === 'api')).toHaveLength(scheduled);
      expect(
        ghCallsIn(repo)
          .filter((a) => a[0] === 'api')
          .every((a) => a[1] === 'graphql'),
      ).toBe(true);
      await expect(Worker.runReplayHistory({ workflowBundle: shared.env.bundle }, history, id)).resolves.toBeUndefined();
    },
    patient(300_000),
  );

  it(
    'an iteration on a comment that changes nothing: the run replies that nothing changed and why, and follows on',
    async () => {
      // deliverToCurrent on: the delivery where the work after a delivery is HEAD's, so an iteration that changes nothing
      // leaves nothing to push (on vigil/<run id> the tree would equal the branch, pushed again as it is).
      const { repo, id, handle } = await followedRun('follow-unchanged', { claim: 'file' }, shared.taskQueue, 'main', {
        knobs: { deliverToCurrent: true },
      });
      const head = git(repo, 'rev-parse', 'HEAD');
      await handle.signal('prEvent', {
        kind: 'comment',
        id: 'c-1',
        author: 'ana',
        text: 'Is a.txt right as it is?',
        commentKind: 'comment',
      });
      const s = await waitForStatus(handle, (x) => x.pullRequest?.waiting === true && (x.pullRequest.replies?.length ?? 0) === 1, 120_000);
      expect(s.iteration).toBe(4);
      expect(s.outcome).toBeNull();
      expect(s.pullRequest?.replies?.[0]).toMatchObject({ to: 'ana', posted: true });
      expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
      const reply = ghCallsIn(repo).find((a) => a[0] === 'pr' && a[1] === 'comment') ?? [];
      const said = readFileSync(reply[4] ?? '', 'utf8');
      expect(said).toContain(`Vigil run \`${id}\` answered the comment by @ana.`);
      expect(said).toContain(
        "Nothing was changed, so nothing was pushed: the work the run judged after it is the same as the repository's HEAD",
      );
      expect(said).toContain('The run goes on following this pull request.');
      // Still following: a merge ends it.
      await handle.signal('prEvent', { kind: 'merged', id: 'merged-unchanged' });
      expect(await handle.result()).toMatchObject({ status: 'merged', iteration: 4 });
    },
    patient(300_000),
  );
});

describe('a run that kept no base', () => {
  // Not concurrent with the runs above: a push to a default branch concerns every open run that kept no base.
  it(
    'opened from a detached HEAD (no --base): a signed push to the default branch finds it, and it is rebased onto it',
    async () => {
      const trunk = `trunk-${uniqueId('t').slice(-8)}`;
      const { repo, remote, id, handle } = await followedRun('follow-nobase', false, shared.taskQueue, trunk, { detached: true });
      const branch = `vigil/${id}`;
      const waiting = await waitForStatus(handle, (s) => s.pullRequest?.waiting === true);
      expect(waiting.pullRequest?.base ?? null).toBeNull();
      expect(ghCallsIn(repo).find((a) => a[1] === 'create')).not.toContain('--base');
      const base = moveBase(remote, 'b.txt', 'from the base\n', trunk);
      const secret = 'a-fourth-webhook-secret-of-the-repo';
      const hooks = await startHooks(shared.env.client, { host: '127.0.0.1', port: 0, secret });
      try {
        const post = async (ref: string, delivery: string): Promise<Response> => {
          const body = JSON.stringify({
            ref: `refs/heads/${ref}`,
            after: base,
            deleted: false,
            repository: { full_name: 'o/r', name: 'r', default_branch: trunk, owner: { login: 'o' } },
            sender: { login: 'other' },
          });
          return fetch(hooks.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-github-event': 'push',
              'x-github-delivery': delivery,
              'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
            },
            body,
          });
        };
        // The control: a push to another branch is no base of this run.
        const other = await post(`${trunk}-other`, 'push-other');
        expect(other.status).toBe(202);
        const res = await post(trunk, 'push-nobase');
        expect(res.status, await res.clone().text()).toBe(200);
        expect(await res.text()).toContain(`base-moved event base-${base} sent to ${id}`);
      } finally {
        await hooks.close();
      }
      const tip = await pushedOnto(remote, branch, base);
      expect(git(remote, 'rev-parse', `${tip}^`)).toBe(base);
      // The base the update found is kept: the next push to it is mapped to the run directly.
      const s = await waitForStatus(handle, (x) => x.pullRequest?.waiting === true && (x.pullRequest.updates?.length ?? 0) === 1, 60_000);
      expect(s.pullRequest?.updates?.[0]).toMatchObject({ result: 'updated', base: trunk, commit: tip });
      expect(s.pullRequest?.base).toBe(trunk);
      await handle.signal('prEvent', { kind: 'merged', id: 'merged-nobase' });
      expect(await handle.result()).toMatchObject({ status: 'merged', iteration: 3 });
    },
    patient(300_000),
  );
});

describe('a worker lost while the branch is rebased', () => {
  const workers = new WorkerProcesses();
  afterAll(() => workers.killAll());

  it(
    'a worker SIGKILLed while the rebase runs: the next worker rebases again, the branch is pushed once, the run goes on',
    async () => {
      // A git first on the worker processes' PATH, beside the fake gh: it logs every push, and once armed makes the
      // rebase wait (then give up, so that the orphan it leaves does nothing), so the worker dies inside updatePrBranch.
      const tools = mkdtempSync(path.join(os.tmpdir(), 'vigil-rebase-git-'));
      const armed = path.join(tools, 'armed');
      const inside = path.join(tools, 'inside');
      const pushes = path.join(tools, 'pushes');
      const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
      writeFileSync(
        path.join(tools, 'git'),
        `#!/bin/sh\nfor a in "$@"; do\n  if [ "$a" = push ]; then echo "$*" >> "${pushes}"; fi\n  if [ "$a" = rebase ] && [ -e ` +
          `"${armed}" ]; then rm -f "${armed}"; touch "${inside}"; sleep 60; exit 1; fi\ndone\nexec "${realGit}" "$@"\n`,
      );
      chmodSync(path.join(tools, 'git'), 0o755);
      const workerEnv = { PATH: `${tools}${path.delimiter}${ghDir}${path.delimiter}${process.env.PATH ?? ''}` };
      const tq = uniqueId('follow-kill');
      const { child: first } = await workers.spawn(tq, undefined, workerEnv);
      const { remote, id, handle } = await followedRun('follow-kill', false, tq);
      const branch = `vigil/${id}`;
      const base = moveBase(remote, 'b.txt', 'from the base\n');
      const pushesBefore = existsSync(pushes) ? readFileSync(pushes, 'utf8').split('\n').filter(Boolean).length : 0;
      writeFileSync(armed, '');
      await handle.signal('prEvent', { kind: 'base-moved', id: 'push-kill' });
      const deadline = Date.now() + patient(60_000);
      while (!existsSync(inside)) {
        if (Date.now() > deadline) throw new Error('the rebase did not start in time');
        await new Promise((r) => setTimeout(r, 100));
      }
      first.kill('SIGKILL');
      await first;
      await workers.spawn(tq, undefined, workerEnv);
      const tip = await pushedOnto(remote, branch, base);
      const s = await waitForStatus(handle, (x) => x.pullRequest?.waiting === true && (x.pullRequest.updates?.length ?? 0) === 1, 60_000);
      expect(s.pullRequest?.updates?.[0]).toMatchObject({ result: 'updated', commit: tip });
      expect(git(remote, 'rev-parse', `${tip}^`)).toBe(base);
      // Pushed once: one push of the run branch since the base moved, forced with its lease.
      const since = readFileSync(pushes, 'utf8').split('\n').filter(Boolean).slice(pushesBefore);
      expect(since.filter((l) => l.includes(branch))).toHaveLength(1);
      expect(since[0]).toContain('--force-with-lease');
      // The activity was retried on the new worker, and the run goes on.
      const history = await handle.fetchHistory();
      const update = (history.events ?? []).find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'updatePrBranch');
      const started = (history.events ?? []).find(
        (e) =>
          e.activityTaskStartedEventAttributes && Number(e.activityTaskStartedEventAttributes.scheduledEventId) === Number(update?.eventId),
      );
      expect(started?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThanOrEqual(2);
      await handle.signal('prEvent', { kind: 'merged', id: 'merged-after-kill' });
      expect(await handle.result()).toMatchObject({ status: 'merged', iteration: 3 });
    },
    patient(300_000),
  );
});
