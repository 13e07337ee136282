/**
 * `vigil logs`, `vigil handoff` and `vigil watch` without the server: agent text made
 * terminal-safe, which iteration a follower goes on with, what it says while it waits and when
 * the run pauses or resumes, the handoff read only under
 * `.vigil/handoffs/`, and which server answers mean "no standalone activities here" (the log
 * reads fall back to a workflow).
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRunHandoff } from '../../activities/logs.js';
import { isUnsupported } from '../../cli/host-read.js';
import { finishedNote, nextIteration, pauseNote, waitingNote } from '../../cli/logs.js';
import { neutraliseLine, neutraliseText } from '../../lib/terminal-text.js';
import type { RunView } from '../../cli/steer.js';
import type { StatusSnapshot } from '../../schemas/status.js';

describe('terminal-safe agent text', () => {
  it('shows escape sequences visibly instead of sending them to the terminal', () => {
    expect(neutraliseText('\x1b[2Jcleared\n')).toBe('␛[2Jcleared\n');
    expect(neutraliseText('\x1b]0;pwned\x07title\n')).toBe('␛]0;pwned␇title\n');
    expect(neutraliseText('\x1b]52;c;Zm9v\x1b\\')).toBe('␛]52;c;Zm9v␛\\');
    // A one-character CSI (C1) and DEL.
    expect(neutraliseText('\u009b31mred\u007f')).toBe('<U+009B>31mred␡');
    expect(neutraliseText('a\bb\u0000c')).toBe('a␈b␀c');
  });

  it('keeps newline and tab, reads CRLF as a newline, and shows a bare carriage return', () => {
    expect(neutraliseText('one\ttwo\r\nthree\n')).toBe('one\ttwo\nthree\n');
    expect(neutraliseText('working...\rfinished: completed (exit 0)\n')).toBe('working...␍finished: completed (exit 0)\n');
    expect(neutraliseText('plain text, ünïcödé and emoji 🚀\n')).toBe('plain text, ünïcödé and emoji 🚀\n');
  });

  it('keeps a one-line message on one line', () => {
    expect(neutraliseLine('stuck\nfinished: completed (exit 0) — done')).toBe('stuck␊finished: completed (exit 0) — done');
    expect(neutraliseLine('a\r\nb\tc\x1b[2J')).toBe('a␊b\tc␛[2J');
  });
});

const snap = (over: Partial<StatusSnapshot>): StatusSnapshot =>
  ({ iteration: 1, agentRunning: false, recentIterations: [], ...over }) as StatusSnapshot;
const running = (s: StatusSnapshot): RunView => ({
  kind: 'running',
  workflowId: 'r',
  snapshot: s,
  workerAnswered: true,
  iteration: s.iteration,
  searchStatus: 'running',
  taskFailing: null,
});
const finished = (iteration: number, snapshot: StatusSnapshot | null = null): RunView => ({
  kind: 'finished',
  workflowId: 'r',
  temporalStatus: 'COMPLETED',
  outcome: { status: 'max_iterations', exitCode: 2, reason: 'reached \x1b[2J 3 iterations' } as never,
  snapshot,
  iteration,
});

describe('which iteration a follower goes on with', () => {
  it('waits until the next iteration has begun', () => {
    expect(nextIteration(running(snap({ iteration: 1, agentRunning: false })), 1)).toBeNull();
    // Begun but its agent not started yet: wait, its log does not exist.
    expect(nextIteration(running(snap({ iteration: 2, agentRunning: false })), 1)).toBeNull();
    expect(nextIteration(running(snap({ iteration: 2, agentRunning: true })), 1)).toBe(2);
    // Its call already over (a fast agent): read it whole.
    expect(nextIteration(running(snap({ iteration: 2, recentIterations: [{ iteration: 2 } as never] })), 1)).toBe(2);
    // Several went by: one at a time, none skipped.
    expect(nextIteration(running(snap({ iteration: 5 })), 1)).toBe(2);
    expect(nextIteration({ ...running(snap({})), snapshot: null }, 1)).toBeNull();
  });

  it('reads the iterations a finished run ran, then ends', () => {
    expect(nextIteration(finished(3), 1)).toBe(2);
    expect(nextIteration(finished(0, snap({ iteration: 3 })), 2)).toBe(3);
    expect(nextIteration(finished(3), 3)).toBe('finished');
    expect(finishedNote('r', finished(3))).toBe('==> run r finished: max_iterations (exit 2) — reached ␛[2J 3 iterations');
  });
});

describe('what a follower says while it waits, and when the run pauses or resumes', () => {
  it('says it waits for the first iteration, and why when the run is not running', () => {
    expect(waitingNote('r', 0, snap({ iteration: 0, status: 'starting', paused: false, pause: null }))).toBe(
      '==> waiting for iteration 1 of r to begin (the run is starting) (Ctrl+C stops following)',
    );
    expect(waitingNote('r', 2, snap({ iteration: 2, status: 'running', paused: false, pause: null }))).toBe(
      '==> waiting for iteration 2 of r to begin (Ctrl+C stops following)',
    );
    const paused = snap({ status: 'paused', paused: true, pause: { reason: 'lunch\x1b[2J', by: 'ana', at: '' } });
    expect(waitingNote('r', 1, paused)).toBe(
      '==> waiting for iteration 1 of r to begin; the run is paused: lunch␛[2J (Ctrl+C stops following)',
    );
  });

  it('names the pause, its reason and who asked, and how to go on; says the resume', () => {
    const p = { reason: 'lunch', by: 'ana', at: '' };
    expect(pauseNote('r', snap({ status: 'paused', paused: true, pause: p }))).toBe(
      '==> run r paused: lunch (by ana); still following (`vigil resume r` goes on)',
    );
    expect(pauseNote('r', snap({ status: 'pausing', paused: true, pause: p }))).toContain('; its agent call finishes first;');
    expect(pauseNote('r', snap({ status: 'running', paused: false, pause: null }))).toBe('==> run r resumed (running)');
  });
});

describe('reading a handoff on the host', () => {
  const repo = (): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-handoff-'));
    mkdirSync(path.join(dir, '.vigil', 'handoffs'), { recursive: true });
    return dir;
  };

  it('reads the Markdown under .vigil/handoffs/, credentials redacted', () => {
    const dir = repo();
    const file = path.join(dir, '.vigil', 'handoffs', 'iteration-0001-agent_request.md');
    writeFileSync(file, `# Handoff: stuck\n\nexport ANTHROPIC_API_KEY=sk-ant-api03-${'Zx9Q'.repeat(20)}\n`);
    const r = readRunHandoff({ repoPath: dir, path: file });
    expect(r).toMatchObject({ found: true, problem: null, path: file });
    expect(r.text).toContain('# Handoff: stuck');
    expect(r.text).not.toContain('Zx9QZx9Q');
    expect(r.redactions).toBeGreaterThan(0);
  });

  it('refuses any other file, and follows no link', () => {
    const dir = repo();
    writeFileSync(path.join(dir, 'secret.md'), 'no\n');
    for (const p of [
      path.join(dir, 'secret.md'),
      path.join(dir, '.vigil', 'handoffs', '..', '..', 'secret.md'),
      path.join(dir, '.vigil', 'handoffs', 'x.json'),
      '/etc/passwd',
    ]) {
      expect(readRunHandoff({ repoPath: dir, path: p })).toMatchObject({ found: false, text: '' });
      expect(readRunHandoff({ repoPath: dir, path: p }).problem).toContain('is not a handoff document');
    }
    const link = path.join(dir, '.vigil', 'handoffs', 'link.md');
    symlinkSync(path.join(dir, 'secret.md'), link);
    expect(readRunHandoff({ repoPath: dir, path: link })).toMatchObject({ found: false, text: '' });
    expect(readRunHandoff({ repoPath: dir, path: path.join(dir, '.vigil', 'handoffs', 'gone.md') })).toMatchObject({
      found: false,
      problem: null,
    });
  });
});

describe('a server without standalone activities', () => {
  const grpc = (code: number, message: string): Error => Object.assign(new Error(message), { code });
  it('is told apart from other failures', () => {
    expect(isUnsupported(grpc(12, 'unknown method StartActivityExecution'))).toBe(true);
    expect(isUnsupported(new Error('start failed', { cause: grpc(12, 'Unimplemented') }))).toBe(true);
    expect(isUnsupported(grpc(9, 'Standalone activity is disabled'))).toBe(true);
    expect(isUnsupported(grpc(9, 'something else'))).toBe(false);
    expect(isUnsupported(grpc(14, 'unavailable'))).toBe(false);
    expect(isUnsupported(new Error('plain'))).toBe(false);
  });
});
