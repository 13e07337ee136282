/**
 * What `vigil doctor` says of the notification channels and of a test command the sandbox cannot
 * run (cli/doctor-setup.ts), and what `vigil doctor --agent-command` counts (cli/doctor-contract.ts):
 * each rule against the case it is about and an honest control that must pass;
 * tests/e2e/doctor-setup.test.ts and tests/e2e/doctor-contract.test.ts drive the same through the CLI.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { contractLines, contractOk, type ContractCheck } from '../../cli/doctor-contract.js';
import { folderFor, missingName, notifyCheck } from '../../cli/doctor-setup.js';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';

const knobs = (over: Partial<Knobs> = {}): Knobs => ({ ...defaultKnobs(), ...over });

describe('notification channels', () => {
  it('doctor: a ✗ that does not block, with the fix; ✓ naming the channels', () => {
    const bad = notifyCheck(knobs(), { PATH: '/nonexistent' });
    expect(bad).toMatchObject({ name: 'notifications', ok: false, required: false });
    expect(bad.fix).toContain('VIGIL_NOTIFY_SLACK_WEBHOOK_URL');
    expect(bad.detail).not.toContain('set one:');
    const good = notifyCheck(knobs({ notifyFile: '/tmp/n.jsonl', notifyDesktop: false }), { PATH: '/nonexistent' });
    expect(good).toMatchObject({ ok: true, detail: 'escalations go to: file /tmp/n.jsonl', fix: null });
  });
});

describe('the test command inside the sandbox', () => {
  it('names the command or path a shell, env or an interpreter could not find', () => {
    expect(missingName('sh: 1: greet: not found\n')).toBe('greet');
    expect(missingName('bash: line 1: pytest: command not found')).toBe('pytest');
    expect(missingName("/usr/bin/env: 'python3': No such file or directory")).toBe('python3');
    expect(missingName('/home/u/.pyenv/shims/python3: line 21: /home/u/.pyenv/libexec/pyenv: No such file or directory')).toBe(
      '/home/u/.pyenv/libexec/pyenv',
    );
    expect(missingName('1 test failed\n')).toBeNull();
  });

  it('points at the folder below HOME that holds it, or the folder of a command elsewhere', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-home-'));
    const shims = path.join(home, '.pyenv', 'shims');
    mkdirSync(shims, { recursive: true });
    writeFileSync(path.join(shims, 'python3'), '#!/bin/sh\n');
    chmodSync(path.join(shims, 'python3'), 0o755);
    expect(folderFor('python3', { PATH: shims }, home)).toBe(path.join(home, '.pyenv'));
    const tools = mkdtempSync(path.join(os.tmpdir(), 'vigil-tools-'));
    writeFileSync(path.join(tools, 'greet'), '#!/bin/sh\n');
    chmodSync(path.join(tools, 'greet'), 0o755);
    expect(folderFor('greet', { PATH: tools }, home)).toBe(tools);
    expect(folderFor('nowhere-to-be-found', { PATH: tools }, home)).toBeNull();
  });
});

describe('doctor --agent-command: optional roles', () => {
  const check = (role: string, ok: boolean, optional: string | null): ContractCheck => ({
    role,
    answer: 'verdict',
    ok,
    required: optional === null,
    optional,
    detail: ok ? 'answered' : 'no line',
    fix: ok ? null : 'print it',
  });

  it('an optional role answering wrongly is a ⚠ that keeps the exit 0; a required one a ✗ that does not', () => {
    const warned = [check('reviewer', true, null), check('planner', false, 'asked only with parallelStreams above 1')];
    expect(contractOk(warned)).toBe(true);
    const lines = contractLines(warned);
    expect(lines).toContain('  ⚠ planner: no line (optional: asked only with parallelStreams above 1) — fix: print it');
    expect(lines.at(-1)).toBe(
      'every required role answers as the agent contract asks; 1 optional role(s) answer wrongly (⚠ above: the run goes on without them)',
    );
    const failed = [check('reviewer', false, null), check('planner', true, 'x')];
    expect(contractOk(failed)).toBe(false);
    expect(contractLines(failed).at(-1)).toBe('1 required role(s) answer wrongly: fix the ✗ above');
    expect(contractLines([check('reviewer', true, null)]).at(-1)).toBe('every role answers as the agent contract asks');
  });
});
