/** The flags of `vigil start --attempts K` (cli/attempts.ts reads them; docs/attempts.md). Light: commander only. */
import type { Command } from 'commander';

/** `vigil pick <run> <attempt>` (cli/pick-command.ts), registered beside the flags of `start --attempts`. */
export { addPickCommand } from './pick-command.js';

export function attemptFlags(start: Command): Command {
  return start
    .option(
      '--attempts <k>',
      'K attempts (2-9) of the PRD, each in a worktree of its own under the full check; the best approved one is delivered (docs/attempts.md)',
    )
    .option('--attempt-agents <list>', 'with --attempts: agent CLIs (comma-separated) cycled over the attempts')
    .option('--attempt-models <list>', 'with --attempts: models (comma-separated) cycled over the attempts')
    .option('--keep-attempts', "with --attempts: keep the attempts' branches vigil/<run>-attempt-<n> after the pick");
}
