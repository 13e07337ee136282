/** The long-running processes: `vigil server`, `vigil worker` and `vigil up` (cli/processes.ts runs them). */
import type { Command } from 'commander';
import { logLine, setLogFormat } from '../../lib/logging.js';
import { resolveOperations, logFormatOption, workerOperationsOptions, type OperationsFlags } from '../operations.js';
import type { ServerFlags } from '../processes.js';
import type { StoreFlags } from '../store.js';
import { HOST_WORKER_HELP, serverOptions, storeOption, type CommandContext } from './shared.js';

/** `vigil server`, `vigil worker`, `vigil up`. */
export function registerProcesses(program: Command, ctx: CommandContext): void {
  const { endpoint } = ctx;
  storeOption(
    logFormatOption(
      serverOptions(
        program
          .command('server')
          .description('start the embedded Temporal dev server (persistent SQLite under VIGIL_HOME, Web UI) and the embedded event store'),
      ),
    ),
  ).action(async (o: ServerFlags & StoreFlags & OperationsFlags) => {
    const ops = resolveOperations(o, process.env);
    const { serverCommand } = await import('../processes.js');
    process.exitCode = await serverCommand(endpoint(), o, ops);
  });

  storeOption(
    workerOperationsOptions(
      program.command('worker').description('run a Vigil worker: the run workflow and its activities (agent calls, git, tests)'),
    ),
  )
    .option(
      '--require-signed-runs',
      "execute only runs signed with this installation's run secret (created now if missing); see docs/security.md",
    )
    .option('--host <name>', HOST_WORKER_HELP)
    .action(async (o: { requireSignedRuns?: boolean; host?: string } & StoreFlags & OperationsFlags) => {
      const ops = resolveOperations(o, process.env);
      setLogFormat(ops.logFormat);
      const [{ workerCommand }, { resolveHost }] = await Promise.all([import('../processes.js'), import('../hosts.js')]);
      const host = resolveHost(o.host);
      if (o.requireSignedRuns) {
        const { runSecret, runSecretPath } = await import('../../lib/run-signing.js');
        process.env.VIGIL_REQUIRE_SIGNED_RUNS = '1';
        runSecret(process.env, true);
        logLine('INFO', `vigil worker: executing only runs signed with ${runSecretPath()}`);
      }
      process.exitCode = await workerCommand(endpoint(), host, ops, o);
    });

  storeOption(
    workerOperationsOptions(
      serverOptions(
        program.command('up').description('start the dev server (unless one answers already), the event store and a worker in one process'),
      ),
    ),
  )
    .option('--host <name>', HOST_WORKER_HELP)
    .action(async (o: ServerFlags & StoreFlags & OperationsFlags & { host?: string }) => {
      const ops = resolveOperations(o, process.env);
      const [{ devServerTarget, upCommand }, { resolveHost }] = await Promise.all([import('../processes.js'), import('../hosts.js')]);
      const { host: hostFlag, ...flags } = o;
      const host = resolveHost(hostFlag);
      // What another terminal needs to reach this server (the address it starts at, or the one answering there).
      const ep = endpoint();
      setLogFormat(ops.logFormat);
      logLine(
        'INFO',
        `other terminals: export ` +
          `TEMPORAL_ADDRESS=${devServerTarget(ep, flags).address}${ep.namespace !== 'default' ? ` TEMPORAL_NAMESPACE=${ep.namespace}` : ''}`,
      );
      process.exitCode = await upCommand(ep, flags, host, ops);
    });
}
