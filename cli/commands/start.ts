/** `vigil start`: its options (the action is cli/start-command.ts, shared with MCP's vigil_start through cli/start-run.ts). */
import { Option, type Command } from 'commander';
import { PROVIDERS } from '../../schemas/provider-names.js';
import { attemptFlags } from '../attempt-flags.js';
import type { CommandContext } from './shared.js';

/** `vigil start`. */
export function registerStart(program: Command, ctx: CommandContext): void {
  const { endpoint, resolve, validateId, collect } = ctx;
  attemptFlags(program.command('start'))
    .description('start a run of the agent on a repository until the PRD is done')
    .argument('[prd]', 'the PRD (product requirements) file (or --issue FILE, or --goal TEXT)')
    .option('--issue <file>', "an issue's text (Markdown) as the PRD, its task list (- [ ] ...) as the PRD checklist")
    .option(
      '--goal <text>',
      'no PRD yet: a discovery call analyses the repository and writes the PRD for this goal into the run folder first (a supervised run pauses to show it)',
    )
    .option('--repo <dir>', 'git repository the agent works in', '.')
    .addOption(new Option('--provider <name>', 'agent CLI (see docs/agents-and-providers.md)').choices([...PROVIDERS]))
    .option('--agent-command <cmd>', 'the agent command line (no shell; the prompt arrives on stdin)')
    .option('--config <file>', 'JSON config file of knobs (default: ./vigil.config.json if present)')
    .option('--set <key=value>', 'set a knob (repeatable); see `vigil config --explain`', collect, [])
    .option('--id <id>', "workflow id of the run (default: vigil-<prd name>-<time>); a finished run's id is refused without --replace")
    .option('--replace', 'with --id of a run that ended: start a new run under that id on purpose (a running one is never replaced)')
    .option('--checklist <file>', 'the PRD checklist to verify (JSON or Markdown) instead of one extracted from the PRD')
    .option(
      '--acceptance <dir>',
      'acceptance tests a person wrote from the PRD (outside the repository): sealed at the start, never shown to the agents, run on every claim',
    )
    .option(
      '--acceptance-from-prd',
      'an acceptance agent writes the acceptance tests from the PRD before the first iteration: sealed, never shown to the ' +
        'builder; a supervised run shows them to you first',
    )
    .option(
      '--tasks <file>',
      'split the run into tasks (JSON or Markdown: id, title, checklist items, dependencies), each a stream of its own: needs --set parallelStreams=N (2-8)',
    )
    .option(
      '--host <name>',
      "the machine that holds the repository: the workers started there run the agent, git and tests (default: VIGIL_HOST, else this machine's name)",
    )
    .option('--no-store', 'do not journal the run into the event store (on by default when one is configured or the local one exists)')
    .option(
      '--deliver-to-current',
      'deliver a done run on the current branch (committed there, the index set to it) instead of vigil/<run id>',
    )
    .option('--wait', 'follow the run until it finishes; exit with its outcome code')
    .option('--json', 'print the started run as a JSON line; with --wait, then a JSON line per event as `watch --json`')
    .action(async (prdFile: string | undefined, o: Record<string, unknown>) => {
      const { startCommand } = await import('../start-command.js');
      await startCommand(prdFile, o, { resolve, endpoint, validateId });
    });
}
