/** `vigil config`: the knobs a `vigil start` here would use (cli/config.ts explains them). */
import type { Command } from 'commander';
import { out } from '../steer-commands.js';
import type { CommandContext } from './shared.js';

/** `vigil config`. */
export function registerConfig(program: Command, ctx: CommandContext): void {
  const { resolve, collect } = ctx;
  program
    .command('config')
    .description('show the knobs a `vigil start` here would use')
    .option('--json', 'machine-readable output')
    .option('--config <file>', 'JSON config file of knobs')
    .option('--set <key=value>', 'set a knob (repeatable)', collect, [])
    .option('--agent-command <cmd>', 'the agent command line')
    .action(async (o: Record<string, unknown>) => {
      const { checkPromptTemplate, explainKnobs, explainKnobsJson } = await import('../config.js');
      const resolved = checkPromptTemplate(await resolve(o), process.cwd());
      if (o.json) out(JSON.stringify(explainKnobsJson(resolved), null, 2));
      else if (o.explain) out(explainKnobs(resolved, { all: o.all === true }));
      else out(JSON.stringify(resolved.knobs, null, 2));
    });
}
