/**
 * Handoff documents for a person taking over a run that is likely stuck: what was built (files
 * changed since the run started, recent commits), what is failing (the stuck signals, the last
 * council round and tests), open questions, and the operator's options as exact `vigil` commands.
 * Written as JSON and Markdown under `.vigil/handoffs/`, named by iteration and reason so a
 * retried activity rewrites the same two files instead of adding more.
 */
import path from 'node:path';
import { WriteHandoffInputSchema, type HandoffResult, type WriteHandoffInput } from '../schemas/activities.js';
import { ensureRepoDir, ensureRunDir, pad, VIGIL_DIR } from './artifacts.js';
import { writePrivateFile } from '../lib/safe-files.js';
import { EXCLUDE, git, headSha, workingTreeHash } from './git.js';
import { markUncertaintyEscalation } from './loop-signals.js';

export async function writeHandoff(raw: WriteHandoffInput): Promise<HandoffResult> {
  const input = WriteHandoffInputSchema.parse(raw);
  const repo = input.repoPath;
  const tree = await workingTreeHash(repo);
  const base = input.runStartSha ?? (await git(repo, ['mktree'], {}, ''));
  const files = (await git(repo, ['diff', '--name-only', '-z', '--no-renames', base, tree, '--', '.', EXCLUDE]))
    .split('\0')
    .filter(Boolean);
  const commits = (await headSha(repo)) ? (await git(repo, ['log', '--oneline', '-5'])).split('\n').filter(Boolean) : [];

  const id = input.runId;
  const ended = input.reason === 'session_end';
  const options = ended
    ? endOptions(id)
    : [
        { action: 'resume', command: `vigil resume ${id}`, when: 'the run may continue as it is' },
        {
          action: 'direct',
          command: `vigil input ${id} "<what to do differently>"`,
          when: 'the agent needs a hint (injected into the next prompt)',
        },
        { action: 'review', command: `vigil review ${id}`, when: 'you believe the work is done: the council judges it now' },
        { action: 'stop', command: `vigil stop ${id} --reason "<why>"`, when: 'the run should end here' },
      ];
  const doc = {
    schemaVersion: '1.0.0',
    runId: id,
    reason: input.reason,
    headline: input.headline,
    iteration: input.iteration,
    mode: input.mode,
    paused: input.paused,
    signals: input.signals,
    filesChangedSinceStart: { count: files.length, first: files.slice(0, 20) },
    recentCommits: commits,
    lastCouncil: input.lastCouncil,
    lastTests: input.lastTests,
    openQuestions: input.openQuestions,
    attempts: input.attempts ?? [],
    options,
  };
  const pausedLine = ended
    ? 'The run has **ended**: this is where it left the work.'
    : input.paused
      ? 'The run is **paused** and waits for you.'
      : input.mode === 'perpetual'
        ? 'The run did **not** pause (autonomy mode `perpetual`: escalations notify only); it keeps going.'
        : 'The run did **not** pause.';
  const md = [
    `# Handoff: ${input.headline}`,
    '',
    `Run \`${id}\`, iteration ${input.iteration}, reason \`${input.reason}\`. ${pausedLine}`,
    '',
    ended ? '## How it ended' : '## Why Vigil asks for help',
    '',
    ...(input.signals.length ? input.signals.map((s) => `- ${s}`) : ['- (no signal recorded)']),
    '',
    '## What was tried',
    '',
    ...(input.attempts?.length ? input.attempts.map((a) => `- ${a}`) : ['- no iteration recorded']),
    '',
    `## What was built (${files.length} file(s) changed since the run started)`,
    '',
    ...(files.length ? files.slice(0, 20).map((f) => `- \`${f}\``) : ['- nothing yet']),
    ...(files.length > 20 ? [`- … and ${files.length - 20} more`] : []),
    '',
    '## Recent commits',
    '',
    ...(commits.length ? commits.map((c) => `- ${c}`) : ['- none']),
    '',
    '## What is failing',
    '',
    `- Council: ${input.lastCouncil ?? 'no round yet'}`,
    `- Tests: ${input.lastTests ?? 'no test run yet'}`,
    '',
    '## Open questions',
    '',
    ...(input.openQuestions.length ? input.openQuestions.map((q) => `- ${q}`) : ['- none recorded']),
    '',
    '## Your options',
    '',
    ...options.map((o) => `- \`${o.command}\` — ${o.when}`),
    '',
  ].join('\n');

  const dir = ensureRepoDir(repo, path.join(repo, VIGIL_DIR, 'handoffs'));
  const stem = `iteration-${pad(input.iteration)}-${input.reason}`;
  const jsonPath = path.join(dir, `${stem}.json`);
  const markdownPath = path.join(dir, `${stem}.md`);
  writePrivateFile(jsonPath, `${JSON.stringify(doc, null, 2)}\n`);
  writePrivateFile(markdownPath, md);
  // The original's marker of an uncertainty escalation (spec §4.2), for the agent's next call and onlookers.
  if (input.reason === 'uncertainty')
    markUncertaintyEscalation(repo, { iteration: input.iteration, headline: input.headline, paused: input.paused });
  // The run's end: its handoff is also the run folder's HANDOFF.md, where a person looks first.
  if (ended) writePrivateFile(path.join(ensureRunDir(repo, id), 'HANDOFF.md'), md);

  const summary =
    `Handoff at iteration ${input.iteration} (${input.reason}): ${input.headline}. ` +
    `${input.signals.join('; ')}. ${files.length} file(s) changed since the run started. ` +
    `Council: ${input.lastCouncil ?? 'no round yet'}. Tests: ${input.lastTests ?? 'not run'}.` +
    (input.openQuestions.length ? ` Open question: ${input.openQuestions[0]}` : '');
  return { jsonPath, markdownPath, summary: summary.slice(0, 2000) };
}

/** A finished run's options: what it did, and where the work is. */
function endOptions(id: string): { action: string; command: string; when: string }[] {
  return [
    { action: 'report', command: `vigil report ${id}`, when: 'what the run did, iteration by iteration, and why it ended' },
    { action: 'logs', command: `vigil logs ${id}`, when: "the agent's own words, call by call" },
    { action: 'status', command: `vigil status ${id}`, when: 'the outcome, its notes and where the work was delivered' },
  ];
}
