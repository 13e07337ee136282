/**
 * `vigil hooks`: GitHub's webhooks for the pull requests runs follow (knob followPr). Each POST is
 * verified first (`X-Hub-Signature-256`: HMAC-SHA256 of the raw body with the configured secret,
 * compared in constant time; anything else is 401 and nothing is signalled), then mapped to an
 * event of schemas/pr-event.ts, its id made from what it is about (rules/pr-event-ids.ts: the head
 * commit whose checks went red, the review's or comment's id, the base's new tip, the merge
 * commit), as the poller makes it, so GitHub's redelivery and the poller's sight of the same fact
 * are taken once (a payload without the field: the `X-GitHub-Delivery`), then to the run that
 * follows the pull request (by its head branch, else its address), and signalled to it (`prEvent`).
 *
 * Mapped: check_run, check_suite and workflow_run completed red; pull_request_review submitted
 * with changes requested; pull_request_review_comment and issue_comment (on a pull request) that
 * begin with `/vigil`; pull_request closed (merged or not); push to a branch that followed pull
 * requests go into: base-moved, signalled to every run whose pull request targets that branch.
 * Anything else is answered 202 with why it was ignored. The app is a Hono app, so the console's server can mount it as well.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { prEventId } from '../rules/pr-event-ids.js';

/** Where an event belongs: the repository (`owner/name`) and the pull request's head branch, or its address. */
export interface EventTarget {
  repo: string;
  branch: string | null;
  prUrl: string | null;
  /** A push: the branch pushed to, the base of the pull requests it concerns. */
  base?: string;
  /** A push: the repository's default branch (the base of a pull request opened without one, when a run did not keep its base). */
  defaultBranch?: string;
}

/** An event of a followed pull request, before its id is set (the delivery's). */
export type MappedEvent =
  | { kind: 'checks-failed'; checks: { name: string; logTail: string }[] }
  | { kind: 'comment'; author: string; text: string; commentKind: 'review' | 'comment' }
  | { kind: 'base-moved' }
  | { kind: 'merged'; mergeCommit?: string }
  | { kind: 'closed' };

/** `id`: the event's id by what it is about (rules/pr-event-ids.ts); null when the payload does not name it. */
export type Mapping = { ignored: string } | { target: EventTarget; event: MappedEvent; id: string | null };

export interface HooksOptions {
  /** The webhook's secret, as set in GitHub's webhook settings. */
  secret: string;
  /** The run that follows the pull request, or null. */
  resolveRun: (target: EventTarget) => Promise<string | null>;
  /** The open runs whose followed pull request goes into `target.base` (a push to it). */
  resolveBase: (target: EventTarget & { base: string }) => Promise<string[]>;
  /** Signals the run's `prEvent`. */
  signal: (runId: string, payload: Record<string, unknown>) => Promise<void>;
}

const RED = new Set(['failure', 'timed_out', 'action_required', 'startup_failure']);
const LOG_TAIL = 8_000;

/** Whether `signature` (`sha256=<hex>`) is the HMAC-SHA256 of `body` with `secret`, compared in constant time. */
export function verifySignature(secret: string, body: Buffer, signature: string | undefined): boolean {
  if (!secret || !signature?.startsWith('sha256=')) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const tail = (...parts: string[]): string => parts.filter(Boolean).join('\n').slice(-LOG_TAIL);
const idOf = (kind: 'review' | 'comment', v: unknown): string | null =>
  typeof v === 'number' || typeof v === 'string' ? prEventId({ kind, id: v }) : null;

/** GitHub's event (its `X-GitHub-Event` name and payload) as an event of a followed pull request, or why it is ignored. */
export function mapGithubEvent(name: string, payload: Json): Mapping {
  const repo = str(obj(payload.repository).full_name);
  const action = str(payload.action);
  const at = (branch: string | null, prUrl: string | null = null): EventTarget => ({ repo, branch: branch || null, prUrl });
  if (name === 'check_run' || name === 'check_suite' || name === 'workflow_run') {
    const item = obj(payload[name]);
    const conclusion = str(item.conclusion);
    if (action !== 'completed' || !RED.has(conclusion)) return { ignored: `${name} ${action} ${conclusion || '(no conclusion)'}: not red` };
    const branch = str(item.head_branch) || str(obj(item.check_suite).head_branch);
    const output = obj(item.output);
    const checkName = str(item.name) || str(obj(item.app).name) || name;
    const logTail = tail(
      `conclusion: ${conclusion}`,
      str(output.title),
      str(output.summary),
      str(output.text),
      str(item.details_url) || str(item.html_url),
    );
    const head = str(item.head_sha) || str(obj(item.check_suite).head_sha);
    return {
      target: at(branch),
      event: { kind: 'checks-failed', checks: [{ name: checkName.slice(0, 200), logTail }] },
      id: prEventId({ kind: 'checks-failed', head }),
    };
  }
  if (name === 'pull_request_review') {
    const review = obj(payload.review);
    if (action !== 'submitted' || str(review.state).toLowerCase() !== 'changes_requested')
      return { ignored: `pull_request_review ${action} ${str(review.state)}: no changes requested` };
    const pr = obj(payload.pull_request);
    const text = str(review.body) || '(the review requested changes without a comment; see its line comments)';
    return {
      target: at(str(obj(pr.head).ref), str(pr.html_url)),
      event: { kind: 'comment', author: str(obj(review.user).login) || 'a reviewer', text, commentKind: 'review' },
      id: idOf('review', review.id),
    };
  }
  if (name === 'pull_request_review_comment' || name === 'issue_comment') {
    const comment = obj(payload.comment);
    const body = str(comment.body).trim();
    if (action !== 'created' || !/^\/vigil\b/.test(body)) return { ignored: `${name} ${action}: not addressed to the run (/vigil …)` };
    const issue = obj(payload.issue);
    if (name === 'issue_comment' && !issue.pull_request) return { ignored: 'issue_comment on an issue, not a pull request' };
    const pr = obj(payload.pull_request);
    const target = name === 'issue_comment' ? at(null, str(issue.html_url)) : at(str(obj(pr.head).ref), str(pr.html_url));
    const text = body.replace(/^\/vigil\b\s*/, '') || body;
    return {
      target,
      event: { kind: 'comment', author: str(obj(comment.user).login) || 'a commenter', text, commentKind: 'comment' },
      id: idOf('comment', comment.id),
    };
  }
  if (name === 'pull_request') {
    if (action !== 'closed') return { ignored: `pull_request ${action}` };
    const pr = obj(payload.pull_request);
    const target = at(str(obj(pr.head).ref), str(pr.html_url));
    const sha = str(pr.merge_commit_sha);
    return pr.merged === true
      ? { target, event: { kind: 'merged', ...(sha ? { mergeCommit: sha } : {}) }, id: prEventId({ kind: 'merged', commit: sha }) }
      : { target, event: { kind: 'closed' }, id: prEventId({ kind: 'closed' }) };
  }
  if (name === 'push') {
    const ref = str(payload.ref);
    if (!ref.startsWith('refs/heads/')) return { ignored: `push to ${ref || '(no ref)'}: not a branch` };
    if (payload.deleted === true) return { ignored: `push deleting ${ref}` };
    const defaultBranch = str(obj(payload.repository).default_branch);
    return {
      target: { ...at(null), base: ref.slice('refs/heads/'.length), ...(defaultBranch ? { defaultBranch } : {}) },
      event: { kind: 'base-moved' },
      id: prEventId({ kind: 'base-moved', base: str(payload.after) }),
    };
  }
  return { ignored: `${name || 'an event without X-GitHub-Event'}: not one a followed pull request answers` };
}

/** The webhook receiver: POST / (and /github). */
export function hooksApp(opts: HooksOptions): Hono {
  const app = new Hono();
  app.use('*', bodyLimit({ maxSize: 25 * 1024 * 1024, onError: (c) => c.text('payload too large\n', 413) }));
  const receive = async (c: import('hono').Context): Promise<Response> => {
    const body = Buffer.from(await c.req.arrayBuffer());
    if (!verifySignature(opts.secret, body, c.req.header('x-hub-signature-256')))
      return c.text('signature does not match the configured secret: nothing signalled\n', 401);
    const name = c.req.header('x-github-event') ?? '';
    if (name === 'ping') return c.text('pong\n', 200);
    const delivery = (c.req.header('x-github-delivery') ?? '').trim();
    if (!/^[A-Za-z0-9._:-]{1,100}$/.test(delivery)) return c.text('X-GitHub-Delivery is missing or not an id\n', 400);
    let payload: Json;
    try {
      payload = obj(JSON.parse(body.toString('utf8')));
    } catch {
      return c.text('the body is not JSON (set the webhook content type to application/json)\n', 400);
    }
    const mapped = mapGithubEvent(name, payload);
    if ('ignored' in mapped) return c.text(`ignored: ${mapped.ignored}\n`, 202);
    const id = mapped.id ?? delivery;
    const base = mapped.target.base;
    if (base !== undefined) {
      // Every run whose pull request goes into the pushed branch; each takes the delivery once.
      const runs = await opts.resolveBase({ ...mapped.target, base });
      if (runs.length === 0) return c.text(`ignored: no open run follows a pull request into ${base}\n`, 202);
      for (const runId of runs) await opts.signal(runId, { ...mapped.event, id });
      return c.text(`base-moved event ${id} sent to ${runs.join(', ')}\n`, 200);
    }
    const runId = await opts.resolveRun(mapped.target);
    if (!runId) return c.text(`ignored: no open run follows ${mapped.target.prUrl ?? mapped.target.branch ?? 'this pull request'}\n`, 202);
    await opts.signal(runId, { ...mapped.event, id });
    return c.text(`${mapped.event.kind} event ${id} sent to ${runId}\n`, 200);
  };
  app.post('/', receive);
  app.post('/github', receive);
  return app;
}
