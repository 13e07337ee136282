/**
 * Agent signal files (consumed exactly once, even when an interrupted attempt already moved them)
 * and handoff documents (what a person needs, at a stable path per iteration and reason); the run
 * memory's notes: SUMMARY consumed once, CONTINUITY.md read and kept, learnings.md bounded, links
 * never followed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeHandoff } from '../../activities/handoff.js';
import { attemptsLog } from '../../rules/handoff-lines.js';
import { readAgentSignals } from '../../activities/signals.js';
import { readLearnings } from '../../activities/agent-notes.js';
import { MEMORY_LIMITS } from '../../schemas/memory.js';

const GIT = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
function repo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-signals-'));
  const git = (...a: string[]) => execFileSync('git', a, { cwd: dir, env: { ...process.env, ...GIT }, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'README.md'), '# r\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  return dir;
}
const signal = (dir: string, name: string, content: string) => {
  mkdirSync(path.join(dir, '.vigil/signals'), { recursive: true });
  writeFileSync(path.join(dir, '.vigil/signals', name), content);
};

describe('readAgentSignals', () => {
  it('consumes each file once, and a retried call sees what an earlier attempt moved', async () => {
    const dir = repo();
    signal(dir, 'HUMAN_REVIEW_NEEDED', JSON.stringify({ reason: 'Which DB?', blocking: true, questions: ['pg or sqlite?'] }));
    signal(dir, 'DRIFT_DETECTED', '{"what":"scope creep"}\n{"what":"wrong file"}\nnot json\n');
    signal(dir, 'CONTEXT_CLEAR_REQUESTED', '');
    const first = await readAgentSignals({ runId: 'r1', repoPath: dir, iteration: 3 });
    expect(first).toMatchObject({
      humanReview: { reason: 'Which DB?', blocking: true, questions: ['pg or sqlite?'] },
      driftReports: 2,
      contextClearRequested: true,
    });
    expect(first.problems).toEqual(['DRIFT_DETECTED: a line is not JSON: not json']);
    expect(existsSync(path.join(dir, '.vigil/signals/HUMAN_REVIEW_NEEDED'))).toBe(false);
    // A retry of the same iteration (the first attempt's result was lost) reads the same signals.
    expect(await readAgentSignals({ runId: 'r1', repoPath: dir, iteration: 3 })).toEqual(first);
    // The next iteration sees nothing: consumed once.
    expect(await readAgentSignals({ runId: 'r1', repoPath: dir, iteration: 4 })).toEqual({
      humanReview: null,
      driftReports: 0,
      contextClearRequested: false,
      problems: [],
      summary: null,
      continuity: null,
      continuityRef: null,
    });
    // What was consumed is kept under its iteration; an iteration with no signal leaves no folder.
    expect(readFileSync(path.join(dir, '.vigil/runs/r1/signals/iteration-0003/DRIFT_DETECTED'), 'utf8')).toContain('scope creep');
    expect(existsSync(path.join(dir, '.vigil/runs/r1/signals/iteration-0004'))).toBe(false);
  });

  it('fails for good when the repository is gone', async () => {
    const gone = path.join(repo(), 'missing');
    await expect(readAgentSignals({ runId: 'r3', repoPath: gone, iteration: 1 })).rejects.toMatchObject({
      type: 'NotAGitRepository',
      nonRetryable: true,
    });
  });

  it('still escalates an unreadable HUMAN_REVIEW_NEEDED, with its text as the reason', async () => {
    const dir = repo();
    signal(dir, 'HUMAN_REVIEW_NEEDED', 'please look at the auth flow');
    const r = await readAgentSignals({ runId: 'r2', repoPath: dir, iteration: 1 });
    expect(r.humanReview).toEqual({ reason: 'please look at the auth flow', blocking: false, questions: [], defaultAnswer: null });
    expect(r.problems[0]).toMatch(/^HUMAN_REVIEW_NEEDED is not JSON/);
  });

  it("keeps the agent's default answer (taken at the pause's deadline with onDeadline=default-answer); a blank one is none", async () => {
    const dir = repo();
    signal(dir, 'HUMAN_REVIEW_NEEDED', JSON.stringify({ reason: 'Which DB?', blocking: true, defaultAnswer: '  Use SQLite.  ' }));
    expect((await readAgentSignals({ runId: 'r3', repoPath: dir, iteration: 1 })).humanReview).toEqual({
      reason: 'Which DB?',
      blocking: true,
      questions: [],
      defaultAnswer: 'Use SQLite.',
    });
    signal(dir, 'HUMAN_REVIEW_NEEDED', JSON.stringify({ reason: 'Which DB?', defaultAnswer: '   ' }));
    expect((await readAgentSignals({ runId: 'r3', repoPath: dir, iteration: 2 })).humanReview?.defaultAnswer).toBeNull();
  });
});

describe('the agent notes of the run memory', () => {
  it('consumes SUMMARY once (a retry sees it again) and reads CONTINUITY.md without consuming it', async () => {
    const dir = repo();
    signal(dir, 'SUMMARY', 'Added the\nparser.  ');
    writeFileSync(path.join(dir, '.vigil/CONTINUITY.md'), '# Notes\nNEXT: tests\n');
    const first = await readAgentSignals({ runId: 'r3', repoPath: dir, iteration: 1, notes: true });
    expect(first).toMatchObject({ summary: 'Added the parser.', continuity: '# Notes\nNEXT: tests', problems: [] });
    expect(existsSync(path.join(dir, '.vigil/signals/SUMMARY'))).toBe(false);
    expect(await readAgentSignals({ runId: 'r3', repoPath: dir, iteration: 1, notes: true })).toEqual(first);
    const next = await readAgentSignals({ runId: 'r3', repoPath: dir, iteration: 2, notes: true });
    expect(next).toMatchObject({ summary: null, continuity: '# Notes\nNEXT: tests' });
    // Without notes (runs from before the memory), nothing of them is read.
    expect(await readAgentSignals({ runId: 'r3', repoPath: dir, iteration: 3 })).toMatchObject({ summary: null, continuity: null });
  });

  it('bounds the notes and never follows a link', async () => {
    const dir = repo();
    signal(dir, 'SUMMARY', 'x'.repeat(10_000));
    writeFileSync(path.join(dir, 'secret.txt'), 'TOKEN');
    symlinkSync(path.join(dir, 'secret.txt'), path.join(dir, '.vigil/CONTINUITY.md'));
    const r = await readAgentSignals({ runId: 'r4', repoPath: dir, iteration: 1, notes: true });
    expect(r.summary).toHaveLength(MEMORY_LIMITS.summaryChars);
    expect(r.continuity).toBeNull();
    expect(r.problems).toEqual(['CONTINUITY.md is a symbolic link; ignored']);
  });

  it('reads the repository learnings bounded to their newest part', () => {
    const dir = repo();
    expect(readLearnings(dir)).toEqual({ learnings: null, problem: null });
    mkdirSync(path.join(dir, '.vigil'), { recursive: true });
    writeFileSync(path.join(dir, '.vigil/learnings.md'), Array.from({ length: 1000 }, (_, i) => `- lesson ${i}`).join('\n'));
    const r = readLearnings(dir);
    expect(r.learnings?.length).toBeLessThanOrEqual(MEMORY_LIMITS.learningsChars);
    expect(r.learnings?.endsWith('- lesson 999')).toBe(true);
  });
});

describe('writeHandoff', () => {
  it('writes JSON and Markdown with what was built, what fails, the questions and the exact commands', async () => {
    const dir = repo();
    const sha = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
    writeFileSync(path.join(dir, 'new.txt'), 'x\n');
    const input = {
      runId: 'vigil-x',
      repoPath: dir,
      runStartSha: sha,
      iteration: 7,
      reason: 'uncertainty' as const,
      headline: 'the run looks stuck',
      signals: ['no change for 4 iterations (limit 4)', 'the council split in the last 2 rounds'],
      mode: 'supervised' as const,
      paused: true,
      lastCouncil: 'round 3 at iteration 7 rejected: 1 of 3 approved, 2 needed',
      lastTests: 'failing (exit 1) at iteration 7',
      openQuestions: ['Is the API versioned?'],
    };
    const r = await writeHandoff(input);
    expect(r.jsonPath).toBe(path.join(dir, '.vigil/handoffs/iteration-0007-uncertainty.json'));
    const json = JSON.parse(readFileSync(r.jsonPath, 'utf8')) as Record<string, unknown>;
    expect(json).toMatchObject({
      reason: 'uncertainty',
      iteration: 7,
      paused: true,
      filesChangedSinceStart: { count: 1, first: ['new.txt'] },
      openQuestions: ['Is the API versioned?'],
    });
    const md = readFileSync(r.markdownPath, 'utf8');
    for (const text of [
      '# Handoff: the run looks stuck',
      'no change for 4 iterations',
      '`new.txt`',
      'round 3 at iteration 7 rejected',
      'Is the API versioned?',
      'vigil resume vigil-x',
      'vigil stop vigil-x',
      'vigil review vigil-x',
    ]) {
      expect(md).toContain(text);
    }
    expect(r.summary).toMatch(/^Handoff at iteration 7 \(uncertainty\): the run looks stuck\./);
    // The same escalation written again (a retried activity) rewrites the same two files.
    const again = await writeHandoff(input);
    expect([again.jsonPath, again.markdownPath]).toEqual([r.jsonPath, r.markdownPath]);
  });

  it("seed: the escalation file's attempts log, and the session-end HANDOFF.md in the run folder", async () => {
    const dir = repo();
    const records = [1, 2, 3].map((i) => ({
      iteration: i,
      phase: 'ACT' as const,
      tier: 'development' as const,
      exitCode: i === 2 ? 1 : 0,
      durationMs: 65_000,
      logPath: `.vigil/runs/vigil-y/iteration-000${i}.log`,
      attempts: 1,
      claimed: i === 3,
      changed: i !== 2,
      filesChangedSinceStart: i,
      treeHash: `t${i}`,
      at: '2026-01-01T00:00:00Z',
      provider: 'claude',
      model: null,
    }));
    const base = {
      runId: 'vigil-y',
      repoPath: dir,
      runStartSha: null,
      iteration: 3,
      mode: 'supervised' as const,
      paused: false,
      lastCouncil: null,
      lastTests: null,
      openQuestions: [],
      attempts: attemptsLog(records),
    };
    const esc = await writeHandoff({
      ...base,
      reason: 'gate_failing',
      headline: 'the build gate failed 3 times',
      signals: ['build: exit 2'],
    });
    const escMd = readFileSync(esc.markdownPath, 'utf8');
    expect(escMd).toContain('## What was tried');
    expect(escMd).toContain(
      '- iteration 2 (ACT, tier development, claude): failed (exit 1); no change; 1m 05s; log .vigil/runs/vigil-y/iteration-0002.log',
    );
    expect(escMd).toContain(
      '- iteration 3 (ACT, tier development, claude): exit 0; changed the tree (3 file(s) changed since the start); claimed done',
    );
    expect(existsSync(path.join(dir, '.vigil/runs/vigil-y/HANDOFF.md'))).toBe(false); // an escalation is no session end
    const end = await writeHandoff({ ...base, reason: 'session_end', headline: 'the run ended: max_iterations_reached', signals: ['cap'] });
    const handoffMd = readFileSync(path.join(dir, '.vigil/runs/vigil-y/HANDOFF.md'), 'utf8');
    expect(handoffMd).toBe(readFileSync(end.markdownPath, 'utf8'));
    for (const text of [
      '# Handoff: the run ended: max_iterations_reached',
      'The run has **ended**',
      '## How it ended',
      '- cap',
      'vigil report vigil-y',
    ])
      expect(handoffMd).toContain(text);
    expect(handoffMd).not.toContain('vigil resume');
    expect(JSON.parse(readFileSync(end.jsonPath, 'utf8'))).toMatchObject({ reason: 'session_end', attempts: base.attempts });
  });
});
