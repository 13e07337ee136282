/**
 * GitHub's CLI, as every part of Vigil runs it: never prompting, without its update notice, with a
 * bounded time, and in a repository with the environment the caller gives (the activities give
 * Vigil's safe git environment, lib/git-env.ts, so the git gh runs there follows the checked
 * layout). `ghReady` is also what `vigil doctor` reports.
 */
import { execa } from 'execa';

/** How long one gh command may take before it is ended. */
export const GH_TIMEOUT_MS = 120_000;

export interface GhRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** gh is not installed here (its exit code is then 127). */
  missing: boolean;
}

/** Runs `gh args` in `cwd` with `env` plus `extraEnv`; never throws for gh's own failure. */
export async function runGh(
  cwd: string,
  args: readonly string[],
  extraEnv: Readonly<Record<string, string>> = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<GhRun> {
  const r = await execa('gh', [...args], {
    cwd,
    reject: false,
    timeout: GH_TIMEOUT_MS,
    stdin: 'ignore',
    extendEnv: false,
    env: { ...env, ...extraEnv, GH_PROMPT_DISABLED: '1', GH_NO_UPDATE_NOTIFIER: '1' },
  });
  const missing = (r as { code?: string }).code === 'ENOENT';
  return { exitCode: r.exitCode ?? (missing ? 127 : 1), stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), missing };
}

/** The first non-blank line of a command's output, at most 300 characters: what a one-line message quotes. */
export const firstLine = (s: string): string =>
  (
    s
      .trim()
      .split('\n')
      .find((l) => l.trim()) ?? ''
  )
    .trim()
    .slice(0, 300);

/**
 * Whether gh is installed and logged in here, and if not, what to do. Neither command runs git in
 * `cwd`, so no git environment is needed.
 */
export async function ghReady(
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ ok: boolean; problem: string | null; version: string | null }> {
  const v = await runGh(cwd, ['--version'], {}, env);
  if (v.missing || v.exitCode !== 0) return { ok: false, problem: 'gh is not installed (https://cli.github.com)', version: null };
  const version = firstLine(v.stdout) || null;
  const auth = await runGh(cwd, ['auth', 'status'], {}, env);
  const said = firstLine(auth.stderr || auth.stdout);
  if (auth.exitCode !== 0) return { ok: false, problem: `gh is not logged in (\`gh auth login\`)${said ? `: ${said}` : ''}`, version };
  return { ok: true, problem: null, version };
}
