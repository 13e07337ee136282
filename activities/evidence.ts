/**
 * Evidence for a council round or a completion claim: what changed since the run started (the
 * union of committed, staged, unstaged and untracked-not-ignored changes, `.vigil/` excluded),
 * credentials in the changed files' content, and the evidence pack the council members read
 * (`.vigil/runs/<id>/council/round-NNNN/evidence.md`), with any integrity or gaming finding a
 * person or a checklist item lifted beside what lifted it. Also writes each round's transcript.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  CollectEvidenceInputSchema,
  WriteTranscriptInputSchema,
  type CollectEvidenceInput,
  type EvidenceFactsResult,
  type WriteTranscriptInput,
} from '../schemas/activities.js';
import { scanFilesForSecrets } from './gates/secret-scan.js';
import { ensureRepoDir, ensureRunDir, pad } from './artifacts.js';
import { writePrivateFile } from '../lib/safe-files.js';
import { assertGitRepo, EXCLUDE, git, objectExists, workingTreeHash } from './git.js';

function roundDir(repoPath: string, runId: string, round: number): string {
  return ensureRepoDir(repoPath, path.join(ensureRunDir(repoPath, runId), 'council', `round-${pad(round)}`));
}

const firstLines = (text: string, n: number): string => text.split('\n').slice(0, n).join('\n');

export async function collectEvidence(raw: CollectEvidenceInput): Promise<EvidenceFactsResult> {
  const input = CollectEvidenceInputSchema.parse(raw);
  const repo = input.repoPath;
  // Independent git questions go to the helper together; it answers each as it finishes.
  const hashing = workingTreeHash(repo);
  const headCommit = objectExists(repo, 'HEAD^{commit}');
  const status = git(repo, ['status', '--short', '--', '.', EXCLUDE]);
  // The run-start point, as a commit (or as a tree for a run that started without one).
  const startPoint = input.runStartSha
    ? objectExists(repo, `${input.runStartSha}^{commit}`)
    : input.runStartTree
      ? objectExists(repo, `${input.runStartTree}^{tree}`)
      : Promise.resolve(false);
  for (const p of [hashing, headCommit, status, startPoint]) p.catch(() => {}); // the repository check below speaks first
  await assertGitRepo(repo);
  const [tree, hasHead, startKnown] = await Promise.all([hashing, headCommit, startPoint]);

  let baseline: EvidenceFactsResult['baseline'];
  let base: string;
  if (input.runStartSha && startKnown) {
    baseline = 'run_start_commit';
    base = input.runStartSha;
  } else if (!input.runStartSha && input.runStartTree && startKnown) {
    baseline = 'run_start_tree';
    base = input.runStartTree;
  } else {
    // The run-start point is gone (history rewritten, objects pruned): compare with HEAD instead.
    baseline = 'base_unreachable';
    base = hasHead ? 'HEAD' : await git(repo, ['mktree'], {}, '');
  }

  const [namesOut, statusOut, log, statOut] = await Promise.all([
    git(repo, ['diff', '--name-only', '-z', '--no-renames', base, tree, '--', '.', EXCLUDE]),
    status,
    hasHead ? git(repo, ['log', '--oneline', '-10']) : '(no commits)',
    git(repo, ['diff', '--stat', '--no-renames', base, tree, '--', '.', EXCLUDE]),
  ]);
  const names = namesOut.split('\0').filter(Boolean);

  const secrets: EvidenceFactsResult['secrets'] = input.secretScan ? await scanFilesForSecrets(repo, names, 20) : null;

  // The pack: what a member reads before voting. Facts only; judgement is the members'.
  const prd = existsSync(input.prdPath) ? firstLines(readFileSync(input.prdPath, 'utf8'), 100) : `(PRD not readable at ${input.prdPath})`;
  const stat = firstLines(statOut, 60);
  const sections = [
    `# Evidence for council round ${input.round} (iteration ${input.iteration})`,
    '',
    '## PRD requirements (first 100 lines)',
    '',
    prd,
    '',
    '## Git status',
    '',
    '```',
    firstLines(statusOut, 200) || '(clean)',
    '```',
    '',
    '## Recent commits',
    '',
    '```',
    log,
    '```',
    '',
    `## Changes since the run started (${baseline.replace(/_/g, ' ')}; ${names.length} file(s))`,
    '',
    '```',
    stat || '(none)',
    '```',
    '',
    '## Test results',
    '',
    input.testSummary,
  ];
  if (input.convergenceSummary !== null) sections.push('', '## Convergence data', '', input.convergenceSummary);
  if (input.liftedFindings)
    sections.push(
      '',
      '## Test changes lifted by a person or the PRD checklist',
      '',
      'These integrity or gaming findings do not block: a person waived them, or a PRD checklist item asks ' +
        'for the change. Judge whether the PRD really asks for it.',
      '',
      input.liftedFindings,
    );
  if (secrets && secrets.length)
    sections.push('', '## Possible credentials in changed files', '', ...secrets.map((s) => `- ${s.kind} in ${s.file}:${s.line}`));
  const evidencePath = path.join(roundDir(repo, input.runId, input.round), 'evidence.md');
  writePrivateFile(evidencePath, `${sections.join('\n')}\n`);

  return { evidencePath, baseline, filesChanged: names.length, changedFiles: names.slice(0, 50), secrets, treeHash: tree };
}

export async function writeTranscript(raw: WriteTranscriptInput): Promise<string> {
  const input = WriteTranscriptInputSchema.parse(raw);
  const file = path.join(roundDir(input.repoPath, input.runId, input.round), 'transcript.json');
  writePrivateFile(file, `${JSON.stringify(input.transcript, null, 2)}\n`);
  return file;
}
