/** The rehearsals: `vigil demo` (the scripted demo end to end) and `vigil try` (a first run on your repository without an LLM). */
import type { Command } from 'commander';
import type { ServerFlags } from '../processes.js';
import type { StoreFlags } from '../store.js';
import { serverOptions, storeOption, type CommandContext } from './shared.js';

/** `vigil demo`, `vigil try`. */
export function registerRehearsals(program: Command, ctx: CommandContext): void {
  const { endpoint, resolve, collect } = ctx;
  storeOption(
    serverOptions(
      program
        .command('demo')
        .description('run the scripted demo end to end: server, event store, worker and a real run over a sample repository'),
    ),
  )
    .option('--keep-server', 'keep the server and worker running after the run finishes')
    .action(async (o: ServerFlags & StoreFlags & { keepServer?: boolean }) => {
      const { demoCommand } = await import('../demo.js');
      process.exitCode = await demoCommand(endpoint(), o);
    });

  storeOption(
    serverOptions(
      program
        .command('try')
        .description(
          'a first run on your own repository without an LLM: the scripted agent, with the knobs `start` would use, in a ' +
            'scratch worktree of your HEAD; then what to change for a real agent',
        )
        .argument('[prd]', 'your PRD, checked and named (default: a sample PRD, marked as such)')
        .option('--repo <dir>', 'the git repository to rehearse on', '.')
        .option('--config <file>', 'JSON config file of knobs (default: ./vigil.config.json if present)')
        .option('--set <key=value>', 'set a knob (repeatable); see `vigil config --explain`', collect, []),
    ),
  ).action(async (prd: string | undefined, o: ServerFlags & StoreFlags & { repo: string; config?: string; set: string[] }) => {
    const { tryCommand } = await import('../try.js');
    process.exitCode = await tryCommand(endpoint(), prd, o, await resolve({ ...o }));
  });
}
