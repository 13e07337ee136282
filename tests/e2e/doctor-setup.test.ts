/**
 * `vigil doctor` on what a run here can reach, as a user runs it (real `node bin/vigil.js`, the
 * sandbox on as by default, bubblewrap installed): the toolchain folders the sandbox shows (a
 * pyenv-style `shims` folder's install) and the credentials it hides (a planted `~/.ssh` and
 * `~/.aws` in the HOME the command runs with); a repository whose test command runs a tool that
 * runs a program from a folder the sandbox does not show works outside and exits 127 inside, and
 * doctor names that program, its folder and VIGIL_SANDBOX_READABLE — and, as the control, says nothing is missing once that
 * variable shows the folder. No notification channel is a warning with how to set one (not a
 * failure); a channel set is named.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { DoctorJsonSchema, type DoctorCheck } from '../../schemas/cli-output.js';
import { assertBuilt, makeRepo, temporalAddress, uniqueId } from '../support/harness.js';
import { cleanEnv, runVigil, show } from './cli-helpers.js';

/** A HOME with credentials and a shims toolchain, and a tool that runs a program from a folder no rule of the sandbox shows. */
function machine(): { home: string; real: string; env: Record<string, string> } {
  const home = mkdtempSync(path.join(os.tmpdir(), 'vigil-doctor-home-'));
  mkdirSync(path.join(home, '.ssh'), { mode: 0o700 });
  writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'not a key\n', { mode: 0o600 });
  mkdirSync(path.join(home, '.aws'));
  writeFileSync(path.join(home, '.aws', 'credentials'), '[default]\n');
  const shims = path.join(home, '.pyenv', 'shims');
  mkdirSync(shims, { recursive: true });
  mkdirSync(path.join(home, '.pyenv', 'versions'));
  // `greet` is on PATH (the sandbox shows every PATH folder) but runs a program from a folder that is
  // not, as a pyenv shim runs pyenv's libexec or a wrapper its interpreter.
  const opt = mkdtempSync(path.join(os.tmpdir(), 'vigil-doctor-opt-'));
  const tools = path.join(opt, 'tools');
  const real = path.join(opt, 'real');
  mkdirSync(tools);
  mkdirSync(real);
  writeFileSync(path.join(real, 'greet-real'), '#!/bin/sh\necho "hello from greet"\n');
  chmodSync(path.join(real, 'greet-real'), 0o755);
  writeFileSync(path.join(tools, 'greet'), `#!/bin/sh\n"${real}/greet-real" "$@"\n`);
  chmodSync(path.join(tools, 'greet'), 0o755);
  const env = cleanEnv({
    HOME: home,
    PATH: `${shims}:${tools}:${process.env.PATH ?? ''}`,
    TEMPORAL_ADDRESS: temporalAddress(),
    VIGIL_TASK_QUEUE: uniqueId('doctor-setup'),
    VIGIL_AGENT_COMMAND: '/bin/true',
    VIGIL_TEST_COMMAND: 'greet',
  });
  return { home, real, env };
}

async function doctor(env: Record<string, string>, repo: string): Promise<{ checks: Map<string, DoctorCheck>; text: string }> {
  const r = await runVigil(['doctor', '--provider', 'command', '--repo', repo, '--json'], env, { timeoutMs: 120_000 });
  // No worker polls this file's queue: a required ✗, so exit 1 whatever the lines below say.
  expect(r.code, show(r)).toBe(1);
  const report = DoctorJsonSchema.parse(JSON.parse(r.stdout));
  return { checks: new Map(report.checks.map((c) => [c.name, c])), text: r.stdout };
}

describe.runIf(sandboxPlatform().problem === null)('vigil doctor: the sandbox, the tests in it, the notifications', () => {
  it('lists what the sandbox shows and hides, and names the tool a test command cannot find inside it and the variable that mends it', async () => {
    assertBuilt();
    const m = machine();
    const repo = makeRepo();
    const { checks, text } = await doctor(m.env, repo);

    const shown = checks.get('sandbox.toolchain');
    expect(shown?.detail, text).toContain('~/.pyenv (the install ~/.pyenv/shims shims for)');
    expect(shown?.detail).not.toContain(m.real);
    const hidden = checks.get('sandbox.hidden');
    expect(hidden?.detail, text).toMatch(/^never shown, even inside a folder that is: /);
    expect(hidden?.detail).toContain('~/.ssh');
    expect(hidden?.detail).toContain('~/.aws');

    const tests = checks.get('tests.sandbox');
    expect(tests, text).toMatchObject({ ok: false, required: false });
    expect(tests?.detail).toContain(
      '`greet` (testCommand) works outside the sandbox but exits 127 inside (exit 0 outside, exit 127 inside)',
    );
    expect(tests?.detail).toContain(`${m.real}/greet-real is not found there (outside it is under ${m.real})`);
    expect(tests?.fix).toContain(`VIGIL_SANDBOX_READABLE=${m.real} in the worker's environment, then restart the worker`);

    // The control: with the folder shown, the same command runs inside.
    const mended = await doctor({ ...m.env, VIGIL_SANDBOX_READABLE: m.real }, repo);
    const ok = mended.checks.get('tests.sandbox');
    expect(ok, mended.text).toMatchObject({ ok: true, required: false });
    expect(ok?.detail).toContain('exit 0 outside, exit 0 inside');
    expect(mended.checks.get('sandbox.toolchain')?.detail).toContain(`${m.real} (VIGIL_SANDBOX_READABLE)`);
  });

  it('warns when no notification channel is set (not a failure), names the one that is, and without --repo says the tests were not run', async () => {
    const m = machine();
    const none = await runVigil(['doctor', '--provider', 'command'], { ...m.env, VIGIL_NOTIFY_DESKTOP: 'false' }, { timeoutMs: 120_000 });
    expect(none.stdout, show(none)).toMatch(
      /✗ notifications: no notification channel is configured \(notifyDesktop is off, .*— fix: set one: --set notifyFile=PATH/,
    );
    expect(none.stdout.split('no notification channel').length).toBe(2);
    expect(none.stdout).toContain('`vigil doctor --repo DIR` runs the repository’s tests outside and inside it');
    const file = path.join(m.home, 'notes.jsonl');
    const set = await runVigil(
      ['doctor', '--provider', 'command', '--json'],
      { ...m.env, VIGIL_NOTIFY_FILE: file },
      { timeoutMs: 120_000 },
    );
    const report = DoctorJsonSchema.parse(JSON.parse(set.stdout));
    expect(report.checks.find((c) => c.name === 'notifications')).toMatchObject({
      ok: true,
      required: false,
      detail: expect.stringContaining(`file ${file}`),
    });
  });
});
