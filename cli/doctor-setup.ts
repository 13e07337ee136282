/**
 * Owns the checks of `vigil doctor` about what a run on this machine can reach, beside the agent
 * CLIs (cli/doctor.ts):
 *
 * - `notifications`: which channels an escalation would go to, or that none is set (a warning,
 *   once, with how to set one: cli/start-checks.ts words it for `vigil start` too);
 * - `sandbox.toolchain` and `sandbox.hidden`: the folders of the worker's toolchain the sandbox
 *   shows read-only (lib/sandbox-toolchain.ts, and VIGIL_SANDBOX_READABLE) and the
 *   credential paths it hides even inside them (activities/sandbox.ts `deniedPaths`);
 * - `tests.sandbox` (with `--repo DIR`): the repository's test command run once outside the
 *   sandbox and once inside it (as a gate tool runs: read-only, no network), and when it works
 *   outside but exits 127 inside, which command or path the sandbox does not show and the
 *   VIGIL_SANDBOX_READABLE folder that mends it. It runs the repository's tests, so it runs only
 *   when a repository is named.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { privateRunDir } from '../lib/paths.js';
import { detectTestRunner } from '../lib/gates/test-runner.js';
import { runTool, type ToolRun } from '../lib/gates/tools.js';
import { deniedPaths } from '../lib/sandbox-host.js';
import { toolchainPaths } from '../lib/sandbox-toolchain.js';
import type { DoctorCheck } from '../schemas/cli-output.js';
import { noChannelWarning, notifyChannels, notifySendHere, NOTIFY_HOW, type NotifyKnobs } from './start-checks.js';
import { findBinary } from '../lib/find-binary.js';

/** Where an escalation would go from a worker here (a ✗ that does not block when nowhere). */
export function notifyCheck(knobs: NotifyKnobs, env: NodeJS.ProcessEnv): DoctorCheck {
  const here = notifySendHere(env);
  const channels = notifyChannels(knobs, here);
  const none = noChannelWarning(knobs, here);
  return none === null
    ? { name: 'notifications', ok: true, required: false, detail: `escalations go to: ${channels.join(', ')}`, fix: null }
    : { name: 'notifications', ok: false, required: false, detail: none.split('; set one:')[0] ?? none, fix: NOTIFY_HOW };
}

/** Paths under HOME as `~/…`, wherever they are in `text`. */
const shown = (text: string, home: string): string => (home === '/' || home === '' ? text : text.split(`${home}/`).join('~/'));

/** What the sandbox shows of the worker's toolchain, and which credential paths it hides. */
export function toolchainChecks(env: NodeJS.ProcessEnv, home = os.homedir()): DoctorCheck[] {
  const tools = toolchainPaths(env, home).map((t) => shown(`${t.path} (${t.why})`, home));
  const extra = (env.VIGIL_SANDBOX_READABLE ?? '')
    .split(':')
    .filter((p) => path.isAbsolute(p))
    .map((p) => `${shown(p, home)} (VIGIL_SANDBOX_READABLE${existsSync(p) ? '' : ', missing'})`);
  const all = [...tools, ...extra];
  const hidden = deniedPaths(env).map((f) => shown(f.path, home));
  return [
    {
      name: 'sandbox.toolchain',
      ok: true,
      required: false,
      detail:
        all.length > 0
          ? `shown read-only besides the system folders: ${all.join(', ')}`
          : 'only the system folders (/usr, /bin, /lib, /etc, /opt) and the agent CLIs: nothing on PATH outside them needs more',
      fix: null,
    },
    {
      name: 'sandbox.hidden',
      ok: true,
      required: false,
      detail:
        hidden.length > 0 ? `never shown, even inside a folder that is: ${hidden.join(', ')}` : 'no credential path exists here to hide',
      fix: null,
    },
  ];
}

/** The command or path a shell, `env` or an interpreter says it could not find (null: none named). */
export function missingName(output: string): string | null {
  const patterns = [
    /(?:^|\n)[^\n]*?:\s*(?:\d+:\s*|line \d+:\s*)?'?([^\s':]+)'?:\s*(?:command )?not found/,
    /(?:^|\n)[^\n]*?'?([^\s':]+)'?:\s*No such file or directory/,
    /can't open file '([^']+)'/,
  ];
  for (const re of patterns) {
    const m = re.exec(output);
    if (m?.[1]) return m[1];
  }
  return null;
}

/**
 * The folder to show for `name` (a command on the worker's PATH, or a path): under HOME the
 * folder right below it (`~/.pyenv`, as `pyenv root` says), elsewhere the file's own folder.
 */
export function folderFor(name: string, env: NodeJS.ProcessEnv, home = os.homedir()): string | null {
  const found = path.isAbsolute(name) ? (existsSync(name) ? name : null) : findBinary(name, undefined, env.PATH);
  if (found === null) return null;
  let real = found;
  try {
    real = realpathSync(found);
  } catch {
    /* as found */
  }
  const rel = path.relative(home, real);
  if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return path.join(home, rel.split(path.sep)[0] as string);
  return path.dirname(found);
}

const LIMIT_MS = 120_000;
const lastLines = (r: ToolRun): string =>
  `${r.stdout}\n${r.stderr}`
    .trim()
    .split('\n')
    .filter((l) => l.trim())
    .slice(-2)
    .join(' | ')
    .slice(0, 240);

/** The test command a run in `repo` would use (the testCommand knob, else the runner detected), or null. */
export function testCommandOf(repo: string, testCommand: string): { command: string; source: string } | null {
  if (testCommand.trim()) return { command: testCommand, source: 'testCommand' };
  const found = detectTestRunner(repo);
  return found ? { command: found.command, source: `detected: ${found.runner}` } : null;
}

/** Runs the repository's test command outside the sandbox, then inside; a ✗ when only the inside run cannot find a command. */
export async function testsInSandboxCheck(
  repo: string,
  testCommand: string,
  env: NodeJS.ProcessEnv,
  limitMs = LIMIT_MS,
): Promise<DoctorCheck> {
  const name = 'tests.sandbox';
  const test = testCommandOf(repo, testCommand);
  if (test === null)
    return { name, ok: true, required: false, detail: `not checked: no test command set and none found in ${repo}`, fix: null };
  const what = `\`${test.command}\` (${test.source})`;
  const outside = await runTool('/bin/sh', ['-c', test.command], { cwd: repo, timeoutMs: limitMs });
  if (outside.timedOut || outside.exitCode === 127)
    return {
      name,
      ok: outside.timedOut,
      required: false,
      detail: outside.timedOut
        ? `not checked: ${what} ran longer than ${limitMs / 1000} s outside the sandbox`
        : `${what} exits 127 outside the sandbox too: ${lastLines(outside)}`,
      fix: outside.timedOut ? null : 'install what the test command runs, or set testCommand (--set testCommand="…")',
    };
  const runId = `vigil-doctor-${randomBytes(4).toString('hex')}`;
  let inside: ToolRun;
  try {
    inside = await runTool('/bin/sh', ['-c', test.command], { cwd: repo, timeoutMs: limitMs, sandbox: { runId, repoPath: repo } });
  } finally {
    rmSync(privateRunDir(runId), { recursive: true, force: true });
  }
  const codes = `exit ${outside.exitCode ?? 'by a signal'} outside, ${inside.timedOut ? 'timed out' : `exit ${inside.exitCode ?? 'by a signal'}`} inside`;
  if (inside.exitCode !== 127 || outside.exitCode === 127)
    return {
      name,
      ok: true,
      required: false,
      detail: `${what}: ${codes} (read-only, no network); every command it runs is found inside`,
      fix: null,
    };
  const missing = missingName(`${inside.stderr}\n${inside.stdout}`);
  const folder = missing !== null ? folderFor(missing, env) : null;
  const add = folder ?? 'FOLDER';
  const readable = env.VIGIL_SANDBOX_READABLE ? `${env.VIGIL_SANDBOX_READABLE}:${add}` : add;
  return {
    name,
    ok: false,
    required: false,
    detail:
      `${what} works outside the sandbox but exits 127 inside (${codes}): ` +
      `${missing !== null ? `${missing} is not found there${folder ? ` (outside it is under ${folder})` : ''}` : 'a command it runs is not found there'}` +
      `; every sandboxed test run of a run here would fail the same way: ${lastLines(inside)}`,
    fix:
      `show that folder to the sandbox, read-only: VIGIL_SANDBOX_READABLE=${readable} in the worker's environment, then restart the worker` +
      `${folder ? '' : ' (FOLDER: where the missing command lives)'}; credentials inside it stay hidden`,
  };
}
