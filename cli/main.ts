/**
 * The `vigil` command line: server and worker processes, the demo, and the client verbs that
 * start, inspect and steer runs. Exit codes: a run's outcome code (0 done or stopped, 1 failed,
 * 20 terminal without success) where a command follows a run; otherwise 0 ok, 2 bad input,
 * 3 no such run, 4 Temporal or worker unreachable, 5 the run finished before the awaited state,
 * 124 timed out.
 *
 * `vigil status`, `pause`, `resume`, `stop` and `input` with a plainly well-formed command line
 * never reach this file: the bin entry runs them through cli/fast.ts (the same actions, in
 * cli/steer-commands.ts), without commander. Every other command line comes here.
 *
 * This file is the program and its list of commands; each command (or small family) is a module
 * of cli/commands/ exporting a register function (`registerStart(program, ctx)`), handed the
 * context of cli/commands/shared.ts. The message verbs are registered from the message table
 * (schemas/message-verbs.ts: cli/commands/messages.ts). A new command is a module there and one
 * line in the list below; tests/unit/architecture.test.ts keeps this file under 150 lines.
 *
 * Startup is kept light all the same: this file and the command modules import only commander
 * and modules without dependencies (node built-ins; errors.ts, connection.ts for the endpoint,
 * schemas/provider-names.ts, schemas/message-verbs.ts; operations.ts, lib/logging.ts and
 * lib/store-location.ts for the long-running commands' settings). Everything else — the
 * Temporal client, the worker, zod schemas, the workflow code — is loaded by the action that needs it:
 *
 *     .action(async (id: string) => {
 *       const { checkpointsCommand } = await import('../checkpoints.js');
 *       ...
 *     });
 *
 * New verbs follow the same pattern; tests/unit/cli-startup.test.ts checks that `status` loads
 * neither commander nor Temporal's client library, the worker, the workflow code or zod.
 */
import { Command, CommanderError } from 'commander';
import { registerCompletion } from './commands/completion.js';
import { registerConfig } from './commands/config.js';
import { registerDoctor } from './commands/doctor.js';
import { registerMessages } from './commands/messages.js';
import { registerProcesses } from './commands/processes.js';
import { registerRehearsals } from './commands/rehearsals.js';
import { registerRuns } from './commands/runs.js';
import { registerServe } from './commands/serve.js';
import { registerSetup } from './commands/setup.js';
import { collect, packageVersion, resolve, runIdArg, validateId, type CommandContext } from './commands/shared.js';
import { registerStart } from './commands/start.js';
import { describeEndpoint, endpointFromEnv, type Endpoint } from './connection.js';
import { EXIT } from './errors.js';
import { addMemoryCommand } from './memory-command.js';
import { addPickCommand } from './pick-command.js';
import { addPrCommands } from './pr-commands.js';
import { addReportCommands } from './report-commands.js';
import { addScheduleCommand } from './schedule.js';
import { out, reportFailure } from './steer-commands.js';

export function buildProgram(): Command {
  const program = new Command('vigil')
    .description('Durable, unattended autonomous coding runs on Temporal.')
    .version(packageVersion())
    .option('--profile <name>', 'the temporal.toml profile to connect with (beats TEMPORAL_PROFILE), as for the temporal CLI')
    .showHelpAfterError('(run with --help for usage)')
    // Every command's help lists --profile too.
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });

  // Resolved when a command needs it, after parsing: `--profile` may come after the verb, and a
  // broken temporal.toml must not stop commands that never connect.
  let resolved: Endpoint | undefined;
  const endpoint = (): Endpoint => {
    if (!resolved) {
      const profile = (program.opts() as { profile?: string }).profile;
      resolved = endpointFromEnv(process.env, profile ? { profile } : {});
    }
    return resolved;
  };
  program.addHelpText('after', () => {
    let now = '';
    try {
      const ep = endpoint();
      now = `${describeEndpoint(ep)}, namespace ${ep.namespace}, task queue ${ep.taskQueue}`;
    } catch (err) {
      now = err instanceof Error ? err.message : String(err);
    }
    return (
      '\nConnection, as for the temporal CLI: a temporal.toml profile (--profile, TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE),\n' +
      'overridden by TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*; VIGIL_TASK_QUEUE, VIGIL_HOME.\n' +
      `Now: ${now}.\n` +
      'Exit codes: 0 done or stopped, 1 failed, 20 terminal without success, 2 bad input, 3 no such run,\n' +
      '4 Temporal or worker unreachable, 5 run finished before the awaited state, 124 timed out.'
    );
  });

  const ctx: CommandContext = { endpoint, resolve, validateId, runIdArg, collect, out };
  // The commands, in the order `vigil --help` lists them.
  for (const register of [
    registerSetup,
    registerProcesses, // server, worker, up
    registerRehearsals, // demo, try
    registerStart,
    registerMessages, // status, and the message table: pause, resume, stop, input, review, budget, waive, rewind
    registerRuns, // checkpoints, list, watch, wait, logs, handoff
    addPickCommand, // pick: a person's pick where the attempts' comparison split (cli/pick-command.ts)
    addReportCommands, // report, history, rejudge, notifications
    addPrCommands, // pr-event
    addMemoryCommand, // memory
    registerServe, // console, mcp, codec-server
    registerDoctor, // doctor, providers
    registerCompletion,
    addScheduleCommand,
    registerConfig,
  ])
    register(program, ctx);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = (await import('./knob-options.js')).addKnobOptions(buildProgram());
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? 0 : EXIT.usage;
    }
    return reportFailure(err);
  }
}

const code = await main(process.argv);
process.exit(code);
