/**
 * What a start refuses and warns about (cli/start-checks.ts), shared by `vigil start` and the MCP
 * server's `vigil_start`, and the taken-id refusal's words (cli/run-id.ts). Each rule against the
 * case it is about and an honest control that must pass; tests/e2e/start-rules.test.ts drives the
 * same through the CLI.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../cli/errors.js';
import { idTakenMessage } from '../../cli/run-id.js';
import { budgetWarning, checkTasks, noChannelWarning, notifySendHere, startWarnings } from '../../cli/start-checks.js';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';

const knobs = (over: Partial<Knobs> = {}): Knobs => ({ ...defaultKnobs(), ...over });
const TASKS = [{ id: 'api', title: 'The API', items: [], dependsOn: [] }] as never;

describe('--tasks needs streams', () => {
  it('refuses a task list with parallelStreams 1 (exit 2, saying how), takes it with 2, and lets a start without one pass', () => {
    let err: unknown;
    try {
      checkTasks(knobs(), TASKS, 'tasks.md');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(2);
    expect((err as CliError).message).toContain(
      '--tasks tasks.md: a task list splits the run into parallel streams, and parallelStreams is 1',
    );
    expect((err as CliError).message).toContain('Add --set parallelStreams=N (2 to 8');
    expect(() => checkTasks(knobs({ parallelStreams: 2 }), TASKS)).not.toThrow();
    expect(() => checkTasks(knobs(), undefined)).not.toThrow();
  });
});

describe('notification channels', () => {
  it('warns with the default knobs where notify-send is missing, and not where a channel is set or notify-send is there', () => {
    const none = noChannelWarning(knobs(), null);
    expect(none).toContain('no notification channel is configured (notify-send is not installed here');
    expect(none).toContain('--set notifyFile=PATH');
    expect(noChannelWarning(knobs({ notifyDesktop: false }), '/usr/bin/notify-send')).toContain('notifyDesktop is off');
    expect(noChannelWarning(knobs(), '/usr/bin/notify-send')).toBeNull();
    expect(noChannelWarning(knobs({ notifyFile: '/tmp/n.jsonl' }), null)).toBeNull();
    expect(noChannelWarning(knobs({ notifySlackWebhookUrl: 'env:SLACK_URL' }), null)).toBeNull();
    // Blank is not set.
    expect(noChannelWarning(knobs({ notifyWebhookUrl: '   ' }), null)).not.toBeNull();
  });

  it('finds notify-send only as an executable file on an absolute PATH folder', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-notify-send-'));
    const file = path.join(dir, 'notify-send');
    writeFileSync(file, '#!/bin/sh\n');
    expect(notifySendHere({ PATH: dir })).toBeNull();
    chmodSync(file, 0o755);
    expect(notifySendHere({ PATH: `relative/bin:${dir}` })).toBe(file);
    expect(notifySendHere({ PATH: 'relative' })).toBeNull();
  });
});

describe('a budget over a command agent', () => {
  it('warns when no role reports cost, names the ones that do, and says nothing without a budget or with a CLI that reports cost', () => {
    const never = budgetWarning(knobs({ provider: 'command', budgetUsd: 5 }));
    expect(never).toContain('budgetUsd=5: a `command` agent reports no cost unless it writes .vigil/signals/USAGE');
    expect(never).toContain('may never be reached');
    expect(never).toContain('maxIterations (now');
    const some = budgetWarning(knobs({ provider: 'command', budgetUsd: 5, councilProvider: 'claude' }));
    expect(some).toContain('counts only the calls of claude');
    expect(budgetWarning(knobs({ provider: 'command', budgetUsd: 0 }))).toBeNull();
    expect(budgetWarning(knobs({ provider: 'claude', budgetUsd: 5 }))).toBeNull();
  });

  it('a start says each warning once', () => {
    const w = startWarnings(knobs({ provider: 'command', budgetUsd: 5 }), null);
    expect(w).toHaveLength(2);
    expect(startWarnings(knobs({ provider: 'command', notifyFile: '/tmp/n' }), null)).toEqual([]);
  });
});

describe('a taken run id', () => {
  it('a running run: follow it; a finished one: how it ended and --replace', () => {
    expect(idTakenMessage('r1', { status: 'RUNNING', closed: null })).toBe(
      'a run with id "r1" is already running; choose another --id or follow it with `vigil watch r1`',
    );
    const done = idTakenMessage('r1', { status: 'COMPLETED', closed: '2026-11-29T10:00:00.000Z' });
    expect(done).toMatch(/^run "r1" already ran \(it ended completed at 2026-11-29T10:00:00.000Z\); nothing was started/);
    expect(done).toContain('pass --replace');
    expect(done).toContain('`vigil report r1`');
  });
});
