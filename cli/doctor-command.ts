/**
 * Owns the `command` provider's lines of `vigil doctor` (cli/doctor.ts): an agent command is set,
 * and its program resolves to an executable file here. What it answers to each role is
 * `vigil doctor --agent-command CMD` (cli/doctor-contract.ts).
 */
import { accessSync, constants as fsConstants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { DoctorCheck } from '../schemas/cli-output.js';

/** Where `argv0` resolves (a path, or the first executable of that name on PATH), or why it does not. */
function resolveExecutable(argv0: string, env: NodeJS.ProcessEnv): { path: string } | { problem: string } {
  const executable = (file: string): boolean => {
    try {
      if (!statSync(file).isFile()) return false;
      accessSync(file, fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (argv0.includes('/')) {
    const file = path.resolve(argv0);
    if (!existsSync(file)) return { problem: `${file} does not exist` };
    return executable(file)
      ? { path: file }
      : { problem: `${file} is not an executable file (chmod +x it, or start the command with its interpreter: node ${argv0})` };
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, argv0);
    if (executable(file)) return { path: file };
  }
  return { problem: `no executable "${argv0}" on PATH` };
}

/**
 * The `command` provider's checks: an agent command is set, and its program resolves to an
 * executable file here. It is not run: an agent command reads a prompt and may change a
 * repository, so what it answers is checked by `vigil doctor --agent-command CMD` in a scratch one.
 */
export function agentCommandChecks(argv: readonly string[], env: NodeJS.ProcessEnv): DoctorCheck[] {
  const where = 'set it with --set agentCommand="…" on start, VIGIL_AGENT_COMMAND, or "agentCommand" in vigil.config.json';
  if (argv.length === 0)
    return [
      {
        name: 'command',
        ok: false,
        required: true,
        detail: 'no agent command is set for the command provider',
        fix: `${where} (or choose a provider: --provider claude, ...)`,
      },
    ];
  const found = resolveExecutable(argv[0] as string, env);
  const shown = argv.join(' ').slice(0, 200);
  if ('problem' in found)
    return [
      {
        name: 'command',
        ok: false,
        required: true,
        detail: `agent command \`${shown}\`: ${found.problem}`,
        fix: `install it or fix the path; ${where}`,
      },
    ];
  return [
    { name: 'command', ok: true, required: true, detail: `agent command \`${shown}\`: ${found.path} is executable`, fix: null },
    {
      name: 'command.contract',
      ok: true,
      required: false,
      detail: `not run here; check its answers to every role with \`vigil doctor --agent-command ${JSON.stringify(shown)}\``,
      fix: null,
    },
  ];
}
