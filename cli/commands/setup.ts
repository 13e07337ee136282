/** `vigil setup`: what Vigil needs on this machine, or its search attributes in the namespace. */
import type { Command } from 'commander';
import { describeEndpoint, withClient } from '../connection.js';
import { out } from '../steer-commands.js';
import type { CommandContext } from './shared.js';

/** `vigil setup [--search-attributes]`. */
export function registerSetup(program: Command, ctx: CommandContext): void {
  const { endpoint } = ctx;
  program
    .command('setup')
    .description(
      "install what Vigil needs on this machine (the pinned temporal CLI; the sandbox's network bridge, with the Go on PATH) " +
        "and print where it is; with --search-attributes, register Vigil's search attributes in the namespace instead",
    )
    .option(
      '--search-attributes',
      "register Vigil's search attributes (VigilStatus, ...) in the namespace: once per namespace, by someone allowed to change it",
    )
    .action(async (o: { searchAttributes?: boolean }) => {
      if (o.searchAttributes) {
        const { ensureSearchAttributes } = await import('../connection.js');
        const ep = endpoint();
        await withClient(ep, async (_client, connection) => {
          const added = await ensureSearchAttributes(connection, ep.namespace, ep);
          out(
            added.length
              ? `registered ${added.join(', ')} in namespace "${ep.namespace}" at ${describeEndpoint(ep)}`
              : `namespace "${ep.namespace}" has Vigil's search attributes already`,
          );
        });
        return;
      }
      const { resolveTemporalCli } = await import('../../workers/temporal-cli.js');
      const cli = await resolveTemporalCli({ log: out });
      out(`temporal CLI: ${cli.path} (${cli.source}) — ${cli.version.split('\n')[0]}`);
      const { setupSandboxBridge } = await import('../../workers/sandbox-bridge-setup.js');
      out(setupSandboxBridge().line);
    });
}
