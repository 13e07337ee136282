/**
 * The code review's file work: the review diff (vs the run's start, with the spec's exclusions and
 * size cap) written under the run folder for the reviewers to read, the reviewer-selection
 * keywords found in it (so the diff itself never enters history), and the round's aggregate
 * report (`reviews/round-NNNN/aggregate.json`) next to the reviewers' own logs.
 */
import path from 'node:path';
import { ensureRepoDir, ensureRunDir, pad } from './artifacts.js';
import { changedPaths, git, workingTreeHash } from './git.js';
import { writePrivateFile } from '../lib/safe-files.js';
import {
  PrepareReviewInputSchema,
  WriteReviewReportInputSchema,
  type PrepareReviewInput,
  type PreparedReview,
  type WriteReviewReportInput,
} from '../schemas/gates.js';
import { reviewPathIncluded, SPECIALISTS } from '../rules/review.js';

function roundDir(repoPath: string, runId: string, round: number): string {
  return ensureRepoDir(repoPath, path.join(ensureRunDir(repoPath, runId), 'reviews', `round-${pad(round)}`));
}

const objectOk = (repoPath: string, spec: string): Promise<boolean> =>
  git(repoPath, ['cat-file', '-e', spec]).then(
    () => true,
    () => false,
  );

export async function prepareReview(raw: PrepareReviewInput): Promise<PreparedReview> {
  const input = PrepareReviewInputSchema.parse(raw);
  const repo = input.repoPath;
  // The tree and the base the diff starts from, asked side by side.
  const [tree, base] = await Promise.all([
    workingTreeHash(repo),
    (async () =>
      input.runStartSha && (await objectOk(repo, `${input.runStartSha}^{commit}`))
        ? input.runStartSha
        : input.runStartTree && (await objectOk(repo, `${input.runStartTree}^{tree}`))
          ? input.runStartTree
          : await git(repo, ['mktree'], {}, ''))(),
  ]);
  const files = (await changedPaths(repo, base, tree)).filter(reviewPathIncluded);
  const diffPath = path.join(roundDir(repo, input.runId, input.round), 'diff.patch');
  // Batches keep each git command line well under the argument limit.
  let diff = '';
  for (let i = 0; i < files.length && diff.length <= input.maxDiffBytes; i += 200) {
    diff += `${await git(repo, ['diff', '--no-renames', '--no-color', base, tree, '--', ...files.slice(i, i + 200).map((f) => `:(literal)${f}`)])}\n`;
  }
  const bytes = Buffer.byteLength(diff);
  const refused =
    files.length === 0
      ? 'nothing to review: no file changed since the run started'
      : bytes > input.maxDiffBytes
        ? `the diff is too big to review (${bytes} bytes, the cap is ${input.maxDiffBytes}; knob reviewMaxDiffBytes)`
        : null;
  writePrivateFile(diffPath, refused && files.length > 0 ? `(refused: ${refused})\n` : diff);
  const haystack = `${files.join('\n')}\n${diff.slice(0, 2_000_000)}`.toLowerCase();
  const keywords = [...new Set(SPECIALISTS.flatMap((s) => s.keywords))].filter((k) => haystack.includes(k));
  return { diffPath, diffBytes: bytes, files: files.slice(0, 200), fileCount: files.length, keywords, treeHash: tree, refused };
}

export async function writeReviewReport(raw: WriteReviewReportInput): Promise<string> {
  const input = WriteReviewReportInputSchema.parse(raw);
  const file = path.join(roundDir(input.repoPath, input.runId, input.record.round), 'aggregate.json');
  writePrivateFile(file, `${JSON.stringify(input.record, null, 2)}\n`);
  return file;
}
