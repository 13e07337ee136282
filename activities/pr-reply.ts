/**
 * The run's reply on its pull request after an iteration a review or a comment asked for (knob
 * followPr): what the pushed work changed since the commit the comment saw (its files, from git),
 * or why nothing changed, posted with `gh pr comment`. The body carries a hidden marker of the
 * run and the event, and a comment already holding it is not posted again, so a retried reply is
 * posted once where gh can list the comments.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { firstLine, runGh, type GhRun } from '../lib/gh.js';
import { z } from 'zod';
import { ensureRunDir, safeSegment } from './artifacts.js';
import { gitEnvFor, runGit } from './git-helper.js';

export const ReplyOnPullRequestInputSchema = z.object({
  repoPath: z.string(),
  runId: z.string(),
  url: z.string().min(1).max(500),
  branch: z.string().min(1).max(400),
  /** The event answered: its id, its author, and whether it was a review. */
  eventId: z.string().max(100),
  author: z.string().max(200),
  review: z.boolean(),
  /** The branch's commit the comment saw, and the one pushed now (null: none). */
  from: z.string().max(64).nullable(),
  to: z.string().max(64).nullable(),
  /** Whether the push went through, and the judgement the work rests on (the done reason). */
  pushed: z.boolean(),
  judged: z.string().max(2000),
  /** Nothing was pushed because the work is unchanged: why, said in the reply (absent in older runs). */
  unchanged: z.string().max(1000).optional(),
  /** What was answered, when it was no review or comment (the red checks, named). */
  about: z.string().max(300).optional(),
});
export type ReplyOnPullRequestInput = z.infer<typeof ReplyOnPullRequestInputSchema>;

export const PullRequestReplySchema = z.object({ posted: z.boolean(), note: z.string().max(500), body: z.string().max(4000) });
export type PullRequestReply = z.infer<typeof PullRequestReplySchema>;

/** gh in the repository, with Vigil's safe git environment for the git it runs there. */
const gh = (repoPath: string, args: string[]): Promise<GhRun> => runGh(repoPath, args, gitEnvFor(repoPath));

/** The reply's text: what changed (files, commit) or why nothing did. */
export async function replyText(input: ReplyOnPullRequestInput): Promise<string> {
  const asked = input.about ?? (input.review ? `the review by @${input.author} that requested changes` : `the comment by @${input.author}`);
  const lines = [`Vigil run \`${input.runId}\` answered ${asked}.`, ''];
  let files: string[] = [];
  if (input.from && input.to && input.from !== input.to) {
    const diff = await runGit(input.repoPath, ['diff', '--name-only', '--no-renames', input.from, input.to]);
    files = diff.exitCode === 0 ? diff.stdout.split('\n').filter(Boolean) : [];
  }
  if (input.unchanged !== undefined)
    lines.push(`Nothing was changed, so nothing was pushed: ${input.unchanged}. The run goes on following this pull request.`);
  else if (!input.pushed) lines.push(`Nothing was pushed: the push to \`${input.branch}\` failed (see the run's notes).`);
  else if (!input.to || input.to === input.from)
    lines.push(`Nothing was changed: the run judged the work as it stands to answer it, and pushed nothing new.`);
  else {
    const shown = files.slice(0, 20).map((f) => `- \`${f}\``);
    lines.push(
      `Pushed \`${input.to.slice(0, 12)}\` to \`${input.branch}\`: ${files.length} file(s) changed.`,
      ...(shown.length ? ['', ...shown, ...(files.length > 20 ? [`- and ${files.length - 20} more`] : [])] : []),
    );
  }
  lines.push('', `Judged before the push: ${input.judged}`, '', `<!-- vigil-reply:${safeSegment(input.runId)}:${input.eventId} -->`);
  return lines.join('\n').slice(0, 4000);
}

export async function replyOnPullRequest(raw: ReplyOnPullRequestInput): Promise<PullRequestReply> {
  const input = ReplyOnPullRequestInputSchema.parse(raw);
  const body = await replyText(input);
  const marker = body.slice(body.lastIndexOf('<!-- vigil-reply:'));
  // A retried reply: the comment already there is not posted again (where gh can list them).
  const seen = await gh(input.repoPath, ['pr', 'view', input.url, '--json', 'comments', '--jq', '.comments[].body']);
  if (seen.exitCode === 0 && seen.stdout.includes(marker)) return { posted: true, note: 'already replied', body };
  const file = path.join(ensureRunDir(input.repoPath, input.runId), `pr-reply-${safeSegment(input.eventId)}.md`);
  writeFileSync(file, body);
  const r = await gh(input.repoPath, ['pr', 'comment', input.url, '--body-file', file]);
  if (r.exitCode !== 0) return { posted: false, note: `gh pr comment failed: ${firstLine(r.stderr || r.stdout)}`, body };
  return { posted: true, note: `replied on ${input.url}`, body };
}
