/**
 * The polling fallback of a followed pull request (knob prPollEvery), for a repository that sends
 * no webhook: one `gh api graphql` call reads the pull request's state, mergeability, the checks
 * of its head commit, its latest reviews and comments, and `pollEvents` makes of them the same
 * events `vigil hooks` maps from GitHub's webhooks (schemas/pr-event.ts). Their ids are made from
 * what they are about (the head commit whose checks finished red, the review's or comment's
 * number, the base commit the branch is behind: rules/pr-event-ids.ts), so the next poll, seeing
 * the same thing, makes the same id, and so does `vigil hooks` for the webhook of the same fact:
 * the run takes it once, whichever came first.
 *
 * Never throws for gh's refusal (not installed, not logged in, rate limited, no network): the
 * result's note says why, and the run polls again at the next interval.
 */
import { firstLine, runGh } from '../lib/gh.js';
import { z } from 'zod';
import { PrEventSchema, type PrEvent } from '../schemas/pr-event.js';
import { prEventId } from '../rules/pr-event-ids.js';
import { gitEnvFor } from './git-helper.js';

export const PollPullRequestInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  url: z.string().min(1).max(500),
  /** When the run began to follow it: reviews and comments from before are not events. */
  since: z.string(),
});
export type PollPullRequestInput = z.infer<typeof PollPullRequestInputSchema>;

export const PullRequestPollSchema = z.object({
  /** What the poll saw, as events (the run takes each id once). */
  events: z.array(PrEventSchema).max(20),
  /** What gh answered, in a line (for the log and status), or why it did not. */
  note: z.string().max(500),
});
export type PullRequestPoll = z.infer<typeof PullRequestPollSchema>;

/** The one GraphQL query of a poll: everything an event is made from. */
export const POLL_QUERY = `query($url: URI!) { resource(url: $url) { ... on PullRequest {
  state merged mergeCommit { oid } mergeStateStatus baseRefName baseRefOid headRefOid
  commits(last: 1) { nodes { commit { oid statusCheckRollup { contexts(first: 50) { nodes { __typename
    ... on CheckRun { databaseId name status conclusion title summary text detailsUrl }
    ... on StatusContext { context state description targetUrl } } } } } } }
  reviews(last: 20) { nodes { databaseId state body submittedAt author { login }
    comments(first: 20) { nodes { body path line } } } }
  comments(last: 30) { nodes { databaseId body createdAt author { login } } }
} } }`;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const nodes = (v: unknown): Json[] => (Array.isArray(obj(v).nodes) ? (obj(v).nodes as unknown[]).map(obj) : []);
const login = (v: unknown, fallback: string): string => str(obj(v).login) || fallback;

/** Check runs' conclusions and commit statuses' states that are red (as `vigil hooks` reads a webhook's). */
const RED = new Set(['FAILURE', 'TIMED_OUT', 'ACTION_REQUIRED', 'STARTUP_FAILURE', 'ERROR']);
/** A poll carries a short log tail per check, at most this many checks (the payload stays small; the details address is in it). */
const LOG_TAIL = 2_000;
const CHECKS = 10;

/** The red checks of the head commit once none is still running, or null (none red, or some still running). */
function redChecks(pr: Json): { name: string; logTail: string }[] | null {
  const commit = obj(nodes(pr.commits)[0]?.commit);
  const contexts = nodes(obj(obj(commit.statusCheckRollup).contexts));
  const red: { name: string; logTail: string }[] = [];
  for (const c of contexts) {
    if (c.__typename === 'CheckRun') {
      if (str(c.status) !== 'COMPLETED') return null;
      if (!RED.has(str(c.conclusion))) continue;
      const tail = [`conclusion: ${str(c.conclusion).toLowerCase()}`, str(c.title), str(c.summary), str(c.text), str(c.detailsUrl)];
      red.push({ name: (str(c.name) || 'a check').slice(0, 200), logTail: tail.filter(Boolean).join('\n').slice(-LOG_TAIL) });
    } else if (c.__typename === 'StatusContext') {
      if (str(c.state) === 'PENDING' || str(c.state) === 'EXPECTED') return null;
      if (!RED.has(str(c.state))) continue;
      const tail = [`state: ${str(c.state).toLowerCase()}`, str(c.description), str(c.targetUrl)];
      red.push({ name: (str(c.context) || 'a status').slice(0, 200), logTail: tail.filter(Boolean).join('\n').slice(-LOG_TAIL) });
    }
  }
  return red.length ? red.slice(0, CHECKS) : null;
}

const after = (at: string, since: number): boolean => Number.isFinite(Date.parse(at)) && Date.parse(at) >= since;

/**
 * The events a poll's answer (the GraphQL `resource`) makes: merged or closed; the head's checks
 * finished red; the base moved so that the branch conflicts with it or is behind a base that must
 * be up to date; reviews that requested changes and comments beginning with `/vigil` since the run
 * began to follow it (oldest first). Pure.
 */
export function pollEvents(pr: Json, since: string): PrEvent[] {
  const state = str(pr.state);
  if (state === 'MERGED' || pr.merged === true) {
    const sha = str(obj(pr.mergeCommit).oid);
    return [
      { kind: 'merged', id: prEventId({ kind: 'merged', commit: sha }) ?? 'merged', ...(sha ? { mergeCommit: sha } : {}), by: 'poll' },
    ];
  }
  if (state === 'CLOSED') return [{ kind: 'closed', id: 'closed', by: 'poll' }];
  const events: PrEvent[] = [];
  const head = str(pr.headRefOid);
  const red = redChecks(pr);
  const checksId = prEventId({ kind: 'checks-failed', head });
  if (red && checksId) events.push({ kind: 'checks-failed', id: checksId, checks: red, by: 'poll' });
  const merge = str(pr.mergeStateStatus);
  const baseOid = str(pr.baseRefOid);
  const baseId = prEventId({ kind: 'base-moved', base: baseOid });
  if ((merge === 'DIRTY' || merge === 'BEHIND') && baseId) events.push({ kind: 'base-moved', id: baseId, by: 'poll' });
  const from = Date.parse(since);
  const asked: { at: string; event: PrEvent }[] = [];
  for (const r of nodes(pr.reviews)) {
    if (str(r.state) !== 'CHANGES_REQUESTED' || !after(str(r.submittedAt), from) || typeof r.databaseId !== 'number') continue;
    const lines = nodes(r.comments).map((c) => `${str(c.path)}${typeof c.line === 'number' ? `:${c.line}` : ''}: ${str(c.body)}`);
    const text = [str(r.body).trim() || '(the review requested changes without a comment; see its line comments)', ...lines].join('\n\n');
    asked.push({
      at: str(r.submittedAt),
      event: { kind: 'comment', id: `review-${r.databaseId}`, author: login(r.author, 'a reviewer'), text, commentKind: 'review' },
    });
  }
  for (const c of nodes(pr.comments)) {
    const body = str(c.body).trim();
    if (!/^\/vigil\b/.test(body) || !after(str(c.createdAt), from) || typeof c.databaseId !== 'number') continue;
    const text = body.replace(/^\/vigil\b\s*/, '') || body;
    asked.push({
      at: str(c.createdAt),
      event: { kind: 'comment', id: `comment-${c.databaseId}`, author: login(c.author, 'a commenter'), text, commentKind: 'comment' },
    });
  }
  asked.sort((a, b) => a.at.localeCompare(b.at));
  return [...events, ...asked.map((a) => a.event)].map((e) => PrEventSchema.parse(clip(e))).slice(0, 20);
}

/** Keeps an event within its schema's bounds (a comment's text, at most 20,000 characters). */
function clip(e: PrEvent): PrEvent {
  return e.kind === 'comment' ? { ...e, text: e.text.slice(0, 20_000), author: e.author.slice(0, 200) } : e;
}

export async function pollPullRequest(raw: PollPullRequestInput): Promise<PullRequestPoll> {
  const input = PollPullRequestInputSchema.parse(raw);
  const r = await runGh(
    input.repoPath,
    ['api', 'graphql', '-f', `query=${POLL_QUERY}`, '-f', `url=${input.url}`],
    gitEnvFor(input.repoPath),
  );
  if (r.missing) return { events: [], note: 'gh is not installed on the run host (https://cli.github.com): nothing polled' };
  if (r.exitCode !== 0) return { events: [], note: `gh api graphql failed: ${firstLine(String(r.stderr || r.stdout))}` };
  let pr: Json;
  try {
    pr = obj(obj(obj(JSON.parse(String(r.stdout))).data).resource);
  } catch {
    return { events: [], note: 'gh api graphql answered something that is not JSON' };
  }
  if (!str(pr.state)) return { events: [], note: `gh api graphql found no pull request at ${input.url}` };
  const events = pollEvents(pr, input.since);
  const saw = `${str(pr.state).toLowerCase()}, ${str(pr.mergeStateStatus).toLowerCase() || 'mergeability unknown'}`;
  return { events, note: `polled ${input.url}: ${saw}; ${events.length} event(s)`.slice(0, 500) };
}
