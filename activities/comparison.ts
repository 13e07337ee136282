/**
 * The comparison round of a run with attempts (workflows/attempts-workflow.ts, docs/attempts.md),
 * as one activity: the comparison pack written into the run's folder — each approved attempt's
 * diff from the commit the attempts started on (a file of its own, and inline), its evidence line
 * and its last review's findings — then the round (rounds/comparison-round.ts) with the council's
 * members called in process, as the completion council's round activity calls them
 * (activities/rounds.ts). The workflow gets the picks and the pack's path back, never a diff.
 *
 * A retry after a lost worker writes the same pack again (same branches, same statuses) and
 * re-attaches to the members' calls still running, collecting the finished ones: no member runs twice.
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { CompareAttemptsInputSchema, type CompareAttemptsInput, type CompareAttemptsResult } from '../schemas/attempts.js';
import type { StatusSnapshot } from '../schemas/status.js';
import { runComparisonRound } from '../rounds/comparison-round.js';
import { ensureRepoDir, runDir } from './artifacts.js';
import { runBranch } from '../rules/delivery.js';
import { runGit } from './git-helper.js';
import { members } from './rounds.js';
import { writePrivateFile } from '../lib/safe-files.js';

/** Inline, each diff is cut here (its file holds all of it). */
const INLINE_DIFF_CHARS = 100_000;

/** The findings of a run's last review, one line each (a waived one included: it was found). */
function findingLines(s: StatusSnapshot | null): string[] {
  const review = s?.quality?.lastReview;
  if (!review) return [];
  return [...review.reviewers, ...(review.devilsAdvocate ? [review.devilsAdvocate] : [])].flatMap((r) => {
    const c = r.counts;
    const total = c.critical + c.high + c.medium + c.low;
    if (!total) return [];
    const head = `${r.reviewer}: ${c.critical} critical, ${c.high} high, ${c.medium} medium, ${c.low} low`;
    return [head, ...r.findings.map((f) => `  ${f}`)];
  });
}

/** The pack: one section per approved attempt; each diff also in `attempt-<n>.diff` beside it. */
async function writePack(input: ReturnType<typeof CompareAttemptsInputSchema.parse>): Promise<string> {
  const dir = ensureRepoDir(input.repoPath, path.join(runDir(input.repoPath, input.runId), 'comparison'));
  const { client } = Context.current();
  const sections: string[] = [
    `# Comparison of ${input.attempts.length} approved attempts`,
    '',
    `PRD: ${input.prdPath}. Every attempt started from commit ${input.base}.`,
  ];
  for (const a of input.attempts) {
    Context.current().heartbeat(a.n);
    const diff = await runGit(input.repoPath, [
      'diff',
      '--no-color',
      '--no-ext-diff',
      input.base,
      `refs/heads/${runBranch(a.workflowId)}`,
      '--',
    ]);
    const text = diff.exitCode === 0 ? diff.stdout : `(no diff: ${diff.stderr.trim().slice(0, 300)})`;
    const diffPath = path.join(dir, `attempt-${a.n}.diff`);
    writePrivateFile(diffPath, text);
    // The run's `status` query (workflows/messages.ts), by name: activities take workflow code by value only from decisions.
    const s = await client.workflow
      .getHandle(a.workflowId)
      .query<StatusSnapshot>('status')
      .catch(() => null);
    const findings = findingLines(s);
    sections.push(
      '',
      `## Attempt ${a.n}`,
      '',
      `- evidence: ${a.evidence ?? '(none recorded)'}`,
      `- review findings: ${findings.length ? '' : 'none'}`,
      ...findings.map((f) => `  - ${f}`),
      `- diff (${text.length} characters): ${diffPath}`,
      '',
      '```diff',
      text.length > INLINE_DIFF_CHARS ? `${text.slice(0, INLINE_DIFF_CHARS)}\n... (cut: read ${diffPath})` : text,
      '```',
    );
  }
  const packPath = path.join(dir, 'pack.md');
  writePrivateFile(packPath, `${sections.join('\n')}\n`);
  return packPath;
}

/** The comparison round: the pack, then every member's pick. */
export async function compareAttempts(raw: CompareAttemptsInput): Promise<CompareAttemptsResult> {
  const input = CompareAttemptsInputSchema.parse(raw);
  const packPath = await writePack(input);
  const r = await runComparisonRound(
    { members },
    {
      runId: input.runId,
      repoPath: input.repoPath,
      prdPath: input.prdPath,
      knobs: input.knobs,
      authorization: input.authorization,
      packPath,
      approved: input.attempts.map((a) => a.n),
    },
  );
  return { picks: r.picks, packPath, spendUsd: r.usages.reduce((s, u) => s + (u.costUsd ?? 0), 0) };
}
