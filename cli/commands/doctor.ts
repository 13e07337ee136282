/** Checking this machine and the shared breakers: `vigil doctor` and `vigil providers`. */
import { Option, type Command } from 'commander';
import { PROVIDERS } from '../../schemas/provider-names.js';
import { withClient } from '../connection.js';
import { defaultActor } from '../steer-commands.js';
import type { CommandContext } from './shared.js';

/** `vigil doctor`, `vigil providers`. */
export function registerDoctor(program: Command, ctx: CommandContext): void {
  const { endpoint, resolve } = ctx;
  program
    .command('doctor')
    .description('check this machine: agent CLIs (versions, flags, credentials), Temporal, a polling worker')
    .addOption(new Option('--provider <name>', 'check only this provider').choices([...PROVIDERS]))
    .option(
      '--agent-command <cmd>',
      'drive every role of the agent contract once with this command (in a scratch repository) and say which answers are wrong',
    )
    .option('--contract', 'with --provider: drive every role of the agent contract once through that CLI')
    .option(
      '--config <file>',
      'JSON config file of knobs whose provider and agentCommand are checked (default: ./vigil.config.json if present)',
    )
    .option(
      '--deep',
      "also send each provider's endpoint a one-token request with its key (reachable? key accepted?); without it nothing is sent",
    )
    .option('--repo <dir>', "also run the repository's test command outside and inside the sandbox: is every command it runs found inside?")
    .option('--json', 'machine-readable output')
    .action(
      async (o: {
        provider?: string;
        json?: boolean;
        agentCommand?: string;
        contract?: boolean;
        config?: string;
        deep?: boolean;
        repo?: string;
      }) => {
        if (o.agentCommand !== undefined || o.contract) {
          const provider = o.agentCommand !== undefined ? 'command' : o.provider;
          if (!provider || (o.agentCommand !== undefined && o.provider && o.provider !== 'command')) {
            process.stderr.write('vigil: doctor --contract needs --provider P; --agent-command CMD is the command provider\n');
            process.exitCode = 2;
            return;
          }
          const { splitCommandLine } = await import('../../schemas/knobs.js');
          const argv = o.agentCommand !== undefined ? splitCommandLine(o.agentCommand) : [];
          if (o.agentCommand !== undefined && argv.length === 0) {
            process.stderr.write('vigil: --agent-command is empty\n');
            process.exitCode = 2;
            return;
          }
          const { checkContract, contractLines, contractOk } = await import('../doctor-contract.js');
          const checks = await checkContract({
            provider: provider as (typeof PROVIDERS)[number],
            argv,
            ...(o.json ? {} : { progress: (l: string) => void process.stderr.write(`${l}\n`) }),
          });
          if (o.json) process.stdout.write(`${JSON.stringify({ ok: contractOk(checks), checks }, null, 2)}\n`);
          else
            for (const l of [`Agent contract (${provider === 'command' ? argv.join(' ') : provider})`, ...contractLines(checks)])
              process.stdout.write(`${l}\n`);
          process.exitCode = contractOk(checks) ? 0 : 1;
          return;
        }
        const { doctorCommand, temporalCheck } = await import('../doctor.js');
        // The provider and agent command a start here would use (vigil.config.json, VIGIL_*): a
        // configured command provider is checked as such, not the vendor CLIs.
        const { knobs, sources } = await resolve({ ...(o.config ? { config: o.config } : {}) });
        const configured = sources.provider.source !== 'default' || sources.agentCommand.source !== 'default' ? knobs.provider : undefined;
        const provider = o.provider ?? configured;
        process.exitCode = await doctorCommand({
          ...(provider ? { provider } : {}),
          agentCommand: knobs.agentCommand,
          deliver: knobs.deliver,
          notify: knobs,
          ...(o.repo !== undefined ? { tests: { repo: (await import('../runs.js')).checkRepo(o.repo), command: knobs.testCommand } } : {}),
          json: Boolean(o.json),
          deep: Boolean(o.deep),
          // A broken profile is a failed check, not a crash.
          connect: async () => temporalCheck(endpoint()),
        });
      },
    );

  program
    .command('providers')
    .description('the provider circuit breakers shared by every run (state, failures in window, open until); --reset P closes one')
    .option('--json', 'machine-readable output')
    .option('--reset <provider>', "close this provider's breaker now (operator override)")
    .option('--by <name>', 'who is resetting (default: your OS user name)')
    .action(async (o: { json?: boolean; reset?: string; by?: string }) => {
      const { providersCommand } = await import('../providers.js');
      await withClient(endpoint(), async (client) => {
        process.exitCode = await providersCommand(client, {
          json: Boolean(o.json),
          ...(o.reset ? { reset: o.reset } : {}),
          by: o.by ?? defaultActor(),
        });
      });
    });
}
